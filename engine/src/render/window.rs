use std::sync::Arc;

use crate::gpu::{
    pipeline_barrier, vk, Acquired, Device, GpuError, GpuResult, Image, ImageBarrier, ImageDesc,
    Semaphore, Surface, Swapchain, SwapchainDesc,
};

use super::frames::Frame;
use super::offscreen::depth_to_attachment;
use super::scope::begin_rendering;

/// A window's swapchain with a depth buffer, surviving resize and
/// minimise: the swapchain is recreated when the window's size changes or
/// Vulkan reports it out of date or suboptimal, and frames are skipped
/// while the window has no area.
pub struct WindowTarget {
    device: Arc<Device>,
    surface: Arc<Surface>,
    swapchain: Option<Swapchain>,
    depth: Option<Image>,
    /// One per swapchain image: a present may still wait on the semaphore
    /// of an image until that image is acquired again.
    render_finished: Vec<Semaphore>,
    extent: vk::Extent2D,
    vsync: bool,
    stale: bool,
    recreations: u32,
}

/// An acquired swapchain image, valid for one frame.
#[derive(Clone, Copy, Debug)]
pub struct TargetImage {
    /// Index of the image in the swapchain.
    pub index: u32,
    /// The image's size in pixels.
    pub extent: vk::Extent2D,
}

impl WindowTarget {
    /// The depth buffer's format.
    pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

    /// A target for `surface` of `width` x `height` pixels; the swapchain is
    /// made now unless the window has no area (then on the first acquire
    /// after a resize). `device` must have been made for `surface`.
    pub fn new(
        device: &Arc<Device>,
        surface: &Arc<Surface>,
        width: u32,
        height: u32,
        vsync: bool,
    ) -> GpuResult<Self> {
        let mut me = Self {
            device: device.clone(),
            surface: surface.clone(),
            swapchain: None,
            depth: None,
            render_finished: Vec::new(),
            extent: vk::Extent2D { width, height },
            vsync,
            stale: true,
            recreations: 0,
        };
        if width > 0 && height > 0 {
            me.recreate()?;
        }
        Ok(me)
    }

    /// The colour format pipelines must be built for; it never changes
    /// across recreation on the same surface.
    pub fn color_format(&self) -> GpuResult<vk::Format> {
        self.swapchain
            .as_ref()
            .map(Swapchain::format)
            .ok_or(GpuError::SwapchainOutOfDate)
    }

    /// Swapchains created so far (the first one included).
    pub fn recreations(&self) -> u32 {
        self.recreations
    }

    /// The current size in pixels: the swapchain's, or the last size given
    /// to [`WindowTarget::resize`] while none matches it yet.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The window's new size in pixels (from the resize event).
    pub fn resize(&mut self, width: u32, height: u32) {
        if (width, height) != (self.extent.width, self.extent.height) {
            self.extent = vk::Extent2D { width, height };
            self.stale = true;
        }
    }

    fn recreate(&mut self) -> GpuResult<()> {
        // The old swapchain's images and semaphores may be in use.
        self.device.wait_idle()?;
        let desc = SwapchainDesc {
            extent: self.extent,
            vsync: self.vsync,
        };
        let new = Swapchain::new(&self.device, &self.surface, &desc, self.swapchain.as_ref())?;
        self.swapchain = None;
        let extent = new.extent();
        self.depth = Some(Image::new(
            &self.device,
            &ImageDesc {
                name: "window depth",
                extent,
                format: Self::DEPTH_FORMAT,
                usage: vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                aspect: vk::ImageAspectFlags::DEPTH,
            },
        )?);
        self.render_finished = (0..new.image_count())
            .map(|_| Semaphore::new(&self.device))
            .collect::<GpuResult<_>>()?;
        self.extent = extent;
        self.swapchain = Some(new);
        self.stale = false;
        self.recreations += 1;
        Ok(())
    }

