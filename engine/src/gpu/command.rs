use std::sync::Arc;

use ash::vk;

use super::{Device, Fence, GpuResult};

/// A command pool on the device's queue family, destroyed on drop (which
/// frees its command buffers). Not shared between threads.
pub struct CommandPool {
    device: Arc<Device>,
    raw: vk::CommandPool,
}

impl CommandPool {
    /// `transient`: buffers are short-lived. Buffers may always be reset
    /// one by one.
    pub fn new(device: &Arc<Device>, transient: bool) -> GpuResult<Self> {
        let mut flags = vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER;
        if transient {
            flags |= vk::CommandPoolCreateFlags::TRANSIENT;
        }
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(device.queue_family())
            .flags(flags);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.raw().create_command_pool(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    pub fn allocate(&self, count: u32) -> GpuResult<Vec<vk::CommandBuffer>> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.raw)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(count);
        // SAFETY: a live pool of this device.
        Ok(unsafe { self.device.raw().allocate_command_buffers(&info)? })
    }

    pub fn raw(&self) -> vk::CommandPool {
        self.raw
    }
}

impl Drop for CommandPool {
    fn drop(&mut self) {
        // SAFETY: owners wait for the fences of submitted buffers first.
        unsafe { self.device.raw().destroy_command_pool(self.raw, None) };
    }
}

/// Begins a primary command buffer for one submission.
pub fn begin(device: &Device, cmd: vk::CommandBuffer) -> GpuResult<()> {
    let info =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    // SAFETY: `cmd` is not pending (its fence was waited on or it is new).
    unsafe { device.raw().begin_command_buffer(cmd, &info)? };
    Ok(())
}

pub fn end(device: &Device, cmd: vk::CommandBuffer) -> GpuResult<()> {
    // SAFETY: `cmd` is recording.
    unsafe { device.raw().end_command_buffer(cmd)? };
    Ok(())
}

/// Records `record` into a fresh command buffer, submits it with a fence
/// and waits for it: for uploads, readbacks and tests, not per frame work.
pub fn one_shot<R>(
    device: &Arc<Device>,
    record: impl FnOnce(vk::CommandBuffer) -> GpuResult<R>,
) -> GpuResult<R> {
    let pool = CommandPool::new(device, true)?;
    let cmd = pool.allocate(1)?[0];
    begin(device, cmd)?;
    let out = record(cmd);
    // End even on error so the pool is destroyed in a consistent state.
    let ended = end(device, cmd);
    let out = out?;
    ended?;
    let fence = Fence::new(device, false)?;
    // The fence covers every earlier submission, frames included.
    let before = device.submitted_frame();
    submit_and_wait(device, cmd, &fence)?;
    device.frame_completed(before);
    Ok(out)
}

/// Submits one command buffer with `fence` (unsignalled) and waits on it.
pub fn submit_and_wait(device: &Device, cmd: vk::CommandBuffer, fence: &Fence) -> GpuResult<()> {
    let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
    let submit = [vk::SubmitInfo2::default().command_buffer_infos(&cmds)];
    device.submit(&submit, fence.raw())?;
    device.wait_for_fences(&[fence.raw()])
}
