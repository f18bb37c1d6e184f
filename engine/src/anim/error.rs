use thiserror::Error;

/// Errors of the animation layer: bad hierarchies, bad clips, and jobs whose
/// inputs do not fit together.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AnimError {
    /// A hierarchy link names a joint index outside the skeleton.
    #[error("joint {joint} has parent {parent}, outside 0..{count}")]
    ParentOutOfRange {
        /// The linked joint (from first-child / sibling links, the child
        /// index, which may itself be the one out of range).
        joint: usize,
        /// The parent index of the link.
        parent: usize,
        /// Number of joints in the hierarchy.
        count: usize,
    },
    /// Following parent (or sibling) links from a joint never reaches a root.
    #[error("the joint hierarchy has a cycle through joint {joint} ({name:?})")]
    Cycle {
        /// A joint on or below the cycle, as an input index.
        joint: usize,
        /// That joint's name.
        name: String,
    },
    /// First-child / sibling links reach a joint from two parents.
    #[error("joint {joint} ({name:?}) is reached from two parents")]
    TwoParents {
        /// The joint reached twice, as an input index.
        joint: usize,
        /// That joint's name.
        name: String,
    },
    /// Two joints share a name, so a lookup by name would be ambiguous.
    #[error("duplicate joint name {name:?} (joints {first} and {second})")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// Index of the first joint with that name.
        first: usize,
        /// Index of the second joint with that name.
        second: usize,
    },
    /// More joints than [`MAX_JOINTS`](crate::anim::MAX_JOINTS).
    #[error("{count} joints is more than the {max} a skeleton can hold")]
    TooManyJoints {
        /// Number of joints asked for.
        count: usize,
        /// Most joints a skeleton holds.
        max: usize,
    },
    /// Two inputs that must have the same number of entries do not.
    #[error("{what}: expected {expected} entries, got {got}")]
    LengthMismatch {
        /// Which input has the wrong length.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        got: usize,
    },
    /// A clip does not fit its skeleton or holds bad keys.
    #[error("clip {clip:?}: {fault}")]
    InvalidClip {
        /// The clip's name.
        clip: String,
        /// What is wrong with it.
        fault: String,
    },
    /// A job's inputs and outputs do not fit together; the message says how.
    #[error("invalid job: {0}")]
    InvalidJob(String),
}
