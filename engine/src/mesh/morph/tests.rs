use super::*;
use crate::anim::{DualQuatSkinningJob, LinearBlendJob, PaletteHierarchy, TangentPalette};
use crate::mesh::SkinnedMesh;
use glam::{Affine3A, Mat3A, Quat};

fn target(p: &[Vec3], n: &[Vec3], t: &[Vec3]) -> MorphTarget {
    MorphTarget {
        positions: p.to_vec(),
        normals: n.to_vec(),
        tangents: t.to_vec(),
        sparse: false,
    }
}

struct Out {
    p: Vec<Vec3>,
    n: Vec<Vec3>,
    t: Vec<Vec4>,
}

fn morph(
    targets: &[MorphTarget],
    weights: &[f32],
    p: &[Vec3],
    n: &[Vec3],
    t: &[Vec4],
) -> Result<Out, MeshError> {
    let mut o = Out {
        p: vec![Vec3::NAN; p.len()],
        n: vec![Vec3::NAN; n.len()],
        t: vec![Vec4::NAN; t.len()],
    };
    MorphJob {
        targets,
        weights,
        positions: p,
        normals: n,
        tangents: t,
        out_positions: &mut o.p,
        out_normals: &mut o.n,
        out_tangents: &mut o.t,
    }
    .run()?;
    Ok(o)
}

#[test]
fn hand_computed_vertex() {
    let targets = [
        target(&[Vec3::X], &[Vec3::new(0.0, 0.0, 2.0)], &[]),
        target(
            &[Vec3::new(0.0, 2.0, 0.0)],
            &[],
            &[Vec3::new(0.0, 1.0, 0.0)],
        ),
    ];
    let o = morph(
        &targets,
        &[0.5, -1.5],
        &[Vec3::new(1.0, 2.0, 3.0)],
        &[Vec3::Y],
        &[Vec4::new(1.0, 0.0, 0.0, -1.0)],
    )
    .unwrap();
    // (1, 2, 3) + 0.5 (1, 0, 0) - 1.5 (0, 2, 0).
    assert_eq!(o.p, [Vec3::new(1.5, -1.0, 3.0)]);
    // (0, 1, 0) + 0.5 (0, 0, 2) = (0, 1, 1), renormalised.
    let s = 0.5f32.sqrt();
    assert!(o.n[0].abs_diff_eq(Vec3::new(0.0, s, s), 1e-6), "{}", o.n[0]);
    // (1, 0, 0) - 1.5 (0, 1, 0) = (1, -1.5, 0) / sqrt(3.25), w kept.
    let l = 3.25f32.sqrt();
    assert!(
        o.t[0].abs_diff_eq(Vec4::new(1.0 / l, -1.5 / l, 0.0, -1.0), 1e-6),
        "{}",
        o.t[0]
    );
}

#[test]
fn a_normal_only_target_moves_no_position() {
    let base = [Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.0, 0.5)];
    let normals = [Vec3::Z, Vec3::X];
    let o = morph(
        &[target(&[], &[Vec3::X, Vec3::Y], &[])],
        &[3.0],
        &base,
        &normals,
        &[],
    )
    .unwrap();
    assert_eq!(o.p, base);
    assert!(o.n[0].abs_diff_eq(Vec3::new(3.0, 0.0, 1.0).normalize(), 1e-6));
    assert!(o.n[1].abs_diff_eq(Vec3::new(1.0, 3.0, 0.0).normalize(), 1e-6));
    // No normals asked for: none written, positions still morphed.
    let o = morph(&[target(&[Vec3::X; 2], &[], &[])], &[2.0], &base, &[], &[]).unwrap();
    assert_eq!(o.p[1], Vec3::new(1.0, 0.0, 0.5));
    assert!(o.n.is_empty());
}

