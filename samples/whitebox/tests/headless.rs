//! The built sample, headless: N frames become N PNGs showing the wire
//! trident and the joint markers, and the run is validation-clean (the
//! binary exits non-zero otherwise; validation is forced on).

use std::path::Path;
use std::process::Command;

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn headless_run_writes_frames_with_wires_and_markers() {
    let out = std::env::temp_dir().join(format!("vkskin-whitebox-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_whitebox"))
        .args(["--headless", "--frames", "3", "--fps", "2", "--validation"])
        .args(["--width", "256", "--height", "192", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "whitebox exited with {status}");
    let mut frames = Vec::new();
    for i in 0..3 {
        let (w, h, px) = decode(&out.join(format!("frame_{i:04}.png")));
        assert_eq!((w, h), (256, 192));
        let wire = px
            .chunks(4)
            .filter(|p| p[0] > 180 && p[1] > 180 && p[2] > 150)
            .count();
        let marker = px
            .chunks(4)
            .filter(|p| p[0] > 200 && (60..180).contains(&p[1]) && p[2] < 100)
            .count();
        assert!(wire > 100, "frame {i}: {wire} wire pixels");
        assert!(marker > 20, "frame {i}: {marker} marker pixels");
        frames.push(px);
    }
    assert!(!out.join("frame_0003.png").exists());
    // The animation moves: consecutive frames differ.
    assert_ne!(frames[0], frames[1]);
    assert_ne!(frames[1], frames[2]);
    let _ = std::fs::remove_dir_all(&out);
}
