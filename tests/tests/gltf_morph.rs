//! glTF morph targets and weight animations, on documents written here:
//! a skinned mesh of three primitives (a quad, points that are skipped, a
//! triangle) with three targets stored densely, sparsely over a buffer
//! view, sparsely over zeros, normals only and tangents only; the mesh
//! used by two nodes (one overriding `mesh.weights`); weight clips with
//! STEP, LINEAR, CUBICSPLINE and normalised-integer keys; and malformed
//! variants. Expected values follow from the numbers written here and the
//! spec, never from the loader.

use std::path::Path;

use vkskin::anim::Interpolation;
use vkskin::assets::gltf::{load_from_bytes_with_info, GltfInfo};
use vkskin::assets::{FaultKind, LoadError, LoadOptions, Model, Place};
use vkskin::glam::{Vec3, Vec4};
use vkskin_tests::{base64 as b64, f32_le_bytes as f32_bytes};

const FILE: &str = "morph_test.gltf";

fn comps(ty: &str) -> usize {
    match ty {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        _ => panic!("{ty}"),
    }
}

/// One data-URI buffer, its views and accessors, built up as they are
/// added; `json` wraps them around the rest of the document.
#[derive(Default)]
struct Doc {
    buf: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl Doc {
    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
        let off = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{off},"byteLength":{}}}"#,
            bytes.len()
        ));
        self.views.len() - 1
    }

    fn accessor(&mut self, json: String) -> usize {
        self.accessors.push(json);
        self.accessors.len() - 1
    }

    /// Float accessor of type `ty` over `v`.
    fn floats(&mut self, v: &[f32], ty: &str) -> usize {
        let count = v.len() / comps(ty);
        let view = self.view(&f32_bytes(v));
        self.accessor(format!(
            r#"{{"bufferView":{view},"componentType":5126,"count":{count},"type":"{ty}"}}"#
        ))
    }

    /// Float VEC3 accessor of `count` elements: `base` (a buffer view) or
    /// zeros (no buffer view), with `values` put at `indices` sparsely.
    fn sparse_vec3(
        &mut self,
        base: Option<&[f32]>,
        count: usize,
        indices: &[u16],
        values: &[f32],
    ) -> usize {
        let base = base.map(|b| {
            assert_eq!(b.len(), count * 3);
            let v = self.view(&f32_bytes(b));
            format!(r#""bufferView":{v},"#)
        });
        let ix: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let iv = self.view(&ix);
        let vv = self.view(&f32_bytes(values));
        self.accessor(format!(
            r#"{{{}"componentType":5126,"count":{count},"type":"VEC3","sparse":{{"count":{},"indices":{{"bufferView":{iv},"componentType":5123}},"values":{{"bufferView":{vv}}}}}}}"#,
            base.unwrap_or_default(),
            indices.len()
        ))
    }

    /// Normalised unsigned-byte scalars.
    fn unorm8(&mut self, v: &[u8]) -> usize {
        let view = self.view(v);
        self.accessor(format!(
            r#"{{"bufferView":{view},"componentType":5121,"normalized":true,"count":{},"type":"SCALAR"}}"#,
            v.len()
        ))
    }

    fn json(&self, body: &str) -> String {
        format!(
            r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}],"bufferViews":[{}],"accessors":[{}],{body}}}"#,
            self.buf.len(),
            b64(&self.buf),
            self.views.join(","),
            self.accessors.join(",")
        )
    }
}

