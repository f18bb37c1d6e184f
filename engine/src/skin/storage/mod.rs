//! Palette storages: where a frame's palettes live and how a draw reaches
//! its own (`shaders/skin/storage/*.glsl`, each defining `palette_vec4`).
//!
//! One file per storage: everything that differs between storages lives in
//! its [`Storage`] impl (descriptor and how it is written, how a draw
//! reaches its window, the device limit that bounds it and how that limit
//! is named, the features it needs). Adding a storage is a file here, its
//! GLSL file and one entry in [`STORAGES`]; the registry makes its paths.

mod bda;
mod contract;
mod push;
mod ssbo;
mod texel;
mod ubo;

pub(crate) use contract::{prefix_too_long, PushBytes};
pub use contract::{PartDraw, Storage, MAX_PUSH_PREFIX};
pub use push::PushConstants;
pub use ssbo::StorageBuffer;
pub use texel::TexelBuffer;
pub use ubo::UniformBuffer;

/// Every storage, in the order paths are listed (the registry makes each
/// one's paths; a new storage is one line here).
#[rustfmt::skip]
pub static STORAGES: &[&dyn Storage] = &[
    &PushConstants,
    &UniformBuffer,
    &TexelBuffer,
    &StorageBuffer,
    &bda::BufferAddress,
];
