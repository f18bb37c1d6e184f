//! Textured drawing on every path, under validation with synchronization
//! validation (teardown checked):
//!
//! - a quad covering a known screen rectangle with an 8x8 texture of
//!   distinct texels: the pixel at each texel's centre equals the texel the
//!   PNG holds (within 2/255), on every one of the 24 paths, on a UNORM and
//!   an sRGB target, from an RGBA8 and a BC1 texture (compressed on the
//!   GPU and decoded on the CPU);
//! - the built-in character with a checker texture, posed: the vertex,
//!   compute and CPU stages draw the same frame (99.9% of pixels within
//!   1/255);
//! - alpha modes: MASK discards below its cutoff, BLEND mixes over what is
//!   behind; a double-sided material is never culled;
//! - bad textures (missing, truncated, wrong size, unsupported DDS
//!   layouts, not an image): a warning naming the file and the fault, and
//!   the model draws with its factor.

mod texture_common;

use std::path::PathBuf;
use std::sync::Arc;

use glam::{Affine3A, Mat4, Vec2, Vec3, Vec4};
use vkskin::anim::{
    LocalToModelJob, PaletteHierarchy, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Skin,
    Transform,
};
use vkskin::assets::builtin::Character;
use vkskin::assets::{AlphaMode, Filter, Material, Model, Sampler, TextureSource, Wrap};
use vkskin::gpu::{vk, Device};
use vkskin::materials::{MaterialOptions, ModelMaterials};
use vkskin::mesh::{Influences, SkinnedMesh};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget};
use vkskin::skin::{paths, FrameSets, FrameUniforms, PathDesc, SkinPath, SkinPathConfig};
use vkskin_tests::gpu::{agreeing, GpuTest};

use texture_common::DdsHeader;

/// The target's side in pixels; the quad spans NDC -0.8..0.8: pixels
/// 16..144, 16 pixels per texel of the 8x8 texture.
const SIZE: u32 = 160;
const TEXELS: u32 = 8;
const CLEAR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// Texel `(i, j)` (column, row from the top) of the test texture: every
/// texel distinct, so a flipped or shifted lookup shows.
fn texel(i: u32, j: u32) -> [u8; 4] {
    [
        (i * 32 + 16) as u8,
        (j * 32 + 16) as u8,
        if (i + j).is_multiple_of(2) { 230 } else { 40 },
        255,
    ]
}

fn texels() -> Vec<u8> {
    (0..TEXELS)
        .flat_map(|j| (0..TEXELS).flat_map(move |i| texel(i, j)))
        .collect()
}

fn png(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = png::Encoder::new(&mut out, width, height);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        let mut w = e.write_header().expect("png header");
        w.write_image_data(rgba).expect("png data");
    }
    out
}

/// A BC1 block of one colour (RGB565 `c`, all indices 0).
fn bc1_solid(c: u16) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[0..2].copy_from_slice(&c.to_le_bytes());
    b[2..4].copy_from_slice(&c.to_le_bytes());
    b
}

/// An 8x8 BC1 DDS of 2x2 blocks, each a solid RGB565 colour, and the RGBA8
/// colour each block decodes to by the format's definition (5 and 6 bits
/// widened by bit replication).
fn bc1_dds() -> (Vec<u8>, [[u8; 4]; 4]) {
    let colours: [(u16, u16, u16); 4] = [(31, 0, 0), (0, 63, 0), (4, 20, 28), (20, 40, 8)];
    let mut data = Vec::new();
    let mut rgba = [[0u8; 4]; 4];
    for (k, &(r, g, b)) in colours.iter().enumerate() {
        data.extend_from_slice(&bc1_solid(r << 11 | g << 5 | b));
        let w5 = |v: u16| ((v << 3) | (v >> 2)) as u8;
        let w6 = |v: u16| ((v << 2) | (v >> 4)) as u8;
        rgba[k] = [w5(r), w6(g), w5(b), 255];
    }
    (DdsHeader::fourcc(8, 8, b"DXT1").file(&data), rgba)
}

/// One joint at the origin, one skin over it.
fn one_joint() -> (Skeleton, Skin) {
    let (skeleton, _) =
        Skeleton::new(vec!["root".into()], &[None], vec![Transform::IDENTITY]).expect("skeleton");
    let skin = Skin::whole_skeleton(&skeleton);
    (skeleton, skin)
}