/// The numbers the test document is made of; malformed variants change
/// some before writing it.
#[derive(Clone)]
struct Spec {
    /// Quad: (0,0), (1,0), (0,1), (1,1) in the XY plane.
    quad: Vec<f32>,
    tangents: Vec<f32>,
    /// Primitive 0, target 0: dense POSITION and NORMAL deltas.
    p0_t0_pos: Vec<f32>,
    p0_t0_nrm: Vec<f32>,
    /// Primitive 0, target 1: POSITION over a buffer view, elements 1 and 3
    /// replaced sparsely.
    p0_t1_base: Vec<f32>,
    p0_t1_sparse: Vec<f32>,
    /// Primitive 0, target 2: TANGENT deltas only.
    p0_t2_tan: Vec<f32>,
    /// Primitive 2 (a triangle), target 0: POSITION zeros but element 2.
    p2_t0_sparse: Vec<f32>,
    /// Primitive 2, target 1: NORMAL deltas only.
    p2_t1_nrm: Vec<f32>,
    /// Primitive 2, target 2: POSITION and TANGENT deltas.
    p2_t2_pos: Vec<f32>,
    p2_t2_tan: Vec<f32>,
    mesh_weights: Vec<f32>,
    node_weights: Vec<f32>,
    /// STEP clip on node 0: keys at 0, 1, 2 s.
    step_times: Vec<f32>,
    step_values: Vec<f32>,
    /// LINEAR clip on node 3: keys at 0, 2 s.
    linear_values: Vec<f32>,
    /// CUBICSPLINE clip on node 0: keys at 1 and 3 s, per key in-tangents,
    /// values, out-tangents.
    cubic_times: Vec<f32>,
    cubic_output: Vec<f32>,
    /// LINEAR clip on node 0 from normalised bytes: keys at 0 and 1 s.
    unorm_output: Vec<u8>,
}

impl Default for Spec {
    fn default() -> Self {
        Self {
            quad: vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 1., 1., 0.],
            tangents: vec![
                2., 0., 0., 1., // scaled: unit x, +1
                0., 3., 0., -1., // unit y, -1
                1., 1., 0., 1., // diagonal
                0., 0., -4., -1.,
            ],
            p0_t0_pos: vec![0.1, 0., 0., 0., 0.2, 0., 0., 0., 0.3, -0.1, -0.2, -0.3],
            p0_t0_nrm: vec![0., 0.1, 0., 0.2, 0., 0., 0., 0., -0.1, 0.3, 0.3, 0.],
            p0_t1_base: vec![1., 1., 1., 2., 2., 2., 3., 3., 3., 4., 4., 4.],
            p0_t1_sparse: vec![5., 6., 7., -8., -9., -10.],
            p0_t2_tan: vec![0., 0.5, 0., 0.5, 0., 0., 0., 0., 0.5, -0.5, 0., 0.],
            p2_t0_sparse: vec![7., 8., 9.],
            p2_t1_nrm: vec![1., 0., 0., 0., 1., 0., 0., 0., 1.],
            p2_t2_pos: vec![0., 0., 1., 0., 0., 2., 0., 0., 3.],
            p2_t2_tan: vec![0.25, 0., 0., 0., 0.25, 0., 0., 0., 0.25],
            mesh_weights: vec![0.1, 0.2, 0.3],
            node_weights: vec![0.5, -0.25, 1.5],
            step_times: vec![0., 1., 2.],
            step_values: vec![0., 0., 0., 1., 0.5, -1., 0.25, 0.75, 2.],
            linear_values: vec![0., 0., 0., 1., 2., -2.],
            cubic_times: vec![1., 3.],
            cubic_output: vec![
                // key 0: in-tangents, values, out-tangents
                9., 9., 9., 0., 1., 0.5, 1., -1., 0.25, //
                // key 1
                0.5, 2., -0.75, 1., 0., 1.5, 9., 9., 9.,
            ],
            unorm_output: vec![0, 255, 51, 255, 0, 102],
        }
    }
}

