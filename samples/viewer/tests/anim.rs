//! The built viewer, headless (validation forced on): `--anim gpu` draws
//! the frames `--anim cpu` draws and names where the animation ran; where
//! GPU animation cannot serve, the CPU animates and says why; `--clips
//! FILE.vkclip` plays a clip file's clips on the model, and a clip file of
//! another skeleton is an error naming both files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vkskin::anim::{ClipFile, CompressionJob, Tolerance};
use vkskin::assets::builtin::{Character, Trident};

fn decode(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vkskin-viewer-anim-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs the viewer; panics with its output unless it succeeded. Returns
/// its stdout.
fn viewer_ok(args: &[&str]) -> String {
    let o = run(args);
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "viewer {args:?}: {}\n{out}\n{err}",
        o.status
    );
    out
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args(args)
        .env("VKSKIN_VALIDATION", "1")
        .output()
        .expect("running the viewer")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Share of pixels whose every channel is within 1/255.
fn agree(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let close = a
        .chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(p, q)| (0..4).all(|c| p[c].abs_diff(q[c]) <= 1))
        .count();
    close as f64 / (a.len() / 4) as f64
}

/// Pixels that are not the clear colour (15, 18, 23).
fn drawn(px: &[u8]) -> usize {
    px.chunks(4)
        .filter(|p| {
            p[..3]
                .iter()
                .zip([15u8, 18, 23])
                .any(|(a, b)| a.abs_diff(b) > 4)
        })
        .count()
}

const FRAMES: usize = 3;

