use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A, Vec4};

#[cfg(target_arch = "x86_64")]
use super::simd::Tier;
use super::{AnimError, DualQuat, QuatTranslation};
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

/// CPU reference linear blend skinning of positions and (optionally) normals.
///
/// Each vertex has `per_vertex` influences stored consecutively in `joints`
/// (indices into `skin`) and `weights` (summing to one). With one influence
/// per vertex `weights` may be empty: every weight is then 1 and none is
/// read or multiplied (ozz's jobs likewise read `k - 1` weights). The blended matrix
/// `M = sum w_k skin[j_k]` moves the position; the normal is moved by the
/// cofactor of M's 3x3 (the inverse transpose up to scale, so non-uniform
/// scale stays right) and renormalised.
pub struct LinearBlendJob<'a> {
    pub skin: &'a [Affine3A],
    pub per_vertex: usize,
    pub joints: &'a [u16],
    pub weights: &'a [f32],
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    pub out_positions: &'a mut [Vec3],
    /// Empty to skip normals.
    pub out_normals: &'a mut [Vec3],
    /// The caller vouches that every normal has unit length: its squared
    /// length within [`UNIT_NORMAL_TOLERANCE`] of 1, as
    /// `Vec3::normalize` gives and glTF requires ([`normals_are_unit`]
    /// checks a stream once, at load). Then a vertex whose matrix is a
    /// similarity (rotation or reflection, uniform scale, translation) needs
    /// no renormalisation: its cofactor divided by the squared scale keeps
    /// lengths, and the CPU kernels skip that step where they can (today:
    /// one weightless influence, AVX2 and up), giving the scalar
    /// definition's direction at a length within 5e-6 of 1. A normal that
    /// breaks the promise keeps its own length under such a matrix (its
    /// direction is still right); `false` always renormalises.
    pub unit_normals: bool,
}

/// How far from 1 a normal's squared length may be for
/// [`LinearBlendJob::unit_normals`]: 2^-20 (about 9.5e-7), a few ulps, which
/// `Vec3::normalize` stays inside.
pub const UNIT_NORMAL_TOLERANCE: f32 = 1.0 / 1_048_576.0;

/// Whether every normal in `normals` has unit length in the sense of
/// [`LinearBlendJob::unit_normals`] (true for an empty stream). One pass,
/// meant for load time, not every frame.
pub fn normals_are_unit(normals: &[Vec3]) -> bool {
    normals
        .iter()
        .all(|n| (n.length_squared() - 1.0).abs() <= UNIT_NORMAL_TOLERANCE)
}

/// A mesh's joint indices checked once, for skinning it every frame:
/// [`LinearBlendJob::run_checked`], [`DualQuatSkinningJob::run_checked`]
/// and [`QuatTranslationSkinningJob::run_checked_with`] compare the largest
/// index, found here, with the palette's length, where
/// `run` scans every index on every call (a pass over the stream: about 4
/// per cent of a four-influence skin with normals, 100,000 vertices, on a
/// Zen 3). The type owns the indices and lends them out read-only, so they
/// cannot change after the check; it dereferences to `[u16]`, so a job's
/// `joints` field takes `&checked`.
///
/// It also keeps each index times 8 (when every index is below 8192; 2
/// bytes more an index, made the first time the kernel that reads them
/// runs), which the AVX2 linear blend kernel with two to four influences
/// and normals reads from [`LinearBlendJob::run_prepared`]:
/// its palette entries are 64 bytes, so an entry's address is then one
/// load and one `lea` from the index (without, a shift more), and the
/// address is put in a register of its own (an indexed memory operand of
/// an FMA costs Intel cores two micro-operations where a plain one costs
/// one). On an Emerald Rapids, 3.28 against 3.39 ns/vertex with four
/// influences (alternated processes, medians of 10).
#[derive(Clone, Debug, Default)]
pub struct CheckedJoints {
    joints: Box<[u16]>,
    max: u16,
    /// Each index times 8 (empty when an index is 8192 or more), made on
    /// first use: derived from `joints`, so not compared.
    times8: std::sync::OnceLock<Box<[u16]>>,
}

impl PartialEq for CheckedJoints {
    fn eq(&self, other: &Self) -> bool {
        self.joints == other.joints
    }
}

impl Eq for CheckedJoints {}

impl CheckedJoints {
    /// Takes the indices and finds the largest (one pass; 0 when empty).
    pub fn new(joints: Vec<u16>) -> Self {
        let max = max_joint(&joints);
        Self {
            joints: joints.into_boxed_slice(),
            max,
            times8: std::sync::OnceLock::new(),
        }
    }

    /// Each index times 8, empty when an index is 8192 or more (made the
    /// first time it is asked for).
    pub(crate) fn times8(&self) -> &[u16] {
        self.times8.get_or_init(|| {
            if self.max < 8192 {
                self.joints.iter().map(|&j| j * 8).collect()
            } else {
                Box::default()
            }
        })
    }

    /// The largest index, `None` when there are none.
    pub fn max_joint(&self) -> Option<u16> {
        (!self.joints.is_empty()).then_some(self.max)
    }

    pub fn as_slice(&self) -> &[u16] {
        &self.joints
    }

    /// The largest index when `joints` is this set's own slice (the same
    /// memory, as `&checked` gives a job), else an error: the job would
    /// skin other indices than the ones checked.
    fn max_for(&self, joints: &[u16]) -> Result<u16, AnimError> {
        if std::ptr::eq(joints.as_ptr(), self.joints.as_ptr()) && joints.len() == self.joints.len()
        {
            Ok(self.max)
        } else {
            Err(AnimError::InvalidJob(format!(
                "run_checked: the job's {} joint indices are not the {} checked ones",
                joints.len(),
                self.joints.len()
            )))
        }
    }
}

impl From<Vec<u16>> for CheckedJoints {
    fn from(joints: Vec<u16>) -> Self {
        Self::new(joints)
    }
}

impl std::ops::Deref for CheckedJoints {
    type Target = [u16];

    fn deref(&self) -> &[u16] {
        &self.joints
    }
}

/// Eight vertices' x, y and z, eight floats each (one AVX register each):
/// the block form of [`BindVertices`].
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Vec3x8 {
    pub(crate) x: [f32; 8],
    pub(crate) y: [f32; 8],
    pub(crate) z: [f32; 8],
}

impl Vec3x8 {
    fn from_vec3s(v: &[Vec3]) -> Self {
        let mut b = Self::default();
        for (i, p) in v.iter().take(8).enumerate() {
            (b.x[i], b.y[i], b.z[i]) = (p.x, p.y, p.z);
        }
        b
    }
}

/// A mesh's bind-pose positions and normals kept for skinning it every
/// frame, made once at load as [`CheckedJoints`] is: as `Vec3` streams,
/// which every job reads, and as blocks of eight vertices (eight x, eight
/// y, eight z), which the AVX2 and AVX-512 linear blend kernels for two to
/// four influences with normals read with three loads each (AVX-512: three
/// loads and three inserts for sixteen vertices) instead of rearranging
/// the `Vec3` streams themselves on every call (on a Zen 3, about 9 per
/// cent of the AVX2 job at 100,000 vertices; on an Emerald Rapids, 2 to 3
/// per cent of the AVX-512 one). The blocks cost another
/// 24 bytes a vertex. [`LinearBlendJob::run_prepared`] takes it with a job
/// whose `positions` and `normals` are its own; the type owns the streams
/// and lends them out read-only, so the two forms cannot drift apart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BindVertices {
    positions: Box<[Vec3]>,
    normals: Box<[Vec3]>,
    position_blocks: Box<[Vec3x8]>,
    normal_blocks: Box<[Vec3x8]>,
}

impl BindVertices {
    /// Takes the streams (`normals` empty or one per position, else an
    /// error) and writes their whole blocks of eight (one pass; the last
    /// `len % 8` vertices stay in the `Vec3` streams only).
    pub fn new(positions: Vec<Vec3>, normals: Vec<Vec3>) -> Result<Self, AnimError> {
        if !normals.is_empty() && normals.len() != positions.len() {
            return Err(AnimError::LengthMismatch {
                what: "bind normals",
                expected: positions.len(),
                got: normals.len(),
            });
        }
        let blocks = |v: &[Vec3]| v.chunks_exact(8).map(Vec3x8::from_vec3s).collect();
        Ok(Self {
            position_blocks: blocks(&positions),
            normal_blocks: blocks(&normals),
            positions: positions.into_boxed_slice(),
            normals: normals.into_boxed_slice(),
        })
    }

    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Empty when the mesh has none.
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }

    /// The blocks of a job's `positions` and `normals` when those are this
    /// set's own slices (the same memory, as `vertices.positions()` gives a
    /// job; `normals` may also be empty, for a job that skips them), else
    /// an error: the blocks would hold other vertices than the job's.
    fn blocks_for(
        &self,
        positions: &[Vec3],
        normals: &[Vec3],
    ) -> Result<(&[Vec3x8], &[Vec3x8]), AnimError> {
        let own =
            |a: &[Vec3], b: &[Vec3]| std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len();
        if !own(positions, &self.positions) {
            return Err(AnimError::InvalidJob(format!(
                "run_prepared: the job's {} positions are not the {} prepared ones",
                positions.len(),
                self.positions.len()
            )));
        }
        if normals.is_empty() {
            return Ok((&self.position_blocks, &[]));
        }
        if !own(normals, &self.normals) {
            return Err(AnimError::InvalidJob(format!(
                "run_prepared: the job's {} normals are not the {} prepared ones",
                normals.len(),
                self.normals.len()
            )));
        }
        Ok((&self.position_blocks, &self.normal_blocks))
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

/// Checks the vertex streams shared by every skinning job.
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate_streams(
    palette_len: usize,
    implicit_weights: bool,
    per_vertex: usize,
    joints: &[u16],
    weights: &[f32],
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &[Vec3],
    out_normals: &[Vec3],
    checked_max: Option<u16>,
) -> Result<(), AnimError> {
    let n = positions.len();
    let k = per_vertex;
    if k == 0 {
        return Err(AnimError::InvalidJob("zero influences per vertex".into()));
    }
    let nk = n
        .checked_mul(k)
        .ok_or_else(|| AnimError::InvalidJob(format!("{n} vertices of {k} influences overflow")))?;
    // With one influence, a job that allows it takes no weights as all 1.
    let weightless = implicit_weights && k == 1 && weights.is_empty();
    for (what, got) in [
        ("influence joints", joints.len()),
        ("influence weights", weights.len()),
    ] {
        if got != nk && !(weightless && what == "influence weights") {
            return Err(AnimError::LengthMismatch {
                what,
                expected: nk,
                got,
            });
        }
    }
    if out_positions.len() != n {
        return Err(AnimError::LengthMismatch {
            what: "skinned positions",
            expected: n,
            got: out_positions.len(),
        });
    }
    if !normals.is_empty() || !out_normals.is_empty() {
        for (what, got) in [
            ("normals", normals.len()),
            ("skinned normals", out_normals.len()),
        ] {
            if got != n {
                return Err(AnimError::LengthMismatch {
                    what,
                    expected: n,
                    got,
                });
            }
        }
    }
    // A max-reduction vectorises; an early-exit search over every slot
    // would cost about a nanosecond per vertex of a four-influence mesh.
    // Indices checked at load ([`CheckedJoints`]) skip it.
    let max = checked_max.unwrap_or_else(|| max_joint(joints));
    if !joints.is_empty() && max as usize >= palette_len {
        return Err(AnimError::InvalidJob(format!(
            "influence names joint {max}, but the palette has {palette_len}"
        )));
    }
    Ok(())
}

/// The largest joint index in `joints` (0 when empty). With AVX2 it takes
/// sixteen indices per instruction (`vpmaxuw`); SSE2 has no unsigned
/// 16-bit max, and this scan is a few per cent of a one-influence skin.
#[inline]
pub(crate) fn max_joint(joints: &[u16]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    if super::simd::avx2_fma() {
        #[target_feature(enable = "avx2")]
        unsafe fn max_avx2(joints: &[u16]) -> u16 {
            joints.iter().copied().fold(0u16, u16::max)
        }
        // SAFETY: the tier says the CPU has AVX2.
        return unsafe { max_avx2(joints) };
    }
    joints.iter().copied().fold(0u16, u16::max)
}

impl LinearBlendJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        self.validate_with(None)
    }

    fn validate_with(&self, checked_max: Option<u16>) -> Result<(), AnimError> {
        validate_streams(
            self.skin.len(),
            true,
            self.per_vertex,
            self.joints,
            self.weights,
            self.positions,
            self.normals,
            self.out_positions,
            self.out_normals,
            checked_max,
        )
    }

    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        self.run_validated(None);
        Ok(())
    }

    /// [`Self::run`] for a job whose `joints` are `checked`'s (`joints:
    /// &checked`): the largest index, found when they were checked, is
    /// compared with the palette's length instead of scanning them all.
    /// Errors as `run` does, and also when `joints` is another slice.
    pub fn run_checked(self, checked: &CheckedJoints) -> Result<(), AnimError> {
        self.validate_with(Some(checked.max_for(self.joints)?))?;
        self.run_validated(None);
        Ok(())
    }

    /// [`Self::run_checked`] for a job whose `positions` and `normals` are
    /// also `vertices`' own (`vertices.positions()`, and
    /// `vertices.normals()` or empty): where a kernel can, it reads their
    /// blocks of eight ([`BindVertices`]). The same results as `run`.
    /// Errors as `run_checked` does, and also when those streams are other
    /// slices.
    pub fn run_prepared(
        self,
        checked: &CheckedJoints,
        vertices: &BindVertices,
    ) -> Result<(), AnimError> {
        self.validate_with(Some(checked.max_for(self.joints)?))?;
        let blocks = vertices.blocks_for(self.positions, self.normals)?;
        self.run_validated(Some(Prepared { blocks, checked }));
        Ok(())
    }

    /// Skins with the fastest path the tier has; `prepared`: the prepared
    /// blocks of eight of `positions` and `normals` and the joint indices
    /// times 8, when there are.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    fn run_validated(self, prepared: Option<Prepared>) {
        #[cfg(target_arch = "x86_64")]
        {
            let tier = super::simd::tier();
            if tier > Tier::Scalar {
                lbs_fast(
                    tier,
                    self.unit_normals,
                    self.skin,
                    self.per_vertex,
                    self.joints,
                    self.weights,
                    self.positions,
                    self.normals,
                    prepared,
                    self.out_positions,
                    self.out_normals,
                );
                return;
            }
        }
        lbs_reference(
            self.skin,
            self.per_vertex,
            self.joints,
            self.weights,
            self.positions,
            self.normals,
            self.out_positions,
            self.out_normals,
        );
    }
}

