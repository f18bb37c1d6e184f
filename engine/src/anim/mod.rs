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
//! Morph-target weights ride along: a clip's weight tracks are sampled
//! by [`WeightSamplingJob`] (or [`Playback::sample_weights`],
//! [`Crowd::animate_weights`]) into a model's weight vector and mixed by
//! [`WeightBlendingJob`]; tangents are skinned by [`TangentSkinningJob`]
//! next to any of the position jobs.
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
//!
//! # Layout
//!
//! - `pose/`: the pose jobs and their data: `skeleton`, `transform`,
//!   `quat`, `interpolation`, `clip` and `timelines` (clips as built for
//!   sampling), `weights` and `weight_sampling`, `weight_blending` (morph
//!   weight tracks, their sampling and blending), `crowd_weights`,
//!   `sampling`, `blending`, `local_to_model`, `soa` (SoA poses) and
//!   `crowd`. Each job file holds the scalar definition of its kernels.
//! - `palette/`: skin matrices (`skin`: [`Skin`], [`PaletteSkin`]), the
//!   palette entry formats (`formats`: [`Affine4x3`], [`QuatTranslation`],
//!   [`DualQuat`]), the encoders into them, and `rows`: the writers of the
//!   GPU layouts the skinning paths call ([`write_4x3_rows`] and its
//!   siblings), where the encoding math lives once.
//! - `deform/`: CPU skinning (LBS, quaternion + translation, DQS jobs),
//!   with `bind` ([`BindVertices`], [`CheckedJoints`]) and `tangents`
//!   ([`TangentSkinningJob`], each job's blend for tangents). Not the engine's
//!   GPU skinning (`crate::skin`).
//! - `simd/`: the kernels. `select` is the one place that reads the CPU
//!   (features, vendor, L2 size) and the environment and chooses each
//!   job's kernel; `lanes` holds what kernels share with their callers
//!   (`Vec3x8`, `cofactor`, `SquadSpan`, ...) and sits below both;
//!   `avx2/` and `avx512/` hold one file per kernel family (sampling,
//!   timelines, blending, local-to-model, palette, LBS, DQS). Job files
//!   import kernels; kernels import only `lanes` (and, in `avx512/`, the
//!   AVX2 tier's `common` helpers), never a job.
//!
//! To add a kernel: write it in its family's file under `simd/<tier>/`
//! (its `# Safety` referring to the tier contract in that folder's
//! `mod.rs`), take shared types from `simd::lanes`, choose it in
//! `simd::select`, call it from the job, and add a test comparing it with
//! the job's scalar definition on every tier the CPU has
//! (`simd::testable_tiers`).

mod deform;
mod error;
mod palette;
mod pose;
mod simd;

pub use deform::{
    normals_are_unit, BindVertices, CheckedJoints, DualQuatSkinningJob, LinearBlendJob,
    MorphBlocksJob, MorphDeltas, QuatTranslationSkinningJob, TangentPalette, TangentSkinningJob,
    UNIT_NORMAL_TOLERANCE,
};
pub use error::AnimError;
pub use palette::skin::{PaletteSkin, Skin};
pub use palette::{
    dual_quat_of, encode_4x3, encode_dual_quat, encode_dual_quat_scale, encode_quat_translation,
    polar_rotation, quat_translation_of, write_4x3_rows, write_dual_quat_rows,
    write_dual_quat_scale_rows, write_quat_translation_rows, Affine4x3, DualQuat, PaletteHierarchy,
    PaletteReport, QuatTranslation, SCALE_TOLERANCE,
};
pub use pose::blending::{additive_delta, BlendLayer, BlendingJob, SoaBlendLayer, SoaBlendingJob};
pub use pose::clip::{Channel, Clip, RawClip, RawJointTrack, RawTrack, TrackInfo};
pub use pose::compressed::{
    bytes_breakdown, check_error, check_times, measure_error, measure_errors, pose_error,
    CheckedError, ClipFile, ClipFileError, ClipFileFault, CompressedBytes, CompressedClip,
    CompressionJob, Tolerance,
};
// The GPU animation's crowd records (skin::anim) share the CPU crowd's clock.
#[cfg(feature = "gpu")]
pub(crate) use pose::crowd::clip_time;
pub use pose::crowd::{Crowd, CrowdInstance, CrowdOutput, Parallelism, Strided};
pub use pose::flat_tracks::{FlatChannel, FlatClip, FlatKind, FlatTrack};
pub use pose::interpolation::Interpolation;
pub use pose::local_to_model::{LocalToModelJob, SoaLocalToModelJob};
pub use pose::quat::{nlerp, quat_exp, quat_ln, slerp, squad, squad_setup};
pub use pose::sampling::{Playback, PlaybackMode, SamplingContext, SamplingJob, SoaSamplingJob};
pub use pose::skeleton::{Skeleton, MAX_JOINTS, NO_PARENT};
pub use pose::soa::{SoaPose, SoaTransforms8, SOA_LANES};
pub use pose::transform::Transform;
pub use pose::weight_blending::{additive_weight_delta, WeightBlendingJob, WeightLayer};
pub use pose::weight_sampling::WeightSamplingJob;
pub use pose::weights::{RawWeightTrack, WeightTrackInfo};
