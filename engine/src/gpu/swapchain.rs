use std::sync::Arc;

use ash::vk;
use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

use super::{full_range, Device, GpuError, GpuResult, Instance};

/// A window surface, destroyed on drop (before the instance: it holds it).
pub struct Surface {
    // Keeps the instance alive until the surface is destroyed.
    _instance: Arc<Instance>,
    loader: ash::khr::surface::Instance,
    raw: vk::SurfaceKHR,
}

impl Surface {
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
        // SAFETY: the caller keeps the window alive; the instance has the
        // WSI extensions for this display.
        let raw = unsafe {
            ash_window::create_surface(&instance.entry, &instance.raw, display, window, None)?
        };
        Ok(Arc::new(Self {
            _instance: instance.clone(),
            loader: ash::khr::surface::Instance::new(&instance.entry, &instance.raw),
            raw,
        }))
    }

    pub fn raw(&self) -> vk::SurfaceKHR {
        self.raw
    }

    pub fn supports_present(&self, physical: vk::PhysicalDevice, family: u32) -> GpuResult<bool> {
        // SAFETY: live surface and physical device of the same instance.
        Ok(unsafe {
            self.loader
                .get_physical_device_surface_support(physical, family, self.raw)?
        })
    }

    pub fn capabilities(
        &self,
        physical: vk::PhysicalDevice,
    ) -> GpuResult<vk::SurfaceCapabilitiesKHR> {
        // SAFETY: as above.
        Ok(unsafe {
            self.loader
                .get_physical_device_surface_capabilities(physical, self.raw)?
        })
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        // SAFETY: swapchains hold an Arc of the surface, so are gone.
        unsafe { self.loader.destroy_surface(self.raw, None) };
    }
}

/// What the swapchain should look like.
#[derive(Clone, Copy, Debug)]
pub struct SwapchainDesc {
    /// The window's size in pixels; the surface may impose its own.
    pub extent: vk::Extent2D,
    /// FIFO when true; otherwise IMMEDIATE or MAILBOX when offered.
    pub vsync: bool,
}

/// Result of acquiring an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    Image {
        index: u32,
        suboptimal: bool,
    },
    /// The surface changed (resize): recreate and skip the frame.
    OutOfDate,
}

/// A swapchain with one view per image, destroyed on drop.
pub struct Swapchain {
    device: Arc<Device>,
    surface: Arc<Surface>,
    raw: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    views: Vec<vk::ImageView>,
    format: vk::Format,
    extent: vk::Extent2D,
}

impl Swapchain {
    /// `old`: the swapchain being replaced (the caller idles the device
    /// and drops it afterwards).
    pub fn new(
        device: &Arc<Device>,
        surface: &Arc<Surface>,
        desc: &SwapchainDesc,
        old: Option<&Swapchain>,
    ) -> GpuResult<Self> {
        let loader = device.swapchain_loader()?;
        let pd = device.physical().raw;
        let caps = surface.capabilities(pd)?;
        // SAFETY: live surface and physical device.
        let formats = unsafe {
            surface
                .loader
                .get_physical_device_surface_formats(pd, surface.raw)?
        };
        let modes = unsafe {
            surface
                .loader
                .get_physical_device_surface_present_modes(pd, surface.raw)?
        };
        let format = formats
            .iter()
            .find(|f| {
                matches!(
                    f.format,
                    vk::Format::B8G8R8A8_UNORM | vk::Format::R8G8B8A8_UNORM
                ) && f.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR
            })
            .or(formats.first())
            .copied()
            .ok_or_else(|| GpuError::Window("the surface offers no format".into()))?;
        let mode = if desc.vsync {
            vk::PresentModeKHR::FIFO
        } else {
            [vk::PresentModeKHR::IMMEDIATE, vk::PresentModeKHR::MAILBOX]
                .into_iter()
                .find(|m| modes.contains(m))
                .unwrap_or(vk::PresentModeKHR::FIFO)
        };
        // u32::MAX means the window decides through our requested extent.
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: desc
                    .extent
                    .width
                    .clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: desc
                    .extent
                    .height
                    .clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        if extent.width == 0 || extent.height == 0 {
            return Err(GpuError::SwapchainOutOfDate);
        }
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface.raw)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(old.map_or(vk::SwapchainKHR::null(), |o| o.raw));
        // SAFETY: valid create info; `old` is not used for anything else.
        let raw = unsafe { loader.create_swapchain(&info, None)? };
        let mut me = Self {
            device: device.clone(),
            surface: surface.clone(),
            raw,
            images: Vec::new(),
            views: Vec::new(),
            format: format.format,
            extent,
        };
        // SAFETY: a live swapchain.
        me.images = unsafe { loader.get_swapchain_images(raw)? };
        for &image in &me.images {
            let info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(me.format)
                .subresource_range(full_range(vk::ImageAspectFlags::COLOR));
            // On error `me` drops and destroys the views made so far.
            let view = unsafe { device.raw().create_image_view(&info, None)? };
            me.views.push(view);
        }
        log::debug!(
            "vkskin: swapchain {}x{} {:?} {:?}, {} images",
            extent.width,
            extent.height,
            me.format,
            mode,
            me.images.len()
        );
        Ok(me)
    }

    pub fn format(&self) -> vk::Format {
        self.format
    }

    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    pub fn image(&self, index: u32) -> vk::Image {
        self.images[index as usize]
    }

    pub fn view(&self, index: u32) -> vk::ImageView {
        self.views[index as usize]
    }

    pub fn image_count(&self) -> usize {
        self.images.len()
    }

    pub fn surface(&self) -> &Arc<Surface> {
        &self.surface
    }

    /// Acquires the next image, signalling `semaphore` when it is ready.
    pub fn acquire(&self, semaphore: vk::Semaphore) -> GpuResult<Acquired> {
        let loader = self.device.swapchain_loader()?;
        // SAFETY: the semaphore is unsignalled and not waited on elsewhere.
        match unsafe { loader.acquire_next_image(self.raw, u64::MAX, semaphore, vk::Fence::null()) }
        {
            Ok((index, suboptimal)) => Ok(Acquired::Image { index, suboptimal }),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(Acquired::OutOfDate),
            Err(e) => Err(e.into()),
        }
    }

    /// Presents `index` once `wait` is signalled. `Ok(true)`: the
    /// swapchain is suboptimal or out of date and should be recreated.
    pub fn present(&self, index: u32, wait: vk::Semaphore) -> GpuResult<bool> {
        let loader = self.device.swapchain_loader()?;
        let swapchains = [self.raw];
        let indices = [index];
        let waits = [wait];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        let q = self.device.queue();
        // SAFETY: the queue is locked; the image was acquired and rendered.
        match unsafe { loader.queue_present(*q, &info) } {
            Ok(suboptimal) => Ok(suboptimal),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        let d = self.device.raw();
        // SAFETY: owners idle the device before dropping a swapchain.
        unsafe {
            for &v in &self.views {
                d.destroy_image_view(v, None);
            }
        }
        if let Ok(loader) = self.device.swapchain_loader() {
            unsafe { loader.destroy_swapchain(self.raw, None) };
        }
    }
}
