//! A surface's material as the skinned pipelines read it: set 4 of every
//! path's graphics layout (`shaders/skin/material.glsl`): binding 0 the
//! base-colour texture (a combined image sampler), binding 1 the
//! [`MaterialUniforms`]. [`GpuMaterial`] is one such set; the materials of a
//! model file are made by [`crate::materials::ModelMaterials`].

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use crate::gpu::{
    vk, write_buffer, write_image_sampler, BindingDesc, Buffer, DescriptorPool,
    DescriptorSetLayout, Device, GpuError, GpuResult, Sampler, SamplerDesc, Texture, TextureLevel,
};

/// The set number of the material in the skinned pipelines' layout.
pub const MATERIAL_SET: u32 = 4;

/// `MaterialUniforms::alpha[1]`: alpha ignored.
pub const ALPHA_OPAQUE: f32 = 0.0;
/// `MaterialUniforms::alpha[1]`: fragments below the cutoff discarded.
pub const ALPHA_MASK: f32 = 1.0;
/// `MaterialUniforms::alpha[1]`: alpha written for blending.
pub const ALPHA_BLEND: f32 = 2.0;

/// Set 4, binding 1 (std140). Host mirror of `MaterialUniforms` in
/// `shaders/skin/material.glsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MaterialUniforms {
    /// The base colour factor (linear RGBA), multiplied with the texture's
    /// sample and the vertex colour.
    pub base_color: [f32; 4],
    /// `[cutoff, mode, 0, 0]`: mode [`ALPHA_OPAQUE`], [`ALPHA_MASK`] (alpha
    /// below `cutoff` discarded) or [`ALPHA_BLEND`].
    pub alpha: [f32; 4],
}

const _: () = assert!(std::mem::size_of::<MaterialUniforms>() == 32);

impl Default for MaterialUniforms {
    /// White, opaque.
    fn default() -> Self {
        Self {
            base_color: [1.0; 4],
            alpha: [0.5, ALPHA_OPAQUE, 0.0, 0.0],
        }
    }
}

/// The layout of set 4: the texture (binding 0) and the uniforms
/// (binding 1), read by the fragment shader.
pub fn material_set_layout(device: &Arc<Device>) -> GpuResult<DescriptorSetLayout> {
    DescriptorSetLayout::new(
        device,
        &[
            BindingDesc::new(
                0,
                vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                vk::ShaderStageFlags::FRAGMENT,
            ),
            BindingDesc::new(
                1,
                vk::DescriptorType::UNIFORM_BUFFER,
                vk::ShaderStageFlags::FRAGMENT,
            ),
        ],
    )
}

/// One material on the GPU: its set 4 (texture, sampler, uniforms), and
/// how it is drawn: alpha-blended (the blending pipeline, depth writes off;
/// draw these after the opaque ones) and double-sided (no culling).
pub struct GpuMaterial {
    set: vk::DescriptorSet,
    _pool: DescriptorPool,
    _uniforms_buffer: Buffer,
    texture: Arc<Texture>,
    _sampler: Arc<Sampler>,
    uniforms: MaterialUniforms,
    double_sided: bool,
}

impl GpuMaterial {
    /// Makes the set of `layout` (a [`material_set_layout`]) naming
    /// `texture` through `sampler` and a uniform buffer holding `uniforms`.
    pub fn new(
        device: &Arc<Device>,
        layout: &DescriptorSetLayout,
        texture: Arc<Texture>,
        sampler: Arc<Sampler>,
        uniforms: MaterialUniforms,
        double_sided: bool,
    ) -> GpuResult<Self> {
        let buffer = Buffer::device_local_with_data(
            device,
            "material uniforms",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            bytemuck::bytes_of(&uniforms),
        )?;
        let pool = DescriptorPool::new(device, &[layout], 1)?;
        let set = pool
            .allocate(layout, 1)?
            .first()
            .copied()
            .ok_or_else(|| GpuError::InvalidArgument("no material set allocated".into()))?;
        write_image_sampler(device, set, 0, &texture, &sampler);
        write_buffer(device, set, 1, vk::DescriptorType::UNIFORM_BUFFER, &buffer);
        Ok(Self {
            set,
            _pool: pool,
            _uniforms_buffer: buffer,
            texture,
            _sampler: sampler,
            uniforms,
            double_sided,
        })
    }

    /// White, opaque, one-sided, with a 1x1 white texture: what a draw
    /// without a material uses (it looks as before materials existed).
    pub fn white(device: &Arc<Device>, layout: &DescriptorSetLayout) -> GpuResult<Self> {
        let texture = Texture::upload(
            device,
            "white texture",
            vk::Format::R8G8B8A8_UNORM,
            &[TextureLevel {
                width: 1,
                height: 1,
                data: &[255; 4],
            }],
        )?;
        let sampler = Sampler::new(
            device,
            &SamplerDesc {
                mag: vk::Filter::NEAREST,
                min: vk::Filter::NEAREST,
                mipmap: vk::SamplerMipmapMode::NEAREST,
                mipmaps: false,
                wrap_u: vk::SamplerAddressMode::REPEAT,
                wrap_v: vk::SamplerAddressMode::REPEAT,
            },
        )?;
        Self::new(
            device,
            layout,
            Arc::new(texture),
            Arc::new(sampler),
            MaterialUniforms::default(),
            false,
        )
    }

    /// The set to bind as set 4.
    pub fn set(&self) -> vk::DescriptorSet {
        self.set
    }

    /// Drawn with blending (after the opaque surfaces, depth writes off).
    pub fn blend(&self) -> bool {
        self.uniforms.alpha[1] == ALPHA_BLEND
    }

    /// Back faces drawn too.
    pub fn double_sided(&self) -> bool {
        self.double_sided
    }

    /// The uniforms it was made with.
    pub fn uniforms(&self) -> &MaterialUniforms {
        &self.uniforms
    }

    /// The texture it samples.
    pub fn texture(&self) -> &Arc<Texture> {
        &self.texture
    }
}
