//! Skinned bounds for culling: per palette entry, the box of the bind-space
//! vertices it influences, computed once; per instance and frame, a box
//! that holds every vertex the linear-blend skinning paths produce, or
//! (padded per pair of entries that share vertices) the dual-quaternion
//! ones.
//!
//! The mathematics is in [`JointBounds`]' documentation.

use std::collections::{BTreeMap, BTreeSet};

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A, Vec4};

use super::{MeshError, SkinnedMesh};

/// The padding of a skinned box for `f32` rounding, relative to the
/// magnitudes a skinned coordinate is summed from (see [`JointBounds`]): 64 ulps of one, about 7.6e-6, well above the
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

    /// The box's centre (meaningless for an empty box).
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Length of the diagonal (0 for an empty box).
    pub fn diagonal(&self) -> f32 {
        if self.is_empty() {
            0.0
        } else {
            (self.max - self.min).length()
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

/// One palette entry's bind-space box: `centre + axes * q` for `|q| <=
/// half` (an oriented box on the vertices' principal axes, `axes`
/// orthonormal columns), and the axis-aligned box `aligned_centre +-
/// aligned_half`. The vertices lie in both, so a skinned vertex lies in
/// the intersection of their images.
#[derive(Clone, Copy, Debug, PartialEq)]
struct JointBox {
    axes: Mat3A,
    centre: Vec3A,
    half: Vec3A,
    aligned_centre: Vec3A,
    aligned_half: Vec3A,
    /// `|centre| + |axes| half`: the largest coordinate magnitude in the
    /// box, per axis.
    reach: Vec3A,
    entry: usize,
}

impl JointBox {
    fn axis_aligned(b: &Aabb) -> Self {
        let centre = Vec3A::from((b.min + b.max) * 0.5);
        let half = Vec3A::from((b.max - b.min) * 0.5);
        Self {
            axes: Mat3A::IDENTITY,
            centre,
            half,
            aligned_centre: centre,
            aligned_half: half,
            reach: centre.abs() + half,
            entry: 0,
        }
    }

    /// The axis-aligned box (the tighter of it and the oriented box's
    /// hull).
    fn aabb(&self) -> Aabb {
        let e = abs3(&self.axes) * self.half;
        let (a, h) = (self.aligned_centre, self.aligned_half);
        Aabb {
            min: (self.centre - e).max(a - h).into(),
            max: (self.centre + e).min(a + h).into(),
        }
    }
}

/// The element-wise absolute value of a 3x3.
#[inline]
fn abs3(m: &Mat3A) -> Mat3A {
    Mat3A::from_cols(m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs())
}

/// The oriented box of the projections `spans` on `axes` (rows), widened
/// for the `f32` rounding of storing it: the axes are orthonormal in
/// `f64`, a few ulps off in `f32`, and the half-extents grow by a few
/// ulps of the box's reach to cover that.
fn oriented(axes: &[[f64; 3]; 3], spans: &([f64; 3], [f64; 3])) -> JointBox {
    let (lo, hi) = spans;
    let mut centre = [0.0f64; 3];
    let mut half = [0.0f64; 3];
    for a in 0..3 {
        let mid = 0.5 * (lo[a] + hi[a]);
        half[a] = 0.5 * (hi[a] - lo[a]);
        for (c, &u) in centre.iter_mut().zip(&axes[a]) {
            *c += mid * u;
        }
    }
    let col = |a: usize| Vec3A::new(axes[a][0] as f32, axes[a][1] as f32, axes[a][2] as f32);
    let m = Mat3A::from_cols(col(0), col(1), col(2));
    let centre = Vec3A::new(centre[0] as f32, centre[1] as f32, centre[2] as f32);
    let size = centre.abs().max_element() as f64 + half.iter().fold(0.0f64, |a, &b| a.max(b));
    let grow = 16.0 * f32::EPSILON as f64 * size;
    let half = Vec3A::new(
        (half[0] + grow) as f32,
        (half[1] + grow) as f32,
        (half[2] + grow) as f32,
    );
    JointBox {
        axes: m,
        centre,
        half,
        aligned_centre: centre,
        aligned_half: half,
        reach: centre.abs() + abs3(&m) * half,
        entry: 0,
    }
}

/// What the principal axes of one entry's vertices are found from.
#[derive(Clone, Debug)]
struct Fit {
    count: usize,
    sum: [f64; 3],
    /// Sums of `p_a p_b` for `a <= b`: xx, xy, xz, yy, yz, zz.
    outer: [f64; 6],
    aabb: Aabb,
}

impl Default for Fit {
    fn default() -> Self {
        Self {
            count: 0,
            sum: [0.0; 3],
            outer: [0.0; 6],
            aabb: Aabb::EMPTY,
        }
    }
}

impl Fit {
    fn add(&mut self, p: Vec3) {
        let q = [p.x as f64, p.y as f64, p.z as f64];
        self.count += 1;
        for (s, x) in self.sum.iter_mut().zip(q) {
            *s += x;
        }
        let mut i = 0;
        for a in 0..3 {
            for b in a..3 {
                self.outer[i] += q[a] * q[b];
                i += 1;
            }
        }
        self.aabb.extend(p);
    }

    /// Orthonormal eigenvectors (rows) of the covariance (the identity
    /// for fewer than two points).
    fn axes(&self) -> [[f64; 3]; 3] {
        let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        if self.count < 2 {
            return v;
        }
        let n = self.count as f64;
        let m = [self.sum[0] / n, self.sum[1] / n, self.sum[2] / n];
        let o = &self.outer;
        let mut c = [
            [
                o[0] / n - m[0] * m[0],
                o[1] / n - m[0] * m[1],
                o[2] / n - m[0] * m[2],
            ],
            [0.0, o[3] / n - m[1] * m[1], o[4] / n - m[1] * m[2]],
            [0.0, 0.0, o[5] / n - m[2] * m[2]],
        ];
        c[1][0] = c[0][1];
        c[2][0] = c[0][2];
        c[2][1] = c[1][2];
        // Cyclic Jacobi: rotations zero the off-diagonal; `v` gathers them.
        for _ in 0..16 {
            let off = c[0][1].abs() + c[0][2].abs() + c[1][2].abs();
            if off <= 1e-30 {
                break;
            }
            for (p, q) in [(0, 1), (0, 2), (1, 2)] {
                if c[p][q].abs() <= 1e-300 {
                    continue;
                }
                let theta = (c[q][q] - c[p][p]) / (2.0 * c[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let cs = 1.0 / (t * t + 1.0).sqrt();
                let sn = t * cs;
                // c <- J^T c J with J the rotation in the (p, q) plane.
                for row in c.iter_mut() {
                    let (a, b) = (row[p], row[q]);
                    row[p] = cs * a - sn * b;
                    row[q] = sn * a + cs * b;
                }
                let (cp, cq) = (c[p], c[q]);
                for k in 0..3 {
                    c[p][k] = cs * cp[k] - sn * cq[k];
                    c[q][k] = sn * cp[k] + cs * cq[k];
                }
                // v's rows are the eigenvectors: rows p and q turn.
                let (vp, vq) = (v[p], v[q]);
                for k in 0..3 {
                    v[p][k] = cs * vp[k] - sn * vq[k];
                    v[q][k] = sn * vp[k] + cs * vq[k];
                }
            }
        }
        if v.iter().flatten().all(|x| x.is_finite()) {
            v
        } else {
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        }
    }
}

/// The per-joint boxes of one skinned mesh, computed once, from which a
/// box around the mesh skinned by any palette (and any morph weights) is
/// found per instance and frame in a few nanoseconds per joint: it holds
/// every vertex of the linear-blend paths ([`Self::skinned`]), and padded
/// by a pose-dependent bound of the bulge, those of the dual-quaternion
/// ones ([`Self::skinned_dual_quat`]).
///
/// # Why the box holds the vertices
///
/// **Joint boxes.** `B_j` is the axis-aligned box of the bind-pose
/// positions of the vertices that palette entry `j` influences with a
/// weight above zero (an entry influencing nothing has no box and costs
/// nothing per frame), and `O_j` their oriented box on the principal axes
/// of those positions (covariance eigenvectors, cyclic Jacobi in `f64`;
/// any orthonormal axes give a valid box, the principal ones a tight
/// one). The vertices lie in both, so their images under `M_j` lie in
/// `M_j(B_j) ∩ M_j(O_j)`, and the per-frame box of entry `j` is the
/// intersection of the two images' boxes: a limb's box keeps its shape as
/// the limb turns, where an axis-aligned one would swell.
///
/// **Morph targets.** A morphed vertex is `p + sum_t w_t dp_t`, and
/// `|sum_t w_t dp_t| <= sum_t |w_t| max_v |dp_t(v)| = r` (the triangle
/// inequality; any weight, inside `[0, 1]` or not). So every morphed
/// vertex of `B_j`'s set lies in `B_j` grown by `r` on every axis (a cube
/// of half-size `r` holds the ball of radius `r`). Each target's
/// `max_v |dp_t(v)|` is kept here; per frame `r` costs one multiply-add
/// per target.
///
/// **Linear blends** (LBS, the 4x3 and quaternion-translation encodings,
/// `LinearBlendJob`, `QuatTranslationSkinningJob`, which rebuilds the
/// matrices and blends them like LBS: its box is that of the rebuilt
/// matrices). A skinned vertex is
/// `sum_j w_j M_j p` with `w_j >= 0` and `sum_j w_j = 1`: a convex
/// combination of the points `M_j p`, and `M_j p` lies in the box of
/// `M_j(B_j') ∩ M_j(O_j')` (primes: grown by the morph radius). A box is
/// convex, so the box around the union of those boxes holds the vertex.
/// The box around an affine image of a box is exact and cheap (Arvo):
/// centre `M c`, half-extent `|A| e`, `|A|` the element-wise absolute
/// value of the 3x3 part (`|A R| e` for the oriented box with axes `R`).
///
/// **Weights that do not sum to one.** If a vertex's weights sum to
/// `s != 1` the vertex is `s q` with `q` as above, off by `|s - 1| |q|`
/// per axis. The largest `|s - 1|` over the mesh (tiny after
/// [`normalize_influences`](super::normalize_influences), whose loaders
/// use it, and after the paths' own renormalisation) pads the box by
/// that fraction of its largest coordinate magnitude. Negative or
/// non-finite weights are refused: the vertex is then no convex
/// combination.
///
/// **Rounding.** The skinning jobs and this box are computed in `f32`. A
/// skinned coordinate's rounding error is a few ulps of the magnitudes it
/// is summed from, `|A_j| |p| + |t_j|`, so the box is padded by
/// [`ROUNDING_PAD`] times the largest such magnitude per axis. That pad
/// is a margin over a rounding estimate (64 ulps against the roughly
/// `k + 4` that a `k`-influence blend's sums take), not a proof about
/// every kernel's operation order; with it the tests find every vertex
/// the CPU jobs skin inside the box with no tolerance at all.
///
/// **Dual quaternions** (the `dq` and `dq-scale` encodings,
/// `DualQuatSkinningJob`): the blend is not a convex combination of the
/// `M_j p` (it bulges out of their hull), so [`Self::skinned`] does not
/// hold those vertices; [`Self::skinned_dual_quat`] pads the same box by
/// a bound of the bulge that depends on the pose, derived in
/// docs/skinning-paths.md ("Skinned bounds for dual quaternions"). In
/// short: with `y_j = M_j p` and `r_j` the influences' rotation
/// quaternions in the signs the job blends them (each turned into its
/// first influence's hemisphere), the blended vertex is exactly
///
/// `x = [sum_j w_j^2 y_j + sum_{i<j} w_i w_j (c_ij (y_i + y_j) + (y_j - y_i) x v_ji)] / |B|^2`
///
/// with `c_ij = <r_i, r_j>`, `v_ji` the vector part of `r_j r_i*`
/// (`|v_ji| = sqrt(1 - c_ij^2)`) and `|B|^2 = sum_ij w_i w_j c_ij`. When
/// every `c_ij >= 0` the `y` terms are a convex combination of the `y_j`
/// (inside the linear-blend box) and the rest is at most
/// `P max_ij |y_j - y_i| sqrt(1 - c_ij^2) / (1 - 2 P (1 - c_min))`,
/// `P = sum_{i<j} w_i w_j <= (1 - 1/k) / 2`. Per pair of entries that
/// share a vertex this keeps the box of the shared vertices (for
/// `|y_j - y_i|`), per mesh the largest `P`, and the (first influence,
/// pair) triples whose signs decide `c_ij`. With scale (`dq-scale`,
/// `p' = sum_j w_j S_j p` before the rigid blend) the box also grows by
/// the spread `max |(S_i - S_j) p|` of the pairs' scale/shear matrices.
/// When a pose turns some sharing pair's `c_ij` negative (two influences
/// of one vertex more than a half turn apart after the job's sign
/// choice) no bound is claimed: the method returns `None`.
#[derive(Clone, Debug, PartialEq)]
pub struct JointBounds {
    boxes: Vec<JointBox>,
    palette_len: usize,
    /// Per morph target, the longest position delta.
    morph_reach: Vec<f32>,
    first_weight: usize,
    /// The largest `|sum of a vertex's weights - 1|`.
    weight_slack: f32,
    /// Pairs of entries that share a vertex (for the dual-quaternion
    /// bound).
    pairs: Vec<EntryPair>,
    /// The vertices whose pair `(i, j)` does not hold their first
    /// influence `f` (the job's sign choice for `i` and `j` depends on
    /// `f`): the indices of the rotation products `<r_f, r_i>`, `<r_f,
    /// r_j>` and `<r_i, r_j>` among a frame's (the pairs' in their order,
    /// then the sign edges').
    sign_triples: Vec<[u32; 3]>,
    /// The `(f, i)` of those triples that are no sharing pair (`f`'s
    /// weight may be zero).
    sign_edges: Vec<[u16; 2]>,
    /// The largest `EntryPair::pair_weight`.
    pair_weight_max: f32,
    /// Per pair, the indices (into `boxes`) of the entries of the
    /// vertices that hold both of its entries: the boxes its bulge pads.
    pair_boxes: Vec<u32>,
}

/// Two palette entries that share a vertex, the box of the bind vertices
/// they share, the largest `sum_{i<j} w_i w_j` of those vertices (weights
/// over their sum, duplicates merged), and its run of `pair_boxes`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct EntryPair {
    a: u16,
    b: u16,
    centre: Vec3A,
    half: Vec3A,
    pair_weight: f32,
    boxes: (u32, u32),
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
        let mut fits = vec![Fit::default(); palette_len];
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
                let fit = fits.get_mut(j as usize).ok_or_else(|| {
                    bad(format!(
                        "vertex {v} names joint {j}, but the palette has {palette_len}"
                    ))
                })?;
                if w > 0.0 {
                    fit.add(p);
                }
                sum += w;
            }
            weight_slack = weight_slack.max((sum - 1.0).abs());
        }
        let (mut pairs, near, triples) = sharing_pairs(mesh);
        let (sign_triples, sign_edges) = sign_products(&pairs, &triples);
        // The principal axes of each entry's vertices; a second pass finds
        // their extent along them.
        let axes: Vec<[[f64; 3]; 3]> = fits.iter().map(Fit::axes).collect();
        let mut spans = vec![([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]); palette_len];
        for (v, &p) in mesh.positions.iter().enumerate() {
            let (js, ws) = inf.vertex(v);
            let p = [p.x as f64, p.y as f64, p.z as f64];
            for (&j, &w) in js.iter().zip(ws) {
                if w > 0.0 {
                    let (lo, hi) = &mut spans[j as usize];
                    for (a, axis) in axes[j as usize].iter().enumerate() {
                        let d = axis[0] * p[0] + axis[1] * p[1] + axis[2] * p[2];
                        lo[a] = lo[a].min(d);
                        hi[a] = hi[a].max(d);
                    }
                }
            }
        }
        let boxes: Vec<JointBox> = fits
            .iter()
            .enumerate()
            .filter(|(_, f)| f.count > 0)
            .map(|(entry, f)| {
                let aligned = JointBox::axis_aligned(&f.aabb);
                let mut b = oriented(&axes[entry], &spans[entry]);
                b.aligned_centre = aligned.centre;
                b.aligned_half = aligned.half;
                b.reach = b.reach.min(aligned.reach);
                b.entry = entry;
                b
            })
            .collect();
        // The entries near each pair as indices of their boxes (every
        // entry with a positive weight has one).
        let mut box_of = vec![u32::MAX; palette_len];
        for (i, b) in boxes.iter().enumerate() {
            box_of[b.entry] = i as u32;
        }
        let mut pair_boxes = Vec::with_capacity(near.len());
        for pair in &mut pairs {
            let (start, len) = pair.boxes;
            let run = &near[start as usize..(start + len) as usize];
            pair.boxes.0 = pair_boxes.len() as u32;
            pair_boxes.extend(run.iter().map(|&j| box_of[j as usize]));
        }
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
            pair_weight_max: pairs.iter().map(|p| p.pair_weight).fold(0.0, f32::max),
            pairs,
            sign_triples,
            sign_edges,
            pair_boxes,
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
        self.boxes
            .iter()
            .find(|b| b.entry == entry)
            .map(JointBox::aabb)
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
    /// `LinearBlendJob` with these matrices (and a `4x3` GPU path) computes
    /// lies inside it; so does every vertex of `QuatTranslationSkinningJob`
    /// (and a `qt` path) when `skin` holds the matrices that job rebuilds
    /// from its palette (`QuatTranslation::to_affine`: a scale it dropped
    /// is dropped here too). Not so for the dual-quaternion blends
    /// ([`JointBounds`]). Empty for a
    /// mesh with no vertices. Errors when `skin` is shorter than the
    /// palette, the weights as [`Self::morph_radius`] does, or when a
    /// matrix is not finite.
    pub fn skinned(&self, skin: &[Affine3A], model_weights: &[f32]) -> Result<Aabb, MeshError> {
        self.check_palette("skinning matrices", skin.len())?;
        let r = self.morph_radius(model_weights)?;
        self.skinned_padded(skin, r, None)
    }

    fn check_palette(&self, what: &str, len: usize) -> Result<(), MeshError> {
        if len < self.palette_len {
            return Err(MeshError::Invalid(format!(
                "{len} {what} for a palette of {}",
                self.palette_len
            )));
        }
        Ok(())
    }

    /// The box around the mesh skinned by a dual-quaternion blend
    /// (`DualQuatSkinningJob`, the `dq` and `dq-scale` paths) after
    /// morphing with `model_weights`: the linear-blend box of `skin`
    /// padded by a bound of how far the blend strays from the hull of the
    /// `M_j p`, which depends on the pose (see [`JointBounds`] and
    /// docs/skinning-paths.md). `rotations`: each entry's rotation
    /// quaternion in the palette's signs (`DualQuat::real`; the job turns
    /// them into each vertex's first influence's hemisphere, as this
    /// bound does); `scale_shear`: the `dq-scale` encoding's matrices
    /// (empty for `dq`); `skin`: the matrices the palette stands for,
    /// `[R_j | t_j]` times `S_j` (for `dq`, the rigid matrices the dual
    /// quaternions hold, not matrices whose scale the encoding dropped).
    ///
    /// `None` when the pose has two influences of one vertex more than a
    /// half turn apart after the job's sign choice (`c_ij < 0`): no bound
    /// is claimed then. Errors as [`Self::skinned`], and when `rotations`
    /// or a non-empty `scale_shear` is shorter than the palette.
    pub fn skinned_dual_quat(
        &self,
        skin: &[Affine3A],
        rotations: &[Quat],
        scale_shear: &[Mat3A],
        model_weights: &[f32],
    ) -> Result<Option<Aabb>, MeshError> {
        self.check_palette("skinning matrices", skin.len())?;
        self.check_palette("rotations", rotations.len())?;
        if !scale_shear.is_empty() {
            self.check_palette("scale/shear matrices", scale_shear.len())?;
        }
        let r = self.morph_radius(model_weights)?;
        let (np, nd, nb) = (
            self.pairs.len(),
            self.pairs.len() + self.sign_edges.len(),
            self.boxes.len(),
        );
        with_scratch(nd + np + nb, |scratch| {
            let (dots, rest) = scratch.split_at_mut(nd);
            let (spreads, pads) = rest.split_at_mut(np);
            self.dual_quat_pads(skin, rotations, scale_shear, r, dots, spreads, pads)?
                .map(|()| self.skinned_padded(skin, r, Some(pads)))
                .transpose()
        })
    }

    /// The per-box pads of [`Self::skinned_dual_quat`] into `pads` (`None`:
    /// a `c_ij < 0`, no bound); `dots` (one per pair, then per sign edge)
    /// and `spreads` (one per pair) are scratch.
    #[allow(clippy::too_many_arguments)]
    fn dual_quat_pads(
        &self,
        skin: &[Affine3A],
        rotations: &[Quat],
        scale_shear: &[Mat3A],
        r: f32,
        dots: &mut [f32],
        spreads: &mut [f32],
        pads: &mut [f32],
    ) -> Result<Option<()>, MeshError> {
        let rot = |j: u16| Vec4::from(rotations[j as usize]);
        // Every rotation product a frame needs, once: the pairs' (whose
        // absolute values bound c_ij from below where the pair holds the
        // vertex's first influence), then the sign edges'.
        let (pair_dots, edge_dots) = dots.split_at_mut(self.pairs.len());
        let mut c_min = 1.0f32;
        for (d, pair) in pair_dots.iter_mut().zip(&self.pairs) {
            *d = rot(pair.a).dot(rot(pair.b));
            c_min = c_min.min(d.abs());
        }
        for (d, &[a, b]) in edge_dots.iter_mut().zip(&self.sign_edges) {
            *d = rot(a).dot(rot(b));
        }
        // A pair without the vertex's first influence f: each of its
        // rotations is turned into f's hemisphere (`<r_f, r> < 0` flips
        // it), so c_ij = sign(<r_f, r_i>) sign(<r_f, r_j>) <r_i, r_j>.
        for &[fa, fb, ab] in &self.sign_triples {
            let (x, y, z) = (dots[fa as usize], dots[fb as usize], dots[ab as usize]);
            c_min = c_min.min(if (x < 0.0) != (y < 0.0) { -z } else { z });
        }
        if c_min.is_nan() || c_min < 0.0 {
            return Ok(None);
        }
        // Per pair, over its shared vertices (morphed): the bound on
        // |(S_b - S_a) p| (scale spread) and on |M_b p - M_a p|.
        let mut spread = 0.0f32;
        if !scale_shear.is_empty() {
            for (s, pair) in spreads.iter_mut().zip(&self.pairs) {
                let e = pair.half + Vec3A::splat(r);
                let ds = scale_shear[pair.b as usize] - scale_shear[pair.a as usize];
                *s = ((ds * pair.centre).abs() + abs3(&ds) * e).length();
                spread = spread.max(*s);
            }
        } else {
            spreads.fill(0.0);
        }
        // Per entry box, the largest bulge of the pairs of its vertices
        // plus their scale spread (|y_j - y_i| <= |M_j p - M_i p| + 2
        // spread).
        pads.fill(0.0);
        // 1 / (1 - 2 P (1 - c_min)) with the mesh's largest P: at least
        // each pair's (P < 1/2, so the denominator stays positive), and one
        // division a frame instead of one a pair.
        let inv_den = 1.0 / (1.0 - self.pair_weight_max * 2.0 * (1.0 - c_min));
        let rv = Vec3A::splat(r);
        // Each pair's pad first (into `spreads`, which held its own
        // spread), then the scatter: in one loop, a pair's pad waited on
        // the previous pair's through the boxes they share, serialising
        // the square roots.
        for ((pair, &c), own) in self.pairs.iter().zip(&dots[..]).zip(spreads.iter_mut()) {
            let (ma, mb) = (&skin[pair.a as usize], &skin[pair.b as usize]);
            let dm = Mat3A::from_cols(
                mb.matrix3.x_axis - ma.matrix3.x_axis,
                mb.matrix3.y_axis - ma.matrix3.y_axis,
                mb.matrix3.z_axis - ma.matrix3.z_axis,
            );
            let apart = ((dm * pair.centre + (mb.translation - ma.translation)).abs()
                + abs3(&dm) * (pair.half + rv))
                .length();
            let sine = (1.0 - c * c).max(0.0).sqrt();
            let bulge = pair.pair_weight * (apart + 2.0 * spread) * sine * inv_den;
            *own = (*own + bulge) * (1.0 + 8.0 * f32::EPSILON);
        }
        let mut finite = true;
        for (pair, &pad) in self.pairs.iter().zip(&spreads[..]) {
            finite &= pad.is_finite();
            // A plain comparison (a NaN pad is caught by `finite`), which
            // compiles to one `maxss`: the NaN-aware `max` took a third
            // of this loop's instructions.
            let (start, len) = pair.boxes;
            for &i in &self.pair_boxes[start as usize..(start + len) as usize] {
                let at = &mut pads[i as usize];
                *at = if pad > *at { pad } else { *at };
            }
        }
        if !finite {
            return Err(MeshError::Invalid(
                "a skinning matrix, rotation or scale is not finite".to_string(),
            ));
        }
        Ok(Some(()))
    }

    /// Pairs of palette entries that share a vertex: the per-frame work of
    /// [`Self::skinned_dual_quat`] beyond the joint boxes.
    pub fn sharing_pairs(&self) -> usize {
        self.pairs.len()
    }

    /// The linear-blend box of `skin` with morph radius `r`, each entry's
    /// box grown by its `pads` (dual quaternions; then the rounding pad is
    /// taken of the largest coordinate magnitude on every axis, since the
    /// quaternion products mix the axes).
    fn skinned_padded(
        &self,
        skin: &[Affine3A],
        r: f32,
        pads: Option<&[f32]>,
    ) -> Result<Aabb, MeshError> {
        let r = Vec3A::splat(r);
        let mut lo = Vec3A::INFINITY;
        let mut hi = Vec3A::NEG_INFINITY;
        let mut reach = Vec3A::ZERO;
        // min/max drop NaNs; a sum keeps them (and infinities) to be seen.
        let mut finite = Vec3A::ZERO;
        for (i, b) in self.boxes.iter().enumerate() {
            let m = &skin[b.entry];
            let grow = Vec3A::splat(pads.map_or(0.0, |p| p[i]));
            let c = m.transform_point3a(b.centre);
            let e = abs3(&(m.matrix3 * b.axes)) * (b.half + r);
            let ca = m.transform_point3a(b.aligned_centre);
            let ea = abs_mul(m, b.aligned_half + r);
            lo = lo.min((c - e).max(ca - ea) - grow);
            hi = hi.max((c + e).min(ca + ea) + grow);
            let far = abs_mul(m, b.reach + r) + m.translation.abs() + grow;
            reach = reach.max(far);
            finite += far;
        }
        if self.boxes.is_empty() {
            return Ok(Aabb::EMPTY);
        }
        if pads.is_some() {
            reach = Vec3A::splat(reach.max_element());
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

/// The `(first influence, i, j)` triples as indices of rotation products:
/// a pair's own index, or past the pairs the index of a sign edge (an
/// `(f, i)` that is no sharing pair) in the second list.
fn sign_products(pairs: &[EntryPair], triples: &[[u16; 3]]) -> (Vec<[u32; 3]>, Vec<[u16; 2]>) {
    let mut edges: BTreeMap<(u16, u16), u32> = BTreeMap::new();
    let mut index = |a: u16, b: u16| {
        let key = (a.min(b), a.max(b));
        // `pairs` is sorted by (a, b) (made from a BTreeMap).
        match pairs.binary_search_by_key(&key, |p| (p.a, p.b)) {
            Ok(i) => i as u32,
            Err(_) => {
                let next = (pairs.len() + edges.len()) as u32;
                *edges.entry(key).or_insert(next)
            }
        }
    };
    let products: Vec<[u32; 3]> = triples
        .iter()
        .map(|&[f, a, b]| [index(f, a), index(f, b), index(a, b)])
        .collect();
    let mut list: Vec<([u16; 2], u32)> = edges.into_iter().map(|((a, b), i)| ([a, b], i)).collect();
    list.sort_unstable_by_key(|e| e.1);
    (products, list.into_iter().map(|e| e.0).collect())
}

/// Runs `f` on `n` zeroed floats: on the stack up to 1,024 (the frame's
/// scratch of a mesh of a few hundred sharing pairs), else on the heap.
fn with_scratch<R>(n: usize, f: impl FnOnce(&mut [f32]) -> R) -> R {
    const STACK: usize = 1024;
    if n <= STACK {
        let mut stack = [0.0f32; STACK];
        f(&mut stack[..n])
    } else {
        f(&mut vec![0.0; n])
    }
}

/// The pairs of palette entries that share a vertex (both weights above
/// zero; an entry named twice counts once) with the box of the vertices
/// they share and their largest `sum_{i<j} w_i w_j`; the entries of those
/// vertices (each pair's run in the second list, `EntryPair::boxes`); and
/// the `(first influence, i, j)` triples of pairs without the vertex's
/// first influence. Bounded by the influences: at most `k (k - 1) / 2`
/// pairs, as many triples and `k` entries per pair a vertex.
fn sharing_pairs(mesh: &SkinnedMesh) -> (Vec<EntryPair>, Vec<u16>, Vec<[u16; 3]>) {
    let inf = &mesh.influences;
    let mut shared: BTreeMap<(u16, u16), (Aabb, f32, BTreeSet<u16>)> = BTreeMap::new();
    let mut triples = BTreeSet::new();
    let mut merged: Vec<(u16, f32)> = Vec::with_capacity(inf.per_vertex);
    for (v, &p) in mesh.positions.iter().enumerate() {
        let (js, ws) = inf.vertex(v);
        merged.clear();
        for (&j, &w) in js.iter().zip(ws) {
            if w > 0.0 {
                match merged.iter_mut().find(|(m, _)| *m == j) {
                    Some((_, mw)) => *mw += w,
                    None => merged.push((j, w)),
                }
            }
        }
        let sum: f32 = merged.iter().map(|m| m.1).sum();
        let mut pw = 0.0f32;
        for (x, &(_, wa)) in merged.iter().enumerate() {
            for &(_, wb) in &merged[x + 1..] {
                pw += (wa / sum) * (wb / sum);
            }
        }
        let first = js.first().copied().unwrap_or(0);
        for (x, &(a, _)) in merged.iter().enumerate() {
            for &(b, _) in &merged[x + 1..] {
                let key = (a.min(b), a.max(b));
                let entry = shared
                    .entry(key)
                    .or_insert_with(|| (Aabb::EMPTY, 0.0, BTreeSet::new()));
                entry.0.extend(p);
                entry.1 = entry.1.max(pw);
                entry.2.extend(merged.iter().map(|m| m.0));
                if a != first && b != first {
                    triples.insert([first, key.0, key.1]);
                }
            }
        }
    }
    let mut near = Vec::new();
    let pairs = shared
        .into_iter()
        .map(|((a, b), (bx, pw, entries))| {
            let start = near.len() as u32;
            near.extend(entries);
            EntryPair {
                a,
                b,
                centre: Vec3A::from(bx.center()),
                // The centre's rounding: a few ulps of the box's reach.
                half: Vec3A::from((bx.max - bx.min) * 0.5)
                    + Vec3A::splat(
                        4.0 * f32::EPSILON * bx.min.abs().max(bx.max.abs()).max_element(),
                    ),
                // The sums' rounding: a few ulps up.
                pair_weight: pw * (1.0 + 8.0 * f32::EPSILON),
                boxes: (start, near.len() as u32 - start),
            }
        })
        .collect();
    (pairs, near, triples.into_iter().collect())
}

#[cfg(test)]
mod tests;