/// A quad in clip space (the frame's `view_proj` is the identity) over NDC
/// `-0.8..0.8` at depth `z`, UV (0, 0) at the top left, rigidly bound to
/// one joint, drawn with `material`.
fn quad_mesh(z: f32, material: usize, colors: Vec<Vec4>) -> SkinnedMesh {
    let corners = [(-0.8, -0.8), (0.8, -0.8), (0.8, 0.8), (-0.8, 0.8)];
    SkinnedMesh {
        name: "quad".into(),
        positions: corners.iter().map(|&(x, y)| Vec3::new(x, y, z)).collect(),
        normals: vec![Vec3::Z; 4],
        uvs: corners
            .iter()
            .map(|&(x, y)| Vec2::new((x + 0.8) / 1.6, (y + 0.8) / 1.6))
            .collect(),
        colors,
        influences: Influences::new(1, vec![0; 4], vec![1.0; 4]),
        indices: vec![0, 1, 2, 0, 2, 3],
        skin: 0,
        material: Some(material),
        ..Default::default()
    }
}

fn nearest() -> Sampler {
    Sampler {
        mag: Filter::Nearest,
        min: Filter::Nearest,
        mipmap: None,
        wrap_s: Wrap::ClampToEdge,
        wrap_t: Wrap::ClampToEdge,
    }
}

