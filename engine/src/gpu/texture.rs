//! Sampled images: a 2D texture with its mip chain, uploaded once, and
//! samplers.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::Allocation;
use gpu_allocator::MemoryLocation;

use super::retire::Garbage;
use super::{one_shot, Buffer, BufferDesc, Device, GpuError, GpuResult};

/// One mip level's bytes for [`Texture::upload`].
#[derive(Clone, Copy, Debug)]
pub struct TextureLevel<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The texels, tightly packed in the texture's format (whole 4x4 blocks
    /// for block-compressed formats).
    pub data: &'a [u8],
}

/// A device-local, sampled 2D image with every mip level given, in the
/// `SHADER_READ_ONLY_OPTIMAL` layout once made, and a view of all levels.
/// Destroyed on drop once the frames that may use it have retired.
pub struct Texture {
    device: Arc<Device>,
    raw: vk::Image,
    view: vk::ImageView,
    allocation: Option<Allocation>,
    format: vk::Format,
    extent: vk::Extent2D,
    levels: u32,
}

impl Texture {
    /// Creates the image, uploads `levels` (level 0 first, each half the
    /// previous one's size, at least 1) through a staging buffer and a
    /// one-shot submission that has finished on return, and leaves it
    /// ready for fragment-shader sampling. Errors when the device cannot
    /// sample `format`, no level is given, a level's size does not follow
    /// the chain or its bytes are not `bytes_per_level(format, w, h)`.
    pub fn upload(
        device: &Arc<Device>,
        name: &str,
        format: vk::Format,
        levels: &[TextureLevel<'_>],
    ) -> GpuResult<Self> {
        let first = levels
            .first()
            .ok_or_else(|| GpuError::InvalidArgument(format!("texture {name:?}: no mip level")))?;
        let (w0, h0) = (first.width, first.height);
        if w0 == 0 || h0 == 0 {
            return Err(GpuError::InvalidArgument(format!(
                "texture {name:?}: empty level 0 ({w0}x{h0})"
            )));
        }
        let block = format_block(format).ok_or_else(|| {
            GpuError::InvalidArgument(format!("texture {name:?}: unsupported format {format:?}"))
        })?;
        let need = vk::FormatFeatureFlags::SAMPLED_IMAGE | vk::FormatFeatureFlags::TRANSFER_DST;
        if !device.format_features(format).contains(need) {
            return Err(GpuError::InvalidArgument(format!(
                "texture {name:?}: the device cannot sample {format:?}"
            )));
        }
        let mut offsets = Vec::with_capacity(levels.len());
        let mut total = 0u64;
        for (i, l) in levels.iter().enumerate() {
            let (w, h) = (
                w0.checked_shr(i as u32).unwrap_or(0).max(1),
                h0.checked_shr(i as u32).unwrap_or(0).max(1),
            );
            if (l.width, l.height) != (w, h) {
                return Err(GpuError::InvalidArgument(format!(
                    "texture {name:?}: level {i} is {}x{}, expected {w}x{h}",
                    l.width, l.height
                )));
            }
            let bytes = block.level_bytes(w, h);
            if l.data.len() as u64 != bytes {
                return Err(GpuError::InvalidArgument(format!(
                    "texture {name:?}: level {i} holds {} bytes, expected {bytes}",
                    l.data.len()
                )));
            }
            offsets.push(total);
            // Offsets stay multiples of the block (or texel) size, as
            // vkCmdCopyBufferToImage requires, and of 4.
            total += bytes.div_ceil(16) * 16;
        }
        let mut staging = Buffer::new(
            device,
            &BufferDesc::host(name, total, vk::BufferUsageFlags::TRANSFER_SRC),
        )?;
        for (l, &o) in levels.iter().zip(&offsets) {
            staging.write_bytes(o, l.data)?;
        }
        let d = device.raw();
        let mip_levels = levels.len() as u32;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width: w0,
                height: h0,
                depth: 1,
            })
            .mip_levels(mip_levels)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: `d` is the live device of the caller's `Arc`; `info` is a
        // local with a non-empty extent, alive for the call.
        let raw = unsafe { d.create_image(&info, None)? };
        // SAFETY: `raw` was just created from `d` and is alive.
        let requirements = unsafe { d.get_image_memory_requirements(raw) };
        let allocation = match device.allocate(name, requirements, MemoryLocation::GpuOnly, false) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: `raw` was created above, has no memory and was
                // never used: destroyed once.
                unsafe { d.destroy_image(raw, None) };
                return Err(e);
            }
        };
        // The texture owns the image from here: its drop frees it.
        let mut texture = Self {
            device: device.clone(),
            raw,
            view: vk::ImageView::null(),
            allocation: None,
            format,
            extent: vk::Extent2D {
                width: w0,
                height: h0,
            },
            levels: mip_levels,
        };
        // SAFETY: `raw` is a live image of `d` without memory; `allocation`
        // was made for its own requirements (optimal tiling: non-linear).
        let bound = unsafe { d.bind_image_memory(raw, allocation.memory(), allocation.offset()) };
        texture.allocation = Some(allocation);
        bound?;
        let range = vk::ImageSubresourceRange::default()
            .aspect_mask(vk::ImageAspectFlags::COLOR)
            .base_mip_level(0)
            .level_count(mip_levels)
            .base_array_layer(0)
            .layer_count(1);
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(range);
        // SAFETY: `raw` is live and bound to memory; the view's format and
        // range (all levels, one layer) match the image; `view_info` lives
        // for the call.
        texture.view = unsafe { d.create_image_view(&view_info, None)? };
        one_shot(device, |cmd| {
            let barrier = |old, new, src_stage, src_access, dst_stage, dst_access| {
                vk::ImageMemoryBarrier2::default()
                    .image(raw)
                    .subresource_range(range)
                    .old_layout(old)
                    .new_layout(new)
                    .src_stage_mask(src_stage)
                    .src_access_mask(src_access)
                    .dst_stage_mask(dst_stage)
                    .dst_access_mask(dst_access)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            };
            let to_dst = [barrier(
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::PipelineStageFlags2::NONE,
                vk::AccessFlags2::NONE,
                vk::PipelineStageFlags2::COPY,
                vk::AccessFlags2::TRANSFER_WRITE,
            )];
            let to_read = [barrier(
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                vk::PipelineStageFlags2::COPY,
                vk::AccessFlags2::TRANSFER_WRITE,
                vk::PipelineStageFlags2::FRAGMENT_SHADER,
                vk::AccessFlags2::SHADER_SAMPLED_READ,
            )];
            let regions: Vec<vk::BufferImageCopy> = levels
                .iter()
                .zip(&offsets)
                .enumerate()
                .map(|(i, (l, &o))| {
                    vk::BufferImageCopy::default()
                        .buffer_offset(o)
                        .image_subresource(
                            vk::ImageSubresourceLayers::default()
                                .aspect_mask(vk::ImageAspectFlags::COLOR)
                                .mip_level(i as u32)
                                .base_array_layer(0)
                                .layer_count(1),
                        )
                        .image_extent(vk::Extent3D {
                            width: l.width,
                            height: l.height,
                            depth: 1,
                        })
                })
                .collect();
            // SAFETY: `cmd` is the one-shot buffer begun on `device`; the
            // image and the staging buffer are live and outlive the
            // submission (`one_shot` waits for it); every region lies in
            // the staging buffer (offsets and sizes computed above) and in
            // its mip level; the barriers take all levels to
            // TRANSFER_DST_OPTIMAL for the copy, then to
            // SHADER_READ_ONLY_OPTIMAL.
            unsafe {
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().image_memory_barriers(&to_dst),
                );
                d.cmd_copy_buffer_to_image(
                    cmd,
                    staging.raw(),
                    raw,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &regions,
                );
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().image_memory_barriers(&to_read),
                );
            }
            Ok(())
        })?;
        Ok(texture)
    }

    /// The Vulkan image, valid while `self` lives.
    pub fn raw(&self) -> vk::Image {
        self.raw
    }

    /// The view of every level, valid while `self` lives.
    pub fn view(&self) -> vk::ImageView {
        self.view
    }

    /// The texel format.
    pub fn format(&self) -> vk::Format {
        self.format
    }

    /// Level 0's size.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// Mip levels.
    pub fn mip_levels(&self) -> u32 {
        self.levels
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        self.device
            .retire(Garbage::Image(self.raw, self.view, self.allocation.take()));
    }
}

