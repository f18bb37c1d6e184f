//! The per-crowd switch: where a crowd's animation runs, and the GPU
//! records that make the GPU animate a [`Crowd`] exactly as the CPU does.

use super::record::AnimRecord;
use crate::anim::{clip_time, Crowd};

/// Where a crowd is animated: on the CPU (the crowd's jobs write the
/// palettes into the path's storage) or on the GPU (the host writes one
/// [`AnimRecord`] per instance, [`super::GpuAnimator`] the palettes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnimateOn {
    /// `BatchWriter::animate`.
    #[default]
    Cpu,
    /// `GpuAnimator::record`.
    Gpu,
}

impl AnimateOn {
    /// "cpu" or "gpu".
    pub fn name(self) -> &'static str {
        match self {
            AnimateOn::Cpu => "cpu",
            AnimateOn::Gpu => "gpu",
        }
    }

    /// The switch named `name` ("cpu" or "gpu").
    pub fn from_name(name: &str) -> Option<Self> {
        [AnimateOn::Cpu, AnimateOn::Gpu]
            .into_iter()
            .find(|a| a.name() == name)
    }
}

/// One record per instance of `crowd` at frame time `time`, written into
/// `out` (resized): each instance's clip time computed as the CPU crowd
/// computes it (in f64, looped there), held (speed 0), so the GPU samples
/// the very time the CPU samples.
pub fn crowd_records(crowd: &Crowd, time: f32, out: &mut Vec<AnimRecord>) {
    let clips = crowd.clips();
    out.clear();
    out.extend(crowd.instances().iter().map(|inst| {
        let duration = clips.get(inst.clip).map_or(0.0, |c| c.duration());
        AnimRecord::play(
            inst.clip as u32,
            clip_time(inst, time, duration),
            0.0,
            inst.mode,
        )
    }));
}
