//! Morph targets (blend shapes): per-vertex displacements a mesh adds to
//! its bind-pose vertices, each scaled by a weight, before skinning
//! (glTF 2.0's order: `base + sum(weight_i * delta_i)`, then the skin).

use glam::Vec3;

/// One target's displacements of a mesh's vertices. Each attribute is
/// either empty (the target does not move it) or one delta per vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTarget {
    /// Position deltas, model space, bind pose.
    pub positions: Vec<Vec3>,
    /// Normal deltas (added before the normal is renormalised).
    pub normals: Vec<Vec3>,
    /// Tangent deltas (the `xyz` of a tangent; its handedness `w` is not
    /// morphed).
    pub tangents: Vec<Vec3>,
    /// Whether the file stored it sparsely (for tools; the deltas here are
    /// always dense).
    pub sparse: bool,
}

impl MorphTarget {
    /// Whether the target moves nothing.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty() && self.normals.is_empty() && self.tangents.is_empty()
    }
}

/// A mesh's morph targets and where their weights live.
///
/// A model keeps one flat weight vector for all its meshes (see
/// `Model::morph_sets`): target `i` of this mesh is driven by weight
/// `first_weight + i`. Meshes that share a glTF mesh (its primitives)
/// share their weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTargets {
    /// The targets, in the file's order.
    pub targets: Vec<MorphTarget>,
    /// The index of target 0's weight in the model's weight vector.
    pub first_weight: usize,
}

impl MorphTargets {
    /// Whether the mesh has no targets.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Number of targets.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// This mesh's slice of a model's weight vector (`None` when the
    /// vector is too short).
    pub fn weights<'a>(&self, all: &'a [f32]) -> Option<&'a [f32]> {
        all.get(self.first_weight..self.first_weight + self.targets.len())
    }
}

/// A run of a model's weight vector that one glTF mesh's targets share:
/// its names and default weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphSet {
    /// The mesh (or node) the weights belong to.
    pub name: String,
    /// Target names (`mesh.extras.targetNames`), empty strings where the
    /// file names none.
    pub target_names: Vec<String>,
    /// Weights when no clip animates them: `node.weights`, else
    /// `mesh.weights`, else zeros. Not clamped.
    pub defaults: Vec<f32>,
    /// The index of its first weight in the model's weight vector.
    pub first_weight: usize,
}
