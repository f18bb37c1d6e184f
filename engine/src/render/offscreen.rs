use std::path::Path;
use std::sync::Arc;

use crate::gpu::{
    pipeline_barrier, vk, Buffer, BufferBarrier, BufferDesc, Device, GpuError, GpuResult, Image,
    ImageBarrier, ImageDesc,
};

use super::png::write_png;
use super::scope::begin_rendering;

/// An offscreen colour + depth target drawn with dynamic rendering and read
/// back to the CPU. One frame at a time: the caller waits for a frame's
/// fence before reading it back or starting the next.
///
/// The colour image is [`OffscreenTarget::COLOR_FORMAT`], or with
/// [`OffscreenTarget::with_format`] any 8-bit RGBA or BGRA format (a
/// window's swapchain format, for pipelines built for the window); the
/// readback is RGBA either way.
pub struct OffscreenTarget {
    device: Arc<Device>,
    color: Image,
    depth: Image,
    readback: Buffer,
}

impl OffscreenTarget {
    /// 8-bit RGBA so the readback is the PNG's bytes as they are.
    pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
    /// The depth image's format: 32-bit float, cleared to 1.0 by
    /// [`OffscreenTarget::begin`].
    pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

    /// A `width` x `height` target (pixels) with the default colour format,
    /// [`OffscreenTarget::COLOR_FORMAT`].
    pub fn new(device: &Arc<Device>, width: u32, height: u32) -> GpuResult<Self> {
        Self::with_format(device, width, height, Self::COLOR_FORMAT)
    }

    /// A target whose colour image has `format`: 8-bit RGBA or BGRA, UNORM
    /// or SRGB (the formats whose texels are the PNG's bytes, up to the
    /// order of the channels).
    pub fn with_format(
        device: &Arc<Device>,
        width: u32,
        height: u32,
        format: vk::Format,
    ) -> GpuResult<Self> {
        if bgra(format).is_none() {
            return Err(GpuError::InvalidArgument(format!(
                "offscreen targets are 8-bit RGBA or BGRA, not {format:?}"
            )));
        }
        let extent = vk::Extent2D { width, height };
        let color = Image::new(
            device,
            &ImageDesc {
                name: "offscreen colour",
                extent,
                format,
                usage: vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
                aspect: vk::ImageAspectFlags::COLOR,
            },
        )?;
        let depth = Image::new(
            device,
            &ImageDesc {
                name: "offscreen depth",
                extent,
                format: Self::DEPTH_FORMAT,
                usage: vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                aspect: vk::ImageAspectFlags::DEPTH,
            },
        )?;
        let readback = Buffer::new(
            device,
            &BufferDesc::readback(
                "offscreen readback",
                u64::from(width) * u64::from(height) * 4,
                vk::BufferUsageFlags::TRANSFER_DST,
            ),
        )?;
        Ok(Self {
            device: device.clone(),
            color,
            depth,
            readback,
        })
    }

    /// The size of both images, in pixels.
    pub fn extent(&self) -> vk::Extent2D {
        self.color.extent()
    }

    /// The colour image's format (what pipelines drawing here are built for).
    pub fn color_format(&self) -> vk::Format {
        self.color.format()
    }

    /// Width over height, for a camera's projection.
    pub fn aspect_ratio(&self) -> f32 {
        let e = self.extent();
        e.width as f32 / e.height as f32
    }

    /// Makes the images attachments (discarding old contents: everything
    /// is cleared) and begins rendering. The barriers' first scope covers
    /// earlier submissions' copy and attachment writes, so a target can be
    /// reused frame after frame.
    pub fn begin(&self, cmd: vk::CommandBuffer, clear: [f32; 4]) {
        pipeline_barrier(
            &self.device,
            cmd,
            &[
                ImageBarrier {
                    image: self.color.raw(),
                    aspect: vk::ImageAspectFlags::COLOR,
                    old_layout: vk::ImageLayout::UNDEFINED,
                    new_layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                    src_stage: vk::PipelineStageFlags2::COPY
                        | vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                    src_access: vk::AccessFlags2::COLOR_ATTACHMENT_WRITE,
                    dst_stage: vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                    dst_access: vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
                        | vk::AccessFlags2::COLOR_ATTACHMENT_READ,
                },
                depth_to_attachment(self.depth.raw()),
            ],
            &[],
        );
        begin_rendering(
            &self.device,
            cmd,
            self.extent(),
            self.color.view(),
            Some(self.depth.view()),
            clear,
        );
    }