fn quad_model(texture: TextureSource) -> Model {
    let (skeleton, skin) = one_joint();
    Model {
        name: "textured quad".into(),
        skeleton,
        skins: vec![skin],
        meshes: vec![quad_mesh(0.5, 0, Vec::new())],
        materials: vec![Material {
            name: "checker".into(),
            texture: Some(texture),
            sampler: nearest(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Draws every mesh of `model` once through `desc` (one instance, palette
/// `palettes[mesh.skin]`), opaque meshes first, and returns the pixels.
#[allow(clippy::too_many_arguments)]
fn draw(
    device: &Arc<Device>,
    desc: &'static PathDesc,
    model: &Model,
    materials: &ModelMaterials,
    palettes: &[Vec<Affine3A>],
    view_proj: Mat4,
    light: [f32; 4],
    format: vk::Format,
    cull: vk::CullModeFlags,
) -> Vec<u8> {
    let mut cfg = SkinPathConfig::new(format, OffscreenTarget::DEPTH_FORMAT, 1);
    cfg.cull_mode = cull;
    let mut path = SkinPath::new(device, desc, cfg).expect("path");
    let prepared: Vec<_> = model
        .meshes
        .iter()
        .map(|m| {
            let h = PaletteHierarchy::new(&model.skins[m.skin], &model.skeleton).expect("h");
            path.prepare(m, &h)
                .unwrap_or_else(|e| panic!("{}: {e}", desc.name))
        })
        .collect();
    let target = OffscreenTarget::with_format(device, SIZE, SIZE, format).expect("target");
    let mut frame_sets = FrameSets::new(device, 1).expect("frame sets");
    let mut frames = FramesInFlight::new(device, 1).expect("frames");
    let frame = frames.begin().expect("begin");
    path.begin_frame(frame.index).expect("begin frame");
    let mut batches = Vec::new();
    for (m, p) in model.meshes.iter().zip(&prepared) {
        let mut w = path.batch(frame.index, p, 1).expect("batch");
        batches.push(w.batch());
        let palette = &palettes[m.skin];
        w.write_all(|_| (palette.as_slice(), Affine3A::IDENTITY, [1.0; 4]))
            .expect("write");
    }
    frame_sets
        .write(
            frame.index,
            &FrameUniforms {
                view_proj: view_proj.to_cols_array_2d(),
                color: [1.0; 4],
                light,
            },
        )
        .expect("uniforms");
    let list: Vec<_> = batches.iter().zip(&prepared).collect();
    path.prepass(frame.cmd, frame.index, &list)
        .expect("prepass");
    target.begin(frame.cmd, CLEAR);
    for blended in [false, true] {
        for ((b, p), m) in list.iter().zip(&model.meshes) {
            let material = materials.for_mesh(m);
            if material.blend() != blended {
                continue;
            }
            path.record_draw_with(
                frame.cmd,
                frame.index,
                &frame_sets,
                b,
                p,
                vk::PolygonMode::FILL,
                None,
                Some(material),
            )
            .expect("record");
        }
    }
    target.end_and_copy(frame.cmd);
    path.finish(frame.cmd, frame.index).expect("finish");
    frames.submit(&frame, None, None).expect("submit");
    frames.wait(&frame).expect("wait");
    target.read_rgba().expect("read")
}

fn pixel(rgba: &[u8], x: u32, y: u32) -> [u8; 4] {
    let i = ((y * SIZE + x) * 4) as usize;
    [rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]]
}

/// The pixel at the centre of texel `(i, j)`'s 16x16 square.
fn texel_pixel(rgba: &[u8], i: u32, j: u32) -> [u8; 4] {
    pixel(rgba, 16 + 16 * i + 8, 16 + 16 * j + 8)
}

fn within(a: [u8; 4], b: [u8; 4], tol: u8) -> bool {
    a.iter().zip(&b).take(3).all(|(x, y)| x.abs_diff(*y) <= tol)
}

const FLAT: [f32; 4] = [0.3, 0.5, 1.0, 0.0];

fn identity_palette(model: &Model) -> Vec<Vec<Affine3A>> {
    model
        .skins
        .iter()
        .map(|s| vec![Affine3A::IDENTITY; s.len()])
        .collect()
}

#[test]
fn every_path_shows_the_texels_at_known_pixels() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let model = quad_model(TextureSource::Embedded {
        mime: "image/png".into(),
        bytes: png(TEXELS, TEXELS, &texels()),
    });
    let materials = ModelMaterials::new(d, &model).expect("materials");
    assert!(
        materials.warnings().is_empty(),
        "{:?}",
        materials.warnings()
    );
    assert_eq!(materials.texture_count(), 1);
    let palettes = identity_palette(&model);
    let mut checked = 0;
    for desc in paths() {
        for format in [vk::Format::R8G8B8A8_UNORM, vk::Format::R8G8B8A8_SRGB] {
            let px = draw(
                d,
                desc,
                &model,
                &materials,
                &palettes,
                Mat4::IDENTITY,
                FLAT,
                format,
                vk::CullModeFlags::NONE,
            );
            for j in 0..TEXELS {
                for i in 0..TEXELS {
                    let got = texel_pixel(&px, i, j);
                    assert!(
                        within(got, texel(i, j), 2),
                        "{} {format:?}: texel ({i}, {j}) drew {got:?}, the PNG holds {:?}",
                        desc.name,
                        texel(i, j)
                    );
                    checked += 1;
                }
            }
            // Outside the quad: the clear colour.
            assert_eq!(pixel(&px, 4, 4), [0, 0, 0, 255], "{}", desc.name);
        }
    }
    assert_eq!(checked, paths().len() * 2 * 64);
    drop(materials);
    gpu.finish();
}

#[test]
fn bc1_texels_compressed_and_decoded_on_each_stage() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let (dds, blocks) = bc1_dds();
    let model = quad_model(TextureSource::Embedded {
        mime: "image/vnd-ms.dds".into(),
        bytes: dds,
    });
    let palettes = identity_palette(&model);
    for keep_bc in [true, false] {
        let materials = ModelMaterials::with_options(
            d,
            &model,
            &MaterialOptions {
                keep_bc,
                ..Default::default()
            },
        )
        .expect("materials");
        assert!(materials.warnings().is_empty());
        // An 8x8 BC1 file of one level: its chain is completed on the CPU
        // (decoded to RGBA8), so it reaches the GPU uncompressed either way.
        assert_eq!(materials.compressed_count(), 0, "keep_bc {keep_bc}");
        for name in ["4x3-ssbo", "4x3-compute", "4x3-cpu"] {
            let desc = vkskin::skin::find(name).expect("path");
            let px = draw(
                d,
                desc,
                &model,
                &materials,
                &palettes,
                Mat4::IDENTITY,
                FLAT,
                vk::Format::R8G8B8A8_UNORM,
                vk::CullModeFlags::NONE,
            );
            for j in 0..TEXELS {
                for i in 0..TEXELS {
                    let want = blocks[((j / 4) * 2 + i / 4) as usize];
                    let got = texel_pixel(&px, i, j);
                    assert!(
                        within(got, want, 2),
                        "{name}: texel ({i}, {j}) drew {got:?}, BC1 defines {want:?}"
                    );
                }
            }
        }
    }
    gpu.finish();
}

#[test]
fn bc1_with_its_mip_chain_stays_compressed_where_the_device_samples_bc() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    // 8x8 with levels 8x8, 4x4, 2x2, 1x1 (one block each below level 0).
    let (_, blocks) = bc1_dds();
    let mut data = Vec::new();
    for (r, g, b) in [(31u16, 0u16, 0u16), (0, 63, 0), (4, 20, 28), (20, 40, 8)] {
        data.extend_from_slice(&bc1_solid(r << 11 | g << 5 | b));
    }
    for _ in 0..3 {
        data.extend_from_slice(&bc1_solid(0xFFFF));
    }
    let dds = DdsHeader::fourcc(8, 8, b"DXT1").with_mips(4).file(&data);
    let model = quad_model(TextureSource::Embedded {
        mime: String::new(),
        bytes: dds,
    });
    let palettes = identity_palette(&model);
    let mut frames = Vec::new();
    for keep_bc in [true, false] {
        let materials = ModelMaterials::with_options(
            d,
            &model,
            &MaterialOptions {
                keep_bc,
                ..Default::default()
            },
        )
        .expect("materials");
        let expect_bc = keep_bc && d.features().texture_compression_bc;
        eprintln!("keep_bc {keep_bc}: BC on the GPU {expect_bc}");
        assert_eq!(materials.compressed_count(), usize::from(expect_bc));
        assert_eq!(materials.materials()[0].texture().mip_levels(), 4);
        let format = materials.materials()[0].texture().format();
        assert_eq!(
            format,
            if expect_bc {
                vk::Format::BC1_RGBA_SRGB_BLOCK
            } else {
                vk::Format::R8G8B8A8_SRGB
            }
        );
        let px = draw(
            d,
            vkskin::skin::find("4x3-ssbo").expect("path"),
            &model,
            &materials,
            &palettes,
            Mat4::IDENTITY,
            FLAT,
            vk::Format::R8G8B8A8_UNORM,
            vk::CullModeFlags::NONE,
        );
        for j in 0..TEXELS {
            for i in 0..TEXELS {
                let want = blocks[((j / 4) * 2 + i / 4) as usize];
                let got = texel_pixel(&px, i, j);
                assert!(
                    within(got, want, 2),
                    "keep_bc {keep_bc}: texel ({i}, {j}) drew {got:?}, BC1 defines {want:?}"
                );
            }
        }
        frames.push(px);
    }
    assert_eq!(agreeing(&frames[0], &frames[1]), 1.0);
    gpu.finish();
}

/// The built-in character with planar texture coordinates (from its bind
/// positions) and a 64x64 checker of distinct colours, linear filtering
/// with mip maps, posed at 0.4 s of its first clip.
fn textured_character() -> (Model, Vec<Vec<Affine3A>>, Mat4) {
    let mut model = Character::model();
    let b = model.animated_bounds(16).expect("bounds");
    let (lo, hi) = (b.min, b.max);
    let mut rgba = Vec::new();
    for y in 0..64u32 {
        for x in 0..64u32 {
            let on = ((x / 8) + (y / 8)).is_multiple_of(2);
            rgba.extend_from_slice(&[
                if on { 230 } else { (x * 4) as u8 },
                (y * 4) as u8,
                if on { 60 } else { 200 },
                255,
            ]);
        }
    }
    model.materials = vec![Material {
        name: "checker".into(),
        texture: Some(TextureSource::Embedded {
            mime: "image/png".into(),
            bytes: png(64, 64, &rgba),
        }),
        ..Default::default()
    }];
    for m in &mut model.meshes {
        m.uvs = m
            .positions
            .iter()
            .map(|p| {
                Vec2::new(
                    (p.x - lo.x) / (hi.x - lo.x) * 3.0,
                    (hi.y - p.y) / (hi.y - lo.y) * 3.0,
                )
            })
            .collect();
        m.colors = m
            .positions
            .iter()
            .map(|p| Vec4::new(1.0, 0.6 + 0.4 * ((p.y - lo.y) / (hi.y - lo.y)), 1.0, 1.0))
            .collect();
        m.material = Some(0);
    }
    let clip = &model.clips[0];
    let mut locals = model.skeleton.bind_local().to_vec();
    SamplingJob {
        clip,
        context: &mut SamplingContext::new(clip),
        time: 0.4,
        mode: PlaybackMode::Loop,
        output: &mut locals,
    }
    .run()
    .expect("sample");
    let mut joints = vec![Affine3A::IDENTITY; model.skeleton.len()];
    LocalToModelJob::full(&model.skeleton, &locals, &mut joints)
        .run()
        .expect("ltm");
    let palettes: Vec<Vec<Affine3A>> = model
        .skins
        .iter()
        .map(|s| {
            let mut p = vec![Affine3A::IDENTITY; s.len()];
            s.skin_matrices(&joints, &mut p).expect("skin");
            p
        })
        .collect();
    // Framed on the posed vertices (linear blend on the CPU).
    let palettes: Vec<Vec<Affine3A>> = palettes;
    let (mut plo, mut phi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for m in &model.meshes {
        for (v, p) in m.positions.iter().enumerate() {
            let (js, ws) = m.influences.vertex(v);
            let q: Vec3 = js
                .iter()
                .zip(ws)
                .map(|(&j, &w)| palettes[m.skin][j as usize].transform_point3(*p) * w)
                .sum();
            plo = plo.min(q);
            phi = phi.max(q);
        }
    }
    let camera = Camera::framing(plo, phi, 0.5, 0.2, 45f32.to_radians(), 1.0);
    (model, palettes, camera.view_proj(1.0))
}

#[test]
fn the_textured_frame_is_the_same_on_the_three_stages() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let (model, palettes, view_proj) = textured_character();
    let materials = ModelMaterials::new(d, &model).expect("materials");
    assert_eq!(materials.texture_count(), 1);
    assert_eq!(materials.materials()[0].texture().mip_levels(), 7);
    let lit = [0.3, 0.5, 1.0, 1.0];
    let frames: Vec<(&str, Vec<u8>)> = ["4x3-ssbo", "4x3-compute", "4x3-cpu", "dq-texel", "dq-cpu"]
        .into_iter()
        .map(|name| {
            let desc = vkskin::skin::find(name).expect("path");
            let px = draw(
                d,
                desc,
                &model,
                &materials,
                &palettes,
                view_proj,
                lit,
                vk::Format::R8G8B8A8_UNORM,
                vk::CullModeFlags::NONE,
            );
            (name, px)
        })
        .collect();
    // The character covers a good part of the frame, textured: many
    // distinct colours.
    let (_, first) = &frames[0];
    if let Some(dir) = std::env::var_os("VKSKIN_TEST_DUMP") {
        for (name, px) in &frames {
            vkskin::render::write_png(
                &PathBuf::from(&dir).join(format!("{name}.png")),
                SIZE,
                SIZE,
                px,
            )
            .expect("dump");
        }
    }
    let covered = first
        .chunks_exact(4)
        .filter(|p| p[..3] != [0, 0, 0])
        .count();
    assert!(covered > (SIZE * SIZE / 16) as usize, "covered {covered}");
    let mut colours: Vec<[u8; 3]> = first.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(colours.len() > 200, "{} colours", colours.len());
    for pair in [(0, 1), (0, 2), (1, 2), (3, 4)] {
        let (a, pa) = &frames[pair.0];
        let (b, pb) = &frames[pair.1];
        let agree = agreeing(pa, pb);
        assert!(agree >= 0.999, "{a} vs {b}: {agree}");
        // Over the pixels either draws (the character) alone.
        let (pa, pb): (Vec<u8>, Vec<u8>) = pa
            .chunks_exact(4)
            .zip(pb.chunks_exact(4))
            .filter(|(p, q)| p[..3] != [0, 0, 0] || q[..3] != [0, 0, 0])
            .fold((Vec::new(), Vec::new()), |(mut x, mut y), (p, q)| {
                x.extend_from_slice(p);
                y.extend_from_slice(q);
                (x, y)
            });
        let on = agreeing(&pa, &pb);
        assert!(on >= 0.99, "{a} vs {b} on the character: {on}");
        eprintln!("{a} vs {b}: {agree:.5} of the frame, {on:.5} of the character");
    }
    drop(materials);
    gpu.finish();
}

#[test]
fn alpha_modes_and_double_sided() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    // Texture: left half alpha 64, right half alpha 255; colour white.
    let mut rgba = Vec::new();
    for _y in 0..TEXELS {
        for x in 0..TEXELS {
            rgba.extend_from_slice(&[255, 255, 255, if x < TEXELS / 2 { 64 } else { 255 }]);
        }
    }
    let tex = TextureSource::Embedded {
        mime: "image/png".into(),
        bytes: png(TEXELS, TEXELS, &rgba),
    };
    let (skeleton, skin) = one_joint();
    let red = Vec4::new(1.0, 0.0, 0.0, 1.0);
    // Behind (z 0.7): an opaque blue quad; in front (z 0.3) the material
    // under test, red.
    let model_with = |alpha_mode, double_sided, flip: bool| {
        let mut front = quad_mesh(0.3, 1, Vec::new());
        if flip {
            front.indices = vec![0, 2, 1, 0, 3, 2];
        }
        Model {
            name: "alpha".into(),
            skeleton: skeleton.clone(),
            skins: vec![skin.clone()],
            meshes: vec![front, quad_mesh(0.7, 0, Vec::new())],
            materials: vec![
                Material {
                    base_color: Vec4::new(0.0, 0.0, 1.0, 1.0),
                    ..Default::default()
                },
                Material {
                    base_color: red,
                    texture: Some(tex.clone()),
                    sampler: nearest(),
                    alpha_mode,
                    double_sided,
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    };
    let left = |px: &[u8]| pixel(px, 40, 80);
    let right = |px: &[u8]| pixel(px, 120, 80);
    let desc = vkskin::skin::find("4x3-ssbo").expect("path");
    let run = |model: &Model, cull| {
        let materials = ModelMaterials::new(d, model).expect("materials");
        let palettes = identity_palette(model);
        draw(
            d,
            desc,
            model,
            &materials,
            &palettes,
            Mat4::IDENTITY,
            FLAT,
            vk::Format::R8G8B8A8_UNORM,
            cull,
        )
    };
    // OPAQUE: red everywhere in front.
    let px = run(
        &model_with(AlphaMode::Opaque, false, false),
        vk::CullModeFlags::NONE,
    );
    assert_eq!(left(&px), [255, 0, 0, 255]);
    assert_eq!(right(&px), [255, 0, 0, 255]);
    // MASK 0.5: the left half (alpha 64/255) is discarded, blue shows.
    let px = run(
        &model_with(AlphaMode::Mask { cutoff: 0.5 }, false, false),
        vk::CullModeFlags::NONE,
    );
    assert_eq!(left(&px), [0, 0, 255, 255]);
    assert_eq!(right(&px), [255, 0, 0, 255]);
    // BLEND, drawn after the opaque quad though listed first: the left
    // half mixes red over blue by 64/255.
    let px = run(
        &model_with(AlphaMode::Blend, false, false),
        vk::CullModeFlags::NONE,
    );
    let a = 64.0 / 255.0;
    let want = [(255.0 * a) as u8, 0, (255.0 * (1.0 - a)) as u8];
    let got = left(&px);
    assert!(
        within(got, [want[0], want[1], want[2], 255], 2),
        "{got:?} vs {want:?}"
    );
    assert_eq!(right(&px), [255, 0, 0, 255]);
    // Culling back faces: `quad_mesh` is wound clockwise on the screen
    // (clip space, Y down): a back face, culled unless its material is
    // double-sided; wound the other way it is a front face.
    let px = run(
        &model_with(AlphaMode::Opaque, false, false),
        vk::CullModeFlags::BACK,
    );
    assert_eq!(
        right(&px),
        [0, 0, 0, 255],
        "the blue quad is a back face too"
    );
    let px = run(
        &model_with(AlphaMode::Opaque, false, true),
        vk::CullModeFlags::BACK,
    );
    assert_eq!(right(&px), [255, 0, 0, 255]);
    let px = run(
        &model_with(AlphaMode::Opaque, true, false),
        vk::CullModeFlags::BACK,
    );
    assert_eq!(right(&px), [255, 0, 0, 255]);
    gpu.finish();
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("vkskin-gpu-textures-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn bad_textures_are_warnings_naming_the_file_and_the_model_draws_with_its_factor() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let dir = temp_dir("bad");
    let good = png(TEXELS, TEXELS, &texels());
    let bc1 = [0u8; 8];
    // (file name, bytes or None for a missing file, what the warning says)
    let files: Vec<(&str, Option<Vec<u8>>, &str)> = vec![
        ("missing.png", None, "not found"),
        ("gone/away.dds", None, "not found"),
        ("empty.png", Some(Vec::new()), "empty"),
        ("truncated.png", Some(good[..40].to_vec()), "PNG"),
        ("text.jpg", Some(b"not a jpeg".to_vec()), "JPEG"),
        (
            "header-cut.dds",
            Some(DdsHeader::fourcc(4, 4, b"DXT1").bytes()[..60].to_vec()),
            "truncated",
        ),
        (
            "wrong-size.dds",
            Some(DdsHeader::fourcc(64, 64, b"DXT1").file(&bc1)),
            "needs 2048 bytes",
        ),
        (
            "zero-size.dds",
            Some(DdsHeader::fourcc(0, 4, b"DXT1").file(&bc1)),
            "zero",
        ),
        (
            "premultiplied.dds",
            Some(DdsHeader::fourcc(4, 4, b"DXT2").file(&[0; 16])),
            "premultiplied",
        ),
        (
            "bc7.dds",
            Some(DdsHeader::dx10(4, 4, 98).file(&[0; 16])),
            "BC7",
        ),
    ];
    let (skeleton, skin) = one_joint();
    let mut materials = Vec::new();
    for (name, bytes, _) in &files {
        if let Some(b) = bytes {
            std::fs::write(dir.join(name), b).expect("write");
        }
        materials.push(Material {
            name: name.to_string(),
            base_color: Vec4::new(0.0, 1.0, 0.0, 1.0),
            // Either slash: the loader normalises.
            texture: Some(TextureSource::File(PathBuf::from(name.replace('/', "\\")))),
            ..Default::default()
        });
    }
    // And embedded bytes that are no image.
    materials.push(Material {
        name: "embedded".into(),
        base_color: Vec4::new(0.0, 1.0, 0.0, 1.0),
        texture: Some(TextureSource::Embedded {
            mime: "image/png".into(),
            bytes: b"GIF89a".to_vec(),
        }),
        ..Default::default()
    });
    let model = Model {
        name: "bad".into(),
        source: Some(dir.join("bad.gltf")),
        skeleton,
        skins: vec![skin],
        meshes: (0..materials.len())
            .map(|k| quad_mesh(0.5, k, Vec::new()))
            .collect(),
        materials,
        ..Default::default()
    };
    let gpu_materials = ModelMaterials::new(d, &model).expect("bad textures are no error");
    let warnings = gpu_materials.warnings();
    assert_eq!(warnings.len(), files.len() + 1, "{warnings:#?}");
    for ((name, _, fault), w) in files.iter().zip(warnings) {
        let text = w.to_string();
        let file = name.rsplit('/').next().unwrap_or(name);
        assert!(text.contains(file), "{name}: {text}");
        assert!(text.contains(fault), "{name}: {text} lacks {fault:?}");
        assert!(text.contains("base colour factor"), "{text}");
        assert_eq!(w.material_name, *name);
    }
    let last = warnings.last().expect("embedded warning").to_string();
    assert!(last.contains("embedded texture (image/png)"), "{last}");
    assert_eq!(gpu_materials.texture_count(), 0);
    // Every quad draws green: its factor over the white texture.
    let px = draw(
        d,
        vkskin::skin::find("4x3-cpu").expect("path"),
        &model,
        &gpu_materials,
        &identity_palette(&model),
        Mat4::IDENTITY,
        FLAT,
        vk::Format::R8G8B8A8_UNORM,
        vk::CullModeFlags::NONE,
    );
    assert_eq!(pixel(&px, 80, 80), [0, 255, 0, 255]);
    drop(gpu_materials);
    let _ = std::fs::remove_dir_all(&dir);
    gpu.finish();
}
