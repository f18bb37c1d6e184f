//! [`HostFrames`]: vkskin's frame clock for hosts that own their frames.

use std::sync::Arc;

use crate::gpu::{Device, GpuError, GpuResult};

/// vkskin's frame clock, driven by a host that owns its frames: it lets
/// deferred destruction know when the objects a frame used may go.
/// [`super::Renderer`] keeps one; a host below the renderer (driving
/// [`crate::skin::SkinPath`] itself) calls it directly.
pub struct HostFrames {
    device: Arc<Device>,
    /// The frame number each slot last began (0: never).
    slots: Vec<u64>,
}

impl HostFrames {
    /// A clock for `frames_in_flight` slots (at least one).
    pub fn new(device: &Arc<Device>, frames_in_flight: usize) -> GpuResult<Self> {
        if frames_in_flight == 0 {
            return Err(GpuError::InvalidArgument(
                "zero frames in flight".to_string(),
            ));
        }
        Ok(Self {
            device: device.clone(),
            slots: vec![0; frames_in_flight],
        })
    }

    /// Starts slot `slot`: the host has waited for the slot's previous
    /// submission, so that frame (and every frame before it) is complete.
    pub fn begin(&mut self, slot: usize) -> GpuResult<()> {
        let count = self.slots.len();
        let last = self
            .slots
            .get_mut(slot)
            .ok_or_else(|| GpuError::InvalidArgument(format!("frame slot {slot} of {count}")))?;
        if *last != 0 {
            self.device.frame_completed(*last);
        }
        *last = self.device.begin_frame();
        Ok(())
    }

    /// The host submitted slot `slot`'s commands.
    pub fn submitted(&self, slot: usize) -> GpuResult<()> {
        let n = *self.slots.get(slot).ok_or_else(|| {
            GpuError::InvalidArgument(format!("frame slot {slot} of {}", self.slots.len()))
        })?;
        self.device.frame_submitted(n);
        Ok(())
    }
}
