use std::path::PathBuf;

use glam::{Affine3A, Vec3, Vec4};

use crate::anim::{
    AnimError, Clip, LinearBlendJob, LocalToModelJob, PlaybackMode, SamplingContext, SamplingJob,
    Skeleton, Skin, Transform,
};
use crate::mesh::SkinnedMesh;

/// Where a material's base-colour texture comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TextureSource {
    /// A file path, resolved against the model file's folder.
    File(PathBuf),
    /// Image bytes held by the model file (GLB buffer or data URI).
    Embedded { mime: String, bytes: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// Linear RGBA.
    pub base_color: Vec4,
    pub texture: Option<TextureSource>,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            name: String::new(),
            base_color: Vec4::ONE,
            texture: None,
        }
    }
}

/// Everything the engine needs of a file: the skeleton, the skins binding
/// meshes to it, the meshes (right-handed, Y up, bind pose), clips and
/// materials. Meshes without a skin in the file are bound rigidly to their
/// node through a one-joint skin, so every mesh is drawn the same way.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub name: String,
    pub source: Option<PathBuf>,
    pub skeleton: Skeleton,
    pub skins: Vec<Skin>,
    pub meshes: Vec<SkinnedMesh>,
    pub clips: Vec<Clip>,
    pub materials: Vec<Material>,
    /// Things the loader changed or dropped (truncated influences, say).
    pub warnings: Vec<String>,
}

impl Model {
    pub fn clip(&self, name: &str) -> Option<&Clip> {
        self.clips.iter().find(|c| c.name() == name)
    }

    pub fn vertex_count(&self) -> usize {
        self.meshes.iter().map(|m| m.vertex_count()).sum()
    }

    /// Local transforms of `clip` at `time` seconds, or the bind pose for
    /// `None`. A one-off convenience: players keep a [`SamplingContext`].
    pub fn pose(
        &self,
        clip: Option<&Clip>,
        time: f32,
        mode: PlaybackMode,
    ) -> Result<Vec<Transform>, AnimError> {
        let mut out = self.skeleton.bind_local().to_vec();
        if let Some(clip) = clip {
            SamplingJob {
                clip,
                context: &mut SamplingContext::new(clip),
                time,
                mode,
                output: &mut out,
            }
            .run()?;
        }
        Ok(out)
    }

    /// Model-space matrices of every joint for `locals`.
    pub fn model_matrices(&self, locals: &[Transform]) -> Result<Vec<Affine3A>, AnimError> {
        let mut models = vec![Affine3A::IDENTITY; self.skeleton.len()];
        LocalToModelJob::full(&self.skeleton, locals, &mut models).run()?;
        Ok(models)
    }

    /// Skinning matrices of every skin (indexed like `skins`) for `locals`.
    pub fn skin_matrices(&self, locals: &[Transform]) -> Result<Vec<Vec<Affine3A>>, AnimError> {
        let models = self.model_matrices(locals)?;
        self.skins
            .iter()
            .map(|skin| {
                let mut palette = vec![Affine3A::IDENTITY; skin.len()];
                skin.skin_matrices(&models, &mut palette)?;
                Ok(palette)
            })
            .collect()
    }

    /// The CPU reference: every mesh (in order) skinned by linear blend
    /// skinning for `locals`, positions and normals.
    pub fn skin_cpu(&self, locals: &[Transform]) -> Result<Vec<SkinnedVertices>, AnimError> {
        let palettes = self.skin_matrices(locals)?;
        self.meshes
            .iter()
            .map(|mesh| {
                let palette = palettes.get(mesh.skin).ok_or_else(|| {
                    AnimError::InvalidJob(format!(
                        "mesh {:?} names skin {} of {}",
                        mesh.name,
                        mesh.skin,
                        palettes.len()
                    ))
                })?;
                let n = mesh.vertex_count();
                let with_normals = mesh.normals.len() == n;
                let mut out = SkinnedVertices {
                    positions: vec![Vec3::ZERO; n],
                    normals: vec![Vec3::ZERO; if with_normals { n } else { 0 }],
                };
                LinearBlendJob {
                    skin: palette,
                    per_vertex: mesh.influences.per_vertex,
                    joints: &mesh.influences.joints,
                    weights: &mesh.influences.weights,
                    positions: &mesh.positions,
                    normals: if with_normals { &mesh.normals } else { &[] },
                    out_positions: &mut out.positions,
                    out_normals: &mut out.normals,
                }
                .run()?;
                Ok(out)
            })
            .collect()
    }
}

/// One mesh's skinned vertices, in model space.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedVertices {
    pub positions: Vec<Vec3>,
    /// Empty when the mesh has no normals.
    pub normals: Vec<Vec3>,
}
