//! Palette encodings: how one bone's skinning matrix is written as vec4s,
//! how the shader blends them (`shaders/skin/encoding/*.glsl`), and the CPU
//! job that is the GPU's reference. One file per encoding, each naming the
//! `anim` writer of its GPU layout (`anim::write_*_rows`, where the
//! encoding math lives once) and its CPU job.

mod affine4x3;
mod contract;
mod dual_quat;
mod dual_quat_scale;
mod quat_translation;

pub use affine4x3::Affine4x3Encoding;
pub use contract::{BlendBound, CpuSkinning, CpuTangents, Encoding};
pub use dual_quat::DualQuatEncoding;
pub use dual_quat_scale::DualQuatScaleEncoding;
pub use quat_translation::QuatTranslationEncoding;

/// Every encoding, in the order paths are listed (a new encoding is one
/// line here).
pub static ENCODINGS: &[&dyn Encoding] = &[
    &Affine4x3Encoding,
    &QuatTranslationEncoding,
    &DualQuatEncoding,
    &DualQuatScaleEncoding,
];
