//! Skinned bounds for culling: per palette entry, the box of the bind-space
//! vertices it influences, computed once; per instance and frame, a box
//! that holds every vertex the linear-blend skinning paths produce.
//!
//! # The mathematics
//!
//! **Joint boxes.** `B_j` is the axis-aligned box of the bind-pose
//! positions of the vertices that palette entry `j` influences with a
//! weight above zero (an entry influencing nothing has no box and costs
//! nothing per frame).
//!
//! **Morph targets.** A morphed vertex is `p + sum_t w_t dp_t`, and
//! `|sum_t w_t dp_t| <= sum_t |w_t| max_v |dp_t(v)| = r` (the triangle
//! inequality; any weight, inside `[0, 1]` or not). So every morphed
//! vertex of `B_j`'s set lies in `B_j` grown by `r` on every axis (a cube
//! of half-size `r` holds the ball of radius `r`). Each target's
//! `max_v |dp_t(v)|` is kept here; per frame `r` costs one multiply-add
//! per target.
//!
//! **Linear blends** (LBS, the 4x3 and quaternion-translation encodings,
//! `LinearBlendJob`, `QuatTranslationSkinningJob`, which rebuilds the
//! matrices and blends them like LBS). A skinned vertex is
//! `sum_j w_j M_j p` with `w_j >= 0` and `sum_j w_j = 1`: a convex
//! combination of the points `M_j p`, and `M_j p` lies in `M_j(B_j')`
//! (`B_j'` the grown box). A box is convex, so the box around the union
//! of the `M_j(B_j')` holds the vertex. The box around an affine image of
//! a box is exact and cheap (Arvo): centre `M c`, half-extent `|A| e`,
//! `|A|` the element-wise absolute value of the 3x3 part.
//!
//! **Weights that do not sum to one.** If a vertex's weights sum to
//! `s != 1` the vertex is `s q` with `q` as above, off by `|s - 1| |q|`
//! per axis. The largest `|s - 1|` over the mesh (tiny after
//! [`normalize_influences`](super::normalize_influences), whose loaders
//! use it, and zero after the paths' own renormalisation) pads the box by
//! that fraction of its largest coordinate magnitude. Negative or
//! non-finite weights are refused: the vertex is then no convex
//! combination.
//!
//! **Rounding.** The skinning jobs and this box are computed in `f32`. A
//! skinned coordinate's rounding error is a few ulps of the magnitudes it
//! is summed from, `|A_j| |p| + |t_j|`, so the box is padded by
//! [`ROUNDING_PAD`] times the largest such magnitude per axis: a
//! skinned vertex computed in `f32` lies inside the box with no tolerance.
//!
//! **Dual quaternions** (the `dq` and `dq-scale` encodings,
//! `DualQuatSkinningJob`): the blend is not a convex combination of the
//! `M_j p` (it bulges out of their hull), so this box is **not** shown to
//! hold those vertices, and no method here claims to.

use glam::{Affine3A, Vec3, Vec3A};

use super::{MeshError, SkinnedMesh};

/// The padding of a skinned box for `f32` rounding, relative to the
/// magnitudes a skinned coordinate is summed from (see the module
/// documentation): 64 ulps of one, about 7.6e-6, well above the
/// `k + 4`-term sums of an `8`-influence blend and this box's own
/// arithmetic.
pub const ROUNDING_PAD: f32 = 64.0 * f32::EPSILON;

/// An axis-aligned box (`min > max` on some axis: empty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// The smallest coordinate on each axis.
    pub min: Vec3,
    /// The largest coordinate on each axis.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (min +inf, max -inf).
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// Whether the box holds no point.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// Grows the box to hold `p`; a non-finite `p` is ignored.
    pub fn extend(&mut self, p: Vec3) {
        if p.is_finite() {
            self.min = self.min.min(p);
            self.max = self.max.max(p);
        }
    }

    /// Whether `p` lies inside the box (faces included).
    pub fn contains(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// The box's volume (0 when empty).
    pub fn volume(&self) -> f32 {
        if self.is_empty() {
            0.0
        } else {
            let d = self.max - self.min;
            d.x * d.y * d.z
        }
    }

    /// The box around this box moved by `m` (exact for the box: centre
    /// `m c`, half-extent `|A| e`); empty stays empty.
    pub fn transformed(&self, m: &Affine3A) -> Self {
        if self.is_empty() {
            return *self;
        }
        let c = Vec3A::from((self.min + self.max) * 0.5);
        let e = Vec3A::from((self.max - self.min) * 0.5);
        let c2 = m.transform_point3a(c);
        let e2 = abs_mul(m, e);
        Self {
            min: (c2 - e2).into(),
            max: (c2 + e2).into(),
        }
    }
}

