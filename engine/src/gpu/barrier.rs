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

/// Records the barriers in one `vkCmdPipelineBarrier2`.
pub fn pipeline_barrier(
    device: &Device,
    cmd: vk::CommandBuffer,
    images: &[ImageBarrier],
    buffers: &[BufferBarrier],
) {
    let images: Vec<_> = images
        .iter()
        .map(|b| {
            vk::ImageMemoryBarrier2::default()
                .image(b.image)
                .subresource_range(full_range(b.aspect))
                .old_layout(b.old_layout)
                .new_layout(b.new_layout)
                .src_stage_mask(b.src_stage)
                .src_access_mask(b.src_access)
                .dst_stage_mask(b.dst_stage)
                .dst_access_mask(b.dst_access)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        })
        .collect();
    let buffers: Vec<_> = buffers
        .iter()
        .map(|b| {
            vk::BufferMemoryBarrier2::default()
                .buffer(b.buffer)
                .offset(0)
                .size(vk::WHOLE_SIZE)
                .src_stage_mask(b.src_stage)
                .src_access_mask(b.src_access)
                .dst_stage_mask(b.dst_stage)
                .dst_access_mask(b.dst_access)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        })
        .collect();
    let dep = vk::DependencyInfo::default()
        .image_memory_barriers(&images)
        .buffer_memory_barriers(&buffers);
    // SAFETY: `cmd` is recording; the handles are the caller's live objects.
    unsafe { device.raw().cmd_pipeline_barrier2(cmd, &dep) };
}
