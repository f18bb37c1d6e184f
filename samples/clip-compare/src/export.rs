//! A vkskin clip as ozz-compress's input: dense keys sampled from vkskin's
//! own sampling, plus the times both libraries are evaluated at.
//!
//! Keys: every joint's translation, rotation and scale sampled by vkskin's
//! `SamplingJob` (clamped playback) at every multiple of 1/[`EXPORT_RATE`]
//! s, at the duration, at every key time and every midpoint between
//! consecutive key times; then, recursively, half way between two
//! neighbouring samples wherever the sample there strays from their
//! interpolation by more than [`STRAY`] (a key the grid missed, a fast
//! curve), down to [`JUMP_GAP`]. So a SQUAD or CUBICSPLINE clip gives ozz the
//! curve vkskin defines, a matrix track its decomposed TRS, and a jump (STEP
//! tracks; NEAREST matrix tracks of .x files, which change value half way
//! between keys) stays a jump: two keys at most [`JUMP_GAP`] apart, the old
//! value on one and the new on the other.

use rand::{Rng, SeedableRng};
use vkskin::anim::{Clip, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Transform};
use vkskin::glam::Quat;

use crate::interchange::{ClipOut, JointKeys, Keys};

/// Export samples per second, at multiples of its period from 0: key times
/// at 24, 30, 60, 120 or 240 per second (glTF exporters; .x files' ticks in
/// multiples of 20 at 4800 per second) fall on it, so linear tracks are
/// exact wherever their keys are.
pub const EXPORT_RATE: f32 = 240.0;
/// A jump of a STEP or NEAREST track becomes two keys this far apart or less.
pub const JUMP_GAP: f32 = 2e-5;
/// How far a half-way sample may stray from the interpolation of its
/// neighbours before it becomes a key (see `strays`).
pub const STRAY: f32 = 1e-4;
/// Keys per clip at most (ozz indexes at most 65,536 key times per clip).
pub const MAX_KEYS: usize = 60_000;
/// Random evaluation times per clip.
pub const RANDOM_EVALUATIONS: usize = 256;
/// Random seek times per clip, for the timing.
pub const SEEKS: usize = 4096;
/// The cached timing's step.
pub const CACHED_STEP: f32 = 1.0 / 60.0;

/// vkskin's sampling of one clip, clamped.
pub struct Sampler<'a> {
    clip: &'a Clip,
    context: SamplingContext,
}

impl<'a> Sampler<'a> {
    pub fn new(clip: &'a Clip) -> Self {
        Self {
            clip,
            context: SamplingContext::new(clip),
        }
    }
    pub fn pose(&mut self, time: f32) -> Result<Vec<Transform>, String> {
        let mut output = vec![Transform::IDENTITY; self.clip.joint_count()];
        SamplingJob {
            clip: self.clip,
            context: &mut self.context,
            time,
            mode: PlaybackMode::Clamp,
            output: &mut output,
        }
        .run()
        .map_err(|e| format!("clip '{}': {e}", self.clip.name()))?;
        Ok(output)
    }
}

/// Key times of the clip's tracks. `exact` where the caller built the clip
/// (the bench clips); otherwise estimated from each track's key count,
/// first and last key, as evenly spaced (a runtime `Clip` does not expose
/// its key times; every exporter of the shared assets writes even keys).
pub fn key_times(clip: &Clip, exact: Option<&[f32]>) -> Vec<f32> {
    let mut t: Vec<f32> = match exact {
        Some(e) => e.to_vec(),
        None => clip
            .track_infos()
            .iter()
            .flat_map(|i| {
                let n = i.keys.max(1);
                (0..n).map(move |k| {
                    if n == 1 {
                        i.start
                    } else {
                        i.start + (i.end - i.start) * k as f32 / (n - 1) as f32
                    }
                })
            })
            .collect(),
    };
    t.push(0.0);
    t.push(clip.duration());
    sorted_unique(t, clip.duration())
}

fn sorted_unique(mut t: Vec<f32>, duration: f32) -> Vec<f32> {
    for x in &mut t {
        *x = x.clamp(0.0, duration);
    }
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}

fn midpoints(t: &[f32]) -> Vec<f32> {
    t.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect()
}

/// Whether `mid`, sampled half way between poses `a` and `b`, strays from
/// their interpolation by more than [`STRAY`] (translation and scale, per
/// unit of the translation's length past 1; rotation, radians).
fn strays(a: &[Transform], b: &[Transform], mid: &[Transform]) -> bool {
    a.iter().zip(b).zip(mid).any(|((a, b), m)| {
        let t = a.translation.lerp(b.translation, 0.5);
        let s = a.scale.lerp(b.scale, 0.5);
        let rb = if a.rotation.dot(b.rotation) < 0.0 {
            -b.rotation
        } else {
            b.rotation
        };
        let r = (a.rotation + rb).normalize();
        // About the angle between the two, without acos's loss near 1.
        let angle = 2.0 * (r - m.rotation).length().min((r + m.rotation).length());
        t.distance(m.translation) > STRAY * (1.0 + m.translation.length())
            || s.distance(m.scale) > STRAY
            || angle > STRAY
            || !angle.is_finite()
    })
}

