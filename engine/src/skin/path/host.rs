//! Skinning in a host's own shaders: the vertex route (the host's vertex
//! shader includes `shaders/skin/host/skin_vertex.glsl` through a header
//! generated here, and vkskin records the draws into the host's pipeline)
//! and the compute route (the compute or CPU stage's skinned output handed
//! to the host as buffer ranges). The contract: `docs/embedding.md`.

use super::input::vertex_input;
use super::{missing, Batch, SkinPath};
use crate::gpu::{vk, GpuError, GpuResult, ShaderSources};
use crate::skin::mesh::{BaseVertex, PreparedMesh};
use crate::skin::registry::Stage;

/// Where a host's vertex shader finds the generated header
/// ([`HostVertexRoute::header`]) in [`HostVertexRoute::sources`]:
/// `#include "skin/gen/host_skin.glsl"`.
pub const HOST_SKIN_HEADER: &str = "skin/gen/host_skin.glsl";
/// The documented include the header ends with (in the embedded shaders).
pub const HOST_SKIN_INCLUDE: &str = "skin/host/skin_vertex.glsl";

/// What a host's own vertex shader and pipeline need to skin one
/// permutation (influences, morph, tangents) of a vertex-stage path: the GLSL header,
/// the descriptor set layouts with their set numbers, the push-constant
/// range and the vertex input. The layouts belong to the [`SkinPath`] (valid
/// while it lives).
#[derive(Clone, Debug)]
pub struct HostVertexRoute {
    /// The path's name.
    pub path: &'static str,
    /// Influences per vertex (4 or 8) of the meshes this permutation draws.
    pub influences: u32,
    /// Whether it is the morph-target permutation.
    pub morph: bool,
    /// Whether it is the tangent permutation (meshes with tangents:
    /// `SkinnedVertex` has `tangent` and `world_tangent`).
    pub tangents: bool,
    /// The GLSL to place at [`HOST_SKIN_HEADER`]: the permutation's defines
    /// (`INFLUENCES`, `PALETTE_VEC4S`, `MORPH`, `TANGENTS`, and `MOTION` on
    /// a path with motion vectors: `skin_vertex_previous()`), then includes of the
    /// path's storage and encoding files and of [`HOST_SKIN_INCLUDE`].
    pub header: String,
    /// `(set number, layout)` of vkskin's sets the host's pipeline layout
    /// must hold at those numbers: 1 the palette (storages with a
    /// descriptor), 3 the morph targets (morph permutation). The other set
    /// numbers are the host's (an empty layout where it has none).
    pub set_layouts: Vec<(u32, vk::DescriptorSetLayout)>,
    /// The vertex-stage push-constant range vkskin pushes from offset 0
    /// (`None`: none); the host's own ranges start at or after its end.
    pub push_constants: Option<vk::PushConstantRange>,
    /// The vertex bindings vkskin binds (0 mesh base vertices, 1 and 2
    /// influences, 3 instance records, 7 vertex colours, 8 tangents for a
    /// mesh with them).
    pub vertex_bindings: Vec<vk::VertexInputBindingDescription>,
    /// The attributes the include reads (locations 0 to 10, 13, and 14
    /// in the tangent permutation).
    pub vertex_attributes: Vec<vk::VertexInputAttributeDescription>,
}

impl HostVertexRoute {
    /// The engine's embedded shaders with [`HostVertexRoute::header`] at
    /// [`HOST_SKIN_HEADER`]: add the host's own files with
    /// [`ShaderSources::with`] and compile (or hand the files to the host's
    /// own compiler: the include paths are relative to `shaders/`).
    pub fn sources(&self) -> ShaderSources {
        ShaderSources::embedded().with(HOST_SKIN_HEADER, self.header.clone())
    }
}

