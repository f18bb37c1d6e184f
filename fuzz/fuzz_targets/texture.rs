//! The texture readers: DDS (headers, BC and uncompressed levels), PNG and
//! JPEG through `read_texture_with_limits`. Any input must give `Ok` or
//! `Err`, never a panic, a hang or an unbounded allocation; an `Ok` image
//! must be consistent and survive what a caller does next (completing the
//! mip chain, decoding BC to RGBA8).
//!
//! The first byte picks the presentation: 0: the input as it is; 1: behind
//! a DDS magic and a valid 4x4 DXT1 header (mutations reach the levels);
//! 2: behind a DDS magic alone (the header mutated directly). Limits are
//! small so that a valid but large image costs little.
//!
//! Seed corpus: a few DDS files of every layout the tests write
//! (`tests/tests/texture_common`), small PNGs and JPEGs.
//!
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run texture corpus/texture --
//! -max_total_time=300 -rss_limit_mb=2048 -timeout=10 -max_len=65536`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use vkskin::assets::texture::{read_texture_with_limits, TextureLimits};

/// A DDS magic and header for a 4x4 DXT1 image with 3 mip levels.
fn dxt1_header() -> Vec<u8> {
    let mut b = b"DDS ".to_vec();
    let fields: [u32; 31] = [
        124, 0x2_1007, 4, 4, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0x4,
        u32::from_le_bytes(*b"DXT1"), 0, 0, 0, 0, 0, 0x1000, 0, 0, 0, 0,
    ];
    for f in fields {
        b.extend_from_slice(&f.to_le_bytes());
    }
    b
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let owned;
    let bytes = match mode % 3 {
        0 => rest,
        1 => {
            owned = [dxt1_header().as_slice(), rest].concat();
            &owned[..]
        }
        _ => {
            owned = [b"DDS ".as_slice(), rest].concat();
            &owned[..]
        }
    };
    let limits = TextureLimits {
        max_side: 4096,
        max_bytes: 64 << 20,
    };
    if let Ok(image) = read_texture_with_limits(bytes, Path::new("fuzz"), "", &limits) {
        assert!(image.width() >= 1 && image.width() <= limits.max_side);
        assert!(image.height() >= 1 && image.height() <= limits.max_side);
        image.validate().expect("a read image is consistent");
        let rgba = image.decode_to_rgba8().expect("decodes");
        assert_eq!(rgba.mip_count(), image.mip_count());
        let full = image.complete_mip_chain().expect("completes");
        assert!(full.has_full_mip_chain());
    }
});
