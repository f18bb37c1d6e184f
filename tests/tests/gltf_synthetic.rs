//! Small glTF documents written in the test, for what the shared assets do
//! not cover: data-URI buffers, strips and fans, absent indices and normals,
//! points, sparse accessors, several influence sets, node matrices, a skinned
//! node without influences, duplicate channels. Expected values follow from
//! the numbers written here and the spec.

use std::path::Path;

use vkskin::anim::Interpolation;
use vkskin::assets::gltf::load_from_bytes_with_info;
use vkskin::assets::{FaultKind, LoadError, LoadOptions, Model, Place};
use vkskin::glam::{Quat, Vec3};
use vkskin_tests::{base64 as b64, f32_le_bytes as f32s};

/// A document over one data-URI buffer; `body` is the JSON after "buffers".
fn doc(buffer: &[u8], body: &str) -> String {
    format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}],{body}}}"#,
        buffer.len(),
        b64(buffer)
    )
}

fn load_opts(json: &str, opts: &LoadOptions) -> Result<Model, LoadError> {
    load_from_bytes_with_info(Path::new("synthetic.gltf"), json.as_bytes(), None, opts)
        .map(|(m, _)| m)
}

fn load(json: &str) -> Result<Model, LoadError> {
    load_opts(json, &LoadOptions::default())
}

/// Four corners of the unit square in the XY plane, counter-clockwise seen
/// from +Z: (0,0), (1,0), (0,1), (1,1) in strip order.
const QUAD: [f32; 12] = [0., 0., 0., 1., 0., 0., 0., 1., 0., 1., 1., 0.];

fn square(mode: u32) -> String {
    doc(
        &f32s(&QUAD),
        &format!(
            r#""bufferViews":[{{"buffer":0,"byteLength":48}}],
            "accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3"}}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"mode":{mode}}}]}}],
            "nodes":[{{"mesh":0}}]"#
        ),
    )
}

#[test]
fn data_uri_strip_without_indices_or_normals() {
    // Strip 0,1,2,3: triangles (0,1,2) and (1,3,2), both counter-clockwise
    // from +Z, so the computed normals are +Z.
    let m = load(&square(5)).unwrap();
    let mesh = &m.meshes[0];
    assert_eq!(mesh.indices, vec![0, 1, 2, 1, 3, 2]);
    assert!(mesh.normals.iter().all(|n| n.abs_diff_eq(Vec3::Z, 1e-6)));
    // Unskinned: bound rigidly to its node through a one-joint skin.
    assert_eq!(m.skins[mesh.skin].joints, vec![0]);
    assert_eq!(mesh.influences.per_vertex, 1);
}

#[test]
fn fan_and_list() {
    // Fan 0,1,2,3 per the spec: (1,2,0), (2,3,0).
    let m = load(&square(6)).unwrap();
    assert_eq!(m.meshes[0].indices, vec![1, 2, 0, 2, 3, 0]);
    // A list of 4 corners is not whole triangles.
    let e = load(&square(4)).unwrap_err();
    assert_eq!(e.kind, FaultKind::Count, "{e}");
    assert_eq!(e.place, Place::Item("meshes[0].primitives[0]".into()));
}

#[test]
fn points_and_lines_are_skipped_with_a_warning() {
    for mode in [0, 1, 2, 3] {
        let m = load(&square(mode)).unwrap();
        assert!(m.meshes.is_empty());
        assert!(
            m.warnings.iter().any(|w| w.contains("points and lines")),
            "{:?}",
            m.warnings
        );
    }
}

#[test]
fn sparse_accessor_replaces_elements() {
    // Base: the quad. Sparse: vertex 2 becomes (5, 6, 7).
    let mut buf = f32s(&QUAD);
    buf.extend_from_slice(&2u16.to_le_bytes());
    buf.extend_from_slice(&[0, 0]);
    buf.extend_from_slice(&f32s(&[5., 6., 7.]));
    let json = doc(
        &buf,
        r#""bufferViews":[{"buffer":0,"byteLength":48},{"buffer":0,"byteOffset":48,"byteLength":2},{"buffer":0,"byteOffset":52,"byteLength":12}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3",
            "sparse":{"count":1,"indices":{"bufferView":1,"componentType":5123},"values":{"bufferView":2}}}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0},"mode":5}]}],
        "nodes":[{"mesh":0}]"#,
    );
    let m = load(&json).unwrap();
    assert_eq!(m.meshes[0].positions[2], Vec3::new(5., 6., 7.));
    assert_eq!(m.meshes[0].positions[3], Vec3::new(1., 1., 0.));
    // A sparse index past the accessor's end is an error.
    let mut bad = buf.clone();
    bad[48..50].copy_from_slice(&9u16.to_le_bytes());
    let json = json.replace(&b64(&buf), &b64(&bad));
    let e = load(&json).unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfRange, "{e}");
    assert_eq!(e.place, Place::Item("accessors[0].sparse".into()));
}

