//! What a mesh keeps for skinning it every frame, made once at load: its
//! joint indices checked ([`CheckedJoints`]) and its bind vertices also in
//! blocks of eight ([`BindVertices`]).

use glam::Vec3;

use crate::anim::simd::lanes::Vec3x8;
use crate::anim::AnimError;

/// A mesh's joint indices checked once, for skinning it every frame:
/// [`LinearBlendJob::run_checked`](super::LinearBlendJob::run_checked), [`DualQuatSkinningJob::run_checked`](super::DualQuatSkinningJob::run_checked)
/// and [`QuatTranslationSkinningJob::run_checked_with`](super::QuatTranslationSkinningJob::run_checked_with) compare the largest
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
/// and normals reads from [`LinearBlendJob::run_prepared`](super::LinearBlendJob::run_prepared):
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

    /// The checked indices (what `&checked` also gives).
    pub fn as_slice(&self) -> &[u16] {
        &self.joints
    }

    /// The largest index when `joints` is this set's own slice (the same
    /// memory, as `&checked` gives a job), else an error: the job would
    /// skin other indices than the ones checked.
    pub(super) fn max_for(&self, joints: &[u16]) -> Result<u16, AnimError> {
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

/// A mesh's bind-pose positions and normals kept for skinning it every
/// frame, made once at load as [`CheckedJoints`] is: as `Vec3` streams,
/// which every job reads, and as blocks of eight vertices (eight x, eight
/// y, eight z), which the AVX2 and AVX-512 linear blend kernels for two to
/// four influences with normals read with three loads each (AVX-512: three
/// loads and three inserts for sixteen vertices) instead of rearranging
/// the `Vec3` streams themselves on every call (on a Zen 3, about 9 per
/// cent of the AVX2 job at 100,000 vertices; on an Emerald Rapids, 2 to 3
/// per cent of the AVX-512 one). The blocks cost another
/// 24 bytes a vertex. [`LinearBlendJob::run_prepared`](super::LinearBlendJob::run_prepared) takes it with a job
/// whose `positions` and `normals` are its own; the type owns the streams
/// and lends them out read-only, so the two forms cannot drift apart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BindVertices {
    pub(super) positions: Box<[Vec3]>,
    pub(super) normals: Box<[Vec3]>,
    pub(super) position_blocks: Box<[Vec3x8]>,
    pub(super) normal_blocks: Box<[Vec3x8]>,
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

    /// Makes the streams `n` long (normals: `n`, or none without
    /// `normals`) and the blocks `n / 8`, keeping the allocations when the
    /// lengths already match; the contents are then stale until a writer
    /// (`MorphBlocksJob`) fills every one.
    pub(super) fn resize_like(&mut self, n: usize, normals: bool) {
        let m = if normals { n } else { 0 };
        if self.positions.len() != n {
            self.positions = vec![Vec3::ZERO; n].into_boxed_slice();
            self.position_blocks = vec![Vec3x8::default(); n / 8].into_boxed_slice();
        }
        if self.normals.len() != m {
            self.normals = vec![Vec3::ZERO; m].into_boxed_slice();
            self.normal_blocks = vec![Vec3x8::default(); m / 8].into_boxed_slice();
        }
    }

    /// Bind-pose positions, one per vertex.
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
    pub(super) fn blocks_for(
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

/// The largest joint index in `joints` (0 when empty). With AVX2 it takes
/// sixteen indices per instruction (`vpmaxuw`); SSE2 has no unsigned
/// 16-bit max, and this scan is a few per cent of a one-influence skin.
#[inline]
pub(crate) fn max_joint(joints: &[u16]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() {
        /// # Safety
        /// The CPU has AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn max_avx2(joints: &[u16]) -> u16 {
            joints.iter().copied().fold(0u16, u16::max)
        }
        // SAFETY: the tier says the CPU has AVX2.
        return unsafe { max_avx2(joints) };
    }
    joints.iter().copied().fold(0u16, u16::max)
}
