//! What the .x conversion steps share ([`Ctx`], [`JointInfo`]), below
//! them.

use std::collections::HashMap;
use std::path::Path;

use glam::Affine3A;

use super::source::Source;
use crate::assets::{LoadOptions, Material};

/// One joint as the conversion found it.
pub(crate) struct JointInfo {
    pub name: String,
    /// The frame had no name (or this is the synthetic root).
    pub generated: bool,
    pub parent: Option<usize>,
    /// The frame's `FrameTransformMatrix`, converted.
    pub local: Affine3A,
}

/// What the conversion steps share.
pub(crate) struct Ctx<'s, 'd> {
    pub src: &'s Source<'s>,
    pub options: &'s LoadOptions,
    /// The model file's folder, for texture paths.
    pub dir: &'s Path,
    pub joints: Vec<JointInfo>,
    pub materials: Vec<Material>,
    pub global_materials: HashMap<&'d str, usize>,
    pub warnings: Vec<String>,
}

impl Ctx<'_, '_> {
    pub fn warn(&mut self, w: String) {
        log::warn!("{}: {w}", self.src.file.display());
        self.warnings.push(w);
    }
}
