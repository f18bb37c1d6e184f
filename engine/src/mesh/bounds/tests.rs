use super::*;
use crate::mesh::{Influences, MorphTarget, MorphTargets};
use glam::Quat;

/// Two vertices on joint 0, one on joint 1, joint 2 unused.
fn mesh() -> SkinnedMesh {
    SkinnedMesh {
        positions: vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 1.0),
            Vec3::new(5.0, 0.0, 0.0),
        ],
        normals: vec![Vec3::Z; 3],
        influences: Influences::new(
            2,
            vec![0, 2, 0, 2, 1, 0],
            vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
        ),
        indices: vec![0, 1, 2],
        ..SkinnedMesh::default()
    }
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).abs().max_element() < 1e-4
}

#[test]
fn joint_boxes_are_the_influenced_vertices() {
    let b = JointBounds::new(&mesh(), 3).unwrap();
    assert_eq!(b.joint_count(), 2);
    assert_eq!(
        b.joint_box(0),
        Some(Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE
        })
    );
    let j1 = b.joint_box(1).unwrap();
    assert_eq!((j1.min, j1.max), (Vec3::X * 5.0, Vec3::X * 5.0));
    assert_eq!(b.joint_box(2), None);
}

#[test]
fn skinned_box_by_hand() {
    let b = JointBounds::new(&mesh(), 3).unwrap();
    // Joint 0 turned 90 degrees about z: the unit cube goes to
    // [-1,0]x[0,1]x[0,1]; joint 1 moved up by 3: (5,3,0).
    let skin = [
        Affine3A::from_quat(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2)),
        Affine3A::from_translation(Vec3::new(0.0, 3.0, 0.0)),
        Affine3A::from_translation(Vec3::splat(100.0)),
    ];
    let s = b.skinned(&skin, &[]).unwrap();
    assert!(close(s.min, Vec3::new(-1.0, 0.0, 0.0)), "{s:?}");
    assert!(close(s.max, Vec3::new(5.0, 3.0, 1.0)), "{s:?}");
    // The padding is outward.
    assert!(s.contains(Vec3::new(5.0, 3.0, 0.0)) && s.contains(Vec3::new(-1.0, 1.0, 1.0)));
}

#[test]
fn morph_radius_sums_weighted_longest_deltas() {
    let mut m = mesh();
    m.morph = MorphTargets {
        targets: vec![
            MorphTarget {
                positions: vec![Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0), Vec3::ZERO],
                ..MorphTarget::default()
            },
            MorphTarget {
                positions: vec![Vec3::new(0.0, 0.0, 1.0); 3],
                ..MorphTarget::default()
            },
        ],
        first_weight: 1,
    };
    let b = JointBounds::new(&m, 3).unwrap();
    let r = b.morph_radius(&[9.0, -2.0, 0.5]).unwrap();
    assert!((r - 10.5).abs() < 1e-4, "{r}");
    assert!(b.morph_radius(&[0.0, 1.0]).is_err());
    let skin = [Affine3A::IDENTITY; 3];
    let s = b.skinned(&skin, &[0.0, 0.0, 1.0]).unwrap();
    assert!(close(s.min, Vec3::splat(-1.0)) && close(s.max, Vec3::new(6.0, 2.0, 2.0)));
}

#[test]
fn bad_input_is_an_error() {
    let mut m = mesh();
    m.influences.weights[0] = -0.5;
    assert!(JointBounds::new(&m, 3).is_err());
    let mut m = mesh();
    m.influences.weights[0] = f32::NAN;
    assert!(JointBounds::new(&m, 3).is_err());
    assert!(JointBounds::new(&mesh(), 2).is_err(), "joint 2 outside");
    let mut m = mesh();
    m.influences.joints.pop();
    assert!(JointBounds::new(&m, 3).is_err());
    let b = JointBounds::new(&mesh(), 3).unwrap();
    assert!(b.skinned(&[Affine3A::IDENTITY; 2], &[]).is_err());
    let mut nan = [Affine3A::IDENTITY; 3];
    nan[0].translation.x = f32::NAN;
    assert!(b.skinned(&nan, &[]).is_err());
}

