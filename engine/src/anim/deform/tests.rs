use super::*;
use crate::anim::simd::lanes::similarity_cofactor;
use glam::Quat;

#[test]
fn cofactor_is_det_times_inverse_transpose() {
    let m = Mat3A::from_cols(
        Vec3A::new(2.0, 0.1, 0.0),
        Vec3A::new(0.3, 1.0, -0.2),
        Vec3A::new(0.0, 0.4, 0.5),
    );
    let expect = m.inverse().transpose() * m.determinant();
    assert!(cofactor(&m).abs_diff_eq(expect, 1e-5));
}

#[test]
fn normals_under_non_uniform_scale_stay_perpendicular() {
    // A plane x + y = 0 with normal (1,1,0)/sqrt2, stretched along x.
    let skin = [Affine3A::from_scale_rotation_translation(
        Vec3::new(3.0, 1.0, 1.0),
        Quat::from_rotation_z(0.4),
        Vec3::ZERO,
    )];
    let tangent = Vec3::new(1.0, -1.0, 0.0);
    let normal = Vec3::new(1.0, 1.0, 0.0).normalize();
    let mut pos = [Vec3::ZERO; 1];
    let mut nrm = [Vec3::ZERO; 1];
    LinearBlendJob {
        skin: &skin,
        per_vertex: 1,
        joints: &[0],
        weights: &[1.0],
        positions: &[tangent],
        normals: &[normal],
        out_positions: &mut pos,
        out_normals: &mut nrm,
        unit_normals: false,
    }
    .run()
    .unwrap();
    assert!(pos[0].dot(nrm[0]).abs() < 1e-6, "{pos:?} {nrm:?}");
    assert!((nrm[0].length() - 1.0).abs() < 1e-6);
}

use crate::anim::{
    encode_dual_quat, encode_dual_quat_scale, encode_quat_translation, DualQuat, PaletteHierarchy,
    QuatTranslation,
};
use rand::{Rng, SeedableRng};

struct Mesh {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    joints: Vec<u16>,
    weights: Vec<f32>,
    k: usize,
}

