//! Helpers the AVX2 kernels share: loads and stores of `Vec3` runs in
//! SoA form, 4x4 transposes, cross products, normalisation.
//!
//! # Safety
//! See [the tier contract](super).

use std::arch::x86_64::*;

use crate::anim::simd::lanes::Vec3x8;
use glam::{Affine3A, Vec3};

/// Columns `[c0 | c1]` and `[c2 | t]` of an affine matrix. `Affine3A` is
/// four `__m128` (every lane initialised), so two unaligned 256-bit
/// loads read it whole; the w lanes hold whatever glam left there and
/// are never let into an x, y or z result.
///
/// # Safety
/// The [tier contract](super); `m` is valid for reading the 16 floats
/// of an `Affine3A` (64 bytes; no alignment needed).
#[inline(always)]
pub(crate) unsafe fn load_affine(m: *const Affine3A) -> (__m256, __m256) {
    let p = m as *const f32;
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe { (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) }
}

/// `[a x4 | b x4]`.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn splat2(a: f32, b: f32) -> __m256 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe { _mm256_set_m128(_mm_set1_ps(b), _mm_set1_ps(a)) }
}

/// Lane-wise `cross(a, b)` in both 128-bit halves.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn cross256(a: __m256, b: __m256) -> __m256 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        // cross = (a * b.yzx - a.yzx * b).yzx
        let a_yzx = _mm256_permute_ps(a, 0b11_00_10_01);
        let b_yzx = _mm256_permute_ps(b, 0b11_00_10_01);
        let c = _mm256_fmsub_ps(a, b_yzx, _mm256_mul_ps(a_yzx, b));
        _mm256_permute_ps(c, 0b11_00_10_01)
    }
}

/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn cross128(a: __m128, b: __m128) -> __m128 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let a_yzx = _mm_permute_ps(a, 0b11_00_10_01);
        let b_yzx = _mm_permute_ps(b, 0b11_00_10_01);
        let c = _mm_fmsub_ps(a, b_yzx, _mm_mul_ps(a_yzx, b));
        _mm_permute_ps(c, 0b11_00_10_01)
    }
}

/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn add_halves(v: __m256) -> __m128 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe { _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)) }
}

/// `v / |v|` on xyz with w cleared; zero stays zero. One Newton step on
/// the hardware reciprocal square root: ~1e-7 relative.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn normalize3(v: __m128) -> __m128 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let v = _mm_and_ps(v, _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)));
        let d = _mm_mul_ps(v, v);
        let d = _mm_add_ps(d, _mm_permute_ps(d, 0b10_11_00_01));
        let d = _mm_add_ps(d, _mm_permute_ps(d, 0b01_00_11_10));
        let d = _mm_max_ps(d, _mm_set1_ps(1e-30));
        let y = _mm_rsqrt_ps(d);
        // y * (1.5 - 0.5 d y^2)
        let h = _mm_mul_ps(_mm_mul_ps(d, _mm_set1_ps(0.5)), _mm_mul_ps(y, y));
        let y = _mm_mul_ps(y, _mm_sub_ps(_mm_set1_ps(1.5), h));
        // A zero input gave d = 1e-30: v * y is still zero.
        _mm_mul_ps(v, y)
    }
}

/// Stores x, y, z into `v[i]`; the full 16-byte store is used when it
/// only spills into `v[i+1].x`, which the caller writes next.
///
/// # Safety
/// The [tier contract](super); `i < v.len()`.
#[inline(always)]
pub(crate) unsafe fn store3(v: &mut [Vec3], i: usize, x: __m128) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let p = v.as_mut_ptr().add(i) as *mut f32;
        if i + 1 < v.len() {
            _mm_storeu_ps(p, x);
        } else {
            let mut a = [0.0f32; 4];
            _mm_storeu_ps(a.as_mut_ptr(), x);
            *p = a[0];
            *p.add(1) = a[1];
            *p.add(2) = a[2];
        }
    }
}

/// `[a_v | a_{v+4}]` for v = 0..4, each a vec4 (x, y, z, _): returns x, y,
/// z over the eight.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn soa3_from(
    r0: __m256,
    r1: __m256,
    r2: __m256,
    r3: __m256,
) -> (__m256, __m256, __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let [x, y, z, _] = soa4(r0, r1, r2, r3);
        (x, y, z)
    }
}