    /// Ends rendering and copies the colour image into the readback buffer,
    /// made visible to the host once the submission's fence has signalled.
    pub fn end_and_copy(&self, cmd: vk::CommandBuffer) {
        let d = self.device.raw();
        // SAFETY: `cmd` is inside the rendering scope begun by `begin`.
        unsafe { d.cmd_end_rendering(cmd) };
        pipeline_barrier(
            &self.device,
            cmd,
            &[ImageBarrier {
                image: self.color.raw(),
                aspect: vk::ImageAspectFlags::COLOR,
                old_layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                new_layout: vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                src_stage: vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                src_access: vk::AccessFlags2::COLOR_ATTACHMENT_WRITE,
                dst_stage: vk::PipelineStageFlags2::COPY,
                dst_access: vk::AccessFlags2::TRANSFER_READ,
            }],
            // The previous frame's copy wrote the same buffer.
            &[BufferBarrier {
                buffer: self.readback.raw(),
                src_stage: vk::PipelineStageFlags2::COPY,
                src_access: vk::AccessFlags2::TRANSFER_WRITE,
                dst_stage: vk::PipelineStageFlags2::COPY,
                dst_access: vk::AccessFlags2::TRANSFER_WRITE,
            }],
        );
        let e = self.extent();
        let region = vk::BufferImageCopy::default()
            .buffer_offset(0)
            .image_subresource(
                vk::ImageSubresourceLayers::default()
                    .aspect_mask(vk::ImageAspectFlags::COLOR)
                    .layer_count(1),
            )
            .image_extent(vk::Extent3D {
                width: e.width,
                height: e.height,
                depth: 1,
            });
        // SAFETY: the image is in TRANSFER_SRC layout; the buffer holds
        // width * height * 4 bytes.
        unsafe {
            d.cmd_copy_image_to_buffer(
                cmd,
                self.color.raw(),
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                self.readback.raw(),
                &[region],
            )
        };
        pipeline_barrier(
            &self.device,
            cmd,
            &[],
            &[BufferBarrier {
                buffer: self.readback.raw(),
                src_stage: vk::PipelineStageFlags2::COPY,
                src_access: vk::AccessFlags2::TRANSFER_WRITE,
                dst_stage: vk::PipelineStageFlags2::HOST,
                dst_access: vk::AccessFlags2::HOST_READ,
            }],
        );
    }

    /// The last frame's pixels, RGBA8 (a BGRA image's channels put in that
    /// order), rows top to bottom. Call after the fence of the submission
    /// that recorded [`OffscreenTarget::end_and_copy`].
    pub fn read_rgba(&self) -> GpuResult<Vec<u8>> {
        let mut px: Vec<u8> = self.readback.read(0, self.readback.size() as usize)?;
        if bgra(self.color.format()) == Some(true) {
            px.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
        }
        Ok(px)
    }

    /// Writes the last frame's pixels ([`OffscreenTarget::read_rgba`]) to
    /// `path` as an RGBA8 PNG. Call after the fence of the submission that
    /// recorded [`OffscreenTarget::end_and_copy`].
    pub fn write_png(&self, path: &Path) -> GpuResult<()> {
        let e = self.extent();
        write_png(path, e.width, e.height, &self.read_rgba()?)
    }
}

/// `Some(true)` for the 8-bit BGRA formats, `Some(false)` for the 8-bit
/// RGBA ones, `None` for any other.
fn bgra(format: vk::Format) -> Option<bool> {
    match format {
        vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB => Some(true),
        vk::Format::R8G8B8A8_UNORM | vk::Format::R8G8B8A8_SRGB => Some(false),
        _ => None,
    }
}

pub(crate) fn depth_to_attachment(image: vk::Image) -> ImageBarrier {
    ImageBarrier {
        image,
        aspect: vk::ImageAspectFlags::DEPTH,
        old_layout: vk::ImageLayout::UNDEFINED,
        new_layout: vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
        // Orders against the previous frame's depth writes (same image).
        src_stage: vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS
            | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
        src_access: vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE,
        dst_stage: vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS
            | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
        dst_access: vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ
            | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_8_bit_rgba_and_bgra_formats_are_offscreen_formats() {
        assert_eq!(bgra(OffscreenTarget::COLOR_FORMAT), Some(false));
        assert_eq!(bgra(vk::Format::R8G8B8A8_SRGB), Some(false));
        assert_eq!(bgra(vk::Format::B8G8R8A8_UNORM), Some(true));
        assert_eq!(bgra(vk::Format::B8G8R8A8_SRGB), Some(true));
        assert_eq!(bgra(vk::Format::R16G16B16A16_SFLOAT), None);
        assert_eq!(bgra(vk::Format::A2B10G10R10_UNORM_PACK32), None);
    }
}
