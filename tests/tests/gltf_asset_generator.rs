//! The glTF Asset Generator cases: sampled transforms and skinned positions
//! at chosen times against values worked out from the glTF spec and each
//! file's numbers.
//!
//! How the expected values were derived (never from the code under test):
//! * Node and NodeMisc cases: the key times and values were read from each
//!   .bin (a throwaway Python script printing the accessors) and the spec's
//!   interpolation applied by hand: LINEAR lerps translation/scale and slerps
//!   rotation (slerp halfway between a 90 degree turn and the identity is a 45
//!   degree turn: `(0, sin 22.5, 0, cos 22.5)`); STEP holds the earlier key;
//!   CUBICSPLINE with the files' zero tangents is
//!   `h00(u) v0 + h01(u) v1` with `h00 = 2u^3 - 3u^2 + 1`,
//!   `h01 = -2u^3 + 3u^2` (at u = 0.25: 0.84375 and 0.15625), rotations then
//!   normalised. Before a channel's first key its first value holds, after
//!   its last key the last.
//! * Skin and SkinType cases: skinned positions from an independent Python
//!   implementation of the spec (node TRS to matrices, world = parent world x
//!   local, vertex = sum of weight x world(joint) x inverseBind x position,
//!   the skinned node's own transform ignored, a rigid mesh = world(node) x
//!   position), run over each file's JSON and .bin, printed to 6 decimals.

mod gltf_common;

use gltf_common::{assert_positions, load, locals, skin_all};
use vkskin::anim::{Interpolation, Transform};
use vkskin::glam::{Quat, Vec3};

const TOL: f32 = 1e-5;
const S225: f32 = 0.382_683_43; // sin 22.5 degrees
const C225: f32 = 0.923_879_5; // cos 22.5 degrees
const R2: f32 = std::f32::consts::FRAC_1_SQRT_2;

fn node(rel: &str) -> String {
    format!("gltf/asset-generator/Animation_Node/{rel}.gltf")
}
fn misc(rel: &str) -> String {
    format!("gltf/asset-generator/Animation_NodeMisc/{rel}.gltf")
}
fn skin(rel: &str) -> String {
    format!("gltf/asset-generator/Animation_Skin/{rel}.gltf")
}
fn skin_type(rel: &str) -> String {
    format!("gltf/asset-generator/Animation_SkinType/{rel}.gltf")
}

/// Local transform of glTF node `node` in clip `clip` at `t`.
fn sampled(rel: &str, clip: usize, n: usize, t: f32) -> Option<Transform> {
    let (model, info) = load(rel)?;
    Some(locals(&model, Some(clip), t)[info.node_joints[n]])
}

fn assert_quat(what: &str, got: Quat, want: [f32; 4]) {
    let w = Quat::from_array(want);
    // q and -q are the same rotation.
    assert!(
        got.dot(w).abs() > 1.0 - 1e-6 && (got.length() - 1.0).abs() < 1e-5,
        "{what}: rotation {got:?}, expected {w:?}"
    );
}

fn assert_vec(what: &str, got: Vec3, want: [f32; 3]) {
    let w = Vec3::from_array(want);
    assert!(got.abs_diff_eq(w, TOL), "{what}: {got:?}, expected {w:?}");
}

fn interpolation_of(rel: &str) -> Option<Interpolation> {
    let (_, info) = load(rel)?;
    Some(info.clip_channels[0][0].interpolation)
}

#[test]
fn node_00_linear_translation() {
    // Keys t = 0, 1, 2: x = -0.1, 0.1, -0.1.
    let f = node("Animation_Node_00");
    for (t, x) in [
        (0.0, -0.1),
        (0.25, -0.05),
        (0.5, 0.0),
        (1.0, 0.1),
        (1.5, 0.0),
        (2.0, -0.1),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [x, 0.0, 0.0]);
        assert_quat(&format!("t={t}"), tr.rotation, [0.0, 0.0, 0.0, 1.0]);
    }
    assert_eq!(interpolation_of(&f), Some(Interpolation::Linear));
}

