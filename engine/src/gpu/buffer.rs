use std::sync::Arc;

use ash::vk;
use bytemuck::Pod;
use gpu_allocator::vulkan::Allocation;
pub use gpu_allocator::MemoryLocation;

use super::retire::Garbage;
use super::{one_shot, Device, GpuError, GpuResult};

/// A buffer to create. `GpuOnly` memory is device-local (fill it with
/// [`Buffer::device_local_with_data`]); `CpuToGpu` and `GpuToCpu` memory is
/// host-visible and stays mapped for the buffer's life.
#[derive(Clone, Debug)]
pub struct BufferDesc<'a> {
    /// A name for the allocator's reports and error messages.
    pub name: &'a str,
    /// Size in bytes; must not be zero.
    pub size: u64,
    /// What the buffer will be used for (transfer, vertex, storage...).
    pub usage: vk::BufferUsageFlags,
    /// Which memory the buffer lives in.
    pub location: MemoryLocation,
}

impl<'a> BufferDesc<'a> {
    /// A host-visible, persistently mapped buffer the CPU writes and the GPU
    /// reads (`CpuToGpu`): uploads, per-frame uniforms and palettes.
    pub fn host(name: &'a str, size: u64, usage: vk::BufferUsageFlags) -> Self {
        Self {
            name,
            size,
            usage,
            location: MemoryLocation::CpuToGpu,
        }
    }

    /// A host-visible, persistently mapped buffer the GPU writes and the CPU
    /// reads (`GpuToCpu`): readbacks and captures.
    pub fn readback(name: &'a str, size: u64, usage: vk::BufferUsageFlags) -> Self {
        Self {
            name,
            size,
            usage,
            location: MemoryLocation::GpuToCpu,
        }
    }

    /// A device-local buffer (`GpuOnly`), not mapped: fill it by a
    /// transfer, e.g. [`Buffer::device_local_with_data`].
    pub fn device_local(name: &'a str, size: u64, usage: vk::BufferUsageFlags) -> Self {
        Self {
            name,
            size,
            usage,
            location: MemoryLocation::GpuOnly,
        }
    }
}

/// A buffer and its memory (exclusive to the one queue family), freed on
/// drop once the frames that may use it have retired.
pub struct Buffer {
    device: Arc<Device>,
    raw: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    usage: vk::BufferUsageFlags,
    name: String,
}

