//! glTF materials as written by the test: the base colour factor, the
//! texture coordinate set the base-colour texture names (that set becomes
//! the mesh's `uvs`), the sampler's filters and wrap modes, the alpha mode
//! with its cutoff, sidedness, and `COLOR_0` vertex colours (float VEC4 and
//! normalised u8 VEC3). Bad values are errors naming the place. Expected
//! values follow from the numbers written here and the spec.

use std::path::Path;

use vkskin::assets::gltf::load_from_bytes_with_info;
use vkskin::assets::{
    AlphaMode, FaultKind, Filter, LoadError, LoadOptions, Model, Place, Sampler, TextureSource,
    Wrap,
};
use vkskin::glam::{Vec2, Vec4};
use vkskin_tests::{base64 as b64, f32_le_bytes};

/// One triangle: positions (36 bytes), TEXCOORD_0 (24), TEXCOORD_1 (24),
/// COLOR_0 as float VEC4 (48), COLOR_0 as normalised u8 VEC3 padded to 4
/// bytes a vertex (12); then a data-URI PNG image named by the texture.
fn doc(material: &str, sampler: &str, color_accessor: usize) -> String {
    let mut buf = f32_le_bytes(&[0., 0., 0., 1., 0., 0., 0., 1., 0.]);
    buf.extend(f32_le_bytes(&[0., 0., 1., 0., 0., 1.]));
    buf.extend(f32_le_bytes(&[0.5, 0.5, 0.25, 0.5, 0.5, 0.75]));
    buf.extend(f32_le_bytes(&[
        1., 0., 0., 1., 0., 1., 0., 0.5, 0., 0., 1., 0.25,
    ]));
    buf.extend([255u8, 0, 51, 0, 0, 255, 102, 0, 128, 128, 0, 0]);
    format!(
        r#"{{"asset":{{"version":"2.0"}},
        "buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}],
        "bufferViews":[{{"buffer":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":24}},
            {{"buffer":0,"byteOffset":60,"byteLength":24}},{{"buffer":0,"byteOffset":84,"byteLength":48}},
            {{"buffer":0,"byteOffset":132,"byteLength":12,"byteStride":4}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}},
            {{"bufferView":1,"componentType":5126,"count":3,"type":"VEC2"}},
            {{"bufferView":2,"componentType":5126,"count":3,"type":"VEC2"}},
            {{"bufferView":3,"componentType":5126,"count":3,"type":"VEC4"}},
            {{"bufferView":4,"componentType":5121,"normalized":true,"count":3,"type":"VEC3"}}],
        "images":[{{"uri":"data:image/png;base64,iVBORw0KGgo="}}],
        "samplers":[{sampler}],
        "textures":[{{"source":0,"sampler":0}}],
        "materials":[{material}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"TEXCOORD_0":1,"TEXCOORD_1":2,"COLOR_0":{color_accessor}}},"material":0}}]}}],
        "nodes":[{{"mesh":0}}]}}"#,
        buf.len(),
        b64(&buf)
    )
}

fn load(json: &str) -> Result<Model, LoadError> {
    load_from_bytes_with_info(
        Path::new("materials.gltf"),
        json.as_bytes(),
        None,
        &LoadOptions::default(),
    )
    .map(|(m, _)| m)
}

#[test]
fn material_sampler_alpha_and_the_named_uv_set() {
    let m = load(&doc(
        r#"{"name":"skin","pbrMetallicRoughness":{"baseColorFactor":[0.5,0.25,1,0.75],
            "baseColorTexture":{"index":0,"texCoord":1}},
            "alphaMode":"MASK","alphaCutoff":0.3,"doubleSided":true}"#,
        r#"{"magFilter":9728,"minFilter":9986,"wrapS":33071,"wrapT":33648}"#,
        3,
    ))
    .unwrap();
    let mat = &m.materials[0];
    assert_eq!(mat.name, "skin");
    assert_eq!(mat.base_color, Vec4::new(0.5, 0.25, 1.0, 0.75));
    assert!(
        matches!(mat.texture, Some(TextureSource::Embedded { ref mime, .. }) if mime == "image/png")
    );
    assert_eq!(mat.tex_coord, 1);
    // 9728 NEAREST; 9986 NEAREST_MIPMAP_LINEAR; 33071 CLAMP_TO_EDGE;
    // 33648 MIRRORED_REPEAT.
    assert_eq!(
        mat.sampler,
        Sampler {
            mag: Filter::Nearest,
            min: Filter::Nearest,
            mipmap: Some(Filter::Linear),
            wrap_s: Wrap::ClampToEdge,
            wrap_t: Wrap::MirroredRepeat,
        }
    );
    assert_eq!(mat.alpha_mode, AlphaMode::Mask { cutoff: 0.3 });
    assert!(mat.double_sided);
    // The mesh's uvs are TEXCOORD_1, the set the texture names.
    let mesh = &m.meshes[0];
    assert_eq!(
        mesh.uvs,
        vec![
            Vec2::new(0.5, 0.5),
            Vec2::new(0.25, 0.5),
            Vec2::new(0.5, 0.75)
        ]
    );
    // COLOR_0 as float VEC4.
    assert_eq!(mesh.colors[1], Vec4::new(0.0, 1.0, 0.0, 0.5));
}