/// The skinned output of one batch on the compute or CPU stage, for a
/// host's own pipelines (any number of passes) or an acceleration-structure
/// build. Offsets are bytes into [`SkinnedOutput::buffer`]; instance `i` of
/// the batch (`0..instances`) holds `vertex_count` vertices from
/// [`SkinnedOutput::positions_at`] and [`SkinnedOutput::normals_at`]. The
/// buffer belongs to the path's frame slot: valid for that frame (until the
/// slot begins again).
#[derive(Clone, Copy, Debug)]
pub struct SkinnedOutput {
    /// The frame slot's output buffer (usage: vertex buffer, storage buffer
    /// on the compute stage, transfer source).
    pub buffer: vk::Buffer,
    /// The buffer's device address, where the path was built with
    /// `SHADER_DEVICE_ADDRESS` in `SkinPathConfig::output_usage` (an
    /// acceleration-structure build's `vertexData` is this plus
    /// [`SkinnedOutput::positions_at`]).
    pub buffer_address: Option<vk::DeviceAddress>,
    /// Model-space positions: `R32G32B32_SFLOAT`, tightly packed.
    pub position_format: vk::Format,
    /// Model-space unit normals: `R32G32B32_SFLOAT`, tightly packed.
    pub normal_format: vk::Format,
    /// Meshes with tangents: model-space unit tangents with the
    /// bitangent's sign in w, `R32G32B32A32_SFLOAT`, tightly packed
    /// ([`SkinnedOutput::tangent_stride`] bytes a vertex), instance `i` at
    /// [`SkinnedOutput::tangents_at`]; `None` for a mesh without.
    pub tangent_format: Option<vk::Format>,
    /// Bytes from one vertex's tangent to the next (16).
    pub tangent_stride: u64,
    /// The batch's instance 0, vertex 0 tangent (meshes with tangents).
    pub tangents_offset: Option<u64>,
    /// Bytes from one vertex to the next in the position and normal
    /// regions (12).
    pub stride: u64,
    /// The batch's instance 0, vertex 0 position.
    pub positions_offset: u64,
    /// The batch's instance 0, vertex 0 normal.
    pub normals_offset: u64,
    /// With motion vectors: instance 0, vertex 0 of the previous frame's
    /// positions (same layout).
    pub previous_positions_offset: Option<u64>,
    /// Vertices per instance (the mesh's vertices; the index buffer
    /// addresses `0..vertex_count`).
    pub vertex_count: u32,
    /// Instances in the batch.
    pub instances: u32,
    /// The batch's first instance record (`InstanceRecord`: model-to-world
    /// rows and tint) in [`SkinnedOutput::records`].
    pub first_record: u32,
    /// The frame slot's instance records (48 bytes each).
    pub records: vk::Buffer,
    /// The mesh's static base vertices (`BaseVertex`, 32 bytes each):
    /// texture coordinates `R32G32_SFLOAT` at [`SkinnedOutput::uv_offset`].
    pub base_vertices: vk::Buffer,
    /// Stride of [`SkinnedOutput::base_vertices`].
    pub base_stride: u64,
    /// Byte offset of the texture coordinates in a base vertex.
    pub uv_offset: u64,
    /// The mesh's vertex colours: `R32G32B32A32_SFLOAT`, 16 bytes each
    /// (white where the mesh has none).
    pub colors: vk::Buffer,
    /// The mesh's triangle list, `UINT32`, [`SkinnedOutput::index_count`]
    /// indices from offset 0.
    pub indices: vk::Buffer,
    /// Indices of the triangle list.
    pub index_count: u32,
    /// What wrote the output, for the host's barrier before it reads it:
    /// `COMPUTE_SHADER` / `SHADER_STORAGE_WRITE` on the compute stage
    /// (vkskin's own barrier already orders it before vertex-attribute
    /// reads; another consumer, such as `ACCELERATION_STRUCTURE_BUILD_KHR`,
    /// needs the host's barrier from these), `HOST` / `HOST_WRITE` on the
    /// CPU stage (made visible by the submission).
    pub src_stage: vk::PipelineStageFlags2,
    /// See [`SkinnedOutput::src_stage`].
    pub src_access: vk::AccessFlags2,
}

impl SkinnedOutput {
    /// Byte offset of instance `i`'s first position.
    pub fn positions_at(&self, i: u32) -> u64 {
        self.positions_offset + u64::from(i) * u64::from(self.vertex_count) * self.stride
    }

