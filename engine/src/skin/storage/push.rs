use super::contract::{PartDraw, Storage};
use crate::gpu::{vk, GpuResult};

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

    fn glsl_block(&self) -> Option<&'static str> {
        Some("PalettePush")
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

    fn limit_text(&self, limits: &vk::PhysicalDeviceLimits) -> String {
        format!(
            "maxPushConstantsSize {} bytes",
            limits.max_push_constants_size
        )
    }

    fn instanced(&self) -> bool {
        false
    }

    fn windowed(&self) -> bool {
        true
    }

    fn in_push_constants(&self) -> bool {
        true
    }

    /// One draw per instance, its partition's palette pushed whole; with
    /// motion, the previous one too, half the window on (`vertex.glsl`).
    fn record_part(&self, draw: &PartDraw<'_>) -> GpuResult<()> {
        let half = draw.window / 2;
        if draw.previous_offset != 0 && draw.part_vec4s > half {
            return Err(crate::gpu::GpuError::InvalidArgument(format!(
                "push palette of {} vec4s with motion: more than half the {}-vec4 window",
                draw.part_vec4s, draw.window
            )));
        }
        let palette = |start: usize| {
            draw.host_palettes
                .get(start..start + draw.part_vec4s)
                .ok_or_else(|| {
                    crate::gpu::GpuError::InvalidArgument(format!(
                        "push palette {start}..{} outside the frame's {} vec4s",
                        start + draw.part_vec4s,
                        draw.host_palettes.len()
                    ))
                })
        };
        for i in 0..draw.count {
            let start = draw.palette_base + i as usize * draw.stride;
            draw.push_bytes(bytemuck::cast_slice(palette(start)?));
            if draw.previous_offset != 0 {
                let previous = palette(start + draw.previous_offset)?;
                draw.push_bytes_at((half * 16) as u32, bytemuck::cast_slice(previous));
            }
            draw.draw(1, draw.first_instance + i);
        }
        Ok(())
    }
}