#[test]
fn defaults_blend_and_normalised_u8_colours() {
    // No sampler filters: linear, mip-mapped; wraps default to REPEAT; the
    // MASK cutoff defaults to 0.5; texCoord 0.
    let m = load(&doc(
        r#"{"pbrMetallicRoughness":{"baseColorTexture":{"index":0}},"alphaMode":"BLEND"}"#,
        "{}",
        4,
    ))
    .unwrap();
    let mat = &m.materials[0];
    assert_eq!(mat.sampler, Sampler::default());
    assert_eq!(mat.sampler.mipmap, Some(Filter::Linear));
    assert_eq!(mat.sampler.wrap_s, Wrap::Repeat);
    assert_eq!(mat.alpha_mode, AlphaMode::Blend);
    assert!(!mat.double_sided);
    assert_eq!(mat.tex_coord, 0);
    assert_eq!(m.meshes[0].uvs[1], Vec2::new(1.0, 0.0));
    // u8 normalised VEC3: 255 -> 1, 51 -> 0.2, 102 -> 0.4, 128 -> 128/255;
    // alpha 1.
    let c = &m.meshes[0].colors;
    assert!(
        c[0].abs_diff_eq(Vec4::new(1.0, 0.0, 0.2, 1.0), 1e-6),
        "{c:?}"
    );
    assert!(
        c[1].abs_diff_eq(Vec4::new(0.0, 1.0, 0.4, 1.0), 1e-6),
        "{c:?}"
    );
    assert!(c[2].abs_diff_eq(Vec4::new(128.0 / 255.0, 128.0 / 255.0, 0.0, 1.0), 1e-6));
    let m = load(&doc(r#"{"alphaMode":"MASK"}"#, "{}", 3)).unwrap();
    assert_eq!(m.materials[0].alpha_mode, AlphaMode::Mask { cutoff: 0.5 });
}

#[test]
fn a_missing_uv_set_falls_back_to_set_0_with_a_warning() {
    let json = doc(
        r#"{"pbrMetallicRoughness":{"baseColorTexture":{"index":0,"texCoord":5}}}"#,
        "{}",
        3,
    );
    let m = load(&json).unwrap();
    assert_eq!(m.meshes[0].uvs[1], Vec2::new(1.0, 0.0));
    assert!(
        m.warnings.iter().any(|w| w.contains("TEXCOORD_5")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn bad_material_values_are_errors_naming_the_place() {
    for (material, sampler, place, kind) in [
        (
            r#"{"alphaMode":"GLOWING"}"#,
            "{}",
            "materials[0].alphaMode",
            FaultKind::Invalid,
        ),
        (
            r#"{"alphaMode":"MASK","alphaCutoff":-1}"#,
            "{}",
            "materials[0].alphaCutoff",
            FaultKind::Invalid,
        ),
        (
            r#"{"pbrMetallicRoughness":{"baseColorTexture":{"index":0}}}"#,
            r#"{"magFilter":1234}"#,
            "samplers[0].magFilter",
            FaultKind::Invalid,
        ),
        (
            r#"{"pbrMetallicRoughness":{"baseColorTexture":{"index":0}}}"#,
            r#"{"wrapS":7}"#,
            "samplers[0].wrapS",
            FaultKind::Invalid,
        ),
    ] {
        let e = load(&doc(material, sampler, 3)).unwrap_err();
        assert_eq!(e.kind, kind, "{material} {sampler}: {e}");
        assert_eq!(e.place, Place::Item(place.into()), "{e}");
        assert!(e.to_string().contains("materials.gltf"), "{e}");
    }
    // A texture naming a sampler the file lacks.
    let json = doc(
        r#"{"pbrMetallicRoughness":{"baseColorTexture":{"index":0}}}"#,
        "{}",
        3,
    )
    .replace(r#""sampler":0"#, r#""sampler":4"#);
    let e = load(&json).unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfRange, "{e}");
}
