//! Models built in code: the engine's own demo content, needing no files.
//!
//! [`Trident`] is seed 000's whitebox; [`Strip`] seed 002's strip; [`Character`] the viewer's default
//! character; [`TwistCylinder`] the candy-wrapper comparison of linear and
//! dual-quaternion skinning; [`procedural`] generates test and benchmark
//! content from counts and seeds.

mod character;
pub mod procedural;
mod strip;
mod trident;
mod tube;
mod twist;

pub use character::{Character, CharacterDesc};
pub use strip::Strip;
pub use trident::Trident;
pub use twist::TwistCylinder;

/// A one-mesh model from a seed's arrays: normals +Z, four influences per
/// vertex with the fourth weight implicit, one skin over the whole
/// skeleton, no clips (the seeds animate in code).
fn seed_model(
    name: &str,
    skeleton: crate::anim::Skeleton,
    positions: Vec<glam::Vec3>,
    joint_indices: &[[u16; 4]],
    weights: &[[f32; 3]],
    indices: &[u32],
) -> super::Model {
    let mesh = crate::mesh::SkinnedMesh {
        name: name.into(),
        normals: vec![glam::Vec3::Z; positions.len()],
        positions,
        uvs: Vec::new(),
        influences: crate::mesh::Influences::from_implicit_fourth(joint_indices, weights),
        indices: indices.to_vec(),
        skin: 0,
        material: None,
    };
    super::Model {
        name: name.into(),
        source: None,
        skins: vec![crate::anim::Skin::whole_skeleton(&skeleton)],
        skeleton,
        meshes: vec![mesh],
        clips: Vec::new(),
        materials: Vec::new(),
        warnings: Vec::new(),
    }
}