/// `|A| v`, `A` the 3x3 part of `m` taken element-wise absolute.
#[inline]
fn abs_mul(m: &Affine3A, v: Vec3A) -> Vec3A {
    m.matrix3.x_axis.abs() * v.x + m.matrix3.y_axis.abs() * v.y + m.matrix3.z_axis.abs() * v.z
}

/// One palette entry's bind-space box.
#[derive(Clone, Copy, Debug, PartialEq)]
struct JointBox {
    centre: Vec3A,
    half: Vec3A,
    /// `|centre| + half`: the largest coordinate magnitude in the box.
    reach: Vec3A,
    entry: usize,
}

/// The per-joint boxes of one skinned mesh, computed once, from which a
/// box around the mesh skinned by any palette (and any morph weights) is
/// found per instance and frame in a few nanoseconds per joint. See the
/// [module documentation](self) for why the box holds every vertex of the
/// linear-blend paths, and why not those of the dual-quaternion ones.
#[derive(Clone, Debug, PartialEq)]
pub struct JointBounds {
    boxes: Vec<JointBox>,
    palette_len: usize,
    /// Per morph target, the longest position delta.
    morph_reach: Vec<f32>,
    first_weight: usize,
    /// The largest `|sum of a vertex's weights - 1|`.
    weight_slack: f32,
}