fn lbs(skin: &[Affine3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = m.positions.len();
    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    LinearBlendJob {
        skin,
        per_vertex: m.k,
        joints: &m.joints,
        weights: &m.weights,
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut p,
        out_normals: &mut nn,
        unit_normals: false,
    }
    .run()
    .unwrap();
    (p, nn)
}

fn dqs(dq: &[DualQuat], ss: &[Mat3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = m.positions.len();
    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    DualQuatSkinningJob {
        palette: dq,
        scale_shear: ss,
        per_vertex: m.k,
        joints: &m.joints,
        weights: &m.weights,
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut p,
        out_normals: &mut nn,
    }
    .run()
    .unwrap();
    (p, nn)
}

/// The DQS kernels of every tier the CPU has (the offset-table kernel
/// is compiled apart for AVX-512), from `Vec3` streams and from
/// prepared blocks, their outputs placed on 16 bytes and off them
/// (where the AVX2 build's stores differ): the AVX2 tier's outputs
/// bit for bit (the same arithmetic), nothing written outside them,
/// and the scalar definition's within rounding; rigid and two-phase.
#[test]
#[cfg(target_arch = "x86_64")]
fn dqs_tiers_agree_bit_for_bit() {
    use crate::anim::simd::{testable_tiers, Tier};
    let mut rng = rand::rngs::StdRng::seed_from_u64(83);
    for scaled in [false, true] {
        let skin: Vec<Affine3A> = (0..40)
            .map(|_| {
                let m = random_rigid(&mut rng);
                if scaled {
                    m * Affine3A::from_scale(Vec3::new(0.7, 1.3, rng.gen_range(0.5..2.0)))
                } else {
                    m
                }
            })
            .collect();
        let h = PaletteHierarchy::flat(skin.len());
        let mut dq = vec![DualQuat::default(); skin.len()];
        let mut ss = vec![Mat3A::ZERO; if scaled { skin.len() } else { 0 }];
        if scaled {
            encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
        } else {
            encode_dual_quat(&skin, &h, &mut dq).unwrap();
        }
        for k in 1..=5 {
            // 40 x 16 = 640 vertices at least: the offset table.
            let m = random_mesh(&mut rng, 675, k, 40);
            let n = m.positions.len();
            let (rp, rn) = dqs_scalar(&dq, &ss, &m);
            let bind = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
            let mut first: Option<(Vec<Vec3>, Vec<Vec3>)> = None;
            // Outputs placed at 4-byte offsets modulo 32 of their own,
            // on 16 bytes and off them: the same bits (and nothing
            // written outside them).
            let places = [(0, 0), (1, 0), (0, 3), (4, 4), (5, 7), (2, 6)];
            for tier in testable_tiers() {
                for (with_blocks, (sp, sn)) in [false, true]
                    .into_iter()
                    .flat_map(|b| places.map(|p| (b, p)))
                {
                    let (mut bp, mut bn) = (vec![Vec3::NAN; n + 8], vec![Vec3::NAN; n + 8]);
                    let (fp, fn_) = (&mut bp[sp..sp + n], &mut bn[sn..sn + n]);
                    let (p, nn) = (bind.positions(), bind.normals());
                    let blocks = if with_blocks {
                        Some(bind.blocks_for(p, nn).unwrap())
                    } else {
                        None
                    };
                    let (j, w) = (&m.joints, &m.weights);
                    let done = dqs_fast(tier, &dq, &ss, k, j, w, p, nn, blocks, fp, fn_);
                    assert!(k > 4 || done == n / 8 * 8, "{tier:?} k {k}: {done} done");
                    dqs_reference(&dq, &ss, k, j, w, p, nn, fp, fn_, done);
                    for i in 0..n {
                        assert!(fp[i].abs_diff_eq(rp[i], 1e-5), "{tier:?} k {k} {i}");
                        assert!(fn_[i].abs_diff_eq(rn[i], 1e-5), "{tier:?} k {k} {i}");
                    }
                    let (fp, fn_) = (fp.to_vec(), fn_.to_vec());
                    let outside =
                        |v: &[Vec3], s: usize| v[..s].iter().chain(&v[s + n..]).all(|x| x.is_nan());
                    assert!(
                        outside(&bp, sp) && outside(&bn, sn),
                        "{tier:?} k {k} at {sp} {sn}: written outside"
                    );
                    match &first {
                        None => first = Some((fp, fn_)),
                        Some(f) => assert!(
                            f.0 == fp && f.1 == fn_,
                            "{tier:?} k {k} blocks {with_blocks} scaled {scaled} at {sp} {sn}: \
                             not AVX2's"
                        ),
                    }
                }
            }
            assert!(first.is_some() && testable_tiers()[0] == Tier::Avx2);
        }
    }
}

/// The scalar definition of LBS over the whole mesh.
fn lbs_scalar(skin: &[Affine3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = m.positions.len();
    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let (j, w) = (&m.joints, &m.weights);
    lbs_reference(skin, m.k, j, w, &m.positions, &m.normals, &mut p, &mut nn);
    (p, nn)
}

/// The scalar definition of DQS over the whole mesh.
fn dqs_scalar(dq: &[DualQuat], ss: &[Mat3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = m.positions.len();
    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    dqs_reference(
        dq,
        ss,
        m.k,
        &m.joints,
        &m.weights,
        &m.positions,
        &m.normals,
        &mut p,
        &mut nn,
        0,
    );
    (p, nn)
}

fn random_mesh(rng: &mut impl Rng, n: usize, k: usize, joints: u16) -> Mesh {
    let mut m = Mesh {
        positions: Vec::new(),
        normals: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
        k,
    };
    for _ in 0..n {
        m.positions
            .push(Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 4.0 - 2.0);
        m.normals.push(
            Vec3::new(rng.gen(), rng.gen(), rng.gen())
                .sub(Vec3::splat(0.5))
                .normalize(),
        );
        let w: Vec<f32> = (0..k).map(|_| rng.gen_range(0.05..1.0)).collect();
        let sum: f32 = w.iter().sum();
        for wi in w {
            m.joints.push(rng.gen_range(0..joints));
            m.weights.push(wi / sum);
        }
    }
    m
}

use std::ops::Sub;

fn random_rigid(rng: &mut impl Rng) -> Affine3A {
    Affine3A::from_rotation_translation(
        Quat::from_euler(
            glam::EulerRot::ZYX,
            rng.gen_range(-3.1..3.1),
            rng.gen_range(-1.5..1.5),
            rng.gen_range(-3.1..3.1),
        ),
        Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 6.0 - 3.0,
    )
}

#[test]
fn dqs_equals_lbs_for_single_rigid_influences() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let skin: Vec<Affine3A> = (0..16).map(|_| random_rigid(&mut rng)).collect();
    let mut dq = vec![DualQuat::default(); 16];
    encode_dual_quat(&skin, &PaletteHierarchy::flat(16), &mut dq).unwrap();
    let m = random_mesh(&mut rng, 500, 1, 16);
    let (lp, ln) = lbs(&skin, &m);
    let (dp, dn) = dqs(&dq, &[], &m);
    for i in 0..500 {
        assert!(lp[i].abs_diff_eq(dp[i], 1e-5), "{i}");
        assert!(ln[i].abs_diff_eq(dn[i], 1e-5), "{i}");
    }
    // Several influences on one joint are one influence too, even with a
    // negated copy of the bone in the palette (antipodality check).
    let mut dq2 = dq.clone();
    dq2.push(dq[3].negate());
    let mut m4 = random_mesh(&mut rng, 50, 4, 1);
    for (s, j) in m4.joints.iter_mut().enumerate() {
        *j = if s % 2 == 0 { 3 } else { 16 };
    }
    let mut skin2 = skin.clone();
    skin2.push(skin[3]);
    let (lp, _) = lbs(&skin2, &m4);
    let (dp, _) = dqs(&dq2, &[], &m4);
    for i in 0..50 {
        assert!(lp[i].abs_diff_eq(dp[i], 1e-5), "{i}");
    }
}

#[test]
fn two_phase_dqs_keeps_scaled_joints_right() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(22);
    let skin: Vec<Affine3A> = (0..8)
        .map(|_| {
            random_rigid(&mut rng)
                * Affine3A::from_scale(Vec3::new(
                    rng.gen_range(0.5..2.0),
                    rng.gen_range(0.5..2.0),
                    rng.gen_range(0.5..2.0),
                ))
                * Affine3A::from_rotation_x(rng.gen_range(-1.0..1.0))
        })
        .collect();
    let h = PaletteHierarchy::flat(8);
    let mut dq = vec![DualQuat::default(); 8];
    let mut ss = vec![Mat3A::ZERO; 8];
    encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
    let m = random_mesh(&mut rng, 300, 1, 8);
    let (lp, ln) = lbs(&skin, &m);
    let (dp, dn) = dqs(&dq, &ss, &m);
    for i in 0..300 {
        assert!(lp[i].abs_diff_eq(dp[i], 1e-4), "{i} {} {}", lp[i], dp[i]);
        assert!(ln[i].abs_diff_eq(dn[i], 1e-4), "{i}");
    }
    // Rigid DQS on the same palette loses the scale: it is not right.
    let (rp, _) = dqs(&dq, &[], &m);
    assert!((0..300).any(|i| !lp[i].abs_diff_eq(rp[i], 1e-2)));
}

#[test]
fn quat_translation_job_equals_lbs_with_uniform_scale() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let skin: Vec<Affine3A> = (0..8)
        .map(|_| {
            random_rigid(&mut rng) * Affine3A::from_scale(Vec3::splat(rng.gen_range(0.5..2.0)))
        })
        .collect();
    let mut qt = vec![QuatTranslation::default(); 8];
    assert!(encode_quat_translation(&skin, &mut qt).unwrap().is_exact());
    let m = random_mesh(&mut rng, 300, 4, 8);
    let (lp, ln) = lbs(&skin, &m);
    let (mut qp, mut qn) = (vec![Vec3::ZERO; 300], vec![Vec3::ZERO; 300]);
    QuatTranslationSkinningJob {
        palette: &qt,
        per_vertex: 4,
        joints: &m.joints,
        weights: &m.weights,
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut qp,
        out_normals: &mut qn,
    }
    .run()
    .unwrap();
    for i in 0..300 {
        assert!(lp[i].abs_diff_eq(qp[i], 1e-4), "{i}");
        assert!(ln[i].abs_diff_eq(qn[i], 1e-4), "{i}");
    }
}

/// A cylinder of radius 1 along x from 0 to 2, joint 0 at x = 0 and
/// joint 1 at x = 1; weights go linearly from joint 0 to joint 1 over
/// x in [0.5, 1.5]. Joint 1 twists 150 degrees about x.
fn candy_wrapper() -> (Vec<Affine3A>, Mesh, Vec<usize>) {
    let rings = 21;
    let segments = 32;
    let mut m = Mesh {
        positions: Vec::new(),
        normals: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
        k: 2,
    };
    let mut middle = Vec::new();
    for r in 0..rings {
        let x = 2.0 * r as f32 / (rings - 1) as f32;
        let w1 = ((x - 0.5) / 1.0).clamp(0.0, 1.0);
        for s in 0..segments {
            let a = std::f32::consts::TAU * s as f32 / segments as f32;
            if r == rings / 2 {
                middle.push(m.positions.len());
            }
            m.positions.push(Vec3::new(x, a.cos(), a.sin()));
            m.normals.push(Vec3::new(0.0, a.cos(), a.sin()));
            m.joints.extend_from_slice(&[0, 1]);
            m.weights.extend_from_slice(&[1.0 - w1, w1]);
        }
    }
    // Joint 1's skinning matrix: bind at x = 1, twisted about its own x.
    let at1 = Affine3A::from_translation(Vec3::X);
    let twist = at1 * Affine3A::from_rotation_x(150f32.to_radians()) * at1.inverse();
    (vec![Affine3A::IDENTITY, twist], m, middle)
}

#[test]
fn candy_wrapper_lbs_collapses_dqs_keeps_volume() {
    let (skin, m, middle) = candy_wrapper();
    let radius = |p: Vec3| (p.y * p.y + p.z * p.z).sqrt();
    let (lp, _) = lbs(&skin, &m);
    let lbs_r: f32 = middle.iter().map(|&i| radius(lp[i])).sum::<f32>() / middle.len() as f32;
    // Half of two rotations 150 degrees apart: |cos 75| = 0.259.
    assert!(
        (lbs_r - 75f32.to_radians().cos()).abs() < 1e-3,
        "LBS radius {lbs_r}"
    );
    assert!(lbs_r < 0.3, "LBS keeps the middle at {lbs_r}");
    let mut dq = vec![DualQuat::default(); 2];
    encode_dual_quat(&skin, &PaletteHierarchy::flat(2), &mut dq).unwrap();
    let (dp, dn) = dqs(&dq, &[], &m);
    for i in 0..m.positions.len() {
        assert!(
            (radius(dp[i]) - 1.0).abs() < 0.02,
            "DQS radius {}",
            radius(dp[i])
        );
        assert!((dp[i].x - m.positions[i].x).abs() < 1e-4);
        assert!((dn[i].length() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn fast_lbs_matches_the_scalar_definition() {
    #[cfg(target_arch = "x86_64")]
    for (tier, palette) in crate::anim::simd::testable_tiers()
        .into_iter()
        .flat_map(|t| [(t, 20), (t, 9), (t, 64), (t, 100)])
    {
        let mut rng = rand::rngs::StdRng::seed_from_u64(41);
        let skin: Vec<Affine3A> = (0..palette)
            .map(|_| {
                random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(
                        rng.gen_range(0.3..2.0),
                        rng.gen_range(0.3..2.0),
                        rng.gen_range(0.3..2.0),
                    ))
            })
            .collect();
        // Mesh sizes around the 8- and 16-vertex blocks; the smallest are
        // shorter than the palette (no aligned copy of it, no SoA table
        // for one influence). Palettes of 9, 20 and 64 entries take the
        // three SoA table lookups with one influence, 100 the blend.
        for (k, n) in (1..=9).flat_map(|k| [(k, 257), (k, 16), (k, 13), (k, 40)]) {
            let mut m = random_mesh(&mut rng, n, k, palette as u16);
            m.normals[9] = Vec3::ZERO;
            if k == 1 {
                m.weights[5] = 0.0;
                m.weights[6] = 0.5;
                m.weights[7] = -0.75;
            }
            let (rp, rn) = lbs_scalar(&skin, &m);
            let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            lbs_fast(
                tier,
                false,
                &skin,
                k,
                &m.joints,
                &m.weights,
                &m.positions,
                &m.normals,
                None,
                &mut fp,
                &mut fn_,
            );
            // The same from prepared blocks of eight, bit for bit.
            let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
            let blocks = bv.blocks_for(bv.positions(), bv.normals()).unwrap();
            let checked = CheckedJoints::new(m.joints.clone());
            let prepared = Prepared {
                blocks,
                checked: &checked,
            };
            let (mut bp, mut bn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            lbs_fast(
                tier,
                false,
                &skin,
                k,
                &m.joints,
                &m.weights,
                bv.positions(),
                bv.normals(),
                Some(prepared),
                &mut bp,
                &mut bn,
            );
            assert_eq!(
                (&bp, &bn),
                (&fp, &fn_),
                "{tier:?} palette {palette} k {k} blocks"
            );
            for i in 0..n {
                assert!(
                    rp[i].abs_diff_eq(fp[i], 1e-5),
                    "{tier:?} palette {palette} k {k} vertex {i}: {} {}",
                    rp[i],
                    fp[i]
                );
                assert!(
                    rn[i].abs_diff_eq(fn_[i], 1e-5),
                    "{tier:?} palette {palette} k {k} vertex {i}: {} {}",
                    rn[i],
                    fn_[i]
                );
                // Unit normals (or zero for a zero weight) to 1e-5
                // relative.
                let len = fn_[i].length();
                assert!(
                    (len - 1.0).abs() < 1e-5 || (rn[i] == Vec3::ZERO && len == 0.0),
                    "{tier:?} k {k} vertex {i}: |n| = {len}"
                );
            }
            // Positions only.
            let mut fp2 = vec![Vec3::ZERO; n];
            lbs_fast(
                tier,
                false,
                &skin,
                k,
                &m.joints,
                &m.weights,
                &m.positions,
                &[],
                None,
                &mut fp2,
                &mut [],
            );
            assert!(rp.iter().zip(&fp2).all(|(a, b)| a.abs_diff_eq(*b, 1e-5)));
        }
    }
}

/// The similarity test: rotations, reflections and uniform scales pass
/// with a cofactor that keeps unit vectors unit; non-uniform scale,
/// shear, a zero matrix and NaN do not, and keep the plain cofactor.
#[test]
fn similarity_cofactor_keeps_lengths_only_for_similarities() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    for _ in 0..50 {
        let r = random_rigid(&mut rng).matrix3;
        let s = rng.gen_range(0.01..100.0);
        let flip = Mat3A::from_diagonal(Vec3::new(1.0, -1.0, 1.0));
        for m in [r, r * s, r * flip * s] {
            let (k, similar) = similarity_cofactor(&m);
            assert!(similar, "{m:?}");
            let v = Vec3A::new(rng.gen(), rng.gen(), rng.gen()).normalize();
            let kv = k * v;
            assert!((kv.length() - 1.0).abs() < 2e-6, "{}", kv.length());
            let c = cofactor(&m) * v;
            assert!(kv.normalize().abs_diff_eq(c.normalize(), 1e-6));
        }
        for (m, what) in [
            (
                r * Mat3A::from_diagonal(Vec3::new(1.0, 1.0, 1.001)),
                "scale",
            ),
            (
                r * Mat3A::from_cols_array(&[1.0, 0.0, 0.0, 0.001, 1.0, 0.0, 0.0, 0.0, 1.0]),
                "shear",
            ),
            (Mat3A::ZERO, "zero"),
            (r * f32::NAN, "nan"),
        ] {
            let (k, similar) = similarity_cofactor(&m);
            assert!(!similar, "{what}");
            if what != "nan" {
                assert_eq!(k, cofactor(&m), "{what}");
            }
        }
    }
    assert!(normals_are_unit(&[]));
    assert!(normals_are_unit(&[
        Vec3::X,
        Vec3::new(1.0, 2.0, -3.0).normalize()
    ]));
    assert!(!normals_are_unit(&[Vec3::Y, Vec3::Z * 1.001]));
    assert!(!normals_are_unit(&[Vec3::ZERO]));
}

/// `unit_normals`: with unit normals, every tier gives the scalar
/// definition (unit normals, its directions), blocks of similarities,
/// blocks of other matrices and blocks mixing both alike. A normal that
/// breaks the promise keeps its length under a similarity (so the skip
/// is taken) and is renormalised under any other matrix.
#[test]
fn unit_normals_skip_renormalising_only_under_similarities() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(62);
    // Entries 0-9 rigid, 10-19 uniformly scaled (one reflected), 20-29
    // non-uniformly scaled.
    let mut skin: Vec<Affine3A> = (0..30).map(|_| random_rigid(&mut rng)).collect();
    for (i, m) in skin.iter_mut().enumerate().skip(10) {
        let s = if i < 20 {
            Vec3::splat(rng.gen_range(0.3..3.0)) * if i == 15 { -1.0 } else { 1.0 }
        } else {
            Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0))
        };
        *m *= Affine3A::from_scale(s);
    }
    for n in [1usize, 8, 9, 45, 1000] {
        let mut m = random_mesh(&mut rng, n, 1, 30);
        // Whole blocks of similarities, of others, and mixed ones.
        for (v, j) in m.joints.iter_mut().enumerate() {
            *j = match (v / 8) % 3 {
                0 => rng.gen_range(0..20),
                1 => rng.gen_range(20..30),
                _ => rng.gen_range(0..30),
            };
        }
        let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let (j, ps, ns) = (&m.joints, &m.positions, &m.normals);
        lbs_reference(&skin, 1, j, &[], ps, ns, &mut rp, &mut rn);
        let check = |what: &str, fp: &[Vec3], fn_: &[Vec3]| {
            for i in 0..n {
                assert!(fp[i].abs_diff_eq(rp[i], 1e-5), "{what} {n} {i}: {}", fp[i]);
                assert!(
                    fn_[i].abs_diff_eq(rn[i], 1e-5),
                    "{what} {n} {i}: {}",
                    fn_[i]
                );
                let len = fn_[i].length();
                assert!((len - 1.0).abs() <= 5e-6, "{what} {n} {i}: |n| = {len}");
            }
        };
        let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        LinearBlendJob {
            skin: &skin,
            per_vertex: 1,
            joints: j,
            weights: &[],
            positions: ps,
            normals: ns,
            out_positions: &mut fp,
            out_normals: &mut fn_,
            unit_normals: true,
        }
        .run()
        .unwrap();
        check("job", &fp, &fn_);
        #[cfg(target_arch = "x86_64")]
        for tier in crate::anim::simd::testable_tiers() {
            let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            lbs_fast(
                tier,
                true,
                &skin,
                1,
                j,
                &[],
                ps,
                ns,
                None,
                &mut fp,
                &mut fn_,
            );
            check(&format!("{tier:?}"), &fp, &fn_);
            // Normals of length 2: kept under similarities in whole
            // blocks (the renormalisation skipped), renormalised under
            // the others.
            if n >= 16 {
                let twice: Vec<Vec3> = ns.iter().map(|v| *v * 2.0).collect();
                lbs_fast(
                    tier,
                    true,
                    &skin,
                    1,
                    j,
                    &[],
                    ps,
                    &twice,
                    None,
                    &mut fp,
                    &mut fn_,
                );
                for i in 0..8 {
                    let len = fn_[i].length();
                    assert!((len - 2.0).abs() < 2e-5, "{tier:?} {i}: {len}");
                    assert!(fn_[i].normalize().abs_diff_eq(rn[i], 1e-5));
                }
                for i in 8..16 {
                    let len = fn_[i].length();
                    assert!((len - 1.0).abs() < 1e-5, "{tier:?} {i}: {len}");
                    assert!(fn_[i].abs_diff_eq(rn[i], 1e-5));
                }
            }
        }
    }
}

/// The L2 size that decides streaming stores: on an Intel CPU, a
/// power-of-two-ish size a core's L2 can have (256 KiB to 8 MiB), and
/// the streaming decision on either side of it.
#[test]
#[cfg(target_arch = "x86_64")]
fn streaming_follows_the_l2_size() {
    if !crate::anim::simd::select::intel() {
        assert!(
            !crate::anim::simd::select::stream_outputs(usize::MAX),
            "streaming where the CPU is not Intel's"
        );
        return;
    }
    let l2 = crate::anim::simd::select::l2_bytes().expect("CPUID leaf 4 names an L2 on Intel CPUs");
    eprintln!("L2: {l2} bytes");
    assert!((256 << 10..=8 << 20).contains(&l2), "L2 of {l2} bytes");
    assert!(
        !crate::anim::simd::select::stream_outputs(l2)
            && crate::anim::simd::select::stream_outputs(l2 + 1)
    );
}

/// The one-influence kernel's streaming stores (meshes past the L2 on
/// Intel CPUs; here forced on small ones): the outputs of ordinary
/// stores bit for bit under similarities, wherever the outputs lie
/// (each 4-byte offset modulo 32, and outputs that lie apart, which
/// stream nothing), nothing written outside them, and the reference's
/// results within rounding under any matrices.
#[test]
#[cfg(target_arch = "x86_64")]
fn streamed_outputs_match_cached_ones() {
    use crate::anim::simd::{avx2, testable_tiers, Tier};
    if !testable_tiers().contains(&Tier::Avx2) {
        eprintln!("streamed_outputs_match_cached_ones: no AVX2 + FMA here, skipped");
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(71);
    let rigid: Vec<Affine3A> = (0..20).map(|_| random_rigid(&mut rng)).collect();
    let mut mixed = rigid.clone();
    for m in mixed.iter_mut().skip(10) {
        *m *= Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)));
    }
    let n = 203;
    let m = random_mesh(&mut rng, n, 1, 20);
    let (j, ps, ns) = (&m.joints, &m.positions, &m.normals);
    for skin in [&rigid, &mixed] {
        let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        lbs_reference(skin, 1, j, &[], ps, ns, &mut rp, &mut rn);
        // Both outputs in one buffer, the normals' part 224 vertices
        // (84 times 32 bytes) after the positions', so that equal
        // offsets lie alike modulo 32.
        let run = |stream: bool, at_p: usize, at_n: usize| {
            let mut buf = vec![Vec3::NAN; 2 * 224];
            let (op, on) = buf.split_at_mut(224);
            // SAFETY: AVX2 + FMA checked above; one influence inside
            // the palette, normals as long as the positions, a palette
            // within LBS1_TABLE_MAX.
            let streamed = unsafe {
                avx2::lbs1_normals::<true>(
                    skin,
                    j,
                    ps,
                    ns,
                    &mut op[at_p..at_p + n],
                    &mut on[at_n..at_n + n],
                    stream,
                )
            };
            assert_eq!(streamed, stream && at_p == at_n, "{at_p} {at_n}");
            for (buf, at) in [(&*op, at_p), (&*on, at_n)] {
                let outside = buf[..at].iter().chain(&buf[at + n..]);
                assert!(outside.into_iter().all(|v| v.is_nan()), "written outside");
            }
            (op[at_p..at_p + n].to_vec(), on[at_n..at_n + n].to_vec())
        };
        let cached = run(false, 0, 0);
        for (at_p, at_n) in (0..8).map(|o| (o, o)).chain([(1, 2), (0, 5)]) {
            let streamed = run(true, at_p, at_n);
            for i in 0..n {
                let (p, nn) = (streamed.0[i], streamed.1[i]);
                assert!(p.abs_diff_eq(rp[i], 1e-5), "{at_p} {at_n} {i}: {p}");
                assert!(nn.abs_diff_eq(rn[i], 1e-5), "{at_p} {at_n} {i}: {nn}");
            }
            if std::ptr::eq(skin, &rigid) {
                assert!(
                    streamed == cached,
                    "offsets {at_p} {at_n}: not the cached outputs"
                );
            }
        }
    }
}