#[test]
fn node_01_linear_rotation() {
    // Keys t = 0..4: +90 Y, identity, -90 Y, identity, +90 Y.
    let f = node("Animation_Node_01");
    for (t, q) in [
        (0.0, [0.0, R2, 0.0, R2]),
        (0.5, [0.0, S225, 0.0, C225]),
        (1.0, [0.0, 0.0, 0.0, 1.0]),
        (2.0, [0.0, -R2, 0.0, R2]),
        (2.5, [0.0, -S225, 0.0, C225]),
        (3.5, [0.0, S225, 0.0, C225]),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_quat(&format!("t={t}"), tr.rotation, q);
    }
}

#[test]
fn node_02_linear_scale() {
    // Keys t = 0, 1, 2: scale 0.8, 1.2, 0.8.
    let f = node("Animation_Node_02");
    for (t, s) in [(0.0, 0.8), (0.25, 0.9), (0.5, 1.0), (1.0, 1.2), (1.75, 0.9)] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.scale, [s, s, s]);
    }
}

#[test]
fn node_03_step_translation() {
    // STEP keys t = 0..4: x = -0.1, 0, 0.1, 0, -0.1.
    let f = node("Animation_Node_03");
    for (t, x) in [
        (0.0, -0.1),
        (0.99, -0.1),
        (1.0, 0.0),
        (1.5, 0.0),
        (2.9, 0.1),
        (3.2, 0.0),
        (4.0, -0.1),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [x, 0.0, 0.0]);
    }
    assert_eq!(interpolation_of(&f), Some(Interpolation::Step));
}

#[test]
fn node_04_cubic_translation() {
    // CUBICSPLINE keys t = 0, 1, 2: x = -0.1, 0.1, -0.1, all tangents zero.
    // t = 0.25: -0.1 * 0.84375 + 0.1 * 0.15625 = -0.06875.
    let f = node("Animation_Node_04");
    for (t, x) in [
        (0.0, -0.1),
        (0.25, -0.06875),
        (0.5, 0.0),
        (1.0, 0.1),
        (1.5, 0.0),
        (1.75, -0.06875),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [x, 0.0, 0.0]);
    }
    assert_eq!(interpolation_of(&f), Some(Interpolation::CubicSpline));
}

#[test]
fn node_05_cubic_rotation_is_normalised() {
    // CUBICSPLINE keys t = 0..4: +90 Y, identity, -90 Y, identity, +90 Y,
    // zero tangents. t = 0.25: 0.84375 * (0, r2, 0, r2) + 0.15625 * (0,0,0,1)
    // = (0, 0.596621, 0, 0.752871), normalised (0, 0.621086, 0, 0.783743).
    let f = node("Animation_Node_05");
    for (t, q) in [
        (0.0, [0.0, R2, 0.0, R2]),
        (0.25, [0.0, 0.621_085_7, 0.0, 0.783_742_7]),
        (0.5, [0.0, S225, 0.0, C225]),
        (1.0, [0.0, 0.0, 0.0, 1.0]),
        (1.5, [0.0, -S225, 0.0, C225]),
        (3.5, [0.0, S225, 0.0, C225]),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_quat(&format!("t={t}"), tr.rotation, q);
    }
}

#[test]
fn node_misc_00_two_channels_same_range() {
    // Translation keys t = 0, 2, 4 (x = -0.1, 0.1, -0.1); rotation keys
    // t = 0..4 as in Animation_Node_01.
    let f = misc("Animation_NodeMisc_00");
    for (t, x, q) in [
        (0.5, -0.05, [0.0, S225, 0.0, C225]),
        (1.0, 0.0, [0.0, 0.0, 0.0, 1.0]),
        (3.0, 0.0, [0.0, 0.0, 0.0, 1.0]),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [x, 0.0, 0.0]);
        assert_quat(&format!("t={t}"), tr.rotation, q);
    }
}

