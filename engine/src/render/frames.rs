use std::sync::Arc;

use crate::gpu::{begin, end, vk, CommandPool, Device, Fence, GpuError, GpuResult, Semaphore};

/// The engine's default: the CPU prepares one frame while the GPU draws
/// the previous one.
pub const DEFAULT_FRAMES_IN_FLIGHT: usize = 2;

struct Slot {
    cmd: vk::CommandBuffer,
    fence: Fence,
    image_available: Semaphore,
    /// Device frame number of the slot's last submission (0: none yet).
    serial: u64,
    /// `serial` before the frame being recorded, restored if it is abandoned.
    previous: u64,
}

/// A frame being recorded: `index` picks the per-frame copies (palettes,
/// uniforms) that are safe to write now.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The slot, `0..count`: which per-frame copy to use.
    pub index: usize,
    /// Frames begun so far through this `FramesInFlight`, this one included.
    pub number: u64,
    /// The frame's number on the device's frame clock (see
    /// [`Device::begin_frame`]): what deferred destruction waits for.
    pub serial: u64,
    /// The slot's command buffer, begun and recording.
    pub cmd: vk::CommandBuffer,
    /// For swapchain targets: signalled when the acquired image is ready.
    pub image_available: vk::Semaphore,
}

/// Frames in flight: a command buffer, fence and acquire semaphore per
/// slot. [`FramesInFlight::begin`] waits for the slot's previous submission,
/// so everything indexed by `Frame::index` is free for the CPU to rewrite.
pub struct FramesInFlight {
    device: Arc<Device>,
    slots: Vec<Slot>,
    next: usize,
    number: u64,
    recording: Option<usize>,
    _pool: CommandPool,
}

impl FramesInFlight {
    /// `count` slots (at least one), each with a command buffer, a
    /// signalled fence and an acquire semaphore.
    pub fn new(device: &Arc<Device>, count: usize) -> GpuResult<Self> {
        if count == 0 {
            return Err(GpuError::InvalidArgument("zero frames in flight".into()));
        }
        let pool = CommandPool::new(device, false)?;
        let cmds = pool.allocate(count as u32)?;
        let mut slots = Vec::with_capacity(count);
        for cmd in cmds {
            slots.push(Slot {
                cmd,
                // Signalled: the first wait on each slot returns at once.
                fence: Fence::new(device, true)?,
                image_available: Semaphore::new(device)?,
                serial: 0,
                previous: 0,
            });
        }
        Ok(Self {
            device: device.clone(),
            slots,
            next: 0,
            number: 0,
            recording: None,
            _pool: pool,
        })
    }

    /// Number of slots.
    pub fn count(&self) -> usize {
        self.slots.len()
    }

    /// Waits until the next slot's previous submission has finished and
    /// begins its command buffer.
    pub fn begin(&mut self) -> GpuResult<Frame> {
        if self.recording.is_some() {
            return Err(GpuError::InvalidArgument(
                "a frame is already being recorded".into(),
            ));
        }
        let index = self.next;
        let slot = &self.slots[index];
        slot.fence.wait()?;
        // The slot's last frame, and everything submitted before it, is done:
        // objects dropped while it was in flight can go now.
        self.device.frame_completed(slot.serial);
        // SAFETY: `slot.cmd` was allocated from `self._pool` (created with
        // RESET_COMMAND_BUFFER, alive as long as `self`) on `self.device`;
        // it is not pending, since the slot's fence, which its last
        // submission signals, was just waited on; and `&mut self` means no
        // other thread records into it.
        unsafe {
            self.device
                .raw()
                .reset_command_buffer(slot.cmd, vk::CommandBufferResetFlags::empty())?
        };
        begin(&self.device, slot.cmd)?;
        let (cmd, image_available) = (slot.cmd, slot.image_available.raw());
        let serial = self.device.begin_frame();
        let slot = &mut self.slots[index];
        slot.previous = slot.serial;
        slot.serial = serial;
        self.recording = Some(index);
        self.number += 1;
        Ok(Frame {
            index,
            number: self.number,
            serial,
            cmd,
            image_available,
        })
    }

    /// Ends and submits the frame, waiting on `wait` (semaphore, stage) and
    /// signalling `signal`. The slot's fence is reset only here, so a frame
    /// abandoned before submission (see [`FramesInFlight::abandon`]) leaves
    /// it signalled and the next wait cannot hang.
    pub fn submit(
        &mut self,
        frame: &Frame,
        wait: Option<(vk::Semaphore, vk::PipelineStageFlags2)>,
        signal: Option<vk::Semaphore>,
    ) -> GpuResult<()> {
        self.check(frame)?;
        let slot = &self.slots[frame.index];
        end(&self.device, slot.cmd)?;
        let waits = wait.map(|(s, stage)| {
            [vk::SemaphoreSubmitInfo::default()
                .semaphore(s)
                .stage_mask(stage)]
        });
        let signals = signal.map(|s| {
            [vk::SemaphoreSubmitInfo::default()
                .semaphore(s)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)]
        });
        let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(slot.cmd)];
        let submit = [vk::SubmitInfo2::default()
            .wait_semaphore_infos(waits.as_ref().map_or(&[], |w| &w[..]))
            .command_buffer_infos(&cmds)
            .signal_semaphore_infos(signals.as_ref().map_or(&[], |s| &s[..]))];
        slot.fence.reset()?;
        self.recording = None;
        self.next = (frame.index + 1) % self.slots.len();
        self.device.submit(&submit, slot.fence.raw())?;
        self.device.frame_submitted(frame.serial);
        Ok(())
    }

    /// Drops a begun frame without submitting it (the swapchain went out of
    /// date). The slot is reused next.
    pub fn abandon(&mut self, frame: &Frame) -> GpuResult<()> {
        self.check(frame)?;
        end(&self.device, frame.cmd)?;
        // Nothing was submitted: the slot's fence still stands for its
        // previous frame, not this one.
        let slot = &mut self.slots[frame.index];
        slot.serial = slot.previous;
        self.recording = None;
        self.number -= 1;
        Ok(())
    }

    /// Waits for the frame's submission (headless readback).
    pub fn wait(&self, frame: &Frame) -> GpuResult<()> {
        self.slots[frame.index].fence.wait()?;
        self.device.frame_completed(frame.serial);
        Ok(())
    }

    /// Waits for every slot's last submission.
    pub fn wait_all(&self) -> GpuResult<()> {
        for s in &self.slots {
            s.fence.wait()?;
            self.device.frame_completed(s.serial);
        }
        Ok(())
    }

    fn check(&self, frame: &Frame) -> GpuResult<()> {
        if self.recording != Some(frame.index) {
            return Err(GpuError::InvalidArgument(format!(
                "frame {} is not the one being recorded",
                frame.index
            )));
        }
        Ok(())
    }
}

impl Drop for FramesInFlight {
    fn drop(&mut self) {
        // Command buffers and semaphores must not be pending when destroyed.
        if let Err(e) = self.wait_all() {
            log::error!("vkskin: waiting for frames in flight at teardown: {e}");
        }
    }
}
