use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use crate::gpu::{
    vk, write_buffer, BindingDesc, Buffer, BufferDesc, DescriptorPool, DescriptorSetLayout, Device,
    GpuResult,
};

/// Host mirror of `FrameUniforms` in `shaders/common/frame.glsl` (set 0,
/// std140), checked against the compiled shader by a test.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct FrameUniforms {
    /// Projection * view, column-major, Vulkan clip space.
    pub view_proj: [[f32; 4]; 4],
    /// Linear RGB in xyz.
    pub color: [f32; 4],
    /// Towards the light in xyz; w = 0 flat colour, 1 shaded, 2 the motion
    /// view on a path with motion vectors (`skin/skinned.frag`: world-space
    /// velocity times `color[3]` as colour, zero velocity grey).
    pub light: [f32; 4],
}

/// Set 0 of every skinned pipeline: one `FrameUniforms` buffer per frame in
/// flight, host-visible and written only for a frame whose fence has passed.
pub struct FrameSets {
    layout: DescriptorSetLayout,
    buffers: Vec<Buffer>,
    sets: Vec<vk::DescriptorSet>,
    _pool: DescriptorPool,
}

impl FrameSets {
    /// One set and one host-visible uniform buffer per frame in flight.
    pub fn new(device: &Arc<Device>, frames_in_flight: usize) -> GpuResult<Self> {
        let layout = DescriptorSetLayout::new(
            device,
            &[BindingDesc::new(
                0,
                vk::DescriptorType::UNIFORM_BUFFER,
                vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
            )],
        )?;
        let pool = DescriptorPool::new(device, &[&layout], frames_in_flight as u32)?;
        let sets = pool.allocate(&layout, frames_in_flight)?;
        let mut buffers = Vec::with_capacity(frames_in_flight);
        for &set in &sets {
            let b = Buffer::new(
                device,
                &BufferDesc::host(
                    "frame uniforms",
                    std::mem::size_of::<FrameUniforms>() as u64,
                    vk::BufferUsageFlags::UNIFORM_BUFFER,
                ),
            )?;
            write_buffer(device, set, 0, vk::DescriptorType::UNIFORM_BUFFER, &b);
            buffers.push(b);
        }
        Ok(Self {
            layout,
            buffers,
            sets,
            _pool: pool,
        })
    }

    /// The set layout (binding 0, a uniform buffer read by the vertex and
    /// fragment stages): set 0 of every skinned pipeline.
    pub fn layout(&self) -> &DescriptorSetLayout {
        &self.layout
    }

    /// Writes this frame's uniforms. The caller has waited for the frame's
    /// previous submission (see `render::FramesInFlight`).
    pub fn write(&mut self, frame: usize, uniforms: &FrameUniforms) -> GpuResult<()> {
        let n = self.buffers.len();
        self.buffers
            .get_mut(frame)
            .ok_or_else(|| {
                crate::gpu::GpuError::InvalidArgument(format!(
                    "frame {frame} outside {n} frames in flight"
                ))
            })?
            .write(0, std::slice::from_ref(uniforms))
    }

    /// Frame `frame`'s set (taken modulo the frames in flight).
    pub fn set(&self, frame: usize) -> vk::DescriptorSet {
        self.sets[frame % self.sets.len()]
    }
}
