//! A vkskin clip as ozz-compress's input: dense keys sampled from vkskin's
//! own sampling, plus the times both libraries are evaluated at.
//!
//! Keys: every joint's translation, rotation and scale sampled by vkskin's
//! `SamplingJob` (clamped playback) at every multiple of 1/[`EXPORT_RATE`]
//! s and at the duration, at every key time and every
//! midpoint between consecutive key times. So a SQUAD or CUBICSPLINE clip
//! gives ozz the curve vkskin defines, and a matrix track its decomposed
//! TRS. Jumps (STEP tracks, and NEAREST matrix tracks of .x files, which
//! change value half way between keys) are kept as jumps: each one found
//! between two of those times is narrowed by bisection to a pair of times
//! at most [`JUMP_GAP`] apart, the old value on one and the new on the
//! other, both exported.

use rand::{Rng, SeedableRng};
use vkskin::anim::{
    Channel, Clip, Interpolation, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Transform,
};
use vkskin::glam::Quat;

use crate::interchange::{ClipOut, JointKeys, Keys};

/// Export samples per second, at multiples of its period from 0: key times
/// at 24, 30, 60, 120 or 240 per second (glTF exporters; .x files' ticks in
/// multiples of 20 at 4800 per second) fall on it, so linear tracks are
/// exact wherever their keys are.
pub const EXPORT_RATE: f32 = 240.0;
/// A jump of a STEP or NEAREST track becomes two keys this far apart or less.
pub const JUMP_GAP: f32 = 2e-5;
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

/// Whether the channel of joint `j` differs between two poses.
fn differs(channel: Channel, a: &Transform, b: &Transform) -> bool {
    match channel {
        Channel::Translation => a.translation != b.translation,
        Channel::Rotation => a.rotation != b.rotation,
        Channel::Scale => a.scale != b.scale,
        Channel::Matrix => a != b,
    }
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
    let mut grid = sorted_unique(grid, duration);
    let mut poses = grid
        .iter()
        .map(|&t| sampler.pose(t))
        .collect::<Result<Vec<_>, _>>()?;

    // Jumps of STEP and NEAREST tracks.
    let jumpy: Vec<_> = clip
        .track_infos()
        .iter()
        .filter(|i| {
            matches!(
                i.interpolation,
                Interpolation::Step | Interpolation::Nearest
            )
        })
        .map(|i| (i.joint, i.channel))
        .collect();
    if !jumpy.is_empty() {
        let mut extra = Vec::new();
        for w in 0..grid.len() - 1 {
            for &(j, ch) in &jumpy {
                if !differs(ch, &poses[w][j], &poses[w + 1][j]) {
                    continue;
                }
                let (mut lo, mut hi) = (grid[w], grid[w + 1]);
                let old = poses[w][j];
                while hi - lo > JUMP_GAP {
                    let mid = 0.5 * (lo + hi);
                    if mid <= lo || mid >= hi {
                        break;
                    }
                    if differs(ch, &old, &sampler.pose(mid)?[j]) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                extra.push(lo);
                extra.push(hi);
            }
        }
        if !extra.is_empty() {
            grid.extend(extra);
            grid = sorted_unique(grid, duration);
            poses = grid
                .iter()
                .map(|&t| sampler.pose(t))
                .collect::<Result<Vec<_>, _>>()?;
        }
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