/// Writes the document: nodes 0 "body" (mesh 0, skin 0, its own weights),
/// 1 and 2 (the skin's joints), 3 (mesh 0 again, unnamed, unskinned), 4
/// (mesh 1 "plain", no targets). Mesh 0 "face" has targets named by
/// `extras.targetNames`; primitive 1 is points (skipped). `extra` is added
/// to mesh 0's JSON object, `mesh0_prim1_targets` replaces primitive 1's
/// targets.
fn write(s: &Spec, mesh0_prim1_targets: &str, extra: &str) -> String {
    let mut d = Doc::default();
    let pos = d.floats(&s.quad, "VEC3");
    let nrm = d.floats(&[0., 0., 1.].repeat(4), "VEC3");
    let tan = d.floats(&s.tangents, "VEC4");
    let joints = {
        let v = d.view(&[0, 1, 0, 0].repeat(4));
        d.accessor(format!(
            r#"{{"bufferView":{v},"componentType":5121,"count":4,"type":"VEC4"}}"#
        ))
    };
    let weights = d.floats(&[0.75, 0.25, 0., 0.].repeat(4), "VEC4");
    let p0_t0_pos = d.floats(&s.p0_t0_pos, "VEC3");
    let p0_t0_nrm = d.floats(&s.p0_t0_nrm, "VEC3");
    let p0_t1 = d.sparse_vec3(Some(&s.p0_t1_base), 4, &[1, 3], &s.p0_t1_sparse);
    let p0_t2 = d.floats(&s.p0_t2_tan, "VEC3");
    let tri = d.floats(&s.quad[..9], "VEC3");
    let p2_t0 = d.sparse_vec3(None, 3, &[2], &s.p2_t0_sparse);
    let p2_t1 = d.floats(&s.p2_t1_nrm, "VEC3");
    let p2_t2_pos = d.floats(&s.p2_t2_pos, "VEC3");
    let p2_t2_tan = d.floats(&s.p2_t2_tan, "VEC3");
    let ibm = d.floats(
        &[
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.,
        ]
        .repeat(2),
        "VEC4",
    );
    // (IBMs are MAT4: retype the accessor.)
    d.accessors[ibm] = d.accessors[ibm]
        .replace("\"count\":8", "\"count\":2")
        .replace("VEC4", "MAT4");
    let step_in = d.floats(&s.step_times, "SCALAR");
    let step_out = d.floats(&s.step_values, "SCALAR");
    let lin_in = d.floats(&[0., 2.], "SCALAR");
    let lin_out = d.floats(&s.linear_values, "SCALAR");
    let cub_in = d.floats(&s.cubic_times, "SCALAR");
    let cub_out = d.floats(&s.cubic_output, "SCALAR");
    let tr_out = d.floats(&[0., 0., 0., 0., 1., 0.], "VEC3");
    let un_in = d.floats(&[0., 1.], "SCALAR");
    let un_out = d.unorm8(&s.unorm_output);
    let weights_json = |w: &[f32]| {
        w.iter()
            .map(|x| format!("{x:?}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let body = format!(
        r#""meshes":[
            {{"name":"face","weights":[{mw}],"extras":{{"targetNames":["smile","blink","twist"]}}{extra},"primitives":[
                {{"attributes":{{"POSITION":{pos},"NORMAL":{nrm},"TANGENT":{tan},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}},"mode":5,
                  "targets":[{{"POSITION":{p0_t0_pos},"NORMAL":{p0_t0_nrm}}},{{"POSITION":{p0_t1}}},{{"TANGENT":{p0_t2}}}]}},
                {{"attributes":{{"POSITION":{tri}}},"mode":0,"targets":{mesh0_prim1_targets}}},
                {{"attributes":{{"POSITION":{tri}}},
                  "targets":[{{"POSITION":{p2_t0}}},{{"NORMAL":{p2_t1}}},{{"POSITION":{p2_t2_pos},"TANGENT":{p2_t2_tan}}}]}}]}},
            {{"name":"plain","primitives":[{{"attributes":{{"POSITION":{pos}}},"mode":5}}]}}],
        "skins":[{{"joints":[1,2],"inverseBindMatrices":{ibm}}}],
        "nodes":[{{"name":"body","mesh":0,"skin":0,"weights":[{nw}]}},{{"children":[2]}},{{"translation":[0,1,0]}},{{"mesh":0}},{{"mesh":1}}],
        "animations":[
            {{"name":"step","channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],
              "samplers":[{{"input":{step_in},"output":{step_out},"interpolation":"STEP"}}]}},
            {{"name":"linear","channels":[{{"sampler":0,"target":{{"node":3,"path":"weights"}}}},{{"sampler":0,"target":{{"node":4,"path":"weights"}}}}],
              "samplers":[{{"input":{lin_in},"output":{lin_out}}}]}},
            {{"name":"cubic","channels":[{{"sampler":1,"target":{{"node":1,"path":"translation"}}}},{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],
              "samplers":[{{"input":{cub_in},"output":{cub_out},"interpolation":"CUBICSPLINE"}},{{"input":{lin_in},"output":{tr_out}}}]}},
            {{"name":"unorm","channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],
              "samplers":[{{"input":{un_in},"output":{un_out}}}]}}]"#,
        mw = weights_json(&s.mesh_weights),
        nw = weights_json(&s.node_weights),
    );
    d.json(&body)
}

const POINT_TARGETS: &str = "[{},{},{}]";

fn good() -> String {
    write(&Spec::default(), POINT_TARGETS, "")
}

fn load(json: &str) -> Result<(Model, GltfInfo), LoadError> {
    load_from_bytes_with_info(
        Path::new(FILE),
        json.as_bytes(),
        None,
        &LoadOptions::default(),
    )
}

fn vec3s(v: &[f32]) -> Vec<Vec3> {
    v.chunks_exact(3).map(Vec3::from_slice).collect()
}

#[test]
fn targets_are_read_per_primitive() {
    let s = Spec::default();
    let (m, info) = load(&good()).unwrap();
    // Node 0: primitives 0 and 2 (1 is points); node 3 the same; node 4.
    assert_eq!(m.meshes.len(), 5, "{:?}", info.mesh_sources);
    let prims: Vec<(usize, usize)> = info
        .mesh_sources
        .iter()
        .map(|s| (s.node, s.primitive))
        .collect();
    assert_eq!(prims, vec![(0, 0), (0, 2), (3, 0), (3, 2), (4, 0)]);
    for mesh in &m.meshes {
        mesh.validate().unwrap();
    }

    let quad = &m.meshes[0].morph;
    assert_eq!(quad.len(), 3);
    // Dense position and normal deltas.
    assert_eq!(quad.targets[0].positions, vec3s(&s.p0_t0_pos));
    assert_eq!(quad.targets[0].normals, vec3s(&s.p0_t0_nrm));
    assert!(quad.targets[0].tangents.is_empty());
    assert!(!quad.targets[0].sparse);
    // Sparse over a buffer view: the base with elements 1 and 3 replaced.
    let mut want = s.p0_t1_base.clone();
    want[3..6].copy_from_slice(&s.p0_t1_sparse[..3]);
    want[9..12].copy_from_slice(&s.p0_t1_sparse[3..]);
    assert_eq!(quad.targets[1].positions, vec3s(&want));
    assert!(quad.targets[1].normals.is_empty() && quad.targets[1].tangents.is_empty());
    assert!(quad.targets[1].sparse);
    // Tangent deltas only.
    assert_eq!(quad.targets[2].tangents, vec3s(&s.p0_t2_tan));
    assert!(quad.targets[2].positions.is_empty() && quad.targets[2].normals.is_empty());
    assert!(!quad.targets[2].sparse);

    let tri = &m.meshes[1].morph;
    assert_eq!(tri.len(), 3);
    // Sparse with no buffer view: zeros but element 2.
    let mut want = vec![0.0; 9];
    want[6..9].copy_from_slice(&s.p2_t0_sparse);
    assert_eq!(tri.targets[0].positions, vec3s(&want));
    assert!(tri.targets[0].sparse);
    assert_eq!(tri.targets[1].normals, vec3s(&s.p2_t1_nrm));
    assert!(tri.targets[1].positions.is_empty());
    assert_eq!(tri.targets[2].positions, vec3s(&s.p2_t2_pos));
    assert_eq!(tri.targets[2].tangents, vec3s(&s.p2_t2_tan));
    assert!(tri.targets[2].normals.is_empty());

    // Node 3 instances the same primitives: the same deltas.
    assert_eq!(m.meshes[2].morph.targets, quad.targets);
    assert_eq!(m.meshes[3].morph.targets, tri.targets);
    assert!(m.meshes[4].morph.is_empty());
}

#[test]
fn tangents_are_normalised_with_their_sign() {
    let s = Spec::default();
    let (m, _) = load(&good()).unwrap();
    let want: Vec<Vec4> = s
        .tangents
        .chunks_exact(4)
        .map(|t| {
            let xyz = Vec3::from_slice(t);
            (xyz / xyz.length()).extend(t[3].signum())
        })
        .collect();
    let got = &m.meshes[0].tangents;
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!(g.abs_diff_eq(*w, 1e-6), "{got:?} vs {want:?}");
    }
    // The triangle has no TANGENT attribute.
    assert!(m.meshes[1].tangents.is_empty());
    // A TANGENT count unlike POSITION's is an error at the attribute.
    let mut bad = s.clone();
    bad.tangents.truncate(12);
    let e = load(&write(&bad, POINT_TARGETS, "")).unwrap_err();
    expect(
        &e,
        FaultKind::Count,
        "meshes[0].primitives[0].attributes.TANGENT",
    );
}

#[test]
fn morph_sets_per_node_with_names_and_defaults() {
    let s = Spec::default();
    let (m, info) = load(&good()).unwrap();
    assert_eq!(m.morph_sets.len(), 2);
    let body = &m.morph_sets[0];
    assert_eq!(body.name, "body");
    assert_eq!(body.target_names, vec!["smile", "blink", "twist"]);
    // node.weights overrides mesh.weights, unclamped.
    assert_eq!(body.defaults, s.node_weights);
    assert_eq!(body.first_weight, 0);
    let face = &m.morph_sets[1];
    // Node 3 is unnamed: the mesh's name; mesh.weights.
    assert_eq!(face.name, "face");
    assert_eq!(face.target_names, body.target_names);
    assert_eq!(face.defaults, s.mesh_weights);
    assert_eq!(face.first_weight, 3);
    let firsts: Vec<usize> = m.meshes.iter().map(|x| x.morph.first_weight).collect();
    assert_eq!(&firsts[..4], &[0, 0, 3, 3]);
    assert_eq!(
        info.morph_set_of_node,
        vec![Some(0), None, None, Some(1), None]
    );
    assert_eq!(m.morph_weight_count(), 6);
    let mut want = s.node_weights.clone();
    want.extend_from_slice(&s.mesh_weights);
    assert_eq!(m.default_morph_weights(), want);
    // Each mesh's slice of the vector is its node's weights.
    assert_eq!(
        m.meshes[3].morph.weights(&want).unwrap(),
        &s.mesh_weights[..]
    );

    // Without mesh.weights and node.weights: zeros.
    let json = edit(&good(), r#""weights":[0.1,0.2,0.3],"#, "");
    let json = edit(&json, r#","weights":[0.5,-0.25,1.5]"#, "");
    let (m, _) = load(&json).unwrap();
    assert_eq!(m.default_morph_weights(), vec![0.0; 6]);
}

#[test]
fn target_names_of_the_wrong_length_or_shape_are_ignored() {
    for names in [r#"["a","b"]"#, r#""smile""#, r#"["a",2,"c"]"#] {
        let json = edit(&good(), r#"["smile","blink","twist"]"#, names);
        let (m, _) = load(&json).unwrap();
        assert_eq!(m.morph_sets[0].target_names, vec![""; 3], "{names}");
        assert!(
            m.warnings
                .iter()
                .any(|w| w.contains("meshes[0].extras.targetNames")),
            "{names}: {:?}",
            m.warnings
        );
    }
    // No extras at all: empty names, no warning about them.
    let json = edit(
        &good(),
        r#","extras":{"targetNames":["smile","blink","twist"]}"#,
        "",
    );
    let (m, _) = load(&json).unwrap();
    assert_eq!(m.morph_sets[1].target_names, vec![""; 3]);
    assert!(!m.warnings.iter().any(|w| w.contains("targetNames")));
}

#[test]
fn weight_channels_become_tracks_over_their_node_set() {
    let (m, info) = load(&good()).unwrap();
    assert_eq!(m.clips.len(), 4);
    let ch = &info.clip_channels;
    // STEP on node 0: weights 0..3, three keys.
    assert_eq!(ch[0].len(), 1);
    assert_eq!(ch[0][0].path, "weights");
    assert_eq!(ch[0][0].node, 0);
    assert_eq!(ch[0][0].weights, Some(0..3));
    assert_eq!(ch[0][0].keys, 3);
    assert_eq!(ch[0][0].interpolation, Interpolation::Step);
    assert_eq!((ch[0][0].start, ch[0][0].end), (0.0, 2.0));
    // LINEAR on node 3 (weights 3..6); the channel on node 4 (no targets)
    // is skipped with a warning.
    assert_eq!(ch[1].len(), 1);
    assert_eq!(ch[1][0].weights, Some(3..6));
    assert_eq!(ch[1][0].interpolation, Interpolation::Linear);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("animations[1].channels[1]") && w.contains("nodes[4]")),
        "{:?}",
        m.warnings
    );
    // CUBICSPLINE beside a translation channel: both read, 1..3 s.
    assert_eq!(ch[2].len(), 2);
    assert_eq!(ch[2][0].path, "translation");
    assert_eq!(ch[2][0].weights, None);
    assert_eq!(ch[2][1].weights, Some(0..3));
    assert_eq!(ch[2][1].keys, 2);
    assert_eq!(ch[2][1].interpolation, Interpolation::CubicSpline);
    assert_eq!((ch[2][1].start, ch[2][1].end), (1.0, 3.0));
    assert_eq!(m.clips[2].duration(), 3.0);
    assert_eq!(m.clips[0].duration(), 2.0);
    assert_eq!(ch[3][0].weights, Some(0..3));
}

fn assert_close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() < 1e-5,
            "{what}[{i}]: {got:?}, expected {want:?}"
        );
    }
}

