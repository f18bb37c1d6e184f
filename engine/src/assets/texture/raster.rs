//! PNG and JPEG through the `image` crate, to one RGBA8 level.
//!
//! Every colour type is accepted (grey, grey + alpha, RGB, RGBA, palette,
//! 16-bit channels, CMYK JPEG), and converted as `image` converts to 8-bit
//! RGBA: 16-bit channels rounded to 8 bits, grey copied to R, G and B,
//! alpha 255 where the file has none. The size is read and checked against
//! the [`TextureLimits`] before the pixels are decoded, and the decoder's
//! own allocations are capped by the byte budget.

use std::io::Cursor;
use std::path::Path;

use image::{ImageFormat, ImageReader, Limits};

use super::{
    check_budget, check_size, full_mip_count, level_size, Image, MipLevel, PixelFormat,
    TextureFileFormat, TextureLimits,
};
use crate::assets::{FaultKind, LoadError, Place};

/// Reads a PNG or JPEG file to one RGBA8 level.
pub(super) fn read(
    bytes: &[u8],
    name: &Path,
    format: TextureFileFormat,
    limits: &TextureLimits,
) -> Result<Image, LoadError> {
    let label = format.label();
    let image_format = match format {
        TextureFileFormat::Png => ImageFormat::Png,
        TextureFileFormat::Jpeg => ImageFormat::Jpeg,
        TextureFileFormat::Dds => {
            return Err(LoadError::new(
                name,
                Place::Unknown,
                FaultKind::Invalid,
                "a DDS file given to the PNG/JPEG reader",
            ))
        }
    };
    let reader = || {
        let mut r = ImageReader::new(Cursor::new(bytes));
        r.set_format(image_format);
        // The sides are checked here (with the engine's words) once the
        // header is read; the decoder's allocations are capped.
        let mut l = Limits::default();
        l.max_alloc = Some(limits.max_bytes);
        r.limits(l);
        r
    };
    let fault = |e: image::ImageError| {
        let kind = match &e {
            image::ImageError::Limits(_) => FaultKind::Unsupported,
            image::ImageError::Unsupported(_) => FaultKind::Unsupported,
            image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                FaultKind::Truncated
            }
            _ => FaultKind::Syntax,
        };
        LoadError::new(name, Place::Unknown, kind, format!("bad {label} file: {e}"))
    };

    // The size first: the sides and the RGBA8 chain against the limits.
    let (width, height) = reader().into_dimensions().map_err(fault)?;
    check_size(name, Place::Unknown, width, height, limits)?;
    let chain: u64 = (0..full_mip_count(width, height))
        .map(|l| {
            let (w, h) = level_size(width, height, l);
            PixelFormat::Rgba8.level_bytes(w, h)
        })
        .sum();
    check_budget(
        name,
        &format!("the {label} image with its mip chain"),
        chain,
        limits,
    )?;

    let decoded = reader().decode().map_err(fault)?;
    if (decoded.width(), decoded.height()) != (width, height) {
        return Err(LoadError::new(
            name,
            Place::Unknown,
            FaultKind::Invalid,
            format!(
                "{label} decoded to {}x{}, its header says {width}x{height}",
                decoded.width(),
                decoded.height()
            ),
        ));
    }
    let data = decoded.into_rgba8().into_raw();
    Ok(Image {
        format: PixelFormat::Rgba8,
        levels: vec![MipLevel {
            width,
            height,
            data,
        }],
    })
}
