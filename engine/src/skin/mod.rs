//! GPU skinning: paths made of a palette storage, an encoding and a stage
//! (how to add a storage or an encoding: `ARCHITECTURE.md`, "Where to add
//! things").
//!
//! - [`encoding`]: how a bone is written and blended, and the CPU job that
//!   is the reference (one file per encoding);
//! - [`storage`]: where a frame's palettes live (one file per storage);
//! - [`registry`]: the named paths ([`paths`], [`find`], [`auto`]);
//! - [`SkinPath`]: a path at run time (pipelines, per-frame storage, draw
//!   recording), [`PreparedMesh`] a mesh uploaded for it;
//! - [`GpuMaterial`]: a material's set 4 (texture, sampler, factors).

pub mod anim;
mod capture;
pub mod encoding;
mod frame;
mod instance;
mod material;
mod mesh;
mod morph;
mod path;
pub mod registry;
pub mod storage;

pub use capture::{CaptureBuffer, CaptureHeader, CapturedVertex};
pub use encoding::{BlendBound, CpuSkinning, CpuTangents, Encoding};
pub use frame::{FrameSets, FrameUniforms};
pub use instance::{ComputePush, DrawPush, InstanceRecord};
pub use material::{
    material_set_layout, GpuMaterial, MaterialUniforms, ALPHA_BLEND, ALPHA_MASK, ALPHA_OPAQUE,
    MATERIAL_SET,
};
pub use mesh::{BaseVertex, InfluenceVertex, MeshPart, PreparedMesh, MAX_INFLUENCES};
pub use path::{
    Batch, BatchWriter, HostVertexRoute, InstanceWriter, SkinPath, SkinPathConfig, SkinnedOutput,
    HOST_SKIN_HEADER, HOST_SKIN_INCLUDE, PLAIN_VERTEX, SKINNED_FRAGMENT,
};
pub use registry::{auto, find, paths, PathDesc, Stage};
pub use storage::{PartDraw, Storage};

#[cfg(test)]
mod layout_tests;