/// The spec's cubic Hermite spline between keys `(t0, v0, out-tangent b0)`
/// and `(t1, v1, in-tangent a1)` at `t`: tangents scaled by `t1 - t0`.
fn hermite(t0: f32, v0: f32, b0: f32, t1: f32, v1: f32, a1: f32, t: f32) -> f32 {
    let td = t1 - t0;
    let u = (t - t0) / td;
    let (u2, u3) = (u * u, u * u * u);
    (2. * u3 - 3. * u2 + 1.) * v0
        + (u3 - 2. * u2 + u) * td * b0
        + (-2. * u3 + 3. * u2) * v1
        + (u3 - u2) * td * a1
}

#[test]
fn sampled_weights_follow_the_keys() {
    use vkskin::anim::PlaybackMode;
    let s = Spec::default();
    let (m, _) = load(&good()).unwrap();
    let at = |clip: usize, t: f32| {
        m.morph_weights(Some(&m.clips[clip]), t, PlaybackMode::Clamp)
            .unwrap()
    };
    let key = |v: &[f32], k: usize| v[k * 3..k * 3 + 3].to_vec();
    // The tracks as built: one per clip, over the node's run.
    let tracks: Vec<_> = m.clips[2].weight_tracks().collect();
    assert_eq!(tracks.len(), 1);
    assert_eq!(
        (tracks[0].first, tracks[0].count, tracks[0].keys),
        (0, 3, 2)
    );
    assert_eq!(m.clips[1].weight_tracks().next().unwrap().first, 3);
    for clip in &m.clips {
        assert_eq!(
            clip.weight_count(),
            clip.weight_tracks().map(|t| t.first + 3).max().unwrap()
        );
    }

    // STEP on node 0 holds each key until the next; node 3 keeps its
    // defaults (mesh.weights).
    for (t, k) in [
        (0.0, 0),
        (0.5, 0),
        (1.0, 1),
        (1.5, 1),
        (1.99, 1),
        (2.0, 2),
        (5.0, 2),
    ] {
        let w = at(0, t);
        assert_close(&format!("step at {t}"), &w[..3], &key(&s.step_values, k));
        assert_close(&format!("step at {t}"), &w[3..], &s.mesh_weights);
    }
    // LINEAR on node 3 over 0..2 s; node 0 keeps node.weights.
    let (k0, k1) = (key(&s.linear_values, 0), key(&s.linear_values, 1));
    for t in [0.0f32, 0.5, 1.0, 2.0] {
        let u = t / 2.0;
        let want: Vec<f32> = k0.iter().zip(&k1).map(|(a, b)| a + (b - a) * u).collect();
        let w = at(1, t);
        assert_close(&format!("linear at {t}"), &w[3..], &want);
        assert_close(&format!("linear at {t}"), &w[..3], &s.node_weights);
    }
    // CUBICSPLINE on node 0, keys at 1 and 3 s: per key in-tangents,
    // values, out-tangents of three weights each.
    let o = &s.cubic_output;
    let (v0, b0) = (&o[3..6], &o[6..9]);
    let (a1, v1) = (&o[9..12], &o[12..15]);
    for t in [1.0f32, 1.5, 2.0, 2.75, 3.0] {
        let want: Vec<f32> = (0..3)
            .map(|c| hermite(1., v0[c], b0[c], 3., v1[c], a1[c], t))
            .collect();
        assert_close(&format!("cubic at {t}"), &at(2, t)[..3], &want);
    }
    // Before the first key: the first value.
    assert_close("cubic at 0", &at(2, 0.0)[..3], v0);
    // At the midpoint u = 0.5, by hand: (v0 + v1) / 2 + td/8 (b0 - a1).
    let mid: Vec<f32> = (0..3)
        .map(|c| 0.5 * (v0[c] + v1[c]) + 2.0 / 8.0 * (b0[c] - a1[c]))
        .collect();
    assert_close("cubic midpoint", &at(2, 2.0)[..3], &mid);
    // Normalised bytes: c / 255, linear between the keys at 0 and 1 s.
    let n: Vec<f32> = s.unorm_output.iter().map(|&b| b as f32 / 255.0).collect();
    assert_close("unorm at 0", &at(3, 0.0)[..3], &n[..3]);
    assert_close("unorm at 1", &at(3, 1.0)[..3], &n[3..]);
    let half: Vec<f32> = (0..3).map(|c| 0.5 * (n[c] + n[c + 3])).collect();
    assert_close("unorm at 0.5", &at(3, 0.5)[..3], &half);
    // No clip: the defaults.
    let mut defaults = s.node_weights.clone();
    defaults.extend_from_slice(&s.mesh_weights);
    assert_eq!(
        m.morph_weights(None, 0.0, PlaybackMode::Clamp).unwrap(),
        defaults
    );
}