#[test]
fn node_misc_01_non_zero_start() {
    // Rotation keys at t = 1..5; before 1 s the first key holds.
    let f = misc("Animation_NodeMisc_01");
    let Some((model, _)) = load(&f) else { return };
    assert_eq!(model.clips[0].duration(), 5.0);
    for (t, q) in [
        (0.0, [0.0, R2, 0.0, R2]),
        (0.5, [0.0, R2, 0.0, R2]),
        (1.5, [0.0, S225, 0.0, C225]),
        (2.0, [0.0, 0.0, 0.0, 1.0]),
        (5.0, [0.0, R2, 0.0, R2]),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_quat(&format!("t={t}"), tr.rotation, q);
    }
}

#[test]
fn node_misc_02_channels_with_different_ranges() {
    // Translation keys t = 2, 4, 6 (y = -0.1, 0.1, -0.1); rotation keys
    // t = 1..5 (+90 Y, id, -90 Y, id, +90 Y). Duration: the later end, 6 s.
    let f = misc("Animation_NodeMisc_02");
    let Some((model, _)) = load(&f) else { return };
    assert_eq!(model.clips[0].duration(), 6.0);
    for (t, y, q) in [
        (0.0, -0.1, [0.0, R2, 0.0, R2]),
        (1.0, -0.1, [0.0, R2, 0.0, R2]),
        (3.0, 0.0, [0.0, -R2, 0.0, R2]),
        (5.5, -0.05, [0.0, R2, 0.0, R2]),
    ] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [0.0, y, 0.0]);
        assert_quat(&format!("t={t}"), tr.rotation, q);
    }
}

#[test]
fn node_misc_03_single_key() {
    // One key at t = 0: x = -0.1, whatever the time.
    let f = misc("Animation_NodeMisc_03");
    let Some((model, _)) = load(&f) else { return };
    assert_eq!(model.clips[0].duration(), 0.0);
    for t in [0.0, 0.5, 3.0] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [-0.1, 0.0, 0.0]);
    }
}

#[test]
fn node_misc_04_two_nodes() {
    // Node 0: rotation about Y; node 1: about X (keys +90, id, -90, id, +90),
    // both keep their static scale 0.5 and translation x = -0.2 / +0.2.
    let f = misc("Animation_NodeMisc_04");
    let (Some(a), Some(b)) = (sampled(&f, 0, 0, 0.5), sampled(&f, 0, 1, 0.5)) else {
        return;
    };
    assert_quat("node 0", a.rotation, [0.0, S225, 0.0, C225]);
    assert_quat("node 1", b.rotation, [S225, 0.0, 0.0, C225]);
    assert_vec("node 0 t", a.translation, [-0.2, 0.0, 0.0]);
    assert_vec("node 1 t", b.translation, [0.2, 0.0, 0.0]);
    assert_vec("node 0 s", a.scale, [0.5; 3]);
    let Some(b) = sampled(&f, 0, 1, 2.0) else {
        return;
    };
    assert_quat("node 1 t=2", b.rotation, [-R2, 0.0, 0.0, R2]);
}

#[test]
fn node_misc_05_channel_overrides_static_rotation() {
    // The node's own rotation is +60 Y (0, 0.5, 0, 0.866); the channel holds
    // -60 Y (0, -0.5, 0, 0.866) from 0 to 6 s.
    let f = misc("Animation_NodeMisc_05");
    for t in [0.0, 3.0, 6.0] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_quat(
            &format!("t={t}"),
            tr.rotation,
            [0.0, -0.5, 0.0, 0.866_025_4],
        );
    }
}

#[test]
fn node_misc_06_static_rotation_kept() {
    // Static rotation +60 Y stays; translation keys t = 0, 2, 4.
    let f = misc("Animation_NodeMisc_06");
    for (t, x) in [(0.5, -0.05), (1.0, 0.0), (2.0, 0.1), (3.0, 0.0)] {
        let Some(tr) = sampled(&f, 0, 0, t) else {
            return;
        };
        assert_vec(&format!("t={t}"), tr.translation, [x, 0.0, 0.0]);
        assert_quat(&format!("t={t}"), tr.rotation, [0.0, 0.5, 0.0, 0.866_025_4]);
    }
}

