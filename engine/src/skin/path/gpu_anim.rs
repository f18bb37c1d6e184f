//! What GPU animation (`skin::anim`) needs of a path: the frame's palette
//! buffer, where a batch's palettes lie, and a writer of the instance
//! records alone (the palettes are the GPU's to write).

use glam::Affine3A;

use super::super::instance::InstanceRecord;
use super::{missing, Batch, BatchWriter, SkinPath};
use crate::gpu::{Buffer, GpuError, GpuResult};

impl SkinPath {
    /// Frame `frame`'s palette buffer (made by the first batch of a GPU
    /// stage); an `Err` on the CPU stage and the push storage, which have
    /// none.
    pub fn palette_buffer(&self, frame: usize) -> GpuResult<&Buffer> {
        self.slot(frame)?.palette.as_ref().ok_or_else(|| {
            GpuError::InvalidArgument(format!(
                "path {}: frame {frame} has no palette buffer (no batch yet, or a storage without one)",
                self.desc.name
            ))
        })
    }
}

impl Batch {
    /// First vec4 of the batch's first palette block in the frame's
    /// palette buffer.
    pub fn palette_base(&self) -> usize {
        self.palette_base
    }

    /// vec4s from one instance's palette block to the next.
    pub fn palette_stride(&self) -> usize {
        self.stride
    }
}

impl BatchWriter<'_> {
    /// Writes every instance's record (model-to-world and tint from
    /// `place`) and, for a mesh with morph targets, an empty morph list,
    /// and leaves the palettes to the GPU.
    pub fn write_records(
        &mut self,
        mut place: impl FnMut(usize) -> (Affine3A, [f32; 4]),
    ) -> GpuResult<()> {
        if self.records.len() != self.batch.len() {
            return Err(missing());
        }
        for (i, r) in self.records.iter_mut().enumerate() {
            let (model, tint) = place(i);
            *r = InstanceRecord::new(&model, tint);
        }
        let m = self.prepared;
        let reserved = if self.motion { 2 } else { 1 } * m.morph_targets;
        for (i, h) in self.morph_headers.iter_mut().enumerate() {
            *h = [self.entries_base + (i * reserved) as u32, 0];
        }
        Ok(())
    }
}
