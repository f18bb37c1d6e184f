//! The built crowd sample end to end, headless and under the validation
//! layer: frames on a vertex-stage and a compute-stage path are drawn and
//! move, the figures are printed, and counts or names the device or sample
//! cannot take are errors that say why.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The sample's clear colour in 8-bit UNORM.
const CLEAR: [u8; 3] = [13, 15, 20];

fn crowd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowd"))
        .args(args)
        // Validation in release builds too (debug builds have it anyway).
        .env("VKSKIN_VALIDATION", "1")
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vkskin-crowd-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    assert_eq!(info.color_type, png::ColorType::Rgba);
    (info.width, info.height, buf)
}

/// Fraction of pixels clearly not the clear colour.
fn coverage(rgba: &[u8]) -> f64 {
    let drawn = rgba
        .chunks_exact(4)
        .filter(|p| (0..3).any(|c| (p[c] as i32 - CLEAR[c] as i32).abs() > 3))
        .count();
    drawn as f64 / (rgba.len() / 4) as f64
}

/// Share of pixels whose every channel is within 1/255 in both frames.
fn agree(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let close = a
        .chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(p, q)| (0..4).all(|c| p[c].abs_diff(q[c]) <= 1))
        .count();
    close as f64 / (a.len() / 4) as f64
}