/// Asserts `e` is a `kind` fault at `place` whose text names the file.
fn expect(e: &LoadError, kind: FaultKind, place: &str) {
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.place, Place::Item(place.to_string()), "{e}");
    assert_eq!(e.file, Path::new(FILE));
    let text = e.to_string();
    assert!(text.contains(FILE) && text.contains(place), "{text}");
}

/// `json` with `from` replaced by `to` (which must change it).
fn edit(json: &str, from: &str, to: &str) -> String {
    let out = json.replace(from, to);
    assert_ne!(out, json, "{from:?} not found");
    out
}

fn expect_err(json: &str, kind: FaultKind, place: &str) -> LoadError {
    match load(json) {
        Ok(_) => panic!("loaded; expected {kind:?} at {place}"),
        Err(e) => {
            expect(&e, kind, place);
            e
        }
    }
}

#[test]
fn malformed_target_counts() {
    // Primitive 1 with two targets where the others have three.
    let e = expect_err(
        &write(&Spec::default(), "[{},{}]", ""),
        FaultKind::Count,
        "meshes[0]",
    );
    assert!(e.message.contains("primitives[1] has 2"), "{e}");
    // Primitive 1 without targets at all.
    let json = edit(&good(), r#","mode":0,"targets":[{},{},{}]"#, r#","mode":0"#);
    expect_err(&json, FaultKind::Count, "meshes[0]");
}

#[test]
fn malformed_delta_counts_and_types() {
    // Three position deltas for four vertices.
    let mut s = Spec::default();
    s.p0_t0_pos.truncate(9);
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "meshes[0].primitives[0].targets[0].POSITION",
    );
    // Five normal deltas for four vertices.
    let mut s = Spec::default();
    s.p0_t0_nrm.extend_from_slice(&[0., 0., 0.]);
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "meshes[0].primitives[0].targets[0].NORMAL",
    );
    // Tangent deltas of the triangle: two for three vertices.
    let mut s = Spec::default();
    s.p2_t2_tan.truncate(6);
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "meshes[0].primitives[2].targets[2].TANGENT",
    );
    // A VEC4 accessor (accessor 2, the vertex tangents) as a target's
    // deltas (accessor 8).
    let json = edit(&good(), r#"{"TANGENT":8}"#, r#"{"TANGENT":2}"#);
    expect_err(
        &json,
        FaultKind::Invalid,
        "meshes[0].primitives[0].targets[2].TANGENT",
    );
    // An accessor index past the end.
    let json = edit(&good(), r#"{"TANGENT":8}"#, r#"{"TANGENT":999}"#);
    expect_err(
        &json,
        FaultKind::OutOfRange,
        "meshes[0].primitives[0].targets[2].TANGENT",
    );
}

#[test]
fn malformed_non_finite_deltas() {
    let mut s = Spec::default();
    s.p0_t0_pos[4] = f32::NAN;
    let e = expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::NonFinite,
        "meshes[0].primitives[0].targets[0].POSITION",
    );
    assert!(e.message.contains("element 1"), "{e}");
    // In the sparse values of a target with no buffer view.
    let mut s = Spec::default();
    s.p2_t0_sparse[2] = f32::INFINITY;
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::NonFinite,
        "meshes[0].primitives[2].targets[0].POSITION",
    );
}