    /// Acquires an image for `frame`, recreating the swapchain first when
    /// needed. `None`: skip this frame (minimised, or out of date; the
    /// caller abandons the frame and tries again on the next).
    pub fn acquire(&mut self, frame: &Frame) -> GpuResult<Option<TargetImage>> {
        if self.extent.width == 0 || self.extent.height == 0 {
            return Ok(None);
        }
        if self.stale || self.swapchain.is_none() {
            match self.recreate() {
                Ok(()) => {}
                // The surface reports zero size (minimised mid-resize).
                Err(GpuError::SwapchainOutOfDate) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        let Some(sc) = self.swapchain.as_ref() else {
            return Ok(None);
        };
        match sc.acquire(frame.image_available)? {
            Acquired::Image { index, suboptimal } => {
                // Draw and present this one (its semaphore is signalled),
                // recreate before the next.
                self.stale |= suboptimal;
                Ok(Some(TargetImage {
                    index,
                    extent: sc.extent(),
                }))
            }
            Acquired::OutOfDate => {
                self.stale = true;
                Ok(None)
            }
        }
    }

    /// Transitions the image (and depth) for drawing and begins rendering.
    /// `cmd` must be the recording command buffer of the frame that acquired
    /// `image`, outside a rendering scope.
    pub fn begin(
        &self,
        cmd: vk::CommandBuffer,
        image: TargetImage,
        clear: [f32; 4],
    ) -> GpuResult<()> {
        let sc = self
            .swapchain
            .as_ref()
            .ok_or(GpuError::SwapchainOutOfDate)?;
        let depth = self.depth.as_ref().ok_or(GpuError::SwapchainOutOfDate)?;
        pipeline_barrier(
            &self.device,
            cmd,
            &[
                ImageBarrier {
                    image: sc.image(image.index),
                    aspect: vk::ImageAspectFlags::COLOR,
                    old_layout: vk::ImageLayout::UNDEFINED,
                    new_layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                    // Chained to the acquire semaphore, waited at this stage.
                    src_stage: vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                    src_access: vk::AccessFlags2::NONE,
                    dst_stage: vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                    dst_access: vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
                        | vk::AccessFlags2::COLOR_ATTACHMENT_READ,
                },
                depth_to_attachment(depth.raw()),
            ],
            &[],
        );
        begin_rendering(
            &self.device,
            cmd,
            image.extent,
            sc.view(image.index),
            Some(depth.view()),
            clear,
        );
        Ok(())
    }

    /// Ends rendering and makes the image presentable. `cmd` must be the
    /// command buffer given to [`WindowTarget::begin`], still inside the
    /// rendering scope it began.
    pub fn end(&self, cmd: vk::CommandBuffer, image: TargetImage) -> GpuResult<()> {
        let sc = self
            .swapchain
            .as_ref()
            .ok_or(GpuError::SwapchainOutOfDate)?;
        // SAFETY: `self.device` is live (the `Arc`); `cmd` is recording inside
        // the rendering scope `begin` opened, per the documented contract.
        unsafe { self.device.raw().cmd_end_rendering(cmd) };
        pipeline_barrier(
            &self.device,
            cmd,
            &[ImageBarrier {
                image: sc.image(image.index),
                aspect: vk::ImageAspectFlags::COLOR,
                old_layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                new_layout: vk::ImageLayout::PRESENT_SRC_KHR,
                src_stage: vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                src_access: vk::AccessFlags2::COLOR_ATTACHMENT_WRITE,
                // The render-finished semaphore orders the present.
                dst_stage: vk::PipelineStageFlags2::NONE,
                dst_access: vk::AccessFlags2::NONE,
            }],
            &[],
        );
        Ok(())
    }

    /// The semaphore to signal at submission for `image`.
    pub fn render_finished(&self, image: TargetImage) -> vk::Semaphore {
        self.render_finished[image.index as usize].raw()
    }

    /// Presents; a suboptimal or out-of-date result recreates before the
    /// next frame.
    pub fn present(&mut self, image: TargetImage) -> GpuResult<()> {
        let sc = self
            .swapchain
            .as_ref()
            .ok_or(GpuError::SwapchainOutOfDate)?;
        let wait = self.render_finished[image.index as usize].raw();
        if sc.present(image.index, wait)? {
            self.stale = true;
        }
        Ok(())
    }
}

impl Drop for WindowTarget {
    fn drop(&mut self) {
        // Presents may still wait on our semaphores.
        if let Err(e) = self.device.wait_idle() {
            log::error!("vkskin: wait_idle at window teardown: {e}");
        }
    }
}