#[test]
fn node_misc_07_two_animations() {
    // Animation 0 rotates (keys t = 0..4), animation 1 translates (t = 0, 2, 4);
    // each leaves the other channel at the node's rest value.
    let f = misc("Animation_NodeMisc_07");
    let Some((model, _)) = load(&f) else { return };
    assert_eq!(model.clips.len(), 2);
    let (Some(r), Some(t)) = (sampled(&f, 0, 0, 0.5), sampled(&f, 1, 0, 0.5)) else {
        return;
    };
    assert_quat("clip 0", r.rotation, [0.0, S225, 0.0, C225]);
    assert_vec("clip 0", r.translation, [0.0; 3]);
    assert_vec("clip 1", t.translation, [-0.05, 0.0, 0.0]);
    assert_quat("clip 1", t.rotation, [0.0, 0.0, 0.0, 1.0]);
}

/// Skinned positions (Python reference, see the module docs): skinA in its
/// rest pose (Animation_Skin_00, _02, _03 and all SkinType files).
const SKIN_A_REST: [[f32; 3]; 6] = [
    [-0.125000, -0.500000, 0.216506],
    [0.125000, -0.500000, -0.216506],
    [-0.125000, 0.0, 0.216506],
    [0.125000, 0.0, -0.216506],
    [-0.341506, 0.433013, 0.091507],
    [-0.091506, 0.433013, -0.341506],
];

/// skinA with joint1 turned to its t = 1 key (-45 degrees about X).
const SKIN_A_T1: [[f32; 3]; 6] = [
    [-0.125000, -0.500000, 0.216506],
    [0.125000, -0.500000, -0.216506],
    [-0.125000, 0.0, 0.216506],
    [0.125000, 0.0, -0.216506],
    [-0.431186, 0.353553, 0.039730],
    [-0.181186, 0.353553, -0.393283],
];

fn check_skinned(rel: &str, clip: Option<usize>, t: f32, want: &[&[[f32; 3]]]) {
    let Some((model, _)) = load(rel) else { return };
    let got = skin_all(&model, &locals(&model, clip, t));
    assert_eq!(got.len(), want.len(), "{rel}: meshes");
    for (m, ((p, _), w)) in got.iter().zip(want).enumerate() {
        assert_positions(&format!("{rel} t={t} mesh {m}"), p, w, TOL);
    }
}

#[test]
fn skin_00_rest_pose() {
    check_skinned(&skin("Animation_Skin_00"), None, 0.0, &[&SKIN_A_REST]);
}

#[test]
fn skin_01_animated_joint() {
    let f = skin("Animation_Skin_01");
    // joint1's rotation keys: identity, -45 X, identity at t = 0, 1, 2; at
    // t = 0.5 the slerp is -22.5 X = (-sin 11.25, 0, 0, cos 11.25).
    let Some(tr) = sampled(&f, 0, 2, 0.5) else {
        return;
    };
    assert_quat(
        "joint1 t=0.5",
        tr.rotation,
        [-0.195_090_32, 0.0, 0.0, 0.980_785_3],
    );
    // At t = 0 the key (identity) replaces joint1's static -30 X rotation,
    // so the plane is straight.
    check_skinned(
        &f,
        Some(0),
        0.0,
        &[&[
            [-0.125000, -0.500000, 0.216506],
            [0.125000, -0.500000, -0.216506],
            [-0.125000, 0.0, 0.216506],
            [0.125000, 0.0, -0.216506],
            [-0.125000, 0.500000, 0.216507],
            [0.125000, 0.500000, -0.216506],
        ]],
    );
    check_skinned(&f, Some(0), 1.0, &[&SKIN_A_T1]);
    check_skinned(
        &f,
        Some(0),
        0.5,
        &[&[
            [-0.125000, -0.500000, 0.216506],
            [0.125000, -0.500000, -0.216506],
            [-0.125000, 0.0, 0.216506],
            [0.125000, 0.0, -0.216506],
            [-0.290707, 0.461940, 0.120836],
            [-0.040707, 0.461940, -0.312177],
        ]],
    );
}

