//! The vertex stage: the vertex shader skins as it draws
//! (`shaders/skin/vertex.glsl`); each partition's draws are recorded by the
//! path's storage ([`crate::skin::storage::Storage::record_part`]).

use super::{missing, Batch, SkinPath, Slot};
use crate::gpu::{vk, GpuResult};
use crate::skin::mesh::PreparedMesh;
use crate::skin::storage::PartDraw;

impl SkinPath {
    /// Records the vertex stage's draws of `batch`: the mesh's streams,
    /// then each partition through the storage (the pipeline, frame set and
    /// index buffer are bound by `record_draw`), with `layout` (the path's
    /// graphics layout, or a host's holding its set 1 and push range).
    pub(super) fn record_vertex(
        &self,
        cmd: vk::CommandBuffer,
        slot: &Slot,
        batch: &Batch,
        prepared: &PreparedMesh,
        layout: vk::PipelineLayout,
    ) -> GpuResult<()> {
        let d = self.device.raw();
        let storage = self.desc.storage.ok_or_else(missing)?;
        let records = slot.records.as_ref().ok_or_else(missing)?;
        let inf1 = prepared
            .influences1
            .as_ref()
            .unwrap_or(&prepared.influences0);
        // SAFETY: `cmd` is recording inside a rendering scope with this
        // path's vertex-stage pipeline bound (or a host's built with the
        // same vertex input, `HostVertexRoute`), whose bindings 0 to 3, 7 (4
        // in capture mode, 8 for a mesh with tangents) these are; the
        // buffers live until the frame retires.
        unsafe {
            d.cmd_bind_vertex_buffers(
                cmd,
                0,
                &[
                    prepared.base.raw(),
                    prepared.influences0.raw(),
                    inf1.raw(),
                    records.raw(),
                ],
                &[0, 0, 0, 0],
            );
            d.cmd_bind_vertex_buffers(cmd, 7, &[prepared.colors.raw()], &[0]);
            if self.cfg.capture {
                d.cmd_bind_vertex_buffers(cmd, 4, &[prepared.source.raw()], &[0]);
            }
            if let Some(t) = &prepared.tangents {
                d.cmd_bind_vertex_buffers(cmd, 8, &[t.raw()], &[0]);
            }
        }
        let vpb = self.desc.encoding.vec4s_per_bone();
        for part in &prepared.parts {
            storage.record_part(&PartDraw {
                device: &self.device,
                cmd,
                layout,
                palette_set: slot.palette_set,
                push_prefix: &slot.push_prefix,
                host_palettes: &slot.push,
                window: self.window,
                palette_base: batch.palette_base + part.palette_offset,
                stride: batch.stride,
                part_vec4s: part.bones.len() * vpb,
                previous_offset: part.previous_offset,
                count: batch.count,
                first_instance: batch.first_record,
                index_count: part.index_count,
                first_index: part.first_index,
                vertex_offset: part.vertex_offset,
            })?;
        }
        Ok(())
    }
}