/// One influence and no weights: every weight is 1, on the scalar
/// definition (bit for bit) and every fast tier; other jobs and counts
/// still want their weights.
#[test]
fn one_influence_needs_no_weights() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(43);
    let skin: Vec<Affine3A> = (0..30)
        .map(|_| {
            random_rigid(&mut rng)
                * Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)))
        })
        .collect();
    for n in [0usize, 1, 7, 8, 45, 1000] {
        let mut m = random_mesh(&mut rng, n, 1, 30);
        m.weights.iter_mut().for_each(|w| *w = 1.0);
        let run = |weights: &[f32], normals: bool| {
            let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let (ns, on): (&[Vec3], &mut [Vec3]) = if normals {
                (&m.normals, &mut nn)
            } else {
                (&[], &mut [])
            };
            LinearBlendJob {
                skin: &skin,
                per_vertex: 1,
                joints: &m.joints,
                weights,
                positions: &m.positions,
                normals: ns,
                out_positions: &mut p,
                out_normals: on,
                unit_normals: false,
            }
            .run()
            .unwrap();
            (p, nn)
        };
        let reference = |weights: &[f32]| {
            let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let (j, ps, ns) = (&m.joints, &m.positions, &m.normals);
            lbs_reference(&skin, 1, j, weights, ps, ns, &mut p, &mut nn);
            (p, nn)
        };
        let (rp, rn) = reference(&[]);
        let (wp, wn) = reference(&m.weights);
        assert_eq!((&rp, &rn), (&wp, &wn), "scalar, {n} vertices");
        for normals in [true, false] {
            let (p, nn) = run(&[], normals);
            for i in 0..n {
                assert!(p[i].abs_diff_eq(rp[i], 1e-5), "{n}: {} {}", p[i], rp[i]);
                if normals {
                    assert!(nn[i].abs_diff_eq(rn[i], 1e-5), "{n}: {} {}", nn[i], rn[i]);
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        for tier in crate::anim::simd::testable_tiers() {
            let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let (p, ns) = (&m.positions, &m.normals);
            lbs_fast(
                tier,
                false,
                &skin,
                1,
                &m.joints,
                &[],
                p,
                ns,
                None,
                &mut fp,
                &mut fn_,
            );
            for i in 0..n {
                assert!(fp[i].abs_diff_eq(rp[i], 1e-5), "{tier:?} {n}: {}", fp[i]);
                assert!(fn_[i].abs_diff_eq(rn[i], 1e-5), "{tier:?} {n}: {}", fn_[i]);
            }
        }
    }
    // Two influences, or dual quaternions, still need their weights.
    let m = random_mesh(&mut rng, 10, 2, 30);
    let (mut p, mut nn) = (vec![Vec3::ZERO; 10], vec![Vec3::ZERO; 10]);
    let e = LinearBlendJob {
        skin: &skin,
        per_vertex: 2,
        joints: &m.joints,
        weights: &[],
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut p,
        out_normals: &mut nn,
        unit_normals: false,
    }
    .run()
    .unwrap_err();
    assert!(e.to_string().contains("influence weights"), "{e}");
    let dq: Vec<DualQuat> = (0..30)
        .map(|_| DualQuat::from_rotation_translation(Quat::IDENTITY, Vec3::X))
        .collect();
    let e = DualQuatSkinningJob {
        palette: &dq,
        scale_shear: &[],
        per_vertex: 1,
        joints: &m.joints[..10],
        weights: &[],
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut p,
        out_normals: &mut nn,
    }
    .run()
    .unwrap_err();
    assert!(e.to_string().contains("influence weights"), "{e}");
}

/// Whatever the streams' alignments, every vertex is skinned once, as
/// the scalar definition does and bit for bit the same, weighted and
/// weightless, with and without normals (the AVX-512 kernels skin a
/// few vertices apart first so that their blocks start on cache lines:
/// `stream_lead`).
#[test]
fn stream_leads_skin_every_alignment_the_same() {
    #[cfg(target_arch = "x86_64")]
    for tier in crate::anim::simd::testable_tiers() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(43);
        let skin: Vec<Affine3A> = (0..20).map(|_| random_rigid(&mut rng)).collect();
        let n = 300;
        for k in [1, 2, 4] {
            let m = random_mesh(&mut rng, n, k, 20);
            let weightless = vec![1.0; n];
            let weight_sets: &[&[f32]] = if k == 1 {
                &[&m.weights, &[]]
            } else {
                &[&m.weights]
            };
            for &weights in weight_sets {
                let ref_w: &[f32] = if weights.is_empty() {
                    &weightless
                } else {
                    weights
                };
                let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                lbs_reference(
                    &skin,
                    k,
                    &m.joints,
                    ref_w,
                    &m.positions,
                    &m.normals,
                    &mut rp,
                    &mut rn,
                );
                // Each stream shifted by its own number of vertices (0 to
                // 15: every 4-byte offset modulo 64), in buffers with room;
                // the outputs of shift 0, with and without normals.
                let mut first: Vec<Vec<Vec3>> = Vec::new();
                for o in 0..16 {
                    let shift = |s: usize| (o * s) % 16;
                    let placed = |v: &[Vec3], s: usize| {
                        let mut b = vec![Vec3::splat(9.0); n + 16];
                        b[shift(s)..shift(s) + n].copy_from_slice(v);
                        b
                    };
                    let (p, nn) = (placed(&m.positions, 1), placed(&m.normals, 3));
                    let (mut op, mut on) = (vec![Vec3::NAN; n + 16], vec![Vec3::NAN; n + 16]);
                    for with_normals in [true, false] {
                        let (ns, ons): (&[Vec3], &mut [Vec3]) = if with_normals {
                            (&nn[shift(3)..shift(3) + n], &mut on[shift(7)..shift(7) + n])
                        } else {
                            (&[], &mut [])
                        };
                        lbs_fast(
                            tier,
                            false,
                            &skin,
                            k,
                            &m.joints,
                            weights,
                            &p[shift(1)..shift(1) + n],
                            ns,
                            None,
                            &mut op[shift(5)..shift(5) + n],
                            ons,
                        );
                        for i in 0..n {
                            let (a, b) = (rp[i], op[shift(5) + i]);
                            assert!(
                                a.abs_diff_eq(b, 1e-5),
                                "{tier:?} k {k} shift {o} vertex {i}: {a} {b}"
                            );
                            if with_normals {
                                let (a, b) = (rn[i], on[shift(7) + i]);
                                assert!(
                                    a.abs_diff_eq(b, 1e-5),
                                    "{tier:?} k {k} shift {o} normal {i}: {a} {b}"
                                );
                            }
                        }
                        // Bit for bit the same wherever the buffers lie.
                        let got = [
                            op[shift(5)..shift(5) + n].to_vec(),
                            if with_normals {
                                on[shift(7)..shift(7) + n].to_vec()
                            } else {
                                Vec::new()
                            },
                        ];
                        if o == 0 {
                            first.extend(got);
                        } else {
                            let at = if with_normals { 0 } else { 2 };
                            assert!(
                                got[0] == first[at] && got[1] == first[at + 1],
                                "{tier:?} k {k} shift {o}: not the outputs of shift 0"
                            );
                        }
                        op.fill(Vec3::NAN);
                        on.fill(Vec3::NAN);
                    }
                }
            }
        }
    }
}

/// The pipelined kernels (two to four influences with normals, from
/// the `Vec3` streams and from prepared blocks) write the same bits
/// wherever their outputs lie: on 16 bytes (where the AVX2 kernel
/// stores 16-byte halves) and off them, each output placed on its own
/// (every 4-byte offset modulo 32), and nothing outside the outputs.
#[test]
fn pipelined_outputs_are_the_same_at_every_offset() {
    #[cfg(target_arch = "x86_64")]
    for tier in crate::anim::simd::testable_tiers() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(47);
        let skin: Vec<Affine3A> = (0..24).map(|_| random_rigid(&mut rng)).collect();
        let n = 203;
        for k in 2..=4 {
            let m = random_mesh(&mut rng, n, k, 24);
            let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
            let checked = CheckedJoints::new(m.joints.clone());
            let blocks = Prepared {
                blocks: (&bv.position_blocks[..], &bv.normal_blocks[..]),
                checked: &checked,
            };
            let (rp, rn) = lbs_scalar(&skin, &m);
            let (j, w, p, nn) = (&m.joints, &m.weights, bv.positions(), bv.normals());
            for prepared in [None, Some(blocks)] {
                let mut first: Option<(Vec<Vec3>, Vec<Vec3>)> = None;
                for (sp, sn) in (0..8).flat_map(|a| (0..8).map(move |b| (a, b))) {
                    let (mut op, mut on) = (vec![Vec3::NAN; n + 8], vec![Vec3::NAN; n + 8]);
                    let (o, q) = (&mut op[sp..sp + n], &mut on[sn..sn + n]);
                    lbs_fast(tier, false, &skin, k, j, w, p, nn, prepared, o, q);
                    let untouched =
                        |v: &[Vec3], s: usize| v[..s].iter().chain(&v[s + n..]).all(|x| x.is_nan());
                    let what = format!("{tier:?} k {k} blocks {} at {sp} {sn}", prepared.is_some());
                    assert!(untouched(&op, sp) && untouched(&on, sn), "{what}: outside");
                    let got = (op[sp..sp + n].to_vec(), on[sn..sn + n].to_vec());
                    match &first {
                        None => {
                            for i in 0..n {
                                assert!(got.0[i].abs_diff_eq(rp[i], 1e-5), "{what} {i}");
                                assert!(got.1[i].abs_diff_eq(rn[i], 1e-5), "{what} {i}");
                            }
                            first = Some(got);
                        }
                        Some(f) => assert!(got == *f, "{what}: not the outputs at 0 0"),
                    }
                }
            }
        }
    }
}

