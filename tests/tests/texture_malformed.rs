//! The texture readers on bad input: each corrupt, truncated, oversized or
//! unsupported file is an `Err` naming the file and the fault, never a
//! panic; and every prefix and many mutations of valid files come back
//! without a panic.

mod texture_common;

use std::path::{Path, PathBuf};

use texture_common::{
    dds_crate_encode, noise, DdsHeader, CUBEMAP_ALL, DEPTH, PF_LUMINANCE, PF_RGB, VOLUME,
};
use vkskin::assets::texture::{
    load_material_texture, read_texture, read_texture_with_limits, TextureLimits,
};
use vkskin::assets::{FaultKind, TextureSource};

/// A valid small PNG (RGBA8).
fn png_file(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().expect("header");
        w.write_image_data(&noise(3, (width * height * 4) as usize))
            .expect("data");
    }
    out
}

/// A valid small JPEG.
fn jpeg_file() -> Vec<u8> {
    let data = noise(5, 16 * 16 * 3);
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode(&data, 16, 16, image::ExtendedColorType::Rgb8)
        .expect("jpeg");
    out
}

/// CRC-32 (ISO-HDLC, as PNG chunks use), bit by bit.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `png` with its IHDR width and height replaced (CRC recomputed).
fn png_with_size(png: &[u8], width: u32, height: u32) -> Vec<u8> {
    let mut b = png.to_vec();
    // Signature (8), length (4), "IHDR" (4), then width and height.
    b[16..20].copy_from_slice(&width.to_be_bytes());
    b[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&b[12..29]);
    b[29..33].copy_from_slice(&crc.to_be_bytes());
    b
}

struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    hint: &'static str,
    /// Substrings the error text must hold (besides the file name).
    expect: &'static [&'static str],
    kind: Option<FaultKind>,
}

