//! Skinned vertex data: streams, influences and their normalisation, bone
//! partitioning. No Vulkan here.

mod influences;
mod normalize;
mod skinned_mesh;

pub use influences::Influences;
pub use normalize::{compute_normals, normalize_influences, NormalizeReport};
pub use skinned_mesh::SkinnedMesh;
