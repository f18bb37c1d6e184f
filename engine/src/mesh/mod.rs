//! Skinned vertex data: streams, influences and their normalisation, morph
//! targets, bone partitioning, skinned bounds. No Vulkan here.

mod bounds;
mod influences;
mod morph;
mod normalize;
mod partition;
mod skinned_mesh;

pub use bounds::{Aabb, JointBounds, ROUNDING_PAD};
pub use influences::Influences;
pub use morph::{active_targets, MorphJob, MorphSet, MorphTarget, MorphTargets, MorphedVertices};
pub use normalize::{compute_normals, normalize_influences, NormalizeReport};
pub use partition::{partition_bones, BonePartition, MeshError};
pub use skinned_mesh::SkinnedMesh;
