//! Unit tests of the texture readers: the BC block decoders against
//! colours computed by hand from the formats' formulas, the mip filter
//! against hand-computed linear-light means, the path resolution.
//! Malformed files, DDS layouts, PNG/JPEG and the shared assets are in
//! `tests/tests/texture_*.rs`.

use std::path::{Path, PathBuf};

use super::*;

/// A BC colour block: endpoints, then 16 two-bit indices row by row.
fn colour_block(c0: u16, c1: u16, indices: [u8; 16]) -> [u8; 8] {
    let mut bits = 0u32;
    for (i, &ix) in indices.iter().enumerate() {
        bits |= u32::from(ix) << (2 * i);
    }
    let mut b = [0u8; 8];
    b[0..2].copy_from_slice(&c0.to_le_bytes());
    b[2..4].copy_from_slice(&c1.to_le_bytes());
    b[4..8].copy_from_slice(&bits.to_le_bytes());
    b
}

const ROWS: [u8; 16] = [0, 1, 2, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 2, 1, 0];

#[test]
fn bc1_four_colour_red_blue() {
    // c0 = 0xF800 = RGB565 (31, 0, 0) = (255, 0, 0); c1 = 0x001F = (0, 0, 255).
    // c2 = 2/3 c0 + 1/3 c1 = (170, 0, 85); c3 = (85, 0, 170).
    let block = colour_block(0xF800, 0x001F, ROWS);
    // The index bytes as the format stores them (pixel 0 in the low bits).
    assert_eq!(&block[4..], &[0xE4, 0x55, 0xAA, 0x1B]);
    let px = decode_bc1_block(&block);
    let (c0, c1, c2, c3) = (
        [255, 0, 0, 255],
        [0, 0, 255, 255],
        [170, 0, 85, 255],
        [85, 0, 170, 255],
    );
    let want = [
        c0, c1, c2, c3, c1, c1, c1, c1, c2, c2, c2, c2, c3, c2, c1, c0,
    ];
    assert_eq!(px, want);
}

#[test]
fn bc1_four_colour_rounding() {
    // c0 = (r 10, g 20, b 5) = 0x5285, c1 = (3, 50, 30) = 0x1E5E; c0 > c1.
    // Endpoints: 10*255/31 = 82.26 -> 82, 20*255/63 = 80.95 -> 81,
    // 5*255/31 = 41.13 -> 41; 3*255/31 = 24.68 -> 25, 50*255/63 = 202.38
    // -> 202, 30*255/31 = 246.77 -> 247.
    // c2: 255*23/93 = 63.06 -> 63, 255*90/189 = 121.43 -> 121,
    //     255*40/93 = 109.68 -> 110.
    // c3: 255*16/93 = 43.87 -> 44, 255*120/189 = 161.90 -> 162,
    //     255*65/93 = 178.23 -> 178.
    assert_eq!(10 << 11 | 20 << 5 | 5, 0x5285);
    assert_eq!(3 << 11 | 50 << 5 | 30, 0x1E5E);
    let px = decode_bc1_block(&colour_block(0x5285, 0x1E5E, ROWS));
    assert_eq!(px[0], [82, 81, 41, 255]);
    assert_eq!(px[1], [25, 202, 247, 255]);
    assert_eq!(px[2], [63, 121, 110, 255]);
    assert_eq!(px[3], [44, 162, 178, 255]);
}