/// `[a_v | a_{v+4}]` for v = 0..4, each a vec4: returns x, y, z, w over
/// the eight (a 4x4 transpose in both halves at once).
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn soa4(r0: __m256, r1: __m256, r2: __m256, r3: __m256) -> [__m256; 4] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let lo01 = _mm256_unpacklo_ps(r0, r1); // x0 x1 y0 y1
        let lo23 = _mm256_unpacklo_ps(r2, r3); // x2 x3 y2 y3
        let hi01 = _mm256_unpackhi_ps(r0, r1); // z0 z1 w0 w1
        let hi23 = _mm256_unpackhi_ps(r2, r3);
        [
            _mm256_shuffle_ps(lo01, lo23, 0b01_00_01_00),
            _mm256_shuffle_ps(lo01, lo23, 0b11_10_11_10),
            _mm256_shuffle_ps(hi01, hi23, 0b01_00_01_00),
            _mm256_shuffle_ps(hi01, hi23, 0b11_10_11_10),
        ]
    }
}

/// x, y, z of `v[base..base + 8]` (needs `base + 8 <= v.len()`): three
/// full loads of the 24 floats, then vertices 0-3 in the low halves and
/// 4-7 in the high ones (two blends and one 128-bit lane swap), then
/// the four-vertex transpose in both halves at once (blends and
/// shuffles that stay in their lane). No `vpermps`: on Zen 3 it costs
/// two FMA-pipe slots and about 8 cycles of latency, where the lane
/// swap costs one slot and 3 cycles and the rest one cycle each.
///
/// # Safety
/// The [tier contract](super); `base + 8 <= v.len()`.
#[inline(always)]
pub(crate) unsafe fn load_vec3x8(v: &[Vec3], base: usize) -> (__m256, __m256, __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let p = v.as_ptr().add(base) as *const f32;
        let m0 = _mm256_loadu_ps(p); // x0 y0 z0 x1 | y1 z1 x2 y2
        let m1 = _mm256_loadu_ps(p.add(8)); // z2 x3 y3 z3 | x4 y4 z4 x5
        let m2 = _mm256_loadu_ps(p.add(16)); // y5 z5 x6 y6 | z6 x7 y7 z7
        let a = _mm256_blend_ps(m0, m1, 0xF0); // x0 y0 z0 x1 | x4 y4 z4 x5
        let b = _mm256_permute2f128_ps(m0, m2, 0x21); // y1 z1 x2 y2 | y5 z5 x6 y6
        let c = _mm256_blend_ps(m1, m2, 0xF0); // z2 x3 y3 z3 | z6 x7 y7 z7
                                               // Per half: x = a0 a3 (b|c)2 (b|c)1 with (b|c) = y1 x3 x2 y2.
        let x = _mm256_shuffle_ps(a, _mm256_blend_ps(b, c, 0x22), 0b01_10_11_00);
        // (a|b) = y1 y0 z0 x1, (b|c) = y1 z1 y3 y2: y = 1 0 3 2.
        let y = _mm256_shuffle_ps(
            _mm256_blend_ps(a, b, 0x11),
            _mm256_blend_ps(b, c, 0x44),
            0b10_11_00_01,
        );
        // (a|b) = x0 z1 z0 x1: z = (a|b)2 (a|b)1 c0 c3.
        let z = _mm256_shuffle_ps(_mm256_blend_ps(a, b, 0x22), c, 0b11_00_01_10);
        (x, y, z)
    }
}

/// Writes x, y, z into `v[base..base + 8]` (needs `base + 8 <=
/// v.len()`): the inverse of [`load_vec3x8`] (in-lane unpacks and
/// shuffles build the interleaved rows of vertices 0-3 and 4-7 in the
/// two halves, then two lane swaps and a blend put them in order).
///
/// # Safety
/// The [tier contract](super); `base + 8 <= v.len()`.
#[inline(always)]
pub(crate) unsafe fn store_vec3x8(v: &mut [Vec3], base: usize, x: __m256, y: __m256, z: __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let [a, b, c] = interleave_vec3x8(x, y, z);
        let p = v.as_mut_ptr().add(base) as *mut f32;
        _mm256_storeu_ps(p, _mm256_permute2f128_ps(a, b, 0x20));
        _mm256_storeu_ps(p.add(8), _mm256_blend_ps(c, a, 0xF0));
        _mm256_storeu_ps(p.add(16), _mm256_permute2f128_ps(b, c, 0x31));
    }
}

