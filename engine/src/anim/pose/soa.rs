//! Poses in structure-of-arrays form: eight joints' translations,
//! rotations and scales as rows of eight floats, so that the pose jobs work
//! on eight joints per register with no transposes (ozz-animation's
//! `SoaTransform` is the same idea, four wide).

use glam::{Quat, Vec3};

use crate::anim::{AnimError, Transform};

/// Joints per [`SoaTransforms8`] block.
pub const SOA_LANES: usize = 8;

/// Eight joints' local transforms, component by component: `translation[c]`
/// holds component `c` (x, y, z) of the eight translations, `rotation[c]`
/// the quaternions' x, y, z, w, `scale[c]` the scales'. 320 bytes, on a
/// 32-byte boundary.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoaTransforms8 {
    /// Translation rows: x, y, z, eight lanes each.
    pub translation: [[f32; SOA_LANES]; 3],
    /// Rotation rows: the quaternions' x, y, z, w, eight lanes each.
    pub rotation: [[f32; SOA_LANES]; 4],
    /// Scale rows: x, y, z, eight lanes each.
    pub scale: [[f32; SOA_LANES]; 3],
}

// `soa_float` and the SIMD sampling and blending kernels address a block
// as 80 floats: rows 0..3 translation, 3..7 rotation, 7..10 scale.
const _: () = assert!(
    std::mem::size_of::<SoaTransforms8>() == 80 * 4
        && std::mem::align_of::<SoaTransforms8>() == 32
        && std::mem::offset_of!(SoaTransforms8, translation) == 0
        && std::mem::offset_of!(SoaTransforms8, rotation) == 3 * 32
        && std::mem::offset_of!(SoaTransforms8, scale) == 7 * 32
);

impl SoaTransforms8 {
    /// Eight identity transforms.
    pub const IDENTITY: Self = Self {
        translation: [[0.0; SOA_LANES]; 3],
        rotation: [
            [0.0; SOA_LANES],
            [0.0; SOA_LANES],
            [0.0; SOA_LANES],
            [1.0; SOA_LANES],
        ],
        scale: [[1.0; SOA_LANES]; 3],
    };

    /// Lane `lane` (below [`SOA_LANES`]) as a [`Transform`].
    #[inline]
    pub fn get(&self, lane: usize) -> Transform {
        let (t, r, s) = (&self.translation, &self.rotation, &self.scale);
        Transform {
            translation: Vec3::new(t[0][lane], t[1][lane], t[2][lane]),
            rotation: Quat::from_xyzw(r[0][lane], r[1][lane], r[2][lane], r[3][lane]),
            scale: Vec3::new(s[0][lane], s[1][lane], s[2][lane]),
        }
    }

    /// Writes `t` into lane `lane` (below [`SOA_LANES`]).
    #[inline]
    pub fn set(&mut self, lane: usize, t: &Transform) {
        let (tr, q, s) = (t.translation, t.rotation, t.scale);
        for (c, v) in [tr.x, tr.y, tr.z].into_iter().enumerate() {
            self.translation[c][lane] = v;
        }
        for (c, v) in [q.x, q.y, q.z, q.w].into_iter().enumerate() {
            self.rotation[c][lane] = v;
        }
        for (c, v) in [s.x, s.y, s.z].into_iter().enumerate() {
            self.scale[c][lane] = v;
        }
    }
}

impl Default for SoaTransforms8 {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// A local pose of `len` joints in structure-of-arrays blocks of eight
/// ([`SoaTransforms8`]); joint `j` is lane `j % 8` of block `j / 8`. The
/// lanes past `len` in the last block hold identity transforms, and every
/// job that writes a `SoaPose` keeps them so, which lets the SIMD jobs run
/// whole blocks.
///
/// [`SoaSamplingJob`](crate::anim::SoaSamplingJob) (or
/// [`Playback::sample_soa`](crate::anim::Playback::sample_soa)),
/// [`SoaBlendingJob`](crate::anim::SoaBlendingJob) and
/// [`SoaLocalToModelJob`](crate::anim::SoaLocalToModelJob) read and write it:
/// a frame's pose jobs with no conversion between them.
#[derive(Clone, Debug, PartialEq)]
pub struct SoaPose {
    blocks: Vec<SoaTransforms8>,
    len: usize,
}

impl SoaPose {
    /// `len` identity transforms.
    pub fn identity(len: usize) -> Self {
        Self {
            blocks: vec![SoaTransforms8::IDENTITY; len.div_ceil(SOA_LANES)],
            len,
        }
    }

