//! Skinned output through a compressed clip equals skinning through the
//! original within what the compression tolerance implies, on a path of
//! every palette storage (push, ubo, texel, ssbo, bda; the vertex stage,
//! 4x3, qt on push) and on the compute stage (4x3): palettes sampled on the CPU from the
//! built-in character's clips and from their compressed twins
//! (`CompressionJob`, two tolerances), skinned and captured on the GPU,
//! under validation with synchronization validation.
//!
//! # The bound, derived from the tolerance
//!
//! A tolerance (ε at d) promises, at each joint j, that the three points
//! d along the joint's axes land within ε of where the original puts them
//! in model space: with `A`, `B` the original and compressed model
//! matrices, `a_k = Δt + d ΔR e_k` has `|a_k| <= ε` (k = x, y, z; `Δt`,
//! `ΔR` the differences of the translations and of the linear parts).
//! The test checks that promise at its own sample times first (its own
//! model matrices), then uses it. For rigid joints (checked: the clips
//! carry no scale), `ΔR = R_A (I - Q)` with `Q` a rotation by an angle θ
//! about an axis u, so `|ΔR x|^2 = s^2 (|x|^2 - (u.x)^2)` with
//! `s = 2 sin(θ/2)`:
//!
//! - differences: `a_i - a_k = d ΔR (e_i - e_k)`, at most 2ε long; over
//!   the three pairs, `sum |ΔR (e_i - e_k)|^2 = s^2 (6 - 3 + (u1 + u2 +
//!   u3)^2) >= 3 s^2`, so `3 s^2 d^2 <= 3 (2ε)^2`: **s <= 2ε / d**;
//! - the origin: `Δt = mean(a_k) - (d/3) ΔR (1, 1, 1)`, so
//!   **|Δt| <= ε + d s / √3 <= ε (1 + 2/√3)**;
//! - a point p at distance r from the joint: `|Δt + ΔR p| <= |Δt| + s r
//!   <= ε (1 + 2/√3 + 2 r / d)`.
//!
//! A linear-blend skinned vertex is `sum_k w_k M_k p_k` with convex
//! weights and `p_k = inverse_bind_k * v` the vertex in joint k's frame,
//! so its error is at most the largest of its joints' point errors:
//! `ε (1 + 2/√3 + 2 max_k |p_k| / d)` over the joints with a weight. Each
//! GPU capture adds its own rounding (the path tests hold it within 1e-5
//! of the bounding-box diagonal), so the test allows twice that on top.
//! `qt` blends the joints' rotation matrices and translations linearly
//! too, so the same holds for it. Dual-quaternion blends are not convex
//! combinations of the joints' points, so the bound is stated (and
//! tested) for the linear blends, one path per storage.
#![cfg(feature = "gpu")]

use glam::{Affine3A, Vec3};
use vkskin::anim::{
    Clip, CompressionJob, PaletteHierarchy, PlaybackMode, SamplingContext, SamplingJob, Skeleton,
    Tolerance, Transform,
};
use vkskin::assets::builtin::Character;
use vkskin::assets::Model;
use vkskin::render::SkinCapture;
use vkskin::skin::PathDesc;
use vkskin_tests::gpu::GpuTest;

/// GPU rounding allowed per capture, of the bounding-box diagonal.
const ROUNDING: f32 = 1e-5;

/// One path per storage (vertex stage) and the compute stage: 4x3, and
/// on the push storage qt (lavapipe's 128 bytes of push constants hold two
/// 4x3 bones, fewer than a triangle of the character needs; qt blends the
/// joints' matrices linearly too).
const PATHS: &[&str] = &[
    "qt-push",
    "4x3-ubo",
    "4x3-texel",
    "4x3-ssbo",
    "4x3-bda",
    "4x3-compute",
];

fn sample(clip: &Clip, t: f32) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; clip.joint_count()];
    let mut ctx = SamplingContext::new(clip);
    SamplingJob {
        clip,
        context: &mut ctx,
        time: t,
        mode: PlaybackMode::Loop,
        output: &mut out,
    }
    .run()
    .expect("sampling");
    out
}

fn model_matrices(skel: &Skeleton, locals: &[Transform]) -> Vec<Affine3A> {
    let mut m: Vec<Affine3A> = Vec::with_capacity(locals.len());
    for (j, l) in locals.iter().enumerate() {
        let a = l.to_affine();
        m.push(skel.parent(j).map_or(a, |p| m[p] * a));
    }
    m
}

/// The tolerance's metric at one joint: the largest distance between the
/// images of the points `d` along each axis.
fn joint_error(a: &Affine3A, b: &Affine3A, d: f32) -> f32 {
    [Vec3::X, Vec3::Y, Vec3::Z]
        .iter()
        .map(|&axis| {
            a.transform_point3(axis * d)
                .distance(b.transform_point3(axis * d))
        })
        .fold(0.0, f32::max)
}

/// The derivation's precondition: every joint's model matrix is a
/// rotation and a translation.
fn assert_rigid(label: &str, m: &[Affine3A]) {
    for (j, a) in m.iter().enumerate() {
        let l = a.matrix3;
        let cols = [l.x_axis, l.y_axis, l.z_axis];
        let off = (cols[0].dot(cols[1]).abs())
            .max(cols[1].dot(cols[2]).abs())
            .max(cols[0].dot(cols[2]).abs());
        let len = cols
            .iter()
            .map(|c| (c.length() - 1.0).abs())
            .fold(0.0f32, f32::max);
        assert!(
            off < 1e-4 && len < 1e-4,
            "{label}: joint {j} is not rigid (the bound's derivation needs it)"
        );
    }
}

