use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A, Vec4};

#[cfg(target_arch = "x86_64")]
use super::simd::Tier;
use super::{AnimError, DualQuat, QuatTranslation};
pub(crate) use crate::anim::simd::lanes::{cofactor, Vec3x8};

mod bind;
mod morph;
mod tangents;

pub(crate) use bind::max_joint;
pub use bind::{BindVertices, CheckedJoints};
pub use morph::{MorphBlocksJob, MorphDeltas};
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;
pub use tangents::{TangentPalette, TangentSkinningJob};

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
    /// Skinning matrices, the palette that `joints` index.
    pub skin: &'a [Affine3A],
    /// Influences per vertex, at least 1.
    pub per_vertex: usize,
    /// Influence joint indices, `per_vertex` per vertex, into `skin`.
    pub joints: &'a [u16],
    /// Influence weights, `per_vertex` per vertex, summing to one per vertex;
    /// may be empty when `per_vertex` is 1 (every weight 1).
    pub weights: &'a [f32],
    /// Bind-pose positions, one per vertex.
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    /// Skinned positions, one per vertex.
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

impl LinearBlendJob<'_> {
    /// Checks the job's slices and indices without running it.
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

    /// Validates the job, then writes `out_positions` (and `out_normals`).
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
/// ([`avx2::aligned_palette`](crate::anim::simd::avx2::aligned_palette)), so that those loads never split lines.
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
    use super::simd::avx2;
    use super::simd::avx512::{self, SoaPalette, Streams};
    use super::simd::select::{lbs_kernel, LbsKernel, LbsShape};
    let blocks = prepared.map(|p| p.blocks);
    let (j, w, p, n) = (joints, weights, positions, normals);
    let (op, on) = (out_positions, out_normals);
    let shape = LbsShape {
        influences: k,
        weighted: !w.is_empty(),
        normals: !n.is_empty(),
        palette: skin.len(),
        vertices: p.len(),
    };
    // Palette entries are read whole (one 64-byte load on AVX-512, two
    // 32-byte ones on AVX2): from a palette off such a boundary, loads
    // split cache lines, so the kernels read a cache-line-aligned copy.
    let mut stack =
        [const { MaybeUninit::<avx2::LineAffine>::uninit() }; avx2::ALIGNED_PALETTE_MAX];
    let mut heap = Vec::new();
    match lbs_kernel(tier, shape) {
        LbsKernel::Scalar => lbs_reference(skin, k, j, w, p, n, op, on),
        LbsKernel::Avx512Table => {
            // lbs_kernel chose the table for at most AVX512_TABLE_MAX
            // entries, which SoaPalette takes.
            if let Some(table) = SoaPalette::new(skin) {
                // SAFETY: the caller checked the tier and validate_streams;
                // the table holds the whole palette.
                unsafe { avx512::lbs1_table(&table, skin.len(), Streams::new(j, w, p, n, op, on)) };
            } else {
                lbs_reference(skin, k, j, w, p, n, op, on);
            }
        }
        LbsKernel::Avx512Pipelined => {
            let skin = avx2::aligned_palette(skin, p.len(), 64, &mut stack, &mut heap);
            let sp = skin.as_ptr() as *const f32;
            let s = Streams::new(j, w, p, n, op, on);
            // SAFETY: the caller checked the tier and validate_streams
            // (which also gave normals as long as the positions); `sp`
            // points at skin.len() Affine3A (16-float entries) that
            // outlive the call; blocks come from BindVertices::blocks_for
            // for these very streams.
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
        }
        LbsKernel::Avx512 => {
            let skin = avx2::aligned_palette(skin, p.len(), 64, &mut stack, &mut heap);
            let sp = skin.as_ptr() as *const f32;
            let s = Streams::new(j, w, p, n, op, on);
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
        }
        LbsKernel::Avx2OneInfluence { stream } => {
            // SAFETY: the caller checked the tier (AVX2 + FMA at least) and
            // validate_streams (normals as long as the positions);
            // lbs_kernel chose this kernel for one weightless influence and
            // at most LBS1_TABLE_MAX palette entries.
            unsafe {
                if unit_normals {
                    avx2::lbs1_normals::<true>(skin, j, p, n, op, on, stream);
                } else {
                    avx2::lbs1_normals::<false>(skin, j, p, n, op, on, stream);
                }
            }
        }
        LbsKernel::Avx2Pipelined => {
            let mut packed_stack =
                [const { MaybeUninit::<avx2::PackedAffine>::uninit() }; avx2::PACKED_PALETTE_MAX];
            let mut packed_heap = Vec::new();
            let pk = avx2::packed_palette(skin, &mut packed_stack, &mut packed_heap);
            // The prepared blocks and indices times 8 when there are (every
            // index below 8192); else the kernel reads the `Vec3` streams.
            let pr = prepared
                .map(|pr| (pr.blocks, pr.checked.times8()))
                .filter(|(_, x8)| !x8.is_empty());
            // SAFETY: the caller checked the tier (AVX2 + FMA at least) and
            // validate_streams (so the normals, not empty here, are as long
            // as the positions); lbs_kernel chose this kernel only with
            // weights. Blocks come from BindVertices::blocks_for, which
            // gave them for these very streams (the normals' are empty
            // only when the normals are), and the indices times 8 from the
            // CheckedJoints whose indices `j` are (run_prepared checked
            // both).
            macro_rules! pipelined {
                ($k:literal) => {
                    // SAFETY: as said above the macro.
                    unsafe {
                        match pr {
                            Some(((pb, nb), x8)) => avx2::lbs_pipelined::<$k, true>(
                                skin, pk, j, x8, w, p, n, pb, nb, op, on,
                            ),
                            None => avx2::lbs_pipelined::<$k, false>(
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
        }
        LbsKernel::Avx2Positions => {
            let skin = avx2::aligned_palette(skin, p.len(), 32, &mut stack, &mut heap);
            // SAFETY: the caller checked the tier (AVX2 + FMA at least) and
            // validate_streams.
            unsafe {
                match k {
                    1 => avx2::lbs_positions::<1>(skin, j, w, p, op),
                    2 => avx2::lbs_positions::<2>(skin, j, w, p, op),
                    3 => avx2::lbs_positions::<3>(skin, j, w, p, op),
                    4 => avx2::lbs_positions::<4>(skin, j, w, p, op),
                    5 => avx2::lbs_positions::<5>(skin, j, w, p, op),
                    6 => avx2::lbs_positions::<6>(skin, j, w, p, op),
                    7 => avx2::lbs_positions::<7>(skin, j, w, p, op),
                    _ => avx2::lbs_positions::<8>(skin, j, w, p, op),
                }
            }
        }
        LbsKernel::Avx2 => {
            let skin = avx2::aligned_palette(skin, p.len(), 32, &mut stack, &mut heap);
            // SAFETY: the caller checked the tier (AVX2 + FMA at least) and
            // validate_streams.
            unsafe {
                match k {
                    1 => avx2::lbs::<1>(skin, j, w, p, n, op, on),
                    2 => avx2::lbs::<2>(skin, j, w, p, n, op, on),
                    3 => avx2::lbs::<3>(skin, j, w, p, n, op, on),
                    4 => avx2::lbs::<4>(skin, j, w, p, n, op, on),
                    5 => avx2::lbs::<5>(skin, j, w, p, n, op, on),
                    6 => avx2::lbs::<6>(skin, j, w, p, n, op, on),
                    7 => avx2::lbs::<7>(skin, j, w, p, n, op, on),
                    _ => avx2::lbs::<8>(skin, j, w, p, n, op, on),
                }
            }
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
    /// Bones, the palette that `joints` index.
    pub palette: &'a [QuatTranslation],
    /// Influences per vertex, at least 1.
    pub per_vertex: usize,
    /// Influence joint indices, `per_vertex` per vertex, into `palette`.
    pub joints: &'a [u16],
    /// Influence weights, `per_vertex` per vertex, summing to one per vertex;
    /// may be empty when `per_vertex` is 1 (every weight 1).
    pub weights: &'a [f32],
    /// Bind-pose positions, one per vertex.
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    /// Skinned positions, one per vertex.
    pub out_positions: &'a mut [Vec3],
    /// Empty to skip normals.
    pub out_normals: &'a mut [Vec3],
}

impl QuatTranslationSkinningJob<'_> {
    /// Checks the job's slices and indices without running it.
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
    /// Unit dual quaternions, the palette that `joints` index.
    pub palette: &'a [DualQuat],
    /// Empty for rigid skinning; else one matrix per palette entry.
    pub scale_shear: &'a [Mat3A],
    /// Influences per vertex, at least 1.
    pub per_vertex: usize,
    /// Influence joint indices, `per_vertex` per vertex, into `palette`.
    pub joints: &'a [u16],
    /// Influence weights, `per_vertex` per vertex (never empty, even with one
    /// influence).
    pub weights: &'a [f32],
    /// Bind-pose positions, one per vertex.
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    /// Skinned positions, one per vertex.
    pub out_positions: &'a mut [Vec3],
    /// Empty to skip normals.
    pub out_normals: &'a mut [Vec3],
}

impl DualQuatSkinningJob<'_> {
    /// Checks the job's slices and indices without running it.
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

    /// Validates the job, then writes `out_positions` (and `out_normals`).
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
        {
            let tier = super::simd::tier();
            if tier > Tier::Scalar {
                let (pal, ss, j, w) = (self.palette, self.scale_shear, self.joints, self.weights);
                let (p, n) = (self.positions, self.normals);
                let (op, on) = (&mut *self.out_positions, &mut *self.out_normals);
                done = dqs_fast(tier, pal, ss, k, j, w, p, n, blocks, op, on);
            }
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
    use super::simd::avx2;
    use super::simd::avx512;
    use super::simd::select::{dqs_kernel, DqsKernel};
    let kernel = dqs_kernel(tier, k, pal.len(), p.len());
    // With prepared vertices the table kernel reads their blocks (the
    // normals' empty only when the job has no normals).
    let (pb, nb) = blocks.unwrap_or((&[], &[]));
    // One dispatch over two to four influences, with or without
    // blocks, for either build of the table kernel.
    macro_rules! table {
        ($tier:ident, $kernel:ident) => {
            match (k, blocks.is_some()) {
                (2, true) => $tier::$kernel::<2, true>(pal, ss, j, w, p, n, pb, nb, op, on),
                (3, true) => $tier::$kernel::<3, true>(pal, ss, j, w, p, n, pb, nb, op, on),
                (_, true) => $tier::$kernel::<4, true>(pal, ss, j, w, p, n, pb, nb, op, on),
                (2, false) => $tier::$kernel::<2, false>(pal, ss, j, w, p, n, pb, nb, op, on),
                (3, false) => $tier::$kernel::<3, false>(pal, ss, j, w, p, n, pb, nb, op, on),
                (_, false) => $tier::$kernel::<4, false>(pal, ss, j, w, p, n, pb, nb, op, on),
            }
        };
    }
    // SAFETY: the caller checked that the CPU has `tier` (AVX2 and FMA at
    // least, and AVX-512 F, VL, BW and DQ for that tier) and validated the
    // streams and the scale/shear palette's length; dqs_kernel chose the
    // table kernel only with at most 64 palette entries; blocks come from
    // BindVertices::blocks_for for these very streams.
    unsafe {
        match kernel {
            DqsKernel::Scalar => 0,
            DqsKernel::Avx2 => match k {
                1 => avx2::dqs::<1>(pal, ss, j, w, p, n, op, on),
                2 => avx2::dqs::<2>(pal, ss, j, w, p, n, op, on),
                3 => avx2::dqs::<3>(pal, ss, j, w, p, n, op, on),
                _ => avx2::dqs::<4>(pal, ss, j, w, p, n, op, on),
            },
            DqsKernel::Avx2Table => table!(avx2, dqs_table),
            DqsKernel::Avx512Table => table!(avx512, dqs_table_avx512),
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
mod tests;
