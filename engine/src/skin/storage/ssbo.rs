use super::contract::Storage;
use crate::gpu::vk;

/// "ssbo": the frame's palettes in one std430 storage buffer per frame in
/// flight, read as `vec4 v[]`; bounded by `maxStorageBufferRange`. The
/// compute stage reads its palettes from here too.
pub struct StorageBuffer;

impl Storage for StorageBuffer {
    fn name(&self) -> &'static str {
        "ssbo"
    }

    fn shader(&self) -> &'static str {
        "skin/storage/ssbo.glsl"
    }

    fn glsl_block(&self) -> Option<&'static str> {
        Some("PaletteSsbo")
    }

    fn descriptor(&self) -> Option<vk::DescriptorType> {
        Some(vk::DescriptorType::STORAGE_BUFFER)
    }

    fn usage(&self) -> vk::BufferUsageFlags {
        vk::BufferUsageFlags::STORAGE_BUFFER
    }

    fn window_vec4s(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        u64::from(limits.max_storage_buffer_range) / 16
    }

    fn limit_text(&self, limits: &vk::PhysicalDeviceLimits) -> String {
        format!(
            "maxStorageBufferRange {} bytes",
            limits.max_storage_buffer_range
        )
    }

    fn offset_alignment(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        limits.min_storage_buffer_offset_alignment.max(16)
    }

    fn instanced(&self) -> bool {
        true
    }

    fn serves_compute(&self) -> bool {
        true
    }
}
