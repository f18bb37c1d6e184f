//! Local-to-model: local matrices eight joints at a time in SoA form,
//! then each joint's model matrix from its parent's.

use std::arch::x86_64::*;

use super::common::{soa3_from, soa4_from};
use crate::anim::simd::lanes::{SoaTransforms8, Transform, NO_PARENT};
use glam::{Affine3A, Mat3A, Quat};

/// Local matrices of up to eight joints in structure-of-arrays form:
/// `m[k][v]` is element k (column-major 3x3: c0.xyz, c1.xyz, c2.xyz) of
/// joint v's `R(q) * diag(s)`.
#[repr(C, align(32))]
pub(crate) struct Locals([[f32; 8]; 9]);

/// # Safety
/// The [tier contract](super); `base + 8 <= locals.len()`.
#[inline(always)]
unsafe fn locals8(locals: &[Transform], base: usize, out: &mut Locals) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let [x, y, z, w] = soa4_from(|v: usize| {
            &locals.get_unchecked(base + v).rotation as *const Quat as *const f32
        });
        // Masked loads read a Vec3 without touching the padding after it.
        let mask = _mm_set_epi32(0, -1, -1, -1);
        let sc = |v: usize| _mm_maskload_ps(&locals.get_unchecked(base + v).scale.x, mask);
        let sl = |v: usize| _mm256_set_m128(sc(v + 4), sc(v));
        let (sx, sy, sz) = soa3_from(sl(0), sl(1), sl(2), sl(3));
        locals8_from([x, y, z, w], [sx, sy, sz], out);
    }
}

/// [`locals8`] from a SoA block: its rows as they are.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn locals8_soa(b: &SoaTransforms8, out: &mut Locals) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let ld = |r: &[f32; 8]| _mm256_load_ps(r.as_ptr());
        let q = [
            ld(&b.rotation[0]),
            ld(&b.rotation[1]),
            ld(&b.rotation[2]),
            ld(&b.rotation[3]),
        ];
        locals8_from(q, [ld(&b.scale[0]), ld(&b.scale[1]), ld(&b.scale[2])], out);
    }
}

/// `R(q) * diag(s)` of eight joints given as x, y, z, w and scale rows.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn locals8_from([x, y, z, w]: [__m256; 4], [sx, sy, sz]: [__m256; 3], out: &mut Locals) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let two = _mm256_set1_ps(2.0);
        let one = _mm256_set1_ps(1.0);
        let (x2, y2, z2) = (
            _mm256_mul_ps(x, two),
            _mm256_mul_ps(y, two),
            _mm256_mul_ps(z, two),
        );
        let (xx, yy, zz) = (
            _mm256_mul_ps(x, x2),
            _mm256_mul_ps(y, y2),
            _mm256_mul_ps(z, z2),
        );
        let (xy, xz, yz) = (
            _mm256_mul_ps(x, y2),
            _mm256_mul_ps(x, z2),
            _mm256_mul_ps(y, z2),
        );
        let (wx, wy, wz) = (
            _mm256_mul_ps(w, x2),
            _mm256_mul_ps(w, y2),
            _mm256_mul_ps(w, z2),
        );
        let m = &mut out.0;
        let st = |d: &mut [f32; 8], v: __m256| _mm256_store_ps(d.as_mut_ptr(), v);
        st(
            &mut m[0],
            _mm256_mul_ps(_mm256_sub_ps(one, _mm256_add_ps(yy, zz)), sx),
        );
        st(&mut m[1], _mm256_mul_ps(_mm256_add_ps(xy, wz), sx));
        st(&mut m[2], _mm256_mul_ps(_mm256_sub_ps(xz, wy), sx));
        st(&mut m[3], _mm256_mul_ps(_mm256_sub_ps(xy, wz), sy));
        st(
            &mut m[4],
            _mm256_mul_ps(_mm256_sub_ps(one, _mm256_add_ps(xx, zz)), sy),
        );
        st(&mut m[5], _mm256_mul_ps(_mm256_add_ps(yz, wx), sy));
        st(&mut m[6], _mm256_mul_ps(_mm256_add_ps(xz, wy), sz));
        st(&mut m[7], _mm256_mul_ps(_mm256_sub_ps(yz, wx), sz));
        st(
            &mut m[8],
            _mm256_mul_ps(_mm256_sub_ps(one, _mm256_add_ps(xx, yy)), sz),
        );
    }
}

