use thiserror::Error;

/// Errors of the animation layer: bad hierarchies, bad clips, and jobs whose
/// inputs do not fit together.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AnimError {
    #[error("joint {joint} has parent {parent}, outside 0..{count}")]
    ParentOutOfRange {
        joint: usize,
        parent: usize,
        count: usize,
    },
    #[error("the joint hierarchy has a cycle through joint {joint} ({name:?})")]
    Cycle { joint: usize, name: String },
    #[error("joint {joint} ({name:?}) is reached from two parents")]
    TwoParents { joint: usize, name: String },
    #[error("duplicate joint name {name:?} (joints {first} and {second})")]
    DuplicateName {
        name: String,
        first: usize,
        second: usize,
    },
    #[error("{count} joints is more than the {max} a skeleton can hold")]
    TooManyJoints { count: usize, max: usize },
    #[error("{what}: expected {expected} entries, got {got}")]
    LengthMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("clip {clip:?}: {fault}")]
    InvalidClip { clip: String, fault: String },
    #[error("invalid job: {0}")]
    InvalidJob(String),
}
