use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::gpu::{
    pipeline_barrier, vk, write_buffer, BindingDesc, Buffer, BufferBarrier, BufferDesc,
    DescriptorPool, DescriptorSetLayout, Device, GpuError, GpuResult,
};

/// Host mirror of `CapturedVertex` in `shaders/skin/capture.glsl` (std430,
/// 64 bytes), checked against the compiled shader by a test.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CapturedVertex {
    /// Skinned position (model space), w = 1.
    pub position: [f32; 4],
    /// Skinned, normalised normal, w = 0.
    pub normal: [f32; 4],
    /// The previous frame's skinned position, `w` = 1 (motion paths;
    /// zero elsewhere).
    pub previous: [f32; 4],
    /// The skinned tangent, `w` its handedness as the mesh has it (meshes
    /// with tangents; zero elsewhere).
    pub tangent: [f32; 4],
}

impl CapturedVertex {
    /// The skinned position, model space (xyz of the `position` field).
    pub fn position(&self) -> Vec3 {
        Vec3::from_slice(&self.position[..3])
    }

    /// The skinned normal (xyz of the `normal` field).
    pub fn normal(&self) -> Vec3 {
        Vec3::from_slice(&self.normal[..3])
    }

    /// The previous frame's skinned position (motion paths).
    pub fn previous(&self) -> Vec3 {
        Vec3::from_slice(&self.previous[..3])
    }

    /// The skinned tangent, handedness in `w` (meshes with tangents).
    pub fn tangent(&self) -> glam::Vec4 {
        glam::Vec4::from_array(self.tangent)
    }
}

/// Host mirror of the header of `Capture` in `shaders/skin/capture.glsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CaptureHeader {
    /// Mesh vertices per instance.
    pub vertex_count: u32,
    /// First captured instance record (vertex stage) or output vertex
    /// (compute and CPU stages).
    pub first: u32,
    /// Captured vertices the buffer holds.
    pub capacity: u32,
    /// Padding to 16 bytes (std430); always zero.
    pub _pad: u32,
}

/// Capture mode's storage buffer (set 2 of a pipeline built with
/// `SKIN_CAPTURE`): the vertex stage also writes instance `i`'s skinned
/// vertex `v` to `i * vertex_count + v`. Host-visible; reused across
/// submissions.
pub struct CaptureBuffer {
    buffer: Buffer,
    set: vk::DescriptorSet,
    capacity: usize,
    header: CaptureHeader,
    _pool: DescriptorPool,
}

const HEADER: u64 = std::mem::size_of::<CaptureHeader>() as u64;

impl CaptureBuffer {
    /// The set layout, for building capture pipelines' layouts.
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

    /// Room for `capacity` captured vertices.
    pub fn new(
        device: &Arc<Device>,
        layout: &DescriptorSetLayout,
        capacity: usize,
    ) -> GpuResult<Self> {
        let pool = DescriptorPool::new(device, &[layout], 1)?;
        let set = pool
            .allocate(layout, 1)?
            .first()
            .copied()
            .ok_or_else(|| GpuError::InvalidArgument("no capture set allocated".into()))?;
        let capacity = capacity.max(1);
        let size = HEADER + (capacity * std::mem::size_of::<CapturedVertex>()) as u64;
        let buffer = Buffer::new(
            device,
            &BufferDesc::readback("skin capture", size, vk::BufferUsageFlags::STORAGE_BUFFER),
        )?;
        write_buffer(device, set, 0, vk::DescriptorType::STORAGE_BUFFER, &buffer);
        Ok(Self {
            buffer,
            set,
            capacity,
            header: CaptureHeader::default(),
            _pool: pool,
        })
    }

    /// Captured vertices the buffer holds (at least one); captures beyond it
    /// are dropped by the shader.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The descriptor set binding the buffer: set 2 of a capture pipeline
    /// (bound by [`super::SkinPath::record_draw`] when given this buffer).
    pub fn set(&self) -> vk::DescriptorSet {
        self.set
    }

    /// The host-visible storage buffer: the [`CaptureHeader`], then the
    /// captured vertices.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// Aims the next capture (no submission using the buffer may be
    /// pending): `vertex_count` per instance from `first`; clears old data.
    pub fn set_target(&mut self, vertex_count: u32, first: u32) -> GpuResult<()> {
        self.header = CaptureHeader {
            vertex_count,
            first,
            capacity: self.capacity as u32,
            _pad: 0,
        };
        let bytes = self.buffer.mapped_mut()?;
        bytes.fill(0);
        self.buffer.write(0, std::slice::from_ref(&self.header))
    }

    /// The header last written by [`CaptureBuffer::set_target`].
    pub fn header(&self) -> CaptureHeader {
        self.header
    }

    /// Records, before the draws, the dependency on the host's header write
    /// and on earlier captures (write after write across submissions).
    pub fn barrier_before_draw(&self, device: &Device, cmd: vk::CommandBuffer) {
        pipeline_barrier(
            device,
            cmd,
            &[],
            &[BufferBarrier {
                buffer: self.buffer.raw(),
                src_stage: vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::HOST,
                src_access: vk::AccessFlags2::SHADER_STORAGE_WRITE | vk::AccessFlags2::HOST_WRITE,
                dst_stage: vk::PipelineStageFlags2::VERTEX_SHADER,
                dst_access: vk::AccessFlags2::SHADER_STORAGE_WRITE
                    | vk::AccessFlags2::SHADER_STORAGE_READ,
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

    /// The first `count` captured vertices; call after the submission's fence.
    pub fn read(&self, count: usize) -> GpuResult<Vec<CapturedVertex>> {
        self.buffer.read(HEADER, count.min(self.capacity))
    }
}
