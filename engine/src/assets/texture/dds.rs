//! DirectDraw Surface files: the header through `ddsfile`, the layout and
//! every level's size checked here before anything is allocated.
//!
//! Read: 2D textures (no cube maps, volumes or arrays) in BC1 (`DXT1`),
//! BC2 (`DXT3`), BC3 (`DXT5`), their DX10-header equivalents (UNorm and
//! sRGB alike: the bytes are the same), the DX10 8-bit RGBA/BGRA/BGRX and
//! 16-bit B5G6R5/B5G5R5A1 formats, and any uncompressed RGB layout of 8,
//! 16, 24 or 32 bits a pixel whose channel masks are contiguous and do not
//! overlap (BGRA, RGBA, BGRX, BGR, RGB565, A1RGB555, X1RGB555, A4RGB444,
//! A2BGR10, ...). BC levels are kept compressed; uncompressed ones are
//! widened to RGBA8 (each channel `round(v * 255 / (2^bits - 1))`, alpha
//! 255 where the layout has none).
//!
//! Levels: the header's mip count when its `MIPMAPCOUNT` flag is set and
//! the count is not 0, else one level; rows are tightly packed
//! (`ceil(width * bits / 8)` bytes, as Microsoft's readers compute it, the
//! header's pitch is not trusted). Bytes after the last level are ignored.

use std::io::Cursor;
use std::path::Path;

use ddsfile::{
    Caps2, D3D10ResourceDimension, DxgiFormat, FourCC, Header, Header10, MiscFlag, PixelFormatFlags,
};

use super::{
    check_budget, check_size, full_mip_count, level_size, Image, MipLevel, PixelFormat,
    TextureLimits,
};
use crate::assets::{FaultKind, LoadError, Place};

/// Bytes of the magic and the header.
const HEADER_END: usize = 4 + 124;
/// Bytes of the DX10 extension header.
const HEADER10_LEN: usize = 20;

/// One channel of an uncompressed layout: its mask's shift and width.
#[derive(Clone, Copy, Debug)]
struct Channel {
    shift: u32,
    bits: u32,
}

impl Channel {
    /// The channel of a mask, `None` for an empty one; an error text for a
    /// mask whose bits are not contiguous.
    fn from_mask(mask: u32, name: &str) -> Result<Option<Self>, String> {
        if mask == 0 {
            return Ok(None);
        }
        let shift = mask.trailing_zeros();
        let bits = mask.count_ones();
        if (mask >> shift).trailing_ones() != bits {
            return Err(format!("{name} mask 0x{mask:08X} is not contiguous"));
        }
        Ok(Some(Self { shift, bits }))
    }

    /// The channel's value in `pixel`, widened to 8 bits with rounding.
    fn read(self, pixel: u32) -> u8 {
        let max = (1u64 << self.bits) - 1;
        let v = (u64::from(pixel) >> self.shift) & max;
        ((v * 255 * 2 + max) / (2 * max)) as u8
    }
}

/// An uncompressed layout: bytes a pixel and the four channels.
#[derive(Clone, Copy, Debug)]
struct Masks {
    bytes: usize,
    rgba: [Option<Channel>; 4],
}

/// What the file's levels hold.
enum Layout {
    Bc(PixelFormat),
    Masks(Masks),
}

impl Layout {
    /// Bytes of a `width` x `height` level in the file.
    fn file_bytes(&self, width: u32, height: u32) -> u64 {
        match self {
            Layout::Bc(f) => f.level_bytes(width, height),
            Layout::Masks(m) => u64::from(width) * u64::from(height) * m.bytes as u64,
        }
    }

    /// Bytes of such a level once read.
    fn image_bytes(&self, width: u32, height: u32) -> u64 {
        match self {
            Layout::Bc(f) => f.level_bytes(width, height),
            Layout::Masks(_) => PixelFormat::Rgba8.level_bytes(width, height),
        }
    }
}

