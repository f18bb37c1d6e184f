//! DirectX .x loader (text, binary, MSZIP-compressed binary).

use std::path::Path;

use super::{FaultKind, LoadError, LoadOptions, Model, Place};

pub fn load(path: &Path, _options: &LoadOptions) -> Result<Model, LoadError> {
    Err(LoadError::new(
        path,
        Place::Unknown,
        FaultKind::Unsupported,
        "the .x loader is not written yet",
    ))
}
