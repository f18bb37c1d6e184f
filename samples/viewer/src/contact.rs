//! The contact sheet of a headless run: up to [`MAX_CELLS`] frames picked
//! evenly over the run (the first and the last included), each shrunk by
//! an integer box filter to at most [`CELL_WIDTH`] pixels wide, laid out
//! left to right, top to bottom in `ceil(sqrt(n))` columns with a
//! [`GAP`]-pixel border of the clear colour.

use std::path::Path;

use crate::CLEAR;

pub const MAX_CELLS: usize = 16;
pub const CELL_WIDTH: u32 = 200;
pub const GAP: u32 = 4;

/// The frames of a run of `frames` that go on the sheet, in order.
pub fn picks(frames: u64) -> Vec<u64> {
    let n = frames.min(MAX_CELLS as u64);
    if n <= 1 {
        return (0..n).collect();
    }
    (0..n)
        .map(|k| (k * (frames - 1) + (n - 1) / 2) / (n - 1))
        .collect()
}

/// A shrunk frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Thumb {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// The box-filter factor for a frame `width` wide.
pub fn factor(width: u32) -> u32 {
    width.div_ceil(CELL_WIDTH).max(1)
}

/// Shrinks an RGBA8 image by the integer factor that brings it to at most
/// [`CELL_WIDTH`] wide, averaging each `f x f` block (edge blocks average
/// what they cover).
pub fn thumb(width: u32, height: u32, rgba: &[u8]) -> Thumb {
    let f = factor(width);
    let (tw, th) = (width.div_ceil(f), height.div_ceil(f));
    let mut out = vec![0u8; (tw * th * 4) as usize];
    for ty in 0..th {
        for tx in 0..tw {
            let mut sum = [0u32; 4];
            let mut count = 0u32;
            for y in ty * f..((ty + 1) * f).min(height) {
                for x in tx * f..((tx + 1) * f).min(width) {
                    let i = ((y * width + x) * 4) as usize;
                    for c in 0..4 {
                        sum[c] += u32::from(rgba[i + c]);
                    }
                    count += 1;
                }
            }
            let o = ((ty * tw + tx) * 4) as usize;
            for c in 0..4 {
                out[o + c] = ((sum[c] + count / 2) / count.max(1)) as u8;
            }
        }
    }
    Thumb {
        width: tw,
        height: th,
        rgba: out,
    }
}

/// Lays the thumbnails out (all the same size) and writes the sheet.
pub fn write_sheet(path: &Path, thumbs: &[Thumb]) -> Result<(), String> {
    let Some(first) = thumbs.first() else {
        return Err(format!("{}: no frames for a contact sheet", path.display()));
    };
    let n = thumbs.len() as u32;
    let cols = (1..=n).find(|c| c * c >= n).unwrap_or(n);
    let rows = n.div_ceil(cols);
    let (cw, ch) = (first.width, first.height);
    let width = cols * cw + (cols + 1) * GAP;
    let height = rows * ch + (rows + 1) * GAP;
    let bg = CLEAR.map(|c| (c * 255.0).round() as u8);
    let mut px: Vec<u8> = bg
        .iter()
        .copied()
        .cycle()
        .take((width * height * 4) as usize)
        .collect();
    for (k, t) in thumbs.iter().enumerate() {
        let (col, row) = (k as u32 % cols, k as u32 / cols);
        let (x0, y0) = (GAP + col * (cw + GAP), GAP + row * (ch + GAP));
        for y in 0..t.height.min(ch) {
            let src = (y * t.width * 4) as usize;
            let dst = (((y0 + y) * width + x0) * 4) as usize;
            let len = (t.width.min(cw) * 4) as usize;
            px[dst..dst + len].copy_from_slice(&t.rgba[src..src + len]);
        }
    }
    vkskin::render::write_png(path, width, height, &px).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_spread_over_the_run_ends_included() {
        assert_eq!(picks(0), Vec::<u64>::new());
        assert_eq!(picks(1), vec![0]);
        assert_eq!(picks(4), vec![0, 1, 2, 3]);
        let p = picks(300);
        assert_eq!(p.len(), MAX_CELLS);
        assert_eq!((p[0], p[15]), (0, 299));
        assert!(p.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn thumbs_average_blocks() {
        // 400 wide -> factor 2: each 2x2 block averages.
        let (w, h) = (400, 2);
        let mut rgba = vec![0u8; (w * h * 4) as usize];
        for (i, p) in rgba.chunks_mut(4).enumerate() {
            p.copy_from_slice(&[if i % 2 == 0 { 200 } else { 100 }, 0, 0, 255]);
        }
        let t = thumb(w, h, &rgba);
        assert_eq!((t.width, t.height), (200, 1));
        assert_eq!(&t.rgba[..4], &[150, 0, 0, 255]);
    }
}