/// The three rows [`store_vec3x8`] writes, before its lane permutes:
/// vertices 0 to 3 interleaved in the low halves (`x0 y0 z0 x1`, `y1 z1
/// x2 y2`, `z2 x3 y3 z3`), 4 to 7 in the high ones.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn interleave_vec3x8(x: __m256, y: __m256, z: __m256) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let lxy = _mm256_unpacklo_ps(x, y); // x0 y0 x1 y1
        let lzx = _mm256_unpacklo_ps(z, x); // z0 x0 z1 x1
        let lyz = _mm256_unpacklo_ps(y, z); // y0 z0 y1 z1
        let hxy = _mm256_unpackhi_ps(x, y); // x2 y2 x3 y3
        let hzx = _mm256_unpackhi_ps(z, x); // z2 x2 z3 x3
        let hyz = _mm256_unpackhi_ps(y, z); // y2 z2 y3 z3
        [
            _mm256_shuffle_ps(lxy, lzx, 0b11_00_01_00),
            _mm256_shuffle_ps(lyz, hxy, 0b01_00_11_10),
            _mm256_shuffle_ps(hzx, hyz, 0b11_10_11_00),
        ]
    }
}

/// [`store_vec3x8`] to eight `Vec3` at `out`, which must lie on 16
/// bytes, as six aligned 16-byte stores and no lane permutes: each
/// 128-bit half of the interleaved rows goes straight to its place. In
/// [`lbs_pipelined`](fn@super::lbs_pipelined), on an Emerald Rapids, 3.50 against 3.67 ns/vertex
/// with the outputs 16 bytes past a cache line (as a large `Vec` from
/// glibc; every other 32-byte store splits a line), and 3.54 against
/// 3.63 with them 32 bytes past one (none split); alternated processes,
/// medians of 8 to 10. The stores are volatile: plain ones, LLVM merges
/// back into 32-byte stores and the lane permutes they need (and
/// unaligned volatile ones, of arrays, it compiled through the stack).
///
/// # Safety
/// The [tier contract](super); `out` is valid for writing eight `Vec3`
/// (96 bytes) and lies on a 16-byte boundary (the stores are aligned
/// 16-byte stores).
#[inline(always)]
pub(crate) unsafe fn store_vec3x8_halves(out: *mut Vec3, x: __m256, y: __m256, z: __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let [a, b, c] = interleave_vec3x8(x, y, z);
        let p = out as *mut __m128;
        // Measured (afd56c5): these six volatile 16-byte stores, 3.67 to 3.50
        // ns/vertex in the pipelined LBS on an Emerald Rapids; on a Zen 3
        // (25d93df) 3.81 to 3.73 there and 6.68 to 4.93 in the DQS kernel.
        p.write_volatile(_mm256_castps256_ps128(a));
        p.add(1).write_volatile(_mm256_castps256_ps128(b));
        p.add(2).write_volatile(_mm256_castps256_ps128(c));
        p.add(3).write_volatile(_mm256_extractf128_ps(a, 1));
        p.add(4).write_volatile(_mm256_extractf128_ps(b, 1));
        p.add(5).write_volatile(_mm256_extractf128_ps(c, 1));
    }
}

/// Eight vertices' x, y, z to the eight `Vec3` at `out`: as
/// [`store_vec3x8_halves`] when `halves` (`out` then lies on 16 bytes),
/// else as [`store_vec3x8`].
///
/// # Safety
/// The [tier contract](super); `out` is valid for writing eight `Vec3`
/// (96 bytes), and with `halves` it lies on a 16-byte boundary.
#[inline(always)]
pub(crate) unsafe fn store_vec3x8_either(halves: bool, out: *mut Vec3, [x, y, z]: [__m256; 3]) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        if halves {
            store_vec3x8_halves(out, x, y, z);
        } else {
            store_vec3x8(std::slice::from_raw_parts_mut(out, 8), 0, x, y, z);
        }
    }
}