/// What [`LinearBlendJob::run_prepared`] hands the kernels: the blocks of
/// eight of the job's bind streams ([`BindVertices`]) and the checked
/// joint indices the job's are ([`CheckedJoints`], whose indices times 8
/// the AVX2 pipelined kernel reads).
#[derive(Clone, Copy)]
pub(crate) struct Prepared<'a> {
    pub(crate) blocks: (&'a [Vec3x8], &'a [Vec3x8]),
    pub(crate) checked: &'a CheckedJoints,
}

/// Dispatches validated streams to the kernels of `tier` (which the CPU
/// must have); influence counts without one take the scalar loop.
///
/// AVX-512, when the palette is no longer than the mesh (so that
/// rearranging it once costs less than the vertices): with one influence
/// and at most 64 entries, the palette goes to SoA tables the kernel picks
/// elements from with lane permutes; otherwise the kernel reads each
/// influence's matrix as one 64-byte load. Both tiers read a palette that
/// is not on a boundary their loads need from a cache-line-aligned copy
/// ([`x86::aligned_palette`]), so that those loads never split lines.
///
/// `prepared`: optionally the blocks of eight of `positions` and `normals`
/// ([`BindVertices`]; the normals' empty when `normals` is), which the AVX2
/// and AVX-512 software-pipelined kernels then read instead of the `Vec3`
/// streams, and the joint indices times 8 ([`CheckedJoints`]), which the
/// AVX2 one reads.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn lbs_fast(
    tier: Tier,
    unit_normals: bool,
    skin: &[Affine3A],
    k: usize,
    joints: &[u16],
    weights: &[f32],
    positions: &[Vec3],
    normals: &[Vec3],
    prepared: Option<Prepared>,
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    use super::simd::x86;
    let blocks = prepared.map(|p| p.blocks);
    use x86::avx512::{self, SoaPalette, Streams};
    let (j, w, p, n) = (joints, weights, positions, normals);
    let (op, on) = (out_positions, out_normals);
    // One influence without weights (all 1) takes the AVX2 kernel on every
    // tier: the AVX-512 ones read weights.
    let weighted = !w.is_empty();
    if tier == Tier::Avx512 && weighted && k == 1 && skin.len() <= p.len() {
        if let Some(table) = SoaPalette::new(skin) {
            // SAFETY: the caller checked the tier and validate_streams; the
            // table holds the whole palette.
            unsafe { avx512::lbs1_table(&table, skin.len(), Streams::new(j, w, p, n, op, on)) };
            return;
        }
    }
    // Palette entries are read whole (one 64-byte load on AVX-512, two
    // 32-byte ones on AVX2): from a palette off such a boundary, loads
    // split cache lines, so the kernels read a cache-line-aligned copy.
    let mut stack = [const { MaybeUninit::<x86::LineAffine>::uninit() }; x86::ALIGNED_PALETTE_MAX];
    let mut heap = Vec::new();
    if tier == Tier::Avx512 && weighted && (1..=8).contains(&k) {
        let skin = x86::aligned_palette(skin, p.len(), 64, &mut stack, &mut heap);
        let sp = skin.as_ptr() as *const f32;
        let s = Streams::new(j, w, p, n, op, on);
        // Two to four influences with normals: software-pipelined, as on
        // AVX2 (five to eight keep the one-block loop, unmeasured there).
        if !n.is_empty() && (2..=4).contains(&k) {
            // SAFETY: as below; validate_streams also gave normals as long
            // as the positions.
            unsafe {
                macro_rules! pipelined {
                    ($k:literal) => {
                        match blocks {
                            Some((pb, nb)) => avx512::lbs_pipelined::<$k, true>(sp, s, pb, nb),
                            None => avx512::lbs_pipelined::<$k, false>(sp, s, &[], &[]),
                        }
                    };
                }
                match k {
                    2 => pipelined!(2),
                    3 => pipelined!(3),
                    _ => pipelined!(4),
                }
            }
            return;
        }
        // SAFETY: the caller checked the tier and validate_streams; `sp`
        // points at skin.len() Affine3A (16-float entries) that outlive the
        // call.
        unsafe {
            match k {
                1 => avx512::lbs::<1>(sp, s),
                2 => avx512::lbs::<2>(sp, s),
                3 => avx512::lbs::<3>(sp, s),
                4 => avx512::lbs::<4>(sp, s),
                5 => avx512::lbs::<5>(sp, s),
                6 => avx512::lbs::<6>(sp, s),
                7 => avx512::lbs::<7>(sp, s),
                _ => avx512::lbs::<8>(sp, s),
            }
        }
        return;
    }
    if tier == Tier::Scalar {
        lbs_reference(skin, k, j, w, p, n, op, on);
        return;
    }
    // SAFETY (every AVX2 call below): the caller checked the tier (AVX2 + FMA at
    // least) and validate_streams (so non-empty normals are as long as the
    // positions, as the pipelined kernel needs besides weights, checked
    // below). One weightless influence with normals
    // takes each palette entry's cofactor from a table made once per call
    // (when the palette is no longer than the mesh and fits the kernel's
    // stack table).
    if !n.is_empty()
        && k == 1
        && !weighted
        && skin.len() <= x86::LBS1_TABLE_MAX
        && skin.len() <= p.len()
    {
        // Joint index, position and normal read, position and normal
        // written.
        let stream = x86::stream_outputs(p.len() * (2 + 4 * 12));
        if unit_normals {
            unsafe { x86::lbs1_normals::<true>(skin, j, p, n, op, on, stream) };
        } else {
            unsafe { x86::lbs1_normals::<false>(skin, j, p, n, op, on, stream) };
        }
        return;
    }
    // Two to four influences with normals, when packing the palette costs
    // less than the vertices: the software-pipelined kernel. Five to eight
    // keep the one-block-at-a-time loop: with eight, the pipelined one
    // measured 16 per cent slower on a Zen 3.
    if weighted && !n.is_empty() && (2..=4).contains(&k) && skin.len() <= p.len() {
        let mut packed_stack =
            [const { MaybeUninit::<x86::PackedAffine>::uninit() }; x86::PACKED_PALETTE_MAX];
        let mut packed_heap = Vec::new();
        let pk = x86::packed_palette(skin, &mut packed_stack, &mut packed_heap);
        // The prepared blocks and indices times 8 when there are (every
        // index below 8192); else the kernel reads the `Vec3` streams.
        let pr = prepared
            .map(|pr| (pr.blocks, pr.checked.times8()))
            .filter(|(_, x8)| !x8.is_empty());
        // SAFETY: as above; blocks come from BindVertices::blocks_for,
        // which gave them for these very streams (the normals' are empty
        // only when the normals are), and the indices times 8 from the
        // CheckedJoints whose indices `j` are (run_prepared checked both).
        macro_rules! pipelined {
            ($k:literal) => {
                unsafe {
                    match pr {
                        Some(((pb, nb), x8)) => {
                            x86::lbs_pipelined::<$k, true>(skin, pk, j, x8, w, p, n, pb, nb, op, on)
                        }
                        None => x86::lbs_pipelined::<$k, false>(
                            skin,
                            pk,
                            j,
                            &[],
                            w,
                            p,
                            n,
                            &[],
                            &[],
                            op,
                            on,
                        ),
                    }
                }
            };
        }
        match k {
            2 => pipelined!(2),
            3 => pipelined!(3),
            _ => pipelined!(4),
        }
        return;
    }
    let skin = x86::aligned_palette(skin, p.len(), 32, &mut stack, &mut heap);
    // Positions alone need no transpose.
    if n.is_empty() && (1..=8).contains(&k) {
        unsafe {
            match k {
                1 => x86::lbs_positions::<1>(skin, j, w, p, op),
                2 => x86::lbs_positions::<2>(skin, j, w, p, op),
                3 => x86::lbs_positions::<3>(skin, j, w, p, op),
                4 => x86::lbs_positions::<4>(skin, j, w, p, op),
                5 => x86::lbs_positions::<5>(skin, j, w, p, op),
                6 => x86::lbs_positions::<6>(skin, j, w, p, op),
                7 => x86::lbs_positions::<7>(skin, j, w, p, op),
                _ => x86::lbs_positions::<8>(skin, j, w, p, op),
            }
        }
        return;
    }
    unsafe {
        match k {
            1 => x86::lbs::<1>(skin, j, w, p, n, op, on),
            2 => x86::lbs::<2>(skin, j, w, p, n, op, on),
            3 => x86::lbs::<3>(skin, j, w, p, n, op, on),
            4 => x86::lbs::<4>(skin, j, w, p, n, op, on),
            5 => x86::lbs::<5>(skin, j, w, p, n, op, on),
            6 => x86::lbs::<6>(skin, j, w, p, n, op, on),
            7 => x86::lbs::<7>(skin, j, w, p, n, op, on),
            8 => x86::lbs::<8>(skin, j, w, p, n, op, on),
            _ => lbs_reference(skin, k, j, w, p, n, op, on),
        }
    }
}

/// The scalar LBS loop: the definition the fast paths are tested against.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lbs_reference(
    skin: &[Affine3A],
    k: usize,
    joints: &[u16],
    weights: &[f32],
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    let with_normals = !normals.is_empty();
    // Validated: empty weights only with one influence, each weight 1.
    let weightless = weights.is_empty();
    for v in 0..positions.len() {
        let js = &joints[v * k..v * k + k];
        let (mut m3, mut t) = if weightless {
            let s = &skin[js[0] as usize];
            (s.matrix3, s.translation)
        } else {
            (Mat3A::ZERO, Vec3A::ZERO)
        };
        let ws: &[f32] = if weightless {
            &[]
        } else {
            &weights[v * k..v * k + k]
        };
        for (&j, &w) in js.iter().zip(ws) {
            let s = &skin[j as usize];
            m3 += s.matrix3 * w;
            t += s.translation * w;
        }
        let p = Vec3A::from(positions[v]);
        out_positions[v] = (m3 * p + t).into();
        if with_normals {
            let n = cofactor(&m3) * Vec3A::from(normals[v]);
            out_normals[v] = n.normalize_or_zero().into();
        }
    }
}

/// CPU reference skinning from a quaternion + translation palette (seed
/// 001): each influence's bone is rebuilt as a matrix
/// `[scale * R(q) | t]` and the matrices are blended as in
/// [`LinearBlendJob`] (blending quaternions and translations apart would
/// move vertices along the wrong path). Normals use the cofactor.
pub struct QuatTranslationSkinningJob<'a> {
    pub palette: &'a [QuatTranslation],
    pub per_vertex: usize,
    pub joints: &'a [u16],
    pub weights: &'a [f32],
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    pub out_positions: &'a mut [Vec3],
    /// Empty to skip normals.
    pub out_normals: &'a mut [Vec3],
}