/// Where local-to-model reads its local transforms: a slice, or a
/// SoA pose's blocks.
pub(crate) trait LocalPose {
    /// The local matrices of joints `base..` (at most eight, `base` a
    /// multiple of eight past `from`) into `block`.
    ///
    /// # Safety
    /// The [tier contract](super); `base < to`, and joints `base..to` (at most
    /// eight of them are read) are inside the pose; in a SoA pose, `base` is
    /// a multiple of eight.
    unsafe fn fill(&self, base: usize, to: usize, block: &mut Locals);
    /// Joint `i`'s translation's x, y and z.
    ///
    /// # Safety
    /// The [tier contract](super); joint `i` is inside the pose.
    unsafe fn translation(&self, i: usize) -> [*const f32; 3];
}

impl LocalPose for [Transform] {
    /// # Safety
    /// The [tier contract](super); `base < to`, and joints `base..to` (at most
    /// eight of them are read) are inside the pose; in a SoA pose, `base` is
    /// a multiple of eight.
    #[inline(always)]
    unsafe fn fill(&self, base: usize, to: usize, block: &mut Locals) {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            if to - base >= 8 {
                return locals8(self, base, block);
            }
            for v in 0..to - base {
                local_lane(self.get_unchecked(base + v), v, block);
            }
        }
    }
    /// # Safety
    /// The [tier contract](super); joint `i` is inside the pose.
    #[inline(always)]
    unsafe fn translation(&self, i: usize) -> [*const f32; 3] {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let t = &self.get_unchecked(i).translation;
            [&t.x, &t.y, &t.z]
        }
    }
}

impl LocalPose for [SoaTransforms8] {
    /// # Safety
    /// The [tier contract](super); `base < to`, and joints `base..to` (at most
    /// eight of them are read) are inside the pose; in a SoA pose, `base` is
    /// a multiple of eight.
    #[inline(always)]
    unsafe fn fill(&self, base: usize, to: usize, block: &mut Locals) {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            // Blocks of eight from a whole block of the pose when
            // `base` is on one (a full update); else lane by lane.
            if to - base >= 8 && base.is_multiple_of(8) {
                return locals8_soa(self.get_unchecked(base / 8), block);
            }
            for v in 0..(to - base).min(8) {
                let j = base + v;
                local_lane(&self.get_unchecked(j / 8).get(j % 8), v, block);
            }
        }
    }
    /// # Safety
    /// The [tier contract](super); joint `i` is inside the pose.
    #[inline(always)]
    unsafe fn translation(&self, i: usize) -> [*const f32; 3] {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let t = &self.get_unchecked(i / 8).translation;
            let l = i % 8;
            [&t[0][l], &t[1][l], &t[2][l]]
        }
    }
}

/// One joint's local matrix into lane `v` of `block`.
#[inline(always)]
fn local_lane(t: &Transform, v: usize, block: &mut Locals) {
    let m = Mat3A::from_quat(t.rotation);
    let c = [
        m.x_axis * t.scale.x,
        m.y_axis * t.scale.y,
        m.z_axis * t.scale.z,
    ];
    for k in 0..9 {
        block.0[k][v] = c[k / 3][k % 3];
    }
}

type Columns = (__m128, __m128, __m128, __m128);

