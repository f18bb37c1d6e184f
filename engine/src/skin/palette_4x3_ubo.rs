use std::sync::Arc;

use glam::Affine3A;

use crate::anim::Affine4x3;
use crate::gpu::{
    vk, write_buffer, BindingDesc, Buffer, BufferDesc, DescriptorPool, DescriptorSetLayout, Device,
    GpuError, GpuResult, PipelineLayout,
};

use super::SkinningPath;

pub(crate) const NAME: &str = "4x3-ubo";

/// The 4x3 palette in a uniform buffer: per bone the top three rows of the
/// skinning matrix ([`Affine4x3`], 48 bytes), std140 `vec4 rows[3 * N]`
/// with `N = PALETTE_CAPACITY`. The capacity is bounded by
/// `maxUniformBufferRange` (64 KiB on lavapipe: 1365 bones).
pub struct Palette4x3Ubo {
    layout: DescriptorSetLayout,
    buffers: Vec<Buffer>,
    sets: Vec<vk::DescriptorSet>,
    capacity: usize,
    _pool: DescriptorPool,
    scratch: Vec<Affine4x3>,
}

impl Palette4x3Ubo {
    pub const BYTES_PER_BONE: usize = std::mem::size_of::<Affine4x3>();

    pub fn new(device: &Arc<Device>, capacity: usize, frames_in_flight: usize) -> GpuResult<Self> {
        if capacity == 0 || frames_in_flight == 0 {
            return Err(GpuError::InvalidArgument(
                "a palette needs at least one bone and one frame in flight".into(),
            ));
        }
        let bytes = (capacity * Self::BYTES_PER_BONE) as u64;
        let limit = u64::from(device.limits().max_uniform_buffer_range);
        if bytes > limit {
            return Err(GpuError::Limit {
                what: "4x3 palette uniform buffer bytes",
                needed: bytes,
                limit,
            });
        }
        let layout = DescriptorSetLayout::new(
            device,
            &[BindingDesc::new(
                0,
                vk::DescriptorType::UNIFORM_BUFFER,
                vk::ShaderStageFlags::VERTEX,
            )],
        )?;
        let pool = DescriptorPool::new(device, &[&layout], frames_in_flight as u32)?;
        let sets = pool.allocate(&layout, frames_in_flight)?;
        let mut buffers = Vec::with_capacity(frames_in_flight);
        for &set in &sets {
            let mut b = Buffer::new(
                device,
                &BufferDesc::host("palette 4x3", bytes, vk::BufferUsageFlags::UNIFORM_BUFFER),
            )?;
            // Bind-pose palette until the first upload: never garbage.
            b.write(0, &vec![Affine4x3::IDENTITY; capacity])?;
            write_buffer(device, set, 0, vk::DescriptorType::UNIFORM_BUFFER, &b);
            buffers.push(b);
        }
        Ok(Self {
            layout,
            buffers,
            sets,
            capacity,
            _pool: pool,
            scratch: Vec::with_capacity(capacity),
        })
    }

    /// Frame `frame`'s palette rows as stored.
    pub fn rows(&self, frame: usize) -> GpuResult<Vec<Affine4x3>> {
        self.buffer(frame)?.read(0, self.capacity)
    }

    fn buffer(&self, frame: usize) -> GpuResult<&Buffer> {
        self.buffers.get(frame).ok_or_else(|| {
            GpuError::InvalidArgument(format!(
                "frame {frame} outside {} frames in flight",
                self.buffers.len()
            ))
        })
    }
}

impl SkinningPath for Palette4x3Ubo {
    fn name(&self) -> &'static str {
        NAME
    }

    fn vertex_shader(&self) -> &'static str {
        "skin/lbs_4x3_ubo.vert"
    }

    fn defines(&self) -> Vec<(String, String)> {
        vec![("PALETTE_CAPACITY".into(), self.capacity.to_string())]
    }

    fn set_layout(&self) -> &DescriptorSetLayout {
        &self.layout
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn frames_in_flight(&self) -> usize {
        self.buffers.len()
    }

    fn upload(&mut self, frame: usize, skin: &[Affine3A]) -> GpuResult<()> {
        if skin.len() > self.capacity {
            return Err(GpuError::Limit {
                what: "palette bones",
                needed: skin.len() as u64,
                limit: self.capacity as u64,
            });
        }
        self.scratch.clear();
        self.scratch.extend(skin.iter().map(Affine4x3::from_affine));
        let n = self.buffers.len();
        let buffer = self.buffers.get_mut(frame).ok_or_else(|| {
            GpuError::InvalidArgument(format!("frame {frame} outside {n} frames in flight"))
        })?;
        buffer.write(0, &self.scratch)
    }

    fn read_back(&self, frame: usize) -> GpuResult<Vec<Affine3A>> {
        Ok(self.rows(frame)?.iter().map(Affine4x3::to_affine).collect())
    }

    fn bind(&self, device: &Device, cmd: vk::CommandBuffer, layout: &PipelineLayout, frame: usize) {
        let set = [self.sets[frame % self.sets.len()]];
        // SAFETY: `cmd` is recording; the layout's set 1 is this path's.
        unsafe {
            device.raw().cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                layout.raw(),
                1,
                &set,
                &[],
            )
        };
    }
}
