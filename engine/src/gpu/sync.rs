use std::sync::Arc;

use ash::vk;

use super::{Device, GpuResult};

/// A fence, destroyed on drop.
pub struct Fence {
    device: Arc<Device>,
    raw: vk::Fence,
}

impl Fence {
    pub fn new(device: &Arc<Device>, signaled: bool) -> GpuResult<Self> {
        let flags = if signaled {
            vk::FenceCreateFlags::SIGNALED
        } else {
            vk::FenceCreateFlags::empty()
        };
        let info = vk::FenceCreateInfo::default().flags(flags);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.raw().create_fence(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    pub fn raw(&self) -> vk::Fence {
        self.raw
    }

    pub fn wait(&self) -> GpuResult<()> {
        self.device.wait_for_fences(&[self.raw])
    }

    pub fn reset(&self) -> GpuResult<()> {
        // SAFETY: the fence is not pending (callers wait first).
        unsafe { self.device.raw().reset_fences(&[self.raw])? };
        Ok(())
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        // SAFETY: owners wait on a submitted fence before dropping it.
        unsafe { self.device.raw().destroy_fence(self.raw, None) };
    }
}

/// A binary semaphore, destroyed on drop.
pub struct Semaphore {
    device: Arc<Device>,
    raw: vk::Semaphore,
}

impl Semaphore {
    pub fn new(device: &Arc<Device>) -> GpuResult<Self> {
        let info = vk::SemaphoreCreateInfo::default();
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.raw().create_semaphore(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    pub fn raw(&self) -> vk::Semaphore {
        self.raw
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: owners idle the device (or wait the frame's fence) first.
        unsafe { self.device.raw().destroy_semaphore(self.raw, None) };
    }
}
