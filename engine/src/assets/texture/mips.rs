//! Mip chains and BC-to-RGBA8 decoding on [`Image`].
//!
//! The box filter works in linear light: each 8-bit sRGB colour channel is
//! decoded to linear (the sRGB transfer function, IEC 61966-2-1), the
//! pixels an output pixel covers are averaged, and the mean is encoded back
//! to sRGB and rounded to nearest. Colour is averaged weighted by alpha
//! (straight alpha: a transparent pixel's colour does not bleed into its
//! neighbours; where all covered pixels are fully transparent the plain
//! mean is taken); alpha, which is linear, is the plain mean, rounded.
//! Each output pixel covers a 2x2 block of its source; on an odd side the
//! last output pixel also takes the extra row or column (2x3, 3x2 or 3x3),
//! and a side of 1 stays 1.

use std::sync::OnceLock;

use thiserror::Error;

use super::{bc, full_mip_count, level_size, Image, MipLevel, PixelFormat};

/// An [`Image`] whose levels do not hold what their sizes and format say
/// (possible only for images built by hand: the readers' images are
/// consistent).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ImageError {
    /// A level's data length is not the size its format and sides need, or
    /// its sides are not half the previous level's.
    #[error("mip level {level} ({width}x{height}) holds {found} bytes, {expected} expected")]
    LevelSize {
        /// The level.
        level: usize,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// The bytes its format and size need.
        expected: u64,
        /// The bytes it holds.
        found: u64,
    },
    /// The image has no level, or more than a full chain, or a level's
    /// sides are not those of its place in the chain.
    #[error("mip chain malformed: {0}")]
    Chain(String),
}

impl Image {
    /// Checks that every level's data and sides are what the format and
    /// level 0's size need.
    pub fn validate(&self) -> Result<(), ImageError> {
        let (w0, h0) = (self.width(), self.height());
        if self.levels.is_empty() || w0 == 0 || h0 == 0 {
            return Err(ImageError::Chain("no level, or an empty level 0".into()));
        }
        if self.levels.len() > full_mip_count(w0, h0) as usize {
            return Err(ImageError::Chain(format!(
                "{} levels for a {w0}x{h0} image",
                self.levels.len()
            )));
        }
        for (i, l) in self.levels.iter().enumerate() {
            if (l.width, l.height) != level_size(w0, h0, i as u32) {
                return Err(ImageError::Chain(format!(
                    "level {i} is {}x{}, {:?} expected",
                    l.width,
                    l.height,
                    level_size(w0, h0, i as u32)
                )));
            }
            let expected = self.format.level_bytes(l.width, l.height);
            if l.data.len() as u64 != expected {
                return Err(ImageError::LevelSize {
                    level: i,
                    width: l.width,
                    height: l.height,
                    expected,
                    found: l.data.len() as u64,
                });
            }
        }
        Ok(())
    }

    /// The image with every level decoded to [`PixelFormat::Rgba8`] (an
    /// RGBA8 image is returned as it is), for devices that cannot sample
    /// BC. Allocates 4 bytes a pixel of every level.
    pub fn decode_to_rgba8(&self) -> Result<Image, ImageError> {
        self.validate()?;
        if self.format == PixelFormat::Rgba8 {
            return Ok(self.clone());
        }
        let mut levels = Vec::with_capacity(self.levels.len());
        for (i, l) in self.levels.iter().enumerate() {
            let data = bc::decode_level(self.format, l).ok_or_else(|| ImageError::LevelSize {
                level: i,
                width: l.width,
                height: l.height,
                expected: self.format.level_bytes(l.width, l.height),
                found: l.data.len() as u64,
            })?;
            levels.push(MipLevel {
                width: l.width,
                height: l.height,
                data,
            });
        }
        Ok(Image {
            format: PixelFormat::Rgba8,
            levels,
        })
    }

