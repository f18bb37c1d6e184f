//! What the kernels share with the jobs that call them: the block form of
//! eight vertices ([`Vec3x8`]), the cofactor normal matrix
//! ([`cofactor`], [`similarity_cofactor`]), a baked SQUAD interval
//! ([`SquadSpan`]), a clip's lane group of eight timelines ([`LaneGroup`]),
//! its solo vec3 tracks ([`SoloVec3`], [`Vec3Field`]), the CPU morph's
//! pass over a chunk of vertices ([`morph_pass`], the one definition every
//! tier compiles) and the polynomial constants of the scalar and SIMD
//! slerps; and, re-exported, the pose and palette types the kernels read
//! and write. This module sits below both kernels and jobs: it imports no
//! kernel and no job, only the leaf data-type modules re-exported here
//! (which import no kernel either).

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

pub(crate) use crate::anim::palette::formats::{Affine4x3, DualQuat};
pub(crate) use crate::anim::pose::skeleton::NO_PARENT;
#[cfg(target_arch = "x86_64")]
pub(crate) use crate::anim::pose::soa::soa_float;
pub(crate) use crate::anim::pose::soa::{PoseSink, SoaTransforms8};
pub(crate) use crate::anim::pose::transform::Transform;

// The glam layouts the kernels read through raw pointers: an `Affine3A`
// as 16 floats (columns at 0, 4, 8, translation at 12; w lanes unused),
// a `Mat3A` as 12 (three 16-byte columns), a `Quat` as 4, a `Vec3` as 3.
const _: () = assert!(
    std::mem::size_of::<Affine3A>() == 64
        && std::mem::offset_of!(Affine3A, matrix3) == 0
        && std::mem::offset_of!(Affine3A, translation) == 48
        && std::mem::size_of::<Mat3A>() == 48
        && std::mem::size_of::<Quat>() == 16
        && std::mem::size_of::<Vec3>() == 12
);

/// Eight vertices' x, y and z, eight floats each (one AVX register each):
/// the block form of [`BindVertices`](crate::anim::BindVertices).
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Vec3x8 {
    pub(crate) x: [f32; 8],
    pub(crate) y: [f32; 8],
    pub(crate) z: [f32; 8],
}

// The kernels read a slice of blocks as `Vec3` runs too (block k at `Vec3`
// 8 k) and each row with one aligned 32-byte load.
const _: () = assert!(
    std::mem::size_of::<Vec3x8>() == 8 * std::mem::size_of::<Vec3>()
        && std::mem::size_of::<Vec3>() == 12
        && std::mem::align_of::<Vec3x8>() == 32
        && std::mem::offset_of!(Vec3x8, x) == 0
        && std::mem::offset_of!(Vec3x8, y) == 32
        && std::mem::offset_of!(Vec3x8, z) == 64
);

impl Vec3x8 {
    #[inline]
    pub(crate) fn from_vec3s(v: &[Vec3]) -> Self {
        let mut b = Self::default();
        for (i, p) in v.iter().take(8).enumerate() {
            (b.x[i], b.y[i], b.z[i]) = (p.x, p.y, p.z);
        }
        b
    }
}

/// How far a palette entry's columns may be from orthogonal and of equal
/// length, relative to their mean squared length, for it to count as a
/// similarity (2^-19): the cofactor over the squared scale then moves a
/// unit vector's squared length by at most 4 x 2^-19 (about 7.6e-6).
const SIMILARITY_TOLERANCE: f32 = 1.0 / 524_288.0;

/// The cofactor of `m`'s 3x3 divided by its squared scale when `m` is a
/// similarity (columns orthogonal and of one length within
/// [`SIMILARITY_TOLERANCE`]), so that it keeps unit vectors unit, with
/// `true`; else the cofactor as it is, with `false`. Either way its
/// columns point as the cofactor's.
pub(crate) fn similarity_cofactor(m: &Mat3A) -> (Mat3A, bool) {
    let k = cofactor(m);
    let (a, b, c) = (m.x_axis, m.y_axis, m.z_axis);
    let (la, lb, lc) = (a.length_squared(), b.length_squared(), c.length_squared());
    let s2 = (la + lb + lc) / 3.0;
    let tol = s2 * SIMILARITY_TOLERANCE;
    let similar = s2.is_finite()
        && s2 > f32::MIN_POSITIVE
        && [la - s2, lb - s2, lc - s2, a.dot(b), a.dot(c), b.dot(c)]
            .iter()
            .all(|d| d.abs() <= tol);
    if similar {
        (k * (1.0 / s2), true)
    } else {
        (k, false)
    }
}

/// Columns of the cofactor matrix of `m` (= det(m) * m^-T).
#[inline]
pub(crate) fn cofactor(m: &Mat3A) -> Mat3A {
    Mat3A::from_cols(
        m.y_axis.cross(m.z_axis),
        m.z_axis.cross(m.x_axis),
        m.x_axis.cross(m.y_axis),
    )
}