#[test]
fn skin_02_skinned_node_transform_ignored() {
    // The mesh node and its parent are rotated 45 degrees about Y; the spec
    // says that is ignored, so the result is skin 00's.
    check_skinned(&skin("Animation_Skin_02"), None, 0.0, &[&SKIN_A_REST]);
}

#[test]
fn skin_03_joints_outside_the_scene() {
    check_skinned(&skin("Animation_Skin_03"), None, 0.0, &[&SKIN_A_REST]);
}

#[test]
fn skin_04_no_inverse_bind_matrices() {
    // Identity inverse binds: joint0's vertices are not moved back by 0.5 in z
    // first, so they land at y = -1 instead of -0.5.
    let mut want = SKIN_A_REST;
    want[0][1] = -1.0;
    want[1][1] = -1.0;
    check_skinned(&skin("Animation_Skin_04"), None, 0.0, &[&want]);
}

#[test]
fn skin_05_rigid_mesh_on_an_animated_joint() {
    // The triangle is a child of joint1 (node 3 has only a mesh): it follows
    // world(joint1) rigidly.
    check_skinned(
        &skin("Animation_Skin_05"),
        Some(0),
        1.0,
        &[
            &SKIN_A_T1,
            &[
                [0.153093, 0.106066, 0.088389],
                [0.091856, 0.176777, 0.053033],
                [0.0, 0.0, 0.0],
            ],
        ],
    );
}

#[test]
fn skin_06_two_skins_share_joints() {
    let f = skin("Animation_Skin_06");
    let inner_t1: &[[f32; 3]] = &[
        [0.067243, -0.450000, 0.250955],
        [0.222535, -0.150000, -0.328601],
        [-0.357021, -0.150000, -0.173309],
        [0.217598, 0.074726, 0.512086],
        [-0.324806, 0.325681, 0.207422],
        [0.200194, 0.403327, -0.072482],
    ];
    let outer_t1: &[[f32; 3]] = &[
        [0.134765, -0.358135, 0.502950],
        [0.383231, 0.121866, -0.424339],
        [-0.544057, 0.121866, -0.175872],
        [0.274393, -0.194072, 0.544048],
        [-0.593453, 0.207456, 0.056587],
        [0.246547, 0.331689, -0.391260],
    ];
    check_skinned(&f, Some(0), 1.0, &[inner_t1, outer_t1]);
    let inner_half: &[[f32; 3]] = &[
        [0.067243, -0.450000, 0.250955],
        [0.222535, -0.150000, -0.328601],
        [-0.357021, -0.150000, -0.173309],
        [0.182137, 0.070898, 0.528451],
        [-0.305367, 0.348753, 0.160842],
        [0.251676, 0.387911, -0.058633],
    ];
    let outer_half: &[[f32; 3]] = &[
        [0.134765, -0.358135, 0.502950],
        [0.383231, 0.121866, -0.424339],
        [-0.544057, 0.121866, -0.175872],
        [0.217656, -0.200197, 0.570233],
        [-0.562351, 0.244371, -0.017941],
        [0.328918, 0.307023, -0.369102],
    ];
    check_skinned(&f, Some(0), 0.5, &[inner_half, outer_half]);
    // Both skins name the same two nodes: the same skeleton joints.
    let Some((model, info)) = load(&f) else {
        return;
    };
    assert_eq!(info.file_skins, 2);
    assert_eq!(model.skins[0].joints, model.skins[1].joints);
}

