//! The editable clip: keyframe tracks per joint (`RawTrack`,
//! `RawJointTrack`) and the `RawClip` that `Clip::build` turns into a
//! runtime clip.

use glam::{Affine3A, Quat, Vec3};

use crate::anim::pose::interpolation::Interpolation;
use crate::anim::pose::weights::RawWeightTrack;

/// One editable keyframe track. Times are in seconds and non-decreasing.
/// `tangents` holds `[in, out]` per key for [`Interpolation::CubicSpline`]
/// and is empty otherwise. An empty track means the channel is not animated.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTrack<T> {
    /// How the track moves between its keys.
    pub interpolation: Interpolation,
    /// Key times in seconds, non-decreasing.
    pub times: Vec<f32>,
    /// One value per key.
    pub values: Vec<T>,
    /// `[in, out]` tangents per key for [`Interpolation::CubicSpline`]; empty otherwise.
    pub tangents: Vec<[T; 2]>,
}

impl<T> Default for RawTrack<T> {
    fn default() -> Self {
        Self {
            interpolation: Interpolation::Linear,
            times: Vec::new(),
            values: Vec::new(),
            tangents: Vec::new(),
        }
    }
}

impl<T> RawTrack<T> {
    /// A track without tangents.
    pub fn new(interpolation: Interpolation, times: Vec<f32>, values: Vec<T>) -> Self {
        Self {
            interpolation,
            times,
            values,
            tangents: Vec::new(),
        }
    }

    /// Whether the track has no keys (the channel is not animated).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Time of the last key in seconds, `None` for an empty track.
    pub fn last_time(&self) -> Option<f32> {
        self.times.last().copied()
    }
}

/// The channels that animate one joint. A whole-matrix track (.x key type 4)
/// replaces the other three when present.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawJointTrack {
    /// Skeleton joint index.
    pub joint: usize,
    /// Translation keys; empty when not animated.
    pub translation: RawTrack<Vec3>,
    /// Rotation keys, normalised when the clip is built; empty when not animated.
    pub rotation: RawTrack<Quat>,
    /// Per-axis scale keys; empty when not animated.
    pub scale: RawTrack<Vec3>,
    /// Whole-matrix keys, decomposed into translation, rotation and scale when the
    /// clip is built; no cubic spline. Empty when not animated.
    pub matrix: RawTrack<Affine3A>,
}

impl RawJointTrack {
    /// A track for `joint` with every channel empty.
    pub fn new(joint: usize) -> Self {
        Self {
            joint,
            ..Self::default()
        }
    }
}

/// An editable clip: what loaders produce and tools edit. [`Clip::build`]
/// validates it once into the runtime form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawClip {
    /// The clip's name, as errors and tools show it.
    pub name: String,
    /// Seconds. Raised to the last key time if shorter.
    pub duration: f32,
    /// Per-joint tracks, at most one per joint.
    pub tracks: Vec<RawJointTrack>,
    /// Morph-weight tracks, over disjoint runs of the model's weights.
    pub weights: Vec<RawWeightTrack>,
}
