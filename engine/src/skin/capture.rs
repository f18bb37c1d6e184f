use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::gpu::{
    pipeline_barrier, vk, write_buffer, BindingDesc, Buffer, BufferBarrier, BufferDesc,
    DescriptorPool, DescriptorSetLayout, Device, GpuResult,
};

/// Host mirror of `CapturedVertex` in `shaders/skin/skin_main.glsl`
/// (std430, 32 bytes), checked against the compiled shader by a test.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CapturedVertex {
    /// Skinned position, w = 1.
    pub position: [f32; 4],
    /// Skinned, normalised normal, w = 0.
    pub normal: [f32; 4],
}

impl CapturedVertex {
    pub fn position(&self) -> Vec3 {
        Vec3::from_slice(&self.position[..3])
    }

    pub fn normal(&self) -> Vec3 {
        Vec3::from_slice(&self.normal[..3])
    }
}

/// Capture mode's storage buffer (set 2 of a pipeline built with
/// `SKIN_CAPTURE`): the vertex stage writes each skinned vertex there.
pub struct CaptureBuffer {
    layout: DescriptorSetLayout,
    buffer: Buffer,
    set: vk::DescriptorSet,
    vertices: usize,
    _pool: DescriptorPool,
}

impl CaptureBuffer {
    /// The set layout alone, for building a capture pipeline's layout.
    pub fn set_layout(device: &Arc<Device>) -> GpuResult<DescriptorSetLayout> {
        DescriptorSetLayout::new(
            device,
            &[BindingDesc::new(
                0,
                vk::DescriptorType::STORAGE_BUFFER,
                vk::ShaderStageFlags::VERTEX,
            )],
        )
    }

    pub fn new(device: &Arc<Device>, vertices: usize) -> GpuResult<Self> {
        let layout = Self::set_layout(device)?;
        let pool = DescriptorPool::new(device, &[&layout], 1)?;
        let set = pool.allocate(&layout, 1)?[0];
        let size = (vertices.max(1) * std::mem::size_of::<CapturedVertex>()) as u64;
        let buffer = Buffer::new(
            device,
            &BufferDesc::readback("skin capture", size, vk::BufferUsageFlags::STORAGE_BUFFER),
        )?;
        write_buffer(device, set, 0, vk::DescriptorType::STORAGE_BUFFER, &buffer);
        Ok(Self {
            layout,
            buffer,
            set,
            vertices,
            _pool: pool,
        })
    }

    pub fn layout(&self) -> &DescriptorSetLayout {
        &self.layout
    }

    pub fn set(&self) -> vk::DescriptorSet {
        self.set
    }

    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// Records, before the draw, the dependency on earlier captures into
    /// the same buffer (write after write across submissions).
    pub fn barrier_before_draw(&self, device: &Device, cmd: vk::CommandBuffer) {
        pipeline_barrier(
            device,
            cmd,
            &[],
            &[BufferBarrier {
                buffer: self.buffer.raw(),
                src_stage: vk::PipelineStageFlags2::VERTEX_SHADER,
                src_access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
                dst_stage: vk::PipelineStageFlags2::VERTEX_SHADER,
                dst_access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
            }],
        );
    }

    /// Records the dependency that makes the vertex stage's writes visible
    /// to the host (after the submission's fence).
    pub fn barrier_to_host(&self, device: &Device, cmd: vk::CommandBuffer) {
        pipeline_barrier(
            device,
            cmd,
            &[],
            &[BufferBarrier {
                buffer: self.buffer.raw(),
                src_stage: vk::PipelineStageFlags2::VERTEX_SHADER,
                src_access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
                dst_stage: vk::PipelineStageFlags2::HOST,
                dst_access: vk::AccessFlags2::HOST_READ,
            }],
        );
    }

    /// The captured vertices; call after the submission's fence.
    pub fn read(&self) -> GpuResult<Vec<CapturedVertex>> {
        self.buffer.read(0, self.vertices)
    }
}
