//! Skinned vertex data: streams, influences and their normalisation, morph
//! targets, bone partitioning. No Vulkan here.

mod influences;
mod morph;
mod normalize;
mod partition;
mod skinned_mesh;

pub use influences::Influences;
pub use morph::{active_targets, MorphJob, MorphSet, MorphTarget, MorphTargets, MorphedVertices};
pub use normalize::{compute_normals, normalize_influences, NormalizeReport};
pub use partition::{partition_bones, BonePartition, MeshError};
pub use skinned_mesh::SkinnedMesh;