/// One vertex skinned by five joints through two JOINTS/WEIGHTS sets:
/// weights 0.1, 0.3, 0.2, 0.15 (set 0) and 0.25, 0, 0, 0 (set 1), joints
/// 0..4; a skin of five chained joints under node 0.
fn five_influences() -> String {
    let mut buf = f32s(&QUAD[..9]); // 3 vertices: bytes 0..36
    for _ in 0..3 {
        buf.extend_from_slice(&[0, 1, 2, 3]); // JOINTS_0 u8, 36..48
    }
    for _ in 0..3 {
        buf.extend_from_slice(&[4, 0, 0, 0]); // JOINTS_1 u8, 48..60
    }
    for _ in 0..3 {
        buf.extend_from_slice(&f32s(&[0.1, 0.3, 0.2, 0.15])); // 60..108
    }
    for _ in 0..3 {
        buf.extend_from_slice(&f32s(&[0.25, 0., 0., 0.])); // 108..156
    }
    doc(
        &buf,
        r#""bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":12},
            {"buffer":0,"byteOffset":48,"byteLength":12},{"buffer":0,"byteOffset":60,"byteLength":48},
            {"buffer":0,"byteOffset":108,"byteLength":48}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"},
            {"bufferView":1,"componentType":5121,"count":3,"type":"VEC4"},
            {"bufferView":2,"componentType":5121,"count":3,"type":"VEC4"},
            {"bufferView":3,"componentType":5126,"count":3,"type":"VEC4"},
            {"bufferView":4,"componentType":5126,"count":3,"type":"VEC4"}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0,"JOINTS_0":1,"JOINTS_1":2,"WEIGHTS_0":3,"WEIGHTS_1":4}}]}],
        "skins":[{"joints":[1,2,3,4,5]}],
        "nodes":[{"mesh":0,"skin":0},{"children":[2]},{"children":[3]},{"children":[4]},{"children":[5]},{}]"#,
    )
}

#[test]
fn several_influence_sets_reduced_or_kept() {
    let json = five_influences();
    // Eight kept: all five in slot order (set 0, then set 1), summing to one
    // (they already do).
    let opts = LoadOptions {
        max_influences: 8,
        ..LoadOptions::default()
    };
    let m = load_opts(&json, &opts).unwrap();
    let inf = &m.meshes[0].influences;
    assert_eq!(inf.per_vertex, 5);
    let (j, w) = inf.vertex(0);
    assert_eq!(j, &[0, 1, 2, 3, 4]);
    for (a, b) in w.iter().zip([0.1, 0.3, 0.2, 0.15, 0.25]) {
        assert!((a - b).abs() < 1e-6, "{w:?}");
    }
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    // Four kept: the smallest (joint 0, 0.1) dropped, the rest / 0.9.
    let m = load(&json).unwrap();
    let (j, w) = m.meshes[0].influences.vertex(0);
    assert_eq!(j, &[1, 4, 2, 3]);
    for (a, b) in w.iter().zip([0.3 / 0.9, 0.25 / 0.9, 0.2 / 0.9, 0.15 / 0.9]) {
        assert!((a - b).abs() < 1e-6, "{w:?}");
    }
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("3 vertices had more than 4 influences (up to 5)")),
        "{:?}",
        m.warnings
    );
    // Skin joints are nodes 1..5, i.e. their skeleton joints.
    assert_eq!(m.skins[0].joints.len(), 5);
    assert_eq!(m.skeleton.len(), 6);
}

