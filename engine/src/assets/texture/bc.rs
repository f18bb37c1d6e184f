//! The BC1, BC2 and BC3 block decoders (S3TC / DXT1, DXT3, DXT5), and
//! decoding whole levels to RGBA8 for devices that cannot sample BC.
//!
//! Rounding, which the formats leave to the decoder within a tolerance:
//!
//! - RGB565 endpoints widen to 8 bits as `round(v * 255 / 31)` (red, blue)
//!   and `round(v * 255 / 63)` (green): 0x1F -> 255, 0x10 -> 132.
//! - The colour interpolants are computed from the 5- and 6-bit endpoint
//!   values and rounded once, to nearest: `c2 = round(255 * (2*v0 + v1) /
//!   (3 * max))`, `c3 = round(255 * (v0 + 2*v1) / (3 * max))`, and in BC1's
//!   three-colour mode `c2 = round(255 * (v0 + v1) / (2 * max))` (`max` 31
//!   or 63). This equals the widely used bcdec decoder bit for bit.
//! - BC2's 4-bit alpha widens as `a * 17`.
//! - BC3's alpha interpolants round to nearest: `(6*a0 + a1 + 3) / 7` and
//!   so on in the eight-value mode, `(4*a0 + a1 + 2) / 5` and so on in the
//!   six-value mode (ties cannot occur). Some decoders round these down
//!   instead; they differ by at most 1.
//!
//! Pixels are returned row by row, left to right: pixel `(x, y)` of a block
//! is entry `4 * y + x`; its index bits are bits `2 * (4*y + x)` (colour)
//! and `3 * (4*y + x)` (BC3 alpha) of the little-endian index words.

use super::{MipLevel, PixelFormat};

/// `round(num / den)` for non-negative integers, halves up.
const fn round_div(num: u32, den: u32) -> u32 {
    (2 * num + den) / (2 * den)
}

/// The four RGBA colours of a BC colour block's palette. `three_colour`
/// allows BC1's three-colour-plus-transparent mode (taken when `c0 <= c1`);
/// BC2 and BC3 always use the four-colour mode.
fn colour_palette(c0: u16, c1: u16, allow_three_colour: bool) -> [[u8; 4]; 4] {
    let split = |c: u16| -> [u32; 3] {
        [
            u32::from(c >> 11) & 0x1F,
            u32::from(c >> 5) & 0x3F,
            u32::from(c) & 0x1F,
        ]
    };
    const MAX: [u32; 3] = [31, 63, 31];
    let (e0, e1) = (split(c0), split(c1));
    let mix = |w0: u32, w1: u32| -> [u8; 4] {
        let mut out = [0, 0, 0, 255];
        for ch in 0..3 {
            // At most 255 by construction: the weights sum to the divisor.
            out[ch] = round_div(255 * (w0 * e0[ch] + w1 * e1[ch]), (w0 + w1) * MAX[ch]) as u8;
        }
        out
    };
    if c0 > c1 || !allow_three_colour {
        [mix(1, 0), mix(0, 1), mix(2, 1), mix(1, 2)]
    } else {
        [mix(1, 0), mix(0, 1), mix(1, 1), [0, 0, 0, 0]]
    }
}

/// Decodes a BC colour block (8 bytes: two RGB565 endpoints, 16 two-bit
/// indices) into `out`.
fn colour_block(block: &[u8; 8], allow_three_colour: bool, out: &mut [[u8; 4]; 16]) {
    let c0 = u16::from_le_bytes([block[0], block[1]]);
    let c1 = u16::from_le_bytes([block[2], block[3]]);
    let palette = colour_palette(c0, c1, allow_three_colour);
    let indices = u32::from_le_bytes([block[4], block[5], block[6], block[7]]);
    for (i, px) in out.iter_mut().enumerate() {
        *px = palette[((indices >> (2 * i)) & 3) as usize];
    }
}

/// Decodes one BC1 (DXT1) block to 16 RGBA8 pixels, row by row. When the
/// first endpoint is not greater than the second (`c0 <= c1` as `u16`),
/// the block is in its three-colour mode: index 2 is the midpoint, index 3
/// transparent black `(0, 0, 0, 0)`.
pub fn decode_bc1_block(block: &[u8; 8]) -> [[u8; 4]; 16] {
    let mut out = [[0; 4]; 16];
    colour_block(block, true, &mut out);
    out
}