#[test]
fn skin_07_joint_chain_with_local_rotations() {
    check_skinned(
        &skin("Animation_Skin_07"),
        None,
        0.0,
        &[&[
            [-0.125000, -0.400000, 0.216506],
            [0.125000, -0.400000, -0.216506],
            [-0.125000, -0.200000, 0.216506],
            [0.125000, -0.200000, -0.216506],
            [-0.155077, -0.003039, 0.199142],
            [0.094923, -0.003038, -0.233871],
            [-0.214316, 0.184900, 0.164940],
            [0.035684, 0.184900, -0.268073],
            [-0.300919, 0.358105, 0.114940],
            [-0.050919, 0.358105, -0.318073],
        ]],
    );
}

#[test]
fn skin_08_non_joint_node_inside_the_hierarchy() {
    // transformNode (node 4, not a joint, carrying a rigid triangle) sits
    // between joint2 and joint3; all three joints are animated.
    let f = skin("Animation_Skin_08");
    check_skinned(
        &f,
        Some(0),
        0.5,
        &[
            &[
                [-0.125000, -0.400000, 0.216506],
                [0.125000, -0.400000, -0.216506],
                [-0.125000, -0.200000, 0.216506],
                [0.125000, -0.200000, -0.216506],
                [-0.191283, -0.015224, 0.178238],
                [0.058717, -0.015224, -0.254775],
                [-0.125000, 0.169552, 0.216506],
                [0.125000, 0.169552, -0.216506],
                [-0.058717, 0.354328, 0.254775],
                [0.191283, 0.354328, -0.178238],
                [0.101303, 0.430864, 0.347163],
                [0.351303, 0.430864, -0.085850],
            ],
            &[
                [0.143450, 0.046821, 0.082821],
                [0.176591, 0.139209, 0.101955],
                [0.0, 0.169552, 0.0],
            ],
        ],
    );
    check_skinned(
        &f,
        Some(0),
        1.0,
        &[
            &[
                [-0.125000, -0.400000, 0.216506],
                [0.125000, -0.400000, -0.216506],
                [-0.125000, -0.200000, 0.216506],
                [0.125000, -0.200000, -0.216506],
                [-0.247474, -0.058579, 0.145796],
                [0.002526, -0.058579, -0.287217],
                [-0.125000, 0.082843, 0.216506],
                [0.125000, 0.082843, -0.216506],
                [-0.002526, 0.224264, 0.287217],
                [0.247475, 0.224264, -0.145795],
                [0.119949, 0.082843, 0.357928],
                [0.369949, 0.082843, -0.075085],
            ],
            &[
                [0.091856, -0.093934, 0.053033],
                [0.153093, -0.023223, 0.088388],
                [0.0, 0.082843, 0.0],
            ],
        ],
    );
}

#[test]
fn skin_09_branching_joints() {
    check_skinned(
        &skin("Animation_Skin_09"),
        None,
        0.0,
        &[&[
            [-0.062500, -0.250000, 0.108253],
            [0.062500, -0.250000, -0.108253],
            [-0.062500, 0.0, 0.108253],
            [0.062500, 0.0, -0.108253],
            [0.0, 0.0, 0.0],
            [-0.181036, 0.241481, 0.184154],
            [-0.118536, 0.241481, 0.075901],
            [-0.351789, 0.457988, 0.229907],
            [-0.289289, 0.457988, 0.121654],
            [0.006464, 0.241481, -0.140605],
            [0.068964, 0.241481, -0.248859],
            [-0.039289, 0.457988, -0.311358],
            [0.023211, 0.457988, -0.419612],
        ]],
    );
}

#[test]
fn skin_type_00_to_03_component_types() {
    // u8 joints / f32 weights, u8 / normalised u8, u8 / normalised u16,
    // u16 / f32: the same skin, so the same positions as skin 00.
    for i in 0..4 {
        check_skinned(
            &skin_type(&format!("Animation_SkinType_0{i}")),
            None,
            0.0,
            &[&SKIN_A_REST],
        );
    }
}
