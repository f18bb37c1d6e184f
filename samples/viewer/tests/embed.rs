//! The embedding example against the viewer: `samples/embed`'s raw-ash
//! host (its own instance, device, queue, command buffers, fences and
//! offscreen image, cleared and drawn by the host, with vkskin's character
//! recorded into its frame) renders the same moment as the viewer's
//! headless frame, and the two images agree: at least 99.9% of pixels
//! within 1/255. Both runs are validation-clean (the host's own messenger;
//! the viewer exits non-zero on any message).

use std::path::Path;
use std::process::Command;

fn decode(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (800, 600));
    buf.truncate(info.buffer_size());
    buf
}

#[test]
fn the_embedding_host_draws_the_viewers_frame() {
    let out = std::env::temp_dir().join(format!("vkskin-viewer-embed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    // Frame 2 of the built-in character's first clip: t = 2/30 s.
    let status = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args([
            "--headless",
            "--frames",
            "3",
            "--fps",
            "30",
            "--size",
            "800x600",
        ])
        .arg("--out")
        .arg(&out)
        .env("VKSKIN_VALIDATION", "1")
        .status()
        .unwrap();
    assert!(status.success(), "viewer exited with {status}");
    let viewer = decode(&out.join("frame_0002.png"));
    let host = embed::render(&embed::HostOptions {
        width: 800,
        height: 600,
        frames: 3,
        path: None,
        validation: true,
    })
    .unwrap();
    assert!(
        host.problems.is_empty(),
        "the host's validation messenger: {:?}",
        host.problems
    );
    assert_eq!(host.rgba.len(), viewer.len());
    let same = host
        .rgba
        .chunks_exact(4)
        .zip(viewer.chunks_exact(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).all(|(x, y)| x.abs_diff(*y) <= 1))
        .count();
    let drawn = viewer
        .chunks_exact(4)
        .filter(|p| {
            p[..3]
                .iter()
                .zip([15u8, 18, 23])
                .any(|(a, b)| a.abs_diff(b) > 4)
        })
        .count();
    let n = viewer.len() / 4;
    assert!(
        drawn > n / 50,
        "the viewer's frame is nearly empty: {drawn} pixels"
    );
    assert!(
        same as f64 >= 0.999 * n as f64,
        "host vs viewer: {same} of {n} pixels within 1/255"
    );
    let _ = std::fs::remove_dir_all(&out);
}
