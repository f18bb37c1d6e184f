//! The built sample in a real window under Xvfb with a real swapchain: N
//! frames including a programmatic resize (shrink at frame K, back at 2K),
//! exit 0, validation forced on (the binary exits non-zero on any
//! validation warning or error). Without Xvfb the test is skipped with a
//! notice, except under `CI=true`, where that is a failure.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn windowed_run_survives_a_resize_and_is_validation_clean() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed whitebox test") else {
        return;
    };
    let display = xvfb.display.clone();
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