impl Buffer {
    /// Creates the buffer and binds fresh memory from the device's
    /// allocator. A zero size is [`GpuError::InvalidArgument`].
    pub fn new(device: &Arc<Device>, desc: &BufferDesc<'_>) -> GpuResult<Self> {
        if desc.size == 0 {
            return Err(GpuError::InvalidArgument(format!(
                "buffer {:?} has size zero",
                desc.name
            )));
        }
        let info = vk::BufferCreateInfo::default()
            .size(desc.size)
            .usage(desc.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let d = device.raw();
        // SAFETY: `d` is the live device of the caller's `Arc`; `info` is a
        // local with a non-zero size (checked above), alive for the call.
        let raw = unsafe { d.create_buffer(&info, None)? };
        // SAFETY: `raw` was just created from `d` and is still alive.
        let requirements = unsafe { d.get_buffer_memory_requirements(raw) };
        let allocation = match device.allocate(desc.name, requirements, desc.location, true) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: `raw` was created from `d` above, has no memory
                // bound and was never handed out or used: destroyed once.
                unsafe { d.destroy_buffer(raw, None) };
                return Err(e);
            }
        };
        if let Err(e) =
            // SAFETY: `raw` is a live buffer of `d` with no memory bound yet;
            // `allocation` was made by this device's allocator for `raw`'s
            // own requirements, so its memory type, size and offset
            // alignment fit.
            unsafe { d.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) }
        {
            // SAFETY: as above: `raw` is unused and destroyed once; its
            // allocation is returned to the allocator separately.
            unsafe { d.destroy_buffer(raw, None) };
            device.free(allocation);
            return Err(e.into());
        }
        Ok(Self {
            device: device.clone(),
            raw,
            allocation: Some(allocation),
            size: desc.size,
            usage: desc.usage,
            name: desc.name.to_owned(),
        })
    }

    /// A device-local buffer holding `data`, uploaded through a staging
    /// buffer and a one-shot submission that has finished on return.
    pub fn device_local_with_data(
        device: &Arc<Device>,
        name: &str,
        usage: vk::BufferUsageFlags,
        data: &[u8],
    ) -> GpuResult<Self> {
        let size = data.len() as u64;
        let mut staging = Self::new(
            device,
            &BufferDesc::host(name, size, vk::BufferUsageFlags::TRANSFER_SRC),
        )?;
        staging.write_bytes(0, data)?;
        let buffer = Self::new(
            device,
            &BufferDesc::device_local(name, size, usage | vk::BufferUsageFlags::TRANSFER_DST),
        )?;
        one_shot(device, |cmd| {
            let region = [vk::BufferCopy::default().size(size)];
            // SAFETY: `cmd` is the one-shot buffer `one_shot` began on
            // `device`; `staging` and `buffer` are live buffers of `device`
            // that outlive the submission (`one_shot` waits for its fence
            // before returning, and both are dropped only after that); both
            // are `size` bytes, so the region is in bounds, and they were
            // created with TRANSFER_SRC / TRANSFER_DST.
            unsafe {
                device
                    .raw()
                    .cmd_copy_buffer(cmd, staging.raw, buffer.raw, &region)
            };
            Ok(())
        })?;
        // The fence wait in one_shot orders the copy before any later
        // submission, which is all a later reader needs.
        Ok(buffer)
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::Buffer {
        self.raw
    }

    /// Size in bytes, as requested (the allocation may be larger).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The buffer's 64-bit device address, for shaders that reach it
    /// through a buffer reference. The buffer must have been made with
    /// `SHADER_DEVICE_ADDRESS` usage on a device with `bufferDeviceAddress`
    /// enabled; otherwise an error naming what is missing.
    pub fn device_address(&self) -> GpuResult<vk::DeviceAddress> {
        if !self.device.features().buffer_device_address {
            return Err(GpuError::InvalidArgument(format!(
                "buffer {:?}: a device address needs bufferDeviceAddress, which the device did not enable",
                self.name
            )));
        }
        if !self
            .usage
            .contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
        {
            return Err(GpuError::InvalidArgument(format!(
                "buffer {:?} was not made with SHADER_DEVICE_ADDRESS usage",
                self.name
            )));
        }
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.raw);
        // SAFETY: the buffer is live and owned by this device, made with
        // SHADER_DEVICE_ADDRESS usage, and the device enabled
        // bufferDeviceAddress (both checked above).
        Ok(unsafe { self.device.raw().get_buffer_device_address(&info) })
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The persistently mapped bytes, for filling in place (host-visible
    /// buffers only). `&mut self`: no other view of the mapping exists
    /// meanwhile.
    pub fn mapped_mut(&mut self) -> GpuResult<&mut [u8]> {
        let size = self.size as usize;
        match self.allocation.as_mut().and_then(|a| a.mapped_slice_mut()) {
            Some(s) => Ok(&mut s[..size]),
            // Built only on failure: the per-frame success path allocates nothing.
            None => Err(GpuError::InvalidArgument(format!(
                "buffer {:?} is not host-visible",
                self.name
            ))),
        }
    }

    fn mapped_ptr(&self) -> GpuResult<*mut u8> {
        self.allocation
            .as_ref()
            .and_then(|a| a.mapped_ptr())
            .map(|p| p.as_ptr() as *mut u8)
            .ok_or_else(|| self.not_mapped())
    }

    fn check_range(&self, offset: u64, len: usize) -> GpuResult<()> {
        offset
            .checked_add(len as u64)
            .filter(|&e| e <= self.size)
            .map(|_| ())
            .ok_or_else(|| {
                GpuError::InvalidArgument(format!(
                    "access of {len} bytes at {offset} outside buffer {:?} of {} bytes",
                    self.name, self.size
                ))
            })
    }

    fn not_mapped(&self) -> GpuError {
        GpuError::InvalidArgument(format!("buffer {:?} is not host-visible", self.name))
    }

    /// Copies `data` into the mapping at `offset`. The caller keeps the GPU
    /// from reading the range meanwhile (per-frame buffers, fences).
    pub fn write_bytes(&mut self, offset: u64, data: &[u8]) -> GpuResult<()> {
        let ptr = self.mapped_ptr()?;
        self.check_range(offset, data.len())?;
        // SAFETY: the range lies inside the mapping (checked above), which is
        // host-coherent (gpu-allocator's CpuToGpu / GpuToCpu) and live for the
        // buffer's life; `&mut self` excludes any other access from Rust.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.add(offset as usize), data.len())
        };
        Ok(())
    }

    /// Copies `data` (as bytes) into the mapping at byte `offset`; see
    /// [`Buffer::write_bytes`].
    pub fn write<T: Pod>(&mut self, offset: u64, data: &[T]) -> GpuResult<()> {
        self.write_bytes(offset, bytemuck::cast_slice(data))
    }

    /// Copies `out.len()` bytes out of the mapping at `offset` (writes need
    /// `&mut self`, so none runs meanwhile).
    pub fn read_bytes(&self, offset: u64, out: &mut [u8]) -> GpuResult<()> {
        let ptr = self.mapped_ptr()?;
        self.check_range(offset, out.len())?;
        // SAFETY: `ptr` is the start of the live mapping (host-visible,
        // host-coherent memory mapped for the buffer's life) and
        // `offset..offset + out.len()` lies inside its `self.size` bytes
        // (checked above); `out` is a distinct Rust slice, so the ranges do
        // not overlap. Writes need `&mut self`, so none races this read from
        // Rust; the caller orders GPU writes before it (a fence wait).
        unsafe {
            std::ptr::copy_nonoverlapping(ptr.add(offset as usize), out.as_mut_ptr(), out.len())
        };
        Ok(())
    }

    /// Reads `count` values of `T` from the mapping (host-visible buffers
    /// only), copying, so the mapping's alignment does not matter.
    pub fn read<T: Pod>(&self, offset: u64, count: usize) -> GpuResult<Vec<T>> {
        let mut out = vec![T::zeroed(); count];
        self.read_bytes(offset, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // Destroyed once the frames that may use it have retired.
        self.device
            .retire(Garbage::Buffer(self.raw, self.allocation.take()));
    }
}

/// A typed view of a buffer (uniform or storage texel buffer), destroyed
/// once the frames that may use it have retired.
pub struct BufferView {
    device: Arc<Device>,
    raw: vk::BufferView,
}

impl BufferView {
    /// A view of `range` bytes of `buffer` from `offset` as `format` texels.
    pub fn new(
        device: &Arc<Device>,
        buffer: &Buffer,
        format: vk::Format,
        offset: u64,
        range: u64,
    ) -> GpuResult<Self> {
        buffer.check_range(offset, range as usize)?;
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buffer.raw())
            .format(format)
            .offset(offset)
            .range(range);
        // SAFETY: `device` is live (the caller's `Arc`) and `buffer` is a live
        // buffer of it, borrowed for the call; `offset..offset + range` lies
        // inside it (checked above); `info` lives for the call. The usage
        // and format rules are valid-usage rules the validation layer checks.
        let raw = unsafe { device.raw().create_buffer_view(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::BufferView {
        self.raw
    }
}

impl Drop for BufferView {
    fn drop(&mut self) {
        self.device.retire(Garbage::BufferView(self.raw));
    }
}