#[test]
fn malformed_default_weights() {
    let mut s = Spec::default();
    s.mesh_weights.pop();
    let e = expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "meshes[0].weights",
    );
    assert!(e.message.contains("2 weights"), "{e}");
    let mut s = Spec::default();
    s.node_weights.push(1.0);
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "nodes[0].weights",
    );
    // Weights on a node whose mesh has no targets.
    let json = edit(&good(), r#"{"mesh":1}"#, r#"{"mesh":1,"weights":[1.0]}"#);
    let e = expect_err(&json, FaultKind::Count, "nodes[4].weights");
    assert!(e.message.contains("0 morph targets"), "{e}");
}

#[test]
fn malformed_weight_channels() {
    // STEP: 8 values for 3 keys of 3 weights.
    let mut s = Spec::default();
    s.step_values.pop();
    let e = expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "animations[0].channels[0]",
    );
    assert!(e.message.contains("8 values"), "{e}");
    // CUBICSPLINE needs 3 * keys * count: 6 is one value per key and weight.
    let mut s = Spec::default();
    s.cubic_output.truncate(6);
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::Count,
        "animations[2].channels[1]",
    );
    // A non-finite key.
    let mut s = Spec::default();
    s.linear_values[4] = f32::NAN;
    expect_err(
        &write(&s, POINT_TARGETS, ""),
        FaultKind::NonFinite,
        "animations[1].channels[0]",
    );
    // Two weight channels on node 0 in one animation.
    let json = edit(
        &good(),
        r#""channels":[{"sampler":0,"target":{"node":0,"path":"weights"}}],"#,
        r#""channels":[{"sampler":0,"target":{"node":0,"path":"weights"}},{"sampler":0,"target":{"node":0,"path":"weights"}}],"#,
    );
    expect_err(&json, FaultKind::Invalid, "animations[0].channels[1]");
    // Weights from a VEC3 accessor (the translation output).
    let json = edit(
        &good(),
        r#"{"sampler":1,"target":{"node":1,"path":"translation"}},{"sampler":0,"target":{"node":0,"path":"weights"}}"#,
        r#"{"sampler":1,"target":{"node":0,"path":"weights"}}"#,
    );
    expect_err(&json, FaultKind::Invalid, "animations[2].channels[0]");
    // Integer weights not marked normalized.
    let json = edit(&good(), r#""normalized":true,"#, "");
    expect_err(&json, FaultKind::Invalid, "animations[3].channels[0]");
}

