//! A frame slot's host-visible buffers, grown on demand: the palettes (or
//! the pushed copy), the instance records and the morph headers and
//! entries; the stride of one instance's palette block.

use super::{missing, SkinPath};
use crate::gpu::{vk, Buffer, BufferDesc, GpuError, GpuResult};
use crate::skin::instance::InstanceRecord;
use crate::skin::mesh::PreparedMesh;
use crate::skin::registry::Stage;

impl SkinPath {
    /// Vec4s from one instance's palette block to the next: the mesh's
    /// block, twice with motion (current, then previous) on the instanced
    /// storages (on the windowed ones the block holds each partition's
    /// previous palette already); 0 on the CPU stage.
    pub(super) fn instance_stride(&self, prepared: &PreparedMesh) -> usize {
        match self.desc.stage {
            Stage::Cpu => 0,
            _ if self.cfg.motion && !self.desc.partitions() => 2 * prepared.instance_vec4s,
            _ => prepared.instance_vec4s,
        }
    }

    /// Whether this frame's palettes stay on the host (push constants).
    pub(super) fn is_push(&self) -> bool {
        self.desc.stage == Stage::Vertex && self.desc.storage.is_some_and(|s| s.in_push_constants())
    }

    pub(super) fn ensure_palette(&mut self, frame: usize, need: usize) -> GpuResult<()> {
        if self.desc.stage == Stage::Cpu {
            return Ok(());
        }
        let is_push = self.is_push();
        let window = self.window;
        let storage = self.desc.storage.ok_or_else(missing)?;
        let d = self.device.clone();
        let slot = &mut self.slots[frame];
        if need <= slot.palette_cap {
            return Ok(());
        }
        let mut cap = need.next_power_of_two().max(256);
        if !self.desc.partitions() {
            // The whole buffer is the descriptor's range: growth stops at
            // the storage's device limit (`batch` kept `need` within it).
            cap = cap.min(window.max(need));
        }
        if is_push {
            slot.push.resize(cap, [0.0; 4]);
            slot.palette_cap = cap;
            return Ok(());
        }
        let total = cap + storage.tail_vec4s(window);
        let bytes = (total * 16) as u64;
        let usage = match self.cfg.gpu_animation {
            true => storage.usage() | vk::BufferUsageFlags::STORAGE_BUFFER,
            false => storage.usage(),
        };
        let mut buf = Buffer::new(&d, &BufferDesc::host("palette storage", bytes, usage))?;
        // Batches already written this frame move along.
        if let Some(old) = &mut slot.palette {
            let used = slot.palette_used * 16;
            let src = old.mapped_mut()?;
            buf.write_bytes(0, &src[..used])?;
        }
        // The old view (if any) goes when the set no longer names it.
        slot.palette_view = storage.write_set(&d, slot.palette_set, &buf, window)?;
        let prefix = storage.push_prefix(&buf)?;
        if prefix.len() != storage.push_prefix_len() {
            return Err(GpuError::InvalidArgument(format!(
                "palette storage {}: a push prefix of {} bytes, {} declared",
                storage.name(),
                prefix.len(),
                storage.push_prefix_len()
            )));
        }
        slot.push_prefix = prefix;
        slot.palette = Some(buf);
        slot.palette_cap = cap;
        Ok(())
    }

    pub(super) fn ensure_records(&mut self, frame: usize, need: usize) -> GpuResult<()> {
        let d = self.device.clone();
        let slot = &mut self.slots[frame];
        if need <= slot.records_cap {
            return Ok(());
        }
        let cap = need.next_power_of_two().max(16);
        let size = (cap * std::mem::size_of::<InstanceRecord>()) as u64;
        let mut buf = Buffer::new(
            &d,
            &BufferDesc::host(
                "instance records",
                size,
                vk::BufferUsageFlags::VERTEX_BUFFER,
            ),
        )?;
        if let Some(old) = &mut slot.records {
            let used = slot.records_used * std::mem::size_of::<InstanceRecord>();
            let src = old.mapped_mut()?;
            buf.write_bytes(0, &src[..used])?;
        }
        slot.records = Some(buf);
        slot.records_cap = cap;
        Ok(())
    }

    /// Grows frame `frame`'s morph headers to `headers` instance records and
    /// its entries to `entries` (GPU stages), keeping what this frame wrote
    /// (every slot has both buffers from the start, so a mesh's set can
    /// always name them).
    pub(super) fn ensure_morph(
        &mut self,
        frame: usize,
        headers: usize,
        entries: usize,
    ) -> GpuResult<()> {
        if self.desc.stage == Stage::Cpu {
            return Ok(());
        }
        let d = self.device.clone();
        let max = (u64::from(d.limits().max_storage_buffer_range) / 8) as usize;
        let slot = &mut self.slots[frame];
        let mut changed = false;
        for (what, need, buf, cap, used) in [
            (
                "morph headers",
                headers,
                &mut slot.morph_headers,
                &mut slot.morph_headers_cap,
                slot.records_used,
            ),
            (
                "morph entries",
                entries,
                &mut slot.morph_entries,
                &mut slot.morph_entries_cap,
                slot.morph_entries_used,
            ),
        ] {
            if need <= *cap && buf.is_some() {
                continue;
            }
            let new_cap = need.next_power_of_two().max(16).min(max.max(need));
            let mut new = Buffer::new(
                &d,
                &BufferDesc::host(
                    what,
                    (new_cap * 8) as u64,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
            )?;
            if let Some(old) = buf {
                let src = old.mapped_mut()?;
                new.write_bytes(0, &src[..(used * 8).min(src.len())])?;
            }
            *buf = Some(new);
            *cap = new_cap;
            changed = true;
        }
        if changed {
            slot.morph_version = crate::skin::morph::next_version();
        }
        Ok(())
    }

    /// Frame slot `frame`'s morph set of `prepared` (which has targets),
    /// pointed at the slot's current buffers.
    pub(super) fn morph_set(
        &self,
        frame: usize,
        prepared: &PreparedMesh,
    ) -> GpuResult<vk::DescriptorSet> {
        let slot = self.slot(frame)?;
        let m = prepared.morph.as_ref().ok_or_else(missing)?;
        m.set_for(
            &self.device,
            self.id,
            frame,
            slot.morph_version,
            slot.morph_headers.as_ref().ok_or_else(missing)?,
            slot.morph_entries.as_ref().ok_or_else(missing)?,
        )
    }
}