/// Per vertex of `mesh`, `max_k |inverse_bind_k * v|` over its joints with
/// a weight: the lever the joints' errors act on.
fn levers(model: &Model, mesh: usize) -> Vec<f32> {
    let m = &model.meshes[mesh];
    let skin = &model.skins[m.skin];
    let k = m.influences.per_vertex;
    m.positions
        .iter()
        .enumerate()
        .map(|(v, p)| {
            (0..k)
                .filter(|&i| m.influences.weights[v * k + i] > 0.0)
                .map(|i| {
                    let entry = m.influences.joints[v * k + i] as usize;
                    skin.inverse_bind[entry].transform_point3(*p).length()
                })
                .fold(0.0f32, f32::max)
        })
        .collect()
}

/// Sample times across `clip`: the ends, and 9 times inside.
fn times(clip: &Clip) -> Vec<f32> {
    let d = clip.duration();
    (0..=10).map(|i| d * i as f32 / 10.0).collect()
}

#[test]
fn skinning_through_compressed_clips_stays_within_the_tolerance_on_every_storage() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let skel = &model.skeleton;
    let mesh = 0;
    let skin_index = model.meshes[mesh].skin;
    let hierarchy =
        PaletteHierarchy::new(&model.skins[skin_index], skel).expect("palette hierarchy");
    let lever = levers(&model, mesh);
    // 1 cm at 10 cm (errors well above the GPU's rounding) and ozz's
    // default, 1 mm at 10 cm.
    for tol in [Tolerance::new(0.01, 0.1), Tolerance::OZZ_DEFAULT] {
        let (eps, d) = (tol.error, tol.distance);
        // One instance per clip and time: the original's palettes and the
        // compressed clip's.
        let (mut original, mut compressed) = (Vec::new(), Vec::new());
        for clip in &model.clips {
            let packed = CompressionJob {
                clip,
                skeleton: skel,
                tolerance: tol,
            }
            .run()
            .unwrap_or_else(|e| panic!("compressing {:?}: {e}", clip.name()));
            assert!(packed.compressed().is_some());
            for t in times(clip) {
                let (la, lb) = (sample(clip, t), sample(&packed, t));
                let (ma, mb) = (model_matrices(skel, &la), model_matrices(skel, &lb));
                let label = format!("{:?} at {t} s", clip.name());
                assert_rigid(&label, &ma);
                // The tolerance's promise at this time, by the metric.
                let worst = ma
                    .iter()
                    .zip(&mb)
                    .map(|(a, b)| joint_error(a, b, d))
                    .fold(0.0f32, f32::max);
                assert!(
                    worst <= eps * 1.0001,
                    "{label}: the compressed clip is {worst} off at {d} (tolerance {eps})"
                );
                let palette = |l: &[Transform]| {
                    model.skin_matrices(l).expect("skin matrices")[skin_index].clone()
                };
                original.push(palette(&la));
                compressed.push(palette(&lb));
            }
        }
        let vc = model.meshes[mesh].positions.len();
        for name in PATHS {
            let desc: &'static PathDesc = vkskin::skin::find(name).expect("path");
            let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("capture rig");
            let prepared = rig
                .prepare(&model.meshes[mesh], &hierarchy)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut run = |palettes: &[Vec<Affine3A>]| {
                let p: Vec<&[Affine3A]> = palettes.iter().map(|p| p.as_slice()).collect();
                let (captured, _) = rig
                    .run(&prepared, &p)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(captured.len(), vc * p.len());
                captured
            };
            let want = run(&original);
            let got = run(&compressed);
            let (mut worst_ratio, mut worst_error) = (0.0f32, 0.0f32);
            for i in 0..original.len() {
                let (a, b) = (&want[i * vc..(i + 1) * vc], &got[i * vc..(i + 1) * vc]);
                let points: Vec<Vec3> = a.iter().map(|v| v.position()).collect();
                let diag = vkskin_tests::diagonal(&points);
                for v in 0..vc {
                    let e = a[v].position().distance(b[v].position());
                    let bound = eps * (1.0 + 2.0 / 3f32.sqrt() + 2.0 * lever[v] / d)
                        + 2.0 * ROUNDING * diag;
                    assert!(
                        e <= bound,
                        "{name}, tolerance {eps} at {d}, instance {i} vertex {v}: \
                         skinned {e} apart, bound {bound} (lever {})",
                        lever[v]
                    );
                    worst_ratio = worst_ratio.max(e / bound);
                    worst_error = worst_error.max(e);
                }
            }
            // The compressed clip is not the original: the comparison sees
            // its error (the bound is not met by identical palettes).
            assert!(worst_error > 0.0, "{name}: identical output");
            println!(
                "{name}, tolerance {eps} at {d}: {} instances x {vc} vertices, worst skinned \
                 difference {worst_error:.2e}, {:.1}% of its bound",
                original.len(),
                worst_ratio * 100.0
            );
            drop(rig);
            gpu.assert_clean();
        }
    }
    gpu.finish();
}
