//! Morph targets prepared for skinning on the CPU every frame
//! ([`MorphDeltas`], made once) and the job that morphs a mesh's
//! [`BindVertices`] into a reused set with them ([`MorphBlocksJob`]): the
//! CPU stage's morph. The reference it equals is `mesh::MorphJob` (same
//! sums in the same order, same renormalisation).

use glam::Vec3;

use super::bind::BindVertices;
use crate::anim::simd::lanes::Vec3x8;
use crate::anim::AnimError;

/// The active targets one pass of [`MorphBlocksJob`] folds into a block
/// (more are done in further passes over the output).
const PASS_TARGETS: usize = 8;

/// One target's deltas of eight vertices: positions, then normals (zero
/// where the target lacks the attribute or past the last vertex).
type DeltaBlock = [Vec3x8; 2];

/// A mesh's morph targets in the layout the CPU morph reads: per target,
/// one 192-byte block per eight vertices holding their position deltas then
/// their normal deltas, structure of arrays, so that one target's
/// contribution to eight vertices is six aligned 32-byte rows and the
/// morphed vertices come out already in [`BindVertices`]' blocks (no
/// second pass to rebuild them). A target that moves neither positions nor
/// normals keeps no blocks. Tangent deltas are not kept (the CPU stage
/// skins no tangents).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphDeltas {
    vertices: usize,
    targets: Vec<Option<Box<[DeltaBlock]>>>,
}

impl MorphDeltas {
    /// Prepares `targets` (each `(position deltas, normal deltas)`, each
    /// empty or one per vertex) for a mesh of `vertices` vertices.
    pub fn new<'a>(
        vertices: usize,
        targets: impl IntoIterator<Item = (&'a [Vec3], &'a [Vec3])>,
    ) -> Result<Self, AnimError> {
        let blocks = vertices.div_ceil(8);
        let mut out = Vec::new();
        for (t, (positions, normals)) in targets.into_iter().enumerate() {
            for (what, len) in [("position", positions.len()), ("normal", normals.len())] {
                if len != 0 && len != vertices {
                    return Err(AnimError::InvalidJob(format!(
                        "morph target {t} has {len} {what} deltas for {vertices} vertices"
                    )));
                }
            }
            if positions.is_empty() && normals.is_empty() {
                out.push(None);
                continue;
            }
            // Bounded by the deltas given: at most 2 x 24 bytes per vertex
            // of an attribute that holds 12.
            let mut data = vec![[Vec3x8::default(); 2]; blocks];
            for (k, attr) in [positions, normals].into_iter().enumerate() {
                for (block, chunk) in data.iter_mut().zip(attr.chunks(8)) {
                    block[k] = Vec3x8::from_vec3s(chunk);
                }
            }
            out.push(Some(data.into_boxed_slice()));
        }
        Ok(Self {
            vertices,
            targets: out,
        })
    }

    /// Number of targets (the weights a job takes).
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether there are no targets.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The vertex count the deltas were prepared for.
    pub fn vertices(&self) -> usize {
        self.vertices
    }
}

/// Morphs `base` into `out` with `deltas` and one weight per target:
/// `p = base + sum w_i dp_i`, `n = normalize_or_zero(base_n + sum w_i
/// dn_i)`, over the targets whose weight is not exactly zero, in target
/// order: `mesh::MorphJob`'s rule and arithmetic, so the results are the
/// same floats. `out` is resized to `base`'s length (allocation-free once
/// it has been), and both its `Vec3` streams and its blocks of eight are
/// written, so it feeds any skinning job's `run_prepared`.
///
/// Only the active targets are read: per vertex, 24 bytes of deltas per
/// active target with normals (where `MorphJob` makes a pass over the
/// outputs per target and attribute, then rebuilds the blocks).
pub struct MorphBlocksJob<'a> {
    /// The mesh's prepared targets.
    pub deltas: &'a MorphDeltas,
    /// One weight per target (finite; not clamped).
    pub weights: &'a [f32],
    /// The bind vertices (as many as `deltas` was prepared for).
    pub base: &'a BindVertices,
    /// The morphed vertices (any content; resized).
    pub out: &'a mut BindVertices,
}