/// Reads a DDS file (its bytes start with `"DDS "`).
pub(super) fn read(bytes: &[u8], name: &Path, limits: &TextureLimits) -> Result<Image, LoadError> {
    let err = |at: usize, kind: FaultKind, message: String| {
        LoadError::new(name, Place::Byte(at as u64), kind, message)
    };
    let Some(header_bytes) = bytes.get(4..HEADER_END) else {
        return Err(err(
            bytes.len(),
            FaultKind::Truncated,
            format!(
                "DDS header truncated: it needs {HEADER_END} bytes, the file has {}",
                bytes.len()
            ),
        ));
    };
    let header = Header::read(Cursor::new(header_bytes))
        .map_err(|e| err(4, FaultKind::Syntax, format!("bad DDS header: {e}")))?;
    let (width, height) = (header.width, header.height);
    check_size(
        name,
        Place::Item("DDS header".into()),
        width,
        height,
        limits,
    )?;
    if header.caps2.contains(Caps2::CUBEMAP) {
        return Err(err(
            4,
            FaultKind::Unsupported,
            "unsupported DDS layout: cube map (only 2D textures are read)".into(),
        ));
    }
    if header.caps2.contains(Caps2::VOLUME) || header.depth.is_some_and(|d| d > 1) {
        return Err(err(
            4,
            FaultKind::Unsupported,
            "unsupported DDS layout: volume texture (only 2D textures are read)".into(),
        ));
    }

    let mut data_start = HEADER_END;
    let layout = match &header.spf.fourcc {
        Some(FourCC(FourCC::DX10)) => {
            let Some(h10_bytes) = bytes.get(HEADER_END..HEADER_END + HEADER10_LEN) else {
                return Err(err(
                    bytes.len(),
                    FaultKind::Truncated,
                    format!(
                        "DDS DX10 header truncated: it needs {} bytes, the file has {}",
                        HEADER_END + HEADER10_LEN,
                        bytes.len()
                    ),
                ));
            };
            data_start += HEADER10_LEN;
            let h10 = Header10::read(Cursor::new(h10_bytes)).map_err(|e| {
                err(
                    HEADER_END,
                    FaultKind::Unsupported,
                    format!("unsupported DDS DX10 header: {e}"),
                )
            })?;
            dx10_layout(&h10).map_err(|m| err(HEADER_END, FaultKind::Unsupported, m))?
        }
        Some(FourCC(code)) => {
            fourcc_layout(*code).map_err(|m| err(84, FaultKind::Unsupported, m))?
        }
        None => mask_layout(&header).map_err(|m| err(80, FaultKind::Unsupported, m))?,
    };

    let full = full_mip_count(width, height);
    let count = match header.mip_map_count {
        Some(n) if n > 0 => n,
        _ => 1,
    };
    if count > full {
        return Err(err(
            28,
            FaultKind::Count,
            format!("mip count {count} exceeds the {full} levels of a {width}x{height} image"),
        ));
    }

    // Every level's size against the data, and the totals against the
    // budget, before allocating.
    let mut at = data_start as u64;
    let mut held = 0u64;
    for level in 0..count {
        let (w, h) = level_size(width, height, level);
        let need = layout.file_bytes(w, h);
        let left = (bytes.len() as u64).saturating_sub(at);
        if need > left {
            return Err(err(
                at as usize,
                FaultKind::Truncated,
                format!(
                    "DDS mip level {level} ({w}x{h}) needs {need} bytes at byte {at}, \
                     the file has {left} left"
                ),
            ));
        }
        at += need;
        held += layout.image_bytes(w, h);
    }
    check_budget(name, "the DDS image", held, limits)?;
    let rgba_chain: u64 = (0..full)
        .map(|l| {
            let (w, h) = level_size(width, height, l);
            PixelFormat::Rgba8.level_bytes(w, h)
        })
        .sum();
    check_budget(
        name,
        "the DDS image decoded with its mip chain",
        rgba_chain,
        limits,
    )?;

    let mut levels = Vec::with_capacity(count as usize);
    let mut at = data_start;
    for level in 0..count {
        let (w, h) = level_size(width, height, level);
        let need = layout.file_bytes(w, h) as usize;
        let src = bytes.get(at..at + need).ok_or_else(|| {
            err(
                at,
                FaultKind::Truncated,
                format!("DDS mip level {level} truncated"),
            )
        })?;
        let data = match &layout {
            Layout::Bc(_) => src.to_vec(),
            Layout::Masks(m) => widen(src, m),
        };
        levels.push(MipLevel {
            width: w,
            height: h,
            data,
        });
        at += need;
    }
    let format = match layout {
        Layout::Bc(f) => f,
        Layout::Masks(_) => PixelFormat::Rgba8,
    };
    Ok(Image { format, levels })
}

/// Four printable ASCII characters of a FourCC, else its number.
fn fourcc_name(code: u32) -> String {
    let b = code.to_le_bytes();
    if b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        format!("FourCC {:?}", String::from_utf8_lossy(&b))
    } else {
        format!("FourCC 0x{code:08X} ({code})")
    }
}

/// The layout a legacy FourCC names.
fn fourcc_layout(code: u32) -> Result<Layout, String> {
    match code {
        FourCC::DXT1 => Ok(Layout::Bc(PixelFormat::Bc1)),
        FourCC::DXT3 => Ok(Layout::Bc(PixelFormat::Bc2)),
        FourCC::DXT5 => Ok(Layout::Bc(PixelFormat::Bc3)),
        FourCC::DXT2 | FourCC::DXT4 => Err(format!(
            "unsupported DDS {}: premultiplied alpha (only straight alpha is read)",
            fourcc_name(code)
        )),
        _ => Err(format!(
            "unsupported DDS {} (read: DXT1, DXT3, DXT5, DX10 and uncompressed RGB masks)",
            fourcc_name(code)
        )),
    }
}

