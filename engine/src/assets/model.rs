use std::path::PathBuf;

use glam::{Affine3A, Mat3, Vec3, Vec4};

use crate::anim::{
    AnimError, Clip, LinearBlendJob, LocalToModelJob, PlaybackMode, SamplingContext, SamplingJob,
    Skeleton, Skin, Transform, WeightSamplingJob,
};
use crate::mesh::{MorphSet, SkinnedMesh};

/// Where a material's base-colour texture comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TextureSource {
    /// A file path, resolved against the model file's folder (left relative
    /// when bytes were loaded from memory without a folder).
    File(PathBuf),
    /// Image bytes held by the model file (GLB buffer or data URI).
    Embedded {
        /// The image's MIME type as the file states it (`image/png`...;
        /// empty when it states none).
        mime: String,
        /// The encoded image file.
        bytes: Vec<u8>,
    },
}

/// How a material's alpha is used (glTF `alphaMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum AlphaMode {
    /// Alpha ignored: the surface is opaque.
    #[default]
    Opaque,
    /// Fragments with alpha below `cutoff` are discarded, the rest opaque.
    Mask {
        /// glTF `alphaCutoff` (0.5 by default).
        cutoff: f32,
    },
    /// Alpha-blended over what is behind, drawn after the opaque surfaces.
    Blend,
}

/// A texture filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Filter {
    /// The nearest texel (or mip level).
    Nearest,
    /// Linear between texels (or mip levels).
    #[default]
    Linear,
}

/// How texture coordinates outside 0..1 wrap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wrap {
    /// Repeat (glTF's default).
    #[default]
    Repeat,
    /// Repeat, every other copy mirrored.
    MirroredRepeat,
    /// Clamp to the edge texel.
    ClampToEdge,
}

/// How a texture is sampled (glTF `sampler`; .x textures take the
/// default: linear filters, linear between mip levels, repeat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    /// Magnification filter.
    pub mag: Filter,
    /// Minification filter within a mip level.
    pub min: Filter,
    /// Between mip levels; `None`: no mip maps (level 0 only).
    pub mipmap: Option<Filter>,
    /// Along U.
    pub wrap_s: Wrap,
    /// Along V.
    pub wrap_t: Wrap,
}

impl Default for Sampler {
    fn default() -> Self {
        Self {
            mag: Filter::Linear,
            min: Filter::Linear,
            mipmap: Some(Filter::Linear),
            wrap_s: Wrap::Repeat,
            wrap_t: Wrap::Repeat,
        }
    }
}

/// A surface's look: a base colour, optionally textured, its alpha mode
/// and sidedness.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// The material's name in the file (may be empty).
    pub name: String,
    /// Linear RGBA.
    pub base_color: Vec4,
    /// The base-colour texture, if any.
    pub texture: Option<TextureSource>,
    /// The texture coordinate set the texture reads (glTF `texCoord`); the
    /// loader puts that set in `SkinnedMesh::uvs`.
    pub tex_coord: u32,
    /// How the texture is sampled.
    pub sampler: Sampler,
    /// How alpha is used.
    pub alpha_mode: AlphaMode,
    /// Whether back faces are drawn too (glTF `doubleSided`).
    pub double_sided: bool,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            name: String::new(),
            base_color: Vec4::ONE,
            texture: None,
            tex_coord: 0,
            sampler: Sampler::default(),
            alpha_mode: AlphaMode::Opaque,
            double_sided: false,
        }
    }
}

/// Everything the engine needs of a file: the skeleton, the skins binding
/// meshes to it, the meshes (right-handed, Y up, bind pose), clips and
/// materials. Meshes without a skin in the file are bound rigidly to their
/// node through a one-joint skin, so every mesh is drawn the same way.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// The model's name (the file's stem, or the built-in model's name).
    pub name: String,
    /// The file it was loaded from (the name given to a `load_from_bytes`
    /// function for bytes in memory; `None` for built-in models).
    pub source: Option<PathBuf>,
    /// Every joint, parents before children.
    pub skeleton: Skeleton,
    /// The skins; a mesh names one by index (`SkinnedMesh::skin`).
    pub skins: Vec<Skin>,
    /// The meshes, in the bind pose.
    pub meshes: Vec<SkinnedMesh>,
    /// The animation clips.
    pub clips: Vec<Clip>,
    /// The materials; a mesh names one by index (`SkinnedMesh::material`).
    pub materials: Vec<Material>,
    /// The morph weights' runs, one per glTF node drawing a mesh with
    /// targets; together they cover the model's weight vector
    /// ([`Model::morph_weight_count`] floats), which meshes index through
    /// `SkinnedMesh::morph`.
    pub morph_sets: Vec<MorphSet>,
    /// Things the loader changed or dropped (truncated influences, say).
    pub warnings: Vec<String>,
    /// The file's axes in the model's space (`model = file_axes * file`):
    /// the identity for glTF and built-in models, Z mirrored for .x (a
    /// left-handed format). [`Model::file_axis`] turns "the file's +Z is
    /// up" into the model's vector.
    pub file_axes: Mat3,
}

impl Model {
    /// The clip named `name`.
    pub fn clip(&self, name: &str) -> Option<&Clip> {
        self.clips.iter().find(|c| c.name() == name)
    }

    /// The file's axis `axis` (say `Vec3::Z` for a file authored Z-up) as
    /// a unit vector of the model's space.
    pub fn file_axis(&self, axis: Vec3) -> Vec3 {
        (self.file_axes * axis).normalize_or(axis)
    }

    /// Length of the model's morph weight vector.
    pub fn morph_weight_count(&self) -> usize {
        self.morph_sets
            .iter()
            .map(|s| s.first_weight + s.defaults.len())
            .max()
            .unwrap_or(0)
    }

    /// The weight vector when nothing animates it: every set's defaults.
    pub fn default_morph_weights(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.morph_weight_count()];
        for s in &self.morph_sets {
            out[s.first_weight..s.first_weight + s.defaults.len()].copy_from_slice(&s.defaults);
        }
        out
    }

    /// The morph weight vector for `clip` at `time` seconds, or the
    /// defaults for `None`: [`Model::default_morph_weights`], padded with
    /// zeros to [`Clip::weight_count`] if the clip animates more, with the
    /// clip's weight tracks sampled over them ([`WeightSamplingJob`]). A
    /// one-off convenience: players keep a [`SamplingContext`].
    pub fn morph_weights(
        &self,
        clip: Option<&Clip>,
        time: f32,
        mode: PlaybackMode,
    ) -> Result<Vec<f32>, AnimError> {
        let mut defaults = self.default_morph_weights();
        let Some(clip) = clip else {
            return Ok(defaults);
        };
        defaults.resize(defaults.len().max(clip.weight_count()), 0.0);
        let mut out = vec![0.0; defaults.len()];
        WeightSamplingJob {
            clip,
            context: &mut SamplingContext::new(clip),
            time,
            mode,
            defaults: &defaults,
            output: &mut out,
        }
        .run()?;
        Ok(out)
    }

    /// Vertices of all meshes together.
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

/// An axis-aligned box in model space: the mesh layer's [`Aabb`](crate::mesh::Aabb)
/// (the animated bounds, the skinned bounds and the viewer's framing all
/// use it).
pub type Bounds = crate::mesh::Aabb;

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
    /// Skinned positions, one per mesh vertex.
    pub positions: Vec<Vec3>,
    /// Empty when the mesh has no normals.
    pub normals: Vec<Vec3>,
}