/// One SQUAD interval, set up once at build time: `Squad(q1, a, b, c, u)`
/// with the two fixed-end slerps' angles and reciprocal sines
/// (`angles = [theta(q1, c), 1/sin, theta(a, b), 1/sin]`); `b` is already in
/// `a`'s hemisphere, `c` in `q1`'s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SquadSpan {
    pub q1: Quat,
    pub c: Quat,
    pub a: Quat,
    pub b: Quat,
    pub angles: Vec4,
}

/// Abramowitz and Stegun 4.4.46: `acos(x) = sqrt(1 - x) * sum a_i x^i`
/// on `[0, 1]`, |error| <= 2e-8. Highest power first, digits as published.
#[allow(clippy::excessive_precision)]
pub(crate) const ACOS_COEFFS: [f32; 8] = [
    -0.001_262_491_1,
    0.006_670_090_1,
    -0.017_088_125_6,
    0.030_891_881_0,
    -0.050_174_304_6,
    0.088_978_987_4,
    -0.214_598_801_6,
    1.570_796_305_0,
];

/// Below this angle (radians) between two quaternions a slerp is a lerp to
/// within f32 precision; the weights are still computed with this angle so
/// the code has no branch and no division by a vanishing sine.
pub(crate) const MIN_SLERP_ANGLE: f32 = 1e-4;

/// Timelines in a lane group.
pub(crate) const LANES: usize = 8;

/// Buckets of a lane group's seek index ([`LaneGroup::starts`]).
pub(crate) const SEEK_BUCKETS: usize = 16;

/// Eight timelines in lanes: `rows` rows of eight floats from `at`, and
/// each member's own key count (its `KeysAt::len` again, side by side so
/// that the AVX2 kernel reads all eight in one load).
///
/// A seek index lets a jump skip the rows before `t`: the group's span
/// (from its earliest first key, `t0`) is cut into [`SEEK_BUCKETS`] equal
/// buckets (`per` of them a second), and `starts[b]` is the last row at or
/// before bucket `b`'s start in every lane (0 when there is none). Like
/// the previous sample's interval, it is a hint, tested before it is used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LaneGroup {
    pub at: u32,
    pub rows: u32,
    pub lens: [i32; LANES],
    pub t0: f32,
    pub per: f32,
    pub starts: [u8; SEEK_BUCKETS],
}

impl LaneGroup {
    /// The seek index's bucket of `t` (any float; out of range clamps).
    #[inline(always)]
    pub fn bucket(&self, t: f32) -> usize {
        // `as` saturates: below t0 (or NaN) gives 0.
        (((t - self.t0) * self.per) as usize).min(SEEK_BUCKETS - 1)
    }

    /// Fills `t0`, `per` and `starts` from the group's rows (`times` from
    /// `at`), each row of [`LANES`] keys rising down every lane (`+inf`
    /// padding last).
    pub(crate) fn index_seeks(&mut self, times: &[f32]) {
        let rows = self.rows as usize;
        let row = |k: usize| &times[self.at as usize + k * LANES..][..LANES];
        let t0 = row(0).iter().copied().fold(f32::INFINITY, f32::min);
        let end = (0..LANES)
            .map(|lane| row(self.lens[lane] as usize - 1)[lane])
            .fold(f32::NEG_INFINITY, f32::max);
        let per = SEEK_BUCKETS as f32 / (end - t0);
        self.t0 = t0;
        self.per = if per.is_finite() && per > 0.0 {
            per
        } else {
            0.0
        };
        for b in 0..SEEK_BUCKETS {
            // The smallest time that falls in bucket b (about: a start a
            // little late only makes the hint fail its test).
            let start = if self.per > 0.0 {
                t0 + b as f32 / self.per
            } else {
                t0
            };
            let behind = (0..rows)
                .take_while(|&k| row(k).iter().all(|&v| v <= start))
                .count();
            self.starts[b] = behind.saturating_sub(1) as u8;
        }
    }
}

/// Which part of a joint's transform a vec3 batch writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Vec3Field {
    Translation,
    Scale,
}

/// Linear translation or scale tracks whose key times few other tracks
/// share: track-major, one entry per track, so sampling one touches its
/// own two keys and little else (a batch per track would scatter the
/// sampler over many small allocations).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SoloVec3 {
    pub joints: Vec<u16>,
    pub fields: Vec<Vec3Field>,
    pub timelines: Vec<u32>,
    /// First key of each track in `keys`.
    pub offsets: Vec<u32>,
    /// Every track's keys, then one `Vec3::ZERO` (so that a 16-byte load
    /// of any key stays inside).
    pub keys: Vec<Vec3>,
}

/// Eight compressed-clip tracks of one segment, as the decoding kernel
/// reads them: per lane the bit position of its first component in the
/// earlier sample, its bit rate and that rate's `1 / (2^bits - 1)`, and
/// per component the segment minimum and extent (in 255ths, already
/// multiplied by 1/255) and the clip minimum and extent. Spare lanes
/// repeat the last track.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PackedLanes {
    /// Bit position of each lane's earlier sample; the later is `row`
    /// bits after it, and `u` the fraction between them.
    pub pos: [i32; 8],
    pub row: [i32; 8],
    pub u: [f32; 8],
    pub bits: [i32; 8],
    pub inv_levels: [f32; 8],
    pub seg_min: [[f32; 8]; 3],
    pub seg_ext: [[f32; 8]; 3],
    pub clip_min: [[f32; 8]; 3],
    pub clip_ext: [[f32; 8]; 3],
}

