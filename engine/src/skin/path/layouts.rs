//! The compute stage's descriptor set layouts and pipeline layout.

use super::super::instance::ComputePush;
use crate::gpu::{vk, BindingDesc, DescriptorSetLayout, Device, GpuResult, PipelineLayout};

/// The compute stage's set layouts and pipeline layout.
pub(super) struct ComputeLayouts {
    /// Set 0: the mesh's bind-pose vertices, influences and tangents
    /// (binding 3, read by the TANGENTS permutation).
    pub mesh: DescriptorSetLayout,
    /// Set 2: the skinned positions and normals, the previous positions
    /// (motion) and the skinned tangents (binding 3, TANGENTS).
    pub out: DescriptorSetLayout,
    /// Sets 0 to 3 (set 1 the storage's palette, or empty; set 3 the
    /// morph targets, `super::super::morph`) and the push
    /// range: the storage's prefix, then [`ComputePush`].
    pub pipeline: std::sync::Arc<PipelineLayout>,
}

impl ComputeLayouts {
    pub(super) fn new(
        device: &std::sync::Arc<Device>,
        palette: vk::DescriptorSetLayout,
        morph: vk::DescriptorSetLayout,
        push_prefix: usize,
    ) -> GpuResult<Self> {
        let ssbo = vk::DescriptorType::STORAGE_BUFFER;
        let cs = vk::ShaderStageFlags::COMPUTE;
        let mesh = DescriptorSetLayout::new(
            device,
            &[
                BindingDesc::new(0, ssbo, cs),
                BindingDesc::new(1, ssbo, cs),
                BindingDesc::new(2, ssbo, cs),
                BindingDesc::new(3, ssbo, cs),
            ],
        )?;
        let out = DescriptorSetLayout::new(
            device,
            &[
                BindingDesc::new(0, ssbo, cs),
                BindingDesc::new(1, ssbo, cs),
                BindingDesc::new(2, ssbo, cs),
                BindingDesc::new(3, ssbo, cs),
            ],
        )?;
        let pipeline = PipelineLayout::new(
            device,
            &[mesh.raw(), palette, out.raw(), morph],
            &[vk::PushConstantRange::default()
                .stage_flags(cs)
                .size((push_prefix + std::mem::size_of::<ComputePush>()) as u32)],
        )?;
        Ok(Self {
            mesh,
            out,
            pipeline,
        })
    }
}
