//! Clip files (`.vkclip`, [`crate::anim::ClipFile`]) as models: the
//! skeleton and its compressed clips, no meshes. Open one beside a model
//! to play its clips on that model's meshes (the viewer and crowd
//! samples take `--clips FILE.vkclip`), or alone to inspect it.

use std::path::Path;

use super::error::{FaultKind, LoadError, Place};
use super::model::Model;
use crate::anim::{ClipFile, ClipFileError, ClipFileFault};

/// The extension [`super::load_with`] knows clip files by.
pub const EXTENSION: &str = ClipFile::EXTENSION;

/// A clip-file fault as a loader error (the byte offset as its place).
pub fn load_error(e: ClipFileError) -> LoadError {
    let kind = match e.fault {
        ClipFileFault::Io => FaultKind::Io,
        ClipFileFault::Magic | ClipFileFault::Version => FaultKind::Unsupported,
        ClipFileFault::Truncated => FaultKind::Truncated,
        ClipFileFault::Count => FaultKind::Count,
        ClipFileFault::Checksum | ClipFileFault::Invalid => FaultKind::Invalid,
    };
    LoadError::new(&e.file, Place::Byte(e.at), kind, e.message)
}

/// Reads a clip file into a model with its skeleton and clips.
pub fn load(path: &Path) -> Result<Model, LoadError> {
    let f = ClipFile::load(path).map_err(load_error)?;
    Ok(model_of(path, f))
}

/// [`load`] from bytes in memory; `name` names them in errors.
pub fn load_from_bytes(name: &Path, bytes: &[u8]) -> Result<Model, LoadError> {
    let f = ClipFile::from_bytes(name, bytes).map_err(load_error)?;
    Ok(model_of(name, f))
}

fn model_of(path: &Path, f: ClipFile) -> Model {
    Model {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        source: Some(path.to_path_buf()),
        skeleton: f.skeleton,
        clips: f.clips,
        ..Model::default()
    }
}