#[test]
fn bc1_three_colour_transparent_mode() {
    // c0 = 0x001F (blue) < c1 = 0xF800 (red): three colours + transparent.
    // c2 = (c0 + c1) / 2: 255*31/62 = 127.5 -> 128 on both channels.
    let px = decode_bc1_block(&colour_block(0x001F, 0xF800, ROWS));
    assert_eq!(px[0], [0, 0, 255, 255]);
    assert_eq!(px[1], [255, 0, 0, 255]);
    assert_eq!(px[2], [128, 0, 128, 255]);
    assert_eq!(px[3], [0, 0, 0, 0]);
    // Equal endpoints are the three-colour mode too.
    let px = decode_bc1_block(&colour_block(
        0xFFFF,
        0xFFFF,
        [3, 2, 1, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
    ));
    assert_eq!(px[0], [0, 0, 0, 0]);
    assert_eq!(px[1], [255, 255, 255, 255]);
    assert_eq!(px[2], [255, 255, 255, 255]);
    assert_eq!(px[3], [255, 255, 255, 255]);
}

#[test]
fn bc2_explicit_alpha() {
    // Alpha row 0: nibbles 0, 5, 10, 15 -> 0, 85, 170, 255 (a * 17);
    // rows 1-3: 8 -> 136. Colour: c0 = 0 < c1 = 0xFFFF, but BC2 is always
    // four-colour: index 3 = 1/3 c0 + 2/3 c1 = (170, 170, 170), opaque
    // colour (the alpha comes from the alpha half).
    let mut block = [0u8; 16];
    block[0..2].copy_from_slice(&0xFA50u16.to_le_bytes());
    for row in 1..4 {
        block[2 * row..2 * row + 2].copy_from_slice(&0x8888u16.to_le_bytes());
    }
    block[8..].copy_from_slice(&colour_block(0x0000, 0xFFFF, [3; 16]));
    let px = decode_bc2_block(&block);
    assert_eq!(px[0], [170, 170, 170, 0]);
    assert_eq!(px[1], [170, 170, 170, 85]);
    assert_eq!(px[2], [170, 170, 170, 170]);
    assert_eq!(px[3], [170, 170, 170, 255]);
    for p in &px[4..] {
        assert_eq!(*p, [170, 170, 170, 136]);
    }
    // Index 2 in the same block is 2/3 c0 + 1/3 c1 = (85, 85, 85).
    block[8..].copy_from_slice(&colour_block(0x0000, 0xFFFF, [2; 16]));
    assert_eq!(decode_bc2_block(&block)[5], [85, 85, 85, 136]);
}

/// A BC3 block: alpha endpoints, 16 three-bit alpha indices, a colour block.
fn bc3_block(a0: u8, a1: u8, alpha_indices: [u8; 16], colour: [u8; 8]) -> [u8; 16] {
    let mut bits = 0u64;
    for (i, &ix) in alpha_indices.iter().enumerate() {
        bits |= u64::from(ix) << (3 * i);
    }
    let mut b = [0u8; 16];
    b[0] = a0;
    b[1] = a1;
    b[2..8].copy_from_slice(&bits.to_le_bytes()[..6]);
    b[8..].copy_from_slice(&colour);
    b
}

const EIGHT: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4, 3, 2, 1, 0];

#[test]
fn bc3_eight_value_alpha() {
    // a0 = 255 > a1 = 0: a_k = ((7 - (k-1)) a0 + (k-1) a1) / 7 for k = 2..7:
    // 1530/7 = 218.57 -> 219, 1275/7 = 182.14 -> 182, 1020/7 = 145.71 -> 146,
    // 765/7 = 109.29 -> 109, 510/7 = 72.86 -> 73, 255/7 = 36.43 -> 36.
    let want = [255, 0, 219, 182, 146, 109, 73, 36];
    // Colour: c0 == c1 == red; four-colour mode in BC3, so index 3 is red
    // too (BC1 would make it transparent).
    let block = bc3_block(255, 0, EIGHT, colour_block(0xF800, 0xF800, [3; 16]));
    let px = decode_bc3_block(&block);
    for (i, p) in px.iter().enumerate() {
        assert_eq!(*p, [255, 0, 0, want[EIGHT[i] as usize]], "pixel {i}");
    }
}

#[test]
fn bc3_six_value_alpha() {
    // a0 = 40 <= a1 = 200: a2..a5 = (4*40+200)/5 = 72, (3*40+400)/5 = 104,
    // (2*40+600)/5 = 136, (40+800)/5 = 168; a6 = 0, a7 = 255.
    let block = bc3_block(40, 200, EIGHT, colour_block(0x07E0, 0x0000, [0; 16]));
    let want = [40, 200, 72, 104, 136, 168, 0, 255];
    let px = decode_bc3_block(&block);
    for (i, p) in px.iter().enumerate() {
        // Colour 0x07E0 = (0, 63, 0) = (0, 255, 0).
        assert_eq!(*p, [0, 255, 0, want[EIGHT[i] as usize]], "pixel {i}");
    }
    // Rounding: a0 = 10, a1 = 13: 53/5 = 10.6 -> 11, 56/5 = 11.2 -> 11,
    // 59/5 = 11.8 -> 12, 62/5 = 12.4 -> 12.
    let px = decode_bc3_block(&bc3_block(10, 13, EIGHT, [0; 8]));
    let alphas: Vec<u8> = px[..8].iter().map(|p| p[3]).collect();
    assert_eq!(alphas, [10, 13, 11, 11, 12, 12, 0, 255]);
}

