//! [`ModelMaterials`]: every material of a [`Model`] on the GPU.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::upload::{sampler_desc, upload_image};
use crate::assets::texture::{load_material_texture_with_limits, TextureLimits};
use crate::assets::{AlphaMode, Model, TextureSource};
use crate::gpu::{DescriptorSetLayout, Device, GpuResult, Sampler, SamplerDesc, Texture};
use crate::mesh::SkinnedMesh;
use crate::skin::{
    material_set_layout, GpuMaterial, MaterialUniforms, ALPHA_BLEND, ALPHA_MASK, ALPHA_OPAQUE,
};

/// How [`ModelMaterials::with_options`] reads and uploads textures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaterialOptions {
    /// Keep BC1/BC2/BC3 textures compressed on devices that sample them
    /// (`false`: always decode on the CPU).
    pub keep_bc: bool,
    /// What the texture readers accept.
    pub limits: TextureLimits,
}

impl Default for MaterialOptions {
    fn default() -> Self {
        Self {
            keep_bc: true,
            limits: TextureLimits::default(),
        }
    }
}

/// A texture that could not be used: its material draws with its factor.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureWarning {
    /// The material's index in `Model::materials`.
    pub material: usize,
    /// The material's name.
    pub material_name: String,
    /// The file (or `embedded texture (<mime>)`) at fault.
    pub file: PathBuf,
    /// What is wrong, in words.
    pub fault: String,
}

impl fmt::Display for TextureWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "texture {}: {} (material {} {:?} draws with its base colour factor)",
            self.file.display(),
            self.fault,
            self.material,
            self.material_name
        )
    }
}

/// A model's materials on the GPU (see the module documentation). Each
/// distinct texture source is read and uploaded once, each distinct sampler
/// made once.
pub struct ModelMaterials {
    _layout: DescriptorSetLayout,
    materials: Vec<GpuMaterial>,
    /// For meshes naming no material (or one past the list): white.
    fallback: GpuMaterial,
    warnings: Vec<TextureWarning>,
    textures: usize,
    compressed: usize,
}

impl ModelMaterials {
    /// [`ModelMaterials::with_options`] with the default options.
    pub fn new(device: &Arc<Device>, model: &Model) -> GpuResult<Self> {
        Self::with_options(device, model, &MaterialOptions::default())
    }

    /// Reads and uploads `model`'s textures (files resolved against the
    /// folder of `model.source`) and makes a set per material. A texture
    /// that cannot be read is a warning (logged and kept, see
    /// [`ModelMaterials::warnings`]); a GPU failure is an error.
    pub fn with_options(
        device: &Arc<Device>,
        model: &Model,
        options: &MaterialOptions,
    ) -> GpuResult<Self> {
        let layout = material_set_layout(device)?;
        let dir: Option<&Path> = model.source.as_deref().and_then(Path::parent);
        let mut textures: Vec<(&TextureSource, Option<Arc<Texture>>)> = Vec::new();
        let mut samplers: Vec<(SamplerDesc, Arc<Sampler>)> = Vec::new();
        let mut warnings = Vec::new();
        let mut compressed = 0;
        let fallback = GpuMaterial::white(device, &layout)?;
        let white = fallback.texture().clone();
        let mut materials = Vec::with_capacity(model.materials.len());
        for (i, m) in model.materials.iter().enumerate() {
            let texture = match &m.texture {
                None => None,
                Some(source) => match textures.iter().find(|(s, _)| *s == source) {
                    Some((_, t)) => t.clone(),
                    None => {
                        let t =
                            match load_material_texture_with_limits(source, dir, &options.limits) {
                                Ok(image) => {
                                    let name = format!("{} texture", model.name);
                                    let up = upload_image(device, &name, &image, options.keep_bc)?;
                                    compressed += usize::from(up.compressed);
                                    Some(up.texture)
                                }
                                Err(e) => {
                                    let w = TextureWarning {
                                        material: i,
                                        material_name: m.name.clone(),
                                        file: e.file.clone(),
                                        fault: format!("{}{}", e.place, e.message),
                                    };
                                    log::warn!("{}: {w}", model.name);
                                    warnings.push(w);
                                    None
                                }
                            };
                        textures.push((source, t.clone()));
                        t
                    }
                },
            };
            let sdesc = sampler_desc(&m.sampler);
            let sampler = match samplers.iter().find(|(d, _)| *d == sdesc) {
                Some((_, s)) => s.clone(),
                None => {
                    let s = Arc::new(Sampler::new(device, &sdesc)?);
                    samplers.push((sdesc, s.clone()));
                    s
                }
            };
            let alpha = match m.alpha_mode {
                AlphaMode::Opaque => [0.5, ALPHA_OPAQUE, 0.0, 0.0],
                AlphaMode::Mask { cutoff } => [cutoff, ALPHA_MASK, 0.0, 0.0],
                AlphaMode::Blend => [0.5, ALPHA_BLEND, 0.0, 0.0],
            };
            materials.push(GpuMaterial::new(
                device,
                &layout,
                texture.unwrap_or_else(|| white.clone()),
                sampler,
                MaterialUniforms {
                    base_color: m.base_color.to_array(),
                    alpha,
                },
                m.double_sided,
            )?);
        }
        let uploaded = textures.iter().filter(|(_, t)| t.is_some()).count();
        Ok(Self {
            _layout: layout,
            materials,
            fallback,
            warnings,
            textures: uploaded,
            compressed,
        })
    }

    /// Material `index` of the model.
    pub fn get(&self, index: usize) -> Option<&GpuMaterial> {
        self.materials.get(index)
    }

    /// The material `mesh` names (white and opaque when it names none).
    pub fn for_mesh(&self, mesh: &SkinnedMesh) -> &GpuMaterial {
        mesh.material
            .and_then(|i| self.materials.get(i))
            .unwrap_or(&self.fallback)
    }

    /// What meshes naming no material draw with: white, opaque.
    pub fn fallback(&self) -> &GpuMaterial {
        &self.fallback
    }

    /// Every material, in the model's order.
    pub fn materials(&self) -> &[GpuMaterial] {
        &self.materials
    }

    /// The textures that could not be used.
    pub fn warnings(&self) -> &[TextureWarning] {
        &self.warnings
    }

    /// Textures uploaded (each distinct source once).
    pub fn texture_count(&self) -> usize {
        self.textures
    }

    /// Of those, the ones uploaded BC-compressed.
    pub fn compressed_count(&self) -> usize {
        self.compressed
    }
}
