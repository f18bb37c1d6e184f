//! [`Surface`]: a window's Vulkan surface, below the device (which checks
//! it can present to it) and the swapchain.

use std::sync::Arc;

use ash::vk;
use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

use super::{GpuError, GpuResult, Instance};

/// A window surface, destroyed on drop (before the instance: it holds it
/// alive).
pub struct Surface {
    // Keeps the instance alive until the surface is destroyed.
    _instance: Arc<Instance>,
    pub(super) loader: ash::khr::surface::Instance,
    pub(super) raw: vk::SurfaceKHR,
}

impl Surface {
    /// Creates a surface for the window behind `display` and `window`. The
    /// instance must have been made with [`super::InstanceDesc::display`]
    /// (else [`GpuError::InvalidArgument`]).
    ///
    /// # Safety
    /// The window behind the handles must outlive the surface and every
    /// swapchain made from it.
    pub unsafe fn new(
        instance: &Arc<Instance>,
        display: RawDisplayHandle,
        window: RawWindowHandle,
    ) -> GpuResult<Arc<Self>> {
        if !instance.surface_support() {
            return Err(GpuError::InvalidArgument(
                "the instance was created without a display (InstanceDesc::display)".into(),
            ));
        }
        // SAFETY: the handles name a live window that outlives the surface
        // (this function's contract); the instance is live (the caller's
        // `Arc`, also kept by the surface) and has the WSI extensions for a
        // display (`surface_support`, checked above).
        let raw = unsafe {
            ash_window::create_surface(&instance.entry, &instance.raw, display, window, None)?
        };
        Ok(Arc::new(Self {
            _instance: instance.clone(),
            loader: ash::khr::surface::Instance::new(&instance.entry, &instance.raw),
            raw,
        }))
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::SurfaceKHR {
        self.raw
    }

    /// Whether queue family `family` of `physical` (a device of the same
    /// instance) can present to the surface.
    pub fn supports_present(&self, physical: vk::PhysicalDevice, family: u32) -> GpuResult<bool> {
        // SAFETY: `self.raw` is a live surface of the instance `self` keeps
        // alive, and `physical` one of that instance's devices (the
        // documented contract; the engine passes devices it enumerated).
        Ok(unsafe {
            self.loader
                .get_physical_device_surface_support(physical, family, self.raw)?
        })
    }

    /// The surface's capabilities on `physical` (a device of the same
    /// instance): image counts, extents, transforms.
    pub fn capabilities(
        &self,
        physical: vk::PhysicalDevice,
    ) -> GpuResult<vk::SurfaceCapabilitiesKHR> {
        // SAFETY: as in `supports_present`: a live surface and a physical
        // device of the same live instance.
        Ok(unsafe {
            self.loader
                .get_physical_device_surface_capabilities(physical, self.raw)?
        })
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        // SAFETY: the surface was created from the instance `_instance` keeps
        // alive and is destroyed once, here; swapchains hold an `Arc` of the
        // surface, so every swapchain made from it is already destroyed. The
        // window outlives the surface (`Surface::new`'s contract).
        unsafe { self.loader.destroy_surface(self.raw, None) };
    }
}
