//! The built viewer in a real window under Xvfb, with a real swapchain:
//! 300 frames on the built-in character and on tiny.x, CesiumMan.glb and
//! Fox.glb, driven by `--script` through a resize, a minimise (zero extent)
//! and restore, a path switch, a clip crossfade, the skeleton overlay,
//! wireframe, frames in flight, influences, vsync off and a screenshot;
//! validation forced on (`VKSKIN_VALIDATION=1`: the binary exits non-zero
//! on any validation warning or error, teardown included). Also: a
//! malformed file shows its error and the viewer goes on.
//!
//! Without Xvfb the tests are skipped with a notice, except under
//! `CI=true`, where that is a failure; likewise the shared assets.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `$VKSKIN_ASSETS`, else `shared/assets` beside the repository; `None`
/// with a notice when absent (a failure under `CI=true`).
fn asset(rel: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("VKSKIN_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/assets"),
    };
    let path = dir.join(rel);
    if path.is_file() {
        return Some(path);
    }
    if ci() {
        panic!(
            "CI=true but {} is missing (set VKSKIN_ASSETS)",
            path.display()
        );
    }
    eprintln!(
        "NOTICE: skipping: {} not found (set VKSKIN_ASSETS)",
        path.display()
    );
    None
}

struct Run {
    status: std::process::ExitStatus,
    out: String,
    err: String,
}

fn run_viewer(xvfb: &vkskin_tests::xvfb::Xvfb, args: &[&str], limit: Duration) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_viewer"));
    cmd.args(args).env("VKSKIN_VALIDATION", "1");
    let r = xvfb.run(&format!("the viewer {args:?}"), cmd, limit);
    Run {
        status: r.status,
        out: r.stdout,
        err: r.stderr,
    }
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// 300 frames of the scripted session on `file` (None: built-in).
fn scripted_session(file: Option<&Path>, tag: &str) {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed viewer test") else {
        return;
    };
    let shot = std::env::temp_dir().join(format!("vkskin-viewer-{tag}-{}.png", std::process::id()));
    let _ = std::fs::remove_file(&shot);
    let script = format!(
        "20:resize 400x300; 40:minimise; 60:restore; 80:path dq-ssbo; \
         100:crossfade next 0.5; 120:skeleton; 125:names; 130:wireframe; \
         150:frames-in-flight 3; 170:influences 2; 190:vsync off; \
         210:screenshot {}; 230:wireframe off; 240:frames-in-flight 1; \
         250:resize 320x240; 270:path 4x3-ssbo",
        shot.display()
    );
    let mut args = vec!["--size", "320x240", "--frames", "300", "--script", &script];
    let file_arg;
    if let Some(f) = file {
        file_arg = f.to_string_lossy().into_owned();
        args.insert(0, &file_arg);
    }
    let r = run_viewer(&xvfb, &args, Duration::from_secs(300));
    let ctx = format!("stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.status.success(), "viewer exited with {}\n{ctx}", r.status);
    assert!(
        !r.err.contains("validation layer reported"),
        "validation messages\n{ctx}"
    );
    // Every pass of the loop counted; the minimised ones were skipped, so
    // the zero-extent path ran.
    let line = r
        .out
        .lines()
        .find(|l| l.contains("300 frame(s):"))
        .unwrap_or_else(|| panic!("no summary line\n{ctx}"));
    let num = |key: &str| -> u64 {
        line.split(key)
            .next()
            .and_then(|s| s.rsplit(' ').find(|w| !w.is_empty()))
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no {key:?} in {line:?}"))
    };
    let skipped = num(" skipped");
    let presented = num(" presented");
    assert_eq!(presented + skipped, 300, "{line}");
    assert!(
        skipped >= 10,
        "only {skipped} frames skipped while minimised\n{ctx}"
    );
    let created: u32 = line
        .split("swapchains created: ")
        .nth(1)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no swapchain count in {line:?}"));
    // First, 400x300, restore, vsync off (new target), 320x240.
    assert!(created >= 5, "swapchains created {created} times\n{ctx}");
    assert!(r.out.contains("path: dq-ssbo"), "no path switch\n{ctx}");
    assert!(
        r.out.contains("path: 4x3-ssbo"),
        "no second path switch\n{ctx}"
    );
    assert!(r.out.contains("crossfade "), "no crossfade\n{ctx}");
    // The screenshot is the 400x300 window with its panel: many colours,
    // not the clear colour alone.
    let (w, h, px) = decode(&shot);
    assert_eq!((w, h), (400, 300));
    let clear = [15u8, 18, 23];
    let other = px
        .chunks(4)
        .filter(|p| p[..3].iter().zip(clear).any(|(a, b)| a.abs_diff(b) > 6))
        .count();
    assert!(other > 5000, "screenshot nearly blank: {other} pixels");
    let _ = std::fs::remove_file(&shot);
}