    /// The image with its mip chain complete down to 1x1.
    ///
    /// - RGBA8: the levels it has are kept; each missing level is built from
    ///   the one above by a box filter in linear light: each 8-bit sRGB
    ///   colour channel is decoded to linear (IEC 61966-2-1), the pixels an
    ///   output pixel covers are averaged, and the mean is encoded back to
    ///   sRGB, rounded to nearest. Colour is averaged weighted by alpha
    ///   (straight alpha: a transparent pixel's colour does not bleed; where
    ///   every covered pixel is transparent the plain mean is taken); alpha
    ///   is the plain mean. An output pixel covers 2x2 source pixels; on an
    ///   odd side the last one also takes the extra row or column, and a
    ///   side of 1 stays 1.
    /// - BC with a full chain: returned as it is.
    /// - BC with a shorter chain (e.g. a DXT1 file without mips): decoded
    ///   to RGBA8 and completed as above, so that minified sampling has its
    ///   levels, at the price of the compression. Callers that prefer to
    ///   keep the file's BC levels (and clamp the sampler's LOD to them)
    ///   simply do not call this.
    pub fn complete_mip_chain(self) -> Result<Image, ImageError> {
        self.validate()?;
        if self.has_full_mip_chain() {
            return Ok(self);
        }
        let mut image = if self.format.is_compressed() {
            self.decode_to_rgba8()?
        } else {
            self
        };
        let full = full_mip_count(image.width(), image.height()) as usize;
        while image.levels.len() < full {
            let Some(last) = image.levels.last() else {
                break;
            };
            let next = downsample(last);
            image.levels.push(next);
        }
        Ok(image)
    }
}

/// sRGB 8-bit -> linear, for every byte value.
fn srgb_to_linear_table() -> &'static [f32; 256] {
    static TABLE: OnceLock<[f32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [0f32; 256];
        for (i, v) in t.iter_mut().enumerate() {
            *v = srgb_to_linear(i as f32 / 255.0);
        }
        t
    })
}

/// The sRGB decoding function on `[0, 1]`.
pub fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// The sRGB encoding function on `[0, 1]`.
pub fn linear_to_srgb(l: f32) -> f32 {
    if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    }
}

/// The source range (start, end) output index `i` of `n` covers in a side
/// of `len` (`n = max(1, len / 2)`).
fn span(i: usize, n: usize, len: usize) -> (usize, usize) {
    if len == 1 {
        return (0, 1);
    }
    let start = 2 * i;
    let end = if i + 1 == n { len } else { start + 2 };
    (start, end)
}

/// The next level of an RGBA8 level (module docs for the filter).
fn downsample(src: &MipLevel) -> MipLevel {
    let (sw, sh) = (src.width as usize, src.height as usize);
    let (dw, dh) = ((sw / 2).max(1), (sh / 2).max(1));
    let lin = srgb_to_linear_table();
    let mut data = vec![0u8; dw * dh * 4];
    for dy in 0..dh {
        let (y0, y1) = span(dy, dh, sh);
        for dx in 0..dw {
            let (x0, x1) = span(dx, dw, sw);
            let mut weighted = [0f32; 3];
            let mut plain = [0f32; 3];
            let mut alpha = 0f32;
            let mut n = 0f32;
            for y in y0..y1 {
                for x in x0..x1 {
                    let at = (y * sw + x) * 4;
                    let Some(px) = src.data.get(at..at + 4) else {
                        continue;
                    };
                    let a = f32::from(px[3]) / 255.0;
                    for c in 0..3 {
                        let l = lin[px[c] as usize];
                        weighted[c] += l * a;
                        plain[c] += l;
                    }
                    alpha += a;
                    n += 1.0;
                }
            }
            let at = (dy * dw + dx) * 4;
            for c in 0..3 {
                let mean = if alpha > 0.0 {
                    weighted[c] / alpha
                } else {
                    plain[c] / n.max(1.0)
                };
                data[at + c] = (linear_to_srgb(mean.clamp(0.0, 1.0)) * 255.0).round() as u8;
            }
            data[at + 3] = (alpha / n.max(1.0) * 255.0).round() as u8;
        }
    }
    MipLevel {
        width: dw as u32,
        height: dh as u32,
        data,
    }
}
