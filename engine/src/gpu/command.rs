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
    /// Creates a pool on the device's queue family. `transient`: buffers
    /// are short-lived. Buffers may always be reset one by one.
    pub fn new(device: &Arc<Device>, transient: bool) -> GpuResult<Self> {
        let mut flags = vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER;
        if transient {
            flags |= vk::CommandPoolCreateFlags::TRANSIENT;
        }
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(device.queue_family())
            .flags(flags);
        // SAFETY: `device` is a live device (the caller's `Arc`); `info` is a
        // local naming the device's own queue family and lives for the call.
        let raw = unsafe { device.raw().create_command_pool(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    /// Allocates `count` primary command buffers from the pool; they are
    /// freed when the pool is dropped.
    pub fn allocate(&self, count: u32) -> GpuResult<Vec<vk::CommandBuffer>> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.raw)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(count);
        // SAFETY: `self.raw` is a live pool created from `self.device`, which
        // `self` keeps alive; `&self` is not shared between threads (the pool
        // is documented as single-threaded), so the pool is externally
        // synchronised; `info` lives for the call.
        Ok(unsafe { self.device.raw().allocate_command_buffers(&info)? })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::CommandPool {
        self.raw
    }
}

impl Drop for CommandPool {
    fn drop(&mut self) {
        // SAFETY: the pool was created from `self.device` (kept alive by the
        // `Arc`) and is destroyed once, here. Its owners (`one_shot`,
        // `FramesInFlight`, `SkinCapture`) wait for the fences of the buffers
        // they submitted before dropping it, so none is pending. The one
        // exception is a wait that failed (`GpuError::Timeout` after
        // `FENCE_TIMEOUT_NS`: a hung GPU), after which a buffer may still be
        // pending; the engine reports the error rather than hang forever.
        unsafe { self.device.raw().destroy_command_pool(self.raw, None) };
    }
}

/// Begins a primary command buffer for one submission. `cmd` must be a
/// command buffer of `device` that is not pending (new, or reset after its
/// fence was waited on).
pub fn begin(device: &Device, cmd: vk::CommandBuffer) -> GpuResult<()> {
    let info =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    // SAFETY: `device.raw()` is live for the `&Device` borrow; `cmd` is not
    // pending per the documented contract: it is new or was reset by its
    // owner after its fence was waited on (and every engine pool is created
    // with RESET_COMMAND_BUFFER, which would also allow the implicit reset
    // of beginning); `info` lives for the call.
    unsafe { device.raw().begin_command_buffer(cmd, &info)? };
    Ok(())
}

/// Ends recording of `cmd`, a command buffer of `device` in the recording
/// state.
pub fn end(device: &Device, cmd: vk::CommandBuffer) -> GpuResult<()> {
    // SAFETY: `device.raw()` is live for the `&Device` borrow; `cmd` is in
    // the recording state (begun by `begin`) per the documented contract.
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
