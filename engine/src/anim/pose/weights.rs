//! Morph-target weight tracks: what a clip animates besides its joints.
//!
//! A model's morph weights are one flat vector (see
//! `assets::Model::morph_sets`); a weight track animates a run of it,
//! `count` weights from `first`, every key holding all `count` values.

use super::clip::Interpolation;

/// One editable weight track: keys of `count` weights each.
///
/// `values` holds `times.len() * count` floats, key-major (key `k`'s
/// weights at `k * count ..`). For [`Interpolation::CubicSpline`],
/// `tangents` holds `times.len() * 2 * count` floats, per key its
/// in-tangents then its out-tangents (glTF's layout without the values in
/// between); it is empty otherwise. Weights are not clamped.
#[derive(Clone, Debug, PartialEq)]
pub struct RawWeightTrack {
    /// Index of the first weight it animates in the model's weight vector.
    pub first: usize,
    /// Weights per key.
    pub count: usize,
    /// How it moves between keys (Step, Linear or CubicSpline).
    pub interpolation: Interpolation,
    /// Key times in seconds, non-decreasing.
    pub times: Vec<f32>,
    /// `times.len() * count` weights, key-major.
    pub values: Vec<f32>,
    /// CubicSpline: `times.len() * 2 * count` tangents; else empty.
    pub tangents: Vec<f32>,
}
