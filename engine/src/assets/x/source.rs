//! The bytes being parsed and how a byte offset into them is reported.

use std::path::Path;

use super::super::{FaultKind, LoadError, Place};

/// The data the tokenizers read: the whole file, or for `tzip`/`bzip` the
/// 16-byte header followed by the decompressed payload, so that offsets
/// are comparable between the compressed and uncompressed forms.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub file: &'a Path,
    pub data: &'a [u8],
    pub text: bool,
    pub decompressed: bool,
}

impl Source<'_> {
    /// The place of a byte offset: line and column (1-based, columns in
    /// bytes) for text, the byte offset for binary.
    pub fn place(&self, offset: u32) -> Place {
        let offset = (offset as usize).min(self.data.len());
        if self.text {
            let before = &self.data[..offset];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            Place::Line {
                line,
                column: offset - line_start + 1,
            }
        } else {
            Place::Byte(offset as u64)
        }
    }

    pub fn err(&self, offset: u32, kind: FaultKind, message: impl Into<String>) -> LoadError {
        let mut message = message.into();
        if self.decompressed {
            message.push_str(" (in the decompressed data)");
        }
        LoadError::new(self.file, self.place(offset), kind, message)
    }
}