/// How a format's texels are stored, for the upload's size checks.
#[derive(Clone, Copy)]
struct Block {
    /// Side of a block (1 for uncompressed formats).
    side: u32,
    /// Bytes of one block.
    bytes: u64,
}

impl Block {
    fn level_bytes(self, w: u32, h: u32) -> u64 {
        u64::from(w.div_ceil(self.side)) * u64::from(h.div_ceil(self.side)) * self.bytes
    }
}

fn format_block(format: vk::Format) -> Option<Block> {
    let (side, bytes) = match format {
        vk::Format::R8G8B8A8_SRGB
        | vk::Format::R8G8B8A8_UNORM
        | vk::Format::B8G8R8A8_SRGB
        | vk::Format::B8G8R8A8_UNORM => (1, 4),
        vk::Format::BC1_RGBA_SRGB_BLOCK | vk::Format::BC1_RGBA_UNORM_BLOCK => (4, 8),
        vk::Format::BC2_SRGB_BLOCK
        | vk::Format::BC2_UNORM_BLOCK
        | vk::Format::BC3_SRGB_BLOCK
        | vk::Format::BC3_UNORM_BLOCK => (4, 16),
        _ => return None,
    };
    Some(Block { side, bytes })
}

/// Whether a format stores colour sRGB-encoded (the hardware converts to
/// linear on sampling and from linear on writing an attachment).
pub fn is_srgb(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::R8G8B8A8_SRGB
            | vk::Format::B8G8R8A8_SRGB
            | vk::Format::A8B8G8R8_SRGB_PACK32
            | vk::Format::R8G8B8_SRGB
            | vk::Format::B8G8R8_SRGB
            | vk::Format::BC1_RGBA_SRGB_BLOCK
            | vk::Format::BC1_RGB_SRGB_BLOCK
            | vk::Format::BC2_SRGB_BLOCK
            | vk::Format::BC3_SRGB_BLOCK
            | vk::Format::BC7_SRGB_BLOCK
    )
}

