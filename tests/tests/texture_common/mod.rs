//! Helpers shared by the texture tests: DDS headers written field by field,
//! and the independent `dds` crate (image-rs) as encoder and decoder.
#![allow(dead_code)]

use std::io::Cursor;

/// `DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT`.
pub const FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x1000;
/// `DDSD_MIPMAPCOUNT`.
pub const MIPMAPCOUNT: u32 = 0x20000;
/// `DDSD_DEPTH`.
pub const DEPTH: u32 = 0x80_0000;
/// Pixel-format flags.
pub const PF_ALPHAPIXELS: u32 = 0x1;
pub const PF_FOURCC: u32 = 0x4;
pub const PF_RGB: u32 = 0x40;
pub const PF_LUMINANCE: u32 = 0x2_0000;
/// `DDSCAPS2_CUBEMAP` (with all faces) and `DDSCAPS2_VOLUME`.
pub const CUBEMAP_ALL: u32 = 0x200 | 0xFC00;
pub const VOLUME: u32 = 0x20_0000;

/// A DDS header's fields, written as the format lays them out.
#[derive(Clone, Debug)]
pub struct DdsHeader {
    pub flags: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub mips: u32,
    pub pf_flags: u32,
    pub fourcc: [u8; 4],
    pub bits: u32,
    /// R, G, B, A masks.
    pub masks: [u32; 4],
    pub caps2: u32,
    /// DXGI format, resource dimension, misc flag, array size, alpha mode.
    pub dx10: Option<[u32; 5]>,
}

impl DdsHeader {
    /// A `width` x `height` header with FourCC `fourcc` and no mips flag.
    pub fn fourcc(width: u32, height: u32, fourcc: &[u8; 4]) -> Self {
        Self {
            flags: FLAGS,
            width,
            height,
            depth: 0,
            mips: 0,
            pf_flags: PF_FOURCC,
            fourcc: *fourcc,
            bits: 0,
            masks: [0; 4],
            caps2: 0,
            dx10: None,
        }
    }

    /// An uncompressed header with `bits` a pixel and masks R, G, B, A
    /// (the alpha flag set when A is not 0).
    pub fn masks(width: u32, height: u32, bits: u32, masks: [u32; 4]) -> Self {
        Self {
            pf_flags: PF_RGB | if masks[3] != 0 { PF_ALPHAPIXELS } else { 0 },
            fourcc: [0; 4],
            bits,
            masks,
            ..Self::fourcc(width, height, b"\0\0\0\0")
        }
    }

    /// A DX10 header with DXGI format `dxgi` (a 2D texture, one element).
    pub fn dx10(width: u32, height: u32, dxgi: u32) -> Self {
        Self {
            dx10: Some([dxgi, 3, 0, 1, 0]),
            ..Self::fourcc(width, height, b"DX10")
        }
    }

    /// With `n` mip levels (the flag set).
    pub fn with_mips(mut self, n: u32) -> Self {
        self.flags |= MIPMAPCOUNT;
        self.mips = n;
        self
    }

    /// The magic and the header (and the DX10 header if any).
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = b"DDS ".to_vec();
        let mut put = |v: u32| b.extend_from_slice(&v.to_le_bytes());
        put(124);
        put(self.flags);
        put(self.height);
        put(self.width);
        put(0); // pitch or linear size
        put(self.depth);
        put(self.mips);
        for _ in 0..11 {
            put(0);
        }
        put(32);
        put(self.pf_flags);
        put(u32::from_le_bytes(self.fourcc));
        put(self.bits);
        for m in self.masks {
            put(m);
        }
        put(0x1000); // DDSCAPS_TEXTURE
        put(self.caps2);
        put(0);
        put(0);
        put(0);
        if let Some(h10) = self.dx10 {
            for v in h10 {
                put(v);
            }
        }
        b
    }

    /// The header followed by `data`.
    pub fn file(&self, data: &[u8]) -> Vec<u8> {
        let mut b = self.bytes();
        b.extend_from_slice(data);
        b
    }
}

/// Every surface of a DDS file decoded to RGBA8 by the `dds` crate:
/// (width, height, pixels) per mip level.
pub fn dds_crate_decode(bytes: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
    let mut decoder = dds::Decoder::new(Cursor::new(bytes)).expect("dds crate reads the header");
    let mut out = Vec::new();
    while !decoder.is_done() {
        let size = decoder.surface_info().expect("a surface").size();
        let mut data = vec![0u8; size.pixels() as usize * 4];
        let view =
            dds::ImageViewMut::new(&mut data, size, dds::ColorFormat::RGBA_U8).expect("view");
        decoder.read_surface(view).expect("dds crate decodes");
        out.push((size.width, size.height, data));
    }
    out
}

/// `rgba` (width x height RGBA8) written by the `dds` crate in `format`,
/// with a full mip chain it generates when `mips` is set.
pub fn dds_crate_encode(
    format: dds::Format,
    width: u32,
    height: u32,
    rgba: &[u8],
    mips: bool,
) -> Vec<u8> {
    let mut header = dds::header::Header::new_image(width, height, format);
    if mips {
        header = header.with_mipmaps();
    }
    let mut out = Vec::new();
    let mut encoder = dds::Encoder::new(&mut out, format, &header).expect("encoder");
    encoder.mipmaps.generate = mips;
    let view = dds::ImageView::new(
        rgba,
        dds::Size::new(width, height),
        dds::ColorFormat::RGBA_U8,
    )
    .expect("view");
    encoder.write_surface(view).expect("encode");
    encoder.finish().expect("finish");
    out
}

/// A deterministic pseudo-random byte stream (xorshift), for test images.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}
