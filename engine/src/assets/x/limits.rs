//! The .x loader's names and resource limits, below its parts.

/// Name of the joint that meshes outside any frame are bound to.
pub const SYNTHETIC_ROOT: &str = "$root";
/// Prefix of the one-joint skins of meshes that have no `SkinWeights`.
pub const RIGID_SKIN_PREFIX: &str = "rigid:";

/// Resource limits for hostile input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes a `tzip`/`bzip` file may inflate to, its 16-byte header
    /// included. At most `u32::MAX` is honoured.
    pub max_decompressed: usize,
    /// Deepest nesting of data objects (templates' braces included).
    pub max_depth: usize,
    /// Most (animation set, joint) pairs: a runtime clip holds every joint
    /// of the skeleton, so many sets over many frames would otherwise grow
    /// with the product of two counts a small file can make large.
    pub max_clip_joints: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_decompressed: 1 << 30,
            max_depth: 256,
            max_clip_joints: 1 << 22,
        }
    }
}