/// The layout a DX10 header names.
fn dx10_layout(h10: &Header10) -> Result<Layout, String> {
    if h10.resource_dimension != D3D10ResourceDimension::Texture2D {
        return Err(format!(
            "unsupported DDS DX10 layout: resource dimension {:?} (only 2D textures are read)",
            h10.resource_dimension
        ));
    }
    if h10.misc_flag.contains(MiscFlag::TEXTURECUBE) {
        return Err("unsupported DDS DX10 layout: cube map (only 2D textures are read)".into());
    }
    if h10.array_size > 1 {
        return Err(format!(
            "unsupported DDS DX10 layout: texture array of {} (only single 2D textures are read)",
            h10.array_size
        ));
    }
    let masks = |bytes: usize, r: u32, g: u32, b: u32, a: u32| {
        let ch = |m: u32| Channel::from_mask(m, "").ok().flatten();
        Layout::Masks(Masks {
            bytes,
            rgba: [ch(r), ch(g), ch(b), ch(a)],
        })
    };
    use DxgiFormat as F;
    match h10.dxgi_format {
        F::BC1_UNorm | F::BC1_UNorm_sRGB => Ok(Layout::Bc(PixelFormat::Bc1)),
        F::BC2_UNorm | F::BC2_UNorm_sRGB => Ok(Layout::Bc(PixelFormat::Bc2)),
        F::BC3_UNorm | F::BC3_UNorm_sRGB => Ok(Layout::Bc(PixelFormat::Bc3)),
        F::R8G8B8A8_UNorm | F::R8G8B8A8_UNorm_sRGB => {
            Ok(masks(4, 0xFF, 0xFF00, 0xFF_0000, 0xFF00_0000))
        }
        F::B8G8R8A8_UNorm | F::B8G8R8A8_UNorm_sRGB => {
            Ok(masks(4, 0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000))
        }
        F::B8G8R8X8_UNorm | F::B8G8R8X8_UNorm_sRGB => Ok(masks(4, 0xFF_0000, 0xFF00, 0xFF, 0)),
        F::B5G6R5_UNorm => Ok(masks(2, 0xF800, 0x07E0, 0x001F, 0)),
        F::B5G5R5A1_UNorm => Ok(masks(2, 0x7C00, 0x03E0, 0x001F, 0x8000)),
        other => Err(format!(
            "unsupported DDS DX10 format {other:?} (read: BC1-BC3, R8G8B8A8, B8G8R8A8, \
             B8G8R8X8, B5G6R5, B5G5R5A1)"
        )),
    }
}

/// The layout of a legacy uncompressed pixel format (channel masks).
fn mask_layout(header: &Header) -> Result<Layout, String> {
    let pf = &header.spf;
    if !pf.flags.contains(PixelFormatFlags::RGB) {
        let what = if pf.flags.contains(PixelFormatFlags::LUMINANCE) {
            "luminance"
        } else if pf.flags.contains(PixelFormatFlags::YUV) {
            "YUV"
        } else if pf.flags.contains(PixelFormatFlags::ALPHA) {
            "alpha-only"
        } else {
            "no FourCC and no RGB masks"
        };
        return Err(format!(
            "unsupported DDS pixel format: {what} (flags 0x{:08X})",
            pf.flags.bits()
        ));
    }
    let bits = pf.rgb_bit_count.unwrap_or(0);
    let (r, g, b) = (
        pf.r_bit_mask.unwrap_or(0),
        pf.g_bit_mask.unwrap_or(0),
        pf.b_bit_mask.unwrap_or(0),
    );
    let a = if pf.flags.contains(PixelFormatFlags::ALPHA_PIXELS) {
        pf.a_bit_mask.unwrap_or(0)
    } else {
        0
    };
    let describe =
        || format!("{bits}-bit RGB masks R 0x{r:08X} G 0x{g:08X} B 0x{b:08X} A 0x{a:08X}");
    if !matches!(bits, 8 | 16 | 24 | 32) {
        return Err(format!(
            "unsupported DDS pixel format: {} (read: 8, 16, 24 or 32 bits a pixel)",
            describe()
        ));
    }
    let fits = bits == 32 || (r | g | b | a) >> bits == 0;
    let disjoint = r & g == 0 && r & b == 0 && r & a == 0 && g & b == 0 && g & a == 0 && b & a == 0;
    if !fits || !disjoint || (r | g | b) == 0 {
        return Err(format!(
            "unsupported DDS pixel format: {} (masks must fit the pixel, not overlap, \
             and name a colour)",
            describe()
        ));
    }
    let mut rgba = [None; 4];
    for (slot, (mask, ch)) in rgba
        .iter_mut()
        .zip([(r, "R"), (g, "G"), (b, "B"), (a, "A")])
    {
        *slot = Channel::from_mask(mask, ch)
            .map_err(|m| format!("unsupported DDS pixel format: {}: {m}", describe()))?;
    }
    Ok(Layout::Masks(Masks {
        bytes: bits as usize / 8,
        rgba,
    }))
}

/// Widens an uncompressed level to RGBA8 (`src` holds whole pixels).
fn widen(src: &[u8], m: &Masks) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() / m.bytes * 4);
    for px in src.chunks_exact(m.bytes) {
        let mut word = [0u8; 4];
        word[..m.bytes].copy_from_slice(px);
        let v = u32::from_le_bytes(word);
        for (i, ch) in m.rgba.iter().enumerate() {
            out.push(match ch {
                Some(c) => c.read(v),
                // No such channel: colour 0, alpha opaque.
                None if i == 3 => 255,
                None => 0,
            });
        }
    }
    out
}
