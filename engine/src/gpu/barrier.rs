//! Synchronization2 barriers: the one way the engine orders GPU work.

use ash::vk;

use super::{full_range, Device};

/// One image layout transition / memory dependency.
#[derive(Clone, Copy, Debug)]
pub struct ImageBarrier {
    pub image: vk::Image,
    pub aspect: vk::ImageAspectFlags,
    pub old_layout: vk::ImageLayout,
    pub new_layout: vk::ImageLayout,
    pub src_stage: vk::PipelineStageFlags2,
    pub src_access: vk::AccessFlags2,
    pub dst_stage: vk::PipelineStageFlags2,
    pub dst_access: vk::AccessFlags2,
}

/// One buffer memory dependency over the whole buffer.
#[derive(Clone, Copy, Debug)]
pub struct BufferBarrier {
    pub buffer: vk::Buffer,
    pub src_stage: vk::PipelineStageFlags2,
    pub src_access: vk::AccessFlags2,
    pub dst_stage: vk::PipelineStageFlags2,
    pub dst_access: vk::AccessFlags2,
}

/// Barriers recorded per `vkCmdPipelineBarrier2` call: the Vulkan structs
/// are built on the stack, so recording never allocates.
const BATCH: usize = 8;

/// Records the barriers (in one `vkCmdPipelineBarrier2`, or one per eight).
pub fn pipeline_barrier(
    device: &Device,
    cmd: vk::CommandBuffer,
    images: &[ImageBarrier],
    buffers: &[BufferBarrier],
) {
    let rounds = images
        .len()
        .div_ceil(BATCH)
        .max(buffers.len().div_ceil(BATCH));
    for r in 0..rounds {
        let imgs = images.get(r * BATCH..).unwrap_or(&[]);
        let bufs = buffers.get(r * BATCH..).unwrap_or(&[]);
        let (ni, nb) = (imgs.len().min(BATCH), bufs.len().min(BATCH));
        let mut image_barriers = [vk::ImageMemoryBarrier2::default(); BATCH];
        for (o, b) in image_barriers.iter_mut().zip(&imgs[..ni]) {
            *o = vk::ImageMemoryBarrier2::default()
                .image(b.image)
                .subresource_range(full_range(b.aspect))
                .old_layout(b.old_layout)
                .new_layout(b.new_layout)
                .src_stage_mask(b.src_stage)
                .src_access_mask(b.src_access)
                .dst_stage_mask(b.dst_stage)
                .dst_access_mask(b.dst_access)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED);
        }
        let mut buffer_barriers = [vk::BufferMemoryBarrier2::default(); BATCH];
        for (o, b) in buffer_barriers.iter_mut().zip(&bufs[..nb]) {
            *o = vk::BufferMemoryBarrier2::default()
                .buffer(b.buffer)
                .offset(0)
                .size(vk::WHOLE_SIZE)
                .src_stage_mask(b.src_stage)
                .src_access_mask(b.src_access)
                .dst_stage_mask(b.dst_stage)
                .dst_access_mask(b.dst_access)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED);
        }
        let dep = vk::DependencyInfo::default()
            .image_memory_barriers(&image_barriers[..ni])
            .buffer_memory_barriers(&buffer_barriers[..nb]);
        // SAFETY: `cmd` is recording; the handles are the caller's live objects.
        unsafe { device.raw().cmd_pipeline_barrier2(cmd, &dep) };
    }
}

/// Records one global memory dependency (no buffer or image named).
pub fn memory_barrier(
    device: &Device,
    cmd: vk::CommandBuffer,
    src_stage: vk::PipelineStageFlags2,
    src_access: vk::AccessFlags2,
    dst_stage: vk::PipelineStageFlags2,
    dst_access: vk::AccessFlags2,
) {
    let barrier = [vk::MemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)];
    let dep = vk::DependencyInfo::default().memory_barriers(&barrier);
    // SAFETY: `cmd` is recording.
    unsafe { device.raw().cmd_pipeline_barrier2(cmd, &dep) };
}
