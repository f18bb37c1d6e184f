//! Palette storages: where a frame's palettes live and how a draw reaches
//! its own (`shaders/skin/storage/*.glsl`, each defining `palette_vec4`).
//! One file per storage.

mod push;
mod ssbo;
mod texel;
mod ubo;

use crate::gpu::vk;

pub use push::PushConstants;
pub use ssbo::StorageBuffer;
pub use texel::TexelBuffer;
pub use ubo::UniformBuffer;

/// One palette storage.
pub trait Storage: Send + Sync {
    /// Short name, the second part of a path name ("push", "ubo", ...).
    fn name(&self) -> &'static str;
    /// The GLSL file defining `palette_vec4`.
    fn shader(&self) -> &'static str;
    /// The descriptor of pipeline set 1, binding 0; `None` when the palette
    /// travels in push constants.
    fn descriptor(&self) -> Option<vk::DescriptorType>;
    /// Usage of the per-frame palette buffer.
    fn usage(&self) -> vk::BufferUsageFlags;
    /// vec4s one draw can address from its base: the window a partition
    /// must fit in, and with it the bones per draw.
    fn window_vec4s(&self, limits: &vk::PhysicalDeviceLimits) -> u64;
    /// Alignment in bytes of a draw's window start (dynamic offsets).
    fn offset_alignment(&self, limits: &vk::PhysicalDeviceLimits) -> u64 {
        let _ = limits;
        16
    }
    /// Whether many instances share one draw (the window covers the frame).
    fn instanced(&self) -> bool;
}

/// Every storage, in the order paths are listed.
pub static STORAGES: [&dyn Storage; 4] =
    [&PushConstants, &UniformBuffer, &TexelBuffer, &StorageBuffer];