/// Most active targets one pass of the CPU morph folds into a block (more
/// take further passes over the chunk).
pub(crate) const MORPH_PASS_TARGETS: usize = 8;

/// One active target in a pass of [`morph_pass`]: its delta blocks (per
/// block of eight vertices, positions then normals), their block numbers
/// (empty: one block per block of the mesh, dense), its weight, and for a
/// sparse target the position in `index` of its first block at or after
/// the pass's current block (the caller sets it for the chunk's first
/// block; the pass advances it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MorphEntry<'a> {
    pub(crate) blocks: &'a [[Vec3x8; 2]],
    pub(crate) index: &'a [u32],
    pub(crate) weight: f32,
    pub(crate) cursor: usize,
}

/// What a pass of [`morph_pass`] writes: a chunk's morphed vertices as
/// whole blocks of eight and as `Vec3` streams (normals empty without
/// normals).
pub(crate) struct MorphOut<'a> {
    pub(crate) position_blocks: &'a mut [Vec3x8],
    pub(crate) normal_blocks: &'a mut [Vec3x8],
    pub(crate) positions: &'a mut [Vec3],
    pub(crate) normals: &'a mut [Vec3],
}

/// One pass of the CPU morph over a chunk of `out.positions.len()`
/// vertices whose first block is the mesh's block `b0`: per block, the
/// sums so far (`first`: the bind vertices, `base_blocks` for the chunk's
/// whole blocks and `base_tail` for the vertices of a last partial one;
/// else what the pass before wrote into `out`), plus each of `pass`'s
/// weighted deltas in order (`acc += d * w`, lane by lane, `MorphJob`'s
/// `o += d * w`); on the `last` pass the normals renormalised (glam's
/// `normalize_or_zero`, lane by lane) and the `Vec3` streams written too.
/// The definition of the CPU morph: every tier runs this code (the AVX2
/// tier compiled with its features, `avx2::morph_pass`), so every tier
/// gives the same floats.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn morph_pass(
    base_blocks: (&[Vec3x8], &[Vec3x8]),
    base_tail: (&[Vec3], &[Vec3]),
    b0: usize,
    pass: &mut [MorphEntry],
    first: bool,
    last: bool,
    out: MorphOut,
) {
    let n = out.positions.len();
    let with_normals = !out.normals.is_empty();
    let whole = n / 8;
    for lb in 0..n.div_ceil(8) {
        let (mut p, mut q) = match (first, lb < whole) {
            (true, true) => (
                base_blocks.0[lb],
                base_blocks.1.get(lb).copied().unwrap_or_default(),
            ),
            (true, false) => (
                Vec3x8::from_vec3s(base_tail.0),
                Vec3x8::from_vec3s(base_tail.1),
            ),
            (false, true) => (
                out.position_blocks[lb],
                out.normal_blocks.get(lb).copied().unwrap_or_default(),
            ),
            (false, false) => (
                Vec3x8::from_vec3s(&out.positions[8 * lb..]),
                Vec3x8::from_vec3s(out.normals.get(8 * lb..).unwrap_or(&[])),
            ),
        };
        let b = b0 + lb;
        for e in pass.iter_mut() {
            let d = if e.index.is_empty() {
                &e.blocks[b]
            } else if e.index.get(e.cursor).is_some_and(|&i| i as usize == b) {
                e.cursor += 1;
                &e.blocks[e.cursor - 1]
            } else {
                continue;
            };
            add_scaled(&mut p, &d[0], e.weight);
            if with_normals {
                add_scaled(&mut q, &d[1], e.weight);
            }
        }
        if last && with_normals {
            normalize_or_zero(&mut q);
        }
        if lb < whole {
            out.position_blocks[lb] = p;
            if with_normals {
                out.normal_blocks[lb] = q;
            }
        }
        if last || lb >= whole {
            let end = (8 * lb + 8).min(n);
            write_vec3s(&p, &mut out.positions[8 * lb..end]);
            if with_normals {
                write_vec3s(&q, &mut out.normals[8 * lb..end]);
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
        // `r.is_finite() && r > 0.0`, in comparisons that vectorise.
        let keep = r > 0.0 && r < f32::INFINITY;
        for c in [&mut v.x[l], &mut v.y[l], &mut v.z[l]] {
            *c = if keep { *c * r } else { 0.0 };
        }
    }
}

/// The first `out.len()` (at most 8) lanes of `b` as `Vec3`s.
#[inline(always)]
fn write_vec3s(b: &Vec3x8, out: &mut [Vec3]) {
    for (l, o) in out.iter_mut().enumerate().take(8) {
        *o = Vec3::new(b.x[l], b.y[l], b.z[l]);
    }
}
