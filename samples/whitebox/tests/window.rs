//! The built sample in a real window under Xvfb with a real swapchain: N
//! frames including a programmatic resize (shrink at frame K, back at 2K),
//! exit 0, validation forced on (the binary exits non-zero on any
//! validation warning or error). Without Xvfb the test is skipped with a
//! notice, except under `CI=true`, where that is a failure.

use std::process::Command;
use std::time::Duration;

#[test]
fn windowed_run_survives_a_resize_and_is_validation_clean() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed whitebox test") else {
        return;
    };
    let frames = 60;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_whitebox"));
    cmd.args([
        "--frames",
        &frames.to_string(),
        "--resize-at",
        "15",
        "--no-vsync",
    ])
    .args(["--validation", "--width", "320", "--height", "240"]);
    let ran = xvfb.run("whitebox", cmd, Duration::from_secs(180));
    let (status, out, err) = (ran.status, ran.stdout, ran.stderr);
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
