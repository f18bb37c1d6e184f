//! Morph targets (blend shapes): per-vertex displacements a mesh adds to
//! its bind-pose vertices, each scaled by a weight, before skinning
//! (glTF 2.0's order: `base + sum(weight_i * delta_i)`, then the skin).

use glam::{Vec3, Vec4};

use super::MeshError;

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
/// `first_weight + i`. The meshes one glTF node draws (its mesh's
/// primitives) share their weights; two nodes drawing the same glTF mesh
/// have a weight run each (`node.weights` and the animation channels are
/// per node).
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

/// A run of a model's weight vector that the targets of one glTF node's
/// mesh share: its names and default weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphSet {
    /// The node the weights belong to (its name, else its mesh's).
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

/// The targets a weight vector moves: `(target index, weight)` for every
/// weight that is not exactly zero, in target order (what a morph pass
/// needs to visit; [`MorphJob`] skips the others the same way).
pub fn active_targets(weights: &[f32]) -> impl Iterator<Item = (usize, f32)> + '_ {
    weights
        .iter()
        .enumerate()
        .filter(|(_, &w)| w != 0.0)
        .map(|(i, &w)| (i, w))
}

/// CPU reference morphing of a mesh's bind-pose vertices, glTF 2.0's
/// rule: `p = base + sum w_i dp_i`, `n = normalize(base_n + sum w_i dn_i)`,
/// `t.xyz = normalize(base_t.xyz + sum w_i dt_i)` with `t.w` kept (a zero
/// sum stays zero). Targets whose weight is exactly 0 are skipped
/// ([`active_targets`]), and a target without an attribute adds nothing
/// to it. Weights are not clamped.
///
/// Skinning comes after, on the morphed vertices (the spec's order): hand
/// `out_positions` and `out_normals` to a skinning job as its bind-pose
/// streams, and `out_tangents` to the tangent job.
///
/// ```
/// use glam::{Affine3A, Vec3};
/// use vkskin::anim::LinearBlendJob;
/// use vkskin::mesh::{MorphJob, MorphTarget};
///
/// let positions = [Vec3::new(1.0, 0.0, 0.0)];
/// let normals = [Vec3::Y];
/// let smile = MorphTarget {
///     positions: vec![Vec3::new(0.0, 2.0, 0.0)],
///     ..MorphTarget::default()
/// };
/// let (mut mp, mut mn) = ([Vec3::ZERO], [Vec3::ZERO]);
/// MorphJob {
///     targets: &[smile],
///     weights: &[0.5],
///     positions: &positions,
///     normals: &normals,
///     tangents: &[],
///     out_positions: &mut mp,
///     out_normals: &mut mn,
///     out_tangents: &mut [],
/// }
/// .run()?;
/// let skin = [Affine3A::from_translation(Vec3::Z)];
/// let (mut sp, mut sn) = ([Vec3::ZERO], [Vec3::ZERO]);
/// LinearBlendJob {
///     skin: &skin,
///     per_vertex: 1,
///     joints: &[0],
///     weights: &[1.0],
///     positions: &mp,
///     normals: &mn,
///     out_positions: &mut sp,
///     out_normals: &mut sn,
///     unit_normals: false,
/// }
/// .run()?;
/// assert_eq!(sp[0], Vec3::new(1.0, 1.0, 1.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct MorphJob<'a> {
    /// The mesh's targets (each attribute empty or one delta per vertex).
    pub targets: &'a [MorphTarget],
    /// One weight per target (a mesh's slice of the model's weight
    /// vector: [`MorphTargets::weights`]).
    pub weights: &'a [f32],
    /// Bind-pose positions, one per vertex.
    pub positions: &'a [Vec3],
    /// Bind-pose normals: one per vertex, or empty to skip normals.
    pub normals: &'a [Vec3],
    /// Bind-pose tangents: one per vertex, or empty to skip tangents.
    pub tangents: &'a [Vec4],
    /// Morphed positions, one per vertex.
    pub out_positions: &'a mut [Vec3],
    /// Morphed normals, as long as `normals`.
    pub out_normals: &'a mut [Vec3],
    /// Morphed tangents, as long as `tangents`.
    pub out_tangents: &'a mut [Vec4],
}

impl MorphJob<'_> {
    /// Checks the lengths and the weights without running it.
    pub fn validate(&self) -> Result<(), MeshError> {
        let n = self.positions.len();
        let bad = |what: String| Err(MeshError::Invalid(format!("morph: {what}")));
        if self.weights.len() != self.targets.len() {
            return bad(format!(
                "{} weights for {} targets",
                self.weights.len(),
                self.targets.len()
            ));
        }
        if let Some(i) = self.weights.iter().position(|w| !w.is_finite()) {
            return bad(format!("target {i} has weight {}", self.weights[i]));
        }
        for (what, len, want) in [
            ("morphed positions", self.out_positions.len(), n),
            ("normals", self.normals.len(), n),
            (
                "morphed normals",
                self.out_normals.len(),
                self.normals.len(),
            ),
            ("tangents", self.tangents.len(), n),
            (
                "morphed tangents",
                self.out_tangents.len(),
                self.tangents.len(),
            ),
        ] {
            let optional = what == "normals" || what == "tangents";
            if len != want && !(optional && len == 0) {
                return bad(format!("{len} {what} for {want}"));
            }
        }
        for (t, target) in self.targets.iter().enumerate() {
            for (what, len) in [
                ("position deltas", target.positions.len()),
                ("normal deltas", target.normals.len()),
                ("tangent deltas", target.tangents.len()),
            ] {
                if len != 0 && len != n {
                    return bad(format!("target {t} has {len} {what} for {n} vertices"));
                }
            }
        }
        Ok(())
    }

    /// Validates the job, then writes the outputs.
    pub fn run(self) -> Result<(), MeshError> {
        self.validate()?;
        let (normals, tangents) = (!self.normals.is_empty(), !self.tangents.is_empty());
        self.out_positions.copy_from_slice(self.positions);
        self.out_normals.copy_from_slice(self.normals);
        self.out_tangents.copy_from_slice(self.tangents);
        for (i, w) in active_targets(self.weights) {
            let target = &self.targets[i];
            add_scaled(self.out_positions, &target.positions, w);
            if normals {
                add_scaled(self.out_normals, &target.normals, w);
            }
            if tangents && !target.tangents.is_empty() {
                for (t, d) in self.out_tangents.iter_mut().zip(&target.tangents) {
                    *t += (*d * w).extend(0.0);
                }
            }
        }
        for n in self.out_normals.iter_mut() {
            *n = n.normalize_or_zero();
        }
        for t in self.out_tangents.iter_mut() {
            *t = t.truncate().normalize_or_zero().extend(t.w);
        }
        Ok(())
    }
}

/// A mesh's bind-pose streams with its morph targets applied
/// ([`SkinnedMesh::morphed`](crate::mesh::SkinnedMesh::morphed)): what
/// the skinning jobs then take as their bind pose.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphedVertices {
    /// Morphed positions, one per vertex.
    pub positions: Vec<Vec3>,
    /// Morphed unit normals, one per vertex.
    pub normals: Vec<Vec3>,
    /// Morphed tangents (empty when the mesh has none).
    pub tangents: Vec<Vec4>,
}

/// `out += w * deltas` (nothing for an absent attribute).
fn add_scaled(out: &mut [Vec3], deltas: &[Vec3], w: f32) {
    for (o, d) in out.iter_mut().zip(deltas) {
        *o += *d * w;
    }
}

#[cfg(test)]
mod tests;