/// The lead puts the blocks on cache lines in the first streams that
/// can be, is shorter than a block, and is 0 for short meshes.
#[test]
#[cfg(target_arch = "x86_64")]
fn stream_lead_aligns_the_first_streams() {
    use crate::anim::simd::avx512::lbs::stream_lead;
    let line = |a: usize, s: usize| (a + 12 * s).is_multiple_of(64);
    for a in (4096..4160).step_by(4) {
        for b in (8192..8256).step_by(4) {
            let s = stream_lead(1000, &[a, b]);
            assert!(s < 16);
            assert!(line(a, s), "{a} lead {s}");
            if !line(b, s) {
                // No lead puts both on lines.
                assert!((0..16).all(|t| !line(a, t) || !line(b, t)));
            }
            assert_eq!(stream_lead(127, &[a, b]), 0);
        }
    }
    // All four streams 16 bytes past a line: four vertices (48 bytes).
    assert_eq!(stream_lead(1000, &[64 * 5 + 16; 4]), 4);
    // Already on lines: no lead.
    assert_eq!(stream_lead(1000, &[128, 192]), 0);
}

/// A palette off the boundary a tier's loads need is read from a
/// cache-line-aligned copy (on the stack, or the heap past 128 entries)
/// when the mesh is at least as long, and in place otherwise; either way
/// every fast path skins as the scalar definition does.
#[test]
fn misaligned_palette_is_copied_and_skins_the_same() {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::anim::simd::avx2;
        let mut rng = rand::rngs::StdRng::seed_from_u64(48);
        #[repr(C, align(64))]
        struct Buf([f32; 16 * 33]);
        let mut buf = Box::new(Buf([0.0; 16 * 33]));
        // SAFETY: 32 entries of 16 floats fit after the first 4 floats;
        // the address is 16-byte aligned, as an Affine3A needs.
        let skin: &mut [Affine3A] = unsafe {
            std::slice::from_raw_parts_mut(buf.0.as_mut_ptr().add(4) as *mut Affine3A, 32)
        };
        for m in skin.iter_mut() {
            *m = random_rigid(&mut rng)
                * Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)));
        }
        let skin: &[Affine3A] = skin;
        assert_eq!(skin.as_ptr() as usize % 32, 16);
        let (mut stack, mut heap) = (
            [const { MaybeUninit::uninit() }; avx2::ALIGNED_PALETTE_MAX],
            Vec::new(),
        );
        let a = avx2::aligned_palette(skin, 32, 32, &mut stack, &mut heap);
        assert_eq!(a.as_ptr() as usize % 64, 0);
        assert_eq!(a, skin);
        // Longer than the mesh: read in place.
        let (mut stack, mut heap) = (
            [const { MaybeUninit::uninit() }; avx2::ALIGNED_PALETTE_MAX],
            Vec::new(),
        );
        let b = avx2::aligned_palette(skin, 31, 32, &mut stack, &mut heap);
        assert_eq!(b.as_ptr(), skin.as_ptr());
        // On a 16-byte boundary: off a 64-byte one too; a palette
        // longer than the stack buffer is copied to the heap.
        let long: Vec<Affine3A> = (0..200).map(|_| random_rigid(&mut rng)).collect();
        for (pal, align) in [(skin, 64), (&long[1..], 64), (&long[1..], 32)] {
            let (mut stack, mut heap) = (
                [const { MaybeUninit::uninit() }; avx2::ALIGNED_PALETTE_MAX],
                Vec::new(),
            );
            let c = avx2::aligned_palette(pal, 1000, align, &mut stack, &mut heap);
            if (pal.as_ptr() as usize).is_multiple_of(align) {
                assert_eq!(c.as_ptr(), pal.as_ptr());
            } else {
                assert_eq!(c.as_ptr() as usize % 64, 0);
                assert_eq!(c, pal);
                assert_eq!(
                    heap.len(),
                    if pal.len() > avx2::ALIGNED_PALETTE_MAX {
                        pal.len()
                    } else {
                        0
                    }
                );
            }
        }
        for tier in crate::anim::simd::testable_tiers() {
            for (k, n, weights) in [
                (1, 200, true),
                (1, 200, false),
                (4, 200, true),
                (4, 100, true),
            ] {
                let m = random_mesh(&mut rng, n, k, 32);
                let w: &[f32] = if weights { &m.weights } else { &[] };
                for normals in [true, false] {
                    let (ns, mut rp, mut rn) = (
                        if normals { &m.normals[..] } else { &[] },
                        vec![Vec3::ZERO; n],
                        vec![Vec3::ZERO; if normals { n } else { 0 }],
                    );
                    let (mut fp, mut fn_) = (rp.clone(), rn.clone());
                    let (j, p) = (&m.joints, &m.positions);
                    lbs_reference(skin, k, j, w, p, ns, &mut rp, &mut rn);
                    lbs_fast(tier, false, skin, k, j, w, p, ns, None, &mut fp, &mut fn_);
                    for i in 0..n {
                        assert!(rp[i].abs_diff_eq(fp[i], 1e-5), "{tier:?} k {k} {i}");
                        if normals {
                            assert!(rn[i].abs_diff_eq(fn_[i], 1e-5), "{tier:?} k {k} {i}");
                        }
                    }
                }
            }
        }
    }
}

