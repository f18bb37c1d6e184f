//! Synchronization2 barriers: the one way the engine orders GPU work.

use ash::vk;

use super::{full_range, Device};

/// One image layout transition / memory dependency, over the image's one
/// mip level and array layer (see [`full_range`]), with no queue family
/// ownership transfer.
#[derive(Clone, Copy, Debug)]
pub struct ImageBarrier {
    /// The image; it must stay alive until the command buffer has executed.
    pub image: vk::Image,
    /// The aspect(s) the barrier covers (colour or depth).
    pub aspect: vk::ImageAspectFlags,
    /// The layout the image is in before the barrier (`UNDEFINED` discards
    /// its contents).
    pub old_layout: vk::ImageLayout,
    /// The layout the image is in after the barrier.
    pub new_layout: vk::ImageLayout,
    /// Stages whose earlier work must finish first.
    pub src_stage: vk::PipelineStageFlags2,
    /// Writes of those stages made available.
    pub src_access: vk::AccessFlags2,
    /// Stages of later work that wait.
    pub dst_stage: vk::PipelineStageFlags2,
    /// Accesses of those stages the writes are made visible to.
    pub dst_access: vk::AccessFlags2,
}

/// One buffer memory dependency over the whole buffer, with no queue
/// family ownership transfer.
#[derive(Clone, Copy, Debug)]
pub struct BufferBarrier {
    /// The buffer; it must stay alive until the command buffer has executed.
    pub buffer: vk::Buffer,
    /// Stages whose earlier work must finish first.
    pub src_stage: vk::PipelineStageFlags2,
    /// Writes of those stages made available.
    pub src_access: vk::AccessFlags2,
    /// Stages of later work that wait.
    pub dst_stage: vk::PipelineStageFlags2,
    /// Accesses of those stages the writes are made visible to.
    pub dst_access: vk::AccessFlags2,
}

/// Barriers recorded per `vkCmdPipelineBarrier2` call: the Vulkan structs
/// are built on the stack, so recording never allocates.
const BATCH: usize = 8;

/// Records the barriers (in one `vkCmdPipelineBarrier2`, or one per eight).
/// `cmd` must be a command buffer of `device` in the recording state, and
/// every handle named must be a live object of `device`.
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
        // SAFETY: `device.raw()` is the live device the `&Device` borrow
        // keeps alive; `dep` points at `image_barriers[..ni]` and
        // `buffer_barriers[..nb]`, stack arrays that outlive this call, and
        // the slices stay within their BATCH elements. `cmd` is recording
        // and the image/buffer handles are live objects of this device, as
        // the function's documented contract requires of the caller (engine
        // objects are destroyed only after the frames using them retire).
        unsafe { device.raw().cmd_pipeline_barrier2(cmd, &dep) };
    }
}

/// Records one global memory dependency (no buffer or image named). `cmd`
/// must be a command buffer of `device` in the recording state.
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
    // SAFETY: `device.raw()` is the live device the `&Device` borrow keeps
    // alive; `dep` points at the local `barrier` array, alive for the call;
    // `cmd` is recording, per the function's documented contract.
    unsafe { device.raw().cmd_pipeline_barrier2(cmd, &dep) };
}
