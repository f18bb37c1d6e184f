//! Shared helpers for the integration tests in `tests/tests/`.

use std::path::PathBuf;

/// The shared test assets: `$VKSKIN_ASSETS`, else `../shared/assets` beside
/// the repository. `None` (with a printed notice) when absent, unless
/// `CI=true`, where a missing folder is a failure.
pub fn assets_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("VKSKIN_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets"),
    };
    if dir.join("INDEX.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!(
            "CI=true but the shared assets are missing at {} (set VKSKIN_ASSETS)",
            dir.display()
        );
    }
    eprintln!(
        "NOTICE: skipping: shared assets not found at {} (set VKSKIN_ASSETS)",
        dir.display()
    );
    None
}

/// `assets_dir()/rel`, or `None` when the assets are absent (see [`assets_dir`]).
pub fn asset(rel: &str) -> Option<PathBuf> {
    assets_dir().map(|d| d.join(rel))
}
/// `data` in standard base64 with padding (for `data:` URIs in glTF
/// files the tests write).
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Little-endian bytes of `v` (a glTF buffer's floats).
pub fn f32_le_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A PNG's size and its pixels as 8-bit RGBA (RGB gains an opaque alpha);
/// panics naming the file on anything else.
pub fn read_png(path: &std::path::Path) -> ((u32, u32), Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; r.output_buffer_size().unwrap_or(0)];
    let info = r
        .next_frame(&mut buf)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    buf.truncate(info.buffer_size());
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{}", path.display());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        other => panic!("{}: {other:?} pixels", path.display()),
    };
    ((info.width, info.height), rgba)
}

/// Length of the bounding-box diagonal of `points` (0 for none).
pub fn diagonal<'a>(points: impl IntoIterator<Item = &'a glam::Vec3>) -> f32 {
    let (lo, hi) = points.into_iter().fold(
        (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    (hi - lo).length().max(0.0)
}

#[cfg(feature = "gpu")]
pub mod alloc;
pub mod gpu;
#[cfg(feature = "gpu")]
pub mod gpu_anim;
pub mod morph;
pub mod xvfb;