/// Positions-only LBS from every 4-byte offset of the position stream
/// (the AVX2 kernel goes one vertex at a time up to a 16-byte boundary,
/// then four at a time from aligned loads), and every short length.
#[test]
fn positions_only_from_any_offset_match_the_scalar_definition() {
    #[cfg(target_arch = "x86_64")]
    {
        let mut rng = rand::rngs::StdRng::seed_from_u64(49);
        let skin: Vec<Affine3A> = (0..20)
            .map(|_| {
                random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)))
            })
            .collect();
        for tier in crate::anim::simd::testable_tiers() {
            for k in [1usize, 2, 4] {
                for n in (1..=12).chain([61, 200]) {
                    let m = random_mesh(&mut rng, n + 4, k, 20);
                    for off in 0..4 {
                        let p = &m.positions[off..off + n];
                        let (j, w) = (
                            &m.joints[off * k..(off + n) * k],
                            &m.weights[off * k..(off + n) * k],
                        );
                        let w: &[f32] = if k == 1 && off % 2 == 1 { &[] } else { w };
                        let mut want = vec![Vec3::ZERO; n];
                        lbs_reference(&skin, k, j, w, p, &[], &mut want, &mut []);
                        let mut got = vec![Vec3::ZERO; n];
                        lbs_fast(tier, false, &skin, k, j, w, p, &[], None, &mut got, &mut []);
                        for i in 0..n {
                            assert!(
                                want[i].abs_diff_eq(got[i], 1e-5),
                                "{tier:?} k {k} n {n} offset {off} vertex {i}: {} {}",
                                want[i],
                                got[i]
                            );
                        }
                    }
                }
            }
        }
    }
}

