//! The built strip sample, headless and validation-clean: the strip is
//! drawn (lit orange pixels), and it bends from frame to frame as the seed's
//! accumulated sin(count)/5 turns its joints.

use std::path::Path;
use std::process::Command;

fn decode(path: &Path) -> Vec<u8> {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

/// Pixels where red clearly dominates blue: the lit strip, not the clear
/// colour nor the blue joint markers.
fn strip_pixels(rgba: &[u8]) -> Vec<usize> {
    rgba.chunks_exact(4)
        .enumerate()
        .filter(|(_, p)| p[0] > 120 && p[0] as i32 - p[2] as i32 > 60)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn headless_strip_bends_frame_to_frame() {
    let out = std::env::temp_dir().join(format!("vkskin-strip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_strip"))
        .args(["--headless", "--frames", "4", "--validation"])
        .args(["--width", "200", "--height", "200", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "strip exited with {status}");
    let frames: Vec<Vec<usize>> = (0..4)
        .map(|i| strip_pixels(&decode(&out.join(format!("frame_{i:04}.png")))))
        .collect();
    for (i, f) in frames.iter().enumerate() {
        assert!(
            f.len() > 200 * 200 / 100,
            "frame {i}: {} strip pixels",
            f.len()
        );
    }
    // Frame 0 is the bind pose (angle 0); the later frames bend it.
    assert_ne!(frames[0], frames[2], "the strip did not move");
    let _ = std::fs::remove_dir_all(&out);
}