impl JointBounds {
    /// The boxes of `mesh`'s vertices per entry of a palette of
    /// `palette_len`. Errors when an influence names an entry outside the
    /// palette, a weight is negative or not finite, a position or morph
    /// delta is not finite, or the influence arrays do not cover the
    /// vertices.
    pub fn new(mesh: &SkinnedMesh, palette_len: usize) -> Result<Self, MeshError> {
        let bad = |what: String| MeshError::Invalid(format!("mesh {:?}: {what}", mesh.name));
        let n = mesh.positions.len();
        let inf = &mesh.influences;
        let k = inf.per_vertex;
        if k == 0 || inf.joints.len() != n * k || inf.weights.len() != n * k {
            return Err(bad(format!(
                "{} joints and {} weights for {n} vertices of {k} influences",
                inf.joints.len(),
                inf.weights.len()
            )));
        }
        let mut boxes = vec![Aabb::EMPTY; palette_len];
        let mut weight_slack = 0.0f32;
        for (v, &p) in mesh.positions.iter().enumerate() {
            if !p.is_finite() {
                return Err(bad(format!("vertex {v} is not finite")));
            }
            let (js, ws) = inf.vertex(v);
            let mut sum = 0.0f32;
            for (&j, &w) in js.iter().zip(ws) {
                if !(w.is_finite() && w >= 0.0) {
                    return Err(bad(format!(
                        "vertex {v} has weight {w}; the bound needs weights >= 0"
                    )));
                }
                let slot = boxes.get_mut(j as usize).ok_or_else(|| {
                    bad(format!(
                        "vertex {v} names joint {j}, but the palette has {palette_len}"
                    ))
                })?;
                if w > 0.0 {
                    slot.extend(p);
                }
                sum += w;
            }
            weight_slack = weight_slack.max((sum - 1.0).abs());
        }
        let boxes = boxes
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(entry, b)| {
                let centre = Vec3A::from((b.min + b.max) * 0.5);
                let half = Vec3A::from((b.max - b.min) * 0.5);
                JointBox {
                    centre,
                    half,
                    reach: centre.abs() + half,
                    entry,
                }
            })
            .collect();
        let mut morph_reach = Vec::with_capacity(mesh.morph.len());
        for (t, target) in mesh.morph.targets.iter().enumerate() {
            let mut reach = 0.0f32;
            for d in &target.positions {
                if !d.is_finite() {
                    return Err(bad(format!("morph target {t} has a non-finite delta")));
                }
                reach = reach.max(d.length());
            }
            // Rounding of the length itself: a few ulps up.
            morph_reach.push(reach * (1.0 + 4.0 * f32::EPSILON));
        }
        Ok(Self {
            boxes,
            palette_len,
            morph_reach,
            first_weight: mesh.morph.first_weight,
            weight_slack,
        })
    }

    /// Entries of the palette this was built for.
    pub fn palette_len(&self) -> usize {
        self.palette_len
    }

    /// Palette entries that influence some vertex (the per-frame work).
    pub fn joint_count(&self) -> usize {
        self.boxes.len()
    }

    /// The bind-space box of palette entry `entry`'s vertices (`None` when
    /// it influences none or is outside the palette).
    pub fn joint_box(&self, entry: usize) -> Option<Aabb> {
        self.boxes.iter().find(|b| b.entry == entry).map(|b| Aabb {
            min: (b.centre - b.half).into(),
            max: (b.centre + b.half).into(),
        })
    }

    /// The largest distance the morph targets move a vertex for
    /// `model_weights` (the model's whole weight vector, as
    /// [`SkinnedMesh::morphed`] takes it): `sum_t |w_t| max_v |dp_t(v)|`.
    /// Errors when the vector is too short for the mesh's targets or a
    /// weight it reads is not finite.
    pub fn morph_radius(&self, model_weights: &[f32]) -> Result<f32, MeshError> {
        if self.morph_reach.is_empty() {
            return Ok(0.0);
        }
        let weights = model_weights
            .get(self.first_weight..self.first_weight + self.morph_reach.len())
            .ok_or_else(|| {
                MeshError::Invalid(format!(
                    "morph weights {}..{} outside the {} given",
                    self.first_weight,
                    self.first_weight + self.morph_reach.len(),
                    model_weights.len()
                ))
            })?;
        let r: f32 = weights
            .iter()
            .zip(&self.morph_reach)
            .map(|(w, m)| w.abs() * m)
            .sum();
        if !r.is_finite() {
            return Err(MeshError::Invalid(format!(
                "morph weights give a displacement of {r}"
            )));
        }
        // The sum's own rounding: a few ulps up.
        Ok(r * (1.0 + 4.0 * f32::EPSILON))
    }

    /// The box around the mesh skinned by a linear blend of `skin` (the
    /// skinning matrices, model matrix times inverse bind, one per palette
    /// entry) after morphing with `model_weights` (the model's weight
    /// vector; empty for a mesh without targets). Every vertex that
    /// `LinearBlendJob` or `QuatTranslationSkinningJob` (and the GPU paths
    /// of the `4x3` and `qt` encodings) computes lies inside it; not so
    /// for the dual-quaternion blends (module documentation). Empty for a
    /// mesh with no vertices. Errors when `skin` is shorter than the
    /// palette, the weights as [`Self::morph_radius`] does, or when a
    /// matrix is not finite.
    pub fn skinned(&self, skin: &[Affine3A], model_weights: &[f32]) -> Result<Aabb, MeshError> {
        if skin.len() < self.palette_len {
            return Err(MeshError::Invalid(format!(
                "{} skinning matrices for a palette of {}",
                skin.len(),
                self.palette_len
            )));
        }
        let r = Vec3A::splat(self.morph_radius(model_weights)?);
        let mut lo = Vec3A::INFINITY;
        let mut hi = Vec3A::NEG_INFINITY;
        let mut reach = Vec3A::ZERO;
        // min/max drop NaNs; a sum keeps them (and infinities) to be seen.
        let mut finite = Vec3A::ZERO;
        for b in &self.boxes {
            let m = &skin[b.entry];
            let c = m.transform_point3a(b.centre);
            let e = abs_mul(m, b.half + r);
            lo = lo.min(c - e);
            hi = hi.max(c + e);
            let far = abs_mul(m, b.reach + r) + m.translation.abs();
            reach = reach.max(far);
            finite += far;
        }
        if self.boxes.is_empty() {
            return Ok(Aabb::EMPTY);
        }
        let pad = reach * (self.weight_slack + ROUNDING_PAD);
        let (min, max) = (lo - pad, hi + pad);
        if !(min.is_finite() && max.is_finite() && finite.is_finite()) {
            return Err(MeshError::Invalid(
                "a skinning matrix is not finite".to_string(),
            ));
        }
        Ok(Aabb {
            min: min.into(),
            max: max.into(),
        })
    }
}

#[cfg(test)]
mod tests;
