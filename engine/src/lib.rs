//! vkskin: skeletal (skinned-mesh) animation on Vulkan.
//!
//! Data flows one way: file -> [`assets`] -> [`assets::Model`] -> [`anim`]
//! (sample -> blend -> local-to-model -> palette) -> `skin` (upload, record
//! draws; `materials` uploads a model's textures) -> `render` (target,
//! present or read back).
//!
//! [`anim`], [`mesh`] and [`assets`] know nothing of Vulkan and build without
//! the default `gpu` feature; `gpu`, `skin`, `materials` and `render` need
//! it.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]
#![warn(unsafe_op_in_unsafe_fn)]
// Every unsafe block says why it is sound, every unsafe fn what its caller
// must uphold; every public item is documented.
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
#![warn(missing_docs)]

pub mod anim;
pub mod assets;
pub mod mesh;

#[cfg(feature = "gpu")]
pub mod embed;
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(feature = "gpu")]
pub mod materials;
#[cfg(feature = "gpu")]
pub mod render;
#[cfg(feature = "gpu")]
pub mod skin;

pub use glam;
