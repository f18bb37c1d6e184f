//! One channel of a joint (translation, rotation, scale) as four floats,
//! and the rotation's left-out component: the arithmetic the compression
//! job shares between its passes.

use glam::{Quat, Vec3, Vec4};

use super::format::{
    lerp3, locate_span, nlerp4, place, quat_of, stored_of, Span, ROTATION, SCALE, TRANSLATION,
};
use crate::anim::{PlaybackMode, Transform};

/// A resampled curve track.
pub(super) struct Curve {
    pub(super) joint: usize,
    pub(super) channel: u8,
    /// Per sample: vectors with a 0, rotations the normalised quaternion
    /// (the stored three are chosen per segment, [`stored_of`]).
    pub(super) samples: Vec<Vec4>,
}

/// A channel as four floats: vectors with a 0, rotations normalised.
pub(super) fn channel_value(t: &Transform, c: u8) -> Vec4 {
    match c {
        TRANSLATION => t.translation.extend(0.0),
        SCALE => t.scale.extend(0.0),
        _ => Vec4::from(t.rotation.normalize()),
    }
}

/// The component a rotation track leaves out over `samples` (the one
/// whose smallest magnitude is largest); 0 for vectors.
pub(super) fn left_out(c: u8, samples: &[Vec4]) -> u8 {
    if c != ROTATION {
        return 0;
    }
    let mut best = (3u8, f32::NEG_INFINITY);
    for k in [3u8, 0, 1, 2] {
        let m = samples
            .iter()
            .map(|q| q[k as usize].abs())
            .fold(f32::INFINITY, f32::min);
        if m > best.1 {
            best = (k, m);
        }
    }
    best.0
}

/// The three stored components of a channel value.
pub(super) fn stored(c: u8, v: Vec4, largest: u8) -> Vec3 {
    if c == ROTATION {
        stored_of(v, largest)
    } else {
        v.truncate()
    }
}

/// The channel value of three stored components.
pub(super) fn unstored(c: u8, v: Vec3, largest: u8) -> Vec4 {
    if c == ROTATION {
        Vec4::from(place(Quat::from_vec4(quat_of(v)), largest))
    } else {
        v.extend(0.0)
    }
}

/// A channel as four floats (vectors with 0).
pub(super) fn channel4(t: &Transform, c: u8) -> [f32; 4] {
    match c {
        TRANSLATION => t.translation.extend(0.0).to_array(),
        SCALE => t.scale.extend(0.0).to_array(),
        _ => t.rotation.to_array(),
    }
}

/// How far two values of a channel move a point `d` away.
pub(super) fn channel_distance(c: u8, a: Vec4, b: Vec4, d: f32) -> f32 {
    match c {
        TRANSLATION => (a - b).length(),
        SCALE => (a - b).abs().max_element() * d,
        _ => {
            let dot = a.dot(b).abs().min(1.0);
            2.0 * dot.acos() * d
        }
    }
}

/// Puts unquantized samples of `curves` (interpolated as sampling does)
/// into `pose` at `t`; `seg_first` is each segment's first sample.
pub(super) fn apply_f32(
    curves: &[Curve],
    spans: &[Span],
    seg_first: &[usize],
    duration: f32,
    t: f32,
    pose: &mut [Transform],
) {
    let (s, k, u) = locate_span(spans, PlaybackMode::Loop.wrap(t, duration));
    let g = seg_first[s] + k;
    for c in curves {
        let (a, b) = (c.samples[g], c.samples[g + 1]);
        set_channel(&mut pose[c.joint], c.channel, a, b, u);
    }
}

#[inline]
pub(super) fn set_channel(t: &mut Transform, c: u8, a: Vec4, b: Vec4, u: f32) {
    match c {
        ROTATION => t.rotation = nlerp4(a, b, u),
        SCALE => t.scale = lerp3(a.truncate(), b.truncate(), u),
        _ => t.translation = lerp3(a.truncate(), b.truncate(), u),
    }
}
