//! The viewer draws the shared assets textured (headless, validation forced
//! on): CesiumMan.glb (embedded JPEG), Fox.glb (embedded PNG) and tiny.x
//! (`Tiny_skin.dds` beside it) on one path of each stage; a missing texture
//! is a warning naming the file, and the model still draws.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
    let d = std::env::temp_dir().join(format!("vkskin-viewer-tex-{tag}-{}", std::process::id()));
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

/// `(drawn, coloured)`: pixels other than the clear colour, and of those
/// the ones whose channels spread by more than 40 (a grey figure has none).
fn coverage(px: &[u8]) -> (usize, usize) {
    let drawn: Vec<&[u8]> = px
        .chunks(4)
        .filter(|p| {
            p[..3]
                .iter()
                .zip([15u8, 18, 23])
                .any(|(a, b)| a.abs_diff(b) > 4)
        })
        .collect();
    let coloured = drawn
        .iter()
        .filter(|p| p[..3].iter().max().unwrap() - p[..3].iter().min().unwrap() > 40)
        .count();
    (drawn.len(), coloured)
}

/// One headless frame of `file` on `path`: its pixels and stdout.
fn frame(file: &Path, path: &str, tag: &str) -> (Vec<u8>, String) {
    let out = temp(tag);
    let o = viewer(&[
        file.to_str().unwrap(),
        "--headless",
        "--frames",
        "1",
        "--size",
        "200x150",
        "--path",
        path,
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{tag}: {stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let px = decode(&out.join("frame_0000.png"));
    let _ = std::fs::remove_dir_all(&out);
    (px, stdout)
}

#[test]
fn cesium_man_fox_and_tiny_draw_textured_on_each_stage() {
    let Some(dir) = vkskin_tests::assets_dir() else {
        eprintln!("skipped: the shared assets are absent");
        return;
    };
    for file in ["gltf/CesiumMan.glb", "gltf/Fox.glb", "x/tiny.x"] {
        let path = dir.join(file);
        let mut frames = Vec::new();
        for p in ["4x3-ssbo", "4x3-compute", "4x3-cpu"] {
            let tag = format!("{}-{p}", file.replace('/', "-"));
            let (px, stdout) = frame(&path, p, &tag);
            assert!(
                stdout.contains("1 texture(s) uploaded") && !stdout.contains("warning"),
                "{tag}: {stdout}"
            );
            let (drawn, coloured) = coverage(&px);
            assert!(drawn > 500, "{tag}: {drawn} pixels drawn");
            assert!(
                coloured * 10 > drawn,
                "{tag}: {coloured} of {drawn} drawn pixels coloured"
            );
            frames.push(px);
        }
        for other in &frames[1..] {
            let same = frames[0]
                .chunks(4)
                .zip(other.chunks(4))
                .filter(|(a, b)| a.iter().zip(*b).all(|(x, y)| x.abs_diff(*y) <= 1))
                .count();
            let all = frames[0].len() / 4;
            assert!(
                same * 1000 >= all * 999,
                "{file}: {same} of {all} pixels agree"
            );
        }
    }
}

#[test]
fn a_missing_texture_is_a_warning_and_the_model_draws() {
    let Some(dir) = vkskin_tests::assets_dir() else {
        eprintln!("skipped: the shared assets are absent");
        return;
    };
    // tiny.x alone in a folder: Tiny_skin.dds is missing.
    let alone = temp("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let file = alone.join("tiny.x");
    std::fs::copy(dir.join("x/tiny.x"), &file).unwrap();
    let (px, stdout) = frame(&file, "4x3-ssbo", "missing");
    assert!(
        stdout.contains("warning: texture") && stdout.contains("Tiny_skin.dds"),
        "{stdout}"
    );
    assert!(stdout.contains("not found"), "{stdout}");
    let (drawn, _) = coverage(&px);
    assert!(drawn > 500, "{drawn} pixels drawn");
    let _ = std::fs::remove_dir_all(&alone);
}
