//! A model's materials on the GPU: each texture its materials name read
//! ([`crate::assets::texture::load_material_texture`]) and uploaded once
//! with its full mip chain in an sRGB format (BC1/BC2/BC3 kept compressed
//! where the device samples them, decoded on the CPU otherwise), a sampler
//! per distinct [`crate::assets::Sampler`], and one
//! [`crate::skin::GpuMaterial`] (set 4 of the skinned pipelines) per
//! material. A texture that is missing or cannot be read is a
//! [`TextureWarning`] (logged, and kept for the caller): its material draws
//! with its factor alone.
//!
//! Knows `gpu`, `skin` (the set) and `assets` (the materials and texture
//! readers).

mod model;
mod upload;

pub use model::{MaterialOptions, ModelMaterials, TextureWarning};
pub use upload::{gpu_format, sampler_desc, upload_image, UploadedImage};