    /// The same pose in structure-of-arrays form.
    pub fn from_transforms(pose: &[Transform]) -> Self {
        let mut p = Self::identity(pose.len());
        for (block, chunk) in p.blocks.iter_mut().zip(pose.chunks(SOA_LANES)) {
            for (lane, t) in chunk.iter().enumerate() {
                block.set(lane, t);
            }
        }
        p
    }

    /// Joints held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the pose holds no joints.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Joint `j`'s transform, `None` past the end.
    #[inline]
    pub fn get(&self, j: usize) -> Option<Transform> {
        (j < self.len).then(|| self.blocks[j / SOA_LANES].get(j % SOA_LANES))
    }

    /// Sets joint `j`'s transform.
    pub fn set(&mut self, j: usize, t: &Transform) -> Result<(), AnimError> {
        if j >= self.len {
            return Err(AnimError::InvalidJob(format!(
                "joint {j} outside a pose of {} joints",
                self.len
            )));
        }
        self.blocks[j / SOA_LANES].set(j % SOA_LANES, t);
        Ok(())
    }

    /// Writes the pose into `out`, which must hold exactly [`len`](Self::len)
    /// transforms.
    pub fn to_transforms(&self, out: &mut [Transform]) -> Result<(), AnimError> {
        if out.len() != self.len {
            return Err(AnimError::LengthMismatch {
                what: "transforms",
                expected: self.len,
                got: out.len(),
            });
        }
        for (chunk, block) in out.chunks_mut(SOA_LANES).zip(&self.blocks) {
            for (lane, t) in chunk.iter_mut().enumerate() {
                *t = block.get(lane);
            }
        }
        Ok(())
    }

    /// The pose as a vector of [`Transform`]s.
    pub fn to_vec(&self) -> Vec<Transform> {
        (0..self.len)
            .map(|j| self.blocks[j / SOA_LANES].get(j % SOA_LANES))
            .collect()
    }

    /// The blocks, `len().div_ceil(8)` of them.
    #[inline]
    pub fn blocks(&self) -> &[SoaTransforms8] {
        &self.blocks
    }

    /// The blocks, to write. Keep the lanes past [`len`](Self::len) as they
    /// are (identity), as the jobs do.
    #[inline]
    pub fn blocks_mut(&mut self) -> &mut [SoaTransforms8] {
        &mut self.blocks
    }

    /// Sets the lanes past `len` back to identity.
    #[inline]
    pub(crate) fn reset_spare_lanes(&mut self) {
        let used = self.len % SOA_LANES;
        if used != 0 {
            if let Some(last) = self.blocks.last_mut() {
                for lane in used..SOA_LANES {
                    last.set(lane, &Transform::IDENTITY);
                }
            }
        }
    }
}

/// Where joint `j`'s component `row` (0..3 translation x, y, z, 3..7
/// rotation x, y, z, w, 7..10 scale x, y, z) lies in a [`SoaPose`]'s
/// blocks, in floats from the first.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn soa_float(j: usize, row: usize) -> usize {
    (j / SOA_LANES) * 10 * SOA_LANES + row * SOA_LANES + j % SOA_LANES
}

/// Read access to a pose, either layout: what the pose jobs' scalar paths
/// take.
pub(crate) trait PoseRead {
    fn joints(&self) -> usize;
    fn at(&self, j: usize) -> Transform;
}

