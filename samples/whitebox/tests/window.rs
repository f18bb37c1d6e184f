//! The built sample in a real window under Xvfb with a real swapchain: N
//! frames including a programmatic resize (shrink at frame K, back at 2K),
//! exit 0, validation forced on (the binary exits non-zero on any
//! validation warning or error). Without Xvfb the test is skipped with a
//! notice, except under `CI=true`, where that is a failure.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn find_in_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

use std::path::Path;

/// Starts Xvfb on a display it picks itself (`-displayfd`), so parallel
/// runs never collide.
fn start_xvfb(exe: &Path) -> (Xvfb, String) {
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
    let xvfb = Xvfb(child);
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
    (xvfb, format!(":{number}"))
}

#[test]
fn windowed_run_survives_a_resize_and_is_validation_clean() {
    let Some(xvfb_exe) = find_in_path("Xvfb") else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI=true but Xvfb is missing: apt-get install xvfb (./dev.sh test does)");
        }
        eprintln!(
            "NOTICE: skipping the windowed whitebox test: Xvfb not found (apt-get install xvfb)"
        );
        return;
    };
    let (_xvfb, display) = start_xvfb(&xvfb_exe);
    let frames = 60;
    let mut child = Command::new(env!("CARGO_BIN_EXE_whitebox"))
        .args([
            "--frames",
            &frames.to_string(),
            "--resize-at",
            "15",
            "--no-vsync",
        ])
        .args(["--validation", "--width", "320", "--height", "240"])
        .env("DISPLAY", &display)
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running whitebox");
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for whitebox") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("whitebox did not finish {frames} frames in time");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        status.success(),
        "whitebox exited with {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(
        out.contains(&format!("presented {frames} frame(s)")),
        "{out}"
    );
    // Shrink and grow back: the first swapchain plus at least one per resize.
    let created: u32 = out
        .split("swapchains created: ")
        .nth(1)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no swapchain count in {out:?}"));
    assert!(
        created >= 3,
        "swapchain created {created} times; the resizes were not handled\n{out}"
    );
}
