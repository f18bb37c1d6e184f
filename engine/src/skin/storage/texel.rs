use std::sync::Arc;

use super::contract::Storage;
use crate::gpu::{vk, write_texel_buffer, Buffer, BufferView, Device, GpuResult};

/// "texel": the frame's palettes in one RGBA32F uniform texel buffer per
/// frame in flight (seed 004's vertex texture, GPU Gems 3 chapter 2), one
/// texel per vec4, fetched with `texelFetch`; bounded by
/// `maxTexelBufferElements` only.
pub struct TexelBuffer;

impl Storage for TexelBuffer {
    fn name(&self) -> &'static str {
        "texel"
    }

    fn shader(&self) -> &'static str {
        "skin/storage/texel.glsl"
    }

    fn glsl_block(&self) -> Option<&'static str> {
        None
    }

    fn descriptor(&self) -> Option<vk::DescriptorType> {
        Some(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
    }

    fn usage(&self) -> vk::BufferUsageFlags {
        vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
    }

    fn window_vec4s(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        u64::from(limits.max_texel_buffer_elements)
    }

    fn limit_text(&self, limits: &vk::PhysicalDeviceLimits) -> String {
        format!(
            "maxTexelBufferElements {}",
            limits.max_texel_buffer_elements
        )
    }

    fn offset_alignment(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        limits.min_texel_buffer_offset_alignment.max(16)
    }

    fn instanced(&self) -> bool {
        true
    }

    /// An RGBA32F view of the whole buffer.
    fn write_set(
        &self,
        device: &Arc<Device>,
        set: vk::DescriptorSet,
        buffer: &Buffer,
        _window: usize,
    ) -> GpuResult<Option<BufferView>> {
        let view = BufferView::new(
            device,
            buffer,
            vk::Format::R32G32B32A32_SFLOAT,
            0,
            buffer.size(),
        )?;
        let ty = vk::DescriptorType::UNIFORM_TEXEL_BUFFER;
        write_texel_buffer(device, set, 0, ty, &view);
        Ok(Some(view))
    }
}
