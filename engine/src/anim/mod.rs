//! CPU animation: skeletons in flat arrays, clips and sampling, pose
//! operations, local-to-model, palettes and the CPU reference skinning.
//!
//! Every operation is a small job: a plain struct of input and output slices
//! with `validate()` and `run()`, no hidden state.
//!
//! A frame on the CPU: [`SamplingJob`] (or [`Playback`]) per clip into local
//! [`Transform`]s, [`BlendingJob`] to mix them, [`LocalToModelJob`] to model
//! matrices, [`Skin::skin_matrices`] then one palette encoder
//! ([`encode_4x3`], [`encode_quat_translation`], [`encode_dual_quat`]) for
//! the GPU, or a CPU skinning job ([`LinearBlendJob`],
//! [`QuatTranslationSkinningJob`], [`DualQuatSkinningJob`]) as the reference.
//!
//! The pose jobs also run on [`SoaPose`]s, structure-of-arrays poses of
//! eight-joint blocks ([`SoaSamplingJob`], [`SoaBlendingJob`],
//! [`SoaLocalToModelJob`]): the same checks and results, with no transposes
//! between the jobs.
//!
//! Sampling, blending, local-to-model and the LBS and DQS skinning loops have
//! AVX2 + FMA versions chosen at run time, and LBS and local-to-model AVX-512
//! ones above them; the scalar code they replace is kept as their tested
//! definition. `VKSKIN_SCALAR=1` in the environment forces it, and
//! `VKSKIN_SIMD=scalar|avx2|avx512` caps the tier.

mod blending;
mod clip;
mod crowd;
mod error;
mod local_to_model;
mod palette;
mod quat;
mod sampling;
mod simd;
mod skeleton;
mod skin;
mod skinning;
mod soa;
mod timelines;
mod transform;

pub use blending::{additive_delta, BlendLayer, BlendingJob, SoaBlendLayer, SoaBlendingJob};
pub use clip::{Channel, Clip, Interpolation, RawClip, RawJointTrack, RawTrack, TrackInfo};
pub use crowd::{Crowd, CrowdInstance, CrowdOutput, Parallelism, Strided};
pub use error::AnimError;
pub use local_to_model::{LocalToModelJob, SoaLocalToModelJob};
pub use palette::{
    dual_quat_of, encode_4x3, encode_dual_quat, encode_dual_quat_scale, encode_quat_translation,
    polar_rotation, quat_translation_of, Affine4x3, DualQuat, PaletteHierarchy, PaletteReport,
    QuatTranslation, SCALE_TOLERANCE,
};
pub use quat::{nlerp, quat_exp, quat_ln, slerp, squad, squad_setup};
pub use sampling::{Playback, PlaybackMode, SamplingContext, SamplingJob, SoaSamplingJob};
pub use skeleton::{Skeleton, MAX_JOINTS, NO_PARENT};
pub use skin::{PaletteSkin, Skin};
pub use skinning::{
    normals_are_unit, BindVertices, CheckedJoints, DualQuatSkinningJob, LinearBlendJob,
    QuatTranslationSkinningJob, UNIT_NORMAL_TOLERANCE,
};
pub use soa::{SoaPose, SoaTransforms8, SOA_LANES};
pub use transform::Transform;
