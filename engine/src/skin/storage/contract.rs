//! What every palette storage provides ([`Storage`]) and the draws it
//! records ([`PartDraw`]): the contract between `SkinPath` and the
//! storage files, below both.

use crate::skin::DrawPush;
use std::sync::Arc;

use crate::gpu::{vk, write_buffer, Buffer, BufferView, Device, GpuError, GpuResult};

/// The most bytes a storage may put in front of the stages' push
/// constants ([`Storage::push_prefix_len`]).
pub const MAX_PUSH_PREFIX: usize = 32;

/// The error for a storage whose push prefix is longer than
/// [`MAX_PUSH_PREFIX`].
pub(crate) fn prefix_too_long(len: usize) -> GpuError {
    GpuError::InvalidArgument(format!(
        "a palette storage's push-constant prefix of {len} bytes exceeds {MAX_PUSH_PREFIX}"
    ))
}

/// Push-constant bytes assembled on the stack, so that recording a frame
/// allocates nothing: a storage's prefix, then one push struct
/// ([`DrawPush`] or the compute stage's push).
pub(crate) struct PushBytes {
    bytes: [u8; MAX_PUSH_PREFIX + PushBytes::MAX_BODY],
    len: usize,
}

impl PushBytes {
    /// The largest push struct after a prefix.
    const MAX_BODY: usize = 32;

    /// `prefix` then the bytes of `body`.
    pub(crate) fn new<T: bytemuck::Pod>(prefix: &[u8], body: &T) -> GpuResult<Self> {
        let body = bytemuck::bytes_of(body);
        if prefix.len() > MAX_PUSH_PREFIX {
            return Err(prefix_too_long(prefix.len()));
        }
        if body.len() > Self::MAX_BODY {
            return Err(GpuError::InvalidArgument(format!(
                "a push struct of {} bytes exceeds {}",
                body.len(),
                Self::MAX_BODY
            )));
        }
        let mut bytes = [0u8; MAX_PUSH_PREFIX + Self::MAX_BODY];
        let len = prefix.len() + body.len();
        bytes[..prefix.len()].copy_from_slice(prefix);
        bytes[prefix.len()..len].copy_from_slice(body);
        Ok(Self { bytes, len })
    }

    /// The assembled bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// One palette storage.
pub trait Storage: Send + Sync {
    /// Short name, the second part of a path name.
    fn name(&self) -> &'static str;
    /// The GLSL file defining `palette_vec4`.
    fn shader(&self) -> &'static str;
    /// The GLSL block (or buffer reference) that holds the palette as
    /// `vec4 v[]`, whose layout the tests check against the SPIR-V; `None`
    /// when the palette is not a block (texels).
    fn glsl_block(&self) -> Option<&'static str>;
    /// The descriptor of pipeline set 1, binding 0; `None` when the palette
    /// is reached without one (push constants, a buffer address).
    fn descriptor(&self) -> Option<vk::DescriptorType>;
    /// Usage of the per-frame palette buffer.
    fn usage(&self) -> vk::BufferUsageFlags;
    /// vec4s one draw can address from its base: the window a partition
    /// must fit in, and with it the bones per draw.
    fn window_vec4s(&self, limits: &vk::PhysicalDeviceLimits) -> u64;
    /// The device limit behind [`Storage::window_vec4s`], named and valued
    /// as errors and the path table print it.
    fn limit_text(&self, limits: &vk::PhysicalDeviceLimits) -> String;
    /// Alignment in bytes of a draw's window start (dynamic offsets).
    fn offset_alignment(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        let _ = limits;
        16
    }
    /// Whether many instances share one draw (the window covers the frame).
    fn instanced(&self) -> bool;
    /// Whether the shader declares a fixed window (`PALETTE_VEC4S`) that a
    /// mesh's palette must fit: larger meshes are partitioned.
    fn windowed(&self) -> bool {
        false
    }
    /// Whether the palettes stay in host memory and travel in push
    /// constants (no palette buffer).
    fn in_push_constants(&self) -> bool {
        false
    }
    /// Whether the compute stage can read its palettes from this storage.
    fn serves_compute(&self) -> bool {
        false
    }
    /// Checks that `device` enabled what this storage needs; the error
    /// names the missing feature.
    fn check_device(&self, device: &Device) -> GpuResult<()> {
        let _ = device;
        Ok(())
    }
    /// vec4s the palette buffer holds past its last batch (a dynamic
    /// uniform window may start at the last batch).
    fn tail_vec4s(&self, window: usize) -> usize {
        let _ = window;
        0
    }
    /// Points the frame's palette set at `buffer` (`window` vec4s readable
    /// from a draw's base); returns a view the set refers to, to be kept
    /// alive with the buffer.
    fn write_set(
        &self,
        device: &Arc<Device>,
        set: vk::DescriptorSet,
        buffer: &Buffer,
        window: usize,
    ) -> GpuResult<Option<BufferView>> {
        let _ = window;
        if let Some(ty) = self.descriptor() {
            write_buffer(device, set, 0, ty, buffer);
        }
        Ok(None)
    }
    /// Bytes this storage puts in front of the stage's push constants
    /// (`PALETTE_PUSH_FIELDS` in its GLSL); at most [`MAX_PUSH_PREFIX`].
    fn push_prefix_len(&self) -> usize {
        0
    }
    /// Those bytes for the frame's palette `buffer`.
    fn push_prefix(&self, buffer: &Buffer) -> GpuResult<Vec<u8>> {
        let _ = buffer;
        Ok(Vec::new())
    }
    /// Records the draws of one partition of a batch (vertex stage): the
    /// default binds the frame's palette set and draws every instance at
    /// once, each finding its palette from the base and stride pushed.
    fn record_part(&self, draw: &PartDraw<'_>) -> GpuResult<()> {
        draw.bind_palette(&[]);
        draw.push_draw(draw.palette_base, draw.first_instance)?;
        draw.draw(draw.count, draw.first_instance);
        Ok(())
    }
}

/// The vertex stage's draws of one partition of a batch, handed to
/// [`Storage::record_part`]: where the palettes are and what to draw. Its
/// methods record into a command buffer inside a rendering scope with the
/// path's graphics pipeline bound.
pub struct PartDraw<'a> {
    pub(crate) device: &'a Device,
    pub(crate) cmd: vk::CommandBuffer,
    pub(crate) layout: vk::PipelineLayout,
    /// The frame's palette set (null when the storage has no descriptor).
    pub(crate) palette_set: vk::DescriptorSet,
    /// The storage's push-constant prefix for this frame.
    pub(crate) push_prefix: &'a [u8],
    /// The frame's palettes when they stay in host memory (push storage).
    pub host_palettes: &'a [[f32; 4]],
    /// vec4s one draw can address from its base.
    pub window: usize,
    /// First vec4 of the first instance's part of the palette.
    pub palette_base: usize,
    /// vec4s from one instance's palette to the next.
    pub stride: usize,
    /// vec4s of this partition's palette.
    pub part_vec4s: usize,
    /// Motion: vec4s from an instance's partition palette to its previous
    /// one (which the draw's window must reach too); 0 without motion.
    pub previous_offset: usize,
    /// Instances in the batch.
    pub count: u32,
    /// Instance record of the batch's first instance.
    pub first_instance: u32,
    pub(crate) index_count: u32,
    pub(crate) first_index: u32,
    pub(crate) vertex_offset: i32,
}

