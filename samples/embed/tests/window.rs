//! `embed --window` in a real window under Xvfb: the samples' runner owns
//! the window and swapchain, the app makes vkskin's three calls per frame.
//! N frames presented, exit 0, validation forced on (the binary exits
//! non-zero on any validation warning or error). Without Xvfb the test is
//! skipped with a notice, except under `CI=true`, where that is a failure.

use std::process::Command;
use std::time::Duration;

#[test]
fn windowed_embedding_presents_and_is_validation_clean() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed embed test") else {
        return;
    };
    let frames = 30;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_embed"));
    cmd.args(["--window", "--no-vsync", "--validation"]).args([
        "--frames",
        &frames.to_string(),
        "--size",
        "320x240",
    ]);
    let ran = xvfb.run("embed --window", cmd, Duration::from_secs(180));
    let (out, err) = (&ran.stdout, &ran.stderr);
    assert!(
        ran.status.success(),
        "embed --window exited with {}\nstdout:\n{out}\nstderr:\n{err}",
        ran.status
    );
    assert!(out.contains("embed: drawing through "), "{out}");
    assert!(
        out.contains(&format!("presented {frames} frame(s)")),
        "{out}\n{err}"
    );
}

/// With no display the windowed mode renders headless through the runner;
/// its frame equals the raw-ash host's frame of the same moment (frame 3,
/// t = 3/30 s): the same three calls give the same picture whoever owns
/// the frame loop. 99.9% of pixels within 1/255.
#[test]
fn windowed_mode_headless_draws_the_raw_hosts_frame() {
    let dir = std::env::temp_dir().join(format!("vkskin-embed-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_embed"))
        .args([
            "--window",
            "--frames",
            "4",
            "--size",
            "320x240",
            "--validation",
        ])
        .current_dir(&dir)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .status()
        .expect("running embed --window");
    assert!(
        status.success(),
        "embed --window (headless) exited with {status}"
    );
    let (size, runner) = vkskin_tests::read_png(&dir.join("out/embed-window/frame_0003.png"));
    assert_eq!(size, (320, 240));
    let host = embed::render(&embed::HostOptions {
        width: 320,
        height: 240,
        frames: 4,
        path: None,
        validation: true,
    })
    .expect("the raw-ash host");
    assert!(host.problems.is_empty(), "{:?}", host.problems);
    let drawn = host
        .rgba
        .chunks_exact(4)
        .filter(|p| p[..3] != host.rgba[..3])
        .count();
    assert!(
        drawn > 1000,
        "the host's frame shows no character ({drawn} pixels)"
    );
    let agree = vkskin_tests::gpu::agreeing(&runner, &host.rgba);
    assert!(
        agree >= 0.999,
        "{:.4}% of pixels within 1/255",
        agree * 100.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
