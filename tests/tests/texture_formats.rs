//! The texture readers on well-formed files: `Tiny_skin.dds` and DDS files
//! the independent `dds` crate writes, each level compared with that
//! crate's decoding; BC blocks against `bcdec_rs`; DDS mask layouts by
//! hand; PNG and JPEG images encoded here; material textures from files
//! and embedded bytes.

mod texture_common;

use std::path::{Path, PathBuf};

use texture_common::{dds_crate_decode, dds_crate_encode, noise, DdsHeader};
use vkskin::assets::texture::{
    decode_bc1_block, decode_bc2_block, decode_bc3_block, load_material_texture, read_texture,
    Image, PixelFormat,
};
use vkskin::assets::TextureSource;

fn read(bytes: &[u8], name: &str) -> Image {
    read_texture(bytes, Path::new(name), "").unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every level of `image` as RGBA8 (BC levels through the engine's decoder).
fn rgba_levels(image: &Image) -> Vec<(u32, u32, Vec<u8>)> {
    let rgba = image.decode_to_rgba8().expect("decodes");
    rgba.levels
        .into_iter()
        .map(|l| (l.width, l.height, l.data))
        .collect()
}

#[test]
fn tiny_skin_dds_equals_the_dds_crate_on_every_level() {
    let Some(path) = vkskin_tests::asset("x/Tiny_skin.dds") else {
        return;
    };
    let bytes = std::fs::read(&path).expect("read Tiny_skin.dds");
    let image = read(&bytes, "Tiny_skin.dds");
    // Tiny_skin.dds: 256x256, uncompressed 32-bit X8R8G8B8 (BGRX in
    // memory: RGB flag, masks R 0xFF0000 G 0xFF00 B 0xFF, no alpha), one
    // level (no MIPMAPCOUNT flag); 128 + 256*256*4 = 262272 bytes.
    assert_eq!(bytes.len(), 262_272);
    assert_eq!(image.format, PixelFormat::Rgba8);
    assert_eq!(
        (image.width(), image.height(), image.mip_count()),
        (256, 256, 1)
    );
    let theirs = dds_crate_decode(&bytes);
    let ours = rgba_levels(&image);
    assert_eq!(ours.len(), theirs.len(), "level count");
    for (level, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!((o.0, o.1), (t.0, t.1), "level {level} size");
        assert!(
            o.2 == t.2,
            "level {level} pixels differ from the dds crate's"
        );
    }
    // Not a flat image: the comparison means something.
    let first = &ours[0].2[..4];
    assert!(ours[0].2.chunks(4).any(|p| p != first));
    assert!(ours[0].2.chunks(4).all(|p| p[3] == 255), "no alpha: opaque");
    // Completed down to 1x1.
    let full = image.complete_mip_chain().expect("chain");
    assert_eq!(full.mip_count(), 9);
    assert_eq!((full.levels[8].width, full.levels[8].height), (1, 1));
}

/// A 37x23 test image: smooth colour ramps, noisy alpha.
fn test_rgba(width: u32, height: u32) -> Vec<u8> {
    let n = noise(7, (width * height) as usize);
    let mut out = Vec::new();
    for y in 0..height {
        for x in 0..width {
            out.extend_from_slice(&[
                (x * 255 / width) as u8,
                (y * 255 / height) as u8,
                ((x + y) * 4) as u8,
                n[(y * width + x) as usize],
            ]);
        }
    }
    out
}

#[test]
fn bc_dds_files_with_mips_equal_the_dds_crate() {
    let (w, h) = (37, 23);
    let src = test_rgba(w, h);
    for (format, ours_format) in [
        (dds::Format::BC1_UNORM, PixelFormat::Bc1),
        (dds::Format::BC2_UNORM, PixelFormat::Bc2),
        (dds::Format::BC3_UNORM, PixelFormat::Bc3),
    ] {
        let bytes = dds_crate_encode(format, w, h, &src, true);
        let image = read(&bytes, &format!("{format:?}.dds"));
        assert_eq!(image.format, ours_format);
        // 37x23, 18x11, 9x5, 4x2, 2x1, 1x1.
        assert_eq!(image.mip_count(), 6, "{format:?}");
        assert!(image.has_full_mip_chain());
        let theirs = dds_crate_decode(&bytes);
        let ours = rgba_levels(&image);
        assert_eq!(ours.len(), theirs.len());
        for (level, (o, t)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!((o.0, o.1), (t.0, t.1), "{format:?} level {level}");
            // BC3's interpolated alpha may round differently by 1
            // (documented in the engine's bc.rs); colour must be equal.
            let worst =
                o.2.iter()
                    .zip(&t.2)
                    .map(|(a, b)| a.abs_diff(*b))
                    .max()
                    .unwrap_or(0);
            assert!(worst <= 1, "{format:?} level {level}: differs by {worst}");
            let colour_equal =
                o.2.chunks(4)
                    .zip(t.2.chunks(4))
                    .all(|(a, b)| a[..3] == b[..3]);
            assert!(colour_equal, "{format:?} level {level}: colour differs");
        }
        // BC with a full chain is kept as it is.
        assert_eq!(image.clone().complete_mip_chain().expect("chain"), image);
    }
}

#[test]
fn bc_blocks_equal_bcdec_on_random_blocks() {
    let bytes = noise(99, 16 * 20_000);
    let mut alpha_off_by_one = 0;
    for block in bytes.chunks_exact(16) {
        let b16: &[u8; 16] = block.try_into().expect("16");
        let b8: &[u8; 8] = block[..8].try_into().expect("8");
        let mut theirs = [0u8; 64];
        bcdec_rs::bc1(b8, &mut theirs, 16);
        assert_eq!(decode_bc1_block(b8).concat(), theirs, "BC1 {b8:02X?}");
        bcdec_rs::bc2(b16, &mut theirs, 16);
        assert_eq!(decode_bc2_block(b16).concat(), theirs, "BC2 {b16:02X?}");
        bcdec_rs::bc3(b16, &mut theirs, 16);
        let ours = decode_bc3_block(b16).concat();
        for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
            if i % 4 == 3 {
                // bcdec rounds BC3's alpha interpolants down ((6a0+a1+1)/7),
                // the engine to nearest: at most 1 apart.
                assert!(o.abs_diff(*t) <= 1, "BC3 alpha {b16:02X?}");
                alpha_off_by_one += usize::from(o != t);
            } else {
                assert_eq!(o, t, "BC3 colour {b16:02X?}");
            }
        }
    }
    // The rounding difference exists (so the tolerance is needed) but is rare.
    assert!(alpha_off_by_one > 0);
}

#[test]
fn uncompressed_dds_layouts_equal_the_dds_crate() {
    let (w, h) = (13, 6);
    let src = test_rgba(w, h);
    for format in [
        dds::Format::B8G8R8_UNORM,
        dds::Format::R8G8B8A8_UNORM,
        dds::Format::B8G8R8A8_UNORM,
        dds::Format::B8G8R8X8_UNORM,
        dds::Format::B5G6R5_UNORM,
        dds::Format::B5G5R5A1_UNORM,
    ] {
        for mips in [false, true] {
            let bytes = dds_crate_encode(format, w, h, &src, mips);
            let image = read(&bytes, &format!("{format:?}.dds"));
            assert_eq!(image.format, PixelFormat::Rgba8);
            assert_eq!(image.mip_count(), if mips { 4 } else { 1 }, "{format:?}");
            let theirs = dds_crate_decode(&bytes);
            let ours = rgba_levels(&image);
            assert_eq!(ours, theirs, "{format:?} mips {mips}");
        }
    }
}

#[test]
fn dds_mask_layouts_by_hand() {
    // RGB565: 0xF800 red, 0x07E0 green, 0x001F blue, 0x8410 = (16, 32, 16)
    // -> (round(16*255/31), round(32*255/63), ...) = (132, 130, 132).
    let px: Vec<u8> = [0xF800u16, 0x07E0, 0x001F, 0x8410]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let file = DdsHeader::masks(2, 2, 16, [0xF800, 0x07E0, 0x001F, 0]).file(&px);
    let image = read(&file, "rgb565.dds");
    assert_eq!(
        image.levels[0].data,
        [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 132, 130, 132, 255]
    );
    // A1R5G5B5: 0xFC00 = alpha 1 + red 31; 0x001F = alpha 0, blue 31.
    let px: Vec<u8> = [0xFC00u16, 0x001F]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let file = DdsHeader::masks(2, 1, 16, [0x7C00, 0x03E0, 0x001F, 0x8000]).file(&px);
    assert_eq!(
        read(&file, "a1rgb555.dds").levels[0].data,
        [255, 0, 0, 255, 0, 0, 255, 0]
    );
    // 24-bit BGR: bytes B, G, R.
    let file = DdsHeader::masks(1, 1, 24, [0xFF_0000, 0xFF00, 0xFF, 0]).file(&[1, 2, 3]);
    assert_eq!(read(&file, "bgr.dds").levels[0].data, [3, 2, 1, 255]);
    // 32-bit RGBA (A8B8G8R8): bytes R, G, B, A.
    let file =
        DdsHeader::masks(1, 1, 32, [0xFF, 0xFF00, 0xFF_0000, 0xFF00_0000]).file(&[10, 20, 30, 40]);
    assert_eq!(read(&file, "rgba.dds").levels[0].data, [10, 20, 30, 40]);
    // 32-bit BGRA with two mip levels: 2x1 then 1x1.
    let file = DdsHeader::masks(2, 1, 32, [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000])
        .with_mips(2)
        .file(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    let image = read(&file, "bgra.dds");
    assert_eq!(image.mip_count(), 2);
    assert_eq!(image.levels[0].data, [3, 2, 1, 4, 7, 6, 5, 8]);
    assert_eq!(image.levels[1].data, [11, 10, 9, 12]);
}

#[test]
fn dx10_bc1_and_legacy_dxt1_read_the_same() {
    // One BC1 block: red (0xF800) / blue (0x001F), all index 2 = (170, 0, 85).
    let block = [0x00, 0xF8, 0x1F, 0x00, 0xAA, 0xAA, 0xAA, 0xAA];
    let legacy = DdsHeader::fourcc(4, 4, b"DXT1").file(&block);
    let dx10 = DdsHeader::dx10(4, 4, 71).file(&block); // DXGI_FORMAT_BC1_UNORM
    let a = read(&legacy, "dxt1.dds");
    let b = read(&dx10, "dx10.dds");
    assert_eq!(a, b);
    assert_eq!(a.format, PixelFormat::Bc1);
    assert_eq!(a.levels[0].data, block);
    let rgba = a.decode_to_rgba8().expect("decode");
    assert!(rgba.levels[0]
        .data
        .chunks(4)
        .all(|p| p == [170, 0, 85, 255]));
    // A 5x5 BC1 image with its 3 levels: 4 blocks, 1, 1.
    let data = [block; 6].concat();
    let file = DdsHeader::fourcc(5, 5, b"DXT1").with_mips(3).file(&data);
    let image = read(&file, "dxt1-5x5.dds");
    let sizes: Vec<_> = image
        .levels
        .iter()
        .map(|l| (l.width, l.height, l.data.len()))
        .collect();
    assert_eq!(sizes, [(5, 5, 32), (2, 2, 8), (1, 1, 8)]);
}

/// A PNG of `width` x `height` with `color` pixels at `depth` bits.
fn png(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Vec<u8> {
    png_with(width, height, color, depth, data, None)
}

fn png_with(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
    palette: Option<Vec<u8>>,
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(color);
        enc.set_depth(depth);
        if let Some(p) = palette {
            enc.set_palette(p);
        }
        let mut w = enc.write_header().expect("png header");
        w.write_image_data(data).expect("png data");
    }
    out
}

#[test]
fn png_colour_types_to_rgba8() {
    use png::{BitDepth as D, ColorType as C};
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        (
            "rgba8",
            png(2, 1, C::Rgba, D::Eight, &[1, 2, 3, 4, 250, 251, 252, 253]),
            vec![1, 2, 3, 4, 250, 251, 252, 253],
        ),
        (
            "rgb8",
            png(2, 1, C::Rgb, D::Eight, &[1, 2, 3, 7, 8, 9]),
            vec![1, 2, 3, 255, 7, 8, 9, 255],
        ),
        (
            "grey8",
            png(2, 1, C::Grayscale, D::Eight, &[0, 200]),
            vec![0, 0, 0, 255, 200, 200, 200, 255],
        ),
        (
            "grey-alpha8",
            png(1, 1, C::GrayscaleAlpha, D::Eight, &[77, 33]),
            vec![77, 77, 77, 33],
        ),
        // 16-bit: 0xFFFF -> 255, 0x8080 -> 128, 0x0000 -> 0 (big-endian samples).
        (
            "rgb16",
            png(1, 1, C::Rgb, D::Sixteen, &[0xFF, 0xFF, 0x80, 0x80, 0, 0]),
            vec![255, 128, 0, 255],
        ),
        (
            "grey16",
            png(1, 1, C::Grayscale, D::Sixteen, &[0x80, 0x80]),
            vec![128, 128, 128, 255],
        ),
        (
            "indexed",
            png_with(
                2,
                1,
                C::Indexed,
                D::Eight,
                &[1, 0],
                Some(vec![10, 20, 30, 40, 50, 60]),
            ),
            vec![40, 50, 60, 255, 10, 20, 30, 255],
        ),
    ];
    for (name, bytes, want) in cases {
        let image = read_texture(&bytes, Path::new(name), "image/png")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(image.format, PixelFormat::Rgba8, "{name}");
        assert_eq!(image.mip_count(), 1);
        assert_eq!(image.levels[0].data, want, "{name}");
    }
}

/// A solid `width` x `height` RGB JPEG.
fn jpeg(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    let data: Vec<u8> = (0..width * height).flat_map(|_| rgb).collect();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 95)
        .encode(&data, width, height, image::ExtendedColorType::Rgb8)
        .expect("jpeg");
    out
}