impl MorphBlocksJob<'_> {
    /// Checks the lengths and weights without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        if self.weights.len() != self.deltas.len() {
            return Err(AnimError::LengthMismatch {
                what: "morph weights",
                expected: self.deltas.len(),
                got: self.weights.len(),
            });
        }
        if let Some(i) = self.weights.iter().position(|w| !w.is_finite()) {
            return Err(AnimError::InvalidJob(format!(
                "morph target {i} has weight {}",
                self.weights[i]
            )));
        }
        if self.base.positions().len() != self.deltas.vertices {
            return Err(AnimError::LengthMismatch {
                what: "morph bind vertices",
                expected: self.deltas.vertices,
                got: self.base.positions().len(),
            });
        }
        Ok(())
    }

    /// Validates the job, then writes `out`.
    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        let base = self.base;
        let out = self.out;
        let n = base.positions().len();
        let with_normals = !base.normals().is_empty();
        out.resize_like(n, with_normals);
        // Up to PASS_TARGETS active targets per pass, gathered on the stack
        // (no allocation per call).
        let mut pass: [(&[DeltaBlock], f32); PASS_TARGETS] = [(&[], 0.0); PASS_TARGETS];
        let mut iter = self
            .weights
            .iter()
            .zip(&self.deltas.targets)
            .filter_map(|(&w, t)| match t {
                Some(blocks) if w != 0.0 => Some((&blocks[..], w)),
                _ => None,
            })
            .peekable();
        let mut first = true;
        loop {
            let mut count = 0;
            while count < PASS_TARGETS {
                match iter.next() {
                    Some(entry) => {
                        pass[count] = entry;
                        count += 1;
                    }
                    None => break,
                }
            }
            let last = iter.peek().is_none();
            morph_pass(base, out, &pass[..count], first, last, with_normals);
            first = false;
            if last {
                return Ok(());
            }
        }
    }
}

/// One pass over every block: `acc = first ? base : out`, plus each of
/// `pass`'s weighted deltas; on the `last` pass the normals are
/// renormalised and the `Vec3` streams written too.
fn morph_pass(
    base: &BindVertices,
    out: &mut BindVertices,
    pass: &[(&[DeltaBlock], f32)],
    first: bool,
    last: bool,
    with_normals: bool,
) {
    let n = base.positions.len();
    let blocks = n.div_ceil(8);
    let whole = n / 8;
    for b in 0..blocks {
        // The block's current sums.
        let (mut p, mut q) = if first {
            if b < whole {
                (
                    base.position_blocks[b],
                    base.normal_blocks.get(b).copied().unwrap_or_default(),
                )
            } else {
                (
                    Vec3x8::from_vec3s(&base.positions[8 * b..]),
                    Vec3x8::from_vec3s(base.normals.get(8 * b..).unwrap_or(&[])),
                )
            }
        } else if b < whole {
            (
                out.position_blocks[b],
                out.normal_blocks.get(b).copied().unwrap_or_default(),
            )
        } else {
            (
                Vec3x8::from_vec3s(&out.positions[8 * b..]),
                Vec3x8::from_vec3s(out.normals.get(8 * b..).unwrap_or(&[])),
            )
        };
        for &(deltas, w) in pass {
            let [dp, dq] = &deltas[b];
            add_scaled(&mut p, dp, w);
            if with_normals {
                add_scaled(&mut q, dq, w);
            }
        }
        if last && with_normals {
            normalize_or_zero(&mut q);
        }
        if b < whole {
            out.position_blocks[b] = p;
            if with_normals {
                out.normal_blocks[b] = q;
            }
        }
        if last || b >= whole {
            let end = (8 * b + 8).min(n);
            write_vec3s(&p, &mut out.positions[8 * b..end]);
            if with_normals {
                write_vec3s(&q, &mut out.normals[8 * b..end]);
            }
        }
    }
}

/// `acc += d * w`, lane by lane (`MorphJob`'s `o += d * w`).
#[inline(always)]
fn add_scaled(acc: &mut Vec3x8, d: &Vec3x8, w: f32) {
    for l in 0..8 {
        acc.x[l] += d.x[l] * w;
        acc.y[l] += d.y[l] * w;
        acc.z[l] += d.z[l] * w;
    }
}

/// glam's `Vec3::normalize_or_zero`, lane by lane: times `1 / sqrt(|v|^2)`
/// where that is finite and positive, else zero.
#[inline(always)]
fn normalize_or_zero(v: &mut Vec3x8) {
    for l in 0..8 {
        let len = (v.x[l] * v.x[l] + v.y[l] * v.y[l] + v.z[l] * v.z[l]).sqrt();
        let r = 1.0 / len;
        let keep = r.is_finite() && r > 0.0;
        let r = if keep { r } else { 0.0 };
        v.x[l] *= r;
        v.y[l] *= r;
        v.z[l] *= r;
    }
}