impl PoseRead for [Transform] {
    #[inline(always)]
    fn joints(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn at(&self, j: usize) -> Transform {
        self[j]
    }
}

impl PoseRead for SoaPose {
    #[inline(always)]
    fn joints(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn at(&self, j: usize) -> Transform {
        self.blocks[j / SOA_LANES].get(j % SOA_LANES)
    }
}

/// Write access to a pose, either layout.
pub(crate) trait PoseWrite: PoseRead {
    fn put(&mut self, j: usize, t: Transform);
}

impl PoseWrite for [Transform] {
    #[inline(always)]
    fn put(&mut self, j: usize, t: Transform) {
        self[j] = t;
    }
}

impl PoseWrite for SoaPose {
    #[inline(always)]
    fn put(&mut self, j: usize, t: Transform) {
        self.blocks[j / SOA_LANES].set(j % SOA_LANES, &t);
    }
}

/// Where a sampling job writes, either layout: per-field setters (and
/// [`PoseWrite::put`] for whole transforms) for the scalar paths, and the
/// raw storage for the SIMD ones (which branch on `SOA` at compile time).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) trait PoseSink: PoseWrite {
    /// `as_blocks` holds the pose (a [`SoaPose`]); else `as_transforms`.
    const SOA: bool;
    fn set_translation(&mut self, j: usize, v: Vec3);
    fn set_scale(&mut self, j: usize, v: Vec3);
    fn set_rotation(&mut self, j: usize, q: Quat);
    /// The transforms (empty for a [`SoaPose`]).
    fn as_transforms(&mut self) -> &mut [Transform];
    /// The blocks (empty for transforms).
    fn as_blocks(&mut self) -> &mut [SoaTransforms8];
}

impl PoseSink for [Transform] {
    const SOA: bool = false;
    #[inline(always)]
    fn set_translation(&mut self, j: usize, v: Vec3) {
        self[j].translation = v;
    }
    #[inline(always)]
    fn set_scale(&mut self, j: usize, v: Vec3) {
        self[j].scale = v;
    }
    #[inline(always)]
    fn set_rotation(&mut self, j: usize, q: Quat) {
        self[j].rotation = q;
    }
    #[inline(always)]
    fn as_transforms(&mut self) -> &mut [Transform] {
        self
    }
    #[inline(always)]
    fn as_blocks(&mut self) -> &mut [SoaTransforms8] {
        &mut []
    }
}

impl PoseSink for SoaPose {
    const SOA: bool = true;
    #[inline(always)]
    fn set_translation(&mut self, j: usize, v: Vec3) {
        let (b, l) = (&mut self.blocks[j / SOA_LANES], j % SOA_LANES);
        [
            b.translation[0][l],
            b.translation[1][l],
            b.translation[2][l],
        ] = v.to_array();
    }
    #[inline(always)]
    fn set_scale(&mut self, j: usize, v: Vec3) {
        let (b, l) = (&mut self.blocks[j / SOA_LANES], j % SOA_LANES);
        [b.scale[0][l], b.scale[1][l], b.scale[2][l]] = v.to_array();
    }
    #[inline(always)]
    fn set_rotation(&mut self, j: usize, q: Quat) {
        let (b, l) = (&mut self.blocks[j / SOA_LANES], j % SOA_LANES);
        [
            b.rotation[0][l],
            b.rotation[1][l],
            b.rotation[2][l],
            b.rotation[3][l],
        ] = q.to_array();
    }
    #[inline(always)]
    fn as_transforms(&mut self) -> &mut [Transform] {
        &mut []
    }
    #[inline(always)]
    fn as_blocks(&mut self) -> &mut [SoaTransforms8] {
        &mut self.blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pose(n: usize) -> Vec<Transform> {
        (0..n)
            .map(|i| Transform {
                translation: Vec3::new(i as f32, 2.0 * i as f32, -(i as f32)),
                rotation: Quat::from_rotation_y(0.1 * i as f32),
                scale: Vec3::splat(1.0 + i as f32),
            })
            .collect()
    }

    #[test]
    fn round_trips_and_keeps_spare_lanes_identity() {
        for n in [0usize, 1, 7, 8, 9, 17] {
            let p = pose(n);
            let s = SoaPose::from_transforms(&p);
            assert_eq!(s.len(), n);
            assert_eq!(s.blocks().len(), n.div_ceil(8));
            assert_eq!(s.to_vec(), p);
            let mut back = vec![Transform::IDENTITY; n];
            s.to_transforms(&mut back).unwrap();
            assert_eq!(back, p);
            for (j, t) in p.iter().enumerate() {
                assert_eq!(s.get(j), Some(*t));
            }
            assert_eq!(s.get(n), None);
            if let Some(last) = s.blocks().last() {
                for lane in n % 8..if n % 8 == 0 { 0 } else { 8 } {
                    assert_eq!(last.get(lane), Transform::IDENTITY, "n {n} lane {lane}");
                }
            }
        }
    }

    #[test]
    fn set_and_errors() {
        let mut s = SoaPose::identity(10);
        let t = pose(4)[3];
        s.set(9, &t).unwrap();
        assert_eq!(s.get(9), Some(t));
        assert_eq!(s.blocks()[1].get(1), t);
        assert!(s.set(10, &t).is_err());
        let mut short = vec![Transform::IDENTITY; 9];
        assert!(matches!(
            s.to_transforms(&mut short),
            Err(AnimError::LengthMismatch { .. })
        ));
        s.blocks_mut()[1].set(5, &t);
        s.reset_spare_lanes();
        assert_eq!(s.blocks()[1].get(5), Transform::IDENTITY);
        assert_eq!(s.get(9), Some(t));
    }
}
