use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::Allocation;
use gpu_allocator::MemoryLocation;

use super::retire::Garbage;
use super::{Device, GpuError, GpuResult};

/// A 2D, single-mip, single-sample image to create, with one view.
#[derive(Clone, Debug)]
pub struct ImageDesc<'a> {
    pub name: &'a str,
    pub extent: vk::Extent2D,
    pub format: vk::Format,
    pub usage: vk::ImageUsageFlags,
    pub aspect: vk::ImageAspectFlags,
}

/// A device-local image with its memory and a full view, freed on drop.
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
        // SAFETY: valid create info on a live device.
        let raw = unsafe { d.create_image(&info, None)? };
        let requirements = unsafe { d.get_image_memory_requirements(raw) };
        let allocation =
            match device.allocate(desc.name, requirements, MemoryLocation::GpuOnly, false) {
                Ok(a) => a,
                Err(e) => {
                    unsafe { d.destroy_image(raw, None) };
                    return Err(e);
                }
            };
        let bound = unsafe { d.bind_image_memory(raw, allocation.memory(), allocation.offset()) };
        let view = bound.and_then(|()| {
            let info = vk::ImageViewCreateInfo::default()
                .image(raw)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(desc.format)
                .subresource_range(full_range(desc.aspect));
            // SAFETY: the image is bound to memory.
            unsafe { d.create_image_view(&info, None) }
        });
        let view = match view {
            Ok(v) => v,
            Err(e) => {
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

    pub fn raw(&self) -> vk::Image {
        self.raw
    }

    pub fn view(&self) -> vk::ImageView {
        self.view
    }

    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    pub fn format(&self) -> vk::Format {
        self.format
    }

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

/// Every mip and layer of one aspect.
pub fn full_range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(aspect)
        .base_mip_level(0)
        .level_count(1)
        .base_array_layer(0)
        .layer_count(1)
}
