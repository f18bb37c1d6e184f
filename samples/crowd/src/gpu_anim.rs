//! `--anim gpu`: the crowd animated by compute passes. The clips go to
//! the GPU once; each frame the host writes one 32-byte record per
//! instance (its clip and clip time, as the CPU crowd computes them) and
//! the passes write the palettes straight into the path's storage.

use std::sync::Arc;

use vkskin::anim::Crowd;
use vkskin::gpu::{vk, Device};
use vkskin::skin::anim::{crowd_records, AnimRecord, GpuAnimator, GpuClipStore};
use vkskin::skin::{Batch, PreparedMesh, SkinPath};

/// The GPU side of a crowd: an animator per mesh drawn, the frame's records.
pub struct GpuCrowd {
    animators: Vec<GpuAnimator>,
    records: Vec<AnimRecord>,
}

impl GpuCrowd {
    /// Uploads `crowd`'s clips and builds an animator for each mesh.
    pub fn new(
        device: &Arc<Device>,
        crowd: &Crowd,
        path: &SkinPath,
        meshes: &[PreparedMesh],
    ) -> Result<Self, String> {
        let store = Arc::new(
            GpuClipStore::new(device, crowd.skeleton(), crowd.clips())
                .map_err(|e| format!("crowd: GPU clip store: {e}"))?,
        );
        let animators = meshes
            .iter()
            .map(|m| GpuAnimator::new(&store, path, m, crowd.skin()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("crowd: {e}"))?;
        Ok(Self {
            animators,
            records: Vec::with_capacity(crowd.len()),
        })
    }

    /// Writes the frame's records (the crowd at `t`); returns their bytes.
    pub fn update(&mut self, frame: usize, crowd: &Crowd, t: f32) -> Result<usize, String> {
        for a in &mut self.animators {
            a.begin_frame(frame).map_err(|e| e.to_string())?;
        }
        crowd_records(crowd, t, &mut self.records);
        Ok(self.records.len() * std::mem::size_of::<AnimRecord>())
    }

    /// Records every mesh's animation pass (before the path's prepass).
    pub fn record(
        &mut self,
        cmd: vk::CommandBuffer,
        path: &SkinPath,
        frame: usize,
        batches: &[Batch],
    ) -> Result<(), String> {
        for (a, b) in self.animators.iter_mut().zip(batches) {
            a.record(cmd, path, frame, b, &self.records, 0.0)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}