#[test]
fn zero_weights_are_skipped_without_changing_the_result() {
    let base = [Vec3::new(0.3, -0.2, 1.0), Vec3::new(-0.0, 4.0, 0.5)];
    let normals = [Vec3::Y, Vec3::new(0.6, 0.8, 0.0)];
    let tangents = [
        Vec4::new(1.0, 0.0, 0.0, 1.0),
        Vec4::new(0.0, 0.0, 1.0, -1.0),
    ];
    let a = target(
        &[Vec3::new(0.1, 0.2, 0.3), Vec3::new(1.0, -1.0, 0.25)],
        &[Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.7)],
        &[Vec3::new(0.0, 0.3, 0.0), Vec3::new(0.1, 0.0, 0.0)],
    );
    let b = target(
        &[Vec3::splat(7.0); 2],
        &[Vec3::splat(-3.0); 2],
        &[Vec3::ONE; 2],
    );
    let c = target(&[Vec3::new(0.0, 1.0, -2.0); 2], &[], &[]);
    let weights = [0.7, 0.0, -0.4];
    assert_eq!(
        active_targets(&weights).collect::<Vec<_>>(),
        [(0, 0.7), (2, -0.4)]
    );
    let with_zero = morph(
        &[a.clone(), b, c.clone()],
        &weights,
        &base,
        &normals,
        &tangents,
    )
    .unwrap();
    let without = morph(
        &[a.clone(), c.clone()],
        &[0.7, -0.4],
        &base,
        &normals,
        &tangents,
    )
    .unwrap();
    let bits = |o: &Out| {
        let p = o.p.iter().flat_map(|v| v.to_array());
        let n = o.n.iter().flat_map(|v| v.to_array());
        let t = o.t.iter().flat_map(|v| v.to_array());
        p.chain(n).chain(t).map(f32::to_bits).collect::<Vec<_>>()
    };
    assert_eq!(bits(&with_zero), bits(&without));
    // And the sum over every target, zero included, evaluated here.
    for (v, b) in base.iter().enumerate() {
        let p = *b + a.positions[v] * 0.7 + Vec3::splat(7.0) * 0.0 + c.positions[v] * -0.4;
        assert!(with_zero.p[v].abs_diff_eq(p, 1e-6));
    }
}

#[test]
fn bad_jobs_are_errors() {
    let base = [Vec3::ZERO; 2];
    let t = target(&[Vec3::X; 2], &[], &[]);
    let short = target(&[Vec3::X], &[], &[]);
    assert!(morph(std::slice::from_ref(&t), &[], &base, &[], &[]).is_err());
    assert!(morph(std::slice::from_ref(&t), &[f32::NAN], &base, &[], &[]).is_err());
    assert!(morph(&[short], &[1.0], &base, &[], &[]).is_err());
    assert!(morph(std::slice::from_ref(&t), &[1.0], &base, &[Vec3::Y], &[]).is_err());
    assert!(morph(std::slice::from_ref(&t), &[1.0], &base, &[], &[Vec4::X]).is_err());
    let mut op = [Vec3::ZERO; 1];
    let err = MorphJob {
        targets: &[t],
        weights: &[1.0],
        positions: &base,
        normals: &[],
        tangents: &[],
        out_positions: &mut op,
        out_normals: &mut [],
        out_tangents: &mut [],
    }
    .run()
    .unwrap_err();
    assert!(matches!(err, MeshError::Invalid(_)), "{err}");
}

