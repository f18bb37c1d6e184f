use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Where in a file a fault was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// No particular place (the file as a whole, e.g. it cannot be read).
    Unknown,
    /// 1-based line and column of a text file.
    Line {
        /// 1-based line.
        line: usize,
        /// 1-based column.
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
    /// The file could not be read.
    Io,
    /// Malformed text or structure (a token, a JSON document, a header).
    Syntax,
    /// The data ends before what it announces.
    Truncated,
    /// An index or reference outside what it indexes.
    OutOfRange,
    /// A count larger than the data that follows could hold.
    Count,
    /// A NaN or infinite number where a finite one is needed.
    NonFinite,
    /// An animation key type the loader does not know.
    UnknownKeyType,
    /// A name or reference to something the file does not define.
    MissingReference,
    /// A hierarchy that loops (a node its own ancestor).
    Cycle,
    /// Valid in the format but not supported by the loader.
    Unsupported,
    /// Anything else the file gets wrong.
    Invalid,
}

/// A file that could not be loaded: which file, where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{}: {place}{message}", file.display())]
pub struct LoadError {
    /// The file (or the name given for bytes loaded from memory).
    pub file: PathBuf,
    /// Where in it.
    pub place: Place,
    /// What kind of fault.
    pub kind: FaultKind,
    /// What is wrong, in words.
    pub message: String,
}

impl LoadError {
    /// An error about `file` at `place`.
    pub fn new(file: &Path, place: Place, kind: FaultKind, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            place,
            kind,
            message: message.into(),
        }
    }
}