/// The malformed cases as a table: each an `Err` of its kind at its place,
/// naming the file; the unedited document loads.
#[test]
fn malformed_table() {
    type Edit = fn(&mut Spec);
    let cases: [(Edit, FaultKind, &str); 11] = [
        (
            |s| s.p0_t0_pos.truncate(9),
            FaultKind::Count,
            "meshes[0].primitives[0].targets[0].POSITION",
        ),
        (
            |s| s.p2_t2_tan.truncate(6),
            FaultKind::Count,
            "meshes[0].primitives[2].targets[2].TANGENT",
        ),
        (
            |s| s.p0_t0_nrm[0] = f32::NAN,
            FaultKind::NonFinite,
            "meshes[0].primitives[0].targets[0].NORMAL",
        ),
        (
            |s| s.p0_t1_sparse[0] = f32::NEG_INFINITY,
            FaultKind::NonFinite,
            "meshes[0].primitives[0].targets[1].POSITION",
        ),
        (
            |s| s.p0_t1_base[2] = f32::NAN,
            FaultKind::NonFinite,
            "meshes[0].primitives[0].targets[1].POSITION",
        ),
        (
            |s| s.mesh_weights.push(0.0),
            FaultKind::Count,
            "meshes[0].weights",
        ),
        (
            |s| s.node_weights.clear(),
            FaultKind::Count,
            "nodes[0].weights",
        ),
        (
            |s| s.step_values.push(0.0),
            FaultKind::Count,
            "animations[0].channels[0]",
        ),
        (
            |s| s.cubic_output.truncate(9),
            FaultKind::Count,
            "animations[2].channels[1]",
        ),
        (
            |s| {
                s.unorm_output.pop();
            },
            FaultKind::Count,
            "animations[3].channels[0]",
        ),
        (
            |s| s.tangents.truncate(8),
            FaultKind::Count,
            "meshes[0].primitives[0].attributes.TANGENT",
        ),
    ];
    load(&good()).unwrap();
    for (edit, kind, place) in cases {
        let mut s = Spec::default();
        edit(&mut s);
        expect_err(&write(&s, POINT_TARGETS, ""), kind, place);
    }
}