/// What a [`Sampler`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerDesc {
    /// Magnification filter.
    pub mag: vk::Filter,
    /// Minification filter.
    pub min: vk::Filter,
    /// Between mip levels.
    pub mipmap: vk::SamplerMipmapMode,
    /// `false`: level 0 only (maxLod 0).
    pub mipmaps: bool,
    /// Along U.
    pub wrap_u: vk::SamplerAddressMode,
    /// Along V.
    pub wrap_v: vk::SamplerAddressMode,
}

/// A sampler, destroyed on drop once the frames that may use it have
/// retired.
pub struct Sampler {
    device: Arc<Device>,
    raw: vk::Sampler,
    desc: SamplerDesc,
}

impl Sampler {
    /// Creates the sampler (no anisotropy, no comparison, LOD 0 to the
    /// last level when `desc.mipmaps`).
    pub fn new(device: &Arc<Device>, desc: &SamplerDesc) -> GpuResult<Self> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(desc.mag)
            .min_filter(desc.min)
            .mipmap_mode(desc.mipmap)
            .address_mode_u(desc.wrap_u)
            .address_mode_v(desc.wrap_v)
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .min_lod(0.0)
            .max_lod(if desc.mipmaps {
                vk::LOD_CLAMP_NONE
            } else {
                0.0
            });
        // SAFETY: `device` is live (the caller's `Arc`); `info` is a local
        // alive for the call.
        let raw = unsafe { device.raw().create_sampler(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
            desc: *desc,
        })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::Sampler {
        self.raw
    }

    /// What the sampler was made with.
    pub fn desc(&self) -> &SamplerDesc {
        &self.desc
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.device.retire(Garbage::Sampler(self.raw));
    }
}

/// Writes a combined image sampler (`texture` in
/// `SHADER_READ_ONLY_OPTIMAL`, sampled through `sampler`) to `binding` of
/// `set`. The set must not be in use by pending work.
pub fn write_image_sampler(
    device: &Device,
    set: vk::DescriptorSet,
    binding: u32,
    texture: &Texture,
    sampler: &Sampler,
) {
    let image = [vk::DescriptorImageInfo::default()
        .sampler(sampler.raw())
        .image_view(texture.view())
        .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
    let write = [vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
        .image_info(&image)];
    // SAFETY: `device` is live for the borrow; the set, view and sampler
    // are live objects of it, and the set is not in use (the caller's
    // contract); `write` points at `image`, a local alive for the call.
    unsafe { device.raw().update_descriptor_sets(&write, &[]) };
}