#[test]
fn unnormalised_weights_pad_the_box() {
    // One vertex at (2,0,0) with weights summing to 1.5 on one joint:
    // LBS puts it at (3,0,0).
    let m = SkinnedMesh {
        positions: vec![Vec3::new(2.0, 0.0, 0.0)],
        normals: vec![Vec3::Z],
        influences: Influences::new(1, vec![0], vec![1.5]),
        ..SkinnedMesh::default()
    };
    let b = JointBounds::new(&m, 1).unwrap();
    let s = b.skinned(&[Affine3A::IDENTITY], &[]).unwrap();
    assert!(s.contains(Vec3::new(3.0, 0.0, 0.0)), "{s:?}");
}

/// Deterministic values in [-1, 1).
fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// The identity the dual-quaternion bound rests on
/// (docs/skinning-paths.md): with `y_j = M_j p`, `x |B|^2 = sum_j w_j^2
/// y_j + sum_{i<j} w_i w_j [c_ij (y_i + y_j) + (y_j - y_i) x v_ji]`,
/// evaluated here in f64 from the rotations and translations, is what
/// `DualQuatSkinningJob` skins; and the vertex is within the bound of the
/// convex part.
#[test]
fn the_dual_quaternion_blend_is_a_convex_part_plus_a_bounded_rest() {
    use crate::anim::{DualQuat, DualQuatSkinningJob};
    use glam::{DQuat, DVec3};
    let mut r = rng(11);
    for case in 0..200 {
        let k = 2 + case % 3;
        let spread = 0.3 + 2.5 * (case as f64 / 200.0);
        let rot: Vec<DQuat> = (0..k)
            .map(|_| {
                let axis = DVec3::new(r(), r(), r()).normalize();
                DQuat::from_axis_angle(axis, spread * r())
            })
            .collect();
        let tr: Vec<DVec3> = (0..k).map(|_| DVec3::new(r(), r(), r()) * 3.0).collect();
        let w: Vec<f64> = (0..k).map(|_| 0.1 + r().abs()).collect();
        let sum: f64 = w.iter().sum();
        let w: Vec<f64> = w.iter().map(|x| x / sum).collect();
        let p = DVec3::new(r(), r(), r()) * 2.0;
        // The job's palette and result.
        let palette: Vec<DualQuat> = rot
            .iter()
            .zip(&tr)
            .map(|(q, t)| DualQuat::from_rotation_translation(q.as_quat(), t.as_vec3()))
            .collect();
        let joints: Vec<u16> = (0..k as u16).collect();
        let wf: Vec<f32> = w.iter().map(|&x| x as f32).collect();
        let mut out = [Vec3::ZERO];
        DualQuatSkinningJob {
            palette: &palette,
            scale_shear: &[],
            per_vertex: k,
            joints: &joints,
            weights: &wf,
            positions: &[p.as_vec3()],
            normals: &[],
            out_positions: &mut out,
            out_normals: &mut [],
        }
        .run()
        .unwrap();
        // The formula, in the job's signs (the first influence's hemisphere).
        let q: Vec<DQuat> = rot
            .iter()
            .map(|&x| if x.dot(rot[0]) < 0.0 { -x } else { x })
            .collect();
        let y: Vec<DVec3> = (0..k).map(|j| q[j] * p + tr[j]).collect();
        let (mut num, mut convex, mut den) = (DVec3::ZERO, DVec3::ZERO, 0.0);
        let (mut pw, mut c_min, mut far) = (0.0f64, 1.0f64, 0.0f64);
        for j in 0..k {
            num += w[j] * w[j] * y[j];
            convex += w[j] * w[j] * y[j];
            den += w[j] * w[j];
            for i in 0..j {
                let s = q[j] * q[i].conjugate();
                let (c, v) = (s.w, DVec3::new(s.x, s.y, s.z));
                num += w[i] * w[j] * (c * (y[i] + y[j]) + (y[j] - y[i]).cross(v));
                convex += w[i] * w[j] * c * (y[i] + y[j]);
                den += 2.0 * w[i] * w[j] * c;
                pw += w[i] * w[j];
                c_min = c_min.min(c);
                far = far.max((y[j] - y[i]).length() * (1.0 - c * c).max(0.0).sqrt());
            }
        }
        let x = num / den;
        let scale = 1.0 + x.length();
        assert!(
            (x - out[0].as_dvec3()).length() < 2e-5 * scale,
            "case {case}: formula {x} job {}",
            out[0]
        );
        if c_min >= 0.0 {
            let rest = (x - convex / den).length();
            let bound = pw * far / (1.0 - 2.0 * pw * (1.0 - c_min));
            assert!(
                rest <= bound * (1.0 + 1e-9) + 1e-12,
                "case {case}: {rest} > {bound}"
            );
        }
    }
}

