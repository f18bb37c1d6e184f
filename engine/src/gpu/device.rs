use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::{
    Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc,
};
use gpu_allocator::MemoryLocation;

use super::retire::{Garbage, RetireQueue};
use super::{select_device, GpuError, GpuResult, Instance, PhysicalDevice, Surface};

/// Longest the engine waits on one fence before reporting [`GpuError::Timeout`]
/// instead of hanging (lavapipe under validation is slow, but not this slow).
pub const FENCE_TIMEOUT_NS: u64 = 60_000_000_000;

/// What to create a device with.
#[derive(Clone, Copy, Default)]
pub struct DeviceDesc<'a> {
    /// Index or name substring; `None` uses `$VKSKIN_DEVICE`, then the
    /// discrete > integrated > CPU order (see [`select_device`]).
    pub selector: Option<&'a str>,
    /// The queue must present to this surface; enables VK_KHR_swapchain.
    pub surface: Option<&'a Surface>,
}

/// Optional features, enabled when the device has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnabledFeatures {
    /// Wireframe (`PolygonMode::LINE`).
    pub fill_mode_non_solid: bool,
    /// Storage-buffer writes from vertex shaders: the skinning capture mode.
    pub vertex_pipeline_stores_and_atomics: bool,
    /// Line widths other than 1.0 (`wideLines`).
    pub wide_lines: bool,
    /// Timestamps on the graphics queue.
    pub timestamps: bool,
    /// Needed by compute shaders compiled for Vulkan 1.3 (LocalSizeId).
    pub maintenance4: bool,
    /// Many draws from one indirect buffer (instances of pre-skinned meshes).
    pub multi_draw_indirect: bool,
    /// Vulkan 1.2's `bufferDeviceAddress`: shaders reach buffers through
    /// 64-bit addresses (the `bda` palette storage). vkskin's allocator
    /// then allocates every block with `DEVICE_ADDRESS`.
    pub buffer_device_address: bool,
    /// `textureCompressionBC`: BC1-BC7 images can be sampled (material
    /// textures then stay compressed on the GPU).
    pub texture_compression_bc: bool,
}

/// The logical device, its one graphics + compute queue and the memory
/// allocator. Every resource holds an `Arc<Device>`, so the device is
/// destroyed only after all of them; the device in turn holds the instance
/// (and so the messenger) alive.
pub struct Device {
    instance: Arc<Instance>,
    physical: PhysicalDevice,
    raw: ash::Device,
    queue: Mutex<vk::Queue>,
    queue_family: u32,
    allocator: Mutex<Option<Allocator>>,
    features: EnabledFeatures,
    swapchain: Option<ash::khr::swapchain::Device>,
    retire: RetireQueue,
    /// Created here (destroyed on drop), or the host's (left alone).
    owned: bool,
}

/// A device the host application created and keeps owning (see
/// [`crate::embed`]).
#[derive(Clone)]
pub struct HostDevice {
    /// The physical device `device` was created on; it must be one of the
    /// instance's.
    pub physical_device: vk::PhysicalDevice,
    /// The host's logical device (its function table included).
    pub device: ash::Device,
    /// A queue with graphics and compute. vkskin submits on it only in
    /// [`crate::skin::SkinPath::prepare`] (the mesh upload, waited on) and
    /// in [`crate::render::SkinCapture`]; never per frame.
    pub queue: vk::Queue,
    /// The family `queue` belongs to (command pools are made on it).
    pub queue_family: u32,
    /// What the host enabled of the optional features (vkskin cannot query
    /// a device for it). Dynamic rendering, synchronization2 and, for the
    /// compute stage, maintenance4 are required and not listed.
    pub features: EnabledFeatures,
}

