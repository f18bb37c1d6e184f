//! Loaders: glTF 2.0 and DirectX .x into a [`Model`], plus the engine's
//! built-in demo models. No Vulkan here.

pub mod builtin;
mod error;
pub mod gltf;
mod model;
pub mod x;

use std::path::Path;

pub use error::{FaultKind, LoadError, Place};
pub use model::{Bounds, Material, Model, SkinnedVertices, TextureSource};

use crate::anim::Interpolation;

/// Choices a loader makes that a caller may want otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadOptions {
    /// Influences kept per vertex after normalisation (1..=8): the largest
    /// weights are kept and renormalised. 4 by default; 8 keeps what the
    /// 8-influence shader permutation can draw.
    pub max_influences: usize,
    /// Interpolation of .x rotation keys: SQUAD by default (seed 003), or
    /// `Linear` for slerp.
    pub x_rotation_interpolation: Interpolation,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            max_influences: 4,
            x_rotation_interpolation: Interpolation::Squad,
        }
    }
}

/// Loads a model, choosing the loader by file extension (`.gltf`, `.glb`, `.x`).
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
        _ => Err(LoadError::new(
            path,
            Place::Unknown,
            FaultKind::Unsupported,
            format!("unknown model format {ext:?} (expected .gltf, .glb or .x)"),
        )),
    }
}