/// A two-joint strip twisted a half turn and bent: every vertex the
/// dual-quaternion job skins lies in `skinned_dual_quat`'s box, which the
/// linear-blend box does not hold; and influences more than a half turn
/// apart after the sign choice give no bound.
#[test]
fn a_twisted_strip_stays_inside_its_dual_quaternion_box() {
    use crate::anim::{DualQuat, DualQuatSkinningJob};
    let n = 41;
    let positions: Vec<Vec3> = (0..n)
        .flat_map(|i| {
            let x = i as f32 / (n - 1) as f32 * 4.0 - 2.0;
            [Vec3::new(x, 0.3, 0.0), Vec3::new(x, -0.3, 0.2)]
        })
        .collect();
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for p in &positions {
        let w = (0.5 + 0.4 * p.x).clamp(0.0, 1.0);
        joints.extend([0u16, 1]);
        weights.extend([1.0 - w, w]);
    }
    let mesh = SkinnedMesh {
        influences: Influences::new(2, joints.clone(), weights.clone()),
        indices: vec![0, 1, 2],
        normals: vec![Vec3::Z; positions.len()],
        positions: positions.clone(),
        ..SkinnedMesh::default()
    };
    let b = JointBounds::new(&mesh, 2).unwrap();
    let turn = Quat::from_rotation_x(3.0) * Quat::from_rotation_z(0.8);
    let rot = [Quat::IDENTITY, turn];
    let t = [Vec3::ZERO, Vec3::new(0.5, 0.2, -0.1)];
    let palette: Vec<DualQuat> = (0..2)
        .map(|j| DualQuat::from_rotation_translation(rot[j], t[j]))
        .collect();
    let held: Vec<Affine3A> = (0..2)
        .map(|j| Affine3A::from_rotation_translation(rot[j], t[j]))
        .collect();
    let mut out = vec![Vec3::ZERO; positions.len()];
    DualQuatSkinningJob {
        palette: &palette,
        scale_shear: &[],
        per_vertex: 2,
        joints: &joints,
        weights: &weights,
        positions: &positions,
        normals: &[],
        out_positions: &mut out,
        out_normals: &mut [],
    }
    .run()
    .unwrap();
    let dq = b.skinned_dual_quat(&held, &rot, &[], &[]).unwrap().unwrap();
    let lbs = b.skinned(&held, &[]).unwrap();
    assert!(out.iter().all(|&p| dq.contains(p)), "{dq:?}");
    assert!(out.iter().any(|&p| !lbs.contains(p)), "{lbs:?}");
    // Three influences, the second and third each within a quarter turn
    // of the first but more than a half turn from each other: no bound.
    let mesh3 = SkinnedMesh {
        positions: vec![Vec3::ONE],
        normals: vec![Vec3::Z],
        influences: Influences::new(3, vec![0, 1, 2], vec![0.4, 0.3, 0.3]),
        indices: vec![0, 0, 0],
        ..SkinnedMesh::default()
    };
    let b3 = JointBounds::new(&mesh3, 3).unwrap();
    let a = 170f32.to_radians();
    let rot3 = [
        Quat::IDENTITY,
        Quat::from_rotation_x(a),
        Quat::from_rotation_x(-a),
    ];
    let held3: Vec<Affine3A> = rot3.iter().map(|&q| Affine3A::from_quat(q)).collect();
    assert_eq!(b3.skinned_dual_quat(&held3, &rot3, &[], &[]).unwrap(), None);
    // Shorter palettes are errors.
    assert!(b3.skinned_dual_quat(&held3, &rot3[..2], &[], &[]).is_err());
    assert!(b3
        .skinned_dual_quat(&held3, &rot3, &[Mat3A::IDENTITY], &[])
        .is_err());
}