fn case(name: &'static str, bytes: Vec<u8>, expect: &'static [&'static str]) -> Case {
    Case {
        name,
        bytes,
        hint: "",
        expect,
        kind: None,
    }
}

fn cases() -> Vec<Case> {
    let bc1 = [0u8; 8];
    let dxt1 = |w, h| DdsHeader::fourcc(w, h, b"DXT1");
    let full_header = dxt1(4, 4).bytes();
    let bgra = [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000];
    let png = png_file(8, 8);
    let jpeg = jpeg_file();
    let mut v = vec![
        Case {
            kind: Some(FaultKind::Truncated),
            ..case(
                "empty.dds",
                Vec::new(),
                &["empty", "unknown texture format"],
            )
        },
        Case {
            kind: Some(FaultKind::Truncated),
            ..case(
                "magic-only.dds",
                b"DDS ".to_vec(),
                &["DDS header truncated", "128 bytes"],
            )
        },
        case(
            "header-cut.dds",
            full_header[..100].to_vec(),
            &["DDS header truncated", "file has 100"],
        ),
        {
            let mut b = full_header.clone();
            b[4] = 123; // header size field
            Case {
                kind: Some(FaultKind::Syntax),
                ..case(
                    "header-size.dds",
                    b,
                    &["bad DDS header", "Header struct size"],
                )
            }
        },
        {
            let mut b = full_header.clone();
            b[76] = 31; // pixel format size field
            case(
                "pf-size.dds",
                b,
                &["bad DDS header", "Pixel format struct size"],
            )
        },
        case(
            "zero-width.dds",
            dxt1(0, 4).file(&bc1),
            &["zero image size 0x4"],
        ),
        case(
            "zero-height.dds",
            dxt1(4, 0).file(&bc1),
            &["zero image size 4x0"],
        ),
        Case {
            kind: Some(FaultKind::Unsupported),
            ..case(
                "absurd.dds",
                dxt1(100_000, 100_000).file(&bc1),
                &["100000x100000", "exceeds the limit of 16384"],
            )
        },
        case(
            "wide.dds",
            dxt1(16385, 1).file(&bc1),
            &["16385x1", "exceeds"],
        ),
        Case {
            kind: Some(FaultKind::Truncated),
            ..case(
                "big-no-data.dds",
                dxt1(16384, 8192).file(&bc1),
                &[
                    "mip level 0 (16384x8192) needs 67108864 bytes",
                    "has 8 left",
                ],
            )
        },
        case(
            "no-data.dds",
            dxt1(4, 4).bytes(),
            &["mip level 0 (4x4) needs 8 bytes", "has 0 left"],
        ),
        case(
            "mip-short.dds",
            dxt1(4, 4).with_mips(3).file(&[bc1, bc1].concat()),
            &["mip level 2 (1x1) needs 8 bytes at byte 144", "has 0 left"],
        ),
        case(
            "dxt5-short.dds",
            DdsHeader::fourcc(8, 8, b"DXT5").file(&[0u8; 63]),
            &["mip level 0 (8x8) needs 64 bytes", "has 63 left"],
        ),
        Case {
            kind: Some(FaultKind::Count),
            ..case(
                "mips-too-many.dds",
                dxt1(4, 4).with_mips(10).file(&[bc1; 10].concat()),
                &["mip count 10 exceeds the 3 levels of a 4x4 image"],
            )
        },
        case(
            "mips-absurd.dds",
            dxt1(4, 4).with_mips(u32::MAX).file(&bc1),
            &["mip count 4294967295 exceeds"],
        ),
        Case {
            kind: Some(FaultKind::Unsupported),
            ..case(
                "fourcc-abcd.dds",
                DdsHeader::fourcc(4, 4, b"ABCD").file(&bc1),
                &["unsupported DDS FourCC \"ABCD\""],
            )
        },
        case(
            "fourcc-numeric.dds",
            DdsHeader::fourcc(4, 4, &113u32.to_le_bytes()).file(&[0; 128]),
            &["FourCC 0x00000071 (113)"],
        ),
        case(
            "dxt2.dds",
            DdsHeader::fourcc(4, 4, b"DXT2").file(&[0; 16]),
            &["FourCC \"DXT2\"", "premultiplied"],
        ),
        case(
            "dxt4.dds",
            DdsHeader::fourcc(4, 4, b"DXT4").file(&[0; 16]),
            &["FourCC \"DXT4\"", "premultiplied"],
        ),
        case(
            "ati2.dds",
            DdsHeader::fourcc(4, 4, b"ATI2").file(&[0; 16]),
            &["FourCC \"ATI2\""],
        ),
        case(
            "dx10-bc7.dds",
            DdsHeader::dx10(4, 4, 98).file(&[0; 16]),
            &["unsupported DDS DX10 format BC7_UNorm"],
        ),
        case(
            "dx10-float.dds",
            DdsHeader::dx10(4, 4, 2).file(&[0; 256]),
            &["DX10 format R32G32B32A32_Float"],
        ),
        case(
            "dx10-unknown.dds",
            DdsHeader::dx10(4, 4, 9999).file(&[0; 16]),
            &["unsupported DDS DX10 header", "dxgi_format"],
        ),
        case(
            "dx10-cut.dds",
            DdsHeader::dx10(4, 4, 71).bytes()[..140].to_vec(),
            &["DDS DX10 header truncated", "148 bytes", "has 140"],
        ),
        {
            let mut h = DdsHeader::dx10(4, 4, 71);
            h.dx10 = Some([71, 3, 0x4, 1, 0]);
            case(
                "dx10-cube.dds",
                h.file(&[0; 48]),
                &["DX10 layout: cube map"],
            )
        },
        {
            let mut h = DdsHeader::dx10(4, 4, 71);
            h.dx10 = Some([71, 4, 0, 1, 0]);
            case(
                "dx10-3d.dds",
                h.file(&[0; 48]),
                &["resource dimension Texture3D"],
            )
        },
        {
            let mut h = DdsHeader::dx10(4, 4, 71);
            h.dx10 = Some([71, 3, 0, 6, 0]);
            case("dx10-array.dds", h.file(&[0; 48]), &["texture array of 6"])
        },
        {
            let mut h = dxt1(4, 4);
            h.caps2 = CUBEMAP_ALL;
            Case {
                kind: Some(FaultKind::Unsupported),
                ..case(
                    "cube.dds",
                    h.file(&[0; 48]),
                    &["unsupported DDS layout: cube map"],
                )
            }
        },
        {
            let mut h = dxt1(4, 4);
            h.caps2 = VOLUME;
            h.flags |= DEPTH;
            h.depth = 4;
            case(
                "volume.dds",
                h.file(&[0; 32]),
                &["unsupported DDS layout: volume texture"],
            )
        },
        {
            let mut h = dxt1(4, 4);
            h.flags |= DEPTH;
            h.depth = 2;
            case("depth.dds", h.file(&[0; 16]), &["volume texture"])
        },
        {
            let mut h = DdsHeader::masks(2, 2, 8, [0xFF, 0, 0, 0]);
            h.pf_flags = PF_LUMINANCE;
            case(
                "luminance.dds",
                h.file(&[0; 4]),
                &["unsupported DDS pixel format: luminance"],
            )
        },
        case(
            "bits-12.dds",
            DdsHeader::masks(2, 2, 12, [0xF00, 0xF0, 0xF, 0]).file(&[0; 8]),
            &["12-bit RGB masks R 0x00000F00", "8, 16, 24 or 32 bits"],
        ),
        case(
            "overlap.dds",
            DdsHeader::masks(2, 2, 16, [0xFF00, 0x0FF0, 0x000F, 0]).file(&[0; 8]),
            &["R 0x0000FF00 G 0x00000FF0", "not overlap"],
        ),
        case(
            "gappy.dds",
            DdsHeader::masks(2, 2, 16, [0xF0F0, 0x0F00, 0x000F, 0]).file(&[0; 8]),
            &["R mask 0x0000F0F0 is not contiguous"],
        ),
        case(
            "mask-beyond.dds",
            DdsHeader::masks(2, 2, 16, [0xFF_0000, 0xFF00, 0xFF, 0]).file(&[0; 8]),
            &["16-bit RGB masks R 0x00FF0000", "must fit the pixel"],
        ),
        {
            let mut h = DdsHeader::masks(2, 2, 32, bgra);
            h.pf_flags = 0;
            case(
                "no-format.dds",
                h.file(&[0; 16]),
                &["no FourCC and no RGB masks"],
            )
        },
        case(
            "no-colour.dds",
            DdsHeader::masks(2, 2, 32, [0, 0, 0, 0xFF00_0000]).file(&[0; 16]),
            &["name a colour"],
        ),
        {
            let mut h = DdsHeader::masks(4, 4, 32, bgra);
            h.pf_flags = PF_RGB | 0x1;
            case(
                "bgra-short.dds",
                h.file(&[0; 63]),
                &["mip level 0 (4x4) needs 64 bytes"],
            )
        },
        case(
            "png-signature-only.png",
            png[..8].to_vec(),
            &["bad PNG file"],
        ),
        {
            let mut b = png.clone();
            let at = b.len() - 20; // inside IDAT: its CRC no longer matches
            b[at] ^= 0x5A;
            case("png-broken-chunk.png", b, &["bad PNG file"])
        },
        case(
            "png-cut.png",
            png[..png.len() / 2].to_vec(),
            &["bad PNG file"],
        ),
        case("png-zero.png", png_with_size(&png, 0, 8), &["bad PNG file"]),
        case(
            "png-absurd.png",
            png_with_size(&png, 100_000, 100_000),
            &["100000x100000 exceeds the limit of 16384"],
        ),
        case("jpeg-cut.jpg", jpeg[..20].to_vec(), &["bad JPEG file"]),
        case(
            "jpeg-garbage.jpg",
            [&[0xFF, 0xD8, 0xFF][..], &noise(11, 200)].concat(),
            &["bad JPEG file"],
        ),
        Case {
            kind: Some(FaultKind::Unsupported),
            ..case(
                "random.bin",
                noise(13, 300),
                &["unknown texture format", "it starts with"],
            )
        },
        Case {
            hint: "image/gif",
            ..case(
                "anim.gif",
                b"GIF89a\x01\x00\x01\x00".to_vec(),
                &["unsupported texture format \"image/gif\"", "47 49 46 38"],
            )
        },
        Case {
            hint: "png",
            ..case(
                "liar.png",
                noise(17, 64),
                &["named as \"png\" but not a PNG file"],
            )
        },
    ];
    // A JPEG cut inside its entropy-coded data may decode (the decoder
    // fills the rest): left to the prefix sweep below, which needs no panic.
    v.shrink_to_fit();
    v
}

#[test]
fn each_bad_file_is_an_error_naming_the_file_and_the_fault() {
    let cases = cases();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for c in &cases {
        let result = read_texture(&c.bytes, Path::new(c.name), c.hint);
        let err = match result {
            Ok(image) => panic!(
                "{}: read as {:?} {}x{}",
                c.name,
                image.format,
                image.width(),
                image.height()
            ),
            Err(e) => e,
        };
        let text = err.to_string();
        println!("{text}");
        assert!(text.starts_with(c.name), "{}: {text}", c.name);
        for want in c.expect {
            assert!(text.contains(want), "{}: {text:?} lacks {want:?}", c.name);
        }
        if let Some(kind) = c.kind {
            assert_eq!(err.kind, kind, "{}: {text}", c.name);
        }
    }
}

#[test]
fn limits_are_checked_before_decoding() {
    let png = png_file(64, 64);
    let small = TextureLimits {
        max_side: 32,
        ..TextureLimits::default()
    };
    let e = read_texture_with_limits(&png, Path::new("side.png"), "", &small).expect_err("side");
    assert!(
        e.to_string().contains("64x64 exceeds the limit of 32"),
        "{e}"
    );
    let tight = TextureLimits {
        max_side: 16384,
        max_bytes: 1000,
    };
    let e =
        read_texture_with_limits(&png, Path::new("budget.png"), "", &tight).expect_err("budget");
    // 64x64 RGBA8 with its chain: 16384 + 4096 + ... + 4 = 21844 bytes.
    assert!(
        e.to_string()
            .contains("needs 21844 bytes, over the limit of 1000"),
        "{e}"
    );
    let dds = DdsHeader::masks(64, 64, 32, [0xFF_0000, 0xFF00, 0xFF, 0]).file(&[0; 64 * 64 * 4]);
    let e =
        read_texture_with_limits(&dds, Path::new("budget.dds"), "", &tight).expect_err("budget");
    assert!(e.to_string().contains("over the limit of 1000"), "{e}");
}

#[test]
fn missing_material_file_names_the_path_tried() {
    let dir = std::env::temp_dir().join(format!("vkskin-texture-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let source = TextureSource::File(PathBuf::from("sub\\Missing_Skin.dds"));
    let err = load_material_texture(&source, Some(&dir)).expect_err("missing");
    let tried = dir.join("sub/Missing_Skin.dds");
    assert_eq!(err.file, tried);
    assert_eq!(err.kind, FaultKind::Io);
    let text = err.to_string();
    assert!(text.contains(&tried.display().to_string()), "{text}");
    assert!(text.contains("sub\\\\Missing_Skin.dds"), "{text}");
    // A present but corrupt file names the file it found.
    std::fs::write(dir.join("bad.dds"), b"DDS nonsense").expect("write");
    let source = TextureSource::File(PathBuf::from("BAD.DDS"));
    let err = load_material_texture(&source, Some(&dir)).expect_err("corrupt");
    assert_eq!(err.file, dir.join("bad.dds"));
    assert!(err.to_string().contains("DDS header truncated"), "{err}");
    // Embedded bytes are named as such.
    let source = TextureSource::Embedded {
        mime: "image/png".into(),
        bytes: vec![1, 2, 3],
    };
    let err = load_material_texture(&source, None).expect_err("embedded");
    assert!(
        err.to_string().starts_with("embedded texture (image/png)"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_prefix_of_valid_files_is_handled() {
    let rgba = noise(21, 12 * 10 * 4);
    let files = [
        (
            "bc1.dds",
            dds_crate_encode(dds::Format::BC1_UNORM, 12, 10, &rgba, true),
        ),
        (
            "bc3.dds",
            dds_crate_encode(dds::Format::BC3_UNORM, 12, 10, &rgba, true),
        ),
        (
            "bgr.dds",
            dds_crate_encode(dds::Format::B8G8R8_UNORM, 12, 10, &rgba, true),
        ),
        ("small.png", png_file(5, 3)),
        ("small.jpg", jpeg_file()),
    ];
    for (name, bytes) in &files {
        assert!(
            read_texture(bytes, Path::new(name), "").is_ok(),
            "{name} whole"
        );
        for cut in 0..bytes.len() {
            let r = read_texture(&bytes[..cut], Path::new(name), "");
            // A DDS cut anywhere is short of its levels; PNG and JPEG
            // decoders may be lenient about a missing tail, but never panic.
            if name.ends_with(".dds") {
                let e = r.expect_err("a cut DDS");
                assert!(e.to_string().starts_with(name), "{e}");
            }
        }
    }
}

#[test]
fn mutated_files_never_panic() {
    let rgba = noise(23, 8 * 8 * 4);
    let seeds = [
        dds_crate_encode(dds::Format::BC2_UNORM, 8, 8, &rgba, true),
        dds_crate_encode(dds::Format::B5G6R5_UNORM, 8, 8, &rgba, true),
        png_file(6, 6),
        jpeg_file(),
    ];
    let mut n = 0u64;
    for (s, seed) in seeds.iter().enumerate() {
        for round in 0..400u64 {
            let r = noise(1000 * s as u64 + round + 1, 8);
            let mut b = seed.clone();
            for k in 0..(1 + r[0] % 4) as usize {
                let at = (usize::from(r[1 + k]) * 7919 + round as usize) % b.len();
                b[at] ^= r[5 + k % 3] | 1;
            }
            if let Ok(image) = read_texture(&b, Path::new("mutant"), "") {
                // What a caller does next holds up too.
                image.validate().expect("consistent");
                let chain = image.complete_mip_chain().expect("chain");
                assert!(chain.has_full_mip_chain());
                n += 1;
            }
        }
    }
    // Some mutants (pixel data bytes) still read.
    assert!(n > 0);
}