/// The exported clip and vkskin's poses at its evaluation times.
pub struct Exported {
    pub out: ClipOut,
    pub reference: Vec<Vec<Transform>>,
}

/// Dense keys, evaluation times (key times, midpoints, random times) and
/// timing sequences for one clip.
pub fn export(clip: &Clip, keys: &[f32], seed: u64) -> Result<Exported, String> {
    let duration = clip.duration();
    let mut sampler = Sampler::new(clip);
    let steps = (duration * EXPORT_RATE).floor() as usize;
    let mut grid: Vec<f32> = (0..=steps).map(|i| i as f32 / EXPORT_RATE).collect();
    grid.push(duration);
    grid.extend_from_slice(keys);
    grid.extend(midpoints(keys));
    let grid = sorted_unique(grid, duration);
    let poses = grid
        .iter()
        .map(|&t| sampler.pose(t))
        .collect::<Result<Vec<_>, _>>()?;

    // Refinement: wherever the sample half way between two neighbours
    // strays from their interpolation (a key between them, a jump of a STEP
    // or NEAREST track, a fast curve), it becomes a key too, recursively,
    // down to JUMP_GAP: keys of unknown time and jumps are kept.
    let mut times = vec![grid[0]];
    let mut refined = vec![poses[0].clone()];
    for k in 0..grid.len() - 1 {
        let mut stack = vec![(grid[k + 1], poses[k + 1].clone())];
        // Depth-first: the left half of an interval before its right half.
        while let Some((b, pb)) = stack.pop() {
            let (a, pa) = (times[times.len() - 1], &refined[refined.len() - 1]);
            let mid = 0.5 * (a + b);
            if b - a > JUMP_GAP && mid > a && mid < b && times.len() + stack.len() < MAX_KEYS {
                let pm = sampler.pose(mid)?;
                if strays(pa, &pb, &pm) {
                    stack.push((b, pb));
                    stack.push((mid, pm));
                    continue;
                }
            }
            times.push(b);
            refined.push(pb);
        }
    }
    let (mut grid, mut poses) = (times, refined);
    if std::env::var_os("CLIP_COMPARE_DEBUG").is_some() {
        eprintln!("{}: {} keys after refinement", clip.name(), grid.len());
    }
    // ozz needs a positive duration; a clip of one instant holds its pose.
    let ozz_duration = duration.max(CACHED_STEP);
    if duration <= 0.0 {
        grid = vec![0.0, ozz_duration];
        poses = vec![poses[0].clone(), poses[0].clone()];
    }
    let joints = (0..clip.joint_count())
        .map(|j| {
            // One hemisphere along the track: vkskin's output may be q or
            // -q (the same rotation); ozz interpolates keys as they are.
            let mut prev = Quat::IDENTITY;
            let rotations = poses.iter().enumerate().map(move |(k, p)| {
                let q = p[j].rotation.normalize();
                let q = if k > 0 && prev.dot(q) < 0.0 { -q } else { q };
                prev = q;
                q
            });
            JointKeys {
                translation: Keys {
                    times: grid.clone(),
                    values: poses.iter().map(|p| p[j].translation).collect(),
                },
                rotation: Keys {
                    times: grid.clone(),
                    values: rotations.collect(),
                },
                scale: Keys {
                    times: grid.clone(),
                    values: poses.iter().map(|p| p[j].scale).collect(),
                },
            }
        })
        .collect();

    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut evaluations = keys.to_vec();
    evaluations.extend(midpoints(keys));
    evaluations.extend((0..RANDOM_EVALUATIONS).map(|_| rng.gen_range(0.0..=duration)));
    let evaluations = sorted_unique(evaluations, duration);
    let reference = evaluations
        .iter()
        .map(|&t| sampler.pose(t))
        .collect::<Result<Vec<_>, _>>()?;
    let seeks = (0..SEEKS).map(|_| rng.gen_range(0.0..=duration)).collect();
    Ok(Exported {
        out: ClipOut {
            name: clip.name().to_string(),
            duration: ozz_duration,
            joints,
            evaluations,
            step: CACHED_STEP,
            seeks,
        },
        reference,
    })
}

/// The skeleton for ozz-compress.
pub fn skeleton_out(skeleton: &Skeleton) -> crate::interchange::SkeletonOut {
    crate::interchange::SkeletonOut {
        parents: (0..skeleton.len()).map(|j| skeleton.parent(j)).collect(),
        bind: skeleton.bind_local().to_vec(),
    }
}
