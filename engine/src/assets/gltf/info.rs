//! What a glTF load reports beyond the model ([`GltfInfo`]).

use crate::anim::Interpolation;

/// Where a [`crate::mesh::SkinnedMesh`] of the model came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshSource {
    /// Index of the node that instances the mesh.
    pub node: usize,
    /// Index into the file's `meshes`.
    pub mesh: usize,
    /// Index into that mesh's `primitives`.
    pub primitive: usize,
    /// Whether it is bound through one of the file's skins (else rigidly to
    /// its node).
    pub skinned: bool,
}

/// What the glTF file says beyond the [`crate::assets::Model`]: how nodes, skins and
/// meshes map onto it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GltfInfo {
    /// Skeleton joint of each node (`node_joints[node]`).
    pub node_joints: Vec<usize>,
    /// `Model::skins[..file_skins]` are the file's skins; the rest are the
    /// rigid one-joint skins of unskinned mesh nodes.
    pub file_skins: usize,
    /// One entry per `Model::meshes` entry.
    pub mesh_sources: Vec<MeshSource>,
    /// One entry per `Model::clips` entry: the channels read into it.
    pub clip_channels: Vec<Vec<ChannelInfo>>,
    /// Index into `Model::morph_sets` of each node's morph weights
    /// (`morph_set_of_node[node]`): `Some` for the nodes that instance a
    /// mesh with morph targets.
    pub morph_set_of_node: Vec<Option<usize>>,
}

/// One animation channel as read: what it drives and how many keys it has.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelInfo {
    /// Index of the node the channel targets.
    pub node: usize,
    /// Skeleton joint of `node`.
    pub joint: usize,
    /// `"translation"`, `"rotation"`, `"scale"` or `"weights"`.
    pub path: &'static str,
    /// For a `"weights"` channel, the run of the model's morph weight
    /// vector it animates (the node's `MorphSet`); `None` otherwise.
    pub weights: Option<std::ops::Range<usize>>,
    /// Number of keys.
    pub keys: usize,
    /// The sampler's interpolation.
    pub interpolation: Interpolation,
    /// First key time, seconds.
    pub start: f32,
    /// Last key time, seconds.
    pub end: f32,
}