/// A two-vertex mesh with two targets, two joints and two influences per
/// vertex: morphed with the model's weight vector, then skinned by LBS and
/// by rigid DQS; the result against the formula evaluated here (each
/// influence's matrix applied to the morphed point, then weighted).
#[test]
fn morph_then_skin_is_the_formula() {
    let mut mesh = SkinnedMesh {
        positions: vec![Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 1.0)],
        normals: vec![Vec3::Y, Vec3::Z],
        tangents: vec![Vec4::new(1.0, 0.0, 0.0, 1.0); 2],
        ..SkinnedMesh::default()
    };
    mesh.morph.first_weight = 1;
    mesh.morph.targets = vec![
        target(&[Vec3::new(0.0, 1.0, 0.0), Vec3::ZERO], &[], &[]),
        target(
            &[Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 0.0, -1.0)],
            &[],
            &[],
        ),
    ];
    // The model's vector: weight 0 belongs to another mesh.
    let model_weights = [9.0, 0.5, 0.25];
    let m = mesh.morphed(&model_weights).unwrap();
    // By hand: (1, 0, 0) + 0.5 (0, 1, 0) + 0.25 (2, 0, 0) = (1.5, 0.5, 0);
    // (0, 1, 1) + 0.25 (0, 0, -1) = (0, 1, 0.75).
    let morphed = [Vec3::new(1.5, 0.5, 0.0), Vec3::new(0.0, 1.0, 0.75)];
    assert_eq!(m.positions, morphed);
    assert!(mesh.morphed(&model_weights[..2]).is_err());

    let bones = [
        Affine3A::from_rotation_translation(Quat::from_rotation_z(0.7), Vec3::new(1.0, 2.0, 0.0)),
        Affine3A::from_rotation_translation(Quat::from_rotation_x(-0.4), Vec3::new(0.0, 0.0, 3.0)),
    ];
    let joints = [0u16, 1, 1, 0];
    let weights = [0.75f32, 0.25, 0.6, 0.4];
    let mut lbs = [Vec3::ZERO; 2];
    let mut lbs_n = [Vec3::ZERO; 2];
    LinearBlendJob {
        skin: &bones,
        per_vertex: 2,
        joints: &joints,
        weights: &weights,
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut lbs,
        out_normals: &mut lbs_n,
        unit_normals: false,
    }
    .run()
    .unwrap();
    for v in 0..2 {
        let want: Vec3 = (0..2)
            .map(|k| {
                let b = &bones[joints[v * 2 + k] as usize];
                b.transform_point3(morphed[v]) * weights[v * 2 + k]
            })
            .sum();
        assert!(
            lbs[v].abs_diff_eq(want, 1e-5),
            "lbs {v}: {} vs {want}",
            lbs[v]
        );
    }
    // Rigid DQS with one influence per vertex is the bone itself.
    let mut dq = vec![crate::anim::DualQuat::default(); 2];
    crate::anim::encode_dual_quat(&bones, &PaletteHierarchy::flat(2), &mut dq).unwrap();
    let mut dqs = [Vec3::ZERO; 2];
    DualQuatSkinningJob {
        palette: &dq,
        scale_shear: &[] as &[Mat3A],
        per_vertex: 1,
        joints: &[1, 0],
        weights: &[1.0, 1.0],
        positions: &m.positions,
        normals: &[],
        out_positions: &mut dqs,
        out_normals: &mut [],
    }
    .run()
    .unwrap();
    assert!(dqs[0].abs_diff_eq(bones[1].transform_point3(morphed[0]), 1e-5));
    assert!(dqs[1].abs_diff_eq(bones[0].transform_point3(morphed[1]), 1e-5));
    // And the tangents through the same influences: rotated as the bones'
    // blended linear part moves them.
    let mut tan = [Vec4::ZERO; 2];
    crate::anim::TangentSkinningJob {
        palette: TangentPalette::Matrices(&bones),
        per_vertex: 2,
        joints: &joints,
        weights: &weights,
        tangents: &m.tangents,
        out_tangents: &mut tan,
    }
    .run()
    .unwrap();
    for v in 0..2 {
        let want: Vec3 = (0..2)
            .map(|k| {
                bones[joints[v * 2 + k] as usize].transform_vector3(Vec3::X) * weights[v * 2 + k]
            })
            .sum();
        assert!(tan[v].truncate().abs_diff_eq(want.normalize(), 1e-5));
    }
}
