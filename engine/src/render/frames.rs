use std::sync::Arc;

use crate::gpu::{begin, end, vk, CommandPool, Device, Fence, GpuError, GpuResult, Semaphore};

/// The engine's default: the CPU prepares one frame while the GPU draws
/// the previous one.
pub const DEFAULT_FRAMES_IN_FLIGHT: usize = 2;

struct Slot {
    cmd: vk::CommandBuffer,
    fence: Fence,
    image_available: Semaphore,
}

/// A frame being recorded: `index` picks the per-frame copies (palettes,
/// uniforms) that are safe to write now.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub index: usize,
    /// Frames begun so far, this one included.
    pub number: u64,
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
        // SAFETY: the fence says the buffer is no longer pending.
        unsafe {
            self.device
                .raw()
                .reset_command_buffer(slot.cmd, vk::CommandBufferResetFlags::empty())?
        };
        begin(&self.device, slot.cmd)?;
        self.recording = Some(index);
        self.number += 1;
        Ok(Frame {
            index,
            number: self.number,
            cmd: slot.cmd,
            image_available: slot.image_available.raw(),
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
        let waits: Vec<_> = wait
            .map(|(s, stage)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .stage_mask(stage)
            })
            .into_iter()
            .collect();
        let signals: Vec<_> = signal
            .map(|s| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            })
            .into_iter()
            .collect();
        let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(slot.cmd)];
        let submit = [vk::SubmitInfo2::default()
            .wait_semaphore_infos(&waits)
            .command_buffer_infos(&cmds)
            .signal_semaphore_infos(&signals)];
        slot.fence.reset()?;
        self.recording = None;
        self.next = (frame.index + 1) % self.slots.len();
        self.device.submit(&submit, slot.fence.raw())
    }

    /// Drops a begun frame without submitting it (the swapchain went out of
    /// date). The slot is reused next.
    pub fn abandon(&mut self, frame: &Frame) -> GpuResult<()> {
        self.check(frame)?;
        end(&self.device, frame.cmd)?;
        self.recording = None;
        self.number -= 1;
        Ok(())
    }

    /// Waits for the frame's submission (headless readback).
    pub fn wait(&self, frame: &Frame) -> GpuResult<()> {
        self.slots[frame.index].fence.wait()
    }

    pub fn wait_all(&self) -> GpuResult<()> {
        for s in &self.slots {
            s.fence.wait()?;
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
