//! Morph targets prepared for skinning on the CPU every frame
//! ([`MorphDeltas`], made once) and the job that morphs a mesh's
//! [`BindVertices`] into a reused set with them ([`MorphBlocksJob`]): the
//! CPU stage's morph. The reference it equals is `mesh::MorphJob` (same
//! sums in the same order, same renormalisation; a sparse target's
//! skipped block of zero deltas can only leave a `-0.0` sum where
//! `MorphJob`'s `+ 0.0` would give `+0.0`, the same number).

use glam::Vec3;

use super::bind::BindVertices;
use crate::anim::simd::lanes::{MorphEntry, MorphOut, Vec3x8, MORPH_PASS_TARGETS};
use crate::anim::AnimError;

/// One target's deltas of eight vertices: positions, then normals (zero
/// where the target lacks the attribute or past the last vertex).
type DeltaBlock = [Vec3x8; 2];

/// One target's blocks: every block of the mesh (dense), or only those
/// where it moves a vertex, with their block numbers (sparse).
#[derive(Clone, Debug, Default, PartialEq)]
struct TargetBlocks {
    blocks: Box<[DeltaBlock]>,
    /// Empty: dense. Else the block number of each of `blocks`, ascending.
    index: Box<[u32]>,
}

/// A mesh's morph targets in the layout the CPU morph reads: per target,
/// one 192-byte block per eight vertices holding their position deltas then
/// their normal deltas, structure of arrays, so that one target's
/// contribution to eight vertices is six aligned 32-byte rows and the
/// morphed vertices come out already in [`BindVertices`]' blocks (no
/// second pass to rebuild them). A target that moves a vertex in at most
/// half of the blocks keeps only those blocks and their numbers (sparse,
/// as a glTF sparse accessor; the morph reads nothing of the others); a
/// target that moves neither positions nor normals keeps no blocks.
/// Tangent deltas are not kept (the CPU stage skins no tangents).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphDeltas {
    vertices: usize,
    targets: Vec<Option<TargetBlocks>>,
}

impl MorphDeltas {
    /// Prepares `targets` (each `(position deltas, normal deltas)`, each
    /// empty or one per vertex) for a mesh of `vertices` vertices.
    pub fn new<'a>(
        vertices: usize,
        targets: impl IntoIterator<Item = (&'a [Vec3], &'a [Vec3])>,
    ) -> Result<Self, AnimError> {
        let blocks = vertices.div_ceil(8);
        if u32::try_from(blocks).is_err() {
            return Err(AnimError::InvalidJob(format!(
                "{vertices} vertices are too many for morph targets"
            )));
        }
        let mut out = Vec::new();
        for (t, (positions, normals)) in targets.into_iter().enumerate() {
            for (what, len) in [("position", positions.len()), ("normal", normals.len())] {
                if len != 0 && len != vertices {
                    return Err(AnimError::InvalidJob(format!(
                        "morph target {t} has {len} {what} deltas for {vertices} vertices"
                    )));
                }
            }
            // The blocks where the target moves something.
            let moves = |b: usize| {
                let r = 8 * b..(8 * b + 8).min(vertices);
                [positions, normals].iter().any(|a| {
                    a.get(r.clone())
                        .is_some_and(|d| d.iter().any(|v| *v != Vec3::ZERO))
                })
            };
            let stored: Vec<u32> = (0..blocks)
                .filter(|&b| moves(b))
                .map(|b| b as u32)
                .collect();
            if stored.is_empty() {
                out.push(None);
                continue;
            }
            let sparse = 2 * stored.len() <= blocks;
            let block_of = |b: usize| -> DeltaBlock {
                let r = 8 * b..(8 * b + 8).min(vertices);
                let row = |a: &[Vec3]| a.get(r.clone()).map(Vec3x8::from_vec3s).unwrap_or_default();
                [row(positions), row(normals)]
            };
            // Bounded by the deltas given: at most 2 x 24 bytes per vertex
            // of an attribute that holds 12.
            let target = if sparse {
                TargetBlocks {
                    blocks: stored.iter().map(|&b| block_of(b as usize)).collect(),
                    index: stored.into_boxed_slice(),
                }
            } else {
                TargetBlocks {
                    blocks: (0..blocks).map(block_of).collect(),
                    index: Box::default(),
                }
            };
            out.push(Some(target));
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

    /// How many targets are kept sparse (only the blocks they move).
    pub fn sparse_targets(&self) -> usize {
        self.targets
            .iter()
            .flatten()
            .filter(|t| !t.index.is_empty())
            .count()
    }

    /// Checks `weights` against the targets.
    fn check_weights(&self, weights: &[f32]) -> Result<(), AnimError> {
        if weights.len() != self.targets.len() {
            return Err(AnimError::LengthMismatch {
                what: "morph weights",
                expected: self.targets.len(),
                got: weights.len(),
            });
        }
        if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
            return Err(AnimError::InvalidJob(format!(
                "morph target {i} has weight {}",
                weights[i]
            )));
        }
        Ok(())
    }
}