/// The first `out.len()` (at most 8) lanes of `b` as `Vec3`s.
#[inline(always)]
fn write_vec3s(b: &Vec3x8, out: &mut [Vec3]) {
    for (l, o) in out.iter_mut().enumerate().take(8) {
        *o = Vec3::new(b.x[l], b.y[l], b.z[l]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn rng(seed: u64) -> impl FnMut() -> f32 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }
    }

    /// The scalar rule written out here (not `mesh::MorphJob`, which this
    /// layer cannot name): the same sums, in the same order.
    fn reference(
        pos: &[Vec3],
        nrm: &[Vec3],
        targets: &[(Vec<Vec3>, Vec<Vec3>)],
        weights: &[f32],
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        let (mut p, mut n) = (pos.to_vec(), nrm.to_vec());
        for ((dp, dn), &w) in targets.iter().zip(weights) {
            if w == 0.0 {
                continue;
            }
            for (o, d) in p.iter_mut().zip(dp) {
                *o += *d * w;
            }
            if !n.is_empty() {
                for (o, d) in n.iter_mut().zip(dn) {
                    *o += *d * w;
                }
            }
        }
        for v in &mut n {
            *v = v.normalize_or_zero();
        }
        (p, n)
    }

    #[test]
    fn equals_the_scalar_rule_bit_for_bit() {
        let mut r = rng(7);
        let mut v3 = move || Vec3::new(r(), r(), r());
        // Tails of 0..7 vertices, targets with one attribute or none, more
        // active targets than one pass takes, weights outside [0, 1].
        for (n, t) in [(1, 1), (8, 3), (21, 12), (64, 20), (37, 9)] {
            let pos: Vec<Vec3> = (0..n).map(|_| v3()).collect();
            let nrm: Vec<Vec3> = (0..n).map(|_| v3().normalize()).collect();
            let targets: Vec<(Vec<Vec3>, Vec<Vec3>)> = (0..t)
                .map(|i| match i % 4 {
                    0 => ((0..n).map(|_| v3()).collect(), Vec::new()),
                    1 => (Vec::new(), (0..n).map(|_| v3()).collect()),
                    2 => (Vec::new(), Vec::new()),
                    _ => (
                        (0..n).map(|_| v3()).collect(),
                        (0..n).map(|_| v3()).collect(),
                    ),
                })
                .collect();
            let deltas =
                MorphDeltas::new(n, targets.iter().map(|(p, q)| (&p[..], &q[..]))).unwrap();
            let mut out = BindVertices::default();
            for round in 0..3 {
                let weights: Vec<f32> = (0..t)
                    .map(|i| {
                        if (i + round) % 3 == 0 {
                            0.0
                        } else {
                            1.7 * v3().x
                        }
                    })
                    .collect();
                for normals in [true, false] {
                    let nrm = if normals { &nrm[..] } else { &[] };
                    let base = BindVertices::new(pos.clone(), nrm.to_vec()).unwrap();
                    MorphBlocksJob {
                        deltas: &deltas,
                        weights: &weights,
                        base: &base,
                        out: &mut out,
                    }
                    .run()
                    .unwrap();
                    let (p, q) = reference(&pos, nrm, &targets, &weights);
                    assert_eq!(out.positions(), &p[..], "n {n} t {t}");
                    assert_eq!(out.normals(), &q[..], "n {n} t {t}");
                    // The blocks are those of the streams.
                    assert_eq!(out, BindVertices::new(p, q).unwrap());
                }
            }
        }
    }

    #[test]
    fn bad_lengths_and_weights_are_errors() {
        let d = [Vec3::ONE; 3];
        assert!(MorphDeltas::new(4, [(&d[..], &[][..])]).is_err());
        let deltas = MorphDeltas::new(3, [(&d[..], &d[..])]).unwrap();
        let base = BindVertices::new(vec![Vec3::ZERO; 3], vec![Vec3::Y; 3]).unwrap();
        let mut out = BindVertices::default();
        for w in [&[][..], &[f32::NAN][..], &[1.0, 2.0][..]] {
            let job = MorphBlocksJob {
                deltas: &deltas,
                weights: w,
                base: &base,
                out: &mut out,
            };
            assert!(job.run().is_err());
        }
        let short = BindVertices::new(vec![Vec3::ZERO; 2], Vec::new()).unwrap();
        let job = MorphBlocksJob {
            deltas: &deltas,
            weights: &[1.0],
            base: &short,
            out: &mut out,
        };
        assert!(job.run().is_err());
    }
}
