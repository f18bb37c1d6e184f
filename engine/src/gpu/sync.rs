use std::sync::Arc;

use ash::vk;

use super::{Device, GpuResult};

/// A fence, destroyed on drop.
pub struct Fence {
    device: Arc<Device>,
    raw: vk::Fence,
}

impl Fence {
    /// Creates a fence, already signalled when `signaled` (so the first
    /// wait returns at once).
    pub fn new(device: &Arc<Device>, signaled: bool) -> GpuResult<Self> {
        let flags = if signaled {
            vk::FenceCreateFlags::SIGNALED
        } else {
            vk::FenceCreateFlags::empty()
        };
        let info = vk::FenceCreateInfo::default().flags(flags);
        // SAFETY: `device` is a live device (the caller's `Arc`); `info` is
        // a local that lives for the call.
        let raw = unsafe { device.raw().create_fence(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::Fence {
        self.raw
    }

    /// Waits until the fence is signalled, at most
    /// [`super::FENCE_TIMEOUT_NS`] ([`super::GpuError::Timeout`] after).
    pub fn wait(&self) -> GpuResult<()> {
        self.device.wait_for_fences(&[self.raw])
    }

    /// Unsignals the fence. The fence must not be pending: wait on a
    /// submitted fence first.
    pub fn reset(&self) -> GpuResult<()> {
        // SAFETY: `self.raw` is a live fence of `self.device` (kept alive by
        // the `Arc`); it is not pending, since callers wait on it before
        // resetting (the documented contract: `FramesInFlight::begin` waits
        // before `submit` resets; `SkinCapture::run`'s previous run waited or
        // failed before submitting). The exception is an earlier wait that
        // itself failed (`GpuError::Timeout`: a hung GPU), which the engine
        // reports rather than hang forever.
        unsafe { self.device.raw().reset_fences(&[self.raw])? };
        Ok(())
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        // SAFETY: the fence was created from `self.device` (kept alive by the
        // `Arc`) and is destroyed once, here. Owners wait on a submitted
        // fence before dropping it (`FramesInFlight`'s drop waits on every
        // slot; `submit_and_wait` waits before returning), so no queue
        // operation still refers to it, unless that wait failed
        // (`GpuError::Timeout`: a hung GPU), which the engine reports
        // rather than hang forever.
        unsafe { self.device.raw().destroy_fence(self.raw, None) };
    }
}

/// A binary semaphore, destroyed on drop.
pub struct Semaphore {
    device: Arc<Device>,
    raw: vk::Semaphore,
}

impl Semaphore {
    /// Creates an unsignalled binary semaphore.
    pub fn new(device: &Arc<Device>) -> GpuResult<Self> {
        let info = vk::SemaphoreCreateInfo::default();
        // SAFETY: `device` is a live device (the caller's `Arc`); `info` is
        // a local that lives for the call.
        let raw = unsafe { device.raw().create_semaphore(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::Semaphore {
        self.raw
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: the semaphore was created from `self.device` (kept alive by
        // the `Arc`) and is destroyed once, here. Its owners make sure no
        // queue operation still waits on or signals it: `FramesInFlight`'s
        // drop waits for every slot's fence, and `WindowTarget` idles the
        // device before dropping its render-finished semaphores.
        unsafe { self.device.raw().destroy_semaphore(self.raw, None) };
    }
}
