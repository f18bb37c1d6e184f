//! Texture readers: the images a model's materials name, decoded into
//! CPU-side [`Image`]s with their mip chains, ready for an upload. No
//! Vulkan here.
//!
//! - [`read_texture`] sniffs the format from the bytes (DDS `"DDS "`, the
//!   PNG signature, the JPEG SOI marker; a MIME type or extension is only a
//!   hint for the error message) and decodes: PNG and JPEG (any colour type
//!   and bit depth) to [`PixelFormat::Rgba8`]; DDS with BC1 (DXT1), BC2
//!   (DXT3) or BC3 (DXT5) kept compressed with every mip level of the file,
//!   and the uncompressed DDS layouts (any 8-, 16-, 24- or 32-bit RGB(A)
//!   mask layout: BGRA, RGBA, BGRX, BGR, RGB565, A1RGB555, A4RGB444, ...)
//!   to `Rgba8` with every mip level of the file.
//! - [`Image::complete_mip_chain`] builds the missing levels down to 1x1
//!   (box filter in linear light).
//! - [`Image::decode_to_rgba8`] turns BC levels into RGBA8 for devices
//!   without BC sampling.
//! - [`load_material_texture`] reads a
//!   [`TextureSource`](crate::assets::TextureSource) (a file beside the
//!   model, found case-insensitively and with either slash, or embedded
//!   bytes) and completes its mip chain.
//!
//! Every bad input is a [`LoadError`] naming the file and the fault; every
//! size is checked against the data and the [`TextureLimits`] before
//! anything is allocated.
//!
//! Colour is taken as sRGB-encoded with straight (not premultiplied)
//! alpha, whatever the file's gamma or ICC chunks say (they are ignored);
//! DDS files premultiplied by format (DXT2, DXT4) are refused.

mod bc;
mod dds;
mod load;
mod mips;
mod raster;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use bc::{decode_bc1_block, decode_bc2_block, decode_bc3_block};
pub use load::{load_material_texture, load_material_texture_with_limits, resolve_texture_path};
pub use mips::{linear_to_srgb, srgb_to_linear, ImageError};

use super::{FaultKind, LoadError, Place};

/// How the bytes of an [`Image`]'s levels are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// Four bytes a pixel, R G B A, rows top to bottom without padding:
    /// sRGB-encoded colour, straight (not premultiplied) alpha.
    Rgba8,
    /// BC1 (DXT1): 8-byte blocks of 4x4 pixels, colour with 1-bit alpha.
    Bc1,
    /// BC2 (DXT3): 16-byte blocks, explicit 4-bit alpha then a BC1 colour
    /// block (always in its four-colour mode).
    Bc2,
    /// BC3 (DXT5): 16-byte blocks, interpolated 8-bit alpha then a BC1
    /// colour block (always in its four-colour mode).
    Bc3,
}

impl PixelFormat {
    /// Whether the format is block-compressed (BC1/BC2/BC3).
    pub fn is_compressed(self) -> bool {
        !matches!(self, PixelFormat::Rgba8)
    }

    /// Bytes of one 4x4 block (BC formats) or of one pixel (`Rgba8`).
    pub fn unit_bytes(self) -> u64 {
        match self {
            PixelFormat::Rgba8 => 4,
            PixelFormat::Bc1 => 8,
            PixelFormat::Bc2 | PixelFormat::Bc3 => 16,
        }
    }

    /// Bytes of a `width` x `height` level in this format (BC levels are
    /// whole blocks: the sides rounded up to multiples of 4).
    pub fn level_bytes(self, width: u32, height: u32) -> u64 {
        let (w, h) = (u64::from(width), u64::from(height));
        match self {
            PixelFormat::Rgba8 => w * h * 4,
            _ => w.div_ceil(4) * h.div_ceil(4) * self.unit_bytes(),
        }
    }
}

/// One level of an [`Image`]'s mip chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MipLevel {
    /// Width in pixels (at least 1).
    pub width: u32,
    /// Height in pixels (at least 1).
    pub height: u32,
    /// The pixels in the image's [`PixelFormat`]: exactly
    /// [`PixelFormat::level_bytes`] bytes.
    pub data: Vec<u8>,
}

/// A decoded texture: a format and its mip levels, level 0 the largest,
/// each level half the previous one's size (rounded down, at least 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// How the levels' bytes are laid out.
    pub format: PixelFormat,
    /// The mip levels, at least one.
    pub levels: Vec<MipLevel>,
}

impl Image {
    /// Width of level 0.
    pub fn width(&self) -> u32 {
        self.levels.first().map_or(0, |l| l.width)
    }

    /// Height of level 0.
    pub fn height(&self) -> u32 {
        self.levels.first().map_or(0, |l| l.height)
    }

    /// How many mip levels the image holds.
    pub fn mip_count(&self) -> usize {
        self.levels.len()
    }

    /// Whether the levels go all the way down to 1x1.
    pub fn has_full_mip_chain(&self) -> bool {
        self.levels.len() == full_mip_count(self.width(), self.height()) as usize
    }
}

/// The number of levels of a full mip chain of a `width` x `height` image,
/// down to 1x1: `floor(log2(max(width, height))) + 1` (0 when a side is 0).
pub fn full_mip_count(width: u32, height: u32) -> u32 {
    let side = width.max(height);
    if width == 0 || height == 0 {
        0
    } else {
        32 - side.leading_zeros()
    }
}

/// What the readers accept: checked before anything is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureLimits {
    /// Largest width or height in pixels.
    pub max_side: u32,
    /// Largest total of the bytes an image holds or decodes to (all levels
    /// together, after decoding where the reader decodes, e.g. PNG to RGBA8
    /// or a BC image decoded for a device without BC).
    pub max_bytes: u64,
}

