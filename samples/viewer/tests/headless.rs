//! The built viewer, headless (validation forced on: the binary exits
//! non-zero on any validation warning or error): frames, the contact
//! sheet, and the errors bad input gets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dec = png::Decoder::new(std::io::BufReader::new(file));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Pixels that are not the clear colour (0.06, 0.07, 0.09 -> 15, 18, 23).
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

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vkskin-viewer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn viewer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args(args)
        .env("VKSKIN_VALIDATION", "1")
        .output()
        .expect("running the viewer")
}

#[test]
fn builtin_character_four_frames_and_a_contact_sheet() {
    let out = temp("headless");
    let o = viewer(&[
        "--headless",
        "--frames",
        "4",
        "--fps",
        "5",
        "--size",
        "160x120",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.status.success(),
        "viewer exited with {}\n{text}",
        o.status
    );
    let mut frames = Vec::new();
    for i in 0..4 {
        let (w, h, px) = decode(&out.join(format!("frame_{i:04}.png")));
        assert_eq!((w, h), (160, 120));
        let n = drawn(&px);
        // The character covers a good part of the frame, not all of it.
        assert!(n > 500 && n < 160 * 120 / 2, "frame {i}: {n} drawn pixels");
        frames.push(px);
    }
    assert!(!out.join("frame_0004.png").exists());
    // "walk" moves: consecutive frames (0.2 s apart) differ.
    for i in 1..4 {
        assert_ne!(
            frames[i - 1],
            frames[i],
            "frames {} and {i} are equal",
            i - 1
        );
    }
    // 4 frames: a 2x2 sheet of 160x120 cells (factor 1) with 4 px gaps.
    let (w, h, sheet) = decode(&out.join("contact_sheet.png"));
    assert_eq!((w, h), (2 * 160 + 3 * 4, 2 * 120 + 3 * 4));
    let cell = |k: usize| -> Vec<u8> {
        let (x0, y0) = (4 + (k % 2) * 164, 4 + (k / 2) * 124);
        (0..120)
            .flat_map(|y| {
                let s = ((y0 + y) * w as usize + x0) * 4;
                sheet[s..s + 160 * 4].to_vec()
            })
            .collect()
    };
    for (k, f) in frames.iter().enumerate() {
        assert_eq!(&cell(k), f, "sheet cell {k} is not frame {k}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_malformed_file_exits_non_zero_naming_the_file() {
    let dir = temp("malformed");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("broken.glb");
    std::fs::write(&bad, b"glTF\x02\0\0\0garbage, not a GLB container").unwrap();
    let out = dir.join("out");
    let o = viewer(&[
        bad.to_str().unwrap(),
        "--headless",
        "--frames",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a malformed file must fail: {err}");
    assert!(err.starts_with("viewer: "), "{err}");
    assert!(
        err.contains("broken.glb"),
        "the message must name the file: {err}"
    );
    assert!(!out.join("frame_0000.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unsupported_file_and_unknown_names_are_errors() {
    let dir = temp("unsupported");
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("model.obj");
    std::fs::write(&obj, b"v 0 0 0\n").unwrap();
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let o = viewer(&[obj.to_str().unwrap(), "--headless", "--out", out]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("model.obj") && err.contains(".gltf"), "{err}");

    let o = viewer(&["--headless", "--clip", "dance", "--out", out]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("\"dance\"") && err.contains("\"walk\""),
        "{err}"
    );

    let o = viewer(&["--headless", "--path", "5x5-magic", "--out", out]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("5x5-magic") && err.contains("dq-ssbo"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `builtin:morph` (the morph demo): its clip bends the top joint back
/// to straight at 2 s and 4 s, while its weights are (0, 1, 1, 1) at 2 s
/// and all zero at 0 s and 4 s, so frame 1 (2 s) differs from frame 0 by
/// the targets alone and frame 2 (4 s, the loop's end) repeats frame 0.
#[test]
fn the_morph_demo_changes_shape_as_its_weights_animate() {
    let out = temp("morph");
    let o = viewer(&[
        "builtin:morph",
        "--headless",
        "--frames",
        "3",
        "--fps",
        "0.5",
        "--size",
        "96x96",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "viewer exited with {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let frames: Vec<Vec<u8>> = (0..3)
        .map(|i| decode(&out.join(format!("frame_{i:04}.png"))).2)
        .collect();
    let differing = |a: &[u8], b: &[u8]| {
        a.chunks(4)
            .zip(b.chunks(4))
            .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > 8))
            .count()
    };
    assert!(drawn(&frames[0]) > 300, "the blob is drawn");
    let morphed = differing(&frames[0], &frames[1]);
    assert!(morphed > 200, "{morphed} pixels changed by the targets");
    assert_eq!(differing(&frames[0], &frames[2]), 0);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn the_motion_view_colours_velocity_and_a_still_frame_is_uniform() {
    // builtin:morph (skinned and morphed by its clip), on a windowed path
    // too (motion in the ubo window) and the compute stage.
    for path in ["4x3-ssbo", "dq-ubo", "4x3-compute"] {
        let out = temp(&format!("motion-{path}"));
        let o = viewer(&[
            "builtin:morph",
            "--headless",
            "--motion-view",
            "--path",
            path,
            "--frames",
            "3",
            "--fps",
            "10",
            "--size",
            "160x120",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{path}: viewer exited with {}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let colours = |i: usize| {
            let (_, _, px) = decode(&out.join(format!("frame_{i:04}.png")));
            let drawn: Vec<[u8; 3]> = px
                .chunks(4)
                .filter(|p| {
                    p[..3]
                        .iter()
                        .zip([15u8, 18, 23])
                        .any(|(a, b)| a.abs_diff(b) > 4)
                })
                .map(|p| [p[0], p[1], p[2]])
                .collect();
            assert!(drawn.len() > 300, "{path} frame {i}: {} drawn", drawn.len());
            drawn
        };
        // Frame 0 has no previous pose (a teleport): every drawn pixel is
        // the same grey, zero velocity.
        let still = colours(0);
        assert!(
            still.iter().all(|c| *c == still[0]),
            "{path}: frame 0 is not uniform"
        );
        let [r, g, b] = still[0];
        assert!(
            r == g && g == b && r > 100,
            "{path}: still colour {:?}",
            still[0]
        );
        // Frame 2 moves (0.1 s after frame 1): the colours vary, and many
        // pixels are away from the still grey.
        let moving = colours(2);
        let away = moving
            .iter()
            .filter(|c| c.iter().zip(&still[0]).any(|(a, b)| a.abs_diff(*b) > 8))
            .count();
        assert!(
            away > moving.len() / 10,
            "{path}: {away} of {} pixels show velocity",
            moving.len()
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}
