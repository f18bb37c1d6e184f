use std::path::PathBuf;

use glam::Vec4;

use crate::anim::{Clip, Skeleton, Skin};
use crate::mesh::SkinnedMesh;

/// Where a material's base-colour texture comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TextureSource {
    /// A file path, resolved against the model file's folder.
    File(PathBuf),
    /// Image bytes held by the model file (GLB buffer or data URI).
    Embedded { mime: String, bytes: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// Linear RGBA.
    pub base_color: Vec4,
    pub texture: Option<TextureSource>,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            name: String::new(),
            base_color: Vec4::ONE,
            texture: None,
        }
    }
}

/// Everything the engine needs of a file: the skeleton, the skins binding
/// meshes to it, the meshes (right-handed, Y up, bind pose), clips and
/// materials. Meshes without a skin in the file are bound rigidly to their
/// node through a one-joint skin, so every mesh is drawn the same way.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub name: String,
    pub source: Option<PathBuf>,
    pub skeleton: Skeleton,
    pub skins: Vec<Skin>,
    pub meshes: Vec<SkinnedMesh>,
    pub clips: Vec<Clip>,
    pub materials: Vec<Material>,
    /// Things the loader changed or dropped (truncated influences, say).
    pub warnings: Vec<String>,
}

impl Model {
    pub fn clip(&self, name: &str) -> Option<&Clip> {
        self.clips.iter().find(|c| c.name() == name)
    }

    pub fn vertex_count(&self) -> usize {
        self.meshes.iter().map(|m| m.vertex_count()).sum()
    }
}