impl PartDraw<'_> {
    /// Binds the frame's palette set (set 1) with `dynamic_offsets`
    /// (bytes); nothing when the storage has no descriptor.
    pub fn bind_palette(&self, dynamic_offsets: &[u32]) {
        if self.palette_set == vk::DescriptorSet::null() {
            return;
        }
        // SAFETY: `cmd` is recording inside a rendering scope (the caller,
        // `SkinPath::record_draw`, checked the batch); the set was allocated
        // from this path's set-1 layout, which its pipeline layout holds,
        // and was written before any draw could bind it.
        unsafe {
            self.device.raw().cmd_bind_descriptor_sets(
                self.cmd,
                vk::PipelineBindPoint::GRAPHICS,
                self.layout,
                1,
                &[self.palette_set],
                dynamic_offsets,
            )
        }
    }

    /// Pushes `bytes` at offset 0 of the vertex push-constant range.
    pub fn push_bytes(&self, bytes: &[u8]) {
        self.push_bytes_at(0, bytes);
    }

    /// Pushes `bytes` at byte `offset` of the vertex push-constant range
    /// (the caller keeps `offset + bytes.len()` inside the window it was
    /// sized for).
    pub(crate) fn push_bytes_at(&self, offset: u32, bytes: &[u8]) {
        // SAFETY: `cmd` is recording; the layout's vertex push range starts
        // at 0 and was sized for the largest push of this storage (the whole
        // window for the push storage, prefix + `DrawPush` otherwise), which
        // the callers stay inside (the push storage pushes a partition's
        // palette at 0 and, with motion, its previous one at half the
        // window, each at most half the window then).
        unsafe {
            self.device.raw().cmd_push_constants(
                self.cmd,
                self.layout,
                vk::ShaderStageFlags::VERTEX,
                offset,
                bytes,
            )
        }
    }

    /// Pushes the storage's prefix and a [`DrawPush`]: the draw's first
    /// palette vec4 (relative to the bound window) and first instance.
    pub fn push_draw(&self, palette_base: usize, first_instance: u32) -> GpuResult<()> {
        let base = u32::try_from(palette_base).map_err(|_| GpuError::Limit {
            what: "palette vec4 index of a draw (32-bit)",
            needed: palette_base as u64,
            limit: u64::from(u32::MAX),
        })?;
        let push = DrawPush {
            palette_base: base,
            palette_stride: self.stride as u32,
            first_instance,
            previous_offset: self.previous_offset as u32,
        };
        self.push_bytes(PushBytes::new(self.push_prefix, &push)?.as_slice());
        Ok(())
    }

    /// Draws the partition's triangles for `instances` instances from
    /// instance record `first_instance`.
    pub fn draw(&self, instances: u32, first_instance: u32) {
        // SAFETY: `cmd` is recording inside a rendering scope with the
        // path's pipeline, index and vertex buffers bound (by
        // `record_draw`); the part's index range lies in the index buffer
        // and the instance records up to the batch's end exist.
        unsafe {
            self.device.raw().cmd_draw_indexed(
                self.cmd,
                self.index_count,
                instances,
                self.first_index,
                self.vertex_offset,
                first_instance,
            )
        }
    }
}
