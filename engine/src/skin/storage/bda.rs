use super::contract::Storage;
use crate::gpu::{vk, Buffer, Device, GpuError, GpuResult};

/// "bda": the frame's palettes in one storage buffer per frame in flight,
/// reached through its 64-bit device address in push constants (Vulkan
/// 1.2's `bufferDeviceAddress`) instead of a descriptor: no set to bind,
/// no descriptor range. Draws find their palettes from a per-instance base
/// as on "ssbo"; the compute stage reads it the same way. Palette indices
/// are 32-bit, which bounds it.
pub struct BufferAddress;

impl Storage for BufferAddress {
    fn name(&self) -> &'static str {
        "bda"
    }

    fn shader(&self) -> &'static str {
        "skin/storage/bda.glsl"
    }

    fn glsl_block(&self) -> Option<&'static str> {
        Some("PaletteVec4s")
    }

    fn descriptor(&self) -> Option<vk::DescriptorType> {
        None
    }

    fn usage(&self) -> vk::BufferUsageFlags {
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
    }

    fn window_vec4s(&self, _limits: &vk::PhysicalDeviceLimits) -> u64 {
        u64::from(u32::MAX)
    }

    fn limit_text(&self, _limits: &vk::PhysicalDeviceLimits) -> String {
        format!("32-bit palette indices ({} vec4s)", u32::MAX)
    }

    fn instanced(&self) -> bool {
        true
    }

    fn serves_compute(&self) -> bool {
        true
    }

    fn check_device(&self, device: &Device) -> GpuResult<()> {
        if device.features().buffer_device_address {
            Ok(())
        } else {
            Err(GpuError::InvalidArgument(
                "palette storage bda needs bufferDeviceAddress (Vulkan 1.2), which this device did not enable".into(),
            ))
        }
    }

    /// The palette buffer's device address (`PaletteVec4s palette`).
    fn push_prefix_len(&self) -> usize {
        8
    }

    fn push_prefix(&self, buffer: &Buffer) -> GpuResult<Vec<u8>> {
        Ok(buffer.device_address()?.to_ne_bytes().to_vec())
    }
}
