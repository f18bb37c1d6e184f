use glam::{Vec2, Vec3, Vec4};

use super::{Influences, MeshError, MorphJob, MorphTargets, MorphedVertices};

/// One skinned triangle mesh, in the bind pose's model space.
///
/// Triangles are counter-clockwise seen from the front (right-handed). The
/// influences' joint indices refer to `Model::skins[skin]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedMesh {
    /// The mesh's name in the file (may be empty).
    pub name: String,
    /// Vertex positions, bind pose, model space.
    pub positions: Vec<Vec3>,
    /// Unit normals, one per vertex.
    pub normals: Vec<Vec3>,
    /// The texture coordinates the material's texture reads (a glTF
    /// material's `texCoord` set); empty when the file has none.
    pub uvs: Vec<Vec2>,
    /// Linear RGBA vertex colours, multiplied into the material's colour;
    /// empty when the file has none.
    pub colors: Vec<Vec4>,
    /// Unit tangents (`xyz`) with their bitangent sign (`w`, +1 or -1), one
    /// per vertex; empty when the file has none.
    pub tangents: Vec<Vec4>,
    /// Joint influences of every vertex.
    pub influences: Influences,
    /// Triangle list, three vertex indices per triangle.
    pub indices: Vec<u32>,
    /// Index into the model's skins.
    pub skin: usize,
    /// Index into the model's materials.
    pub material: Option<usize>,
    /// Morph targets applied before skinning (empty: none).
    pub morph: MorphTargets,
}

impl SkinnedMesh {
    /// Number of vertices (positions).
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of whole triangles in the index list.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// The bind-pose positions, normals and tangents with the mesh's morph
    /// targets applied ([`MorphJob`]), their weights taken from the model's
    /// weight vector `model_weights` (at `morph.first_weight`). A mesh
    /// without targets gives its own streams. Errors when the vector is too
    /// short for the mesh's targets, or as the job does.
    pub fn morphed(&self, model_weights: &[f32]) -> Result<MorphedVertices, MeshError> {
        let weights = self.morph.weights(model_weights).ok_or_else(|| {
            MeshError::Invalid(format!(
                "mesh {:?}: morph weights {}..{} outside the {} given",
                self.name,
                self.morph.first_weight,
                self.morph.first_weight + self.morph.len(),
                model_weights.len()
            ))
        })?;
        let n = self.positions.len();
        let mut out = MorphedVertices {
            positions: vec![Vec3::ZERO; n],
            normals: vec![Vec3::ZERO; self.normals.len()],
            tangents: vec![Vec4::ZERO; self.tangents.len()],
        };
        MorphJob {
            targets: &self.morph.targets,
            weights,
            positions: &self.positions,
            normals: &self.normals,
            tangents: &self.tangents,
            out_positions: &mut out.positions,
            out_normals: &mut out.normals,
            out_tangents: &mut out.tangents,
        }
        .run()?;
        Ok(out)
    }

    /// Checks that the streams fit together: one normal per position, uvs
    /// empty or one per position, influences for every vertex, whole
    /// triangles with indices in range, finite positions and normals.
    pub fn validate(&self) -> Result<(), MeshError> {
        let n = self.positions.len();
        let bad = |what: &str, got: usize| {
            Err(MeshError::Invalid(format!(
                "mesh {:?}: {got} {what} for {n} vertices",
                self.name
            )))
        };
        if self.normals.len() != n {
            return bad("normals", self.normals.len());
        }
        if !self.uvs.is_empty() && self.uvs.len() != n {
            return bad("uvs", self.uvs.len());
        }
        if !self.colors.is_empty() && self.colors.len() != n {
            return bad("colours", self.colors.len());
        }
        if !self.tangents.is_empty() && self.tangents.len() != n {
            return bad("tangents", self.tangents.len());
        }
        for (t, target) in self.morph.targets.iter().enumerate() {
            for (what, len) in [
                ("position deltas", target.positions.len()),
                ("normal deltas", target.normals.len()),
                ("tangent deltas", target.tangents.len()),
            ] {
                if len != 0 && len != n {
                    return bad(&format!("morph target {t} {what}"), len);
                }
            }
        }
        let inf = &self.influences;
        if inf.per_vertex == 0
            || inf.joints.len() != n * inf.per_vertex
            || inf.weights.len() != inf.joints.len()
        {
            return bad("influence slots", inf.joints.len().min(inf.weights.len()));
        }
        if !self.indices.len().is_multiple_of(3) {
            return Err(MeshError::Invalid(format!(
                "mesh {:?}: {} indices is not a whole number of triangles",
                self.name,
                self.indices.len()
            )));
        }
        if let Some((at, &index)) = self
            .indices
            .iter()
            .enumerate()
            .find(|(_, &i)| i as usize >= n)
        {
            return Err(MeshError::IndexOutOfRange {
                at,
                index,
                vertices: n,
            });
        }
        if let Some(v) =
            (0..n).find(|&v| !(self.positions[v].is_finite() && self.normals[v].is_finite()))
        {
            return Err(MeshError::Invalid(format!(
                "mesh {:?}: vertex {v} is not finite",
                self.name
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assets::builtin::Trident;

    #[test]
    fn trident_is_valid_and_broken_streams_are_not() {
        let mesh = Trident::model().meshes.remove(0);
        mesh.validate().unwrap();
        let mut m = mesh.clone();
        m.normals.pop();
        assert!(m.validate().is_err());
        let mut m = mesh.clone();
        m.indices[4] = 99;
        assert!(matches!(
            m.validate(),
            Err(MeshError::IndexOutOfRange { index: 99, .. })
        ));
        let mut m = mesh.clone();
        m.influences.weights.pop();
        assert!(m.validate().is_err());
        let mut m = mesh;
        m.positions[0].x = f32::NAN;
        assert!(m.validate().is_err());
    }
}
