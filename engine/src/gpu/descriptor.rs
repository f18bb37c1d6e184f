use std::sync::Arc;

use ash::vk;

use super::retire::Garbage;
use super::{Buffer, BufferView, Device, GpuResult};

/// One binding of a set layout.
#[derive(Clone, Copy, Debug)]
pub struct BindingDesc {
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub count: u32,
    pub stages: vk::ShaderStageFlags,
}

impl BindingDesc {
    pub const fn new(binding: u32, ty: vk::DescriptorType, stages: vk::ShaderStageFlags) -> Self {
        Self {
            binding,
            ty,
            count: 1,
            stages,
        }
    }
}

/// A descriptor set layout, destroyed on drop.
pub struct DescriptorSetLayout {
    device: Arc<Device>,
    raw: vk::DescriptorSetLayout,
    bindings: Vec<BindingDesc>,
}

impl DescriptorSetLayout {
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
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.raw().create_descriptor_set_layout(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
            bindings: bindings.to_vec(),
        })
    }

    pub fn raw(&self) -> vk::DescriptorSetLayout {
        self.raw
    }

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
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.raw().create_descriptor_pool(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
        })
    }

    pub fn allocate(
        &self,
        layout: &DescriptorSetLayout,
        count: usize,
    ) -> GpuResult<Vec<vk::DescriptorSet>> {
        let layouts = vec![layout.raw(); count];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.raw)
            .set_layouts(&layouts);
        // SAFETY: a live pool and layout of this device.
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

/// Points `binding` of `set` at the whole of `buffer`.
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
    // SAFETY: the set is not in use by a pending command buffer (callers
    // write sets once, before first use).
    unsafe { device.raw().update_descriptor_sets(&write, &[]) };
}

/// Points `binding` of `set` at a texel buffer view.
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
    // SAFETY: as in `write_buffer_range`.
    unsafe { device.raw().update_descriptor_sets(&write, &[]) };
}
