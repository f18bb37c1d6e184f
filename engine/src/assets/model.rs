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
                    unit_normals: false,
                }
                .run()?;
                Ok(out)
            })
            .collect()
    }
}

/// An axis-aligned box in model space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    /// The empty box (min +inf, max -inf): `extend` makes it real.
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    pub fn extend(&mut self, p: Vec3) {
        if p.is_finite() {
            self.min = self.min.min(p);
            self.max = self.max.max(p);
        }
    }

    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Length of the diagonal (0 for an empty box).
    pub fn diagonal(&self) -> f32 {
        if self.is_empty() {
            0.0
        } else {
            (self.max - self.min).length()
        }
    }
}

impl Model {
    /// The box around every skinned vertex over the bind pose and every
    /// clip sampled at `samples_per_clip` evenly spaced times (ends
    /// included): the bounds a viewer frames, since the bind pose alone can
    /// be far smaller (or elsewhere) than the animated character.
    pub fn animated_bounds(&self, samples_per_clip: usize) -> Result<Bounds, AnimError> {
        let mut b = Bounds::EMPTY;
        let mut add = |locals: &[Transform]| -> Result<(), AnimError> {
            for m in self.skin_cpu(locals)? {
                m.positions.iter().for_each(|&p| b.extend(p));
            }
            Ok(())
        };
        add(self.skeleton.bind_local())?;
        let n = samples_per_clip.max(1);
        for clip in &self.clips {
            let mut context = SamplingContext::new(clip);
            let mut locals = self.skeleton.bind_local().to_vec();
            for i in 0..n {
                let time = if n == 1 {
                    0.0
                } else {
                    clip.duration() * i as f32 / (n - 1) as f32
                };
                SamplingJob {
                    clip,
                    context: &mut context,
                    time,
                    mode: PlaybackMode::Clamp,
                    output: &mut locals,
                }
                .run()?;
                add(&locals)?;
            }
        }
        Ok(b)
    }
}

/// One mesh's skinned vertices, in model space.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedVertices {
    pub positions: Vec<Vec3>,
    /// Empty when the mesh has no normals.
    pub normals: Vec<Vec3>,
}