impl Default for TextureLimits {
    /// 16384 pixels a side, 1 GiB in all (a 16384 x 8192 RGBA8 image with
    /// its mip chain fits; a 16384 x 16384 one does not).
    fn default() -> Self {
        Self {
            max_side: 16384,
            max_bytes: 1 << 30,
        }
    }
}

/// The container formats [`read_texture`] recognises by their first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureFileFormat {
    /// DirectDraw Surface (`"DDS "`).
    Dds,
    /// PNG (`89 50 4E 47 0D 0A 1A 0A`).
    Png,
    /// JPEG/JFIF (`FF D8 FF`).
    Jpeg,
}

impl TextureFileFormat {
    /// The format the first bytes of a file announce, if any.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"DDS ") {
            Some(Self::Dds)
        } else if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else {
            None
        }
    }

    /// The format's usual name: `DDS`, `PNG`, `JPEG`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Dds => "DDS",
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
        }
    }

    /// The format a MIME type (`image/png`) or file extension (`dds`,
    /// `.JPG`) names, if one of these.
    pub fn from_hint(hint: &str) -> Option<Self> {
        let h = hint.trim().trim_start_matches('.').to_ascii_lowercase();
        match h.as_str() {
            "dds" | "image/vnd-ms.dds" | "image/vnd.ms-dds" | "image/dds" | "image/x-dds" => {
                Some(Self::Dds)
            }
            "png" | "image/png" => Some(Self::Png),
            "jpg" | "jpeg" | "jpe" | "jfif" | "image/jpeg" | "image/jpg" => Some(Self::Jpeg),
            _ => None,
        }
    }
}

/// Decodes a texture file's bytes, with the default [`TextureLimits`].
///
/// The format is read from the first bytes (DDS, PNG, JPEG); `hint` (a MIME
/// type such as `image/png`, or an extension such as `dds`; empty for none)
/// only words the error when the bytes are none of these. `name` is the
/// file named in errors. The result holds what the file holds: PNG and JPEG
/// one `Rgba8` level, DDS every level of the file (BC kept compressed);
/// [`Image::complete_mip_chain`] adds the rest.
pub fn read_texture(bytes: &[u8], name: &Path, hint: &str) -> Result<Image, LoadError> {
    read_texture_with_limits(bytes, name, hint, &TextureLimits::default())
}

/// [`read_texture`] with explicit [`TextureLimits`].
pub fn read_texture_with_limits(
    bytes: &[u8],
    name: &Path,
    hint: &str,
    limits: &TextureLimits,
) -> Result<Image, LoadError> {
    match TextureFileFormat::sniff(bytes) {
        Some(TextureFileFormat::Dds) => dds::read(bytes, name, limits),
        Some(format @ (TextureFileFormat::Png | TextureFileFormat::Jpeg)) => {
            raster::read(bytes, name, format, limits)
        }
        None => Err(unrecognised(bytes, name, hint)),
    }
}

/// The error for bytes that are no texture format this module reads.
fn unrecognised(bytes: &[u8], name: &Path, hint: &str) -> LoadError {
    let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02X}")).collect();
    let seen = if bytes.is_empty() {
        "the data is empty".to_string()
    } else {
        format!("it starts with {}", head.join(" "))
    };
    let message = match (hint.is_empty(), TextureFileFormat::from_hint(hint)) {
        (true, _) => format!("unknown texture format ({seen}; expected DDS, PNG or JPEG)"),
        (false, Some(f)) => {
            format!(
                "named as {hint:?} but not a {} file ({seen}; expected DDS, PNG or JPEG)",
                f.label()
            )
        }
        (false, None) => {
            format!("unsupported texture format {hint:?} ({seen}; expected DDS, PNG or JPEG)")
        }
    };
    let kind = if bytes.is_empty() {
        FaultKind::Truncated
    } else {
        FaultKind::Unsupported
    };
    LoadError::new(name, Place::Byte(0), kind, message)
}

/// Checks a `width` x `height` size against the limits (both sides at
/// least 1, at most `max_side`).
fn check_size(
    name: &Path,
    place: Place,
    width: u32,
    height: u32,
    limits: &TextureLimits,
) -> Result<(), LoadError> {
    if width == 0 || height == 0 {
        return Err(LoadError::new(
            name,
            place,
            FaultKind::Invalid,
            format!("zero image size {width}x{height}"),
        ));
    }
    if width > limits.max_side || height > limits.max_side {
        return Err(LoadError::new(
            name,
            place,
            FaultKind::Unsupported,
            format!(
                "image size {width}x{height} exceeds the limit of {} pixels a side",
                limits.max_side
            ),
        ));
    }
    Ok(())
}

/// Checks `bytes` (the total an image holds or decodes to) against the
/// limits' byte budget.
fn check_budget(
    name: &Path,
    what: &str,
    bytes: u64,
    limits: &TextureLimits,
) -> Result<(), LoadError> {
    if bytes > limits.max_bytes {
        return Err(LoadError::new(
            name,
            Place::Unknown,
            FaultKind::Unsupported,
            format!(
                "{what} needs {bytes} bytes, over the limit of {} bytes",
                limits.max_bytes
            ),
        ));
    }
    Ok(())
}

/// Width and height of level `level` of a `width` x `height` image.
pub fn level_size(width: u32, height: u32, level: u32) -> (u32, u32) {
    let w = width.checked_shr(level).unwrap_or(0).max(1);
    let h = height.checked_shr(level).unwrap_or(0).max(1);
    (w, h)
}
