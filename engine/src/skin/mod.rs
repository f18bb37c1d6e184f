//! The skinning paths: palette storage per frame in flight, descriptor
//! layouts, pipeline permutations, upload and draw recording.
//!
//! A path implements [`SkinningPath`]; everything else here (vertex
//! streams, frame uniforms, capture mode, the pipeline) is shared, so a new
//! path is one file. The first path is [`Palette4x3Ubo`].

mod capture;
mod frame;
mod mesh;
mod palette_4x3_ubo;
mod path;
mod pipeline;

pub use capture::{CaptureBuffer, CapturedVertex};
pub use frame::{FrameSets, FrameUniforms};
pub use mesh::{BaseVertex, GpuMesh, InfluenceVertex, MAX_INFLUENCES};
pub use palette_4x3_ubo::Palette4x3Ubo;
pub use path::{PathKind, SkinningPath};
pub use pipeline::{SkinPipeline, SkinPipelineDesc, SKINNED_FRAGMENT};

#[cfg(test)]
mod layout_tests;
