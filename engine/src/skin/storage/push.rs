use super::Storage;
use crate::gpu::vk;

/// "push": one instance's palette (or one partition of it) in push
/// constants, pushed before each draw, as seed 003's constant registers
/// held it. `maxPushConstantsSize` bounds it: 128 bytes on many devices,
/// two 4x3 bones. Nothing else is pushed by these pipelines.
pub struct PushConstants;

impl Storage for PushConstants {
    fn name(&self) -> &'static str {
        "push"
    }

    fn shader(&self) -> &'static str {
        "skin/storage/push.glsl"
    }

    fn descriptor(&self) -> Option<vk::DescriptorType> {
        None
    }

    fn usage(&self) -> vk::BufferUsageFlags {
        vk::BufferUsageFlags::empty()
    }

    fn window_vec4s(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        u64::from(limits.max_push_constants_size) / 16
    }

    fn instanced(&self) -> bool {
        false
    }
}