#[test]
fn bc_level_decode_crops_partial_blocks() {
    // A 5x3 BC1 level: 2x1 blocks; block 0 all red, block 1 all blue.
    let mut data = colour_block(0xF800, 0x001F, [0; 16]).to_vec();
    data.extend_from_slice(&colour_block(0xF800, 0x001F, [1; 16]));
    let image = Image {
        format: PixelFormat::Bc1,
        levels: vec![MipLevel {
            width: 5,
            height: 3,
            data,
        }],
    };
    let rgba = image.decode_to_rgba8().expect("decodes");
    assert_eq!(rgba.format, PixelFormat::Rgba8);
    let l = &rgba.levels[0];
    assert_eq!((l.width, l.height, l.data.len()), (5, 3, 5 * 3 * 4));
    for y in 0..3 {
        for x in 0..5 {
            let at = (y * 5 + x) * 4;
            let want = if x < 4 {
                [255, 0, 0, 255]
            } else {
                [0, 0, 255, 255]
            };
            assert_eq!(l.data[at..at + 4], want, "({x}, {y})");
        }
    }
    // A wrong data length is an error, not a panic.
    let mut bad = image.clone();
    bad.levels[0].data.pop();
    assert!(matches!(
        bad.decode_to_rgba8(),
        Err(ImageError::LevelSize {
            level: 0,
            expected: 16,
            found: 15,
            ..
        })
    ));
}

#[test]
fn full_mip_counts() {
    assert_eq!(full_mip_count(1, 1), 1);
    assert_eq!(full_mip_count(256, 256), 9);
    assert_eq!(full_mip_count(256, 1), 9);
    assert_eq!(full_mip_count(5, 3), 3); // 5x3, 2x1, 1x1
    assert_eq!(full_mip_count(0, 7), 0);
    assert_eq!(level_size(5, 3, 1), (2, 1));
    assert_eq!(level_size(5, 3, 2), (1, 1));
    assert_eq!(level_size(5, 3, 40), (1, 1));
}

/// An RGBA8 image of one level.
fn rgba(width: u32, height: u32, pixels: &[[u8; 4]]) -> Image {
    assert_eq!(pixels.len(), (width * height) as usize);
    Image {
        format: PixelFormat::Rgba8,
        levels: vec![MipLevel {
            width,
            height,
            data: pixels.concat(),
        }],
    }
}

#[test]
fn mip_chain_4x4_in_linear_light() {
    // Quadrants (R channel): TL 255 255 / 0 0, TR 255 0 / 0 0, BL all 128,
    // BR all 0. G: 255 in the top half, 0 below. B 0, alpha 255.
    let p = |r: u8, g: u8| [r, g, 0, 255];
    #[rustfmt::skip]
    let pixels = [
        p(255, 255), p(255, 255), p(255, 255), p(0, 255),
        p(0, 255),   p(0, 255),   p(0, 255),   p(0, 255),
        p(128, 0),   p(128, 0),   p(0, 0),     p(0, 0),
        p(128, 0),   p(128, 0),   p(0, 0),     p(0, 0),
    ];
    let image = rgba(4, 4, &pixels).complete_mip_chain().expect("chain");
    assert_eq!(image.mip_count(), 3);
    assert!(image.has_full_mip_chain());
    let l1 = &image.levels[1];
    assert_eq!((l1.width, l1.height), (2, 2));
    // By hand, sRGB decode -> mean -> encode:
    // TL R: mean(1, 1, 0, 0) = 0.5 linear -> sRGB 0.7354 * 255 = 187.52 -> 188.
    // TR R: 0.25 linear -> 0.5371 * 255 = 136.96 -> 137.
    // BL R: 128 four times -> 128. BR: 0. G: 255 on top, 0 below.
    // (A gamma-space average would give 128 and 64.)
    assert_eq!(
        l1.data,
        [188, 255, 0, 255, 137, 255, 0, 255, 128, 0, 0, 255, 0, 0, 0, 255]
    );
    // Level 2 from level 1: R linear values of 188, 137, 128, 0 are 0.50287,
    // 0.25015, 0.21586, 0: mean 0.24222 -> sRGB 0.52936 * 255 = 134.99 -> 135.
    // G: mean(1, 1, 0, 0) = 0.5 -> 188.
    let l2 = &image.levels[2];
    assert_eq!((l2.width, l2.height), (1, 1));
    assert_eq!(l2.data, [135, 188, 0, 255]);
}

