//! GPU animation: clips sampled, blended, taken to model space and encoded
//! into the path's palette storage by compute passes recorded before
//! skinning, from per-instance [`AnimRecord`]s the host writes (32 bytes
//! each) instead of the palettes.
//!
//! - [`GpuClipStore`]: every clip of a character uploaded once, shared by
//!   every instance and every path that plays them (`layout.rs` lays it
//!   out from [`crate::anim::Clip::flatten`]; a compressed clip's
//!   quantized tracks go up as they are stored, bit stream and all, and
//!   the shader decodes them: [`store_bytes`] says what either costs);
//! - [`GpuAnimator`]: one path and prepared mesh: the skeleton, the
//!   mesh's palette program (inverse binds, where each entry goes, its
//!   dual-quaternion parent), the pipeline built for the device's limits,
//!   and per frame the records and the dispatch (`animator.rs`);
//! - the GLSL: `shaders/anim/animate.comp`, `sample.glsl` and
//!   `sample_packed.glsl`.

mod animator;
mod crowd;
mod encoders;
mod layout;
mod record;

pub use animator::{GpuAnimator, GpuClipStore};
pub use crowd::{crowd_records, AnimateOn};
pub use encoders::gpu_encoder_rows;
pub use layout::store_bytes;
pub use record::AnimRecord;
