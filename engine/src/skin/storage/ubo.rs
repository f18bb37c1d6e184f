use super::Storage;
use crate::gpu::vk;

/// "ubo": the frame's palettes in one uniform buffer per frame in flight; a
/// dynamic offset moves a window of at most `maxUniformBufferRange` bytes
/// (64 KiB: 1,365 4x3 bones) over it, so a draw covers the instances (of a
/// partition) whose palettes fit in one window.
pub struct UniformBuffer;

impl Storage for UniformBuffer {
    fn name(&self) -> &'static str {
        "ubo"
    }

    fn shader(&self) -> &'static str {
        "skin/storage/ubo.glsl"
    }

    fn descriptor(&self) -> Option<vk::DescriptorType> {
        Some(vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC)
    }

    fn usage(&self) -> vk::BufferUsageFlags {
        vk::BufferUsageFlags::UNIFORM_BUFFER
    }

    fn window_vec4s(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        u64::from(limits.max_uniform_buffer_range.min(1 << 26)) / 16
    }

    fn offset_alignment(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        limits.min_uniform_buffer_offset_alignment.max(16)
    }

    fn instanced(&self) -> bool {
        true
    }
}
