//! The shared state of one glTF load ([`Ctx`]): the file, its JSON and
//! buffers, the output budget and the warnings. Below the loader's parts.

use std::path::Path;

use gltf::json;

use super::container;
use crate::assets::{FaultKind, LoadError, LoadOptions, Place};

/// Shared state of one load.
pub(super) struct Ctx<'a> {
    pub(super) file: &'a Path,
    pub(super) root: &'a json::Root,
    pub(super) buffers: container::Buffers<'a>,
    /// Bytes of output still allowed.
    pub(super) budget: u64,
    pub(super) warnings: Vec<String>,
    pub(super) options: &'a LoadOptions,
}

impl Ctx<'_> {
    pub(super) fn err(&self, item: &str, kind: FaultKind, message: impl Into<String>) -> LoadError {
        LoadError::new(self.file, Place::Item(item.to_string()), kind, message)
    }

    pub(super) fn warn(&mut self, w: String) {
        self.warnings.push(w);
    }

    /// Takes `bytes` from the output budget, or fails naming `item`.
    pub(super) fn charge(&mut self, bytes: u64, item: &str) -> Result<(), LoadError> {
        match self.budget.checked_sub(bytes) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(self.err(
                item,
                FaultKind::Count,
                format!(
                    "needs {bytes} more bytes of output than the loader allows for a file this size"
                ),
            )),
        }
    }
}