    /// Byte offset of instance `i`'s first normal.
    pub fn normals_at(&self, i: u32) -> u64 {
        self.normals_offset + u64::from(i) * u64::from(self.vertex_count) * self.stride
    }

    /// Byte offset of instance `i`'s first tangent (meshes with tangents).
    pub fn tangents_at(&self, i: u32) -> Option<u64> {
        self.tangents_offset
            .map(|t| t + u64::from(i) * u64::from(self.vertex_count) * self.tangent_stride)
    }
}

impl SkinPath {
    /// The vertex route of permutation (`influences`, `morph`) of this
    /// vertex-stage path (see [`HostVertexRoute`]), for meshes without
    /// tangents (or a host shader that ignores them). Errors on the compute
    /// and CPU stages (their route is [`SkinPath::skinned_output`]), on a
    /// capture path, and for influences other than 4 or 8.
    pub fn host_vertex_route(&self, influences: u32, morph: bool) -> GpuResult<HostVertexRoute> {
        self.host_vertex_route_with(influences, morph, false)
    }

    /// [`SkinPath::host_vertex_route`] of permutation (`influences`,
    /// `morph`, `tangents`): with `tangents` (meshes with tangents,
    /// [`PreparedMesh::has_tangents`]) the header defines `TANGENTS`,
    /// `SkinnedVertex` carries the skinned tangent, and the vertex input
    /// has stream 8 at location 14.
    pub fn host_vertex_route_with(
        &self,
        influences: u32,
        morph: bool,
        tangents: bool,
    ) -> GpuResult<HostVertexRoute> {
        if self.desc.stage != Stage::Vertex {
            return Err(GpuError::InvalidArgument(format!(
                "path {}: the vertex route needs a vertex-stage path (use the skinned output)",
                self.desc.name
            )));
        }
        if self.cfg.capture {
            return Err(GpuError::InvalidArgument(format!(
                "path {}: the vertex route has no capture permutation",
                self.desc.name
            )));
        }
        if influences != 4 && influences != 8 {
            return Err(GpuError::InvalidArgument(format!(
                "{influences} influences (4 or 8)"
            )));
        }
        let mut header = format!(
            "// Generated by vkskin for path {}: the vertex route's header.\n",
            self.desc.name
        );
        for (k, v) in self.defines(influences, morph, tangents) {
            header += &format!("#define {k} {v}\n");
        }
        let main = self.main_source(HOST_SKIN_INCLUDE, "");
        // main_source starts with the #version line, which is the host's.
        header += main.split_once('\n').map_or("", |(_, rest)| rest);
        let mut set_layouts = Vec::new();
        if let Some(l) = &self.palette_layout {
            set_layouts.push((1, l.raw()));
        }
        if morph {
            set_layouts.push((3, self.morph_layout.raw()));
        }
        let storage = self.desc.storage.ok_or_else(missing)?;
        let size = if storage.in_push_constants() {
            self.window * 16
        } else {
            storage.push_prefix_len() + std::mem::size_of::<crate::skin::DrawPush>()
        };
        let (vertex_bindings, vertex_attributes) =
            vertex_input(true, influences, false, false, tangents);
        Ok(HostVertexRoute {
            path: self.desc.name,
            influences,
            morph,
            tangents,
            header,
            set_layouts,
            push_constants: Some(
                vk::PushConstantRange::default()
                    .stage_flags(vk::ShaderStageFlags::VERTEX)
                    .size(size as u32),
            ),
            vertex_bindings,
            vertex_attributes,
        })
    }

