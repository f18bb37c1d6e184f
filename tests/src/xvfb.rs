//! A virtual X server for the windowed samples' tests.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running Xvfb, killed on drop.
pub struct Xvfb {
    child: Child,
    /// The `DISPLAY` value, e.g. `:99`.
    pub display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a program run in the display printed, and how it ended.
pub struct Ran {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Xvfb {
    /// Runs `cmd` in this display (no Wayland), reading its output as it
    /// comes; panics naming `what` if it runs past `limit` (it is killed).
    pub fn run(&self, what: &str, mut cmd: Command, limit: Duration) -> Ran {
        let mut child = cmd
            .env("DISPLAY", &self.display)
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("running {what}: {e}"));
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_string(&mut text);
                }
                text
            })
        };
        let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = child.try_wait().expect("waiting for the child") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{what} did not finish within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Ran {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        }
    }
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// Xvfb on a display it picks itself (`-displayfd`), so parallel tests
/// never collide. `None` with a notice naming `what` is skipped when Xvfb
/// is not installed, except under `CI=true`, where that is a failure.
pub fn start(what: &str) -> Option<Xvfb> {
    let Some(exe) = find_in_path("Xvfb") else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI=true but Xvfb is missing: apt-get install xvfb (./dev.sh test does)");
        }
        eprintln!("NOTICE: skipping {what}: Xvfb not found (apt-get install xvfb)");
        return None;
    };
    let mut child = Command::new(exe)
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting Xvfb");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut xvfb = Xvfb {
        child,
        display: String::new(),
    };
    // Xvfb writes the display number and a newline once it accepts clients.
    let mut number = String::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).map(|n| n == 1).unwrap_or(false) && byte[0] != b'\n' {
        number.push(byte[0] as char);
    }
    let number = number.trim().to_owned();
    assert!(
        !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()),
        "Xvfb did not report a display ({number:?})"
    );
    xvfb.display = format!(":{number}");
    Some(xvfb)
}
