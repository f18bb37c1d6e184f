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