#[test]
fn mip_filter_weights_colour_by_alpha_and_takes_odd_columns() {
    // 2x1: opaque red beside transparent blue -> colour red (the
    // transparent pixel adds no colour), alpha 127.5 -> 128.
    let image = rgba(2, 1, &[[255, 0, 0, 255], [0, 0, 255, 0]]);
    let image = image.complete_mip_chain().expect("chain");
    assert_eq!(image.levels[1].data, [255, 0, 0, 128]);
    // All transparent: the plain mean (linear 0.5 -> 188).
    let image = rgba(2, 1, &[[255, 0, 0, 0], [0, 0, 0, 0]]);
    let image = image.complete_mip_chain().expect("chain");
    assert_eq!(image.levels[1].data, [188, 0, 0, 0]);
    // 3x1 -> 1x1 averages all three columns: mean(1, 0, 0) = 1/3 linear
    // -> sRGB 0.6125 * 255 = 156.19 -> 156.
    let image = rgba(3, 1, &[[255, 0, 0, 255], [0, 0, 0, 255], [0, 0, 0, 255]]);
    let image = image.complete_mip_chain().expect("chain");
    assert_eq!(image.mip_count(), 2);
    assert_eq!(image.levels[1].data, [156, 0, 0, 255]);
}

#[test]
fn mip_chain_keeps_existing_levels_and_full_bc_chains() {
    // An RGBA8 2x2 with a hand-set level 1 keeps it.
    let mut image = rgba(2, 2, &[[0, 0, 0, 255]; 4]);
    image.levels.push(MipLevel {
        width: 1,
        height: 1,
        data: vec![1, 2, 3, 4],
    });
    let kept = image.clone().complete_mip_chain().expect("chain");
    assert_eq!(kept, image);
    // A BC1 4x4 + 2x2 + 1x1 chain stays BC1.
    let block = colour_block(0xF800, 0x001F, [0; 16]).to_vec();
    let bc = Image {
        format: PixelFormat::Bc1,
        levels: (0..3)
            .map(|l| MipLevel {
                width: 4 >> l,
                height: 4 >> l,
                data: block.clone(),
            })
            .collect(),
    };
    assert_eq!(bc.clone().complete_mip_chain().expect("chain"), bc);
    // A lone BC1 level is decoded and completed.
    let lone = Image {
        format: PixelFormat::Bc1,
        levels: vec![bc.levels[0].clone()],
    };
    let done = lone.complete_mip_chain().expect("chain");
    assert_eq!(done.format, PixelFormat::Rgba8);
    assert_eq!(done.mip_count(), 3);
    assert_eq!(done.levels[2].data, [255, 0, 0, 255]);
}

#[test]
fn srgb_functions_match_the_standard() {
    // IEC 61966-2-1 reference points.
    assert!((srgb_to_linear(0.5) - 0.214_041).abs() < 1e-5);
    assert!((srgb_to_linear(0.04) - 0.04 / 12.92).abs() < 1e-7);
    assert!((linear_to_srgb(0.5) - 0.735_357).abs() < 1e-5);
    for v in 0..=255u8 {
        let back = (linear_to_srgb(srgb_to_linear(f32::from(v) / 255.0)) * 255.0).round();
        assert_eq!(back as u8, v);
    }
}

/// A fresh empty folder under the system's temporary folder.
fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vkskin-texture-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn resolve_either_slash_and_any_case() {
    let dir = temp_dir("resolve");
    std::fs::create_dir_all(dir.join("Textures")).expect("mkdir");
    std::fs::write(dir.join("Textures/Tiny_Skin.DDS"), b"x").expect("write");
    let want = dir.join("Textures/Tiny_Skin.DDS");
    for name in [
        "Textures/Tiny_Skin.DDS",
        "Textures\\Tiny_Skin.DDS",
        "textures\\tiny_skin.dds",
        "TEXTURES/tiny_skin.dds",
    ] {
        let got = resolve_texture_path(Path::new(name), Some(&dir));
        assert_eq!(got.as_ref(), Ok(&want), "{name}");
    }
    let missing = resolve_texture_path(Path::new("textures\\nothere.dds"), Some(&dir));
    assert_eq!(missing, Err(dir.join("textures/nothere.dds")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sniff_and_hints() {
    assert_eq!(
        TextureFileFormat::sniff(b"DDS \x7c"),
        Some(TextureFileFormat::Dds)
    );
    assert_eq!(
        TextureFileFormat::sniff(&[0x89, b'P', b'N', b'G', 13, 10, 26, 10]),
        Some(TextureFileFormat::Png)
    );
    assert_eq!(
        TextureFileFormat::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]),
        Some(TextureFileFormat::Jpeg)
    );
    assert_eq!(TextureFileFormat::sniff(b"GIF89a"), None);
    assert_eq!(
        TextureFileFormat::from_hint("image/png"),
        Some(TextureFileFormat::Png)
    );
    assert_eq!(
        TextureFileFormat::from_hint(".JPG"),
        Some(TextureFileFormat::Jpeg)
    );
    assert_eq!(
        TextureFileFormat::from_hint("dds"),
        Some(TextureFileFormat::Dds)
    );
    assert_eq!(TextureFileFormat::from_hint("tga"), None);
}