#[test]
fn jpeg_solid_colour_decodes_to_its_size_and_colour() {
    let bytes = jpeg(24, 10, [200, 100, 50]);
    let image = read_texture(&bytes, Path::new("solid.jpg"), "jpg").expect("jpeg");
    assert_eq!((image.width(), image.height()), (24, 10));
    assert_eq!(image.format, PixelFormat::Rgba8);
    for p in image.levels[0].data.chunks(4) {
        for (got, want) in p[..3].iter().zip([200u8, 100, 50]) {
            assert!(got.abs_diff(want) <= 4, "{p:?}");
        }
        assert_eq!(p[3], 255);
    }
    // The hint does not decide: a JPEG named .png still reads as JPEG.
    assert!(read_texture(&bytes, Path::new("liar.png"), "image/png").is_ok());
}

/// A fresh empty folder under the system's temporary folder.
fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vkskin-texture-it-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn material_textures_from_files_and_embedded_bytes() {
    let dir = temp_dir("material");
    std::fs::create_dir_all(dir.join("Maps")).expect("mkdir");
    let file =
        DdsHeader::masks(4, 2, 32, [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000]).file(&[9u8; 4 * 2 * 4]);
    std::fs::write(dir.join("Maps/Skin.DDS"), &file).expect("write");
    // As a Windows-authored .x file names it: backslash, other case.
    let source = TextureSource::File(PathBuf::from("maps\\skin.dds"));
    let image = load_material_texture(&source, Some(&dir)).expect("loads");
    assert_eq!((image.width(), image.height()), (4, 2));
    assert_eq!(image.mip_count(), 3, "completed: 4x2, 2x1, 1x1");
    assert_eq!(image.levels[2].data, [9, 9, 9, 9]);

    let png = png(2, 2, png::ColorType::Rgb, png::BitDepth::Eight, &[255; 12]);
    let source = TextureSource::Embedded {
        mime: "image/png".into(),
        bytes: png,
    };
    let image = load_material_texture(&source, None).expect("embedded");
    assert_eq!(image.mip_count(), 2);
    assert_eq!(image.levels[1].data, [255, 255, 255, 255]);

    let missing = TextureSource::File(PathBuf::from("maps\\nothere.dds"));
    let err = load_material_texture(&missing, Some(&dir)).expect_err("missing");
    let text = err.to_string();
    let tried = dir.join("maps/nothere.dds");
    assert!(text.contains(&tried.display().to_string()), "{text}");
    assert!(text.contains("not found"), "{text}");
    assert_eq!(err.file, tried);
    let _ = std::fs::remove_dir_all(&dir);
}
