//! Reserving a batch: the frame's palette, record, output and morph-entry
//! space for `count` instances of one prepared mesh, checked against the
//! device's limits, and the writer that fills it.

use glam::{Vec3, Vec4};

use super::super::instance::InstanceRecord;
use super::super::mesh::PreparedMesh;
use super::super::morph::MorphEntry;
use super::super::registry::Stage;
use super::{cast_mut, missing, Batch, BatchWriter, PrevOut, SkinPath};
use crate::gpu::{GpuError, GpuResult};

impl SkinPath {
    /// Reserves `count` instances of `prepared` in frame `frame` and returns
    /// the writer that fills them. Errors name the limit when the frame's
    /// storage cannot hold them. On the GPU stages each instance of a mesh
    /// with morph targets reserves an entry per target (per pose, with
    /// motion): any weights fit; [`SkinPath::batch_active`] reserves fewer.
    pub fn batch<'a>(
        &'a mut self,
        frame: usize,
        prepared: &'a PreparedMesh,
        count: usize,
    ) -> GpuResult<BatchWriter<'a>> {
        self.batch_active(frame, prepared, count, usize::MAX)
    }

    /// [`SkinPath::batch`] reserving `active` morph entries per instance
    /// (and pose, with motion) instead of one per target: a mesh of 300
    /// targets whose instances each have at most 4 non-zero weights costs
    /// 4 entries an instance (`mesh::active_targets` counts them). An
    /// instance written with more non-zero weights than `active` is an
    /// error naming the reservation; `active` beyond the mesh's targets
    /// reserves its targets.
    pub fn batch_active<'a>(
        &'a mut self,
        frame: usize,
        prepared: &'a PreparedMesh,
        count: usize,
        active: usize,
    ) -> GpuResult<BatchWriter<'a>> {
        let slot = self.slot(frame)?;
        if prepared.path.name != self.desc.name {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} was prepared for path {}, not {}",
                prepared.name, prepared.path.name, self.desc.name
            )));
        }
        if slot.recorded.get() {
            return Err(GpuError::InvalidArgument(
                "a batch after this frame's recording began".into(),
            ));
        }
        if prepared
            .morph
            .as_ref()
            .is_some_and(|m| m.path_id() != self.id)
        {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} has morph targets and was prepared by another SkinPath of {}: \
                 only the path that prepared it draws it",
                prepared.name, self.desc.name
            )));
        }
        if count == 0 {
            return Err(GpuError::InvalidArgument(
                "a batch of zero instances".into(),
            ));
        }
        let vc = prepared.vertex_count as usize;
        let stage = self.desc.stage;
        let stride = self.instance_stride(prepared);
        let palette_base = slot.palette_used.div_ceil(self.align) * self.align;
        let palette_end = count
            .checked_mul(stride)
            .and_then(|b| b.checked_add(palette_base))
            .ok_or(GpuError::Limit {
                what: "palette vec4s in one frame",
                needed: u64::MAX,
                limit: self.window as u64,
            })?;
        if stage != Stage::Cpu && !self.desc.partitions() && palette_end > self.window {
            return Err(GpuError::Limit {
                what: "palette vec4s in one frame (instances x bones x vec4 per bone)",
                needed: palette_end as u64,
                limit: self.window as u64,
            });
        }
        let first_record = slot.records_used;
        let records_end = first_record + count;
        let out_base = slot.out_used;
        let out_end = if stage == Stage::Vertex {
            out_base
        } else {
            count
                .checked_mul(vc)
                .and_then(|n| n.checked_add(out_base))
                .filter(|&n| n <= i32::MAX as usize)
                .ok_or(GpuError::Limit {
                    what: "skinned output vertices in one frame",
                    needed: (count as u64).saturating_mul(vc as u64),
                    limit: i32::MAX as u64,
                })?
        };
        let storage_range = u64::from(self.device.limits().max_storage_buffer_range);
        // Each instance of a mesh with targets reserves an entry per target,
        // or per active target when the caller bounds them (its writer may
        // run on any thread); the shader reads the active ones only.
        let targets = match (stage, &prepared.morph) {
            (Stage::Cpu, _) | (_, None) => 0,
            (_, Some(m)) => m.targets.min(active),
        };
        if self.cfg.motion && targets > usize::from(u16::MAX) {
            return Err(GpuError::Limit {
                what: "morph targets of a mesh drawn with motion vectors",
                needed: targets as u64,
                limit: u64::from(u16::MAX),
            });
        }
        // With motion each instance reserves its previous entries too.
        let reserved = if self.cfg.motion {
            2 * targets
        } else {
            targets
        };
        let entries_base = slot.morph_entries_used;
        let entries_end = count
            .checked_mul(reserved)
            .and_then(|n| n.checked_add(entries_base))
            .filter(|&n| n as u64 * 8 <= storage_range && n <= u32::MAX as usize)
            .ok_or(GpuError::Limit {
                what: "morph entry bytes in one frame (instances x targets x 8; maxStorageBufferRange)",
                needed: (count as u64)
                    .saturating_mul(reserved as u64)
                    .saturating_add(entries_base as u64)
                    .saturating_mul(8),
                limit: storage_range,
            })?;
        let headers_end = if targets > 0 { records_end } else { 0 };
        if headers_end as u64 * 8 > storage_range {
            return Err(GpuError::Limit {
                what:
                    "morph header bytes in one frame (instance records x 8; maxStorageBufferRange)",
                needed: headers_end as u64 * 8,
                limit: storage_range,
            });
        }
        if stage == Stage::Compute {
            let limit = storage_range;
            let bytes = out_end as u64 * 12;
            if bytes > limit {
                return Err(GpuError::Limit {
                    what: "skinned positions bytes in one frame (maxStorageBufferRange)",
                    needed: bytes,
                    limit,
                });
            }
            let bytes = out_end as u64 * 16;
            if prepared.has_tangents && bytes > limit {
                return Err(GpuError::Limit {
                    what: "skinned tangent bytes in one frame (maxStorageBufferRange)",
                    needed: bytes,
                    limit,
                });
            }
        }
        self.ensure_palette(frame, palette_end)?;
        self.ensure_records(frame, records_end)?;
        self.ensure_out(frame, out_end, prepared.has_tangents)?;
        self.ensure_morph(frame, headers_end, entries_end)?;
        let is_push = self.is_push();
        let slot = &mut self.slots[frame];
        slot.palette_used = palette_end;
        slot.records_used = records_end;
        slot.out_used = out_end;
        slot.morph_entries_used = entries_end;
        let batch = Batch {
            slot: frame,
            generation: slot.generation,
            palette_base,
            stride,
            first_record: first_record as u32,
            count: count as u32,
            out_base: out_base as u32,
            vertex_count: vc as u32,
            stage,
        };
        let palettes: &mut [[f32; 4]] = if stage == Stage::Cpu {
            &mut []
        } else if is_push {
            &mut slot.push[palette_base..palette_end]
        } else {
            let buf = slot.palette.as_mut().ok_or_else(missing)?;
            &mut cast_mut::<[f32; 4]>(buf.mapped_mut()?)?[palette_base..palette_end]
        };
        let records = &mut cast_mut::<InstanceRecord>(
            slot.records.as_mut().ok_or_else(missing)?.mapped_mut()?,
        )?[first_record..records_end];
        let motion = self.cfg.motion;
        let mut tangents: &mut [Vec4] = &mut [];
        let (positions, normals, prev): (&mut [Vec3], &mut [Vec3], PrevOut) = if stage == Stage::Cpu
        {
            let cap = slot.out_cap;
            let regions = if motion { 4 } else { 2 };
            let bytes = slot.out.as_mut().ok_or_else(missing)?.mapped_mut()?;
            let (bytes, tangent_bytes) = bytes.split_at_mut((cap * 12 * regions).min(bytes.len()));
            if prepared.has_tangents {
                let all = cast_mut::<Vec4>(tangent_bytes)?;
                tangents = all.get_mut(out_base..out_end).ok_or_else(missing)?;
            }
            let all = cast_mut::<Vec3>(bytes)?;
            let (p, rest) = all.split_at_mut(cap);
            let (n, rest) = rest.split_at_mut(cap);
            let prev = if motion {
                let (pp, rest) = rest.split_at_mut(cap);
                let pn = rest.get_mut(..cap).ok_or_else(missing)?;
                (&mut pp[out_base..out_end], &mut pn[out_base..out_end])
            } else {
                (&mut [][..], &mut [][..])
            };
            (&mut p[out_base..out_end], &mut n[out_base..out_end], prev)
        } else {
            (&mut [], &mut [], (&mut [], &mut []))
        };
        let (morph_headers, morph_entries): (&mut [MorphEntry], &mut [MorphEntry]) = if targets > 0
        {
            (
                &mut cast_mut::<MorphEntry>(
                    slot.morph_headers
                        .as_mut()
                        .ok_or_else(missing)?
                        .mapped_mut()?,
                )?[first_record..records_end],
                &mut cast_mut::<MorphEntry>(
                    slot.morph_entries
                        .as_mut()
                        .ok_or_else(missing)?
                        .mapped_mut()?,
                )?[entries_base..entries_end],
            )
        } else {
            (&mut [], &mut [])
        };
        Ok(BatchWriter {
            batch,
            prepared,
            palettes,
            records,
            positions,
            normals,
            tangents,
            prev_positions: prev.0,
            prev_normals: prev.1,
            motion,
            morph_headers,
            morph_entries,
            entries_base: entries_base as u32,
            morph_slots: targets,
        })
    }
}