/// `parent * local` for joint `v` of `block`, translation `t`: FMA
/// chains, three operations a column.
///
/// `SPLIT_T`: the translation as two halves added, so that along a
/// chain it passes from parent to child through one FMA and an add (10
/// cycles on Zen 4) rather than three FMAs (12), below the columns'
/// 11. The AVX-512 build uses it, the AVX2 one does not (see
/// docs/kernel-notes.md).
///
/// # Safety
/// The [tier contract](super); `v < 8`; each pointer in the translation
/// (`[tx, ty, tz]`) is valid for reading one float.
#[inline(always)]
unsafe fn joint_model<const SPLIT_T: bool>(
    (p0, p1, p2, pt): Columns,
    block: &Locals,
    v: usize,
    [tx, ty, tz]: [*const f32; 3],
) -> Columns {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let b = |k: usize| _mm_broadcast_ss(block.0.get_unchecked(k).get_unchecked(v));
        let col = |k: usize| {
            _mm_fmadd_ps(
                p0,
                b(3 * k),
                _mm_fmadd_ps(p1, b(3 * k + 1), _mm_mul_ps(p2, b(3 * k + 2))),
            )
        };
        let (tx, ty, tz) = (
            _mm_broadcast_ss(&*tx),
            _mm_broadcast_ss(&*ty),
            _mm_broadcast_ss(&*tz),
        );
        let ct = if SPLIT_T {
            _mm_add_ps(
                _mm_fmadd_ps(p0, tx, _mm_mul_ps(p1, ty)),
                _mm_fmadd_ps(p2, tz, pt),
            )
        } else {
            _mm_fmadd_ps(p0, tx, _mm_fmadd_ps(p1, ty, _mm_fmadd_ps(p2, tz, pt)))
        };
        (col(0), col(1), col(2), ct)
    }
}

/// Local-to-model over `from..to`.
///
/// # Safety
/// The CPU has AVX2 and FMA; `LocalToModelJob::validate` (or the SoA
/// job's) passed (so `parents[i] < i` for every non-root, lengths agree,
/// range in bounds; a SoA pose has a block for every eight joints).
#[target_feature(enable = "avx2,fma")]
pub unsafe fn local_to_model<L: LocalPose + ?Sized>(
    parents: &[u16],
    locals: &L,
    root: &Affine3A,
    from: usize,
    to: usize,
    models: &mut [Affine3A],
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe { local_to_model_body::<false, L>(parents, locals, root, from, to, models) }
}

/// # Safety
/// As [`local_to_model`]; the caller is compiled with the target features
/// of its tier.
#[inline(always)]
pub(crate) unsafe fn local_to_model_body<const SPLIT_T: bool, L: LocalPose + ?Sized>(
    parents: &[u16],
    locals: &L,
    root: &Affine3A,
    from: usize,
    to: usize,
    models: &mut [Affine3A],
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let load = |m: *const Affine3A| {
            let p = m as *const f32;
            (
                _mm_loadu_ps(p),
                _mm_loadu_ps(p.add(4)),
                _mm_loadu_ps(p.add(8)),
                _mm_loadu_ps(p.add(12)),
            )
        };
        let root = load(root);
        let mut prev = root;
        // The local matrices are built two blocks of eight ahead of
        // their use, in a ring of three: read back soon after, their
        // 32-byte stores would hold up the 4-byte broadcast loads
        // (store-to-load forwarding does not serve those; they wait for
        // the stores to retire), and those start every joint. One block
        // ahead still waited; two measured ~15% faster on trees.
        const RING: usize = 3;
        let mut blocks = [const { Locals([[0.0; 8]; 9]) }; RING];
        let mut base = from;
        let mut cur = 0;
        for (k, block) in blocks.iter_mut().enumerate().take(RING - 1) {
            if base + 8 * k < to {
                locals.fill(base + 8 * k, to, block);
            }
        }
        while base < to {
            let count = (to - base).min(8);
            let ahead = base + 8 * (RING - 1);
            if ahead < to {
                locals.fill(ahead, to, &mut blocks[(cur + RING - 1) % RING]);
            }
            let block = &blocks[cur];
            for v in 0..count {
                let i = base + v;
                let p = *parents.get_unchecked(i);
                let parent = if p == NO_PARENT {
                    root
                } else if p as usize + 1 == i && i > from {
                    prev
                } else {
                    load(models.as_ptr().add(p as usize))
                };
                let t = locals.translation(i);
                let (c0, c1, c2, ct) = joint_model::<SPLIT_T>(parent, block, v, t);
                let o = models.as_mut_ptr().add(i) as *mut f32;
                _mm_storeu_ps(o, c0);
                _mm_storeu_ps(o.add(4), c1);
                _mm_storeu_ps(o.add(8), c2);
                _mm_storeu_ps(o.add(12), ct);
                prev = (c0, c1, c2, ct);
            }
            base += count;
            cur = (cur + 1) % RING;
        }
    }
}
