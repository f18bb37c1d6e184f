//! Loaders: glTF 2.0 and DirectX .x into a [`Model`], plus the engine's
//! built-in demo models. No Vulkan here.

pub mod builtin;
pub mod clipfile;
mod error;
pub mod gltf;
mod model;
mod options;
pub mod texture;
pub mod x;

use std::path::Path;

pub use error::{FaultKind, LoadError, Place};
pub use model::{
    AlphaMode, Bounds, Filter, Material, Model, Sampler, SkinnedVertices, TextureSource, Wrap,
};
pub use options::LoadOptions;

/// Loads a model, choosing the loader by file extension (`.gltf`, `.glb`,
/// `.x`, or `.vkclip`: a clip file, skeleton and clips without meshes).
pub fn load(path: impl AsRef<Path>) -> Result<Model, LoadError> {
    load_with(path, &LoadOptions::default())
}

/// [`load`] with explicit [`LoadOptions`].
pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Model, LoadError> {
    let path = path.as_ref();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "gltf" | "glb" => gltf::load(path, options),
        "x" => x::load(path, options),
        clipfile::EXTENSION => clipfile::load(path),
        _ => Err(LoadError::new(
            path,
            Place::Unknown,
            FaultKind::Unsupported,
            format!("unknown model format {ext:?} (expected .gltf, .glb, .x or .vkclip)"),
        )),
    }
}