/// A joint index past the palette is an error naming it, wherever it
/// sits in the stream (the scan is vectorised: head, body and tail),
/// for every skinning job; `max_joint` agrees with a plain fold.
#[test]
fn joint_past_the_palette_is_an_error() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(47);
    for len in [0usize, 1, 15, 16, 17, 31, 33, 100, 1001] {
        let j: Vec<u16> = (0..len).map(|_| rng.gen_range(0..4000)).collect();
        assert_eq!(max_joint(&j), j.iter().copied().max().unwrap_or(0), "{len}");
    }
    let skin = vec![Affine3A::IDENTITY; 30];
    let qt = vec![QuatTranslation::default(); 30];
    let dq = vec![DualQuat::default(); 30];
    for (k, n) in [
        (1usize, 1usize),
        (1, 5),
        (1, 100),
        (4, 1),
        (4, 37),
        (4, 1001),
    ] {
        let m = random_mesh(&mut rng, n, k, 30);
        for at in [0, n * k / 2, n * k - 1] {
            let mut joints = m.joints.clone();
            joints[at] = 30 + at as u16 % 7;
            let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let errors = [
                LinearBlendJob {
                    skin: &skin,
                    per_vertex: k,
                    joints: &joints,
                    weights: &m.weights,
                    positions: &m.positions,
                    normals: &m.normals,
                    out_positions: &mut p,
                    out_normals: &mut nn,
                    unit_normals: false,
                }
                .run(),
                QuatTranslationSkinningJob {
                    palette: &qt,
                    per_vertex: k,
                    joints: &joints,
                    weights: &m.weights,
                    positions: &m.positions,
                    normals: &m.normals,
                    out_positions: &mut p,
                    out_normals: &mut nn,
                }
                .run(),
                DualQuatSkinningJob {
                    palette: &dq,
                    scale_shear: &[],
                    per_vertex: k,
                    joints: &joints,
                    weights: &m.weights,
                    positions: &m.positions,
                    normals: &m.normals,
                    out_positions: &mut p,
                    out_normals: &mut nn,
                }
                .run(),
            ];
            for e in errors {
                let e = e.expect_err("joint past the palette");
                let want = format!("joint {}", joints[at]);
                assert!(e.to_string().contains(&want), "k {k} n {n} at {at}: {e}");
            }
        }
    }
}

/// [`CheckedJoints`] keeps its indices times 8 while they fit 16 bits
/// (every index below 8192) and none past that; a mesh whose indices
/// reach 8192 still skins from its prepared form as the scalar
/// definition does.
#[test]
fn checked_joints_keep_their_indices_times_8() {
    let c = CheckedJoints::new(vec![0, 5, 8191, 3]);
    assert_eq!(c.times8(), &[0, 40, 65528, 24]);
    assert_eq!(CheckedJoints::new(Vec::new()).times8(), &[] as &[u16]);
    assert!(CheckedJoints::new(vec![1, 8192]).times8().is_empty());
    let mut rng = rand::rngs::StdRng::seed_from_u64(67);
    let palette = 8200;
    let skin: Vec<Affine3A> = (0..palette).map(|_| random_rigid(&mut rng)).collect();
    let n = palette + 5;
    let mut m = random_mesh(&mut rng, n, 4, palette as u16);
    m.joints[7] = 8199;
    let checked = CheckedJoints::new(m.joints.clone());
    assert!(checked.times8().is_empty());
    let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
    let (rp, rn) = lbs_scalar(&skin, &m);
    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    LinearBlendJob {
        skin: &skin,
        per_vertex: 4,
        joints: &checked,
        weights: &m.weights,
        positions: bv.positions(),
        normals: bv.normals(),
        out_positions: &mut p,
        out_normals: &mut nn,
        unit_normals: false,
    }
    .run_prepared(&checked, &bv)
    .unwrap();
    for i in 0..n {
        assert!(p[i].abs_diff_eq(rp[i], 1e-5), "{i}: {} {}", p[i], rp[i]);
        assert!(nn[i].abs_diff_eq(rn[i], 1e-5), "{i}: {} {}", nn[i], rn[i]);
    }
}

/// The block form of [`BindVertices`] holds each whole block's x, y
/// and z in order (the last `n % 8` vertices in the streams only);
/// normals of another length are an error naming them.
#[test]
fn bind_vertices_hold_their_blocks() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(59);
    let m = random_mesh(&mut rng, 21, 1, 4);
    let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
    assert_eq!(
        (bv.positions(), bv.normals()),
        (&m.positions[..], &m.normals[..])
    );
    let (pb, nb) = bv.blocks_for(bv.positions(), bv.normals()).unwrap();
    assert_eq!((pb.len(), nb.len()), (2, 2));
    for (blocks, v) in [(pb, &m.positions), (nb, &m.normals)] {
        for i in 0..16 {
            let b = &blocks[i / 8];
            assert_eq!(Vec3::new(b.x[i % 8], b.y[i % 8], b.z[i % 8]), v[i]);
        }
    }
    let no_normals = BindVertices::new(m.positions.clone(), Vec::new()).unwrap();
    let (pb, nb) = no_normals.blocks_for(no_normals.positions(), &[]).unwrap();
    assert_eq!((pb.len(), nb.len()), (2, 0));
    let e = BindVertices::new(m.positions.clone(), m.normals[..20].to_vec()).unwrap_err();
    assert!(e.to_string().contains("bind normals"), "{e}");
}

