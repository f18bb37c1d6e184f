use std::sync::Arc;

use super::contract::{PartDraw, Storage};
use crate::gpu::{vk, write_buffer_range, Buffer, BufferView, Device, GpuResult};

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

    fn glsl_block(&self) -> Option<&'static str> {
        Some("PaletteUbo")
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

    fn limit_text(&self, limits: &vk::PhysicalDeviceLimits) -> String {
        format!(
            "maxUniformBufferRange {} bytes",
            limits.max_uniform_buffer_range
        )
    }

    fn offset_alignment(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        limits.min_uniform_buffer_offset_alignment.max(16)
    }

    fn instanced(&self) -> bool {
        true
    }

    fn windowed(&self) -> bool {
        true
    }

    fn tail_vec4s(&self, window: usize) -> usize {
        window
    }

    fn write_set(
        &self,
        device: &Arc<Device>,
        set: vk::DescriptorSet,
        buffer: &Buffer,
        window: usize,
    ) -> GpuResult<Option<BufferView>> {
        let ty = vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC;
        write_buffer_range(device, set, 0, ty, buffer, 0, (window * 16) as u64);
        Ok(None)
    }

    /// Runs of instances whose palettes fit one window (with motion, each
    /// partition palette and the previous one after it), each run one
    /// instanced draw at its own dynamic offset.
    fn record_part(&self, draw: &PartDraw<'_>) -> GpuResult<()> {
        let count = draw.count as usize;
        let block = match draw.previous_offset {
            0 => draw.part_vec4s,
            prev => prev + draw.part_vec4s,
        };
        let per_run = (draw.window.saturating_sub(block))
            .checked_div(draw.stride)
            .map_or(count, |q| q + 1);
        let mut i = 0usize;
        while i < count {
            let n = per_run.min(count - i);
            let start = draw.palette_base + i * draw.stride;
            let first = draw.first_instance + i as u32;
            draw.bind_palette(&[(start * 16) as u32]);
            draw.push_draw(0, first)?;
            draw.draw(n as u32, first);
            i += n;
        }
        Ok(())
    }
}
