//! [`LoadOptions`]: what a loader may be told, below the loaders.

use crate::anim::Interpolation;

/// Choices a loader makes that a caller may want otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadOptions {
    /// Influences kept per vertex after normalisation (1..=8): the largest
    /// weights are kept and renormalised. 4 by default; 8 keeps what the
    /// 8-influence shader permutation can draw.
    pub max_influences: usize,
    /// Interpolation of .x rotation keys: SQUAD by default (seed 003), or
    /// `Linear` for slerp.
    pub x_rotation_interpolation: Interpolation,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            max_influences: 4,
            x_rotation_interpolation: Interpolation::Squad,
        }
    }
}