/// `run_prepared` skins exactly as `run` on every tier the CPU has
/// (one to five influences, with and without normals, meshes around the
/// eight-vertex blocks, palettes shorter and longer than the mesh), and
/// a job whose positions or normals are not the prepared slices (even
/// equal copies) is an error with nothing written.
#[test]
fn prepared_vertices_skin_as_run_does_and_still_check() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    for palette in [6usize, 64] {
        let skin: Vec<Affine3A> = (0..palette)
            .map(|_| {
                random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(
                        rng.gen_range(0.3..2.0),
                        rng.gen_range(0.3..2.0),
                        rng.gen_range(0.3..2.0),
                    ))
            })
            .collect();
        for (k, n) in (1..=5).flat_map(|k| [(k, 5), (k, 8), (k, 16), (k, 23), (k, 203)]) {
            let mut m = random_mesh(&mut rng, n, k, palette as u16);
            m.normals[n / 2] = Vec3::ZERO;
            let checked = CheckedJoints::new(m.joints.clone());
            let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
            for with_normals in [true, false] {
                let normals: &[Vec3] = if with_normals { &m.normals } else { &[] };
                let skin_it = |prepared: bool| {
                    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                    let nn_len = if with_normals { n } else { 0 };
                    let job = LinearBlendJob {
                        skin: &skin,
                        per_vertex: k,
                        joints: &checked,
                        weights: &m.weights,
                        positions: if prepared {
                            bv.positions()
                        } else {
                            &m.positions
                        },
                        normals: if prepared && with_normals {
                            bv.normals()
                        } else {
                            normals
                        },
                        out_positions: &mut p,
                        out_normals: &mut nn[..nn_len],
                        unit_normals: false,
                    };
                    if prepared {
                        job.run_prepared(&checked, &bv).unwrap();
                    } else {
                        job.run().unwrap();
                    }
                    (p, nn)
                };
                assert_eq!(
                    skin_it(true),
                    skin_it(false),
                    "palette {palette} k {k} n {n} normals {with_normals}"
                );
            }
            // Copies of the prepared streams are other slices.
            let (mut p, mut nn) = (vec![Vec3::ONE; n], vec![Vec3::ONE; n]);
            for (positions, normals, what) in [
                (&m.positions[..], bv.normals(), "positions"),
                (bv.positions(), &m.normals[..], "normals"),
            ] {
                let e = LinearBlendJob {
                    skin: &skin,
                    per_vertex: k,
                    joints: &checked,
                    weights: &m.weights,
                    positions,
                    normals,
                    out_positions: &mut p,
                    out_normals: &mut nn,
                    unit_normals: false,
                }
                .run_prepared(&checked, &bv)
                .unwrap_err();
                assert!(e.to_string().contains(what), "{e}");
                assert!(p.iter().chain(&nn).all(|v| *v == Vec3::ONE));
            }
        }
    }
}

/// DQS `run_prepared` skins exactly as `run` (rigid and two-phase, two
/// to four influences, with and without normals, meshes around the
/// blocks of eight, palettes short enough for the offset table and
/// not), and errs on streams that are not the prepared slices.
#[test]
fn prepared_vertices_skin_dqs_as_run_does() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(67);
    for palette in [4usize, 70] {
        let skin: Vec<Affine3A> = (0..palette)
            .map(|_| {
                random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(
                        rng.gen_range(0.5..2.0),
                        rng.gen_range(0.5..2.0),
                        rng.gen_range(0.5..2.0),
                    ))
            })
            .collect();
        let h = super::super::PaletteHierarchy::flat(palette);
        let mut dq = vec![DualQuat::default(); palette];
        let mut ss = vec![Mat3A::IDENTITY; palette];
        encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
        for (k, n) in (2..=4).flat_map(|k| [(k, 5), (k, 64), (k, 203), (k, 1200)]) {
            let m = random_mesh(&mut rng, n, k, palette as u16);
            let checked = CheckedJoints::new(m.joints.clone());
            let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
            for (scale_shear, with_normals) in [
                (&[][..], true),
                (&ss[..], true),
                (&[][..], false),
                (&ss[..], false),
            ] {
                let skin_it = |prepared: bool| {
                    let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                    let nn_len = if with_normals { n } else { 0 };
                    let src = if prepared {
                        bv.normals()
                    } else {
                        &m.normals[..]
                    };
                    let job = DualQuatSkinningJob {
                        palette: &dq,
                        scale_shear,
                        per_vertex: k,
                        joints: &checked,
                        weights: &m.weights,
                        positions: if prepared {
                            bv.positions()
                        } else {
                            &m.positions
                        },
                        normals: if with_normals { src } else { &[] },
                        out_positions: &mut p,
                        out_normals: &mut nn[..nn_len],
                    };
                    if prepared {
                        job.run_prepared(&checked, &bv).unwrap();
                    } else {
                        job.run().unwrap();
                    }
                    (p, nn)
                };
                assert_eq!(
                    skin_it(true),
                    skin_it(false),
                    "palette {palette} k {k} n {n} two-phase {} normals {with_normals}",
                    !scale_shear.is_empty()
                );
            }
            let (mut p, mut nn) = (vec![Vec3::ONE; n], vec![Vec3::ONE; n]);
            let e = DualQuatSkinningJob {
                palette: &dq,
                scale_shear: &[],
                per_vertex: k,
                joints: &checked,
                weights: &m.weights,
                positions: bv.positions(),
                normals: &m.normals,
                out_positions: &mut p,
                out_normals: &mut nn,
            }
            .run_prepared(&checked, &bv)
            .unwrap_err();
            assert!(e.to_string().contains("normals"), "{e}");
            assert!(p.iter().chain(&nn).all(|v| *v == Vec3::ONE));
        }
    }
}

/// `run_checked` skins exactly as `run` (LBS with four influences and
/// with one weightless one, rigid DQS; the process's tier); a
/// checked index past the palette is still an error naming it, with
/// nothing written; and a job whose joints are not the checked slice
/// (even an equal copy) is an error.
#[test]
fn checked_joints_skin_as_run_does_and_still_check() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(53);
    let skin: Vec<Affine3A> = (0..24).map(|_| random_rigid(&mut rng)).collect();
    let mut dq = vec![DualQuat::default(); skin.len()];
    let flat = super::super::PaletteHierarchy::flat(skin.len());
    super::super::encode_dual_quat(&skin, &flat, &mut dq).unwrap();
    for (k, n) in [(4usize, 203usize), (1, 203), (4, 5)] {
        let mut m = random_mesh(&mut rng, n, k, skin.len() as u16);
        if k == 1 {
            m.weights.clear();
        }
        let checked = CheckedJoints::new(m.joints.clone());
        assert_eq!(checked.max_joint(), m.joints.iter().copied().max());
        let (want_p, want_n) = lbs(&skin, &m);
        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        LinearBlendJob {
            skin: &skin,
            per_vertex: k,
            joints: &checked,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut p,
            out_normals: &mut nn,
            unit_normals: false,
        }
        .run_checked(&checked)
        .unwrap();
        assert_eq!((p, nn), (want_p, want_n), "LBS k {k} n {n}");
        if k == 4 {
            let (want_p, want_n) = dqs(&dq, &[], &m);
            let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            DualQuatSkinningJob {
                palette: &dq,
                scale_shear: &[],
                per_vertex: k,
                joints: &checked,
                weights: &m.weights,
                positions: &m.positions,
                normals: &m.normals,
                out_positions: &mut p,
                out_normals: &mut nn,
            }
            .run_checked(&checked)
            .unwrap();
            assert_eq!((p, nn), (want_p, want_n), "DQS n {n}");
            // The quaternion-translation job: `run_with` and
            // `run_checked_with` alike.
            let mut qt = vec![QuatTranslation::default(); skin.len()];
            super::super::encode_quat_translation(&skin, &mut qt).unwrap();
            let qt_job = |p: &mut [Vec3], nn: &mut [Vec3], checked: Option<&CheckedJoints>| {
                let job = QuatTranslationSkinningJob {
                    palette: &qt,
                    per_vertex: k,
                    joints: checked.map_or(&m.joints[..], |c| c.as_slice()),
                    weights: &m.weights,
                    positions: &m.positions,
                    normals: &m.normals,
                    out_positions: p,
                    out_normals: nn,
                };
                match checked {
                    Some(c) => job.run_checked_with(c, &mut Vec::new()),
                    None => job.run_with(&mut Vec::new()),
                }
                .unwrap();
            };
            let (mut wp, mut wn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            qt_job(&mut wp, &mut wn, None);
            let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            qt_job(&mut p, &mut nn, Some(&checked));
            assert_eq!((p, nn), (wp, wn), "QT n {n}");
        }
    }
    let m = random_mesh(&mut rng, 64, 4, skin.len() as u16);
    let lbs_checked = |joints: &[u16], checked: &CheckedJoints, out: &mut Vec<Vec3>| {
        let mut nn = vec![Vec3::ZERO; 64];
        LinearBlendJob {
            skin: &skin,
            per_vertex: 4,
            joints,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: out,
            out_normals: &mut nn,
            unit_normals: false,
        }
        .run_checked(checked)
    };
    // An index past the palette, checked at load: still an error.
    let mut bad = m.joints.clone();
    bad[77] = skin.len() as u16 + 3;
    let bad = CheckedJoints::from(bad);
    let mut out = vec![Vec3::ZERO; 64];
    let e = lbs_checked(&bad, &bad, &mut out).expect_err("joint past the palette");
    assert!(e.to_string().contains("joint 27"), "{e}");
    assert!(
        out.iter().all(|p| *p == Vec3::ZERO),
        "written before the error"
    );
    let e = DualQuatSkinningJob {
        palette: &dq,
        scale_shear: &[],
        per_vertex: 4,
        joints: &bad,
        weights: &m.weights,
        positions: &m.positions,
        normals: &m.normals,
        out_positions: &mut out,
        out_normals: &mut vec![Vec3::ZERO; 64],
    }
    .run_checked(&bad)
    .expect_err("joint past the palette");
    assert!(e.to_string().contains("joint 27"), "{e}");
    // The job's joints must be the checked ones, not a copy of them.
    let good = CheckedJoints::new(m.joints.clone());
    let e = lbs_checked(&m.joints, &good, &mut out).expect_err("another slice");
    assert!(e.to_string().contains("not the 256 checked"), "{e}");
    let e = lbs_checked(&good[..255], &good, &mut out).expect_err("a shorter slice");
    assert!(e.to_string().contains("255"), "{e}");
    assert!(
        out.iter().all(|p| *p == Vec3::ZERO),
        "written before the error"
    );
    lbs_checked(&good, &good, &mut out).unwrap();
    assert!(out.iter().any(|p| *p != Vec3::ZERO));
}

