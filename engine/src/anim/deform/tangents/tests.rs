use super::*;
use crate::anim::{
    encode_dual_quat_scale, encode_quat_translation, DualQuatSkinningJob, LinearBlendJob,
    PaletteHierarchy, QuatTranslationSkinningJob,
};
use glam::{EulerRot, Vec3};
use rand::{Rng, SeedableRng};

/// The four position jobs' palettes, built from the same matrices.
struct Palettes {
    skin: Vec<Affine3A>,
    qt: Vec<QuatTranslation>,
    dq: Vec<DualQuat>,
    ss: Vec<Mat3A>,
}

impl Palettes {
    fn new(skin: Vec<Affine3A>) -> Self {
        let n = skin.len();
        let mut qt = vec![QuatTranslation::default(); n];
        encode_quat_translation(&skin, &mut qt).unwrap();
        let mut dq = vec![DualQuat::default(); n];
        let mut ss = vec![Mat3A::IDENTITY; n];
        encode_dual_quat_scale(&skin, &PaletteHierarchy::flat(n), &mut dq, &mut ss).unwrap();
        Self { skin, qt, dq, ss }
    }

    /// The four kinds, each with its name.
    fn kinds(&self) -> [(&'static str, TangentPalette<'_>); 4] {
        [
            ("lbs", TangentPalette::Matrices(&self.skin)),
            ("qt", TangentPalette::QuatTranslation(&self.qt)),
            (
                "dqs",
                TangentPalette::DualQuat {
                    palette: &self.dq,
                    scale_shear: &[],
                },
            ),
            (
                "dqs-scale",
                TangentPalette::DualQuat {
                    palette: &self.dq,
                    scale_shear: &self.ss,
                },
            ),
        ]
    }

    /// Positions through the position job matching `kind`.
    fn skin_positions(&self, kind: &str, k: usize, j: &[u16], w: &[f32], p: &[Vec3]) -> Vec<Vec3> {
        let mut out = vec![Vec3::ZERO; p.len()];
        let no: &mut [Vec3] = &mut [];
        match kind {
            "lbs" => LinearBlendJob {
                skin: &self.skin,
                per_vertex: k,
                joints: j,
                weights: w,
                positions: p,
                normals: &[],
                out_positions: &mut out,
                out_normals: no,
                unit_normals: false,
            }
            .run(),
            "qt" => QuatTranslationSkinningJob {
                palette: &self.qt,
                per_vertex: k,
                joints: j,
                weights: w,
                positions: p,
                normals: &[],
                out_positions: &mut out,
                out_normals: no,
            }
            .run(),
            _ => DualQuatSkinningJob {
                palette: &self.dq,
                scale_shear: if kind == "dqs" { &[] } else { &self.ss },
                per_vertex: k,
                joints: j,
                weights: w,
                positions: p,
                normals: &[],
                out_positions: &mut out,
                out_normals: no,
            }
            .run(),
        }
        .unwrap();
        out
    }
}

fn skin_tangents(palette: TangentPalette, k: usize, j: &[u16], w: &[f32], t: &[Vec4]) -> Vec<Vec4> {
    let mut out = vec![Vec4::NAN; t.len()];
    TangentSkinningJob {
        palette,
        per_vertex: k,
        joints: j,
        weights: w,
        tangents: t,
        out_tangents: &mut out,
    }
    .run()
    .unwrap();
    out
}

#[test]
fn rigid_single_influence_rotates_by_the_bone() {
    let q = Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 1.1);
    let bone = Affine3A::from_rotation_translation(q, Vec3::new(3.0, -1.0, 2.0));
    let p = Palettes::new(vec![Affine3A::IDENTITY, bone]);
    let tangents = [
        Vec4::new(1.0, 0.0, 0.0, 1.0),
        Vec4::new(0.0, 0.6, 0.8, -1.0),
    ];
    for (name, palette) in p.kinds() {
        let out = skin_tangents(palette, 1, &[1, 1], &[1.0, 1.0], &tangents);
        for (o, t) in out.iter().zip(&tangents) {
            let want = q * t.truncate();
            assert!(
                o.truncate().abs_diff_eq(want, 1e-5),
                "{name}: {o} vs {want}"
            );
            assert_eq!(o.w, t.w, "{name}: handedness");
        }
    }
    // One weightless influence (not for dual quaternions, as their job).
    let out = skin_tangents(
        TangentPalette::Matrices(&p.skin),
        1,
        &[1],
        &[],
        &tangents[..1],
    );
    assert!(out[0].truncate().abs_diff_eq(q * Vec3::X, 1e-5));
    assert!(TangentSkinningJob {
        palette: p.kinds()[2].1,
        per_vertex: 1,
        joints: &[1],
        weights: &[],
        tangents: &tangents[..1],
        out_tangents: &mut [Vec4::ZERO],
    }
    .run()
    .is_err());
}