#[test]
fn headless_frames_on_a_vertex_and_a_compute_path() {
    for path in ["4x3-ssbo", "dq-compute"] {
        let dir = out_dir(path);
        let out = crowd(&[
            "--headless",
            "--instances",
            "64",
            "--frames",
            "3",
            "--size",
            "192x108",
            "--path",
            path,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{path}: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert!(
            stdout.contains("64 instances of the built-in character"),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("path {path} (--path)")),
            "{stdout}"
        );
        let frame_lines = stdout.lines().filter(|l| l.starts_with("frame ")).count();
        assert_eq!(frame_lines, 3, "{stdout}");
        assert!(
            stdout.contains("median of 2 frame(s)") && stdout.contains("gpu "),
            "{stdout}"
        );
        let frames: Vec<Vec<u8>> = (0..3)
            .map(|i| {
                let (w, h, rgba) = decode(&dir.join(format!("frame_{i:04}.png")));
                assert_eq!((w, h), (192, 108));
                let c = coverage(&rgba);
                assert!(c > 0.03, "{path}: frame {i} covers {:.1}%", c * 100.0);
                rgba
            })
            .collect();
        // Frame i shows t = i / 30 s: the crowd moved.
        assert_ne!(frames[0], frames[2], "{path}: the crowd did not move");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn compute_output_close_to_the_storage_range_is_validation_clean() {
    // 1,500 x 6,252 vertices: 112.5 MB of skinned positions, within
    // lavapipe's 128 MiB maxStorageBufferRange, while the output buffer's
    // rounded-up capacity is not; its descriptors must still stay in range.
    let dir = out_dir("range");
    let out = crowd(&[
        "--headless",
        "--instances",
        "1500",
        "--frames",
        "1",
        "--size",
        "64x36",
        "--path",
        "4x3-compute",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    let (_, _, rgba) = decode(&dir.join("frame_0000.png"));
    assert!(coverage(&rgba) > 0.03);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn instances_beyond_the_storage_are_an_error_naming_the_limit() {
    // 100,000 instances of 6,252 vertices: 7.5 GB of skinned positions,
    // past any device's maxStorageBufferRange (a 32-bit byte count). Where
    // the 182 MB of storage-buffer palettes do not fit either (lavapipe's
    // 128 MiB), that limit is named first.
    let dir = out_dir("limit");
    let out = crowd(&[
        "--headless",
        "--instances",
        "100000",
        "--frames",
        "1",
        "--path",
        "4x3-compute",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("100000 instances of the built-in character on path 4x3-compute")
            && stderr.contains(" in one frame ")
            && stderr.contains("the device allows"),
        "{stderr}"
    );
    assert!(!dir.join("frame_0000.png").exists());
}

#[test]
fn bad_arguments_are_errors_that_say_why() {
    let out = crowd(&["--headless", "--path", "4x3-nowhere"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("unknown skinning path \"4x3-nowhere\"")
            && stderr.contains("4x3-ubo")
            && stderr.contains("dq-scale-cpu"),
        "{stderr}"
    );
    for (args, needle) in [
        (
            vec!["--instances", "0"],
            "this sample draws 1 to 100000 instances",
        ),
        (
            vec!["--instances", "100001"],
            "this sample draws 1 to 100000 instances",
        ),
        (vec!["--threads", "0"], "--threads 0"),
        (vec!["--size", "0x10"], "0 is outside 1..=16384"),
        (vec!["/nonexistent/crowd.glb"], "/nonexistent/crowd.glb"),
    ] {
        let mut all = vec!["--headless", "--frames", "1"];
        all.extend(&args);
        let out = crowd(&all);
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// `--up z` stands a file authored Z-up (tiny_4anim.x) on the grid: one
/// instance drawn is much taller than wide, where `--up y` lays it down. Needs
/// the shared assets (skipped with a notice without them, a failure under
/// `CI=true`).
#[test]
fn up_z_stands_a_z_up_model_on_the_grid() {
    let Some(model) = vkskin_tests::asset("x/tiny_4anim.x") else {
        return;
    };
    let extent = |up: &str| {
        let dir = out_dir(&format!("up-{up}"));
        let out = crowd(&[
            model.to_str().unwrap(),
            "--headless",
            "--instances",
            "1",
            "--frames",
            "1",
            "--size",
            "300x300",
            "--up",
            up,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "--up {up}: {}\n{stdout}\n{stderr}",
            out.status
        );
        let (w, h, px) = decode(&dir.join("frame_0000.png"));
        let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
        for (i, p) in px.chunks_exact(4).enumerate() {
            if (0..3).any(|c| (p[c] as i32 - CLEAR[c] as i32).abs() > 3) {
                let (x, y) = (i as u32 % w, i as u32 / w);
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(x1 > x0 && y1 > y0, "--up {up}: nothing drawn");
        (x1 - x0, y1 - y0)
    };
    // Standing, Tiny is about three times as tall as wide on screen; lying
    // (seen from the crowd camera's 31 degrees above), about as tall as
    // wide.
    let (w, h) = extent("z");
    assert!(h > 2 * w, "--up z: {w} wide, {h} tall");
    let (w, h) = extent("y");
    assert!(
        2 * h < 3 * w,
        "--up y: the Z-up figure should lie ({w} wide, {h} tall)"
    );
}

/// `drawn N of M` of every frame line.
fn drawn_counts(stdout: &str) -> Vec<(usize, usize)> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.split("drawn ").nth(1)?;
            let (n, m) = rest.split_once(" of ")?;
            Some((n.trim().parse().ok()?, m.trim().parse().ok()?))
        })
        .collect()
}

/// Culling by the skinned boxes on `path` draws fewer instances when the
/// camera, moved in, sees only part of the grid, and the same pixels: no
/// instance in view is dropped. Returns the counts drawn with culling.
fn culling_keeps_the_pixels(path: &str) -> Vec<(usize, usize)> {
    let mut frames = Vec::new();
    let mut counts = Vec::new();
    for cull in ["on", "off"] {
        let dir = out_dir(&format!("cull-{path}-{cull}"));
        let out = crowd(&[
            "--headless",
            "--instances",
            "64",
            "--frames",
            "3",
            "--size",
            "192x108",
            "--path",
            path,
            "--zoom",
            "3",
            "--cull",
            cull,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{path}, {cull}: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert!(stdout.contains(&format!("culling {cull}")), "{stdout}");
        let c = drawn_counts(&stdout);
        assert_eq!(c.len(), 3, "{stdout}");
        counts.push(c);
        frames.push(
            (0..3)
                .map(|i| decode(&dir.join(format!("frame_{i:04}.png"))))
                .collect::<Vec<_>>(),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    for (i, (on, off)) in frames[0].iter().zip(&frames[1]).enumerate() {
        assert_eq!((on.0, on.1), (off.0, off.1));
        assert!(
            coverage(&on.2) > 0.05,
            "{path}: frame {i}: too little drawn to compare"
        );
        let differ = on.2.iter().zip(&off.2).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "{path}: frame {i}: {differ} bytes differ between --cull on and off"
        );
    }
    for ((on, _), (off, _)) in counts[0].iter().zip(&counts[1]) {
        assert_eq!(*off, 64);
        assert!(*on > 0 && *on < 64, "{path}: culling drew {on} of 64");
    }
    println!("{path}: drawn with culling: {:?} of 64", counts[0]);
    counts.swap_remove(0)
}

#[test]
fn culling_draws_fewer_instances_and_the_same_pixels() {
    culling_keeps_the_pixels("4x3-ssbo");
}

/// The dual-quaternion paths cull with `JointBounds::skinned_dual_quat`
/// (with and without scale): fewer drawn, the same pixels.
#[test]
fn dual_quaternion_paths_cull_and_keep_the_pixels() {
    for path in ["dq-ssbo", "dq-scale-ssbo"] {
        culling_keeps_the_pixels(path);
    }
}

/// A qt path does not cull: its encoding may drop a scale, which no box
/// here is shown to follow.
#[test]
fn a_qt_path_does_not_cull() {
    let dir = out_dir("cull-qt");
    let out = crowd(&[
        "--headless",
        "--instances",
        "16",
        "--frames",
        "1",
        "--size",
        "96x54",
        "--path",
        "qt-ssbo",
        "--zoom",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("culling off"), "{stdout}");
    assert_eq!(drawn_counts(&stdout), vec![(16, 16)]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn anim_cpu_and_gpu_render_the_same_frame() {
    // 1,000 instances, the same seed and frame time: the palettes written
    // by the CPU crowd and by the GPU animation passes draw the same
    // pixels (99.9% of them within 1/255).
    let mut images = Vec::new();
    for anim in ["cpu", "gpu"] {
        let dir = out_dir(&format!("anim-{anim}"));
        let out = crowd(&[
            "--headless",
            "--instances",
            "1000",
            "--frames",
            "2",
            "--size",
            "320x180",
            "--path",
            "4x3-ssbo",
            "--cull",
            "off",
            "--anim",
            anim,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{anim}: {}\n{stdout}\n{stderr}",
            out.status
        );
        let on = if anim == "cpu" { "CPU" } else { "GPU" };
        assert!(
            stdout.contains(&format!("animation on the {on}")),
            "{stdout}"
        );
        let (_, _, rgba) = decode(&dir.join("frame_0001.png"));
        assert!(coverage(&rgba) > 0.03, "{anim}: an empty frame");
        images.push(rgba);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let share = agree(&images[0], &images[1]);
    assert!(share >= 0.999, "only {:.3}% of pixels agree", share * 100.0);
}

/// `model`'s clips compressed into `dir/NAME.vkclip`.
fn clip_file(dir: &Path, name: &str, model: &vkskin::assets::Model) -> PathBuf {
    use vkskin::anim::{ClipFile, CompressionJob, Tolerance};
    // A model without clips (the trident) gets the tests' varied ones.
    let own = if model.clips.is_empty() {
        vkskin_tests::gpu_anim::varied_clips(&model.skeleton, 7)
    } else {
        model.clips.clone()
    };
    let clips = own
        .iter()
        .map(|clip| {
            CompressionJob {
                clip,
                skeleton: &model.skeleton,
                tolerance: Tolerance::new(0.0001, 0.1),
            }
            .run()
            .expect("compressing")
        })
        .collect();
    let path = dir.join(format!("{name}.vkclip"));
    ClipFile {
        skeleton: model.skeleton.clone(),
        clips,
    }
    .save(&path)
    .expect("saving the clip file");
    path
}

/// `--clips F.vkclip`: the crowd plays the clip file's compressed clips
/// and draws what the original clips draw (within a pixel's rounding, at
/// 0.1 mm at 10 cm); a clip file of another skeleton is an error naming
/// both; `--anim gpu` decodes the compressed clips and draws `--anim cpu`'s
/// frame.
#[test]
fn clips_from_a_clip_file_play_in_the_crowd() {
    let dir = out_dir("clips");
    std::fs::create_dir_all(&dir).unwrap();
    let character = vkskin::assets::builtin::Character::model();
    let file = clip_file(&dir, "character", &character);
    let file = file.to_str().unwrap();
    let mut images = Vec::new();
    for (clips, anim) in [(None, "cpu"), (Some(file), "cpu"), (Some(file), "gpu")] {
        let frames = dir.join(format!("frames-{}-{anim}", clips.is_some()));
        let mut args = vec![
            "--headless",
            "--instances",
            "64",
            "--frames",
            "2",
            "--size",
            "320x180",
            "--path",
            "4x3-ssbo",
            "--anim",
            anim,
            "--out",
            frames.to_str().unwrap(),
        ];
        if let Some(c) = clips {
            args.extend(["--clips", c]);
        }
        let out = crowd(&args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{args:?}: {stdout}\n{stderr}");
        let (_, _, rgba) = decode(&frames.join("frame_0001.png"));
        assert!(coverage(&rgba) > 0.02, "{args:?}: an empty frame");
        images.push(rgba);
    }
    // The compressed clips against the originals (within the tolerance's
    // rounding), then GPU animation of the compressed clips against CPU
    // animation of them (the GPU decodes them itself).
    for (x, y, least) in [(0, 1, 0.99), (1, 2, 0.999)] {
        let share = agree(&images[x], &images[y]);
        assert!(
            share >= least,
            "frames {x} and {y}: only {:.3}% of pixels agree",
            share * 100.0
        );
    }

    let trident = clip_file(&dir, "trident", &vkskin::assets::builtin::Trident::model());
    let out = crowd(&[
        "--headless",
        "--frames",
        "1",
        "--clips",
        trident.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success(), "a clip file of another skeleton");
    assert!(
        stderr.contains("trident.vkclip")
            && stderr.contains("the built-in character")
            && stderr.contains("joints"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The built-in morph demo's instances animate their morph weights (each
/// instance's clip's weight tracks at its own clip time): the frames
/// differ from the same crowd held at the default weights, and culling
/// (which writes each visible instance's weights itself) draws the same
/// pixels as drawing every instance.
#[test]
fn morph_weights_animate_per_instance_and_cull_alike() {
    let run = |tag: &str, cull: &str, morph: &str| {
        let dir = out_dir(tag);
        let out = crowd(&[
            "--headless",
            "builtin:morph",
            "--instances",
            "16",
            "--frames",
            "3",
            "--size",
            "192x108",
            "--path",
            "4x3-ssbo",
            "--zoom",
            "2",
            "--cull",
            cull,
            "--morph",
            morph,
            "--out",
            dir.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{tag}: {}\n{stdout}\n{stderr}",
            out.status
        );
        let frames: Vec<_> = (0..3)
            .map(|i| decode(&dir.join(format!("frame_{i:04}.png"))))
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        frames
    };
    let culled = run("morph-cull", "on", "on");
    let all = run("morph-all", "off", "on");
    let rest = run("morph-rest", "off", "off");
    let mut moved = 0;
    for i in 0..3 {
        assert!(coverage(&all[i].2) > 0.02, "frame {i}: too little drawn");
        let differ = culled[i]
            .2
            .iter()
            .zip(&all[i].2)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(differ, 0, "frame {i}: culling changed {differ} bytes");
        moved += all[i]
            .2
            .chunks_exact(4)
            .zip(rest[i].2.chunks_exact(4))
            .filter(|(a, b)| (0..3).any(|c| (a[c] as i32 - b[c] as i32).abs() > 8))
            .count();
    }
    println!("pixels that the animated weights changed over 3 frames: {moved}");
    assert!(moved > 50, "the morph weights changed only {moved} pixels");
}
