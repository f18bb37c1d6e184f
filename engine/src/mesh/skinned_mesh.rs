use glam::{Vec2, Vec3};

use super::Influences;

/// One skinned triangle mesh, in the bind pose's model space.
///
/// Triangles are counter-clockwise seen from the front (right-handed). The
/// influences' joint indices refer to `Model::skins[skin]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedMesh {
    pub name: String,
    pub positions: Vec<Vec3>,
    /// Unit normals, one per vertex.
    pub normals: Vec<Vec3>,
    /// Empty when the file has no texture coordinates.
    pub uvs: Vec<Vec2>,
    pub influences: Influences,
    pub indices: Vec<u32>,
    /// Index into the model's skins.
    pub skin: usize,
    /// Index into the model's materials.
    pub material: Option<usize>,
}

impl SkinnedMesh {
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}