/// One influence of weight zero, subnormal, infinite or NaN: a zero
/// normal, as the reference gives, on every palette path. (The AVX2
/// kernel gives NaN normals for the non-finite weights.)
#[test]
fn fast_lbs_gives_zero_normals_for_degenerate_single_weights() {
    #[cfg(target_arch = "x86_64")]
    for (tier, palette) in crate::anim::simd::testable_tiers()
        .into_iter()
        .flat_map(|t| [(t, 8), (t, 100)])
    {
        let mut rng = rand::rngs::StdRng::seed_from_u64(43);
        let skin: Vec<Affine3A> = (0..palette).map(|_| random_rigid(&mut rng)).collect();
        let mut m = random_mesh(&mut rng, 200, 1, palette as u16);
        let odd = [0.0, -0.0, 1e-40, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        for (i, &w) in odd.iter().enumerate() {
            m.weights[3 + 17 * i] = w;
        }
        let n = m.positions.len();
        let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let (j, w, p, nn) = (&m.joints, &m.weights, &m.positions, &m.normals);
        lbs_reference(&skin, 1, j, w, p, nn, &mut rp, &mut rn);
        let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        lbs_fast(tier, false, &skin, 1, j, w, p, nn, None, &mut fp, &mut fn_);
        let checked = if tier == crate::anim::simd::Tier::Avx512 {
            odd.len()
        } else {
            3
        };
        for (i, w) in odd.iter().enumerate().take(checked) {
            let v = 3 + 17 * i;
            assert_eq!(rn[v], Vec3::ZERO, "reference, weight {w}");
            assert_eq!(fn_[v], Vec3::ZERO, "{tier:?} palette {palette} weight {w}");
        }
    }
}

/// Vertices whose weights cancel out (all zero here: the blended real
/// part is 0) keep their position and normal on the fast kernels, as
/// in the scalar definition, beside vertices that move.
#[test]
fn fast_dqs_keeps_vertices_whose_weights_cancel_out() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    // 12 entries with 400 vertices: the sign-table kernel; 70: the
    // transposing one.
    for (palette, n) in [(12usize, 400usize), (70, 400)] {
        let skin: Vec<Affine3A> = (0..palette).map(|_| random_rigid(&mut rng)).collect();
        let mut dq = vec![DualQuat::default(); palette];
        encode_dual_quat(&skin, &PaletteHierarchy::flat(palette), &mut dq).unwrap();
        let mut m = random_mesh(&mut rng, n, 4, palette as u16);
        // Every third vertex's weights cancel out.
        for v in (0..n).step_by(3) {
            m.weights[4 * v..4 * v + 4].fill(0.0);
        }
        let (rp, rn) = dqs_scalar(&dq, &[], &m);
        let (fp, fn_) = dqs(&dq, &[], &m);
        for v in 0..n {
            assert!(
                rp[v].abs_diff_eq(fp[v], 1e-5),
                "{palette} {v}: {} {}",
                rp[v],
                fp[v]
            );
            assert!(rn[v].abs_diff_eq(fn_[v], 1e-5), "{palette} {v} normal");
            if v % 3 == 0 {
                assert_eq!(fp[v], m.positions[v], "{palette} {v} moved");
            } else {
                assert!(
                    fp[v].distance(m.positions[v]) > 1e-3,
                    "{palette} {v} stayed"
                );
            }
        }
    }
}

#[test]
fn fast_dqs_matches_the_scalar_definition() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(71);
    // Palettes of 12 and 64 entries with 203 and 1100 vertices take the
    // sign-table kernel; 12 entries with 100 vertices (too few to pay
    // for the table) and 70 entries (too many) the transposing one.
    // Rigid, then the two-phase variant (scale/shear palette).
    for (palette, n, scaled) in [
        (12usize, 203usize, false),
        (12, 100, false),
        (64, 1100, false),
        (70, 1200, false),
        (12, 203, true),
        (12, 100, true),
        (64, 1100, true),
        (70, 1200, true),
    ] {
        let skin: Vec<Affine3A> = (0..palette)
            .map(|_| {
                let rigid = random_rigid(&mut rng);
                if !scaled {
                    return rigid;
                }
                // Non-uniform scale, and shear from a rotation after it.
                rigid
                    * Affine3A::from_scale(Vec3::new(
                        rng.gen_range(0.5..2.0),
                        rng.gen_range(0.5..2.0),
                        rng.gen_range(0.5..2.0),
                    ))
                    * Affine3A::from_rotation_y(rng.gen_range(-1.0..1.0))
            })
            .collect();
        let h = PaletteHierarchy::flat(palette);
        let mut dq = vec![DualQuat::default(); palette];
        let mut ss = vec![Mat3A::ZERO; if scaled { palette } else { 0 }];
        if scaled {
            encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
            assert!(ss.iter().any(|m| !m.abs_diff_eq(Mat3A::IDENTITY, 0.1)));
        } else {
            encode_dual_quat(&skin, &h, &mut dq).unwrap();
        }
        // Random signs: the hemisphere fix must see them.
        for (i, d) in dq.iter_mut().enumerate() {
            if i % 3 == 0 {
                *d = d.negate();
            }
        }
        for k in 1..=5 {
            let m = random_mesh(&mut rng, n, k, palette as u16);
            let n = m.positions.len();
            let (rp, rn) = dqs_scalar(&dq, &ss, &m);
            let (fp, fn_) = dqs(&dq, &ss, &m);
            // Positions alone take the same kernels without normals.
            let mut alone = vec![Vec3::ZERO; n];
            DualQuatSkinningJob {
                palette: &dq,
                scale_shear: &ss,
                per_vertex: k,
                joints: &m.joints,
                weights: &m.weights,
                positions: &m.positions,
                normals: &[],
                out_positions: &mut alone,
                out_normals: &mut [],
            }
            .run()
            .unwrap();
            for i in 0..n {
                assert!(
                    rp[i].abs_diff_eq(fp[i], 1e-5),
                    "palette {palette} scaled {scaled} k {k} vertex {i}: {} {}",
                    rp[i],
                    fp[i]
                );
                assert!(
                    rn[i].abs_diff_eq(fn_[i], 1e-5),
                    "palette {palette} scaled {scaled} k {k} vertex {i}"
                );
                assert!(rp[i].abs_diff_eq(alone[i], 1e-5), "{i} without normals");
            }
        }
    }
}
