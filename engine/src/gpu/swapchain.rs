use std::sync::Arc;

use ash::vk;

use super::image::full_range;
use super::surface::Surface;
use super::{Device, GpuError, GpuResult};

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
    /// An image to draw into.
    Image {
        /// Index of the image in the swapchain.
        index: u32,
        /// The swapchain still works but no longer matches the surface
        /// exactly: recreate after presenting this image.
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
    /// Creates a swapchain for `surface` (`device` must have been made with
    /// it in [`super::DeviceDesc::surface`]) with one view per image:
    /// a B8G8R8A8_UNORM or R8G8B8A8_UNORM format in the sRGB-nonlinear
    /// colour space when offered (else the first format offered), FIFO or
    /// (without vsync) IMMEDIATE/MAILBOX when offered, and one image more
    /// than the surface's minimum (capped at its maximum).
    /// A surface of zero size is [`GpuError::SwapchainOutOfDate`].
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
        // SAFETY: `surface.raw` is a live surface (the caller's `Arc`) and
        // `pd` the device's physical device, of the same instance (the device
        // was created for this surface's instance).
        let formats = unsafe {
            surface
                .loader
                .get_physical_device_surface_formats(pd, surface.raw)?
        };
        // SAFETY: as above.
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
        // SAFETY: `device` (which has the swapchain extension: `loader`
        // exists) and `surface` are live, and `info` is a local naming them
        // with an extent, count and format the surface offered. `old`, when
        // given, is a live swapchain of the same surface: after this call it
        // is retired, and its owner only idles the device and drops it
        // (`Swapchain::new`'s documented contract).
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
        // SAFETY: `raw` was just created by `loader` on the live device.
        me.images = unsafe { loader.get_swapchain_images(raw)? };
        for &image in &me.images {
            let info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(me.format)
                .subresource_range(full_range(vk::ImageAspectFlags::COLOR));
            // On error `me` drops and destroys the views made so far.
            // SAFETY: `image` is one of the live swapchain's images (owned by
            // the swapchain, which `me` destroys only after its views); the
            // view's format is the swapchain's and its range the image's one
            // level and layer; `info` lives for the call.
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

    /// The images' colour format.
    pub fn format(&self) -> vk::Format {
        self.format
    }

    /// The images' size in pixels.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// Image `index` (panics when out of range), owned by the swapchain.
    pub fn image(&self, index: u32) -> vk::Image {
        self.images[index as usize]
    }

    /// The view of image `index` (panics when out of range).
    pub fn view(&self, index: u32) -> vk::ImageView {
        self.views[index as usize]
    }

    /// Number of images in the swapchain.
    pub fn image_count(&self) -> usize {
        self.images.len()
    }

    /// The surface the swapchain presents to.
    pub fn surface(&self) -> &Arc<Surface> {
        &self.surface
    }

    /// Acquires the next image, signalling `semaphore` when it is ready.
    /// `semaphore` must be a semaphore of the same device with no pending
    /// signal (the frame's acquire semaphore, whose last signal was waited
    /// on by that frame's submission). Waits without a time limit.
    pub fn acquire(&self, semaphore: vk::Semaphore) -> GpuResult<Acquired> {
        let loader = self.device.swapchain_loader()?;
        // SAFETY: `self.raw` is a live swapchain of `self.device` (kept alive
        // by the `Arc`), not retired (a replacement idles the device and
        // drops this one right after); `semaphore` has no pending signal and
        // no other wait, per the documented contract; no fence is given.
        match unsafe { loader.acquire_next_image(self.raw, u64::MAX, semaphore, vk::Fence::null()) }
        {
            Ok((index, suboptimal)) => Ok(Acquired::Image { index, suboptimal }),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(Acquired::OutOfDate),
            Err(e) => Err(e.into()),
        }
    }

    /// Presents `index` once `wait` is signalled. `index` must have been
    /// acquired from this swapchain and `wait` be a semaphore of the same
    /// device that the submission drawing the image signals. `Ok(true)`:
    /// the swapchain is suboptimal or out of date and should be recreated.
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
        // SAFETY: the guard `q` holds the queue's lock (presenting needs the
        // queue externally synchronised); `self.raw` is a live swapchain of
        // this device and `index` an image acquired from it, as the caller
        // promises; `info` points at the local arrays, alive for the call;
        // `wait` is a semaphore of this device that the frame's submission
        // signals.
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
        // SAFETY: the views were created from `self.device` (kept alive by
        // the `Arc`) and are destroyed once, here; no pending work uses them,
        // since owners idle the device before dropping a swapchain
        // (`WindowTarget::recreate` and its drop call `wait_idle`).
        unsafe {
            for &v in &self.views {
                d.destroy_image_view(v, None);
            }
        }
        if let Ok(loader) = self.device.swapchain_loader() {
            // SAFETY: `self.raw` was created by this loader on the live device
            // and is destroyed once, after its views; the device is idle (see
            // above), and the surface it was made for is still alive
            // (`self.surface`).
            unsafe { loader.destroy_swapchain(self.raw, None) };
        }
    }
}
