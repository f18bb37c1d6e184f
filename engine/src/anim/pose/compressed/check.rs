//! The error check the tests hold compressed clips to (the engine's unit
//! tests and `tests/tests/compressed_clips.rs` both call it): written apart
//! from the compression job's own metric (`job::measure_errors`, which
//! the job steers by), with 4x4 model matrices, so a fault in the one is
//! not hidden by the same fault in the other. The metric is the
//! [`Tolerance`](super::Tolerance)'s: for every joint, the points
//! `distance` along each of its axes, in model space (errors accumulated
//! down the hierarchy); the largest distance between their images under
//! the two poses.

use glam::{Mat4, Vec3};

use crate::anim::{
    AnimError, Clip, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Transform,
};

/// The worst error found by [`check_error`] and the time it was found at.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CheckedError {
    /// The largest error, model units.
    pub worst: f32,
    /// The clip time it was found at.
    pub at: f32,
}

/// The error of pose `b` against pose `a` (local transforms of
/// `skeleton`'s joints), by the tolerance's metric at `distance`.
pub fn pose_error(skeleton: &Skeleton, a: &[Transform], b: &[Transform], distance: f32) -> f32 {
    let model = |l: &[Transform]| {
        let mut m: Vec<Mat4> = Vec::with_capacity(l.len());
        for (j, t) in l.iter().enumerate() {
            let x = t.to_mat4();
            let v = skeleton.parent(j).map_or(x, |p| m[p] * x);
            m.push(v);
        }
        m
    };
    let (ma, mb) = (model(a), model(b));
    let mut worst = 0.0f32;
    for (x, y) in ma.iter().zip(&mb) {
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            let p = axis * distance;
            worst = worst.max(x.transform_point3(p).distance(y.transform_point3(p)));
        }
    }
    worst
}

/// The times a clip is checked at: every track's first and last key time,
/// every key time and the middle of every key interval, and `random`
/// pseudo-random times in the clip (a fixed sequence from `seed`).
pub fn check_times(clip: &Clip, random: usize, seed: u64) -> Vec<f32> {
    let mut t: Vec<f32> = Vec::new();
    for info in clip.track_infos() {
        t.push(info.start);
        t.push(info.end);
    }
    let tl = &clip.timelines;
    for i in 0..tl.len() {
        let keys: Vec<f32> = (0..tl.key_count(i)).map(|k| tl.time(i, k)).collect();
        t.extend_from_slice(&keys);
        t.extend(keys.windows(2).map(|w| 0.5 * (w[0] + w[1])));
    }
    let d = clip.duration().max(1e-3);
    // xorshift64*: the same times on every run and machine.
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    t.extend((0..random).map(|_| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        d * (r as f32 / (1u64 << 24) as f32)
    }));
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}

/// The worst error of `compressed` against `original` (both sampled
/// looping, each time from a fresh context: a random seek) at `times`.
pub fn check_error(
    original: &Clip,
    compressed: &Clip,
    skeleton: &Skeleton,
    times: &[f32],
    distance: f32,
) -> Result<CheckedError, AnimError> {
    let n = skeleton.len();
    let sample = |clip: &Clip, t: f32| -> Result<Vec<Transform>, AnimError> {
        let mut out = vec![Transform::IDENTITY; n];
        let mut ctx = SamplingContext::new(clip);
        SamplingJob {
            clip,
            context: &mut ctx,
            time: t,
            mode: PlaybackMode::Loop,
            output: &mut out,
        }
        .run()?;
        Ok(out)
    };
    let mut w = CheckedError::default();
    for &t in times {
        let e = pose_error(
            skeleton,
            &sample(original, t)?,
            &sample(compressed, t)?,
            distance,
        );
        if e > w.worst {
            w = CheckedError { worst: e, at: t };
        }
    }
    Ok(w)
}

/// Where a clip's [`Clip::bytes`] go, part by part (buffers by capacity,
/// as `bytes` counts them): the `Clip` struct, its name, track list and
/// base layout, then a compressed clip's own parts; the last row is what
/// the rows before it leave of `bytes` (0 when every part is listed).
/// `inspect --compress` prints it.
pub fn bytes_breakdown(clip: &Clip) -> Vec<(&'static str, usize)> {
    fn b<T>(v: &Vec<T>) -> usize {
        v.capacity() * std::mem::size_of::<T>()
    }
    let tl = &clip.timelines;
    let mut rows = vec![
        ("Clip struct", std::mem::size_of::<Clip>()),
        ("name", clip.name().len()),
        ("track list", std::mem::size_of_val(clip.track_infos())),
        ("rest pose", b(&clip.rest)),
        ("rest joints", b(&clip.rest_joints)),
        ("timelines", b(&tl.keys) + b(&tl.groups) + b(&tl.times)),
        (
            "keyed batches",
            b(&clip.vec3_batches)
                + clip
                    .vec3_batches
                    .iter()
                    .map(|x| b(&x.joints) + b(&x.data))
                    .sum::<usize>()
                + b(&clip.quat_batches)
                + clip
                    .quat_batches
                    .iter()
                    .map(|x| {
                        b(&x.joints)
                            + b(&x.keys)
                            + b(&x.squad)
                            + b(&x.squad_clamped)
                            + b(&x.cubic)
                            + b(&x.squad_soa)
                            + b(&x.squad_clamped_soa)
                            + b(&x.linear_soa_keys)
                            + b(&x.linear_soa_angles)
                    })
                    .sum::<usize>()
                + b(&clip.matrix_batches)
                + clip
                    .matrix_batches
                    .iter()
                    .map(|x| b(&x.joints) + b(&x.keys))
                    .sum::<usize>(),
        ),
    ];
    if let Some(p) = clip.compressed() {
        rows.extend(p.parts());
    }
    let listed: usize = rows.iter().map(|r| r.1).sum();
    rows.push(("other", clip.bytes().saturating_sub(listed)));
    rows
}