    /// Records `batch`'s draws (instances of `prepared`) into the host's
    /// rendering scope with the host's pipeline bound, built with
    /// `layout` from [`SkinPath::host_vertex_route`] of the mesh's
    /// permutation: binds vkskin's sets (palette, morph) on `layout`, the
    /// vertex and index buffers, pushes the constants and draws each
    /// partition. The host's own sets stay as it bound them.
    pub fn record_host_vertex(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        batch: &Batch,
        prepared: &PreparedMesh,
        layout: vk::PipelineLayout,
    ) -> GpuResult<()> {
        if self.desc.stage != Stage::Vertex || self.cfg.capture {
            return Err(GpuError::InvalidArgument(format!(
                "path {}: the vertex route needs a vertex-stage path without capture",
                self.desc.name
            )));
        }
        self.check_batch(frame, batch, prepared)?;
        let slot = &self.slots[frame];
        slot.recorded.set(true);
        let morph_set = match prepared.morph {
            Some(_) => Some(self.morph_set(frame, prepared)?),
            None => None,
        };
        let d = self.device.raw();
        // SAFETY: `cmd` is recording inside the host's rendering scope with
        // its pipeline made from `layout`, which holds the morph set layout
        // at set 3 for a mesh with targets (the route's contract); the set
        // was pointed at this slot's buffers just above; the index buffer
        // is the prepared mesh's, alive while the mesh is.
        unsafe {
            if let Some(set) = morph_set {
                d.cmd_bind_descriptor_sets(
                    cmd,
                    vk::PipelineBindPoint::GRAPHICS,
                    layout,
                    3,
                    &[set],
                    &[],
                );
            }
            d.cmd_bind_index_buffer(cmd, prepared.indices.raw(), 0, vk::IndexType::UINT32);
        }
        self.record_vertex(cmd, slot, batch, prepared, layout)
    }

    /// The compute route: where `batch`'s skinned vertices are in frame
    /// slot `frame` (compute and CPU stages; see [`SkinnedOutput`]). On the
    /// compute stage they are written by [`SkinPath::prepass`].
    pub fn skinned_output(
        &self,
        frame: usize,
        batch: &Batch,
        prepared: &PreparedMesh,
    ) -> GpuResult<SkinnedOutput> {
        let (src_stage, src_access) = match self.desc.stage {
            Stage::Compute => (
                vk::PipelineStageFlags2::COMPUTE_SHADER,
                vk::AccessFlags2::SHADER_STORAGE_WRITE,
            ),
            Stage::Cpu => (vk::PipelineStageFlags2::HOST, vk::AccessFlags2::HOST_WRITE),
            Stage::Vertex => {
                return Err(GpuError::InvalidArgument(format!(
                    "path {}: the vertex stage keeps no skinned output (use the vertex route)",
                    self.desc.name
                )))
            }
        };
        self.check_batch(frame, batch, prepared)?;
        let slot = self.slot(frame)?;
        let out = slot.out.as_ref().ok_or_else(missing)?;
        let records = slot.records.as_ref().ok_or_else(missing)?;
        let region = slot.out_cap as u64 * 12;
        let first = u64::from(batch.out_base) * 12;
        let regions: u64 = if self.cfg.motion { 4 } else { 2 };
        let tangents = (prepared.has_tangents && slot.out_tangents)
            .then_some(regions * region + u64::from(batch.out_base) * 16);
        let buffer_address = if self
            .cfg
            .output_usage
            .contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
        {
            Some(out.device_address()?)
        } else {
            None
        };
        Ok(SkinnedOutput {
            buffer: out.raw(),
            buffer_address,
            position_format: vk::Format::R32G32B32_SFLOAT,
            normal_format: vk::Format::R32G32B32_SFLOAT,
            tangent_format: tangents.map(|_| vk::Format::R32G32B32A32_SFLOAT),
            tangent_stride: 16,
            tangents_offset: tangents,
            stride: 12,
            positions_offset: first,
            normals_offset: region + first,
            previous_positions_offset: self.cfg.motion.then_some(2 * region + first),
            vertex_count: batch.vertex_count,
            instances: batch.count,
            first_record: batch.first_record,
            records: records.raw(),
            base_vertices: prepared.base.raw(),
            base_stride: std::mem::size_of::<BaseVertex>() as u64,
            uv_offset: std::mem::offset_of!(BaseVertex, uv) as u64,
            colors: prepared.colors.raw(),
            indices: prepared.indices.raw(),
            index_count: prepared.index_count,
            src_stage,
            src_access,
        })
    }
}
