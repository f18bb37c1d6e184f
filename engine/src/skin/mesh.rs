use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use crate::gpu::{vk, Buffer, Device, GpuError, GpuResult};
use crate::mesh::SkinnedMesh;

/// Most influences per vertex the vertex streams carry (the 8-influence
/// permutation will add a second influence stream).
pub const MAX_INFLUENCES: usize = 4;

/// Vertex stream 0: what every path reads, in the bind pose.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BaseVertex {
    pub position: [f32; 3],
    pub normal: [f32; 3],
}

/// Vertex stream 1: four joint indices (palette entries) and their weights,
/// which sum to one; unused slots have weight zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InfluenceVertex {
    pub joints: [u16; 4],
    pub weights: [f32; 4],
}

/// A skinned mesh in device-local buffers: two vertex streams (locations
/// 0-1 and 2-3 of `skin_main.glsl`) and 32-bit indices.
pub struct GpuMesh {
    base: Buffer,
    influences: Buffer,
    indices: Buffer,
    index_count: u32,
    vertex_count: u32,
    /// Largest joint index + 1: the palette must hold at least this many.
    joints_used: usize,
}

impl GpuMesh {
    pub fn new(device: &Arc<Device>, mesh: &SkinnedMesh) -> GpuResult<Self> {
        let n = mesh.positions.len();
        let inf = &mesh.influences;
        let k = inf.per_vertex;
        if n == 0 || mesh.indices.is_empty() {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} has no vertices or no triangles",
                mesh.name
            )));
        }
        if k == 0 || k > MAX_INFLUENCES {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} has {k} influences per vertex; the vertex streams carry 1..={MAX_INFLUENCES}",
                mesh.name
            )));
        }
        if inf.joints.len() != n * k || inf.weights.len() != n * k {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?}: influence arrays do not match {n} vertices x {k}",
                mesh.name
            )));
        }
        if !mesh.normals.is_empty() && mesh.normals.len() != n {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?}: {} normals for {n} vertices",
                mesh.name,
                mesh.normals.len()
            )));
        }
        if let Some(&i) = mesh.indices.iter().find(|&&i| i as usize >= n) {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?}: index {i} outside {n} vertices",
                mesh.name
            )));
        }
        let base: Vec<BaseVertex> = (0..n)
            .map(|v| BaseVertex {
                position: mesh.positions[v].to_array(),
                normal: mesh
                    .normals
                    .get(v)
                    .map_or([0.0, 0.0, 1.0], |n| n.to_array()),
            })
            .collect();
        let influences: Vec<InfluenceVertex> = (0..n)
            .map(|v| {
                let mut out = InfluenceVertex::default();
                for s in 0..k {
                    out.joints[s] = inf.joints[v * k + s];
                    out.weights[s] = inf.weights[v * k + s];
                }
                out
            })
            .collect();
        let joints_used = inf
            .joints
            .iter()
            .map(|&j| j as usize + 1)
            .max()
            .unwrap_or(1);
        let vb = vk::BufferUsageFlags::VERTEX_BUFFER;
        Ok(Self {
            base: Buffer::device_local_with_data(
                device,
                "mesh base vertices",
                vb,
                bytemuck::cast_slice(&base),
            )?,
            influences: Buffer::device_local_with_data(
                device,
                "mesh influences",
                vb,
                bytemuck::cast_slice(&influences),
            )?,
            indices: Buffer::device_local_with_data(
                device,
                "mesh indices",
                vk::BufferUsageFlags::INDEX_BUFFER,
                bytemuck::cast_slice(&mesh.indices),
            )?,
            index_count: mesh.indices.len() as u32,
            vertex_count: n as u32,
            joints_used,
        })
    }

    pub fn vertex_count(&self) -> u32 {
        self.vertex_count
    }

    pub fn index_count(&self) -> u32 {
        self.index_count
    }

    pub fn joints_used(&self) -> usize {
        self.joints_used
    }

    /// The vertex input state matching `skin_main.glsl`.
    pub fn vertex_bindings() -> [vk::VertexInputBindingDescription; 2] {
        [
            vk::VertexInputBindingDescription::default()
                .binding(0)
                .stride(std::mem::size_of::<BaseVertex>() as u32)
                .input_rate(vk::VertexInputRate::VERTEX),
            vk::VertexInputBindingDescription::default()
                .binding(1)
                .stride(std::mem::size_of::<InfluenceVertex>() as u32)
                .input_rate(vk::VertexInputRate::VERTEX),
        ]
    }

    pub fn vertex_attributes() -> [vk::VertexInputAttributeDescription; 4] {
        [
            vk::VertexInputAttributeDescription::default()
                .location(0)
                .binding(0)
                .format(vk::Format::R32G32B32_SFLOAT)
                .offset(std::mem::offset_of!(BaseVertex, position) as u32),
            vk::VertexInputAttributeDescription::default()
                .location(1)
                .binding(0)
                .format(vk::Format::R32G32B32_SFLOAT)
                .offset(std::mem::offset_of!(BaseVertex, normal) as u32),
            vk::VertexInputAttributeDescription::default()
                .location(2)
                .binding(1)
                .format(vk::Format::R16G16B16A16_UINT)
                .offset(std::mem::offset_of!(InfluenceVertex, joints) as u32),
            vk::VertexInputAttributeDescription::default()
                .location(3)
                .binding(1)
                .format(vk::Format::R32G32B32A32_SFLOAT)
                .offset(std::mem::offset_of!(InfluenceVertex, weights) as u32),
        ]
    }

    /// Binds the streams and index buffer and draws `instances` copies.
    pub fn draw(&self, device: &Device, cmd: vk::CommandBuffer, instances: u32) {
        let d = device.raw();
        // SAFETY: `cmd` is recording inside a rendering scope with a
        // pipeline whose vertex input is `vertex_bindings/attributes`.
        unsafe {
            d.cmd_bind_vertex_buffers(cmd, 0, &[self.base.raw(), self.influences.raw()], &[0, 0]);
            d.cmd_bind_index_buffer(cmd, self.indices.raw(), 0, vk::IndexType::UINT32);
            d.cmd_draw_indexed(cmd, self.index_count, instances, 0, 0, 0);
        }
    }
}