#[test]
fn builtin_character_scripted_session() {
    scripted_session(None, "builtin");
}

#[test]
fn tiny_x_scripted_session() {
    if let Some(f) = asset("x/tiny.x") {
        scripted_session(Some(&f), "tiny");
    }
}

#[test]
fn cesium_man_scripted_session() {
    if let Some(f) = asset("gltf/CesiumMan.glb") {
        scripted_session(Some(&f), "cesium");
    }
}

#[test]
fn fox_scripted_session() {
    if let Some(f) = asset("gltf/Fox.glb") {
        scripted_session(Some(&f), "fox");
    }
}

#[test]
fn a_malformed_file_is_reported_and_the_viewer_goes_on() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed viewer test") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("vkskin-viewer-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("garbage.glb");
    std::fs::write(&bad, b"this is not a binary glTF file at all").unwrap();
    // A good file opened after the bad one replaces the model (when the
    // shared assets are here).
    let good = asset("gltf/CesiumMan.glb");
    let mut script = format!("5:open {}; 10:path 4x3-texel", bad.display());
    if let Some(g) = &good {
        script += &format!("; 12:open {}; 15:crossfade #0 0.2", g.display());
    }
    let bad_arg = bad.to_string_lossy().into_owned();
    let r = run_viewer(
        &xvfb,
        &[
            &bad_arg, "--size", "320x240", "--frames", "20", "--script", &script,
        ],
        Duration::from_secs(120),
    );
    let ctx = format!("stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.status.success(), "viewer exited with {}\n{ctx}", r.status);
    // Once at start (then the built-in character), once when opened.
    let reports = r.err.matches("garbage.glb").count();
    assert!(
        reports >= 2,
        "the loader's error was not shown twice\n{ctx}"
    );
    assert!(
        r.out.contains("path: 4x3-texel"),
        "the viewer did not go on\n{ctx}"
    );
    assert!(r.out.contains("20 frame(s): 20 presented"), "{ctx}");
    if good.is_some() {
        assert!(
            r.out.contains("opened ") && r.out.contains("CesiumMan.glb (22 joints"),
            "{ctx}"
        );
        // The path chosen before stays when it can serve the new model.
        assert!(!r.err.contains("cannot serve"), "{ctx}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bounds on` draws the skinned box's edges in its green over the
/// character (none of that green without it).
#[test]
fn bounds_box_is_drawn() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed viewer bounds test") else {
        return;
    };
    let mut greens = Vec::new();
    for on in [false, true] {
        let shot = std::env::temp_dir().join(format!(
            "vkskin-viewer-bounds-{on}-{}.png",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&shot);
        let script = format!(
            "5:pause; 6:bounds {}; 20:screenshot {}",
            if on { "on" } else { "off" },
            shot.display()
        );
        let args = [
            "--size",
            "320x240",
            "--no-panel",
            "--frames",
            "30",
            "--path",
            "4x3-ssbo",
            "--script",
            &script,
        ];
        let r = run_viewer(&xvfb, &args, Duration::from_secs(300));
        let ctx = format!("stdout:\n{}\nstderr:\n{}", r.out, r.err);
        assert!(r.status.success(), "viewer exited with {}\n{ctx}", r.status);
        let (_, _, px) = decode(&shot);
        // The box colour (120, 255, 140), blended at the line edges.
        let green = px
            .chunks(4)
            .filter(|p| p[1] > 200 && p[0] < 170 && p[2] < 190 && p[0].abs_diff(p[2]) < 60)
            .count();
        greens.push(green);
        let _ = std::fs::remove_file(&shot);
    }
    assert!(greens[0] < 20, "box green without the box: {greens:?}");
    assert!(greens[1] > 200, "too little box drawn: {greens:?}");
}

/// The morph demo in a window: paused at 0 s (every weight 0), the
/// script's `weight` events set targets by hand (the model changes shape
/// on screen), `weight reset` hands them back to the clip (the first
/// screenshot again); a script naming a weight past the model's is an
/// error that says so, as other unknown script targets are.
#[test]
fn morph_weights_set_by_script_change_the_window() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed viewer test") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("vkskin-viewer-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shot = |n: &str| dir.join(format!("{n}.png"));
    let script = format!(
        "2:pause; 3:seek 0; 8:screenshot {}; 10:weight 0 1; 11:weight 3 1; \
         16:screenshot {}; 18:weight reset; 24:screenshot {}",
        shot("a").display(),
        shot("b").display(),
        shot("c").display()
    );
    let r = run_viewer(
        &xvfb,
        &[
            "builtin:morph",
            "--size",
            "320x240",
            "--frames",
            "30",
            "--script",
            &script,
        ],
        Duration::from_secs(180),
    );
    let ctx = format!("stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.status.success(), "viewer exited with {}\n{ctx}", r.status);
    assert!(r.out.contains("30 frame(s): 30 presented"), "{ctx}");
    let [a, b, c] = ["a", "b", "c"].map(|n| decode(&shot(n)).2);
    let differing = |p: &[u8], q: &[u8]| {
        p.chunks(4)
            .zip(q.chunks(4))
            .filter(|(x, y)| x.iter().zip(*y).any(|(s, t)| s.abs_diff(*t) > 8))
            .count()
    };
    assert!(
        differing(&a, &b) > 300,
        "the weights changed nothing\n{ctx}"
    );
    assert!(
        differing(&a, &c) < differing(&a, &b) / 4,
        "reset did not restore\n{ctx}"
    );
    let r = run_viewer(
        &xvfb,
        &[
            "builtin:morph",
            "--size",
            "320x240",
            "--frames",
            "5",
            "--script",
            "2:weight 9 1",
        ],
        Duration::from_secs(120),
    );
    assert!(!r.status.success());
    assert!(
        r.err.contains("morph weight 9: the model has 4"),
        "{}",
        r.err
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The window with GPU animation: `anim gpu` on an instanced path, a
/// crossfade and the skeleton overlay on it, a windowed path (the CPU
/// animates, saying why), back to an instanced one (the GPU again), then
/// `anim cpu`; validation silent.
#[test]
fn gpu_animation_in_the_window_follows_the_path() {
    let Some(xvfb) = vkskin_tests::xvfb::start("the windowed viewer's GPU animation") else {
        return;
    };
    let script = "5:path 4x3-ssbo; 10:anim gpu; 15:crossfade next 0.3; 20:skeleton; \
                  30:path 4x3-ubo; 40:path dq-texel; 50:anim cpu";
    let r = run_viewer(
        &xvfb,
        &["--size", "320x240", "--frames", "60", "--script", script],
        Duration::from_secs(300),
    );
    let ctx = format!("stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.status.success(), "viewer exited with {}\n{ctx}", r.status);
    assert!(
        !r.err.contains("validation layer reported"),
        "validation messages\n{ctx}"
    );
    let gpu = r.out.matches("viewer: animation on the GPU").count();
    assert_eq!(gpu, 2, "GPU animation on 4x3-ssbo and on dq-texel\n{ctx}");
    assert!(
        r.err
            .contains("animation on the CPU (GPU animation cannot serve: path 4x3-ubo"),
        "no fallback on 4x3-ubo\n{ctx}"
    );
    // The first line (CPU, asked) and the last (`anim cpu`).
    assert_eq!(
        r.out.matches("viewer: animation on the CPU").count(),
        2,
        "{ctx}"
    );
}
