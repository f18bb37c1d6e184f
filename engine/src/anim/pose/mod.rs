//! Pose jobs: skeletons, local transforms, clips and their timelines,
//! sampling, blending, local-to-model, structure-of-arrays poses and
//! crowds. The jobs pick their SIMD kernels through
//! [`crate::anim::simd`]; the scalar code here is their tested definition.

pub(crate) mod blending;
pub(crate) mod clip;
pub(crate) mod compressed;
pub(crate) mod crowd;
pub(crate) mod crowd_weights;
pub(crate) mod flat_tracks;
pub(crate) mod interpolation;
pub(crate) mod local_to_model;
pub(crate) mod quat;
pub(crate) mod sampling;
pub(crate) mod skeleton;
pub(crate) mod soa;
pub(crate) mod timelines;
pub(crate) mod transform;
pub(crate) mod weight_blending;
pub(crate) mod weight_sampling;
pub(crate) mod weights;