impl QuatTranslationSkinningJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        self.validate_with(None)
    }

    fn validate_with(&self, checked_max: Option<u16>) -> Result<(), AnimError> {
        validate_streams(
            self.palette.len(),
            true,
            self.per_vertex,
            self.joints,
            self.weights,
            self.positions,
            self.normals,
            self.out_positions,
            self.out_normals,
            checked_max,
        )
    }

    /// Rebuilds each palette entry's matrix once (not once per influence:
    /// the numbers are the same) and blends them with [`LinearBlendJob`].
    /// Allocates one matrix per palette entry; [`Self::run_with`] reuses
    /// the caller's.
    pub fn run(self) -> Result<(), AnimError> {
        self.run_with(&mut Vec::new())
    }

    /// [`Self::run`] with the rebuilt matrices in `scratch` (resized to the
    /// palette; no allocation once it is large enough).
    pub fn run_with(self, scratch: &mut Vec<Affine3A>) -> Result<(), AnimError> {
        self.run_inner(None, scratch)
    }

    /// [`Self::run_with`] for a job whose `joints` are `checked`'s, as
    /// [`LinearBlendJob::run_checked`].
    pub fn run_checked_with(
        self,
        checked: &CheckedJoints,
        scratch: &mut Vec<Affine3A>,
    ) -> Result<(), AnimError> {
        let max = checked.max_for(self.joints)?;
        self.run_inner(Some(max), scratch)
    }

    fn run_inner(
        self,
        checked_max: Option<u16>,
        scratch: &mut Vec<Affine3A>,
    ) -> Result<(), AnimError> {
        self.validate_with(checked_max)?;
        scratch.clear();
        scratch.extend(self.palette.iter().map(QuatTranslation::to_affine));
        LinearBlendJob {
            skin: scratch,
            per_vertex: self.per_vertex,
            joints: self.joints,
            weights: self.weights,
            positions: self.positions,
            normals: self.normals,
            out_positions: self.out_positions,
            out_normals: self.out_normals,
            unit_normals: false,
        }
        // Validated above, on the same streams (the rebuilt palette is as
        // long as the given one): no second scan of the indices.
        .run_validated(None);
        Ok(())
    }
}

/// Dual-quaternion skinning (Kavan, Collins, Zara, O'Sullivan 2008,
/// "Geometric skinning with approximate dual quaternion blending"): the
/// influences' dual quaternions are summed with their weights, each
/// negated first when its real part is in the other hemisphere from the
/// first influence's, then normalised by the real part's length. Normals are
/// rotated by the blended rotation.
///
/// With `scale_shear` given (one 3x3 per palette entry, from
/// [`super::encode_dual_quat_scale`]) it is the paper's two-phase variant:
/// positions first go through the linearly blended scale/shear matrix
/// `sum w S_j` (normals through its cofactor), then through the blended
/// rigid dual quaternion, so scaled joints stay right.
pub struct DualQuatSkinningJob<'a> {
    pub palette: &'a [DualQuat],
    /// Empty for rigid skinning; else one matrix per palette entry.
    pub scale_shear: &'a [Mat3A],
    pub per_vertex: usize,
    pub joints: &'a [u16],
    pub weights: &'a [f32],
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    pub out_positions: &'a mut [Vec3],
    /// Empty to skip normals.
    pub out_normals: &'a mut [Vec3],
}

impl DualQuatSkinningJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        self.validate_with(None)
    }

    fn validate_with(&self, checked_max: Option<u16>) -> Result<(), AnimError> {
        if !self.scale_shear.is_empty() && self.scale_shear.len() != self.palette.len() {
            return Err(AnimError::LengthMismatch {
                what: "scale/shear matrices",
                expected: self.palette.len(),
                got: self.scale_shear.len(),
            });
        }
        validate_streams(
            self.palette.len(),
            false,
            self.per_vertex,
            self.joints,
            self.weights,
            self.positions,
            self.normals,
            self.out_positions,
            self.out_normals,
            checked_max,
        )
    }

    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        self.run_validated(None);
        Ok(())
    }

    /// [`Self::run`] for a job whose `joints` are `checked`'s, as
    /// [`LinearBlendJob::run_checked`].
    pub fn run_checked(self, checked: &CheckedJoints) -> Result<(), AnimError> {
        self.validate_with(Some(checked.max_for(self.joints)?))?;
        self.run_validated(None);
        Ok(())
    }

    /// [`Self::run_checked`] for a job whose `positions` and `normals` are
    /// also `vertices`' own, as [`LinearBlendJob::run_prepared`]: the
    /// offset-table kernel with two to four influences (palettes of up to
    /// 64 entries; its AVX2 and AVX-512 builds alike) reads their blocks
    /// of eight. The same results as `run`; errors as
    /// `run_checked` does, and also when those streams are other slices.
    pub fn run_prepared(
        self,
        checked: &CheckedJoints,
        vertices: &BindVertices,
    ) -> Result<(), AnimError> {
        self.validate_with(Some(checked.max_for(self.joints)?))?;
        let blocks = vertices.blocks_for(self.positions, self.normals)?;
        self.run_validated(Some(blocks));
        Ok(())
    }

    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    fn run_validated(self, blocks: Option<(&[Vec3x8], &[Vec3x8])>) {
        let k = self.per_vertex;
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if super::simd::avx2_fma() {
            let (pal, ss, j, w) = (self.palette, self.scale_shear, self.joints, self.weights);
            let (p, n) = (self.positions, self.normals);
            let (op, on) = (&mut *self.out_positions, &mut *self.out_normals);
            let tier = super::simd::tier();
            done = dqs_fast(tier, pal, ss, k, j, w, p, n, blocks, op, on);
        }
        dqs_reference(
            self.palette,
            self.scale_shear,
            k,
            self.joints,
            self.weights,
            self.positions,
            self.normals,
            self.out_positions,
            self.out_normals,
            done,
        );
    }
}

/// DQS on `tier`'s kernels (AVX2 and up, which the CPU must have) for the
/// vertices `0..done`, returning `done` (the caller finishes the rest with
/// [`dqs_reference`]). The offset-table kernel, on palettes of at most 64
/// entries and at least 16 vertices an entry, is compiled twice: with
/// AVX-512 enabled for that tier (its 32 registers), else for AVX2.
/// `blocks`: as [`lbs_fast`]'s.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn dqs_fast(
    tier: Tier,
    pal: &[DualQuat],
    ss: &[Mat3A],
    k: usize,
    j: &[u16],
    w: &[f32],
    p: &[Vec3],
    n: &[Vec3],
    blocks: Option<(&[Vec3x8], &[Vec3x8])>,
    op: &mut [Vec3],
    on: &mut [Vec3],
) -> usize {
    use super::simd::x86;
    // The offset table costs palette^2 dot products: worth it from
    // sixteen vertices per palette entry.
    let table = pal.len() <= 64 && p.len() >= 16 * pal.len();
    // With prepared vertices the table kernel reads their blocks (the
    // normals' empty only when the job has no normals).
    let (pb, nb) = blocks.unwrap_or((&[], &[]));
    // SAFETY: the caller checked that the CPU has `tier` (AVX2 and FMA at
    // least, and AVX-512 F, VL, BW and DQ for that tier) and validated the
    // streams and the scale/shear palette's length; the table kernel only
    // with at most 64 palette entries, blocks from BindVertices::blocks_for
    // for these very streams.
    unsafe {
        if !table || !(2..=4).contains(&k) {
            return match k {
                1 => x86::dqs::<1>(pal, ss, j, w, p, n, op, on),
                2 => x86::dqs::<2>(pal, ss, j, w, p, n, op, on),
                3 => x86::dqs::<3>(pal, ss, j, w, p, n, op, on),
                4 => x86::dqs::<4>(pal, ss, j, w, p, n, op, on),
                _ => 0,
            };
        }
        // One dispatch over two to four influences, with or without
        // blocks, for either build of the table kernel.
        macro_rules! table {
            ($kernel:ident) => {
                match (k, blocks.is_some()) {
                    (2, true) => x86::$kernel::<2, true>(pal, ss, j, w, p, n, pb, nb, op, on),
                    (3, true) => x86::$kernel::<3, true>(pal, ss, j, w, p, n, pb, nb, op, on),
                    (_, true) => x86::$kernel::<4, true>(pal, ss, j, w, p, n, pb, nb, op, on),
                    (2, false) => x86::$kernel::<2, false>(pal, ss, j, w, p, n, pb, nb, op, on),
                    (3, false) => x86::$kernel::<3, false>(pal, ss, j, w, p, n, pb, nb, op, on),
                    (_, false) => x86::$kernel::<4, false>(pal, ss, j, w, p, n, pb, nb, op, on),
                }
            };
        }
        if tier == Tier::Avx512 {
            table!(dqs_table_avx512)
        } else {
            table!(dqs_table)
        }
    }
}

