//! Embedding vkskin in a host's Vulkan renderer.
//!
//! The host program owns the Vulkan instance, device, queue, command
//! buffers, render targets and their synchronisation; vkskin animates and
//! records skinned draws into the host's command buffer. The contract:
//!
//! **Handles the host passes.** Its `ash::Entry` and `ash::Instance`
//! ([`Instance::from_host`]) and a [`HostDevice`]: physical device, device,
//! one graphics + compute queue and its family, and the optional features
//! it enabled ([`Device::from_host`]). The device is Vulkan 1.3 with
//! `dynamicRendering` and `synchronization2` enabled (`maintenance4` too
//! for the compute stage). Per path: the colour and depth attachment
//! formats it will draw into ([`crate::skin::SkinPathConfig::new`]).
//!
//! **Memory.** vkskin allocates its own buffers (meshes, palettes, instance
//! records, skinned vertices, uniforms) and pipelines on the host's device
//! through its own gpu-allocator; it never touches the host's memory.
//! Dropping vkskin's objects is deferred until the frames that used them
//! have retired (see [`HostFrames`]); dropping the last of them waits for
//! the device to idle once (teardown, never per frame). vkskin never
//! destroys the host's instance or device.
//!
//! **Frames in flight.** The host declares how many with
//! `SkinPathConfig::frames_in_flight` and [`crate::skin::FrameSets::new`];
//! each frame uses one slot `0..frames_in_flight` whose previous submission
//! the host has already waited for (its own fence). It tells vkskin's
//! frame clock with [`HostFrames::begin`] and [`HostFrames::submitted`].
//!
//! **Per frame, in the host's command buffer:**
//! 1. `HostFrames::begin(slot)`, `SkinPath::begin_frame(slot)`, then per
//!    mesh `SkinPath::batch` and its writer (`write_all`, or
//!    `BatchWriter::animate` for a crowd): palettes are written straight
//!    into vkskin's host-visible, coherent memory before the host submits,
//!    so the submission makes them visible (no barrier).
//!    `FrameSets::write(slot, ...)` sets the view-projection and light.
//! 2. Outside any rendering scope: `SkinPath::prepass` (GPU timer start;
//!    on the compute stage the skinning dispatch and its barriers, on
//!    vkskin's own buffers only).
//! 3. Inside the host's dynamic-rendering scope (`vkCmdBeginRendering`, with
//!    the attachment formats given above, viewport and scissor set by the
//!    host, since vkskin's pipelines take both as dynamic state):
//!    `SkinPath::record_draw` per batch, as many passes as the host likes.
//! 4. After the scope: `SkinPath::finish` (GPU timer end).
//!
//! **What vkskin binds and leaves bound:** its graphics pipeline, descriptor
//! sets 0 to 2 of its pipeline layouts, vertex buffers 0 to 4, its index
//! buffer and push constants; on the compute stage in `prepass`, its compute
//! pipeline and sets. The host rebinds its own state after vkskin's draws.
//! vkskin does not change viewport, scissor or any other dynamic state.
//!
//! **Barriers.** The host owns its attachments: their layout transitions and
//! the barriers before and after its rendering scope. vkskin records only
//! the barriers between its own compute writes and vertex reads (in
//! `prepass`) and, in capture mode, around its capture buffer.
//!
//! **Submission.** vkskin never submits or waits per frame: the host
//! submits its command buffer and waits on its fences. vkskin submits (and
//! waits) only when loading: `SkinPath::prepare` uploads a mesh, so do not
//! use the queue from another thread meanwhile.
//!
//! `samples/embed` is a whole host in raw `ash` following this contract.

use std::sync::Arc;

pub use crate::gpu::{Device, EnabledFeatures, HostDevice, Instance};
use crate::gpu::{GpuError, GpuResult};

/// vkskin's frame clock, driven by a host that owns its frames: it lets
/// deferred destruction know when the objects a frame used may go.
pub struct HostFrames {
    device: Arc<Device>,
    /// The frame number each slot last began (0: never).
    slots: Vec<u64>,
}

impl HostFrames {
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
