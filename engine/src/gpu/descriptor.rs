use std::sync::Arc;

use ash::vk;

use super::retire::Garbage;
use super::{Buffer, BufferView, Device, GpuResult};

/// One binding of a set layout.
#[derive(Clone, Copy, Debug)]
pub struct BindingDesc {
    /// The binding number in the set (`layout(binding = N)`).
    pub binding: u32,
    /// The descriptor type.
    pub ty: vk::DescriptorType,
    /// Number of descriptors (array elements) in the binding.
    pub count: u32,
    /// The shader stages that read the binding.
    pub stages: vk::ShaderStageFlags,
}

impl BindingDesc {
    /// One descriptor of type `ty` at `binding`, visible to `stages`.
    pub const fn new(binding: u32, ty: vk::DescriptorType, stages: vk::ShaderStageFlags) -> Self {
        Self {
            binding,
            ty,
            count: 1,
            stages,
        }
    }
}

/// A descriptor set layout, destroyed on drop once the frames that may use
/// it have retired.
pub struct DescriptorSetLayout {
    device: Arc<Device>,
    raw: vk::DescriptorSetLayout,
    bindings: Vec<BindingDesc>,
}

impl DescriptorSetLayout {
    /// Creates a layout with `bindings` (kept, so pools can be sized for
    /// it).
    pub fn new(device: &Arc<Device>, bindings: &[BindingDesc]) -> GpuResult<Self> {
        let raw_bindings: Vec<_> = bindings
            .iter()
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b.binding)
                    .descriptor_type(b.ty)
                    .descriptor_count(b.count)
                    .stage_flags(b.stages)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&raw_bindings);
        // SAFETY: `device` is live (the caller's `Arc`); `info` points at
        // `raw_bindings`, a local that outlives the call.
        let raw = unsafe { device.raw().create_descriptor_set_layout(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
            bindings: bindings.to_vec(),
        })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::DescriptorSetLayout {
        self.raw
    }

    /// The bindings the layout was created with.
    pub fn bindings(&self) -> &[BindingDesc] {
        &self.bindings
    }
}

impl Drop for DescriptorSetLayout {
    fn drop(&mut self) {
        self.device.retire(Garbage::DescriptorSetLayout(self.raw));
    }
}

/// A descriptor pool sized for `sets` copies of the given layouts'
/// bindings. Sets are freed with the pool.
pub struct DescriptorPool {
    device: Arc<Device>,
    raw: vk::DescriptorPool,
}

impl DescriptorPool {
    /// A pool with room for `sets` sets of each layout in `layouts`.
    pub fn new(
        device: &Arc<Device>,
        layouts: &[&DescriptorSetLayout],
        sets: u32,
    ) -> GpuResult<Self> {
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for b in layouts.iter().flat_map(|l| l.bindings()) {
            match sizes.iter_mut().find(|s| s.ty == b.ty) {
                Some(s) => s.descriptor_count += b.count * sets,
                None => sizes.push(
                    vk::DescriptorPoolSize::default()
                        .ty(b.ty)
                        .descriptor_count(b.count * sets),
                ),
            }
        }
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(sets * layouts.len().max(1) as u32)
            .pool_sizes(&sizes);
        // SAFETY: `device` is live (the caller's `Arc`); `info` points at
        // `sizes`, a local that outlives the call.
        let raw = unsafe { device.raw().create_descriptor_pool(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    /// Allocates `count` sets of `layout` from the pool (an error once the
    /// pool is exhausted). The sets are freed with the pool. Two threads
    /// must not allocate from one pool at the same time.
    pub fn allocate(
        &self,
        layout: &DescriptorSetLayout,
        count: usize,
    ) -> GpuResult<Vec<vk::DescriptorSet>> {
        let layouts = vec![layout.raw(); count];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.raw)
            .set_layouts(&layouts);
        // SAFETY: `self.raw` is a live pool of `self.device` (kept alive by
        // the `Arc`) and `layout` a live layout of the same device, borrowed
        // for the call; `info` points at the local `layouts`. Vulkan wants
        // the pool externally synchronised: every engine caller allocates
        // in the function that created the pool, before the pool can reach
        // another thread, as the doc comment asks of callers.
        Ok(unsafe { self.device.raw().allocate_descriptor_sets(&info)? })
    }
}

impl Drop for DescriptorPool {
    fn drop(&mut self) {
        // Its sets die with it: destroyed once the frames that may have
        // them bound have retired.
        self.device.retire(Garbage::DescriptorPool(self.raw));
    }
}

/// Points `binding` of `set` at the whole of `buffer`. The same contract as
/// [`write_buffer_range`].
pub fn write_buffer(
    device: &Device,
    set: vk::DescriptorSet,
    binding: u32,
    ty: vk::DescriptorType,
    buffer: &Buffer,
) {
    write_buffer_range(device, set, binding, ty, buffer, 0, buffer.size());
}

/// Points `binding` of `set` at `range` bytes of `buffer` from `offset`
/// (for dynamic uniform buffers, the window each dynamic offset moves).
/// `set` must be a set of `device` that no pending command buffer uses and
/// that no other thread updates meanwhile.
pub fn write_buffer_range(
    device: &Device,
    set: vk::DescriptorSet,
    binding: u32,
    ty: vk::DescriptorType,
    buffer: &Buffer,
    offset: u64,
    range: u64,
) {
    let info = [vk::DescriptorBufferInfo::default()
        .buffer(buffer.raw())
        .offset(offset)
        .range(range)];
    let write = [vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .descriptor_type(ty)
        .buffer_info(&info)];
    // SAFETY: `device.raw()` is live for the `&Device` borrow and `buffer`
    // is a live buffer of it, borrowed for the call; `write` points at the
    // local `info`, alive for the call. `set` is not used by a pending
    // command buffer and not updated elsewhere meanwhile, per the documented
    // contract (callers write their sets once, before first use).
    unsafe { device.raw().update_descriptor_sets(&write, &[]) };
}

/// Points `binding` of `set` at a texel buffer view. The same contract as
/// [`write_buffer_range`].
pub fn write_texel_buffer(
    device: &Device,
    set: vk::DescriptorSet,
    binding: u32,
    ty: vk::DescriptorType,
    view: &BufferView,
) {
    let views = [view.raw()];
    let write = [vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .descriptor_type(ty)
        .texel_buffer_view(&views)];
    // SAFETY: `device.raw()` is live for the `&Device` borrow and `view` a
    // live view of it, borrowed for the call; `write` points at the local
    // `views`, alive for the call. `set` is idle and not updated elsewhere,
    // per the documented contract (as for `write_buffer_range`).
    unsafe { device.raw().update_descriptor_sets(&write, &[]) };
}