#[test]
fn skinned_node_without_influences_is_bound_rigidly() {
    let json = square(5).replace(
        r#""nodes":[{"mesh":0}]"#,
        r#""skins":[{"joints":[1]}],"nodes":[{"mesh":0,"skin":0},{}]"#,
    );
    let m = load(&json).unwrap();
    assert_eq!(m.skins.len(), 2);
    assert_eq!(m.meshes[0].skin, 1);
    assert!(
        m.warnings.iter().any(|w| w.contains("no JOINTS_0")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn node_matrix_is_decomposed() {
    // Column-major: scale 2 on x, then a 90 degree turn about Z, then
    // translation (1, 2, 3): columns (0,2,0), (-1,0,0), (0,0,1), (1,2,3).
    let json = square(5).replace(
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":0,"matrix":[0,2,0,0, -1,0,0,0, 0,0,1,0, 1,2,3,1]}]"#,
    );
    let m = load(&json).unwrap();
    let t = m.skeleton.bind_local()[0];
    assert!(t.translation.abs_diff_eq(Vec3::new(1., 2., 3.), 1e-6));
    assert!(t.scale.abs_diff_eq(Vec3::new(2., 1., 1.), 1e-6));
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    assert!(t.rotation.dot(q).abs() > 1.0 - 1e-6, "{:?}", t.rotation);
    // A projective bottom row is refused.
    let json = square(5).replace(
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":0,"matrix":[1,0,0,0.5, 0,1,0,0, 0,0,1,0, 0,0,0,1]}]"#,
    );
    let e = load(&json).unwrap_err();
    assert_eq!(
        (e.kind, e.place),
        (FaultKind::Invalid, Place::Item("nodes[0]".into()))
    );
}

/// The square with a translation animation on node 0: keys at 0 and 2 s.
fn animated(channels: &str, interpolation: &str) -> String {
    let mut buf = f32s(&QUAD);
    buf.extend_from_slice(&f32s(&[0., 2.])); // 48..56
    buf.extend_from_slice(&f32s(&[0., 0., 0., 4., 0., 0.])); // 56..80
    doc(
        &buf,
        &format!(
            r#""bufferViews":[{{"buffer":0,"byteLength":48}},{{"buffer":0,"byteOffset":48,"byteLength":8}},{{"buffer":0,"byteOffset":56,"byteLength":24}}],
            "accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3"}},
                {{"bufferView":1,"componentType":5126,"count":2,"type":"SCALAR"}},
                {{"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"}}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"mode":5}}]}}],
            "nodes":[{{"mesh":0}}],
            "animations":[{{"name":"slide","channels":[{channels}],
                "samplers":[{{"input":1,"output":2,"interpolation":"{interpolation}"}}]}}]"#
        ),
    )
}

#[test]
fn duplicate_channels_are_an_error() {
    let one = r#"{"sampler":0,"target":{"node":0,"path":"translation"}}"#;
    let (m, info) = load_from_bytes_with_info(
        Path::new("a.gltf"),
        animated(one, "STEP").as_bytes(),
        None,
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(m.clips[0].name(), "slide");
    assert_eq!(m.clips[0].duration(), 2.0);
    assert_eq!(info.clip_channels[0][0].interpolation, Interpolation::Step);
    assert_eq!(info.clip_channels[0][0].keys, 2);
    let e = load(&animated(&format!("{one},{one}"), "LINEAR")).unwrap_err();
    assert_eq!(e.kind, FaultKind::Invalid, "{e}");
    assert_eq!(e.place, Place::Item("animations[0].channels[1]".into()));
    // CUBICSPLINE needs three outputs per key: 2 keys, 2 outputs is a Count fault.
    let e = load(&animated(one, "CUBICSPLINE")).unwrap_err();
    assert_eq!(
        (e.kind, e.place),
        (FaultKind::Count, Place::Item("accessors[2]".into()))
    );
    // Weight channels are skipped with a warning.
    let w = r#"{"sampler":0,"target":{"node":0,"path":"weights"}}"#;
    let m = load(&animated(w, "LINEAR")).unwrap();
    assert_eq!(m.clips[0].track_count(), 0);
    assert!(
        m.warnings.iter().any(|x| x.contains("morph-target weight")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn required_extensions_are_checked() {
    let json = square(5).replacen(
        "{\"asset\"",
        "{\"extensionsRequired\":[\"KHR_draco_mesh_compression\"],\"asset\"",
        1,
    );
    let e = load(&json).unwrap_err();
    assert_eq!(e.kind, FaultKind::Unsupported);
    assert_eq!(e.place, Place::Item("extensionsRequired[0]".into()));
    let json = square(5).replacen(
        "{\"asset\"",
        "{\"extensionsRequired\":[\"KHR_mesh_quantization\"],\"asset\"",
        1,
    );
    load(&json).unwrap();
}
