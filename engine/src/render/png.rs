use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::gpu::{GpuError, GpuResult};

/// Writes RGBA8 pixels (rows top to bottom) as a PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> GpuResult<()> {
    let io = |message: String| GpuError::Io {
        path: path.to_owned(),
        message,
    };
    if rgba.len() as u64 != u64::from(width) * u64::from(height) * 4 {
        return Err(io(format!(
            "{} bytes are not {width}x{height} RGBA pixels",
            rgba.len()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
    }
    let file = File::create(path).map_err(|e| io(e.to_string()))?;
    let mut enc = png::Encoder::new(BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| io(e.to_string()))?;
    w.write_image_data(rgba).map_err(|e| io(e.to_string()))?;
    w.finish().map_err(|e| io(e.to_string()))?;
    Ok(())
}