/// A uniformly scaled bone leaves directions as the rotation does; a
/// non-uniformly scaled one (two-phase DQS, LBS) bends them as `M t` does,
/// not as the normals' cofactor would: a tangent across a stretched axis
/// leans towards it.
#[test]
fn non_uniform_scale_moves_tangents_as_directions() {
    let bone = Affine3A::from_scale_rotation_translation(
        Vec3::new(3.0, 1.0, 1.0),
        Quat::IDENTITY,
        Vec3::ZERO,
    );
    let p = Palettes::new(vec![bone]);
    let t = [Vec4::new(0.5f32.sqrt(), 0.5f32.sqrt(), 0.0, 1.0)];
    // (3, 1, 0) normalised, by hand.
    let want = Vec3::new(3.0, 1.0, 0.0) / 10f32.sqrt();
    for (name, palette) in p.kinds() {
        let out = skin_tangents(palette, 1, &[0], &[1.0], &t);
        // The rigid palettes keep no non-uniform scale (the dual
        // quaternions drop it, the quaternion + translation palette keeps
        // a mean scale, which renormalising removes): the tangent stays.
        let want = if name == "dqs" || name == "qt" {
            t[0].truncate()
        } else {
            want
        };
        assert!(
            out[0].truncate().abs_diff_eq(want, 1e-5),
            "{name}: {}",
            out[0]
        );
    }
}

/// Against the position jobs: for each vertex, the direction of
/// `skin(p + eps t) - skin(p)` (the same influences) is the skinned
/// tangent, with several weighted influences on scaled and sheared bones.
#[test]
fn tangents_follow_the_position_jobs_finite_differences() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(40);
    let bones: Vec<Affine3A> = (0..6)
        .map(|_| {
            let scale = Vec3::new(
                rng.gen_range(0.5..2.0),
                rng.gen_range(0.5..2.0),
                rng.gen_range(0.5..2.0),
            );
            let rot = Quat::from_euler(
                EulerRot::ZYX,
                rng.gen_range(-3.0..3.0),
                rng.gen_range(-1.4..1.4),
                rng.gen_range(-3.0..3.0),
            );
            let shear = Mat3A::from_cols(
                Vec3A::X,
                Vec3A::new(rng.gen_range(-0.3..0.3), 1.0, 0.0),
                Vec3A::Z,
            );
            let m = Affine3A::from_scale_rotation_translation(scale, rot, Vec3::splat(0.5));
            Affine3A {
                matrix3: m.matrix3 * shear,
                translation: m.translation,
            }
        })
        .collect();
    let p = Palettes::new(bones);
    let (n, k) = (200, 3);
    let mut positions = Vec::new();
    let mut tangents = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for _ in 0..n {
        positions.push(Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - 1.0);
        let t = (Vec3::new(rng.gen(), rng.gen(), rng.gen()) - 0.5).normalize();
        tangents.push(t.extend(if rng.gen() { 1.0 } else { -1.0 }));
        let w: Vec<f32> = (0..k).map(|_| rng.gen_range(0.05..1.0)).collect();
        let sum: f32 = w.iter().sum();
        for wi in w {
            joints.push(rng.gen_range(0..6u16));
            weights.push(wi / sum);
        }
    }
    let eps = 1e-2;
    let moved: Vec<Vec3> = positions
        .iter()
        .zip(&tangents)
        .map(|(p, t)| *p + t.truncate() * eps)
        .collect();
    for (name, palette) in p.kinds() {
        let out = skin_tangents(palette, k, &joints, &weights, &tangents);
        let a = p.skin_positions(name, k, &joints, &weights, &positions);
        let b = p.skin_positions(name, k, &joints, &weights, &moved);
        for v in 0..n {
            let want = (b[v] - a[v]).normalize();
            let got = out[v];
            assert!(
                got.truncate().abs_diff_eq(want, 2e-3),
                "{name} vertex {v}: {got} vs {want}"
            );
            assert!((got.truncate().length() - 1.0).abs() < 1e-5);
            assert_eq!(got.w, tangents[v].w);
        }
    }
}

#[test]
fn bad_jobs_are_errors() {
    let p = Palettes::new(vec![Affine3A::IDENTITY; 2]);
    let t = [Vec4::X; 2];
    let mut out = [Vec4::ZERO; 2];
    type Case<'a> = (TangentPalette<'a>, usize, &'a [u16], &'a [f32], usize);
    let cases: [Case; 6] = [
        (p.kinds()[0].1, 0, &[], &[], 2),
        (p.kinds()[0].1, 1, &[0], &[1.0, 1.0], 2),
        (p.kinds()[0].1, 1, &[0, 1], &[1.0], 2),
        (p.kinds()[0].1, 1, &[0, 2], &[1.0, 1.0], 2),
        (p.kinds()[0].1, 1, &[0, 1], &[1.0, 1.0], 1),
        (
            TangentPalette::DualQuat {
                palette: &p.dq,
                scale_shear: &p.ss[..1],
            },
            1,
            &[0, 1],
            &[1.0, 1.0],
            2,
        ),
    ];
    for (i, (palette, k, j, w, len)) in cases.into_iter().enumerate() {
        assert!(
            TangentSkinningJob {
                palette,
                per_vertex: k,
                joints: j,
                weights: w,
                tangents: &t,
                out_tangents: &mut out[..len],
            }
            .run()
            .is_err(),
            "case {i}"
        );
    }
    assert_eq!(out, [Vec4::ZERO; 2]);
}
