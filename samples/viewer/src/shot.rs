//! Screenshots of the window: the frame is drawn a second time, panel and
//! overlays included, into an image of the swapchain's format and size
//! (the pipelines are built for that format), copied to a host buffer and
//! written as a PNG once the frame's fence has passed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use vkskin::gpu::{
    pipeline_barrier, vk, Buffer, BufferBarrier, BufferDesc, Device, Image, ImageBarrier, ImageDesc,
};

pub struct ShotTarget {
    device: Arc<Device>,
    color: Image,
    depth: Image,
    readback: Buffer,
    /// Where the PNG goes once the frame has finished.
    pub path: PathBuf,
}

fn err(e: vkskin::gpu::GpuError) -> String {
    e.to_string()
}

impl ShotTarget {
    pub fn new(
        device: &Arc<Device>,
        format: vk::Format,
        depth_format: vk::Format,
        extent: vk::Extent2D,
        path: PathBuf,
    ) -> Result<Self, String> {
        if channel_order(format).is_none() {
            return Err(format!(
                "screenshots need an 8-bit RGBA or BGRA swapchain, not {format:?}"
            ));
        }
        let color = Image::new(
            device,
            &ImageDesc {
                name: "screenshot colour",
                extent,
                format,
                usage: vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
                aspect: vk::ImageAspectFlags::COLOR,
            },
        )
        .map_err(err)?;
        let depth = Image::new(
            device,
            &ImageDesc {
                name: "screenshot depth",
                extent,
                format: depth_format,
                usage: vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                aspect: vk::ImageAspectFlags::DEPTH,
            },
        )
        .map_err(err)?;
        let readback = Buffer::new(
            device,
            &BufferDesc::readback(
                "screenshot readback",
                u64::from(extent.width) * u64::from(extent.height) * 4,
                vk::BufferUsageFlags::TRANSFER_DST,
            ),
        )
        .map_err(err)?;
        Ok(Self {
            device: device.clone(),
            color,
            depth,
            readback,
            path,
        })
    }

    pub fn extent(&self) -> vk::Extent2D {
        self.color.extent()
    }

    /// Transitions the images and begins rendering, cleared to `clear`.
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
                    src_stage: vk::PipelineStageFlags2::NONE,
                    src_access: vk::AccessFlags2::NONE,
                    dst_stage: vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                    dst_access: vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
                        | vk::AccessFlags2::COLOR_ATTACHMENT_READ,
                },
                ImageBarrier {
                    image: self.depth.raw(),
                    aspect: vk::ImageAspectFlags::DEPTH,
                    old_layout: vk::ImageLayout::UNDEFINED,
                    new_layout: vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
                    src_stage: vk::PipelineStageFlags2::NONE,
                    src_access: vk::AccessFlags2::NONE,
                    dst_stage: vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS
                        | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
                    dst_access: vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ
                        | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE,
                },
            ],
            &[],
        );
        let extent = self.extent();
        let color = [vk::RenderingAttachmentInfo::default()
            .image_view(self.color.view())
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue {
                color: vk::ClearColorValue { float32: clear },
            })];
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.depth.view())
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .clear_value(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue {
                    depth: 1.0,
                    stencil: 0,
                },
            });
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent,
        };
        let info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .color_attachments(&color)
            .depth_attachment(&depth);
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: extent.width as f32,
            height: extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        let d = self.device.raw();
        // SAFETY: `cmd` is recording outside a rendering scope; the views
        // were just moved to attachment layouts.
        unsafe {
            d.cmd_begin_rendering(cmd, &info);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[area]);
        }
    }

    /// Ends rendering and copies the image into the host buffer.
    pub fn end_and_copy(&self, cmd: vk::CommandBuffer) {
        let d = self.device.raw();
        // SAFETY: inside the rendering scope begun by `begin`.
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
            &[],
        );
        let e = self.extent();
        let region = vk::BufferImageCopy::default()
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

    /// Writes the PNG (after the frame's fence).
    pub fn write(&self) -> Result<(), String> {
        let e = self.extent();
        let mut px: Vec<u8> = self
            .readback
            .read(0, self.readback.size() as usize)
            .map_err(err)?;
        if channel_order(self.color.format()) == Some(true) {
            px.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
        }
        // The swapchain is opaque: whatever alpha the panel left, the
        // window shows it as 1.
        px.chunks_exact_mut(4).for_each(|p| p[3] = 255);
        write_png(&self.path, e.width, e.height, &px)
    }
}

/// `Some(true)` for BGRA formats, `Some(false)` for RGBA, `None` otherwise.
fn channel_order(format: vk::Format) -> Option<bool> {
    match format {
        vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB => Some(true),
        vk::Format::R8G8B8A8_UNORM | vk::Format::R8G8B8A8_SRGB => Some(false),
        _ => None,
    }
}

fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), String> {
    vkskin::render::write_png(path, width, height, rgba).map_err(err)
}