/// The scalar DQS loop over vertices `from..`: the definition the fast
/// path is tested against.
#[allow(clippy::too_many_arguments)]
pub(crate) fn dqs_reference(
    palette: &[DualQuat],
    scale_shear: &[Mat3A],
    k: usize,
    joints: &[u16],
    weights: &[f32],
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
    from: usize,
) {
    let with_normals = !normals.is_empty();
    let scaled = !scale_shear.is_empty();
    for v in from..positions.len() {
        let js = &joints[v * k..v * k + k];
        let ws = &weights[v * k..v * k + k];
        let first = Vec4::from_array(palette[js[0] as usize].real);
        let mut real = Vec4::ZERO;
        let mut dual = Vec4::ZERO;
        let mut s3 = Mat3A::ZERO;
        for (&j, &w) in js.iter().zip(ws) {
            let dq = &palette[j as usize];
            let r = Vec4::from_array(dq.real);
            // Antipodality: join the first influence's hemisphere.
            let w_signed = if r.dot(first) < 0.0 { -w } else { w };
            real += r * w_signed;
            dual += Vec4::from_array(dq.dual) * w_signed;
            if scaled {
                s3 += scale_shear[j as usize] * w;
            }
        }
        let mut p = Vec3A::from(positions[v]);
        let mut n = if with_normals {
            Vec3A::from(normals[v])
        } else {
            Vec3A::ZERO
        };
        if scaled {
            p = s3 * p;
            n = cofactor(&s3) * n;
        }
        let len = real.length();
        if len < 1e-12 {
            // Weights that cancel out: nothing sensible to rotate by.
            out_positions[v] = p.into();
            if with_normals {
                out_normals[v] = n.normalize_or_zero().into();
            }
            continue;
        }
        let inv = 1.0 / len;
        let r = Quat::from_vec4(real * inv);
        let d = dual * inv;
        // Translation of the normalised blend: 2 (d * conj(r)).xyz.
        let rv = Vec3A::new(r.x, r.y, r.z);
        let dv = Vec3A::new(d.x, d.y, d.z);
        let t = (dv * r.w - rv * d.w + rv.cross(dv)) * 2.0;
        out_positions[v] = (r * p + t).into();
        if with_normals {
            out_normals[v] = (r * n).normalize_or_zero().into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn cofactor_is_det_times_inverse_transpose() {
        let m = Mat3A::from_cols(
            Vec3A::new(2.0, 0.1, 0.0),
            Vec3A::new(0.3, 1.0, -0.2),
            Vec3A::new(0.0, 0.4, 0.5),
        );
        let expect = m.inverse().transpose() * m.determinant();
        assert!(cofactor(&m).abs_diff_eq(expect, 1e-5));
    }

    #[test]
    fn normals_under_non_uniform_scale_stay_perpendicular() {
        // A plane x + y = 0 with normal (1,1,0)/sqrt2, stretched along x.
        let skin = [Affine3A::from_scale_rotation_translation(
            Vec3::new(3.0, 1.0, 1.0),
            Quat::from_rotation_z(0.4),
            Vec3::ZERO,
        )];
        let tangent = Vec3::new(1.0, -1.0, 0.0);
        let normal = Vec3::new(1.0, 1.0, 0.0).normalize();
        let mut pos = [Vec3::ZERO; 1];
        let mut nrm = [Vec3::ZERO; 1];
        LinearBlendJob {
            skin: &skin,
            per_vertex: 1,
            joints: &[0],
            weights: &[1.0],
            positions: &[tangent],
            normals: &[normal],
            out_positions: &mut pos,
            out_normals: &mut nrm,
            unit_normals: false,
        }
        .run()
        .unwrap();
        assert!(pos[0].dot(nrm[0]).abs() < 1e-6, "{pos:?} {nrm:?}");
        assert!((nrm[0].length() - 1.0).abs() < 1e-6);
    }

    use crate::anim::{
        encode_dual_quat, encode_dual_quat_scale, encode_quat_translation, DualQuat,
        PaletteHierarchy, QuatTranslation,
    };
    use rand::{Rng, SeedableRng};

    struct Mesh {
        positions: Vec<Vec3>,
        normals: Vec<Vec3>,
        joints: Vec<u16>,
        weights: Vec<f32>,
        k: usize,
    }

    fn lbs(skin: &[Affine3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
        let n = m.positions.len();
        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        LinearBlendJob {
            skin,
            per_vertex: m.k,
            joints: &m.joints,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut p,
            out_normals: &mut nn,
            unit_normals: false,
        }
        .run()
        .unwrap();
        (p, nn)
    }

    fn dqs(dq: &[DualQuat], ss: &[Mat3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
        let n = m.positions.len();
        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        DualQuatSkinningJob {
            palette: dq,
            scale_shear: ss,
            per_vertex: m.k,
            joints: &m.joints,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut p,
            out_normals: &mut nn,
        }
        .run()
        .unwrap();
        (p, nn)
    }

    /// The DQS kernels of every tier the CPU has (the offset-table kernel
    /// is compiled apart for AVX-512), from `Vec3` streams and from
    /// prepared blocks, their outputs placed on 16 bytes and off them
    /// (where the AVX2 build's stores differ): the AVX2 tier's outputs
    /// bit for bit (the same arithmetic), nothing written outside them,
    /// and the scalar definition's within rounding; rigid and two-phase.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn dqs_tiers_agree_bit_for_bit() {
        use crate::anim::simd::{testable_tiers, Tier};
        let mut rng = rand::rngs::StdRng::seed_from_u64(83);
        for scaled in [false, true] {
            let skin: Vec<Affine3A> = (0..40)
                .map(|_| {
                    let m = random_rigid(&mut rng);
                    if scaled {
                        m * Affine3A::from_scale(Vec3::new(0.7, 1.3, rng.gen_range(0.5..2.0)))
                    } else {
                        m
                    }
                })
                .collect();
            let h = PaletteHierarchy::flat(skin.len());
            let mut dq = vec![DualQuat::default(); skin.len()];
            let mut ss = vec![Mat3A::ZERO; if scaled { skin.len() } else { 0 }];
            if scaled {
                encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
            } else {
                encode_dual_quat(&skin, &h, &mut dq).unwrap();
            }
            for k in 1..=5 {
                // 40 x 16 = 640 vertices at least: the offset table.
                let m = random_mesh(&mut rng, 675, k, 40);
                let n = m.positions.len();
                let (rp, rn) = dqs_scalar(&dq, &ss, &m);
                let bind = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
                let mut first: Option<(Vec<Vec3>, Vec<Vec3>)> = None;
                // Outputs placed at 4-byte offsets modulo 32 of their own,
                // on 16 bytes and off them: the same bits (and nothing
                // written outside them).
                let places = [(0, 0), (1, 0), (0, 3), (4, 4), (5, 7), (2, 6)];
                for tier in testable_tiers() {
                    for (with_blocks, (sp, sn)) in [false, true]
                        .into_iter()
                        .flat_map(|b| places.map(|p| (b, p)))
                    {
                        let (mut bp, mut bn) = (vec![Vec3::NAN; n + 8], vec![Vec3::NAN; n + 8]);
                        let (fp, fn_) = (&mut bp[sp..sp + n], &mut bn[sn..sn + n]);
                        let (p, nn) = (bind.positions(), bind.normals());
                        let blocks = if with_blocks {
                            Some(bind.blocks_for(p, nn).unwrap())
                        } else {
                            None
                        };
                        let (j, w) = (&m.joints, &m.weights);
                        let done = dqs_fast(tier, &dq, &ss, k, j, w, p, nn, blocks, fp, fn_);
                        assert!(k > 4 || done == n / 8 * 8, "{tier:?} k {k}: {done} done");
                        dqs_reference(&dq, &ss, k, j, w, p, nn, fp, fn_, done);
                        for i in 0..n {
                            assert!(fp[i].abs_diff_eq(rp[i], 1e-5), "{tier:?} k {k} {i}");
                            assert!(fn_[i].abs_diff_eq(rn[i], 1e-5), "{tier:?} k {k} {i}");
                        }
                        let (fp, fn_) = (fp.to_vec(), fn_.to_vec());
                        let outside = |v: &[Vec3], s: usize| {
                            v[..s].iter().chain(&v[s + n..]).all(|x| x.is_nan())
                        };
                        assert!(
                            outside(&bp, sp) && outside(&bn, sn),
                            "{tier:?} k {k} at {sp} {sn}: written outside"
                        );
                        match &first {
                            None => first = Some((fp, fn_)),
                            Some(f) => assert!(
                                f.0 == fp && f.1 == fn_,
                                "{tier:?} k {k} blocks {with_blocks} scaled {scaled} at {sp} {sn}: \
                                 not AVX2's"
                            ),
                        }
                    }
                }
                assert!(first.is_some() && testable_tiers()[0] == Tier::Avx2);
            }
        }
    }

    /// The scalar definition of LBS over the whole mesh.
    fn lbs_scalar(skin: &[Affine3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
        let n = m.positions.len();
        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let (j, w) = (&m.joints, &m.weights);
        lbs_reference(skin, m.k, j, w, &m.positions, &m.normals, &mut p, &mut nn);
        (p, nn)
    }

    /// The scalar definition of DQS over the whole mesh.
    fn dqs_scalar(dq: &[DualQuat], ss: &[Mat3A], m: &Mesh) -> (Vec<Vec3>, Vec<Vec3>) {
        let n = m.positions.len();
        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        dqs_reference(
            dq,
            ss,
            m.k,
            &m.joints,
            &m.weights,
            &m.positions,
            &m.normals,
            &mut p,
            &mut nn,
            0,
        );
        (p, nn)
    }

    fn random_mesh(rng: &mut impl Rng, n: usize, k: usize, joints: u16) -> Mesh {
        let mut m = Mesh {
            positions: Vec::new(),
            normals: Vec::new(),
            joints: Vec::new(),
            weights: Vec::new(),
            k,
        };
        for _ in 0..n {
            m.positions
                .push(Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 4.0 - 2.0);
            m.normals.push(
                Vec3::new(rng.gen(), rng.gen(), rng.gen())
                    .sub(Vec3::splat(0.5))
                    .normalize(),
            );
            let w: Vec<f32> = (0..k).map(|_| rng.gen_range(0.05..1.0)).collect();
            let sum: f32 = w.iter().sum();
            for wi in w {
                m.joints.push(rng.gen_range(0..joints));
                m.weights.push(wi / sum);
            }
        }
        m
    }

    use std::ops::Sub;

    fn random_rigid(rng: &mut impl Rng) -> Affine3A {
        Affine3A::from_rotation_translation(
            Quat::from_euler(
                glam::EulerRot::ZYX,
                rng.gen_range(-3.1..3.1),
                rng.gen_range(-1.5..1.5),
                rng.gen_range(-3.1..3.1),
            ),
            Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 6.0 - 3.0,
        )
    }

    #[test]
    fn dqs_equals_lbs_for_single_rigid_influences() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        let skin: Vec<Affine3A> = (0..16).map(|_| random_rigid(&mut rng)).collect();
        let mut dq = vec![DualQuat::default(); 16];
        encode_dual_quat(&skin, &PaletteHierarchy::flat(16), &mut dq).unwrap();
        let m = random_mesh(&mut rng, 500, 1, 16);
        let (lp, ln) = lbs(&skin, &m);
        let (dp, dn) = dqs(&dq, &[], &m);
        for i in 0..500 {
            assert!(lp[i].abs_diff_eq(dp[i], 1e-5), "{i}");
            assert!(ln[i].abs_diff_eq(dn[i], 1e-5), "{i}");
        }
        // Several influences on one joint are one influence too, even with a
        // negated copy of the bone in the palette (antipodality check).
        let mut dq2 = dq.clone();
        dq2.push(dq[3].negate());
        let mut m4 = random_mesh(&mut rng, 50, 4, 1);
        for (s, j) in m4.joints.iter_mut().enumerate() {
            *j = if s % 2 == 0 { 3 } else { 16 };
        }
        let mut skin2 = skin.clone();
        skin2.push(skin[3]);
        let (lp, _) = lbs(&skin2, &m4);
        let (dp, _) = dqs(&dq2, &[], &m4);
        for i in 0..50 {
            assert!(lp[i].abs_diff_eq(dp[i], 1e-5), "{i}");
        }
    }

    #[test]
    fn two_phase_dqs_keeps_scaled_joints_right() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(22);
        let skin: Vec<Affine3A> = (0..8)
            .map(|_| {
                random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(
                        rng.gen_range(0.5..2.0),
                        rng.gen_range(0.5..2.0),
                        rng.gen_range(0.5..2.0),
                    ))
                    * Affine3A::from_rotation_x(rng.gen_range(-1.0..1.0))
            })
            .collect();
        let h = PaletteHierarchy::flat(8);
        let mut dq = vec![DualQuat::default(); 8];
        let mut ss = vec![Mat3A::ZERO; 8];
        encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
        let m = random_mesh(&mut rng, 300, 1, 8);
        let (lp, ln) = lbs(&skin, &m);
        let (dp, dn) = dqs(&dq, &ss, &m);
        for i in 0..300 {
            assert!(lp[i].abs_diff_eq(dp[i], 1e-4), "{i} {} {}", lp[i], dp[i]);
            assert!(ln[i].abs_diff_eq(dn[i], 1e-4), "{i}");
        }
        // Rigid DQS on the same palette loses the scale: it is not right.
        let (rp, _) = dqs(&dq, &[], &m);
        assert!((0..300).any(|i| !lp[i].abs_diff_eq(rp[i], 1e-2)));
    }

    #[test]
    fn quat_translation_job_equals_lbs_with_uniform_scale() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(23);
        let skin: Vec<Affine3A> = (0..8)
            .map(|_| {
                random_rigid(&mut rng) * Affine3A::from_scale(Vec3::splat(rng.gen_range(0.5..2.0)))
            })
            .collect();
        let mut qt = vec![QuatTranslation::default(); 8];
        assert!(encode_quat_translation(&skin, &mut qt).unwrap().is_exact());
        let m = random_mesh(&mut rng, 300, 4, 8);
        let (lp, ln) = lbs(&skin, &m);
        let (mut qp, mut qn) = (vec![Vec3::ZERO; 300], vec![Vec3::ZERO; 300]);
        QuatTranslationSkinningJob {
            palette: &qt,
            per_vertex: 4,
            joints: &m.joints,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut qp,
            out_normals: &mut qn,
        }
        .run()
        .unwrap();
        for i in 0..300 {
            assert!(lp[i].abs_diff_eq(qp[i], 1e-4), "{i}");
            assert!(ln[i].abs_diff_eq(qn[i], 1e-4), "{i}");
        }
    }

    /// A cylinder of radius 1 along x from 0 to 2, joint 0 at x = 0 and
    /// joint 1 at x = 1; weights go linearly from joint 0 to joint 1 over
    /// x in [0.5, 1.5]. Joint 1 twists 150 degrees about x.
    fn candy_wrapper() -> (Vec<Affine3A>, Mesh, Vec<usize>) {
        let rings = 21;
        let segments = 32;
        let mut m = Mesh {
            positions: Vec::new(),
            normals: Vec::new(),
            joints: Vec::new(),
            weights: Vec::new(),
            k: 2,
        };
        let mut middle = Vec::new();
        for r in 0..rings {
            let x = 2.0 * r as f32 / (rings - 1) as f32;
            let w1 = ((x - 0.5) / 1.0).clamp(0.0, 1.0);
            for s in 0..segments {
                let a = std::f32::consts::TAU * s as f32 / segments as f32;
                if r == rings / 2 {
                    middle.push(m.positions.len());
                }
                m.positions.push(Vec3::new(x, a.cos(), a.sin()));
                m.normals.push(Vec3::new(0.0, a.cos(), a.sin()));
                m.joints.extend_from_slice(&[0, 1]);
                m.weights.extend_from_slice(&[1.0 - w1, w1]);
            }
        }
        // Joint 1's skinning matrix: bind at x = 1, twisted about its own x.
        let at1 = Affine3A::from_translation(Vec3::X);
        let twist = at1 * Affine3A::from_rotation_x(150f32.to_radians()) * at1.inverse();
        (vec![Affine3A::IDENTITY, twist], m, middle)
    }

    #[test]
    fn candy_wrapper_lbs_collapses_dqs_keeps_volume() {
        let (skin, m, middle) = candy_wrapper();
        let radius = |p: Vec3| (p.y * p.y + p.z * p.z).sqrt();
        let (lp, _) = lbs(&skin, &m);
        let lbs_r: f32 = middle.iter().map(|&i| radius(lp[i])).sum::<f32>() / middle.len() as f32;
        // Half of two rotations 150 degrees apart: |cos 75| = 0.259.
        assert!(
            (lbs_r - 75f32.to_radians().cos()).abs() < 1e-3,
            "LBS radius {lbs_r}"
        );
        assert!(lbs_r < 0.3, "LBS keeps the middle at {lbs_r}");
        let mut dq = vec![DualQuat::default(); 2];
        encode_dual_quat(&skin, &PaletteHierarchy::flat(2), &mut dq).unwrap();
        let (dp, dn) = dqs(&dq, &[], &m);
        for i in 0..m.positions.len() {
            assert!(
                (radius(dp[i]) - 1.0).abs() < 0.02,
                "DQS radius {}",
                radius(dp[i])
            );
            assert!((dp[i].x - m.positions[i].x).abs() < 1e-4);
            assert!((dn[i].length() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn fast_lbs_matches_the_scalar_definition() {
        #[cfg(target_arch = "x86_64")]
        for (tier, palette) in crate::anim::simd::testable_tiers()
            .into_iter()
            .flat_map(|t| [(t, 20), (t, 9), (t, 64), (t, 100)])
        {
            let mut rng = rand::rngs::StdRng::seed_from_u64(41);
            let skin: Vec<Affine3A> = (0..palette)
                .map(|_| {
                    random_rigid(&mut rng)
                        * Affine3A::from_scale(Vec3::new(
                            rng.gen_range(0.3..2.0),
                            rng.gen_range(0.3..2.0),
                            rng.gen_range(0.3..2.0),
                        ))
                })
                .collect();
            // Mesh sizes around the 8- and 16-vertex blocks; the smallest are
            // shorter than the palette (no aligned copy of it, no SoA table
            // for one influence). Palettes of 9, 20 and 64 entries take the
            // three SoA table lookups with one influence, 100 the blend.
            for (k, n) in (1..=9).flat_map(|k| [(k, 257), (k, 16), (k, 13), (k, 40)]) {
                let mut m = random_mesh(&mut rng, n, k, palette as u16);
                m.normals[9] = Vec3::ZERO;
                if k == 1 {
                    m.weights[5] = 0.0;
                    m.weights[6] = 0.5;
                    m.weights[7] = -0.75;
                }
                let (rp, rn) = lbs_scalar(&skin, &m);
                let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                lbs_fast(
                    tier,
                    false,
                    &skin,
                    k,
                    &m.joints,
                    &m.weights,
                    &m.positions,
                    &m.normals,
                    None,
                    &mut fp,
                    &mut fn_,
                );
                // The same from prepared blocks of eight, bit for bit.
                let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
                let blocks = bv.blocks_for(bv.positions(), bv.normals()).unwrap();
                let checked = CheckedJoints::new(m.joints.clone());
                let prepared = Prepared {
                    blocks,
                    checked: &checked,
                };
                let (mut bp, mut bn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                lbs_fast(
                    tier,
                    false,
                    &skin,
                    k,
                    &m.joints,
                    &m.weights,
                    bv.positions(),
                    bv.normals(),
                    Some(prepared),
                    &mut bp,
                    &mut bn,
                );
                assert_eq!(
                    (&bp, &bn),
                    (&fp, &fn_),
                    "{tier:?} palette {palette} k {k} blocks"
                );
                for i in 0..n {
                    assert!(
                        rp[i].abs_diff_eq(fp[i], 1e-5),
                        "{tier:?} palette {palette} k {k} vertex {i}: {} {}",
                        rp[i],
                        fp[i]
                    );
                    assert!(
                        rn[i].abs_diff_eq(fn_[i], 1e-5),
                        "{tier:?} palette {palette} k {k} vertex {i}: {} {}",
                        rn[i],
                        fn_[i]
                    );
                    // Unit normals (or zero for a zero weight) to 1e-5
                    // relative.
                    let len = fn_[i].length();
                    assert!(
                        (len - 1.0).abs() < 1e-5 || (rn[i] == Vec3::ZERO && len == 0.0),
                        "{tier:?} k {k} vertex {i}: |n| = {len}"
                    );
                }
                // Positions only.
                let mut fp2 = vec![Vec3::ZERO; n];
                lbs_fast(
                    tier,
                    false,
                    &skin,
                    k,
                    &m.joints,
                    &m.weights,
                    &m.positions,
                    &[],
                    None,
                    &mut fp2,
                    &mut [],
                );
                assert!(rp.iter().zip(&fp2).all(|(a, b)| a.abs_diff_eq(*b, 1e-5)));
            }
        }
    }

    /// The similarity test: rotations, reflections and uniform scales pass
    /// with a cofactor that keeps unit vectors unit; non-uniform scale,
    /// shear, a zero matrix and NaN do not, and keep the plain cofactor.
    #[test]
    fn similarity_cofactor_keeps_lengths_only_for_similarities() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(61);
        for _ in 0..50 {
            let r = random_rigid(&mut rng).matrix3;
            let s = rng.gen_range(0.01..100.0);
            let flip = Mat3A::from_diagonal(Vec3::new(1.0, -1.0, 1.0));
            for m in [r, r * s, r * flip * s] {
                let (k, similar) = similarity_cofactor(&m);
                assert!(similar, "{m:?}");
                let v = Vec3A::new(rng.gen(), rng.gen(), rng.gen()).normalize();
                let kv = k * v;
                assert!((kv.length() - 1.0).abs() < 2e-6, "{}", kv.length());
                let c = cofactor(&m) * v;
                assert!(kv.normalize().abs_diff_eq(c.normalize(), 1e-6));
            }
            for (m, what) in [
                (
                    r * Mat3A::from_diagonal(Vec3::new(1.0, 1.0, 1.001)),
                    "scale",
                ),
                (
                    r * Mat3A::from_cols_array(&[1.0, 0.0, 0.0, 0.001, 1.0, 0.0, 0.0, 0.0, 1.0]),
                    "shear",
                ),
                (Mat3A::ZERO, "zero"),
                (r * f32::NAN, "nan"),
            ] {
                let (k, similar) = similarity_cofactor(&m);
                assert!(!similar, "{what}");
                if what != "nan" {
                    assert_eq!(k, cofactor(&m), "{what}");
                }
            }
        }
        assert!(normals_are_unit(&[]));
        assert!(normals_are_unit(&[
            Vec3::X,
            Vec3::new(1.0, 2.0, -3.0).normalize()
        ]));
        assert!(!normals_are_unit(&[Vec3::Y, Vec3::Z * 1.001]));
        assert!(!normals_are_unit(&[Vec3::ZERO]));
    }

    /// `unit_normals`: with unit normals, every tier gives the scalar
    /// definition (unit normals, its directions), blocks of similarities,
    /// blocks of other matrices and blocks mixing both alike. A normal that
    /// breaks the promise keeps its length under a similarity (so the skip
    /// is taken) and is renormalised under any other matrix.
    #[test]
    fn unit_normals_skip_renormalising_only_under_similarities() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(62);
        // Entries 0-9 rigid, 10-19 uniformly scaled (one reflected), 20-29
        // non-uniformly scaled.
        let mut skin: Vec<Affine3A> = (0..30).map(|_| random_rigid(&mut rng)).collect();
        for (i, m) in skin.iter_mut().enumerate().skip(10) {
            let s = if i < 20 {
                Vec3::splat(rng.gen_range(0.3..3.0)) * if i == 15 { -1.0 } else { 1.0 }
            } else {
                Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0))
            };
            *m *= Affine3A::from_scale(s);
        }
        for n in [1usize, 8, 9, 45, 1000] {
            let mut m = random_mesh(&mut rng, n, 1, 30);
            // Whole blocks of similarities, of others, and mixed ones.
            for (v, j) in m.joints.iter_mut().enumerate() {
                *j = match (v / 8) % 3 {
                    0 => rng.gen_range(0..20),
                    1 => rng.gen_range(20..30),
                    _ => rng.gen_range(0..30),
                };
            }
            let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let (j, ps, ns) = (&m.joints, &m.positions, &m.normals);
            lbs_reference(&skin, 1, j, &[], ps, ns, &mut rp, &mut rn);
            let check = |what: &str, fp: &[Vec3], fn_: &[Vec3]| {
                for i in 0..n {
                    assert!(fp[i].abs_diff_eq(rp[i], 1e-5), "{what} {n} {i}: {}", fp[i]);
                    assert!(
                        fn_[i].abs_diff_eq(rn[i], 1e-5),
                        "{what} {n} {i}: {}",
                        fn_[i]
                    );
                    let len = fn_[i].length();
                    assert!((len - 1.0).abs() <= 5e-6, "{what} {n} {i}: |n| = {len}");
                }
            };
            let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            LinearBlendJob {
                skin: &skin,
                per_vertex: 1,
                joints: j,
                weights: &[],
                positions: ps,
                normals: ns,
                out_positions: &mut fp,
                out_normals: &mut fn_,
                unit_normals: true,
            }
            .run()
            .unwrap();
            check("job", &fp, &fn_);
            #[cfg(target_arch = "x86_64")]
            for tier in crate::anim::simd::testable_tiers() {
                let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                lbs_fast(
                    tier,
                    true,
                    &skin,
                    1,
                    j,
                    &[],
                    ps,
                    ns,
                    None,
                    &mut fp,
                    &mut fn_,
                );
                check(&format!("{tier:?}"), &fp, &fn_);
                // Normals of length 2: kept under similarities in whole
                // blocks (the renormalisation skipped), renormalised under
                // the others.
                if n >= 16 {
                    let twice: Vec<Vec3> = ns.iter().map(|v| *v * 2.0).collect();
                    lbs_fast(
                        tier,
                        true,
                        &skin,
                        1,
                        j,
                        &[],
                        ps,
                        &twice,
                        None,
                        &mut fp,
                        &mut fn_,
                    );
                    for i in 0..8 {
                        let len = fn_[i].length();
                        assert!((len - 2.0).abs() < 2e-5, "{tier:?} {i}: {len}");
                        assert!(fn_[i].normalize().abs_diff_eq(rn[i], 1e-5));
                    }
                    for i in 8..16 {
                        let len = fn_[i].length();
                        assert!((len - 1.0).abs() < 1e-5, "{tier:?} {i}: {len}");
                        assert!(fn_[i].abs_diff_eq(rn[i], 1e-5));
                    }
                }
            }
        }
    }

    /// The L2 size that decides streaming stores: on an Intel CPU, a
    /// power-of-two-ish size a core's L2 can have (256 KiB to 8 MiB), and
    /// the streaming decision on either side of it.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn streaming_follows_the_l2_size() {
        use crate::anim::simd::x86;
        if !x86::intel() {
            assert!(
                !x86::stream_outputs(usize::MAX),
                "streaming where the CPU is not Intel's"
            );
            return;
        }
        let l2 = x86::l2_bytes().expect("CPUID leaf 4 names an L2 on Intel CPUs");
        eprintln!("L2: {l2} bytes");
        assert!((256 << 10..=8 << 20).contains(&l2), "L2 of {l2} bytes");
        assert!(!x86::stream_outputs(l2) && x86::stream_outputs(l2 + 1));
    }

    /// The one-influence kernel's streaming stores (meshes past the L2 on
    /// Intel CPUs; here forced on small ones): the outputs of ordinary
    /// stores bit for bit under similarities, wherever the outputs lie
    /// (each 4-byte offset modulo 32, and outputs that lie apart, which
    /// stream nothing), nothing written outside them, and the reference's
    /// results within rounding under any matrices.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn streamed_outputs_match_cached_ones() {
        use crate::anim::simd::{testable_tiers, x86, Tier};
        if !testable_tiers().contains(&Tier::Avx2) {
            eprintln!("streamed_outputs_match_cached_ones: no AVX2 + FMA here, skipped");
            return;
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(71);
        let rigid: Vec<Affine3A> = (0..20).map(|_| random_rigid(&mut rng)).collect();
        let mut mixed = rigid.clone();
        for m in mixed.iter_mut().skip(10) {
            *m *= Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)));
        }
        let n = 203;
        let m = random_mesh(&mut rng, n, 1, 20);
        let (j, ps, ns) = (&m.joints, &m.positions, &m.normals);
        for skin in [&rigid, &mixed] {
            let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            lbs_reference(skin, 1, j, &[], ps, ns, &mut rp, &mut rn);
            // Both outputs in one buffer, the normals' part 224 vertices
            // (84 times 32 bytes) after the positions', so that equal
            // offsets lie alike modulo 32.
            let run = |stream: bool, at_p: usize, at_n: usize| {
                let mut buf = vec![Vec3::NAN; 2 * 224];
                let (op, on) = buf.split_at_mut(224);
                // SAFETY: AVX2 + FMA checked above; one influence inside
                // the palette, normals as long as the positions, a palette
                // within LBS1_TABLE_MAX.
                let streamed = unsafe {
                    x86::lbs1_normals::<true>(
                        skin,
                        j,
                        ps,
                        ns,
                        &mut op[at_p..at_p + n],
                        &mut on[at_n..at_n + n],
                        stream,
                    )
                };
                assert_eq!(streamed, stream && at_p == at_n, "{at_p} {at_n}");
                for (buf, at) in [(&*op, at_p), (&*on, at_n)] {
                    let outside = buf[..at].iter().chain(&buf[at + n..]);
                    assert!(outside.into_iter().all(|v| v.is_nan()), "written outside");
                }
                (op[at_p..at_p + n].to_vec(), on[at_n..at_n + n].to_vec())
            };
            let cached = run(false, 0, 0);
            for (at_p, at_n) in (0..8).map(|o| (o, o)).chain([(1, 2), (0, 5)]) {
                let streamed = run(true, at_p, at_n);
                for i in 0..n {
                    let (p, nn) = (streamed.0[i], streamed.1[i]);
                    assert!(p.abs_diff_eq(rp[i], 1e-5), "{at_p} {at_n} {i}: {p}");
                    assert!(nn.abs_diff_eq(rn[i], 1e-5), "{at_p} {at_n} {i}: {nn}");
                }
                if std::ptr::eq(skin, &rigid) {
                    assert!(
                        streamed == cached,
                        "offsets {at_p} {at_n}: not the cached outputs"
                    );
                }
            }
        }
    }

    /// One influence and no weights: every weight is 1, on the scalar
    /// definition (bit for bit) and every fast tier; other jobs and counts
    /// still want their weights.
    #[test]
    fn one_influence_needs_no_weights() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(43);
        let skin: Vec<Affine3A> = (0..30)
            .map(|_| {
                random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)))
            })
            .collect();
        for n in [0usize, 1, 7, 8, 45, 1000] {
            let mut m = random_mesh(&mut rng, n, 1, 30);
            m.weights.iter_mut().for_each(|w| *w = 1.0);
            let run = |weights: &[f32], normals: bool| {
                let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                let (ns, on): (&[Vec3], &mut [Vec3]) = if normals {
                    (&m.normals, &mut nn)
                } else {
                    (&[], &mut [])
                };
                LinearBlendJob {
                    skin: &skin,
                    per_vertex: 1,
                    joints: &m.joints,
                    weights,
                    positions: &m.positions,
                    normals: ns,
                    out_positions: &mut p,
                    out_normals: on,
                    unit_normals: false,
                }
                .run()
                .unwrap();
                (p, nn)
            };
            let reference = |weights: &[f32]| {
                let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                let (j, ps, ns) = (&m.joints, &m.positions, &m.normals);
                lbs_reference(&skin, 1, j, weights, ps, ns, &mut p, &mut nn);
                (p, nn)
            };
            let (rp, rn) = reference(&[]);
            let (wp, wn) = reference(&m.weights);
            assert_eq!((&rp, &rn), (&wp, &wn), "scalar, {n} vertices");
            for normals in [true, false] {
                let (p, nn) = run(&[], normals);
                for i in 0..n {
                    assert!(p[i].abs_diff_eq(rp[i], 1e-5), "{n}: {} {}", p[i], rp[i]);
                    if normals {
                        assert!(nn[i].abs_diff_eq(rn[i], 1e-5), "{n}: {} {}", nn[i], rn[i]);
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            for tier in crate::anim::simd::testable_tiers() {
                let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                let (p, ns) = (&m.positions, &m.normals);
                lbs_fast(
                    tier,
                    false,
                    &skin,
                    1,
                    &m.joints,
                    &[],
                    p,
                    ns,
                    None,
                    &mut fp,
                    &mut fn_,
                );
                for i in 0..n {
                    assert!(fp[i].abs_diff_eq(rp[i], 1e-5), "{tier:?} {n}: {}", fp[i]);
                    assert!(fn_[i].abs_diff_eq(rn[i], 1e-5), "{tier:?} {n}: {}", fn_[i]);
                }
            }
        }
        // Two influences, or dual quaternions, still need their weights.
        let m = random_mesh(&mut rng, 10, 2, 30);
        let (mut p, mut nn) = (vec![Vec3::ZERO; 10], vec![Vec3::ZERO; 10]);
        let e = LinearBlendJob {
            skin: &skin,
            per_vertex: 2,
            joints: &m.joints,
            weights: &[],
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut p,
            out_normals: &mut nn,
            unit_normals: false,
        }
        .run()
        .unwrap_err();
        assert!(e.to_string().contains("influence weights"), "{e}");
        let dq: Vec<DualQuat> = (0..30)
            .map(|_| DualQuat::from_rotation_translation(Quat::IDENTITY, Vec3::X))
            .collect();
        let e = DualQuatSkinningJob {
            palette: &dq,
            scale_shear: &[],
            per_vertex: 1,
            joints: &m.joints[..10],
            weights: &[],
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut p,
            out_normals: &mut nn,
        }
        .run()
        .unwrap_err();
        assert!(e.to_string().contains("influence weights"), "{e}");
    }

    /// Whatever the streams' alignments, every vertex is skinned once, as
    /// the scalar definition does and bit for bit the same, weighted and
    /// weightless, with and without normals (the AVX-512 kernels skin a
    /// few vertices apart first so that their blocks start on cache lines:
    /// `stream_lead`).
    #[test]
    fn stream_leads_skin_every_alignment_the_same() {
        #[cfg(target_arch = "x86_64")]
        for tier in crate::anim::simd::testable_tiers() {
            let mut rng = rand::rngs::StdRng::seed_from_u64(43);
            let skin: Vec<Affine3A> = (0..20).map(|_| random_rigid(&mut rng)).collect();
            let n = 300;
            for k in [1, 2, 4] {
                let m = random_mesh(&mut rng, n, k, 20);
                let weightless = vec![1.0; n];
                let weight_sets: &[&[f32]] = if k == 1 {
                    &[&m.weights, &[]]
                } else {
                    &[&m.weights]
                };
                for &weights in weight_sets {
                    let ref_w: &[f32] = if weights.is_empty() {
                        &weightless
                    } else {
                        weights
                    };
                    let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                    lbs_reference(
                        &skin,
                        k,
                        &m.joints,
                        ref_w,
                        &m.positions,
                        &m.normals,
                        &mut rp,
                        &mut rn,
                    );
                    // Each stream shifted by its own number of vertices (0 to
                    // 15: every 4-byte offset modulo 64), in buffers with room;
                    // the outputs of shift 0, with and without normals.
                    let mut first: Vec<Vec<Vec3>> = Vec::new();
                    for o in 0..16 {
                        let shift = |s: usize| (o * s) % 16;
                        let placed = |v: &[Vec3], s: usize| {
                            let mut b = vec![Vec3::splat(9.0); n + 16];
                            b[shift(s)..shift(s) + n].copy_from_slice(v);
                            b
                        };
                        let (p, nn) = (placed(&m.positions, 1), placed(&m.normals, 3));
                        let (mut op, mut on) = (vec![Vec3::NAN; n + 16], vec![Vec3::NAN; n + 16]);
                        for with_normals in [true, false] {
                            let (ns, ons): (&[Vec3], &mut [Vec3]) = if with_normals {
                                (&nn[shift(3)..shift(3) + n], &mut on[shift(7)..shift(7) + n])
                            } else {
                                (&[], &mut [])
                            };
                            lbs_fast(
                                tier,
                                false,
                                &skin,
                                k,
                                &m.joints,
                                weights,
                                &p[shift(1)..shift(1) + n],
                                ns,
                                None,
                                &mut op[shift(5)..shift(5) + n],
                                ons,
                            );
                            for i in 0..n {
                                let (a, b) = (rp[i], op[shift(5) + i]);
                                assert!(
                                    a.abs_diff_eq(b, 1e-5),
                                    "{tier:?} k {k} shift {o} vertex {i}: {a} {b}"
                                );
                                if with_normals {
                                    let (a, b) = (rn[i], on[shift(7) + i]);
                                    assert!(
                                        a.abs_diff_eq(b, 1e-5),
                                        "{tier:?} k {k} shift {o} normal {i}: {a} {b}"
                                    );
                                }
                            }
                            // Bit for bit the same wherever the buffers lie.
                            let got = [
                                op[shift(5)..shift(5) + n].to_vec(),
                                if with_normals {
                                    on[shift(7)..shift(7) + n].to_vec()
                                } else {
                                    Vec::new()
                                },
                            ];
                            if o == 0 {
                                first.extend(got);
                            } else {
                                let at = if with_normals { 0 } else { 2 };
                                assert!(
                                    got[0] == first[at] && got[1] == first[at + 1],
                                    "{tier:?} k {k} shift {o}: not the outputs of shift 0"
                                );
                            }
                            op.fill(Vec3::NAN);
                            on.fill(Vec3::NAN);
                        }
                    }
                }
            }
        }
    }

    /// The pipelined kernels (two to four influences with normals, from
    /// the `Vec3` streams and from prepared blocks) write the same bits
    /// wherever their outputs lie: on 16 bytes (where the AVX2 kernel
    /// stores 16-byte halves) and off them, each output placed on its own
    /// (every 4-byte offset modulo 32), and nothing outside the outputs.
    #[test]
    fn pipelined_outputs_are_the_same_at_every_offset() {
        #[cfg(target_arch = "x86_64")]
        for tier in crate::anim::simd::testable_tiers() {
            let mut rng = rand::rngs::StdRng::seed_from_u64(47);
            let skin: Vec<Affine3A> = (0..24).map(|_| random_rigid(&mut rng)).collect();
            let n = 203;
            for k in 2..=4 {
                let m = random_mesh(&mut rng, n, k, 24);
                let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
                let checked = CheckedJoints::new(m.joints.clone());
                let blocks = Prepared {
                    blocks: (&bv.position_blocks[..], &bv.normal_blocks[..]),
                    checked: &checked,
                };
                let (rp, rn) = lbs_scalar(&skin, &m);
                let (j, w, p, nn) = (&m.joints, &m.weights, bv.positions(), bv.normals());
                for prepared in [None, Some(blocks)] {
                    let mut first: Option<(Vec<Vec3>, Vec<Vec3>)> = None;
                    for (sp, sn) in (0..8).flat_map(|a| (0..8).map(move |b| (a, b))) {
                        let (mut op, mut on) = (vec![Vec3::NAN; n + 8], vec![Vec3::NAN; n + 8]);
                        let (o, q) = (&mut op[sp..sp + n], &mut on[sn..sn + n]);
                        lbs_fast(tier, false, &skin, k, j, w, p, nn, prepared, o, q);
                        let untouched = |v: &[Vec3], s: usize| {
                            v[..s].iter().chain(&v[s + n..]).all(|x| x.is_nan())
                        };
                        let what =
                            format!("{tier:?} k {k} blocks {} at {sp} {sn}", prepared.is_some());
                        assert!(untouched(&op, sp) && untouched(&on, sn), "{what}: outside");
                        let got = (op[sp..sp + n].to_vec(), on[sn..sn + n].to_vec());
                        match &first {
                            None => {
                                for i in 0..n {
                                    assert!(got.0[i].abs_diff_eq(rp[i], 1e-5), "{what} {i}");
                                    assert!(got.1[i].abs_diff_eq(rn[i], 1e-5), "{what} {i}");
                                }
                                first = Some(got);
                            }
                            Some(f) => assert!(got == *f, "{what}: not the outputs at 0 0"),
                        }
                    }
                }
            }
        }
    }

    /// The lead puts the blocks on cache lines in the first streams that
    /// can be, is shorter than a block, and is 0 for short meshes.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn stream_lead_aligns_the_first_streams() {
        use crate::anim::simd::x86::avx512::stream_lead;
        let line = |a: usize, s: usize| (a + 12 * s).is_multiple_of(64);
        for a in (4096..4160).step_by(4) {
            for b in (8192..8256).step_by(4) {
                let s = stream_lead(1000, &[a, b]);
                assert!(s < 16);
                assert!(line(a, s), "{a} lead {s}");
                if !line(b, s) {
                    // No lead puts both on lines.
                    assert!((0..16).all(|t| !line(a, t) || !line(b, t)));
                }
                assert_eq!(stream_lead(127, &[a, b]), 0);
            }
        }
        // All four streams 16 bytes past a line: four vertices (48 bytes).
        assert_eq!(stream_lead(1000, &[64 * 5 + 16; 4]), 4);
        // Already on lines: no lead.
        assert_eq!(stream_lead(1000, &[128, 192]), 0);
    }

    /// A palette off the boundary a tier's loads need is read from a
    /// cache-line-aligned copy (on the stack, or the heap past 128 entries)
    /// when the mesh is at least as long, and in place otherwise; either way
    /// every fast path skins as the scalar definition does.
    #[test]
    fn misaligned_palette_is_copied_and_skins_the_same() {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::anim::simd::x86;
            let mut rng = rand::rngs::StdRng::seed_from_u64(48);
            #[repr(C, align(64))]
            struct Buf([f32; 16 * 33]);
            let mut buf = Box::new(Buf([0.0; 16 * 33]));
            // SAFETY: 32 entries of 16 floats fit after the first 4 floats;
            // the address is 16-byte aligned, as an Affine3A needs.
            let skin: &mut [Affine3A] = unsafe {
                std::slice::from_raw_parts_mut(buf.0.as_mut_ptr().add(4) as *mut Affine3A, 32)
            };
            for m in skin.iter_mut() {
                *m = random_rigid(&mut rng)
                    * Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)));
            }
            let skin: &[Affine3A] = skin;
            assert_eq!(skin.as_ptr() as usize % 32, 16);
            let (mut stack, mut heap) = (
                [const { MaybeUninit::uninit() }; x86::ALIGNED_PALETTE_MAX],
                Vec::new(),
            );
            let a = x86::aligned_palette(skin, 32, 32, &mut stack, &mut heap);
            assert_eq!(a.as_ptr() as usize % 64, 0);
            assert_eq!(a, skin);
            // Longer than the mesh: read in place.
            let (mut stack, mut heap) = (
                [const { MaybeUninit::uninit() }; x86::ALIGNED_PALETTE_MAX],
                Vec::new(),
            );
            let b = x86::aligned_palette(skin, 31, 32, &mut stack, &mut heap);
            assert_eq!(b.as_ptr(), skin.as_ptr());
            // On a 16-byte boundary: off a 64-byte one too; a palette
            // longer than the stack buffer is copied to the heap.
            let long: Vec<Affine3A> = (0..200).map(|_| random_rigid(&mut rng)).collect();
            for (pal, align) in [(skin, 64), (&long[1..], 64), (&long[1..], 32)] {
                let (mut stack, mut heap) = (
                    [const { MaybeUninit::uninit() }; x86::ALIGNED_PALETTE_MAX],
                    Vec::new(),
                );
                let c = x86::aligned_palette(pal, 1000, align, &mut stack, &mut heap);
                if (pal.as_ptr() as usize).is_multiple_of(align) {
                    assert_eq!(c.as_ptr(), pal.as_ptr());
                } else {
                    assert_eq!(c.as_ptr() as usize % 64, 0);
                    assert_eq!(c, pal);
                    assert_eq!(
                        heap.len(),
                        if pal.len() > x86::ALIGNED_PALETTE_MAX {
                            pal.len()
                        } else {
                            0
                        }
                    );
                }
            }
            for tier in crate::anim::simd::testable_tiers() {
                for (k, n, weights) in [
                    (1, 200, true),
                    (1, 200, false),
                    (4, 200, true),
                    (4, 100, true),
                ] {
                    let m = random_mesh(&mut rng, n, k, 32);
                    let w: &[f32] = if weights { &m.weights } else { &[] };
                    for normals in [true, false] {
                        let (ns, mut rp, mut rn) = (
                            if normals { &m.normals[..] } else { &[] },
                            vec![Vec3::ZERO; n],
                            vec![Vec3::ZERO; if normals { n } else { 0 }],
                        );
                        let (mut fp, mut fn_) = (rp.clone(), rn.clone());
                        let (j, p) = (&m.joints, &m.positions);
                        lbs_reference(skin, k, j, w, p, ns, &mut rp, &mut rn);
                        lbs_fast(tier, false, skin, k, j, w, p, ns, None, &mut fp, &mut fn_);
                        for i in 0..n {
                            assert!(rp[i].abs_diff_eq(fp[i], 1e-5), "{tier:?} k {k} {i}");
                            if normals {
                                assert!(rn[i].abs_diff_eq(fn_[i], 1e-5), "{tier:?} k {k} {i}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Positions-only LBS from every 4-byte offset of the position stream
    /// (the AVX2 kernel goes one vertex at a time up to a 16-byte boundary,
    /// then four at a time from aligned loads), and every short length.
    #[test]
    fn positions_only_from_any_offset_match_the_scalar_definition() {
        #[cfg(target_arch = "x86_64")]
        {
            let mut rng = rand::rngs::StdRng::seed_from_u64(49);
            let skin: Vec<Affine3A> = (0..20)
                .map(|_| {
                    random_rigid(&mut rng)
                        * Affine3A::from_scale(Vec3::new(0.5, 1.5, rng.gen_range(0.3..2.0)))
                })
                .collect();
            for tier in crate::anim::simd::testable_tiers() {
                for k in [1usize, 2, 4] {
                    for n in (1..=12).chain([61, 200]) {
                        let m = random_mesh(&mut rng, n + 4, k, 20);
                        for off in 0..4 {
                            let p = &m.positions[off..off + n];
                            let (j, w) = (
                                &m.joints[off * k..(off + n) * k],
                                &m.weights[off * k..(off + n) * k],
                            );
                            let w: &[f32] = if k == 1 && off % 2 == 1 { &[] } else { w };
                            let mut want = vec![Vec3::ZERO; n];
                            lbs_reference(&skin, k, j, w, p, &[], &mut want, &mut []);
                            let mut got = vec![Vec3::ZERO; n];
                            lbs_fast(tier, false, &skin, k, j, w, p, &[], None, &mut got, &mut []);
                            for i in 0..n {
                                assert!(
                                    want[i].abs_diff_eq(got[i], 1e-5),
                                    "{tier:?} k {k} n {n} offset {off} vertex {i}: {} {}",
                                    want[i],
                                    got[i]
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// A joint index past the palette is an error naming it, wherever it
    /// sits in the stream (the scan is vectorised: head, body and tail),
    /// for every skinning job; `max_joint` agrees with a plain fold.
    #[test]
    fn joint_past_the_palette_is_an_error() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(47);
        for len in [0usize, 1, 15, 16, 17, 31, 33, 100, 1001] {
            let j: Vec<u16> = (0..len).map(|_| rng.gen_range(0..4000)).collect();
            assert_eq!(max_joint(&j), j.iter().copied().max().unwrap_or(0), "{len}");
        }
        let skin = vec![Affine3A::IDENTITY; 30];
        let qt = vec![QuatTranslation::default(); 30];
        let dq = vec![DualQuat::default(); 30];
        for (k, n) in [
            (1usize, 1usize),
            (1, 5),
            (1, 100),
            (4, 1),
            (4, 37),
            (4, 1001),
        ] {
            let m = random_mesh(&mut rng, n, k, 30);
            for at in [0, n * k / 2, n * k - 1] {
                let mut joints = m.joints.clone();
                joints[at] = 30 + at as u16 % 7;
                let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                let errors = [
                    LinearBlendJob {
                        skin: &skin,
                        per_vertex: k,
                        joints: &joints,
                        weights: &m.weights,
                        positions: &m.positions,
                        normals: &m.normals,
                        out_positions: &mut p,
                        out_normals: &mut nn,
                        unit_normals: false,
                    }
                    .run(),
                    QuatTranslationSkinningJob {
                        palette: &qt,
                        per_vertex: k,
                        joints: &joints,
                        weights: &m.weights,
                        positions: &m.positions,
                        normals: &m.normals,
                        out_positions: &mut p,
                        out_normals: &mut nn,
                    }
                    .run(),
                    DualQuatSkinningJob {
                        palette: &dq,
                        scale_shear: &[],
                        per_vertex: k,
                        joints: &joints,
                        weights: &m.weights,
                        positions: &m.positions,
                        normals: &m.normals,
                        out_positions: &mut p,
                        out_normals: &mut nn,
                    }
                    .run(),
                ];
                for e in errors {
                    let e = e.expect_err("joint past the palette");
                    let want = format!("joint {}", joints[at]);
                    assert!(e.to_string().contains(&want), "k {k} n {n} at {at}: {e}");
                }
            }
        }
    }

    /// [`CheckedJoints`] keeps its indices times 8 while they fit 16 bits
    /// (every index below 8192) and none past that; a mesh whose indices
    /// reach 8192 still skins from its prepared form as the scalar
    /// definition does.
    #[test]
    fn checked_joints_keep_their_indices_times_8() {
        let c = CheckedJoints::new(vec![0, 5, 8191, 3]);
        assert_eq!(c.times8(), &[0, 40, 65528, 24]);
        assert_eq!(CheckedJoints::new(Vec::new()).times8(), &[] as &[u16]);
        assert!(CheckedJoints::new(vec![1, 8192]).times8().is_empty());
        let mut rng = rand::rngs::StdRng::seed_from_u64(67);
        let palette = 8200;
        let skin: Vec<Affine3A> = (0..palette).map(|_| random_rigid(&mut rng)).collect();
        let n = palette + 5;
        let mut m = random_mesh(&mut rng, n, 4, palette as u16);
        m.joints[7] = 8199;
        let checked = CheckedJoints::new(m.joints.clone());
        assert!(checked.times8().is_empty());
        let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
        let (rp, rn) = lbs_scalar(&skin, &m);
        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        LinearBlendJob {
            skin: &skin,
            per_vertex: 4,
            joints: &checked,
            weights: &m.weights,
            positions: bv.positions(),
            normals: bv.normals(),
            out_positions: &mut p,
            out_normals: &mut nn,
            unit_normals: false,
        }
        .run_prepared(&checked, &bv)
        .unwrap();
        for i in 0..n {
            assert!(p[i].abs_diff_eq(rp[i], 1e-5), "{i}: {} {}", p[i], rp[i]);
            assert!(nn[i].abs_diff_eq(rn[i], 1e-5), "{i}: {} {}", nn[i], rn[i]);
        }
    }

    /// The block form of [`BindVertices`] holds each whole block's x, y
    /// and z in order (the last `n % 8` vertices in the streams only);
    /// normals of another length are an error naming them.
    #[test]
    fn bind_vertices_hold_their_blocks() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(59);
        let m = random_mesh(&mut rng, 21, 1, 4);
        let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
        assert_eq!(
            (bv.positions(), bv.normals()),
            (&m.positions[..], &m.normals[..])
        );
        let (pb, nb) = bv.blocks_for(bv.positions(), bv.normals()).unwrap();
        assert_eq!((pb.len(), nb.len()), (2, 2));
        for (blocks, v) in [(pb, &m.positions), (nb, &m.normals)] {
            for i in 0..16 {
                let b = &blocks[i / 8];
                assert_eq!(Vec3::new(b.x[i % 8], b.y[i % 8], b.z[i % 8]), v[i]);
            }
        }
        let no_normals = BindVertices::new(m.positions.clone(), Vec::new()).unwrap();
        let (pb, nb) = no_normals.blocks_for(no_normals.positions(), &[]).unwrap();
        assert_eq!((pb.len(), nb.len()), (2, 0));
        let e = BindVertices::new(m.positions.clone(), m.normals[..20].to_vec()).unwrap_err();
        assert!(e.to_string().contains("bind normals"), "{e}");
    }

    /// `run_prepared` skins exactly as `run` on every tier the CPU has
    /// (one to five influences, with and without normals, meshes around the
    /// eight-vertex blocks, palettes shorter and longer than the mesh), and
    /// a job whose positions or normals are not the prepared slices (even
    /// equal copies) is an error with nothing written.
    #[test]
    fn prepared_vertices_skin_as_run_does_and_still_check() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(61);
        for palette in [6usize, 64] {
            let skin: Vec<Affine3A> = (0..palette)
                .map(|_| {
                    random_rigid(&mut rng)
                        * Affine3A::from_scale(Vec3::new(
                            rng.gen_range(0.3..2.0),
                            rng.gen_range(0.3..2.0),
                            rng.gen_range(0.3..2.0),
                        ))
                })
                .collect();
            for (k, n) in (1..=5).flat_map(|k| [(k, 5), (k, 8), (k, 16), (k, 23), (k, 203)]) {
                let mut m = random_mesh(&mut rng, n, k, palette as u16);
                m.normals[n / 2] = Vec3::ZERO;
                let checked = CheckedJoints::new(m.joints.clone());
                let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
                for with_normals in [true, false] {
                    let normals: &[Vec3] = if with_normals { &m.normals } else { &[] };
                    let skin_it = |prepared: bool| {
                        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                        let nn_len = if with_normals { n } else { 0 };
                        let job = LinearBlendJob {
                            skin: &skin,
                            per_vertex: k,
                            joints: &checked,
                            weights: &m.weights,
                            positions: if prepared {
                                bv.positions()
                            } else {
                                &m.positions
                            },
                            normals: if prepared && with_normals {
                                bv.normals()
                            } else {
                                normals
                            },
                            out_positions: &mut p,
                            out_normals: &mut nn[..nn_len],
                            unit_normals: false,
                        };
                        if prepared {
                            job.run_prepared(&checked, &bv).unwrap();
                        } else {
                            job.run().unwrap();
                        }
                        (p, nn)
                    };
                    assert_eq!(
                        skin_it(true),
                        skin_it(false),
                        "palette {palette} k {k} n {n} normals {with_normals}"
                    );
                }
                // Copies of the prepared streams are other slices.
                let (mut p, mut nn) = (vec![Vec3::ONE; n], vec![Vec3::ONE; n]);
                for (positions, normals, what) in [
                    (&m.positions[..], bv.normals(), "positions"),
                    (bv.positions(), &m.normals[..], "normals"),
                ] {
                    let e = LinearBlendJob {
                        skin: &skin,
                        per_vertex: k,
                        joints: &checked,
                        weights: &m.weights,
                        positions,
                        normals,
                        out_positions: &mut p,
                        out_normals: &mut nn,
                        unit_normals: false,
                    }
                    .run_prepared(&checked, &bv)
                    .unwrap_err();
                    assert!(e.to_string().contains(what), "{e}");
                    assert!(p.iter().chain(&nn).all(|v| *v == Vec3::ONE));
                }
            }
        }
    }

    /// DQS `run_prepared` skins exactly as `run` (rigid and two-phase, two
    /// to four influences, with and without normals, meshes around the
    /// blocks of eight, palettes short enough for the offset table and
    /// not), and errs on streams that are not the prepared slices.
    #[test]
    fn prepared_vertices_skin_dqs_as_run_does() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(67);
        for palette in [4usize, 70] {
            let skin: Vec<Affine3A> = (0..palette)
                .map(|_| {
                    random_rigid(&mut rng)
                        * Affine3A::from_scale(Vec3::new(
                            rng.gen_range(0.5..2.0),
                            rng.gen_range(0.5..2.0),
                            rng.gen_range(0.5..2.0),
                        ))
                })
                .collect();
            let h = super::super::PaletteHierarchy::flat(palette);
            let mut dq = vec![DualQuat::default(); palette];
            let mut ss = vec![Mat3A::IDENTITY; palette];
            encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
            for (k, n) in (2..=4).flat_map(|k| [(k, 5), (k, 64), (k, 203), (k, 1200)]) {
                let m = random_mesh(&mut rng, n, k, palette as u16);
                let checked = CheckedJoints::new(m.joints.clone());
                let bv = BindVertices::new(m.positions.clone(), m.normals.clone()).unwrap();
                for (scale_shear, with_normals) in [
                    (&[][..], true),
                    (&ss[..], true),
                    (&[][..], false),
                    (&ss[..], false),
                ] {
                    let skin_it = |prepared: bool| {
                        let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                        let nn_len = if with_normals { n } else { 0 };
                        let src = if prepared {
                            bv.normals()
                        } else {
                            &m.normals[..]
                        };
                        let job = DualQuatSkinningJob {
                            palette: &dq,
                            scale_shear,
                            per_vertex: k,
                            joints: &checked,
                            weights: &m.weights,
                            positions: if prepared {
                                bv.positions()
                            } else {
                                &m.positions
                            },
                            normals: if with_normals { src } else { &[] },
                            out_positions: &mut p,
                            out_normals: &mut nn[..nn_len],
                        };
                        if prepared {
                            job.run_prepared(&checked, &bv).unwrap();
                        } else {
                            job.run().unwrap();
                        }
                        (p, nn)
                    };
                    assert_eq!(
                        skin_it(true),
                        skin_it(false),
                        "palette {palette} k {k} n {n} two-phase {} normals {with_normals}",
                        !scale_shear.is_empty()
                    );
                }
                let (mut p, mut nn) = (vec![Vec3::ONE; n], vec![Vec3::ONE; n]);
                let e = DualQuatSkinningJob {
                    palette: &dq,
                    scale_shear: &[],
                    per_vertex: k,
                    joints: &checked,
                    weights: &m.weights,
                    positions: bv.positions(),
                    normals: &m.normals,
                    out_positions: &mut p,
                    out_normals: &mut nn,
                }
                .run_prepared(&checked, &bv)
                .unwrap_err();
                assert!(e.to_string().contains("normals"), "{e}");
                assert!(p.iter().chain(&nn).all(|v| *v == Vec3::ONE));
            }
        }
    }

    /// `run_checked` skins exactly as `run` (LBS with four influences and
    /// with one weightless one, rigid DQS; the process's tier); a
    /// checked index past the palette is still an error naming it, with
    /// nothing written; and a job whose joints are not the checked slice
    /// (even an equal copy) is an error.
    #[test]
    fn checked_joints_skin_as_run_does_and_still_check() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(53);
        let skin: Vec<Affine3A> = (0..24).map(|_| random_rigid(&mut rng)).collect();
        let mut dq = vec![DualQuat::default(); skin.len()];
        let flat = super::super::PaletteHierarchy::flat(skin.len());
        super::super::encode_dual_quat(&skin, &flat, &mut dq).unwrap();
        for (k, n) in [(4usize, 203usize), (1, 203), (4, 5)] {
            let mut m = random_mesh(&mut rng, n, k, skin.len() as u16);
            if k == 1 {
                m.weights.clear();
            }
            let checked = CheckedJoints::new(m.joints.clone());
            assert_eq!(checked.max_joint(), m.joints.iter().copied().max());
            let (want_p, want_n) = lbs(&skin, &m);
            let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            LinearBlendJob {
                skin: &skin,
                per_vertex: k,
                joints: &checked,
                weights: &m.weights,
                positions: &m.positions,
                normals: &m.normals,
                out_positions: &mut p,
                out_normals: &mut nn,
                unit_normals: false,
            }
            .run_checked(&checked)
            .unwrap();
            assert_eq!((p, nn), (want_p, want_n), "LBS k {k} n {n}");
            if k == 4 {
                let (want_p, want_n) = dqs(&dq, &[], &m);
                let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                DualQuatSkinningJob {
                    palette: &dq,
                    scale_shear: &[],
                    per_vertex: k,
                    joints: &checked,
                    weights: &m.weights,
                    positions: &m.positions,
                    normals: &m.normals,
                    out_positions: &mut p,
                    out_normals: &mut nn,
                }
                .run_checked(&checked)
                .unwrap();
                assert_eq!((p, nn), (want_p, want_n), "DQS n {n}");
                // The quaternion-translation job: `run_with` and
                // `run_checked_with` alike.
                let mut qt = vec![QuatTranslation::default(); skin.len()];
                super::super::encode_quat_translation(&skin, &mut qt).unwrap();
                let qt_job = |p: &mut [Vec3], nn: &mut [Vec3], checked: Option<&CheckedJoints>| {
                    let job = QuatTranslationSkinningJob {
                        palette: &qt,
                        per_vertex: k,
                        joints: checked.map_or(&m.joints[..], |c| c.as_slice()),
                        weights: &m.weights,
                        positions: &m.positions,
                        normals: &m.normals,
                        out_positions: p,
                        out_normals: nn,
                    };
                    match checked {
                        Some(c) => job.run_checked_with(c, &mut Vec::new()),
                        None => job.run_with(&mut Vec::new()),
                    }
                    .unwrap();
                };
                let (mut wp, mut wn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                qt_job(&mut wp, &mut wn, None);
                let (mut p, mut nn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                qt_job(&mut p, &mut nn, Some(&checked));
                assert_eq!((p, nn), (wp, wn), "QT n {n}");
            }
        }
        let m = random_mesh(&mut rng, 64, 4, skin.len() as u16);
        let lbs_checked = |joints: &[u16], checked: &CheckedJoints, out: &mut Vec<Vec3>| {
            let mut nn = vec![Vec3::ZERO; 64];
            LinearBlendJob {
                skin: &skin,
                per_vertex: 4,
                joints,
                weights: &m.weights,
                positions: &m.positions,
                normals: &m.normals,
                out_positions: out,
                out_normals: &mut nn,
                unit_normals: false,
            }
            .run_checked(checked)
        };
        // An index past the palette, checked at load: still an error.
        let mut bad = m.joints.clone();
        bad[77] = skin.len() as u16 + 3;
        let bad = CheckedJoints::from(bad);
        let mut out = vec![Vec3::ZERO; 64];
        let e = lbs_checked(&bad, &bad, &mut out).expect_err("joint past the palette");
        assert!(e.to_string().contains("joint 27"), "{e}");
        assert!(
            out.iter().all(|p| *p == Vec3::ZERO),
            "written before the error"
        );
        let e = DualQuatSkinningJob {
            palette: &dq,
            scale_shear: &[],
            per_vertex: 4,
            joints: &bad,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut out,
            out_normals: &mut vec![Vec3::ZERO; 64],
        }
        .run_checked(&bad)
        .expect_err("joint past the palette");
        assert!(e.to_string().contains("joint 27"), "{e}");
        // The job's joints must be the checked ones, not a copy of them.
        let good = CheckedJoints::new(m.joints.clone());
        let e = lbs_checked(&m.joints, &good, &mut out).expect_err("another slice");
        assert!(e.to_string().contains("not the 256 checked"), "{e}");
        let e = lbs_checked(&good[..255], &good, &mut out).expect_err("a shorter slice");
        assert!(e.to_string().contains("255"), "{e}");
        assert!(
            out.iter().all(|p| *p == Vec3::ZERO),
            "written before the error"
        );
        lbs_checked(&good, &good, &mut out).unwrap();
        assert!(out.iter().any(|p| *p != Vec3::ZERO));
    }

    /// One influence of weight zero, subnormal, infinite or NaN: a zero
    /// normal, as the reference gives, on every palette path. (The AVX2
    /// kernel gives NaN normals for the non-finite weights.)
    #[test]
    fn fast_lbs_gives_zero_normals_for_degenerate_single_weights() {
        #[cfg(target_arch = "x86_64")]
        for (tier, palette) in crate::anim::simd::testable_tiers()
            .into_iter()
            .flat_map(|t| [(t, 8), (t, 100)])
        {
            let mut rng = rand::rngs::StdRng::seed_from_u64(43);
            let skin: Vec<Affine3A> = (0..palette).map(|_| random_rigid(&mut rng)).collect();
            let mut m = random_mesh(&mut rng, 200, 1, palette as u16);
            let odd = [0.0, -0.0, 1e-40, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
            for (i, &w) in odd.iter().enumerate() {
                m.weights[3 + 17 * i] = w;
            }
            let n = m.positions.len();
            let (mut rp, mut rn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let (j, w, p, nn) = (&m.joints, &m.weights, &m.positions, &m.normals);
            lbs_reference(&skin, 1, j, w, p, nn, &mut rp, &mut rn);
            let (mut fp, mut fn_) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            lbs_fast(tier, false, &skin, 1, j, w, p, nn, None, &mut fp, &mut fn_);
            let checked = if tier == crate::anim::simd::Tier::Avx512 {
                odd.len()
            } else {
                3
            };
            for (i, w) in odd.iter().enumerate().take(checked) {
                let v = 3 + 17 * i;
                assert_eq!(rn[v], Vec3::ZERO, "reference, weight {w}");
                assert_eq!(fn_[v], Vec3::ZERO, "{tier:?} palette {palette} weight {w}");
            }
        }
    }

    /// Vertices whose weights cancel out (all zero here: the blended real
    /// part is 0) keep their position and normal on the fast kernels, as
    /// in the scalar definition, beside vertices that move.
    #[test]
    fn fast_dqs_keeps_vertices_whose_weights_cancel_out() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        // 12 entries with 400 vertices: the sign-table kernel; 70: the
        // transposing one.
        for (palette, n) in [(12usize, 400usize), (70, 400)] {
            let skin: Vec<Affine3A> = (0..palette).map(|_| random_rigid(&mut rng)).collect();
            let mut dq = vec![DualQuat::default(); palette];
            encode_dual_quat(&skin, &PaletteHierarchy::flat(palette), &mut dq).unwrap();
            let mut m = random_mesh(&mut rng, n, 4, palette as u16);
            // Every third vertex's weights cancel out.
            for v in (0..n).step_by(3) {
                m.weights[4 * v..4 * v + 4].fill(0.0);
            }
            let (rp, rn) = dqs_scalar(&dq, &[], &m);
            let (fp, fn_) = dqs(&dq, &[], &m);
            for v in 0..n {
                assert!(
                    rp[v].abs_diff_eq(fp[v], 1e-5),
                    "{palette} {v}: {} {}",
                    rp[v],
                    fp[v]
                );
                assert!(rn[v].abs_diff_eq(fn_[v], 1e-5), "{palette} {v} normal");
                if v % 3 == 0 {
                    assert_eq!(fp[v], m.positions[v], "{palette} {v} moved");
                } else {
                    assert!(
                        fp[v].distance(m.positions[v]) > 1e-3,
                        "{palette} {v} stayed"
                    );
                }
            }
        }
    }

    #[test]
    fn fast_dqs_matches_the_scalar_definition() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(71);
        // Palettes of 12 and 64 entries with 203 and 1100 vertices take the
        // sign-table kernel; 12 entries with 100 vertices (too few to pay
        // for the table) and 70 entries (too many) the transposing one.
        // Rigid, then the two-phase variant (scale/shear palette).
        for (palette, n, scaled) in [
            (12usize, 203usize, false),
            (12, 100, false),
            (64, 1100, false),
            (70, 1200, false),
            (12, 203, true),
            (12, 100, true),
            (64, 1100, true),
            (70, 1200, true),
        ] {
            let skin: Vec<Affine3A> = (0..palette)
                .map(|_| {
                    let rigid = random_rigid(&mut rng);
                    if !scaled {
                        return rigid;
                    }
                    // Non-uniform scale, and shear from a rotation after it.
                    rigid
                        * Affine3A::from_scale(Vec3::new(
                            rng.gen_range(0.5..2.0),
                            rng.gen_range(0.5..2.0),
                            rng.gen_range(0.5..2.0),
                        ))
                        * Affine3A::from_rotation_y(rng.gen_range(-1.0..1.0))
                })
                .collect();
            let h = PaletteHierarchy::flat(palette);
            let mut dq = vec![DualQuat::default(); palette];
            let mut ss = vec![Mat3A::ZERO; if scaled { palette } else { 0 }];
            if scaled {
                encode_dual_quat_scale(&skin, &h, &mut dq, &mut ss).unwrap();
                assert!(ss.iter().any(|m| !m.abs_diff_eq(Mat3A::IDENTITY, 0.1)));
            } else {
                encode_dual_quat(&skin, &h, &mut dq).unwrap();
            }
            // Random signs: the hemisphere fix must see them.
            for (i, d) in dq.iter_mut().enumerate() {
                if i % 3 == 0 {
                    *d = d.negate();
                }
            }
            for k in 1..=5 {
                let m = random_mesh(&mut rng, n, k, palette as u16);
                let n = m.positions.len();
                let (rp, rn) = dqs_scalar(&dq, &ss, &m);
                let (fp, fn_) = dqs(&dq, &ss, &m);
                // Positions alone take the same kernels without normals.
                let mut alone = vec![Vec3::ZERO; n];
                DualQuatSkinningJob {
                    palette: &dq,
                    scale_shear: &ss,
                    per_vertex: k,
                    joints: &m.joints,
                    weights: &m.weights,
                    positions: &m.positions,
                    normals: &[],
                    out_positions: &mut alone,
                    out_normals: &mut [],
                }
                .run()
                .unwrap();
                for i in 0..n {
                    assert!(
                        rp[i].abs_diff_eq(fp[i], 1e-5),
                        "palette {palette} scaled {scaled} k {k} vertex {i}: {} {}",
                        rp[i],
                        fp[i]
                    );
                    assert!(
                        rn[i].abs_diff_eq(fn_[i], 1e-5),
                        "palette {palette} scaled {scaled} k {k} vertex {i}"
                    );
                    assert!(rp[i].abs_diff_eq(alone[i], 1e-5), "{i} without normals");
                }
            }
        }
    }
}