/// Morphs all of `base` into `out` (resized; normals when `base` has
/// them) with the `active` targets and weights, in passes of up to
/// [`MORPH_PASS_TARGETS`] targets; `avx2`: with the AVX2 pass (the CPU
/// must have AVX2 and FMA).
fn morph_all<'a>(
    base: &BindVertices,
    active: impl Iterator<Item = (&'a TargetBlocks, f32)>,
    out: &mut BindVertices,
    avx2: bool,
) {
    let n = base.positions.len();
    out.resize_like(n, !base.normals.is_empty());
    let whole = n / 8;
    let base_blocks = (&base.position_blocks[..], &base.normal_blocks[..]);
    let base_tail = (
        base.positions.get(8 * whole..).unwrap_or_default(),
        base.normals.get(8 * whole..).unwrap_or_default(),
    );
    let mut active = active.peekable();
    let mut pass = [MorphEntry::default(); MORPH_PASS_TARGETS];
    let mut first = true;
    loop {
        let mut count = 0;
        while count < MORPH_PASS_TARGETS {
            let Some((t, weight)) = active.next() else {
                break;
            };
            pass[count] = MorphEntry {
                blocks: &t.blocks,
                index: &t.index,
                weight,
                cursor: 0,
            };
            count += 1;
        }
        let last = active.peek().is_none();
        let o = MorphOut {
            position_blocks: &mut out.position_blocks,
            normal_blocks: &mut out.normal_blocks,
            positions: &mut out.positions,
            normals: &mut out.normals,
        };
        let entries = &mut pass[..count];
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller says the CPU has AVX2 and FMA; the
            // slices are those the definition takes.
            unsafe {
                crate::anim::simd::avx2::morph::morph_pass(
                    base_blocks,
                    base_tail,
                    0,
                    entries,
                    first,
                    last,
                    o,
                )
            };
        } else {
            crate::anim::simd::lanes::morph_pass(
                base_blocks,
                base_tail,
                0,
                entries,
                first,
                last,
                o,
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = avx2;
            crate::anim::simd::lanes::morph_pass(
                base_blocks,
                base_tail,
                0,
                entries,
                first,
                last,
                o,
            );
        }
        first = false;
        if last {
            return;
        }
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
/// active target with normals, and of a sparse target only the blocks it
/// moves. On AVX2 a block's sums stay in registers (`avx2::morph_pass`).
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
        self.deltas.check_weights(self.weights)?;
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
        // The active targets, gathered on the stack a pass at a time (no
        // allocation per call).
        let active = self
            .weights
            .iter()
            .zip(&self.deltas.targets)
            .filter_map(|(&w, t)| Some((t.as_ref()?, w)).filter(|_| w != 0.0));
        morph_all(self.base, active, self.out, crate::anim::simd::avx2_fma());
        Ok(())
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

    /// The tiers the CPU has: the definition, and AVX2 where there is.
    fn tiers() -> Vec<bool> {
        let mut t = vec![false];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            t.push(true);
        }
        t
    }

    #[test]
    fn equals_the_scalar_rule_bit_for_bit() {
        let mut r = rng(7);
        let mut v3 = move || Vec3::new(r(), r(), r());
        // Tails of 0..7 vertices, targets with one attribute or none,
        // sparse ones (a few blocks moved, the last one among them or
        // not), more active targets than one pass takes, weights outside
        // [0, 1], on every tier the CPU has.
        for (n, t) in [(1, 1), (8, 3), (21, 12), (64, 20), (37, 9), (203, 11)] {
            let pos: Vec<Vec3> = (0..n).map(|_| v3()).collect();
            let nrm: Vec<Vec3> = (0..n).map(|_| v3().normalize()).collect();
            let mut sparse = 0;
            let targets: Vec<(Vec<Vec3>, Vec<Vec3>)> = (0..t)
                .map(|i| match i % 5 {
                    0 => ((0..n).map(|_| v3()).collect(), Vec::new()),
                    1 => (Vec::new(), (0..n).map(|_| v3()).collect()),
                    2 => (Vec::new(), Vec::new()),
                    3 => (
                        (0..n).map(|_| v3()).collect(),
                        (0..n).map(|_| v3()).collect(),
                    ),
                    _ => {
                        // Vertices 9, 10 and the last: blocks 1 and the
                        // last (sparse from four blocks on).
                        let moved = |v: usize| v == 9 || v == 10 || v + 1 == n;
                        if 2 * (1 + usize::from(n > 16)) <= n.div_ceil(8) {
                            sparse += 1;
                        }
                        let mut d = |v| if moved(v) { v3() } else { Vec3::ZERO };
                        let dp = (0..n).map(&mut d).collect();
                        (dp, (0..n).map(d).collect())
                    }
                })
                .collect();
            let deltas =
                MorphDeltas::new(n, targets.iter().map(|(p, q)| (&p[..], &q[..]))).unwrap();
            assert_eq!(deltas.sparse_targets(), sparse, "n {n} t {t}");
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
                    let (p, q) = reference(&pos, nrm, &targets, &weights);
                    for avx2 in tiers() {
                        let active = weights
                            .iter()
                            .zip(&deltas.targets)
                            .filter_map(|(&w, t)| Some((t.as_ref()?, w)).filter(|_| w != 0.0));
                        morph_all(&base, active, &mut out, avx2);
                        assert_eq!(out.positions(), &p[..], "n {n} t {t} avx2 {avx2}");
                        assert_eq!(out.normals(), &q[..], "n {n} t {t} avx2 {avx2}");
                        // The blocks are those of the streams.
                        assert_eq!(out, BindVertices::new(p.clone(), q.clone()).unwrap());
                    }
                    MorphBlocksJob {
                        deltas: &deltas,
                        weights: &weights,
                        base: &base,
                        out: &mut out,
                    }
                    .run()
                    .unwrap();
                    assert_eq!(out.positions(), &p[..], "n {n} t {t}");
                    assert_eq!(out.normals(), &q[..], "n {n} t {t}");
                }
            }
        }
    }

    #[test]
    fn zero_and_huge_normal_sums_renormalise_as_glam() {
        // A normal the targets cancel (zero) and one they blow up to
        // infinity: glam's normalize_or_zero gives zero for both.
        let base = BindVertices::new(vec![Vec3::ZERO; 9], vec![Vec3::X; 9]).unwrap();
        let mut dn = vec![Vec3::ZERO; 9];
        dn[0] = -0.25 * Vec3::X;
        dn[8] = Vec3::splat(f32::MAX);
        let dp = vec![Vec3::ONE; 9];
        let deltas = MorphDeltas::new(9, [(&dp[..], &dn[..])]).unwrap();
        let (p, q) = reference(
            base.positions(),
            base.normals(),
            &[(dp.clone(), dn.clone())],
            &[4.0],
        );
        assert_eq!(q[0], Vec3::ZERO);
        assert_eq!(q[8], Vec3::ZERO);
        let mut out = BindVertices::default();
        for avx2 in tiers() {
            let active = deltas.targets.iter().flatten().map(|t| (t, 4.0));
            morph_all(&base, active, &mut out, avx2);
            assert_eq!(out.positions(), &p[..]);
            assert_eq!(out.normals(), &q[..], "avx2 {avx2}");
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