/// Headless frames of the built-in character on `path`, animated on `anim`.
fn frames(tag: &str, path: &str, anim: &str, extra: &[&str]) -> (String, Vec<Vec<u8>>) {
    let out = temp(tag);
    let mut args = vec![
        "--headless",
        "--frames",
        "3",
        "--fps",
        "4",
        "--size",
        "160x120",
        "--path",
        path,
        "--anim",
        anim,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let stdout = viewer_ok(&args);
    let images = (0..FRAMES)
        .map(|i| decode(&out.join(format!("frame_{i:04}.png"))))
        .collect();
    let _ = std::fs::remove_dir_all(&out);
    (stdout, images)
}

#[test]
fn anim_gpu_draws_the_frames_anim_cpu_draws_and_says_so() {
    for path in ["4x3-ssbo", "dq-compute"] {
        let (cpu_out, cpu) = frames(&format!("cpu-{path}"), path, "cpu", &[]);
        let (gpu_out, gpu) = frames(&format!("gpu-{path}"), path, "gpu", &[]);
        assert!(
            cpu_out.contains("viewer: stats: animation on the CPU"),
            "{cpu_out}"
        );
        let stats = gpu_out
            .lines()
            .find(|l| l.starts_with("viewer: stats:"))
            .unwrap_or_else(|| panic!("no stats line:\n{gpu_out}"));
        assert!(stats.contains("animation on the GPU"), "{stats}");
        // lavapipe has timestamps: the pass's time is there.
        assert!(stats.contains("animation pass"), "{stats}");
        for i in 0..FRAMES {
            assert!(drawn(&cpu[i]) > 500, "{path} frame {i}: empty");
            let share = agree(&cpu[i], &gpu[i]);
            assert!(
                share >= 0.999,
                "{path} frame {i}: only {:.3}% of pixels agree",
                share * 100.0
            );
        }
        // The character moves (the comparison is not of still frames).
        assert!(agree(&gpu[0], &gpu[2]) < 0.999, "{path}: nothing moved");
    }
}

#[test]
fn anim_gpu_where_it_cannot_serve_falls_back_to_the_cpu_with_the_reason() {
    let (out, _) = frames("fallback", "4x3-ubo", "gpu", &[]);
    let stats = out
        .lines()
        .find(|l| l.starts_with("viewer: stats:"))
        .unwrap_or_else(|| panic!("no stats line:\n{out}"));
    assert!(
        stats.contains("animation on the CPU (GPU animation cannot serve: path 4x3-ubo"),
        "{stats}"
    );
    let (out, _) = frames("fallback-motion", "4x3-ssbo", "gpu", &["--motion-view"]);
    assert!(
        out.contains("animation on the CPU (GPU animation cannot serve: the motion view"),
        "{out}"
    );
}

/// The built-in character's clips compressed into a clip file.
fn character_clip_file(dir: &Path, tolerance: Tolerance) -> PathBuf {
    let model = Character::model();
    let clips = model
        .clips
        .iter()
        .map(|clip| {
            CompressionJob {
                clip,
                skeleton: &model.skeleton,
                tolerance,
            }
            .run()
            .expect("compressing")
        })
        .collect();
    let path = dir.join("character.vkclip");
    ClipFile {
        skeleton: model.skeleton.clone(),
        clips,
    }
    .save(&path)
    .expect("saving the clip file");
    path
}

#[test]
fn clips_from_a_clip_file_play_on_the_model() {
    let dir = temp("clips");
    std::fs::create_dir_all(&dir).unwrap();
    // 0.1 mm at 10 cm: the compressed clips draw the original's frames
    // within a pixel's rounding.
    let file = character_clip_file(&dir, Tolerance::new(0.0001, 0.1));
    let file = file.to_str().unwrap();
    let (_, original) = frames("clips-original", "4x3-ssbo", "cpu", &["--clip", "wave"]);
    let (out, packed) = frames(
        "clips-packed",
        "4x3-ssbo",
        "cpu",
        &["--clips", file, "--clip", "wave"],
    );
    assert!(out.contains("clip wave"), "{out}");
    for i in 0..FRAMES {
        let share = agree(&original[i], &packed[i]);
        assert!(
            share >= 0.99,
            "frame {i}: only {:.3}% of pixels agree",
            share * 100.0
        );
    }
    assert!(agree(&packed[0], &packed[2]) < 0.999, "nothing moved");
    // GPU animation decodes the compressed clips itself: the same frames.
    let (out, gpu) = frames(
        "clips-gpu",
        "4x3-ssbo",
        "gpu",
        &["--clips", file, "--clip", "wave"],
    );
    assert!(out.contains("animation on the GPU"), "{out}");
    for i in 0..FRAMES {
        let share = agree(&packed[i], &gpu[i]);
        assert!(
            share >= 0.999,
            "frame {i}: only {:.3}% of pixels agree between --anim cpu and gpu",
            share * 100.0
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_clip_file_of_another_skeleton_is_an_error_naming_both_files() {
    let dir = temp("clips-mismatch");
    std::fs::create_dir_all(&dir).unwrap();
    let trident = Trident::model();
    // The trident model carries no clips: the tests' varied ones.
    let clips = vkskin_tests::gpu_anim::varied_clips(&trident.skeleton, 7)
        .iter()
        .map(|clip| {
            CompressionJob {
                clip,
                skeleton: &trident.skeleton,
                tolerance: Tolerance::OZZ_DEFAULT,
            }
            .run()
            .expect("compressing")
        })
        .collect();
    let file = dir.join("trident.vkclip");
    ClipFile {
        skeleton: trident.skeleton.clone(),
        clips,
    }
    .save(&file)
    .expect("saving");
    let out = dir.join("out");
    let o = run(&[
        "--headless",
        "--clips",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "a mismatched clip file must fail");
    assert!(
        err.contains("trident.vkclip") && err.contains("the built-in character"),
        "{err}"
    );
    assert!(err.contains("joints"), "{err}");
    assert!(!out.join("frame_0000.png").exists());
    // A file that is not a clip file: the loader's error, naming it.
    let bad = dir.join("bad.vkclip");
    std::fs::write(&bad, b"VKSCLIP\0 truncated").unwrap();
    let o = run(&[
        "--headless",
        "--clips",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("bad.vkclip"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
