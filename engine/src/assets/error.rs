use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Where in a file a fault was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Unknown,
    /// 1-based line and column of a text file.
    Line {
        line: usize,
        column: usize,
    },
    /// Byte offset into the (decompressed, where so noted) data.
    Byte(u64),
    /// A path inside a structured document, e.g. `accessors[3]` or
    /// `Frame "Bip01" / Mesh / SkinWeights[2]`.
    Item(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Unknown => Ok(()),
            Place::Line { line, column } => write!(f, "line {line}, column {column}: "),
            Place::Byte(b) => write!(f, "byte {b}: "),
            Place::Item(s) => write!(f, "{s}: "),
        }
    }
}

/// The kind of fault, for callers and tests that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    Io,
    Syntax,
    Truncated,
    /// An index or reference outside what it indexes.
    OutOfRange,
    /// A count larger than the data that follows could hold.
    Count,
    NonFinite,
    UnknownKeyType,
    MissingReference,
    Cycle,
    Unsupported,
    /// Anything else the file gets wrong.
    Invalid,
}

/// A file that could not be loaded: which file, where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{}: {place}{message}", file.display())]
pub struct LoadError {
    pub file: PathBuf,
    pub place: Place,
    pub kind: FaultKind,
    pub message: String,
}

impl LoadError {
    pub fn new(file: &Path, place: Place, kind: FaultKind, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            place,
            kind,
            message: message.into(),
        }
    }
}
