//! The skinned output of the compute and CPU stages: one buffer per frame
//! in flight holding positions then normals (then the motion regions, then,
//! once a mesh with tangents has been batched in the slot, the tangents:
//! vec4, 16 bytes a vertex) (device-local and written by
//! the compute dispatch, or host-visible and written by the CPU job), and
//! the plain pipeline's draw of it, one draw per instance.

use super::super::registry::Stage;
use super::{missing, Batch, SkinPath, Slot};
use crate::gpu::{vk, write_buffer_range, Buffer, BufferDesc, GpuResult};
use crate::skin::mesh::PreparedMesh;

impl SkinPath {
    pub(super) fn ensure_out(
        &mut self,
        frame: usize,
        need: usize,
        tangents: bool,
    ) -> GpuResult<()> {
        let stage = self.desc.stage;
        if stage == Stage::Vertex {
            return Ok(());
        }
        let d = self.device.clone();
        let slot = &mut self.slots[frame];
        if need <= slot.out_cap && slot.out.is_some() && (slot.out_tangents || !tangents) {
            return Ok(());
        }
        // Once there, the tangent region stays (the slot's later batches
        // of meshes with tangents need no new buffer).
        let tangents = tangents || slot.out_tangents;
        let need = need.max(slot.out_cap);
        // A multiple of 64 vertices: the normals region then starts on a
        // 256-byte boundary (any storage offset alignment).
        let cap = need.next_power_of_two().max(64).div_ceil(64) * 64;
        // Positions, normals and, with motion, previous positions and
        // previous normals (the CPU job's; the compute stage leaves them).
        let regions = if self.cfg.motion { 4 } else { 2 };
        let tangent_bytes = if tangents { cap * 16 } else { 0 };
        let size = (cap * 12 * regions + tangent_bytes) as u64;
        // Transfer source: a host may copy it (the compute route); the
        // host's extra usages (an acceleration-structure build's input).
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | self.cfg.output_usage;
        let mut buf = if stage == Stage::Compute {
            Buffer::new(
                &d,
                &BufferDesc::device_local(
                    "skinned vertices",
                    size,
                    usage | vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
            )?
        } else {
            Buffer::new(&d, &BufferDesc::host("skinned vertices", size, usage))?
        };
        if stage == Stage::Cpu {
            if let Some(old) = &mut slot.out {
                // Positions then normals, each region moved to its new place.
                let used = slot.out_used * 12;
                let old_cap = slot.out_cap * 12;
                let src = old.mapped_mut()?;
                for r in 0..regions {
                    let from = r * old_cap;
                    buf.write_bytes((r * cap * 12) as u64, &src[from..from + used])?;
                }
                if slot.out_tangents {
                    let from = regions * old_cap;
                    let used = slot.out_used * 16;
                    buf.write_bytes((regions * cap * 12) as u64, &src[from..from + used])?;
                }
            }
        } else {
            let ty = vk::DescriptorType::STORAGE_BUFFER;
            let half = (cap * 12) as u64;
            // The rounded-up capacity may pass maxStorageBufferRange; the
            // vertices written (`batch` checked them) stay within it.
            let range = half.min(u64::from(d.limits().max_storage_buffer_range));
            write_buffer_range(&d, slot.out_set, 0, ty, &buf, 0, range);
            write_buffer_range(&d, slot.out_set, 1, ty, &buf, half, range);
            // Previous positions (motion; else the positions again, unused).
            let prev = if regions > 2 { 2 * half } else { 0 };
            write_buffer_range(&d, slot.out_set, 2, ty, &buf, prev, range);
            // Tangents (TANGENTS; else the positions again, unused).
            let (at, range) = if tangents {
                let quarter = (cap * 16) as u64;
                let max = u64::from(d.limits().max_storage_buffer_range);
                (regions as u64 * half, quarter.min(max))
            } else {
                (0, range)
            };
            write_buffer_range(&d, slot.out_set, 3, ty, &buf, at, range);
        }
        slot.out = Some(buf);
        slot.out_cap = cap;
        slot.out_tangents = tangents;
        Ok(())
    }

    /// Records the plain pipeline's draws of `batch`'s skinned output (the
    /// pipeline, frame set and index buffer are bound by `record_draw`).
    pub(super) fn record_output(
        &self,
        cmd: vk::CommandBuffer,
        slot: &Slot,
        batch: &Batch,
        prepared: &PreparedMesh,
    ) -> GpuResult<()> {
        let d = self.device.raw();
        let out = slot.out.as_ref().ok_or_else(missing)?;
        let records = slot.records.as_ref().ok_or_else(missing)?;
        let half = (slot.out_cap * 12) as u64;
        let regions: u64 = if self.cfg.motion { 4 } else { 2 };
        let tangents = prepared.has_tangents && slot.out_tangents;
        let colors = prepared.colors.raw();
        // SAFETY: `cmd` is recording inside a rendering scope with the plain
        // pipeline bound; stream 3 is the instance records, streams 6 and 7
        // the prepared mesh's base vertices (texture coordinates) and vertex
        // colours, all live until the frame retires.
        unsafe {
            d.cmd_bind_vertex_buffers(cmd, 3, &[records.raw()], &[0]);
            d.cmd_bind_vertex_buffers(cmd, 6, &[prepared.base.raw(), colors], &[0, 0]);
        }
        for i in 0..batch.count {
            // Each instance's output region is bound at its first vertex,
            // so the static streams (6, 7) line up with it from vertex 0.
            let at = u64::from(batch.out_base + i * batch.vertex_count) * 12;
            // SAFETY: as above; streams 0 and 1 are the output's first two
            // regions and (motion) stream 5 the previous positions region,
            // each bound at instance `i`'s first output vertex; `batch` was
            // checked against this frame and mesh, so instance `i`'s output
            // vertices and record exist.
            unsafe {
                d.cmd_bind_vertex_buffers(cmd, 0, &[out.raw(), out.raw()], &[at, half + at]);
                if self.cfg.motion {
                    d.cmd_bind_vertex_buffers(cmd, 5, &[out.raw()], &[2 * half + at]);
                }
                if tangents {
                    // Stream 8: the tangent region, 16 bytes a vertex.
                    let t = regions * half + at / 12 * 16;
                    d.cmd_bind_vertex_buffers(cmd, 8, &[out.raw()], &[t]);
                }
                d.cmd_draw_indexed(cmd, prepared.index_count, 1, 0, 0, batch.first_record + i);
            }
        }
        Ok(())
    }
}