impl Device {
    /// Wraps the host's device: vkskin allocates its own memory on it (its
    /// own gpu-allocator), never destroys it, and on drop waits for the
    /// device to idle once before freeing what it made.
    ///
    /// # Safety
    /// The handles must be valid and of `instance`; the device must have
    /// been created with Vulkan 1.3's `dynamicRendering` and
    /// `synchronization2` (and `maintenance4` for the compute stage)
    /// enabled, and the features `host.features` names; it must outlive the
    /// returned `Arc` and everything holding it. The queue must not be used
    /// by another thread while vkskin submits on it (see [`HostDevice`]),
    /// and no queue of the device may be in use on another thread while
    /// [`Device::wait_idle`] runs or the returned device is dropped (both
    /// call `vkDeviceWaitIdle`, which Vulkan requires to be externally
    /// synchronised with every queue of the device).
    pub unsafe fn from_host(instance: &Arc<Instance>, host: HostDevice) -> GpuResult<Arc<Self>> {
        let physical = super::list_devices(instance)?
            .into_iter()
            .find(|p| p.raw == host.physical_device)
            .ok_or_else(|| {
                GpuError::NoDevice(
                    ": the host's physical device is not among the instance's".into(),
                )
            })?;
        if physical.api_version < vk::API_VERSION_1_3 {
            return Err(GpuError::NoDevice(format!(
                ": {physical} is not Vulkan 1.3"
            )));
        }
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.raw.clone(),
            device: host.device.clone(),
            physical_device: physical.raw,
            debug_settings: Default::default(),
            buffer_device_address: host.features.buffer_device_address,
            allocation_sizes: Default::default(),
        })?;
        log::info!("vkskin: embedded on the host's {physical}");
        Ok(Arc::new(Self {
            instance: instance.clone(),
            physical,
            raw: host.device,
            queue: Mutex::new(host.queue),
            queue_family: host.queue_family,
            allocator: Mutex::new(Some(allocator)),
            features: host.features,
            swapchain: None,
            retire: RetireQueue::default(),
            owned: false,
        }))
    }

    /// Selects a physical device (see [`select_device`]), creates the
    /// logical device with one graphics + compute queue, Vulkan 1.3's
    /// dynamic rendering and synchronization2, and every optional feature
    /// of [`EnabledFeatures`] the device has, and its memory allocator.
    /// Fails with [`GpuError::NoDevice`] when the device lacks a required
    /// feature or cannot present to `desc.surface`.
    pub fn new(instance: &Arc<Instance>, desc: &DeviceDesc<'_>) -> GpuResult<Arc<Self>> {
        let physical = select_device(instance, desc.selector)?;
        let queue_family = physical
            .queue_family
            .ok_or_else(|| GpuError::NoDevice(format!(": {physical} has no graphics queue")))?;
        if let Some(surface) = desc.surface {
            if !surface.supports_present(physical.raw, queue_family)? {
                return Err(GpuError::NoDevice(format!(
                    ": {physical} cannot present to this window"
                )));
            }
        }
        let ir = &instance.raw;
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut all = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f12)
            .push_next(&mut f13);
        // SAFETY: `ir` is the live instance of the caller's `Arc` and
        // `physical.raw` was enumerated from it; `all` chains `f12` and
        // `f13`, locals that outlive the call and that it writes into.
        unsafe { ir.get_physical_device_features2(physical.raw, &mut all) };
        let have = all.features;
        if f13.dynamic_rendering == vk::FALSE || f13.synchronization2 == vk::FALSE {
            return Err(GpuError::NoDevice(format!(
                ": {physical} lacks dynamic rendering or synchronization2"
            )));
        }
        // SAFETY: as above: a physical device enumerated from the live `ir`.
        let families = unsafe { ir.get_physical_device_queue_family_properties(physical.raw) };
        let features = EnabledFeatures {
            fill_mode_non_solid: have.fill_mode_non_solid == vk::TRUE,
            vertex_pipeline_stores_and_atomics: have.vertex_pipeline_stores_and_atomics == vk::TRUE,
            wide_lines: have.wide_lines == vk::TRUE,
            timestamps: families
                .get(queue_family as usize)
                .is_some_and(|f| f.timestamp_valid_bits > 0),
            maintenance4: f13.maintenance4 == vk::TRUE,
            multi_draw_indirect: have.multi_draw_indirect == vk::TRUE,
            buffer_device_address: f12.buffer_device_address == vk::TRUE,
            texture_compression_bc: have.texture_compression_bc == vk::TRUE,
        };
        let core = vk::PhysicalDeviceFeatures::default()
            .fill_mode_non_solid(features.fill_mode_non_solid)
            .vertex_pipeline_stores_and_atomics(features.vertex_pipeline_stores_and_atomics)
            .wide_lines(features.wide_lines)
            .multi_draw_indirect(features.multi_draw_indirect)
            .texture_compression_bc(features.texture_compression_bc);
        // glslang's SPIR-V 1.6 (Vulkan 1.3 target) declares compute
        // workgroup sizes with LocalSizeId, which needs maintenance4.
        let mut e13 = vk::PhysicalDeviceVulkan13Features::default()
            .dynamic_rendering(true)
            .synchronization2(true)
            .maintenance4(features.maintenance4);
        let mut e12 = vk::PhysicalDeviceVulkan12Features::default()
            .host_query_reset(f12.host_query_reset == vk::TRUE)
            .buffer_device_address(features.buffer_device_address);
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(queue_family)
            .queue_priorities(&priorities)];
        let mut extensions = Vec::new();
        if desc.surface.is_some() {
            extensions.push(ash::khr::swapchain::NAME.as_ptr());
        }
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .enabled_features(&core)
            .push_next(&mut e12)
            .push_next(&mut e13);
        // SAFETY: `ir` is live and `physical.raw` is one of its devices;
        // `info` points at `queues`, `priorities`, `extensions` (static
        // extension names), `core`, `e12` and `e13`, locals alive for the
        // call; only features the device reported are enabled.
        let raw = unsafe { ir.create_device(physical.raw, &info, None)? };
        // SAFETY: `raw` was just created with one queue of `queue_family`
        // (the `queues` create info), so index 0 of that family exists.
        let queue = unsafe { raw.get_device_queue(queue_family, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: ir.clone(),
            device: raw.clone(),
            physical_device: physical.raw,
            debug_settings: Default::default(),
            buffer_device_address: features.buffer_device_address,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: `raw` was created above and never handed out;
                // nothing was created from it (the allocator failed to make
                // itself), and its queue was never used: destroyed once.
                unsafe { raw.destroy_device(None) };
                return Err(e.into());
            }
        };
        let swapchain = desc
            .surface
            .map(|_| ash::khr::swapchain::Device::new(ir, &raw));
        log::info!("vkskin: using {physical}");
        Ok(Arc::new(Self {
            instance: instance.clone(),
            physical,
            raw,
            queue: Mutex::new(queue),
            queue_family,
            allocator: Mutex::new(Some(allocator)),
            features,
            swapchain,
            retire: RetireQueue::default(),
            owned: true,
        }))
    }

    /// What the device can do with optimally tiled images of `format`.
    pub fn format_features(&self, format: vk::Format) -> vk::FormatFeatureFlags {
        // SAFETY: the instance is live (held by `self`) and the physical
        // device was enumerated from it.
        unsafe {
            self.instance
                .raw
                .get_physical_device_format_properties(self.physical.raw, format)
        }
        .optimal_tiling_features
    }

    /// The ash device (handle and function table), valid while `self`
    /// lives.
    pub fn raw(&self) -> &ash::Device {
        &self.raw
    }

    /// The instance the device was made from.
    pub fn instance(&self) -> &Arc<Instance> {
        &self.instance
    }

    /// The physical device the device runs on.
    pub fn physical(&self) -> &PhysicalDevice {
        &self.physical
    }

    /// The physical device's limits.
    pub fn limits(&self) -> &vk::PhysicalDeviceLimits {
        self.physical.limits()
    }

    /// The optional features enabled on the device.
    pub fn features(&self) -> EnabledFeatures {
        self.features
    }

    /// The family of the device's one queue.
    pub fn queue_family(&self) -> u32 {
        self.queue_family
    }

    pub(crate) fn swapchain_loader(&self) -> GpuResult<&ash::khr::swapchain::Device> {
        self.swapchain.as_ref().ok_or_else(|| {
            GpuError::InvalidArgument("the device was created without a surface".into())
        })
    }

    /// The queue, locked: Vulkan requires submissions to one queue to be
    /// externally synchronised.
    pub fn queue(&self) -> MutexGuard<'_, vk::Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submits `submits` to the queue (under its lock), signalling `fence`
    /// (or no fence when null) once they complete. The handles in `submits`
    /// must be live objects of this device: recorded command buffers not
    /// already pending, semaphores in a waitable/signalable state.
    pub fn submit(&self, submits: &[vk::SubmitInfo2<'_>], fence: vk::Fence) -> GpuResult<()> {
        let q = self.queue();
        // SAFETY: `self.raw` is live while `self` is; the queue is one of its
        // queues and the guard `q` holds its lock, so no other vkskin thread
        // uses it (a host sharing the queue promised the same in
        // `Device::from_host`). The handles in `submits` are live objects of
        // this device in a submittable state, per the documented contract.
        unsafe { self.raw.queue_submit2(*q, submits, fence)? };
        Ok(())
    }

    /// Waits until the device has finished all submitted work.
    pub fn wait_idle(&self) -> GpuResult<()> {
        // Holding the queue lock keeps anyone from submitting meanwhile.
        let _q = self.queue();
        // SAFETY: `self.raw` is live while `self` is. vkDeviceWaitIdle needs
        // every queue of the device externally synchronised: `_q` holds the
        // lock of vkskin's queue, the only queue a device from
        // `Device::new` has; a host's device is covered by
        // `Device::from_host`'s contract (no concurrent use of its queues).
        unsafe { self.raw.device_wait_idle()? };
        Ok(())
    }

    /// Waits for all of `fences` (live fences of this device), bounded by
    /// [`FENCE_TIMEOUT_NS`].
    pub fn wait_for_fences(&self, fences: &[vk::Fence]) -> GpuResult<()> {
        // SAFETY: `self.raw` is live while `self` is; `fences` are live
        // fences of this device, per the documented contract (the engine
        // passes only `Fence::raw` of fences it holds); waiting needs no
        // external synchronisation of the fences.
        match unsafe { self.raw.wait_for_fences(fences, true, FENCE_TIMEOUT_NS) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => Err(GpuError::Timeout(FENCE_TIMEOUT_NS / 1_000_000)),
            Err(e) => Err(e.into()),
        }
    }

    /// Begins a frame on the device's frame clock and returns its number
    /// (1, 2, ...). Objects dropped from now on wait for this frame to
    /// retire. `render::FramesInFlight` calls it; an embedding host calls
    /// it through [`crate::embed::HostFrames`].
    pub fn begin_frame(&self) -> u64 {
        self.retire.begin_frame()
    }

    /// Records that frame `frame`'s commands were submitted.
    pub fn frame_submitted(&self, frame: u64) {
        self.retire.frame_submitted(frame);
    }

    /// Records that frame `frame` (and every frame submitted before it) has
    /// finished on the GPU, and frees what was waiting for it.
    pub fn frame_completed(&self, frame: u64) {
        self.retire.frame_completed(frame);
        self.collect_garbage();
    }

    /// The newest frame known complete.
    pub fn completed_frame(&self) -> u64 {
        self.retire.completed()
    }

    /// The newest frame submitted (see [`Device::frame_submitted`]).
    pub fn submitted_frame(&self) -> u64 {
        self.retire.submitted()
    }

    /// Destroys the parked objects whose frames have retired.
    pub fn collect_garbage(&self) {
        let mut ready = Vec::new();
        self.retire.take_ready(false, &mut ready);
        self.destroy_now(ready);
    }

    /// Objects dropped but waiting for their frames to retire.
    pub fn parked_objects(&self) -> usize {
        self.retire.parked()
    }

    /// Turns deferred destruction off (on by default): dropped objects are
    /// destroyed at once even if a frame in flight uses them. Only for
    /// tests that show the validation layer catches exactly that.
    pub fn set_deferred_destruction(&self, on: bool) {
        self.retire.set_enabled(on);
    }

    /// Destroys `g` once the frames that may use it have retired.
    pub(crate) fn retire(&self, g: Garbage) {
        if let Some(g) = self.retire.park(g) {
            self.destroy_now(std::iter::once(g));
        }
    }

    fn destroy_now(&self, garbage: impl IntoIterator<Item = Garbage>) {
        let mut garbage = garbage.into_iter().peekable();
        if garbage.peek().is_none() {
            return;
        }
        let mut guard = self.allocator.lock().unwrap_or_else(|e| e.into_inner());
        let mut free = |a| {
            if let Some(alloc) = guard.as_mut() {
                if let Err(e) = alloc.free(a) {
                    log::error!("vkskin: freeing GPU memory failed: {e}");
                }
            }
        };
        for g in garbage {
            // SAFETY: `g` came out of `self.retire` (or was handed back by
            // `park`), so its owner dropped it and it is destroyed exactly
            // once; it is a child of `self.raw`, which is still alive; and
            // no pending command buffer uses it: the frame it was parked
            // under has completed (a fence wait reported it), or the device
            // is idle (drop), or deferral was turned off on purpose by a
            // test that wants the validation layer to see the misuse.
            unsafe { g.destroy(&self.raw, &mut free) };
        }
    }

    pub(crate) fn allocate(
        &self,
        name: &str,
        requirements: vk::MemoryRequirements,
        location: MemoryLocation,
        linear: bool,
    ) -> GpuResult<Allocation> {
        let mut guard = self.allocator.lock().unwrap_or_else(|e| e.into_inner());
        let allocator = guard
            .as_mut()
            .ok_or_else(|| GpuError::InvalidArgument("allocator already destroyed".into()))?;
        Ok(allocator.allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        })?)
    }

    pub(crate) fn free(&self, allocation: Allocation) {
        let mut guard = self.allocator.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = guard.as_mut() {
            if let Err(e) = a.free(allocation) {
                log::error!("vkskin: freeing GPU memory failed: {e}");
            }
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // Every resource held an Arc of this device, so all are destroyed;
        // the GPU may still be running the last submission.
        // SAFETY: `self.raw` is still alive (destroyed below, if owned). This
        // is the last reference to the `Device`, so no vkskin thread can be
        // using its queue; a host's other queues are idle per
        // `Device::from_host`'s contract.
        if let Err(e) = unsafe { self.raw.device_wait_idle() } {
            log::error!("vkskin: device_wait_idle at teardown failed: {e}");
        }
        // The GPU is idle: everything parked can go.
        let mut parked = Vec::new();
        self.retire.take_ready(true, &mut parked);
        self.destroy_now(parked);
        // The allocator frees its memory blocks: before the device goes.
        drop(
            self.allocator
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        if self.owned {
            // SAFETY: the device was created by `Device::new` (`owned`) and
            // is destroyed once, here. Every vkskin object made from it held
            // an `Arc<Device>` and is therefore dropped; the parked ones were
            // destroyed just above, the allocator's memory freed, and the
            // device is idle. The instance outlives this (`self.instance`).
            unsafe { self.raw.destroy_device(None) };
        }
    }
}
