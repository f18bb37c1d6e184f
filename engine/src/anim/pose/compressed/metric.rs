//! The error metric of compressed clips: where points at a distance from
//! each joint land under the original and the compressed clip, in model
//! space (errors accumulated down the hierarchy).

use glam::{Affine3A, Vec3A};

use crate::anim::{
    AnimError, Clip, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Transform,
};

/// The model-space error of `compressed` against `original` (both sampled
/// looping, as the same clip) at each of `times`: per time, the largest
/// over joints of the distance between where the points `distance` along
/// each axis of the joint land under the one and under the other. Returns
/// the worst.
pub fn measure_error(
    original: &Clip,
    compressed: &Clip,
    skeleton: &Skeleton,
    times: &[f32],
    distance: f32,
) -> Result<f32, AnimError> {
    Ok(
        measure_errors(original, compressed, skeleton, times, distance)?
            .into_iter()
            .fold(0.0, f32::max),
    )
}

/// [`measure_error`] per time.
pub fn measure_errors(
    original: &Clip,
    compressed: &Clip,
    skeleton: &Skeleton,
    times: &[f32],
    distance: f32,
) -> Result<Vec<f32>, AnimError> {
    let n = skeleton.len();
    let (mut a, mut b) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let (mut ca, mut cb) = (
        SamplingContext::new(original),
        SamplingContext::new(compressed),
    );
    let mut out = Vec::with_capacity(times.len());
    for &t in times {
        for (clip, ctx, pose) in [(original, &mut ca, &mut a), (compressed, &mut cb, &mut b)] {
            SamplingJob {
                clip,
                context: ctx,
                time: t,
                mode: PlaybackMode::Loop,
                output: pose,
            }
            .run()?;
        }
        let (ma, mb) = (model(skeleton, &a), model(skeleton, &b));
        let e = (0..n)
            .map(|j| joint_error(&ma[j], &mb[j], distance))
            .fold(0.0, f32::max);
        out.push(e);
    }
    Ok(out)
}

/// Model matrices of a local pose.
pub(super) fn model(skel: &Skeleton, local: &[Transform]) -> Vec<Affine3A> {
    let mut m: Vec<Affine3A> = Vec::with_capacity(local.len());
    for (j, l) in local.iter().enumerate() {
        let a = l.to_affine();
        let v = match skel.parent(j) {
            Some(p) => m[p] * a,
            None => a,
        };
        m.push(v);
    }
    m
}

/// The largest distance between the images of the points `d` along each
/// axis under `a` and under `b`.
pub(super) fn joint_error(a: &Affine3A, b: &Affine3A, d: f32) -> f32 {
    [Vec3A::X, Vec3A::Y, Vec3A::Z]
        .iter()
        .map(|&axis| {
            let p = axis * d;
            (a.transform_point3a(p) - b.transform_point3a(p)).length()
        })
        .fold(0.0, f32::max)
}

/// Per joint, the tolerance distance plus the farthest descendant's
/// offset chain in the bind pose (the lever an error of this joint acts
/// on).
pub(super) fn shell_distances(skel: &Skeleton, d: f32) -> Vec<f32> {
    let n = skel.len();
    let mut shell = vec![d; n];
    let bind = skel.bind_local();
    for j in (0..n).rev() {
        if let Some(p) = skel.parent(j) {
            let reach = bind[j].translation.length() * bind[p].scale.abs().max_element() + shell[j];
            shell[p] = shell[p].max(reach);
        }
    }
    shell
}