/// `v / |v|` of eight vectors (SoA) written to `out[base..base + 8]`:
/// [`normalised8`], then [`store_vec3x8`]. The normals' last step in
/// the LBS and DQS kernels.
///
/// # Safety
/// The [tier contract](super); `base + 8 <= out.len()`.
#[inline(always)]
pub(crate) unsafe fn store_normalised8(out: &mut [Vec3], base: usize, v: [__m256; 3]) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let [x, y, z] = normalised8(v);
        store_vec3x8(out, base, x, y, z);
    }
}

/// `v / |v|` of eight vectors (SoA): one Newton step on the reciprocal
/// square root (~1e-7 relative), zero staying zero.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn normalised8([x, y, z]: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        // |v|^2 + 1e-30: a zero vector's reciprocal root stays finite
        // (1e15), so it stays zero, with no max of its own.
        let tiny = _mm256_set1_ps(1e-30);
        let d = _mm256_fmadd_ps(x, x, _mm256_fmadd_ps(y, y, _mm256_fmadd_ps(z, z, tiny)));
        let r = _mm256_rsqrt_ps(d);
        // Newton: r (3 - d r r) / 2, four operations.
        let b = _mm256_fnmadd_ps(_mm256_mul_ps(d, r), r, _mm256_set1_ps(3.0));
        let r = _mm256_mul_ps(_mm256_mul_ps(r, _mm256_set1_ps(0.5)), b);
        [
            _mm256_mul_ps(x, r),
            _mm256_mul_ps(y, r),
            _mm256_mul_ps(z, r),
        ]
    }
}

/// Four floats at each of `p(0..8)` (a quaternion or any 16-byte
/// group) as x, y, z, w rows over the eight: two 16-byte loads per
/// register (`v` and `v + 4`), then a 4x4 transpose in each lane.
///
/// # Safety
/// The [tier contract](super); each `p(v)`, `v` in `0..8`, is valid for
/// reading four floats.
#[inline(always)]
pub(crate) unsafe fn soa4_from(p: impl Fn(usize) -> *const f32) -> [__m256; 4] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let l = |v: usize| _mm256_loadu2_m128(p(v + 4), p(v));
        soa4(l(0), l(1), l(2), l(3))
    }
}

/// `cofactor(M) n` for eight 3x3 matrices with columns `c` (SoA):
/// `nx (c1 x c2) + ny (c2 x c0) + nz (c0 x c1) = c1 x (nx c2 - nz c0) +
/// ny (c2 x c0)`, 21 operations instead of 27 (as the AVX-512 tier).
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn cofactor_times8(
    [c0, c1, c2]: [[__m256; 3]; 3],
    [nx, ny, nz]: [__m256; 3],
) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let (u, q) = cofactor_without_c1(c0, c2, [nx, nz]);
        cofactor_with_c1(c1, u, q, ny)
    }
}

/// [`cofactor_times8`]'s terms that do not need `c1`: `u = nx c2 - nz
/// c0` and `q = c2 x c0` (so that a caller can form `c1` last).
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn cofactor_without_c1(
    c0: [__m256; 3],
    c2: [__m256; 3],
    [nx, nz]: [__m256; 2],
) -> ([__m256; 3], [__m256; 3]) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let u = std::array::from_fn(|i| _mm256_fmsub_ps(nx, c2[i], _mm256_mul_ps(nz, c0[i])));
        (u, cross8(c2, c0))
    }
}

/// [`cofactor_times8`]'s result from [`cofactor_without_c1`]'s terms:
/// `c1 x u + ny q`.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn cofactor_with_c1(
    c1: [__m256; 3],
    u: [__m256; 3],
    q: [__m256; 3],
    ny: __m256,
) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let bu = cross8(c1, u);
        std::array::from_fn(|i| _mm256_fmadd_ps(ny, q[i], bu[i]))
    }
}

/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn cross8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        [
            _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
            _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
            _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
        ]
    }
}

/// A block of eight prepared vertices ([`Vec3x8`]): three aligned
/// loads.
///
/// # Safety
/// The [tier contract](super) only: `b` is a reference to a block on 32
/// bytes, as the aligned loads need.
#[inline(always)]
pub(crate) unsafe fn load_x8(b: &Vec3x8) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        [
            _mm256_load_ps(b.x.as_ptr()),
            _mm256_load_ps(b.y.as_ptr()),
            _mm256_load_ps(b.z.as_ptr()),
        ]
    }
}