/// Decodes one BC2 (DXT3) block to 16 RGBA8 pixels, row by row: 8 bytes
/// of explicit 4-bit alpha (pixel `i` in bits `4*i..4*i+4`, widened by
/// `* 17`), then a colour block in the four-colour mode.
pub fn decode_bc2_block(block: &[u8; 16]) -> [[u8; 4]; 16] {
    let mut out = [[0; 4]; 16];
    let (alpha, colour) = block.split_at(8);
    colour_block(as_8(colour), false, &mut out);
    let bits = u64::from_le_bytes(*as_8(alpha));
    for (i, px) in out.iter_mut().enumerate() {
        px[3] = ((bits >> (4 * i)) & 0xF) as u8 * 17;
    }
    out
}

/// Decodes one BC3 (DXT5) block to 16 RGBA8 pixels, row by row: two 8-bit
/// alpha endpoints and 16 three-bit indices (an eight-value palette when
/// `a0 > a1`, else six values plus 0 and 255), then a colour block in the
/// four-colour mode.
pub fn decode_bc3_block(block: &[u8; 16]) -> [[u8; 4]; 16] {
    let mut out = [[0; 4]; 16];
    let (alpha, colour) = block.split_at(8);
    colour_block(as_8(colour), false, &mut out);
    let (a0, a1) = (u32::from(alpha[0]), u32::from(alpha[1]));
    let mut palette = [0u8; 8];
    palette[0] = alpha[0];
    palette[1] = alpha[1];
    if a0 > a1 {
        for (k, p) in palette.iter_mut().enumerate().skip(2) {
            let k = k as u32 - 1; // 1..=6: weight of a1 in sevenths
            *p = round_div((7 - k) * a0 + k * a1, 7) as u8;
        }
    } else {
        for (k, p) in palette.iter_mut().enumerate().take(6).skip(2) {
            let k = k as u32 - 1; // 1..=4: weight of a1 in fifths
            *p = round_div((5 - k) * a0 + k * a1, 5) as u8;
        }
        palette[6] = 0;
        palette[7] = 255;
    }
    let mut word = [0u8; 8];
    word[..6].copy_from_slice(&alpha[2..8]);
    let bits = u64::from_le_bytes(word);
    for (i, px) in out.iter_mut().enumerate() {
        px[3] = palette[((bits >> (3 * i)) & 7) as usize];
    }
    out
}

/// The first 8 bytes of `s` (callers pass exactly 8).
fn as_8(s: &[u8]) -> &[u8; 8] {
    match s.first_chunk::<8>() {
        Some(a) => a,
        None => &[0; 8],
    }
}

/// Decodes a BC level of `level.width` x `level.height` pixels to RGBA8
/// (the blocks' pixels beyond the sides dropped). `None` when `format` is
/// not a BC format or the data is not exactly the level's block bytes.
pub(super) fn decode_level(format: PixelFormat, level: &MipLevel) -> Option<Vec<u8>> {
    let (w, h) = (level.width as usize, level.height as usize);
    let expected = format.level_bytes(level.width, level.height);
    if !format.is_compressed() || level.data.len() as u64 != expected {
        return None;
    }
    let unit = format.unit_bytes() as usize;
    let blocks_x = w.div_ceil(4);
    let mut out = vec![0u8; w * h * 4];
    for (b, block) in level.data.chunks_exact(unit).enumerate() {
        let pixels = match format {
            PixelFormat::Bc1 => decode_bc1_block(block.first_chunk::<8>()?),
            PixelFormat::Bc2 => decode_bc2_block(block.first_chunk::<16>()?),
            PixelFormat::Bc3 => decode_bc3_block(block.first_chunk::<16>()?),
            PixelFormat::Rgba8 => return None,
        };
        let (bx, by) = (b % blocks_x * 4, b / blocks_x * 4);
        for (i, px) in pixels.iter().enumerate() {
            let (x, y) = (bx + i % 4, by + i / 4);
            if x < w && y < h {
                let at = (y * w + x) * 4;
                out[at..at + 4].copy_from_slice(px);
            }
        }
    }
    Some(out)
}
