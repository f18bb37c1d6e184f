//! Skinned vertex data: streams, influences and their normalisation, bone
//! partitioning. No Vulkan here.

mod influences;
mod skinned_mesh;

pub use influences::Influences;
pub use skinned_mesh::SkinnedMesh;
