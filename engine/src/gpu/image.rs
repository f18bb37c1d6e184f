use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::Allocation;
use gpu_allocator::MemoryLocation;

use super::retire::Garbage;
use super::{Device, GpuError, GpuResult};

/// A 2D, single-mip, single-sample image to create, with one view.
#[derive(Clone, Debug)]
pub struct ImageDesc<'a> {
    /// A name for the allocator's reports and error messages.
    pub name: &'a str,
    /// Width and height in pixels; neither may be zero.
    pub extent: vk::Extent2D,
    /// The texel format (also the view's).
    pub format: vk::Format,
    /// What the image will be used for (attachment, transfer...).
    pub usage: vk::ImageUsageFlags,
    /// The aspect the view covers (colour or depth).
    pub aspect: vk::ImageAspectFlags,
}

/// A device-local image with its memory and a full view, freed on drop
/// once the frames that may use it have retired. Optimal tiling, exclusive
/// to the one queue family, created in the `UNDEFINED` layout.
pub struct Image {
    device: Arc<Device>,
    raw: vk::Image,
    view: vk::ImageView,
    allocation: Option<Allocation>,
    extent: vk::Extent2D,
    format: vk::Format,
    aspect: vk::ImageAspectFlags,
}

impl Image {
    /// Creates the image, binds fresh device-local memory and makes the view.
    /// An empty extent is [`GpuError::InvalidArgument`].
    pub fn new(device: &Arc<Device>, desc: &ImageDesc<'_>) -> GpuResult<Self> {
        if desc.extent.width == 0 || desc.extent.height == 0 {
            return Err(GpuError::InvalidArgument(format!(
                "image {:?} has an empty extent",
                desc.name
            )));
        }
        let d = device.raw();
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(desc.format)
            .extent(vk::Extent3D {
                width: desc.extent.width,
                height: desc.extent.height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(desc.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: `d` is the live device of the caller's `Arc`; `info` is a
        // local with a non-empty extent (checked above), alive for the call.
        let raw = unsafe { d.create_image(&info, None)? };
        // SAFETY: `raw` was just created from `d` and is still alive.
        let requirements = unsafe { d.get_image_memory_requirements(raw) };
        let allocation =
            match device.allocate(desc.name, requirements, MemoryLocation::GpuOnly, false) {
                Ok(a) => a,
                Err(e) => {
                    // SAFETY: `raw` was created from `d` above, has no memory
                    // bound and was never handed out or used: destroyed once.
                    unsafe { d.destroy_image(raw, None) };
                    return Err(e);
                }
            };
        // SAFETY: `raw` is a live image of `d` with no memory bound yet;
        // `allocation` was made by this device's allocator for `raw`'s own
        // requirements (non-linear, as the image is optimally tiled), so its
        // memory type, size and offset alignment fit.
        let bound = unsafe { d.bind_image_memory(raw, allocation.memory(), allocation.offset()) };
        let view = bound.and_then(|()| {
            let info = vk::ImageViewCreateInfo::default()
                .image(raw)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(desc.format)
                .subresource_range(full_range(desc.aspect));
            // SAFETY: `raw` is a live image of `d`, bound to memory (this
            // closure only runs when binding succeeded); the view's format
            // and its one-level, one-layer range match the image; `info`
            // lives for the call.
            unsafe { d.create_image_view(&info, None) }
        });
        let view = match view {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: `raw` was created from `d` above and never handed
                // out or used, and no view of it exists (making the view is
                // what failed, or binding failed before it): destroyed once.
                unsafe { d.destroy_image(raw, None) };
                device.free(allocation);
                return Err(e.into());
            }
        };
        Ok(Self {
            device: device.clone(),
            raw,
            view,
            allocation: Some(allocation),
            extent: desc.extent,
            format: desc.format,
            aspect: desc.aspect,
        })
    }

    /// The Vulkan image handle, valid while `self` lives.
    pub fn raw(&self) -> vk::Image {
        self.raw
    }

    /// The view of the whole image, valid while `self` lives.
    pub fn view(&self) -> vk::ImageView {
        self.view
    }

    /// Width and height in pixels.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The texel format.
    pub fn format(&self) -> vk::Format {
        self.format
    }

    /// The aspect the view covers.
    pub fn aspect(&self) -> vk::ImageAspectFlags {
        self.aspect
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // Destroyed once the frames that may use it have retired.
        self.device
            .retire(Garbage::Image(self.raw, self.view, self.allocation.take()));
    }
}

/// The subresource range of one aspect over mip level 0 and array layer 0:
/// the whole of the engine's single-mip, single-layer images.
pub fn full_range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(aspect)
        .base_mip_level(0)
        .level_count(1)
        .base_array_layer(0)
        .layer_count(1)
}
