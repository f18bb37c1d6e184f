//! SIMD kernels for the hot loops, chosen at run time.
//!
//! The crate builds for baseline x86-64 (SSE2); the kernels carry
//! `#[target_feature]` and are only called after [`tier`] said the CPU has
//! what they need: [`x86`] holds the AVX2 + FMA tier, [`x86::avx512`] the
//! AVX-512 (F, VL, BW, DQ) tier above it. Each has a scalar counterpart
//! that is the definition it is tested against.

/// The instruction-set tiers of the fast paths, lowest first.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tier {
    /// Portable Rust: the tested definitions.
    Scalar,
    /// AVX2 + FMA.
    Avx2,
    /// AVX-512 F, VL, BW and DQ (with AVX2 + FMA).
    Avx512,
}

/// The highest tier this CPU runs, ignoring the environment.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn cpu_tier() -> Tier {
    #[cfg(target_arch = "x86_64")]
    {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            return Tier::Scalar;
        }
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
        {
            return Tier::Avx512;
        }
        Tier::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Tier::Scalar
    }
}

/// The tier the jobs use: [`cpu_tier`], capped by the environment for
/// comparing paths. `VKSKIN_SCALAR=1` forces the scalar paths;
/// `VKSKIN_SIMD=scalar|avx2|avx512` caps the tier (a CPU without the
/// named tier still gets its own). Read once.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn tier() -> Tier {
    use std::sync::OnceLock;
    static TIER: OnceLock<Tier> = OnceLock::new();
    *TIER.get_or_init(|| {
        let cap = if std::env::var_os("VKSKIN_SCALAR").is_some() {
            Tier::Scalar
        } else {
            match std::env::var("VKSKIN_SIMD").as_deref() {
                Ok("scalar") => Tier::Scalar,
                Ok("avx2") => Tier::Avx2,
                _ => Tier::Avx512,
            }
        };
        cpu_tier().min(cap)
    })
}

/// Whether the AVX2 + FMA paths may run.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn avx2_fma() -> bool {
    tier() >= Tier::Avx2
}

/// The tiers this CPU can run, for tests that check every fast path.
#[cfg(test)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn testable_tiers() -> Vec<Tier> {
    [Tier::Avx2, Tier::Avx512]
        .into_iter()
        .filter(|&t| t <= cpu_tier())
        .collect()
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use std::arch::x86_64::*;

    /// The CPU's vendor string (CPUID leaf 0: EBX, EDX, ECX), e.g.
    /// `GenuineIntel`, `AuthenticAMD`.
    pub(crate) fn vendor() -> [u8; 12] {
        let r = __cpuid(0);
        let mut v = [0u8; 12];
        for (i, w) in [r.ebx, r.edx, r.ecx].into_iter().enumerate() {
            v[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        v
    }

    /// Whether the CPU is Intel's, for the few kernel choices measured to
    /// go one way on Intel and the other on AMD. Read once.
    pub(crate) fn intel() -> bool {
        use std::sync::OnceLock;
        static INTEL: OnceLock<bool> = OnceLock::new();
        *INTEL.get_or_init(|| &vendor() == b"GenuineIntel")
    }

    /// The size of one core's level-2 cache in bytes, from CPUID leaf 4
    /// (Intel's deterministic cache parameters); `None` where the leaf
    /// does not tell. Read once.
    pub(crate) fn l2_bytes() -> Option<usize> {
        use std::sync::OnceLock;
        static L2: OnceLock<Option<usize>> = OnceLock::new();
        *L2.get_or_init(|| {
            if __cpuid(0).eax < 4 {
                return None;
            }
            // Subleaves until a null one (type 0); a bound in case of none.
            (0..16)
                .map(|i| __cpuid_count(4, i))
                .take_while(|r| r.eax & 0x1f != 0)
                .find(|r| (r.eax >> 5) & 0x7 == 2 && r.eax & 0x1f != 2)
                .map(|r| {
                    let ways = (r.ebx >> 22) as usize + 1;
                    let partitions = ((r.ebx >> 12) & 0x3ff) as usize + 1;
                    let line = (r.ebx & 0xfff) as usize + 1;
                    let sets = r.ecx as usize + 1;
                    ways * partitions * line * sets
                })
        })
    }

    /// Whether a skinning job that touches `bytes` of streams (read and
    /// written) writes its outputs with streaming (non-temporal) stores:
    /// on Intel CPUs, when they are more than the level-2 cache holds.
    /// Skinned vertices go on to the GPU, not back to this core, and past
    /// the L2 an ordinary store first reads each line in. On the Emerald
    /// Rapids measured, a copy of one-influence streams (26 bytes read and
    /// 24 written a vertex) took 1.78 ns a vertex with ordinary stores
    /// and 1.32 with streaming ones at 100,000 vertices; at 20,000 (all
    /// in its 2 MiB L2) 0.89 against 1.16, and they crossed at about
    /// 45,000. Not measured on AMD CPUs, which keep ordinary stores.
    pub(crate) fn stream_outputs(bytes: usize) -> bool {
        intel() && l2_bytes().is_some_and(|l2| bytes > l2)
    }

    pub(crate) mod avx512;

    use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

    use crate::anim::quat::{ACOS_COEFFS, MIN_SLERP_ANGLE};
    use crate::anim::skinning::Vec3x8;
    use crate::anim::soa::PoseSink;
    use crate::anim::{Affine4x3, DualQuat, SoaTransforms8, Transform, NO_PARENT};

    /// Columns `[c0 | c1]` and `[c2 | t]` of an affine matrix. `Affine3A` is
    /// four `__m128` (every lane initialised), so two unaligned 256-bit
    /// loads read it whole; the w lanes hold whatever glam left there and
    /// are never let into an x, y or z result.
    #[inline(always)]
    unsafe fn load_affine(m: *const Affine3A) -> (__m256, __m256) {
        let p = m as *const f32;
        unsafe { (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) }
    }

    /// `[a x4 | b x4]`.
    #[inline(always)]
    unsafe fn splat2(a: f32, b: f32) -> __m256 {
        unsafe { _mm256_set_m128(_mm_set1_ps(b), _mm_set1_ps(a)) }
    }

    /// Lane-wise `cross(a, b)` in both 128-bit halves.
    #[inline(always)]
    unsafe fn cross256(a: __m256, b: __m256) -> __m256 {
        unsafe {
            // cross = (a * b.yzx - a.yzx * b).yzx
            let a_yzx = _mm256_permute_ps(a, 0b11_00_10_01);
            let b_yzx = _mm256_permute_ps(b, 0b11_00_10_01);
            let c = _mm256_fmsub_ps(a, b_yzx, _mm256_mul_ps(a_yzx, b));
            _mm256_permute_ps(c, 0b11_00_10_01)
        }
    }

    #[inline(always)]
    unsafe fn cross128(a: __m128, b: __m128) -> __m128 {
        unsafe {
            let a_yzx = _mm_permute_ps(a, 0b11_00_10_01);
            let b_yzx = _mm_permute_ps(b, 0b11_00_10_01);
            let c = _mm_fmsub_ps(a, b_yzx, _mm_mul_ps(a_yzx, b));
            _mm_permute_ps(c, 0b11_00_10_01)
        }
    }

    #[inline(always)]
    unsafe fn add_halves(v: __m256) -> __m128 {
        unsafe { _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)) }
    }

    /// `v / |v|` on xyz with w cleared; zero stays zero. One Newton step on
    /// the hardware reciprocal square root: ~1e-7 relative.
    #[inline(always)]
    unsafe fn normalize3(v: __m128) -> __m128 {
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
    #[inline(always)]
    unsafe fn store3(v: &mut [Vec3], i: usize, x: __m128) {
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
    #[inline(always)]
    unsafe fn soa3_from(
        r0: __m256,
        r1: __m256,
        r2: __m256,
        r3: __m256,
    ) -> (__m256, __m256, __m256) {
        unsafe {
            let [x, y, z, _] = soa4(r0, r1, r2, r3);
            (x, y, z)
        }
    }

    /// `[a_v | a_{v+4}]` for v = 0..4, each a vec4: returns x, y, z, w over
    /// the eight (a 4x4 transpose in both halves at once).
    #[inline(always)]
    unsafe fn soa4(r0: __m256, r1: __m256, r2: __m256, r3: __m256) -> [__m256; 4] {
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
    #[inline(always)]
    unsafe fn load_vec3x8(v: &[Vec3], base: usize) -> (__m256, __m256, __m256) {
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
    #[inline(always)]
    unsafe fn store_vec3x8(v: &mut [Vec3], base: usize, x: __m256, y: __m256, z: __m256) {
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
    #[inline(always)]
    unsafe fn interleave_vec3x8(x: __m256, y: __m256, z: __m256) -> [__m256; 3] {
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
    /// [`lbs_pipelined`], on an Emerald Rapids, 3.50 against 3.67 ns/vertex
    /// with the outputs 16 bytes past a cache line (as a large `Vec` from
    /// glibc; every other 32-byte store splits a line), and 3.54 against
    /// 3.63 with them 32 bytes past one (none split); alternated processes,
    /// medians of 8 to 10. The stores are volatile: plain ones, LLVM merges
    /// back into 32-byte stores and the lane permutes they need (and
    /// unaligned volatile ones, of arrays, it compiled through the stack).
    #[inline(always)]
    unsafe fn store_vec3x8_halves(out: *mut Vec3, x: __m256, y: __m256, z: __m256) {
        unsafe {
            let [a, b, c] = interleave_vec3x8(x, y, z);
            let p = out as *mut __m128;
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
    #[inline(always)]
    unsafe fn store_vec3x8_either(halves: bool, out: *mut Vec3, [x, y, z]: [__m256; 3]) {
        unsafe {
            if halves {
                store_vec3x8_halves(out, x, y, z);
            } else {
                store_vec3x8(std::slice::from_raw_parts_mut(out, 8), 0, x, y, z);
            }
        }
    }

    /// Linear blend skinning of `K` influences per vertex: each vertex's
    /// matrix is blended in AVX registers (with four influences, the
    /// indices and the weights come in one load each), then eight at a time
    /// are turned into structure-of-arrays form in registers (vertex v
    /// paired with v + 4 by lane permutes, then unpacks) for the position,
    /// the cofactor normal and its normalisation, which then cost a few
    /// lanes each. The last vertices (fewer than eight) go one at a time.
    /// Two to four influences with normals take [`lbs_pipelined`] (the same
    /// steps, blocks overlapped), positions without normals
    /// [`lbs_positions`], and one weightless influence with normals
    /// [`lbs1_normals`].
    ///
    /// With `K == 1` and no weights (validated: each weight 1) the
    /// matrices are used as they are, no weight read or multiplied.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the streams passed
    /// `skinning::validate_streams` (every joint index inside `skin`,
    /// lengths consistent, `normals` empty or as long as `positions`).
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn lbs<const K: usize>(
        skin: &[Affine3A],
        joints: &[u16],
        weights: &[f32],
        positions: &[Vec3],
        normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
    ) {
        let n = positions.len();
        let with_normals = !normals.is_empty();
        // Validated: no weights only with one influence, each weight 1.
        let weighted = !weights.is_empty();
        let sp = skin.as_ptr();
        let blend = |v: usize| unsafe {
            if weighted {
                blend_affine::<K, true>(sp, joints, weights, v)
            } else {
                blend_affine::<K, false>(sp, joints, weights, v)
            }
        };
        let blocks = n / 8;
        for b in 0..blocks {
            let base = b * 8;
            unsafe {
                let ([c0x, c0y, c0z], [c1x, c1y, c1z], [c2x, c2y, c2z], [tx, ty, tz]) = if K == 1 {
                    // One influence: the matrices come straight from the
                    // palette into SoA form, then take their weights.
                    let col = |chunk: usize| {
                        let p = |v: usize| {
                            let j = *joints.get_unchecked(base + v) as usize;
                            (sp.add(j) as *const f32).add(chunk * 4)
                        };
                        let l = |v: usize| _mm256_loadu2_m128(p(v + 4), p(v));
                        soa3_from(l(0), l(1), l(2), l(3))
                    };
                    if weighted {
                        let w = _mm256_loadu_ps(weights.as_ptr().add(base));
                        let sc = |(x, y, z): (__m256, __m256, __m256)| {
                            [
                                _mm256_mul_ps(x, w),
                                _mm256_mul_ps(y, w),
                                _mm256_mul_ps(z, w),
                            ]
                        };
                        (sc(col(0)), sc(col(1)), sc(col(2)), sc(col(3)))
                    } else {
                        let a = |(x, y, z): (__m256, __m256, __m256)| [x, y, z];
                        (a(col(0)), a(col(1)), a(col(2)), a(col(3)))
                    }
                } else {
                    // The eight vertices blended, vertex v and v + 4 paired
                    // per column (in registers).
                    let v: [(__m256, __m256); 8] = std::array::from_fn(|i| blend(base + i));
                    let m = PairedBlock(std::array::from_fn(|j| pair_vertices(v[j], v[j + 4])));
                    (
                        paired_column(&m, 0),
                        paired_column(&m, 1),
                        paired_column(&m, 2),
                        paired_column(&m, 3),
                    )
                };
                let (px, py, pz) = load_vec3x8(positions, base);
                let ox = _mm256_fmadd_ps(
                    c0x,
                    px,
                    _mm256_fmadd_ps(c1x, py, _mm256_fmadd_ps(c2x, pz, tx)),
                );
                let oy = _mm256_fmadd_ps(
                    c0y,
                    px,
                    _mm256_fmadd_ps(c1y, py, _mm256_fmadd_ps(c2y, pz, ty)),
                );
                let oz = _mm256_fmadd_ps(
                    c0z,
                    px,
                    _mm256_fmadd_ps(c1z, py, _mm256_fmadd_ps(c2z, pz, tz)),
                );
                store_vec3x8(out_positions, base, ox, oy, oz);
                if with_normals {
                    let (nx, ny, nz) = load_vec3x8(normals, base);
                    let [mx, my, mz] = cofactor_times8(
                        [[c0x, c0y, c0z], [c1x, c1y, c1z], [c2x, c2y, c2z]],
                        [nx, ny, nz],
                    );
                    store_normalised8(out_normals, base, [mx, my, mz]);
                }
            }
        }
        for v in blocks * 8..n {
            unsafe {
                let (acc0, acc1) = blend(v);
                let pp = positions.get_unchecked(v);
                let r = _mm256_fmadd_ps(
                    acc0,
                    splat2(pp.x, pp.y),
                    _mm256_mul_ps(acc1, splat2(pp.z, 1.0)),
                );
                store3(out_positions, v, add_halves(r));
                if with_normals {
                    let nn = normals.get_unchecked(v);
                    // Cofactor columns: c1 x c2, c2 x c0, c0 x c1.
                    let c12 = _mm256_permute2f128_ps(acc0, acc1, 0x21);
                    let c20 = _mm256_permute2f128_ps(acc1, acc0, 0x20);
                    let xy = cross256(c12, c20);
                    let z = cross128(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
                    let t = add_halves(_mm256_mul_ps(xy, splat2(nn.x, nn.y)));
                    let t = _mm_fmadd_ps(z, _mm_set1_ps(nn.z), t);
                    store3(out_normals, v, normalize3(t));
                }
            }
        }
    }

    /// One block's `cofactor(M) n` (x, y, z over the eight), before
    /// normalisation.
    #[repr(C, align(32))]
    #[derive(Clone, Copy)]
    struct CofactorBlock([__m256; 3]);

    /// One block of eight vertices' blended matrices with vertex v and
    /// v + 4 paired: `[p][c]` is column `c` (c0, c1, c2, t) of vertex `p`
    /// in the low half and of vertex `p + 4` in the high half.
    #[repr(C, align(32))]
    #[derive(Clone, Copy)]
    struct PairedBlock([[__m256; 4]; 4]);

    /// Two vertices' blended matrices as [`blend_affine`] leaves them
    /// (`[c0 | c1]`, `[c2 | t]`), paired column by column by 128-bit lane
    /// permutes: a [`PairedBlock`] row, vertex `a` in the low halves.
    #[inline(always)]
    unsafe fn pair_vertices((a, c): (__m256, __m256), (b, d): (__m256, __m256)) -> [__m256; 4] {
        unsafe {
            [
                _mm256_permute2f128_ps(a, b, 0x20),
                _mm256_permute2f128_ps(a, b, 0x31),
                _mm256_permute2f128_ps(c, d, 0x20),
                _mm256_permute2f128_ps(c, d, 0x31),
            ]
        }
    }

    /// Column `c` of a [`PairedBlock`]'s eight matrices in SoA form (the
    /// four pairs transposed in both halves at once).
    #[inline(always)]
    unsafe fn paired_column(m: &PairedBlock, c: usize) -> [__m256; 3] {
        unsafe {
            let m = &m.0;
            let (x, y, z) = soa3_from(m[0][c], m[1][c], m[2][c], m[3][c]);
            [x, y, z]
        }
    }

    /// A palette entry as [`lbs_pipelined`] reads it: the three matrix
    /// columns with the translation's components in their w lanes,
    /// `[c0 t.x | c1 t.y]`, then `[c2 t.z]`, then 16 unused bytes, on a
    /// cache line of its own. An `Affine3A` holds the same twelve numbers
    /// in 16 lanes (`[c0 _ | c1 _]`, `[c2 _ | t _]`); packed, a vertex's
    /// blended matrix is one 256-bit and one 128-bit register, and the
    /// transpose to SoA form uses every lane it moves (12 registers in 24
    /// shuffles instead of 28, 3 lane permutes per pair of vertices instead
    /// of 4, 12 registers through the pipeline's buffer instead of 16).
    #[repr(C, align(64))]
    #[derive(Clone, Copy)]
    pub(crate) struct PackedAffine([f32; 16]);

    impl PackedAffine {
        fn new(m: &Affine3A) -> Self {
            let [c0, c1, c2, t] = [
                m.matrix3.x_axis,
                m.matrix3.y_axis,
                m.matrix3.z_axis,
                m.translation,
            ];
            Self([
                c0.x, c0.y, c0.z, t.x, c1.x, c1.y, c1.z, t.y, c2.x, c2.y, c2.z, t.z, 0.0, 0.0, 0.0,
                0.0,
            ])
        }
    }

    /// Most palette entries [`packed_palette`] writes to the caller's stack
    /// (8 KiB); a longer palette goes to the heap.
    pub(crate) const PACKED_PALETTE_MAX: usize = 128;

    /// `skin` as [`PackedAffine`] entries, in `stack` when it fits, else in
    /// `heap`.
    pub(crate) fn packed_palette<'a>(
        skin: &[Affine3A],
        stack: &'a mut [std::mem::MaybeUninit<PackedAffine>; PACKED_PALETTE_MAX],
        heap: &'a mut Vec<PackedAffine>,
    ) -> &'a [PackedAffine] {
        if skin.len() <= PACKED_PALETTE_MAX {
            for (d, m) in stack.iter_mut().zip(skin) {
                d.write(PackedAffine::new(m));
            }
            // SAFETY: the first skin.len() entries were just written.
            unsafe { std::slice::from_raw_parts(stack.as_ptr() as *const PackedAffine, skin.len()) }
        } else {
            heap.clear();
            heap.extend(skin.iter().map(PackedAffine::new));
            heap
        }
    }

    /// `p`, computed into a register of its own: an empty asm hides it from
    /// LLVM, which would otherwise fold the index it came from into every
    /// memory operand that reads through it (`[base + index]`). Intel
    /// cores split an FMA or other ALU operation with an indexed memory
    /// operand into two micro-operations (one with a plain `[register +
    /// offset]`), so a few address computations save many of those.
    #[inline(always)]
    fn in_register(p: *const f32) -> *const f32 {
        let mut a = p as usize;
        // SAFETY: the asm is empty: it reads and writes nothing, and `a`
        // comes back as it went in.
        unsafe {
            std::arch::asm!(
                "/* {0} */",
                inout(reg) a,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
        a as *const f32
    }

    /// Vertex `v`'s blended matrix from a [`packed_palette`]: `[c0 t.x |
    /// c1 t.y]` and `[c2 t.z]` (as [`blend_affine`], with the second
    /// register's FMAs 128 bits wide). With `TIMES8`, `joints` holds the
    /// indices times 8.
    #[inline(always)]
    unsafe fn blend_packed<const K: usize, const TIMES8: bool>(
        sp: *const PackedAffine,
        joints: &[u16],
        weights: &[f32],
        v: usize,
    ) -> (__m256, __m128) {
        unsafe {
            let js = joints.as_ptr().add(v * K);
            let ws = weights.as_ptr().add(v * K);
            // Each index by a load of its own and each weight by a
            // broadcast from memory. Four indices from one 8-byte load took
            // shifts, masks and reloads of the index pointer (in
            // lbs_pipelined's trip of eight vertices, 127 integer
            // instructions against 82 with a load and a shift each): on an
            // Emerald Rapids, with the barrier at the end of that trip,
            // 3.80 against 3.65 ns/vertex (alternated processes, medians of
            // 8 to 10, as every figure here).
            let term = |k: usize| {
                let j = *js.add(k) as usize;
                // With TIMES8 the index is 8 times the joint's, and its
                // entry (64 bytes) 8 times that many bytes on: a `lea`, no
                // shift.
                let e = if TIMES8 {
                    (sp as *const u8).add(8 * j) as *const f32
                } else {
                    sp.add(j) as *const f32
                };
                // The entry's address in a register of its own: an empty
                // asm hides it from LLVM, which would otherwise fold the
                // index into both memory operands (`[base + index]`), and
                // an FMA with an indexed memory operand costs Intel cores
                // two micro-operations where a plain one costs one. On the
                // Emerald Rapids, 3.39 against 3.50 ns/vertex; with the
                // indices times 8 then 3.28 (times 8 and folded, as LLVM
                // left it: 24 fewer instructions a trip and slower, 3.81
                // against 3.65).
                let e = in_register(e);
                let w = _mm256_broadcast_ss(&*ws.add(k));
                (_mm256_load_ps(e), _mm_load_ps(e.add(8)), w)
            };
            let (a, b, w) = term(0);
            let mut acc0 = _mm256_mul_ps(a, w);
            let mut acc1 = _mm_mul_ps(b, _mm256_castps256_ps128(w));
            for k in 1..K {
                let (a, b, w) = term(k);
                acc0 = _mm256_fmadd_ps(a, w, acc0);
                acc1 = _mm_fmadd_ps(b, _mm256_castps256_ps128(w), acc1);
            }
            (acc0, acc1)
        }
    }

    /// One block of eight vertices' packed blended matrices with vertex v
    /// and v + 4 paired: `[p][c]` is packed column `c` (`c0 t.x`, `c1 t.y`,
    /// `c2 t.z`) of vertex `p` in the low half and of vertex `p + 4` in the
    /// high half.
    #[repr(C, align(32))]
    #[derive(Clone, Copy)]
    struct PackedPairs([[__m256; 3]; 4]);

    /// `K` influences with weights, positions and normals, the vertices in
    /// blocks of eight through a three-stage software pipeline: one trip
    /// transposes block b + 1's blended matrices (positions out, cofactor
    /// products kept), blends block b + 2's matrices (spread between the
    /// transpose's steps) and then normalises block b's cofactor products
    /// into its normals. Each stage reads only what an earlier trip
    /// wrote (through two small ping-pong buffers on the stack), so the
    /// load-heavy blends of one block can run beside the shuffle-heavy
    /// transposes and the normalisation of the others. In [`lbs`]'s
    /// one-block-at-a-time loop they do not: measured apart on a Zen 3,
    /// the blends cost 0.47 of that loop and the rest 0.53.
    ///
    /// The palette is read packed ([`PackedAffine`], [`packed_palette`]).
    /// With `BLOCKS` the positions and normals of whole blocks come from
    /// `position_blocks` and `normal_blocks` (the
    /// [`BindVertices`](crate::anim::BindVertices) form, three loads each)
    /// instead of being rearranged from `positions` and `normals`. They are
    /// separate slice arguments, not a pair: as a pair LLVM loses their
    /// `noalias`, keeps their loads before the buffers' stores and spills
    /// nine registers more a trip (measured in the compiled loop). With
    /// `BLOCKS` the blends also read the joint indices times 8
    /// (`joints_times8`, from [`CheckedJoints`](crate::anim::CheckedJoints)).
    ///
    /// The first two blocks' blends and the last two blocks' transposes
    /// and normalisations run outside the loop. The last vertices (fewer
    /// than eight) go through [`lbs`] with `skin`. When both outputs lie on
    /// 16 bytes (as a large `Vec` from glibc does), the blocks' outputs are
    /// written as 16-byte halves ([`store_vec3x8_halves`]), else as
    /// [`store_vec3x8`] does.
    ///
    /// # Safety
    /// As [`lbs`]; `packed` is `skin` packed, `weights` is not empty,
    /// `normals` is as long as `positions`, and with `BLOCKS`,
    /// `position_blocks` and `normal_blocks` hold `positions` and `normals`
    /// in blocks of eight and `joints_times8` each of `joints` times 8
    /// (the blends read those; without `BLOCKS` it is not read).
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn lbs_pipelined<const K: usize, const BLOCKS: bool>(
        skin: &[Affine3A],
        packed: &[PackedAffine],
        joints: &[u16],
        joints_times8: &[u16],
        weights: &[f32],
        positions: &[Vec3],
        normals: &[Vec3],
        position_blocks: &[Vec3x8],
        normal_blocks: &[Vec3x8],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
    ) {
        let on_16 =
            (out_positions.as_ptr() as usize | out_normals.as_ptr() as usize).is_multiple_of(16);
        // The same call with `HALVES` either way.
        macro_rules! with_halves {
            ($h:literal) => {
                lbs_pipelined_with::<K, BLOCKS, $h>(
                    skin,
                    packed,
                    joints,
                    joints_times8,
                    weights,
                    positions,
                    normals,
                    position_blocks,
                    normal_blocks,
                    out_positions,
                    out_normals,
                )
            };
        }
        unsafe {
            if on_16 {
                with_halves!(true);
            } else {
                with_halves!(false);
            }
        }
    }

    /// [`lbs_pipelined`] with its outputs written by
    /// [`store_vec3x8_halves`] (`HALVES`: both on 16 bytes) or
    /// [`store_vec3x8`].
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn lbs_pipelined_with<const K: usize, const BLOCKS: bool, const HALVES: bool>(
        skin: &[Affine3A],
        packed: &[PackedAffine],
        joints: &[u16],
        joints_times8: &[u16],
        weights: &[f32],
        positions: &[Vec3],
        normals: &[Vec3],
        position_blocks: &[Vec3x8],
        normal_blocks: &[Vec3x8],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
    ) {
        let n = positions.len();
        let nb = n / 8;
        let sp = packed.as_ptr();
        if nb > 0 {
            let zero = _mm256_setzero_ps();
            let mut blended = [PackedPairs([[zero; 3]; 4]); 2];
            let mut cofactors = [CofactorBlock([zero; 3]); 2];
            let (bl, cf) = (blended.as_mut_ptr(), cofactors.as_mut_ptr());
            // Where the blocks' positions and normals are read: a block of
            // eight is as long as eight Vec3, so block k is at 8k either way.
            let (pp, np) = if BLOCKS {
                (
                    position_blocks.as_ptr() as *const Vec3,
                    normal_blocks.as_ptr() as *const Vec3,
                )
            } else {
                (positions.as_ptr(), normals.as_ptr())
            };
            let (opp, onp) = (out_positions.as_mut_ptr(), out_normals.as_mut_ptr());
            // The indices the blends read: with BLOCKS, times 8.
            let indices = if BLOCKS { joints_times8 } else { joints };
            unsafe {
                // Blends vertices j and j + 4 of block k and pairs their
                // columns (two lane permutes and an insert) here, in the
                // load-bound stage.
                let blend_pair = |k: usize, j: usize| {
                    let to = bl.add(k & 1);
                    let (a, b) = blend_packed::<K, BLOCKS>(sp, indices, weights, k * 8 + j);
                    let (c, d) = blend_packed::<K, BLOCKS>(sp, indices, weights, k * 8 + j + 4);
                    // The third pair as one register and one store: left
                    // alone, LLVM stores its two halves apart (four more
                    // stores a trip, about 1 to 2 per cent slower on a Zen 3);
                    // the empty asm makes the register opaque to it.
                    let mut c2 = _mm256_set_m128(d, b);
                    std::arch::asm!(
                        "/* {0} */",
                        inout(ymm_reg) c2,
                        options(pure, nomem, nostack, preserves_flags)
                    );
                    (*to).0[j] = [
                        _mm256_permute2f128_ps(a, c, 0x20),
                        _mm256_permute2f128_ps(a, c, 0x31),
                        c2,
                    ];
                };
                // With HALVES (both outputs on 16 bytes) the blocks'
                // outputs go out as 16-byte halves.
                let normalise = |k: usize| {
                    store_vec3x8_either(HALVES, onp.add(k * 8), normalised8((*cf.add(k & 1)).0))
                };
                for k in 0..nb.min(2) {
                    (0..4).for_each(|j| blend_pair(k, j));
                }
                transpose_packed::<BLOCKS>(0, bl, cf, pp, np, opp, HALVES, &mut |_| {});
                // The steady state: block t + 1's transpose, block t + 2's
                // blend and block t's normals in one trip. The normals
                // come last: their cofactor products are the end of the
                // trip before's longest chain, so at the start of a trip
                // they would wait on it (about 3 per cent slower).
                for t in 0..nb.saturating_sub(2) {
                    transpose_packed::<BLOCKS>(t + 1, bl, cf, pp, np, opp, HALVES, &mut |j| {
                        blend_pair(t + 2, j)
                    });
                    normalise(t);
                    // An empty asm (no operands, no memory) ends LLVM's
                    // scheduling region here, between one trip's
                    // normalisation and the next trip's start: without it
                    // the compiled trip was 360 instructions with 27 spill
                    // stores, with it 331 with 17; on an Emerald Rapids
                    // 3.89 against 3.65 ns/vertex (and 4.04 against 3.80
                    // with the indices from one 8-byte load).
                    std::arch::asm!("", options(nomem, nostack, preserves_flags));
                }
                if nb >= 2 {
                    normalise(nb - 2);
                    transpose_packed::<BLOCKS>(nb - 1, bl, cf, pp, np, opp, HALVES, &mut |_| {});
                }
                normalise(nb - 1);
            }
        }
        let done = nb * 8;
        if done < n {
            unsafe {
                lbs::<K>(
                    skin,
                    &joints[done * K..],
                    &weights[done * K..],
                    &positions[done..],
                    &normals[done..],
                    &mut out_positions[done..],
                    &mut out_normals[done..],
                );
            }
        }
    }

    /// x, y, z of the eight vertices at `v`: with `BLOCKS` a [`Vec3x8`]
    /// ([`load_x8`]; a block is as long as eight `Vec3`, so block k is at
    /// `8 k` either way), else eight `Vec3` ([`load_vec3x8`]).
    #[inline(always)]
    unsafe fn load_block<const BLOCKS: bool>(v: *const Vec3) -> (__m256, __m256, __m256) {
        unsafe {
            if BLOCKS {
                let [x, y, z] = load_x8(&*(v as *const Vec3x8));
                (x, y, z)
            } else {
                load_vec3x8(std::slice::from_raw_parts(v, 8), 0)
            }
        }
    }

    /// [`lbs_pipelined`]'s middle stage for block `k`: its matrices (from
    /// `bl[k & 1]`) in SoA form, its positions skinned into `opp` (as
    /// [`store_vec3x8_either`] writes them with `halves`),
    /// `cofactor(M) n` of its normals into `cf[k & 1]`; `between(0..4)`
    /// runs at four points between the steps (the next blends), where few
    /// registers are live. The packed columns give `t.x` with `c0`, `t.z`
    /// with `c2` and `t.y` with `c1`, which comes last (the cofactor
    /// product needs it last), so `t.y` is added at the end.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn transpose_packed<const BLOCKS: bool>(
        k: usize,
        bl: *const PackedPairs,
        cf: *mut CofactorBlock,
        pp: *const Vec3,
        np: *const Vec3,
        opp: *mut Vec3,
        halves: bool,
        between: &mut impl FnMut(usize),
    ) {
        unsafe {
            let m = &(*bl.add(k & 1)).0;
            let (p, nn, op) = (pp.add(k * 8), np.add(k * 8), opp.add(k * 8));
            let column = |c: usize| soa4(m[0][c], m[1][c], m[2][c], m[3][c]);
            between(0);
            let [c0x, c0y, c0z, tx] = column(0);
            let (px, py, pz) = load_block::<BLOCKS>(p);
            between(1);
            let [c2x, c2y, c2z, tz] = column(2);
            let (c0, c2) = ([c0x, c0y, c0z], [c2x, c2y, c2z]);
            let o = [
                _mm256_fmadd_ps(c0x, px, tx),
                _mm256_mul_ps(c0y, px),
                _mm256_fmadd_ps(c0z, px, tz),
            ];
            between(2);
            let o: [__m256; 3] = std::array::from_fn(|i| _mm256_fmadd_ps(c2[i], pz, o[i]));
            let (nx, ny, nz) = load_block::<BLOCKS>(nn);
            // The cofactor product's terms without c1, which is needed last.
            let (u, q) = cofactor_without_c1(c0, c2, [nx, nz]);
            between(3);
            let [c1x, c1y, c1z, ty] = column(1);
            let c1 = [c1x, c1y, c1z];
            let o: [__m256; 3] = std::array::from_fn(|i| _mm256_fmadd_ps(c1[i], py, o[i]));
            let oy = _mm256_add_ps(o[1], ty);
            store_vec3x8_either(halves, op, [o[0], oy, o[2]]);
            (*cf.add(k & 1)).0 = cofactor_with_c1(c1, u, q, ny);
        }
    }

    /// `v / |v|` of eight vectors (SoA) written to `out[base..base + 8]`:
    /// [`normalised8`], then [`store_vec3x8`]. The normals' last step in
    /// the LBS and DQS kernels.
    #[inline(always)]
    unsafe fn store_normalised8(out: &mut [Vec3], base: usize, v: [__m256; 3]) {
        unsafe {
            let [x, y, z] = normalised8(v);
            store_vec3x8(out, base, x, y, z);
        }
    }

    /// `v / |v|` of eight vectors (SoA): one Newton step on the reciprocal
    /// square root (~1e-7 relative), zero staying zero.
    #[inline(always)]
    unsafe fn normalised8([x, y, z]: [__m256; 3]) -> [__m256; 3] {
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

    /// `[x x4 | y x4]` and `[z x4 | z x4]` from `q = (x, y, z, _)`: the
    /// right operands for an affine matrix held as `[c0 | c1]`, `[c2 | t]`
    /// (blend a 1 into the upper half of the second for the translation).
    /// `idx` is [`PermuteIdx`]'s: in-lane permutes of `[q | q]`.
    #[inline(always)]
    unsafe fn splat_xy_zz(q: __m128, idx: &PermuteIdx) -> (__m256, __m256) {
        unsafe {
            let q = _mm256_set_m128(q, q);
            (
                _mm256_permutevar_ps(q, idx.0[0]),
                _mm256_permutevar_ps(q, idx.1),
            )
        }
    }

    /// In-lane permute indices `[x x4 | y x4]` for (x, y) = (0, 1), (3, 0),
    /// (2, 3), (1, 2), and `[2 x8]`, made opaque to the compiler: seeing
    /// constant indices, LLVM rewrites each `[v | v]` permute into a 128-bit
    /// permute and a lane-crossing `vpermpd` (slower, and the loads no
    /// longer fold). Built once per call.
    struct PermuteIdx([__m256i; 4], __m256i);

    impl PermuteIdx {
        #[inline(always)]
        unsafe fn new() -> Self {
            unsafe {
                let p = |x: i32, y: i32| _mm256_setr_epi32(x, x, x, x, y, y, y, y);
                std::hint::black_box(Self(
                    [p(0, 1), p(3, 0), p(2, 3), p(1, 2)],
                    _mm256_set1_epi32(2),
                ))
            }
        }
    }

    /// `v[i]` as `(x, y, z, _)`: one 16-byte load reaching into `v[i + 1]`
    /// when there is one, else the three floats alone.
    #[inline(always)]
    unsafe fn load_vec3(v: &[Vec3], i: usize) -> __m128 {
        unsafe {
            if i + 1 < v.len() {
                _mm_loadu_ps(v.as_ptr().add(i) as *const f32)
            } else {
                let p = v.get_unchecked(i);
                _mm_setr_ps(p.x, p.y, p.z, 0.0)
            }
        }
    }

    /// Vertex `v`'s blended matrix as `[c0 | c1]`, `[c2 | t]`: its `K`
    /// palette entries times their weights, or the one entry as it is when
    /// there are no weights (validated: one influence, weight 1).
    ///
    /// `W` says whether there are weights, so that the test is made once
    /// per job rather than per vertex.
    #[inline(always)]
    unsafe fn blend_affine<const K: usize, const W: bool>(
        sp: *const Affine3A,
        joints: &[u16],
        weights: &[f32],
        v: usize,
    ) -> (__m256, __m256) {
        unsafe {
            let js = joints.as_ptr().add(v * K);
            if K == 1 && !W {
                return load_affine(sp.add(*js as usize));
            }
            let ws = weights.as_ptr().add(v * K);
            // Four influences: the indices in one load, the weights in
            // another; other counts read each from memory.
            let q = if K == 4 {
                (js as *const u64).read_unaligned()
            } else {
                0
            };
            let wv = if K == 4 {
                _mm256_castps128_ps256(_mm_loadu_ps(ws))
            } else {
                _mm256_setzero_ps()
            };
            let term = |k: usize| {
                if K == 4 {
                    let j = ((q >> (16 * k)) & 0xFFFF) as usize;
                    let w = _mm256_permutevar8x32_ps(wv, _mm256_set1_epi32(k as i32));
                    (load_affine(sp.add(j)), w)
                } else {
                    (
                        load_affine(sp.add(*js.add(k) as usize)),
                        _mm256_broadcast_ss(&*ws.add(k)),
                    )
                }
            };
            let ((a, b), w) = term(0);
            let mut acc0 = _mm256_mul_ps(a, w);
            let mut acc1 = _mm256_mul_ps(b, w);
            for k in 1..K {
                let ((a, b), w) = term(k);
                acc0 = _mm256_fmadd_ps(a, w, acc0);
                acc1 = _mm256_fmadd_ps(b, w, acc1);
            }
            (acc0, acc1)
        }
    }

    /// Linear blend skinning of positions only, one vertex at a time with
    /// no transpose: the blended `[c0 | c1]`, `[c2 | t]` times `[x | y]`,
    /// `[z | 1]` splats of the position (one 16-byte load and in-register
    /// shuffles; the load reaches into the next vertex, so the last vertex
    /// loads its three floats alone), the two halves added. Each vertex's
    /// 16-byte store spills into the next vertex's x, which that vertex
    /// then writes; the last one stores its three floats alone. Four
    /// vertices per loop trip keep the loop's own instructions down.
    ///
    /// # Safety
    /// As [`lbs`].
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn lbs_positions<const K: usize>(
        skin: &[Affine3A],
        joints: &[u16],
        weights: &[f32],
        positions: &[Vec3],
        out_positions: &mut [Vec3],
    ) {
        unsafe {
            if weights.is_empty() {
                lbs_positions_with::<K, false>(skin, joints, weights, positions, out_positions);
            } else {
                lbs_positions_with::<K, true>(skin, joints, weights, positions, out_positions);
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn lbs_positions_with<const K: usize, const W: bool>(
        skin: &[Affine3A],
        joints: &[u16],
        weights: &[f32],
        positions: &[Vec3],
        out_positions: &mut [Vec3],
    ) {
        unsafe {
            let n = positions.len();
            if n == 0 {
                return;
            }
            let sp = skin.as_ptr();
            let one = _mm256_set1_ps(1.0);
            let idx = PermuteIdx::new();
            let pp = positions.as_ptr() as *const f32;
            let op = out_positions.as_mut_ptr() as *mut f32;
            // Vertex v against `[x | y]` and `[z | 1]` splats of its
            // position, the halves added.
            let product = |v: usize, p01: __m256, p2w: __m256| {
                let (a, b) = blend_affine::<K, W>(sp, joints, weights, v);
                add_halves(_mm256_fmadd_ps(a, p01, _mm256_mul_ps(b, p2w)))
            };
            // Vertex v against its position `q`.
            let vertex = |v: usize, q: __m128| {
                let (p01, p2) = splat_xy_zz(q, &idx);
                product(v, p01, _mm256_blend_ps(p2, one, 0xF0))
            };
            // Needs v + 1 < n (the load reads the next vertex's x).
            let full = |v: usize| {
                _mm_storeu_ps(op.add(3 * v), vertex(v, _mm_loadu_ps(pp.add(3 * v))));
            };
            // Four vertices from a 16-byte boundary on: their twelve floats
            // are three aligned 16-byte loads (none splits a cache line),
            // each `[x | y]` one in-lane permute of one or two of them, each
            // `[z | 1]` a broadcast from memory and a blend. Needs v + 4 < n
            // (the last store spills into the next vertex's x).
            let four = |v: usize| {
                let f = pp.add(3 * v);
                let (c0, c1, c2) = (_mm_load_ps(f), _mm_load_ps(f.add(4)), _mm_load_ps(f.add(8)));
                let xy = |hi: __m128, lo: __m128, i: usize| {
                    _mm256_permutevar_ps(_mm256_set_m128(hi, lo), idx.0[i])
                };
                let zw =
                    |i: usize| _mm256_blend_ps(_mm256_broadcast_ss(&*f.add(3 * i + 2)), one, 0xF0);
                for (i, p01) in [xy(c0, c0, 0), xy(c1, c0, 1), xy(c1, c1, 2), xy(c2, c2, 3)]
                    .into_iter()
                    .enumerate()
                {
                    _mm_storeu_ps(op.add(3 * (v + i)), product(v + i, p01, zw(i)));
                }
            };
            let mut v = 0;
            // Vertices one at a time up to a 16-byte boundary of the
            // positions (a `Vec3` slice is 4-byte aligned: one of the first
            // four vertices starts on one).
            if let Some(lead) = (0..4).find(|&i| (pp as usize + 12 * i).is_multiple_of(16)) {
                while v < lead && v + 1 < n {
                    full(v);
                    v += 1;
                }
                while v + 4 < n {
                    four(v);
                    v += 4;
                }
            }
            while v + 4 < n {
                full(v);
                full(v + 1);
                full(v + 2);
                full(v + 3);
                v += 4;
            }
            while v + 1 < n {
                full(v);
                v += 1;
            }
            let r = vertex(n - 1, load_vec3(positions, n - 1));
            store3(out_positions, n - 1, r);
        }
    }

    /// A palette entry on a 64-byte boundary: an `Affine3A` is 64 bytes, so
    /// an array of these is an array of `Affine3A` none of whose 32- or
    /// 64-byte loads splits a cache line.
    #[repr(C, align(64))]
    #[derive(Clone, Copy)]
    pub(crate) struct LineAffine(Affine3A);

    const _: () = assert!(std::mem::size_of::<LineAffine>() == std::mem::size_of::<Affine3A>());

    /// Most palette entries [`aligned_palette`] copies to the caller's stack
    /// (8 KiB); a longer palette goes to the heap.
    pub(crate) const ALIGNED_PALETTE_MAX: usize = 128;

    /// `skin` as it is when it starts on an `align`-byte boundary (32 for
    /// the AVX2 kernels' two loads per entry, 64 for the AVX-512 kernels'
    /// one), or when it is longer than the mesh (copying would cost more
    /// than the split loads it saves); else a cache-line-aligned copy of it,
    /// in `stack` when it fits, else in `heap`.
    pub(crate) fn aligned_palette<'a>(
        skin: &'a [Affine3A],
        vertices: usize,
        align: usize,
        stack: &'a mut [std::mem::MaybeUninit<LineAffine>; ALIGNED_PALETTE_MAX],
        heap: &'a mut Vec<LineAffine>,
    ) -> &'a [Affine3A] {
        if (skin.as_ptr() as usize).is_multiple_of(align) || skin.len() > vertices {
            return skin;
        }
        let lines: &'a [LineAffine] = if skin.len() <= ALIGNED_PALETTE_MAX {
            for (d, m) in stack.iter_mut().zip(skin) {
                d.write(LineAffine(*m));
            }
            // SAFETY: the first skin.len() entries were just written.
            unsafe { std::slice::from_raw_parts(stack.as_ptr() as *const LineAffine, skin.len()) }
        } else {
            heap.clear();
            heap.extend(skin.iter().map(|m| LineAffine(*m)));
            heap
        };
        // SAFETY: a LineAffine is an Affine3A (same size, stricter
        // alignment), so these are lines.len() contiguous Affine3A.
        unsafe { std::slice::from_raw_parts(lines.as_ptr() as *const Affine3A, lines.len()) }
    }

    /// One palette entry for one-influence skinning with normals: the
    /// matrix columns in the low halves, the cofactor's in the high ones,
    /// `[c0 | k0]`, `[c1 | k1]`, `[c2 | k2]`, `[t | 0 0 0 f]`, every other w
    /// lane 0. In a table for unit normals, a similarity's cofactor is
    /// divided by its squared scale and `f` is 0, any other entry's `f` is
    /// -1 (its sign bit says "renormalise"); else `f` is 0.
    #[repr(C, align(32))]
    #[derive(Clone, Copy)]
    pub(crate) struct Lbs1Entry([f32; 32]);

    /// Most palette entries [`lbs1_normals`] takes (its table lives on the
    /// stack: 16 KiB).
    pub(crate) const LBS1_TABLE_MAX: usize = 128;

    /// Fills `table[i]` from `skin[i]`, the cofactor columns pointing as the
    /// scalar definition's (c1 x c2, c2 x c0, c0 x c1); with `UNIT`, scaled
    /// to keep lengths for a similarity (`skinning::similarity_cofactor`)
    /// and flagged, else as they are with every flag 0.
    #[inline(always)]
    fn lbs1_table<const UNIT: bool>(
        skin: &[Affine3A],
        table: &mut [std::mem::MaybeUninit<Lbs1Entry>],
    ) {
        for (m, e) in skin.iter().zip(table.iter_mut()) {
            let (k, f) = if UNIT {
                let (k, similar) = crate::anim::skinning::similarity_cofactor(&m.matrix3);
                (k, if similar { 0.0 } else { -1.0 })
            } else {
                (crate::anim::skinning::cofactor(&m.matrix3), 0.0)
            };
            let (c, t) = (&m.matrix3, m.translation);
            e.write(Lbs1Entry([
                c.x_axis.x, c.x_axis.y, c.x_axis.z, 0.0, k.x_axis.x, k.x_axis.y, k.x_axis.z, 0.0,
                c.y_axis.x, c.y_axis.y, c.y_axis.z, 0.0, k.y_axis.x, k.y_axis.y, k.y_axis.z, 0.0,
                c.z_axis.x, c.z_axis.y, c.z_axis.z, 0.0, k.z_axis.x, k.z_axis.y, k.z_axis.z, 0.0,
                t.x, t.y, t.z, 0.0, 0.0, 0.0, 0.0, f,
            ]));
        }
    }

    /// Linear blend skinning of one influence per vertex with no weights
    /// (each 1), positions and normals. Every vertex takes its matrix as it
    /// is, so each palette entry's cofactor is worked out once, into a
    /// table that holds the matrix and the cofactor side by side (see
    /// [`Lbs1Entry`]). A vertex is then one register `[p | n]` (position
    /// and normal loads in its two halves), three in-lane splats of it and
    /// three FMAs, giving `[M p | cof(M) n]`: no halves to add. Normals are
    /// renormalised eight at a time: their squared lengths gather into one
    /// register by horizontal adds. With `UNIT` (the caller vouches for
    /// unit normals) a block of eight whose matrices are all similarities
    /// stores its normals as they come (the table's cofactors keep
    /// lengths): the entries' flags ride in lane 7 (`0 n + f`), one OR and
    /// one sign mask per block.
    ///
    /// `stream` (see [`stream_outputs`]): with `UNIT`, and both outputs
    /// alike modulo 32 bytes, the blocks write their outputs with
    /// streaming stores, after a lead of up to seven vertices that puts
    /// them on 32 bytes, and prefetch their inputs. The lead and the tail
    /// go through the same block code from padded copies, so a vertex's
    /// result does not depend on where the streams lie (only, with
    /// `UNIT`, on whether its block of eight took the similarity path).
    /// Returns whether it took the streaming path.
    ///
    /// # Safety
    /// As [`lbs`], with one influence per vertex, no weights, normals as
    /// long as the positions and `skin.len() <= LBS1_TABLE_MAX`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn lbs1_normals<const UNIT: bool>(
        skin: &[Affine3A],
        joints: &[u16],
        positions: &[Vec3],
        normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
        stream: bool,
    ) -> bool {
        unsafe {
            // Only the palette's entries are written (no 16 KiB clear per
            // call); validate_streams keeps every joint index inside them.
            let mut table =
                [const { std::mem::MaybeUninit::<Lbs1Entry>::uninit() }; LBS1_TABLE_MAX];
            lbs1_table::<UNIT>(skin, &mut table);
            let tp = table.as_ptr() as *const f32;
            let n = positions.len();
            let (op, on) = (out_positions.as_mut_ptr(), out_normals.as_mut_ptr());
            // Streaming stores need both outputs on 32 bytes at the same
            // vertex: a lead of up to seven vertices puts them there when
            // they lie alike modulo 32 (else no streaming). Only with
            // `UNIT`: renormalising every block, the kernel has no room
            // for the stores' rearranging (measured 2.36 against 2.30 ns
            // a vertex at 100,000 on the Emerald Rapids).
            let stream = UNIT && stream && (op as usize) % 32 == (on as usize) % 32;
            let lead = if stream {
                (0..8)
                    .find(|l| (op as usize + 12 * l).is_multiple_of(32))
                    .unwrap_or(0)
                    .min(n)
            } else {
                0
            };
            let at = |v: usize| Lbs1Streams {
                joints: joints.as_ptr().add(v),
                positions: positions.as_ptr().add(v) as *const f32,
                normals: normals.as_ptr().add(v) as *const f32,
                out_positions: op.add(v) as *mut f32,
                out_normals: on.add(v) as *mut f32,
            };
            lbs1_padded::<UNIT>(tp, at(0), lead);
            // Blocks of eight while a vertex follows them (their 16-byte
            // loads reach into the next vertex).
            let mut base = lead;
            if stream {
                while base + 8 < n {
                    // Streams this long come from beyond the L2: the
                    // positions and normals 16 blocks (1.5 KiB) ahead are
                    // asked for (measured 1.84 against 1.91 ns a vertex at
                    // 100,000 on the Emerald Rapids; 12 to 32 blocks
                    // alike). A prefetch past the end is harmless.
                    let a = at(base);
                    for p in [a.positions, a.normals] {
                        let ahead = p.wrapping_add(16 * 24);
                        _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
                        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(16) as *const i8);
                    }
                    lbs1_block8::<UNIT, true>(tp, at(base));
                    base += 8;
                }
                _mm_sfence();
            } else {
                while base + 8 < n {
                    lbs1_block8::<UNIT, false>(tp, at(base));
                    base += 8;
                }
            }
            lbs1_padded::<UNIT>(tp, at(base), n - base);
            stream
        }
    }

    /// Raw pointers of the streams of [`lbs1_normals`] at one vertex.
    #[derive(Clone, Copy)]
    struct Lbs1Streams {
        joints: *const u16,
        positions: *const f32,
        normals: *const f32,
        out_positions: *mut f32,
        out_normals: *mut f32,
    }

    /// The `rest` (at most eight) vertices at `s` through
    /// [`lbs1_block8`], from padded copies: the lead and the tail of
    /// [`lbs1_normals`], so that every vertex goes through the same code
    /// wherever the streams lie. Padding vertices take the first vertex's
    /// joint, so that they leave the block's similarity check as its real
    /// vertices make it.
    #[inline(always)]
    unsafe fn lbs1_padded<const UNIT: bool>(tp: *const f32, s: Lbs1Streams, rest: usize) {
        unsafe {
            if rest == 0 {
                return;
            }
            let mut js = [*s.joints; 9];
            let mut p = [0.0f32; 27];
            let mut nn = [0.0f32; 27];
            let (mut op, mut on) = ([0.0f32; 27], [0.0f32; 27]);
            std::ptr::copy_nonoverlapping(s.joints, js.as_mut_ptr(), rest);
            std::ptr::copy_nonoverlapping(s.positions, p.as_mut_ptr(), 3 * rest);
            std::ptr::copy_nonoverlapping(s.normals, nn.as_mut_ptr(), 3 * rest);
            let padded = Lbs1Streams {
                joints: js.as_ptr(),
                positions: p.as_ptr(),
                normals: nn.as_ptr(),
                out_positions: op.as_mut_ptr(),
                out_normals: on.as_mut_ptr(),
            };
            lbs1_block8::<UNIT, false>(tp, padded);
            std::ptr::copy_nonoverlapping(op.as_ptr(), s.out_positions, 3 * rest);
            std::ptr::copy_nonoverlapping(on.as_ptr(), s.out_normals, 3 * rest);
        }
    }

    /// `[M p | cof(M) n]` of vertex `v` at `s` (x, y, z in lanes 0-2 of
    /// each half; lane 3 is never read) from `q = [p | n]`: three in-lane
    /// splats and three FMAs. Without `STREAM` the position is stored,
    /// spilling into the next vertex's x, which it writes.
    #[inline(always)]
    unsafe fn lbs1_vertex<const STREAM: bool>(tp: *const f32, s: Lbs1Streams, v: usize) -> __m256 {
        unsafe {
            let q = _mm256_loadu2_m128(s.normals.add(3 * v), s.positions.add(3 * v));
            let e = tp.add(32 * *s.joints.add(v) as usize);
            let x = _mm256_permute_ps(q, 0b00_00_00_00);
            let y = _mm256_permute_ps(q, 0b01_01_01_01);
            let z = _mm256_permute_ps(q, 0b10_10_10_10);
            let r = _mm256_fmadd_ps(_mm256_load_ps(e), x, _mm256_load_ps(e.add(24)));
            let r = _mm256_fmadd_ps(_mm256_load_ps(e.add(8)), y, r);
            let r = _mm256_fmadd_ps(_mm256_load_ps(e.add(16)), z, r);
            if !STREAM {
                _mm_storeu_ps(s.out_positions.add(3 * v), _mm256_castps256_ps128(r));
            }
            r
        }
    }

    /// Eight vertices of [`lbs1_normals`] at `s`, a ninth following (read,
    /// and its position's and normal's x overwritten). `STREAM`: both
    /// outputs are on 32 bytes, and each takes its 96 bytes as three
    /// streaming (non-temporal) stores, which skip reading the lines into
    /// the cache first.
    #[inline(always)]
    unsafe fn lbs1_block8<const UNIT: bool, const STREAM: bool>(tp: *const f32, s: Lbs1Streams) {
        unsafe {
            let v = |i: usize| lbs1_vertex::<STREAM>(tp, s, i);
            let r = [v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7)];
            if STREAM {
                let q: [__m256; 4] =
                    std::array::from_fn(|i| _mm256_permute2f128_ps(r[2 * i], r[2 * i + 1], 0x20));
                stream_vec3x8(s.out_positions, q);
            }
            // Normals of vertex pairs, [n_v | n_v+1].
            let pairs: [__m256; 4] =
                std::array::from_fn(|i| _mm256_permute2f128_ps(r[2 * i], r[2 * i + 1], 0x31));
            if UNIT {
                let f = _mm256_or_ps(
                    _mm256_or_ps(_mm256_or_ps(r[0], r[1]), _mm256_or_ps(r[2], r[3])),
                    _mm256_or_ps(_mm256_or_ps(r[4], r[5]), _mm256_or_ps(r[6], r[7])),
                );
                if _mm256_movemask_ps(f) & 0x80 == 0 {
                    // Every matrix a similarity: the normals are unit
                    // already. Each 16-byte store's w (0) spills into the
                    // next vertex's x, which that vertex writes.
                    if STREAM {
                        stream_vec3x8(s.out_normals, pairs);
                    } else {
                        for (i, r) in r.iter().enumerate() {
                            _mm_storeu_ps(s.out_normals.add(3 * i), _mm256_extractf128_ps(*r, 1));
                        }
                    }
                    return;
                }
            }
            // w lanes cleared: they hold the flags.
            let xyz = _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, -1, 0, -1, -1, -1, 0));
            let [s01, s23, s45, s67] = if UNIT {
                pairs.map(|p| _mm256_and_ps(p, xyz))
            } else {
                pairs
            };
            // |n|^2 of vertices 0 2 4 6 | 1 3 5 7 (the w lanes are 0).
            let h = _mm256_hadd_ps(
                _mm256_hadd_ps(_mm256_mul_ps(s01, s01), _mm256_mul_ps(s23, s23)),
                _mm256_hadd_ps(_mm256_mul_ps(s45, s45), _mm256_mul_ps(s67, s67)),
            );
            let d = _mm256_max_ps(h, _mm256_set1_ps(1e-30));
            let y = _mm256_rsqrt_ps(d);
            let t = _mm256_mul_ps(_mm256_mul_ps(d, _mm256_set1_ps(0.5)), _mm256_mul_ps(y, y));
            let y = _mm256_mul_ps(y, _mm256_sub_ps(_mm256_set1_ps(1.5), t));
            // Vertex pair (v, v + 1)'s factors sit at lane i of each half:
            // an in-lane broadcast (no lane crossing) spreads them over
            // their halves.
            let q = [
                _mm256_mul_ps(s01, _mm256_permute_ps(y, 0b00_00_00_00)),
                _mm256_mul_ps(s23, _mm256_permute_ps(y, 0b01_01_01_01)),
                _mm256_mul_ps(s45, _mm256_permute_ps(y, 0b10_10_10_10)),
                _mm256_mul_ps(s67, _mm256_permute_ps(y, 0b11_11_11_11)),
            ];
            if STREAM {
                stream_vec3x8(s.out_normals, q);
            } else {
                for (i, q) in q.iter().enumerate() {
                    let o = s.out_normals.add(6 * i);
                    _mm_storeu_ps(o, _mm256_castps256_ps128(*q));
                    _mm_storeu_ps(o.add(3), _mm256_extractf128_ps(*q, 1));
                }
            }
        }
    }

    /// Eight vectors given in pairs (`q[i]` = `[v_2i | v_2i+1]`, x, y, z
    /// in lanes 0-2 of each half) written as eight `Vec3` (96 bytes) at
    /// `p`, on 32 bytes, with three streaming stores.
    #[inline(always)]
    unsafe fn stream_vec3x8(p: *mut f32, q: [__m256; 4]) {
        unsafe {
            let idx = |a: [i32; 8]| _mm256_loadu_si256(a.as_ptr() as *const __m256i);
            // Lanes of the pairs that make up the three registers: a
            // register's lanes come from one pair up to a point and from
            // the next after it, each by the same lane index.
            let a = idx([0, 1, 2, 4, 5, 6, 0, 1]);
            let b = idx([2, 4, 5, 6, 0, 1, 2, 4]);
            let c = idx([5, 6, 0, 1, 2, 4, 5, 6]);
            let perm = _mm256_permutevar8x32_ps;
            let m0 = _mm256_blend_ps::<0b1100_0000>(perm(q[0], a), perm(q[1], a));
            let m1 = _mm256_blend_ps::<0b1111_0000>(perm(q[1], b), perm(q[2], b));
            let m2 = _mm256_blend_ps::<0b1111_1100>(perm(q[2], c), perm(q[3], c));
            _mm256_stream_ps(p, m0);
            _mm256_stream_ps(p.add(8), m1);
            _mm256_stream_ps(p.add(16), m2);
        }
    }

    /// The 4x3 palette from inverse binds stored as rows: row `i` of
    /// `model[joints[k]] * inverse_bind[k]` is `sum_q M[i][q] * inv_row[q]`
    /// plus `M[i][3]` in w, so every bone's rows come out of broadcasts
    /// (straight from memory) and FMAs, with no transpose: rows 0 and 1
    /// together in one 256-bit register, row 2 in a 128-bit one. The terms
    /// add in the scalar product's order (columns 0, 1, 2, then the
    /// translation).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `joints`, `inverse_rows` and `out` have
    /// one length and every `joints[k] < model.len()`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn palette_rows_4x3(
        model: &[Affine3A],
        joints: &[u16],
        inverse_rows: &[Affine4x3],
        out: &mut [Affine4x3],
    ) {
        unsafe {
            let mp = model.as_ptr() as *const f32;
            let ip = inverse_rows.as_ptr() as *const f32;
            let op = out.as_mut_ptr() as *mut f32;
            // [v.x x4 | v.y x4] from [v | v]: one in-lane permute. The
            // index goes through `black_box` so that LLVM cannot see it is
            // constant: seeing it, it rewrites each permute into a 128-bit
            // permute and a lane-crossing `vpermpd`, about a fifth slower.
            let xy = std::hint::black_box(_mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
            let zero = _mm256_setzero_ps();
            for k in 0..joints.len() {
                let m = mp.add(*joints.get_unchecked(k) as usize * 16);
                let i = ip.add(k * 12);
                let both = |p: *const f32| _mm256_broadcast_ps(&*(p as *const __m128));
                let (r0, r1, r2) = (both(i), both(i.add(4)), both(i.add(8)));
                let acc = _mm256_mul_ps(_mm256_permutevar_ps(both(m), xy), r0);
                let acc = _mm256_fmadd_ps(_mm256_permutevar_ps(both(m.add(4)), xy), r1, acc);
                let acc = _mm256_fmadd_ps(_mm256_permutevar_ps(both(m.add(8)), xy), r2, acc);
                let t = _mm256_blend_ps(zero, _mm256_permutevar_ps(both(m.add(12)), xy), 0x88);
                let rows01 = _mm256_add_ps(acc, t);
                let acc2 = _mm_mul_ps(_mm_broadcast_ss(&*m.add(2)), _mm256_castps256_ps128(r0));
                let acc2 = _mm_fmadd_ps(
                    _mm_broadcast_ss(&*m.add(6)),
                    _mm256_castps256_ps128(r1),
                    acc2,
                );
                let acc2 = _mm_fmadd_ps(
                    _mm_broadcast_ss(&*m.add(10)),
                    _mm256_castps256_ps128(r2),
                    acc2,
                );
                let t2 = _mm_blend_ps(_mm_setzero_ps(), _mm_broadcast_ss(&*m.add(14)), 0x8);
                let o = op.add(k * 12);
                _mm256_storeu_ps(o, rows01);
                _mm_storeu_ps(o.add(8), _mm_add_ps(acc2, t2));
            }
        }
    }

    /// Four floats at each of `p(0..8)` (a quaternion or any 16-byte
    /// group) as x, y, z, w rows over the eight: two 16-byte loads per
    /// register (`v` and `v + 4`), then a 4x4 transpose in each lane.
    #[inline(always)]
    unsafe fn soa4_from(p: impl Fn(usize) -> *const f32) -> [__m256; 4] {
        unsafe {
            let l = |v: usize| _mm256_loadu2_m128(p(v + 4), p(v));
            soa4(l(0), l(1), l(2), l(3))
        }
    }

    /// Local matrices of up to eight joints in structure-of-arrays form:
    /// `m[k][v]` is element k (column-major 3x3: c0.xyz, c1.xyz, c2.xyz) of
    /// joint v's `R(q) * diag(s)`.
    #[repr(C, align(32))]
    pub(crate) struct Locals([[f32; 8]; 9]);

    #[inline(always)]
    unsafe fn locals8(locals: &[Transform], base: usize, out: &mut Locals) {
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
    #[inline(always)]
    unsafe fn locals8_soa(b: &SoaTransforms8, out: &mut Locals) {
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
    #[inline(always)]
    unsafe fn locals8_from([x, y, z, w]: [__m256; 4], [sx, sy, sz]: [__m256; 3], out: &mut Locals) {
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
        unsafe fn fill(&self, base: usize, to: usize, block: &mut Locals);
        /// Joint `i`'s translation's x, y and z.
        unsafe fn translation(&self, i: usize) -> [*const f32; 3];
    }

    impl LocalPose for [Transform] {
        #[inline(always)]
        unsafe fn fill(&self, base: usize, to: usize, block: &mut Locals) {
            unsafe {
                if to - base >= 8 {
                    return locals8(self, base, block);
                }
                for v in 0..to - base {
                    local_lane(self.get_unchecked(base + v), v, block);
                }
            }
        }
        #[inline(always)]
        unsafe fn translation(&self, i: usize) -> [*const f32; 3] {
            unsafe {
                let t = &self.get_unchecked(i).translation;
                [&t.x, &t.y, &t.z]
            }
        }
    }

    impl LocalPose for [SoaTransforms8] {
        #[inline(always)]
        unsafe fn fill(&self, base: usize, to: usize, block: &mut Locals) {
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
        #[inline(always)]
        unsafe fn translation(&self, i: usize) -> [*const f32; 3] {
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
    /// chains, three operations a column. (Along a chain skeleton a tree
    /// of adds would take a cycle or two less per joint from parent to
    /// child, but measured slower on both shapes.)
    ///
    /// `SPLIT_T`: the translation as two halves added, so that along a
    /// chain it passes from parent to child through one FMA and an add (10
    /// cycles on Zen 4) rather than three FMAs (12), below the columns'
    /// 11. Measured faster on chains in the AVX-512 build (broadcasts
    /// folded into the FMAs), slower in the AVX2 one.
    #[inline(always)]
    unsafe fn joint_model<const SPLIT_T: bool>(
        (p0, p1, p2, pt): Columns,
        block: &Locals,
        v: usize,
        [tx, ty, tz]: [*const f32; 3],
    ) -> Columns {
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
        unsafe { local_to_model_body::<false, L>(parents, locals, root, from, to, models) }
    }

    /// [`local_to_model`] compiled for AVX-512 (VL): the same code, but each
    /// broadcast of a local matrix element folds into its multiply or FMA
    /// as an embedded broadcast, which Zen 4 does in the load unit, where a
    /// separate `vbroadcastss` takes a slot of the FMA pipes. Intel CPUs
    /// do a `vbroadcastss` from memory in a load port alone, and on the
    /// Emerald Rapids measured this build was slower than the AVX2 one on
    /// trees and no faster on chains, so the jobs give them the AVX2 one.
    ///
    /// # Safety
    /// As [`local_to_model`], and the CPU has AVX-512 F and VL.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    pub unsafe fn local_to_model_avx512<L: LocalPose + ?Sized>(
        parents: &[u16],
        locals: &L,
        root: &Affine3A,
        from: usize,
        to: usize,
        models: &mut [Affine3A],
    ) {
        unsafe { local_to_model_body::<true, L>(parents, locals, root, from, to, models) }
    }

    #[inline(always)]
    unsafe fn local_to_model_body<const SPLIT_T: bool, L: LocalPose + ?Sized>(
        parents: &[u16],
        locals: &L,
        root: &Affine3A,
        from: usize,
        to: usize,
        models: &mut [Affine3A],
    ) {
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

    /// Whether `Transform` has the layout [`blend2`] relies on: rotation in
    /// floats 0..4, translation in 4..7, scale in 7..10, padding after
    /// (what rustc picks for the three fields; checked, not assumed).
    pub(crate) const TRANSFORM_PACKED: bool = std::mem::offset_of!(Transform, rotation) == 0
        && std::mem::offset_of!(Transform, translation) == 16
        && std::mem::offset_of!(Transform, scale) == 28
        && std::mem::size_of::<Transform>() == 48;

    /// [`blend2`] run the way `backwards` says, each direction its own loop.
    ///
    /// # Safety
    /// As [`blend2`].
    #[inline]
    pub unsafe fn blend2_either(
        a: &[Transform],
        b: &[Transform],
        wa: f32,
        wb: f32,
        out: &mut [Transform],
        backwards: bool,
    ) {
        // SAFETY: the caller's promise is blend2's.
        unsafe {
            if backwards {
                blend2::<true>(a, b, wa, wb, out)
            } else {
                blend2::<false>(a, b, wa, wb, out)
            }
        }
    }

    /// Two-layer blend with weights already normalised (`wa + wb = 1`), for
    /// `out.len() / 8 * 8` joints; the caller does the rest. Rotations are
    /// blended eight at a time in SoA form (hemisphere check, nlerp);
    /// translation and scale of a joint together, as floats 2..10 of the
    /// transform (rotation z, w, translation, scale: all initialised, the
    /// padding after them never read) in one 256-bit lane.
    ///
    /// Software-pipelined: each trip of the loop starts the rotations
    /// (loads, hemisphere check, weighted sum, squared length) of the block
    /// two ahead before it finishes this block's (normalisation,
    /// translation and scale, stores), so that three blocks' dependency
    /// chains overlap (with two blocks, both fronts come first). On a Zen
    /// 3, one block ahead took 6 to 8 per cent off a 64-joint job against
    /// none, and two ahead another 5 to 8 per cent (best of 20 alternated
    /// runs of the anim bench, all four shapes); three ahead was no faster
    /// in a standalone harness.
    ///
    /// `BACKWARDS` runs over the blocks of eight from the last (see
    /// [`store_runs_into_loads`]); the result is the same. A constant, so
    /// each direction is its own loop (about 2 per cent of a 64-joint job
    /// against a run-time flag: the block's base is then no select).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `a`, `b` and `out` have the same length;
    /// [`TRANSFORM_PACKED`].
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn blend2<const BACKWARDS: bool>(
        a: &[Transform],
        b: &[Transform],
        wa: f32,
        wb: f32,
        out: &mut [Transform],
    ) {
        unsafe {
            let n = out.len() / 8 * 8;
            let (wa8, wb8) = (_mm256_set1_ps(wa), _mm256_set1_ps(wb));
            // The rotations of a block's eight transforms (the block's first
            // float at `t`), as x, y, z, w over the eight.
            let quats = |t: *const f32| {
                let [x, y, z, w] = soa4_from(|v: usize| t.add(12 * v));
                (x, y, z, w)
            };
            let (pa, pb) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
            let po = out.as_mut_ptr() as *mut f32;
            let blocks = n / 8;
            if blocks == 0 {
                return;
            }
            let base = |blk: usize| {
                if BACKWARDS {
                    n - 8 * (blk + 1)
                } else {
                    8 * blk
                }
            };
            // The front of a block: its rotations loaded and turned, the
            // hemisphere check, the weighted sum and its squared length.
            let front = |base: usize| {
                let (ax, ay, az, aw) = quats(pa.add(12 * base));
                let (bx, by, bz, bw) = quats(pb.add(12 * base));
                // Short dependency chains (sums as trees, b's term worked
                // out before the dot product is known).
                let dot = _mm256_add_ps(
                    _mm256_fmadd_ps(ax, bx, _mm256_mul_ps(ay, by)),
                    _mm256_fmadd_ps(az, bz, _mm256_mul_ps(aw, bw)),
                );
                // b's weight takes the dot product's sign (same hemisphere),
                // as the scalar test `dot < 0`: b's term, worked out before
                // the dot product is known, has its sign bit flipped.
                let neg = _mm256_cmp_ps(dot, _mm256_setzero_ps(), _CMP_LT_OQ);
                let flip = _mm256_and_ps(neg, _mm256_set1_ps(-0.0));
                let nlerp = |a: __m256, b: __m256| {
                    let p = _mm256_mul_ps(b, wb8);
                    _mm256_fmadd_ps(a, wa8, _mm256_xor_ps(p, flip))
                };
                let (x, y, z, w) = (nlerp(ax, bx), nlerp(ay, by), nlerp(az, bz), nlerp(aw, bw));
                let d = _mm256_add_ps(
                    _mm256_fmadd_ps(x, x, _mm256_mul_ps(y, y)),
                    _mm256_fmadd_ps(z, z, _mm256_mul_ps(w, w)),
                );
                [x, y, z, w, d]
            };
            // The back: translation and scale, the normalisation, the stores.
            let back = |base: usize, [x, y, z, w, d]: [__m256; 5]| {
                // Every address below is one of these plus a constant, so
                // that the loop spends no instructions on addresses.
                let (pa, pb, po) = (pa.add(12 * base), pb.add(12 * base), po.add(12 * base));
                let ts: [__m256; 8] = std::array::from_fn(|v| {
                    let f = 12 * v + 2;
                    _mm256_fmadd_ps(
                        _mm256_loadu_ps(pa.add(f)),
                        wa8,
                        _mm256_mul_ps(_mm256_loadu_ps(pb.add(f)), wb8),
                    )
                });
                let r = rsqrt_newton8(d);
                let (x, y, z, w) = (
                    _mm256_mul_ps(x, r),
                    _mm256_mul_ps(y, r),
                    _mm256_mul_ps(z, r),
                    _mm256_mul_ps(w, r),
                );
                let xy_lo = _mm256_unpacklo_ps(x, y);
                let xy_hi = _mm256_unpackhi_ps(x, y);
                let zw_lo = _mm256_unpacklo_ps(z, w);
                let zw_hi = _mm256_unpackhi_ps(z, w);
                let rows = [
                    _mm256_shuffle_ps(xy_lo, zw_lo, 0b01_00_01_00),
                    _mm256_shuffle_ps(xy_lo, zw_lo, 0b11_10_11_10),
                    _mm256_shuffle_ps(xy_hi, zw_hi, 0b01_00_01_00),
                    _mm256_shuffle_ps(xy_hi, zw_hi, 0b11_10_11_10),
                ];
                // Translation and scale first: the 32-byte store also writes
                // rotation z and w, which the rotation store replaces.
                for (v, ts) in ts.iter().enumerate() {
                    _mm256_storeu_ps(po.add(12 * v + 2), *ts);
                }
                for (v, row) in rows.iter().enumerate() {
                    _mm_storeu_ps(po.add(12 * v), _mm256_castps256_ps128(*row));
                    _mm_storeu_ps(po.add(12 * (v + 4)), _mm256_extractf128_ps(*row, 1));
                }
            };
            if blocks == 1 {
                back(base(0), front(base(0)));
                return;
            }
            // Software-pipelined: each trip starts the front of the block
            // two ahead before finishing this block, so that three blocks'
            // dependency chains overlap.
            let mut cur = front(base(0));
            let mut next = front(base(1));
            for blk in 0..blocks - 2 {
                let after = front(base(blk + 2));
                back(base(blk), cur);
                cur = next;
                next = after;
            }
            back(base(blocks - 2), cur);
            back(base(blocks - 1), next);
        }
    }

    /// `1 / sqrt(max(d, 1e-30))`: the hardware estimate and one Newton
    /// step, `r (1.5 - d/2 r^2)` (~1e-7 relative).
    #[inline(always)]
    unsafe fn rsqrt_newton8(d: __m256) -> __m256 {
        unsafe {
            let d = _mm256_max_ps(d, _mm256_set1_ps(1e-30));
            let r = _mm256_rsqrt_ps(d);
            let h = _mm256_fnmadd_ps(
                _mm256_mul_ps(d, _mm256_set1_ps(0.5)),
                _mm256_mul_ps(r, r),
                _mm256_set1_ps(1.5),
            );
            _mm256_mul_ps(r, h)
        }
    }

    /// Eight quaternions (x, y, z, w rows) divided by their length, given
    /// their squared lengths `d`: one Newton step on the reciprocal square
    /// root (~1e-7 relative); `fallback`'s rows where `d` is at most 1e-20
    /// (the scalar `normalize_or`).
    #[inline(always)]
    unsafe fn normalise_quats_or(q: [__m256; 4], d: __m256, fallback: [__m256; 4]) -> [__m256; 4] {
        unsafe {
            let ok = _mm256_cmp_ps(d, _mm256_set1_ps(1e-20), _CMP_GT_OQ);
            let r = rsqrt_newton8(d);
            // Written out: a closure here would be compiled without the
            // caller's target features.
            [
                _mm256_blendv_ps(fallback[0], _mm256_mul_ps(q[0], r), ok),
                _mm256_blendv_ps(fallback[1], _mm256_mul_ps(q[1], r), ok),
                _mm256_blendv_ps(fallback[2], _mm256_mul_ps(q[2], r), ok),
                _mm256_blendv_ps(fallback[3], _mm256_mul_ps(q[3], r), ok),
            ]
        }
    }

    /// Blends unmasked layers of structure-of-arrays poses, weights already
    /// divided by their sum (`blending::blend_uniform_scalar` eight joints
    /// per register): translations and scales weighted and summed, each
    /// rotation's weight negated where its dot product with the sum so far
    /// is negative, the sum normalised (one Newton step on the reciprocal
    /// square root, ~1e-7 relative), or the first layer's rotation where
    /// its squared length is at most 1e-20. Every block, spare lanes
    /// included; the rows are read and written in place (no transposes).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; 1 to 8 layers, `w` as many weights, every
    /// layer at least as many blocks as `out`.
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn blend_soa(layers: &[&[SoaTransforms8]], w: &[f32], out: &mut [SoaTransforms8]) {
        unsafe {
            let first = layers[0];
            let w0 = _mm256_set1_ps(w[0]);
            let n = out.len();
            let op = out.as_mut_ptr();
            for blk in 0..n {
                let a = first.as_ptr().add(blk) as *const f32;
                let o = op.add(blk) as *mut f32;
                // Rows: translation 0..3, rotation 3..7, scale 7..10.
                let row = |p: *const f32, r: usize| _mm256_load_ps(p.add(8 * r));
                let mut acc = [_mm256_setzero_ps(); 10];
                for (r, a_r) in acc.iter_mut().enumerate() {
                    *a_r = _mm256_mul_ps(row(a, r), w0);
                }
                for l in 1..layers.len() {
                    let b = layers.get_unchecked(l).as_ptr().add(blk) as *const f32;
                    let wl = _mm256_set1_ps(*w.get_unchecked(l));
                    let d = _mm256_add_ps(
                        _mm256_fmadd_ps(acc[3], row(b, 3), _mm256_mul_ps(acc[4], row(b, 4))),
                        _mm256_fmadd_ps(acc[5], row(b, 5), _mm256_mul_ps(acc[6], row(b, 6))),
                    );
                    for r in [0, 1, 2, 7, 8, 9] {
                        acc[r] = _mm256_fmadd_ps(row(b, r), wl, acc[r]);
                    }
                    // The scalar test `dot < 0` flips the weight's sign.
                    let neg = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_LT_OQ);
                    let wq = _mm256_xor_ps(wl, _mm256_and_ps(neg, _mm256_set1_ps(-0.0)));
                    for r in 3..7 {
                        acc[r] = _mm256_fmadd_ps(row(b, r), wq, acc[r]);
                    }
                }
                let d = _mm256_add_ps(
                    _mm256_fmadd_ps(acc[3], acc[3], _mm256_mul_ps(acc[4], acc[4])),
                    _mm256_fmadd_ps(acc[5], acc[5], _mm256_mul_ps(acc[6], acc[6])),
                );
                let q = normalise_quats_or(
                    [acc[3], acc[4], acc[5], acc[6]],
                    d,
                    [row(a, 3), row(a, 4), row(a, 5), row(a, 6)],
                );
                for c in [0, 1, 2, 7, 8, 9] {
                    _mm256_store_ps(o.add(8 * c), acc[c]);
                }
                for (c, q) in q.into_iter().enumerate() {
                    _mm256_store_ps(o.add(8 * (3 + c)), q);
                }
            }
        }
    }

    /// [`blend_soa`] for two layers: each trip starts the next block (its
    /// loads, hemisphere check and weighted sums) before it finishes this
    /// one (normalisation, stores), so that two blocks' dependency chains
    /// overlap.
    ///
    /// # Safety
    /// As [`blend_soa`], with two layers.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn blend_soa2(
        a: &[SoaTransforms8],
        b: &[SoaTransforms8],
        wa: f32,
        wb: f32,
        out: &mut [SoaTransforms8],
    ) {
        unsafe {
            let n = out.len();
            if n == 0 {
                return;
            }
            let (wa, wb) = (_mm256_set1_ps(wa), _mm256_set1_ps(wb));
            let (pa, pb) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
            let po = out.as_mut_ptr() as *mut f32;
            const BLOCK: usize = 80;
            let row = |p: *const f32, r: usize| _mm256_load_ps(p.add(r));
            // Rows: translation 0..3, rotation 3..7, scale 7..10 (8 floats
            // each). Returns the sums and the squared length of the
            // rotation sum.
            let front = |blk: usize| {
                let (x, y) = (pa.add(BLOCK * blk), pb.add(BLOCK * blk));
                let q: [__m256; 4] = [row(x, 24), row(x, 32), row(x, 40), row(x, 48)];
                let r: [__m256; 4] = [row(y, 24), row(y, 32), row(y, 40), row(y, 48)];
                let d = _mm256_add_ps(
                    _mm256_fmadd_ps(q[0], r[0], _mm256_mul_ps(q[1], r[1])),
                    _mm256_fmadd_ps(q[2], r[2], _mm256_mul_ps(q[3], r[3])),
                );
                let neg = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_LT_OQ);
                let wq = _mm256_xor_ps(wb, _mm256_and_ps(neg, _mm256_set1_ps(-0.0)));
                let s = [
                    _mm256_fmadd_ps(r[0], wq, _mm256_mul_ps(q[0], wa)),
                    _mm256_fmadd_ps(r[1], wq, _mm256_mul_ps(q[1], wa)),
                    _mm256_fmadd_ps(r[2], wq, _mm256_mul_ps(q[2], wa)),
                    _mm256_fmadd_ps(r[3], wq, _mm256_mul_ps(q[3], wa)),
                ];
                let len2 = _mm256_add_ps(
                    _mm256_fmadd_ps(s[0], s[0], _mm256_mul_ps(s[1], s[1])),
                    _mm256_fmadd_ps(s[2], s[2], _mm256_mul_ps(s[3], s[3])),
                );
                (s, len2)
            };
            let back = |blk: usize, (s, d): ([__m256; 4], __m256)| {
                let (x, y, o) = (
                    pa.add(BLOCK * blk),
                    pb.add(BLOCK * blk),
                    po.add(BLOCK * blk),
                );
                for r in [0, 8, 16, 56, 64, 72] {
                    let v = _mm256_fmadd_ps(row(y, r), wb, _mm256_mul_ps(row(x, r), wa));
                    _mm256_store_ps(o.add(r), v);
                }
                let first = [row(x, 24), row(x, 32), row(x, 40), row(x, 48)];
                let q = normalise_quats_or(s, d, first);
                for (c, q) in q.into_iter().enumerate() {
                    _mm256_store_ps(o.add(24 + 8 * c), q);
                }
            };
            let mut cur = front(0);
            for blk in 0..n - 1 {
                let next = front(blk + 1);
                back(blk, cur);
                cur = next;
            }
            back(n - 1, cur);
        }
    }

    /// Whether a pass forwards through `out` would store to addresses that
    /// loads of the inputs soon after (a little further on) share their low
    /// 12 bits with: the CPU then takes the load to depend on the store and
    /// holds it back ("4K aliasing"), which costs a blend about a fifth. In
    /// that case, and when a backward pass does not hit the same, go
    /// backwards. Only a matter of speed.
    #[inline]
    pub(crate) fn store_runs_into_loads(out: usize, inputs: &[usize]) -> bool {
        // Bytes of input a pass runs ahead of the stores still in flight.
        const WINDOW: usize = 1024;
        let ahead = |from: usize, to: usize| {
            let d = to.wrapping_sub(from) & 4095;
            d != 0 && d < WINDOW
        };
        let forward = inputs.iter().any(|&i| ahead(i, out));
        let backward = inputs.iter().any(|&i| ahead(out, i));
        forward && !backward
    }

    /// `sin(x)` for x in [0, pi/2], as `quat::sin4`.
    #[inline(always)]
    unsafe fn sin8(x: __m256) -> __m256 {
        unsafe {
            let x2 = _mm256_mul_ps(x, x);
            let c = |v: f32| _mm256_set1_ps(v);
            let p = _mm256_fmadd_ps(c(-1.0 / 39_916_800.0), x2, c(1.0 / 362_880.0));
            let p = _mm256_fmadd_ps(p, x2, c(-1.0 / 5040.0));
            let p = _mm256_fmadd_ps(p, x2, c(1.0 / 120.0));
            let p = _mm256_fmadd_ps(p, x2, c(-1.0 / 6.0));
            let p = _mm256_fmadd_ps(p, x2, c(1.0));
            _mm256_mul_ps(x, p)
        }
    }

    /// `acos(x)` for x in [0, 1], as `quat::acos01`.
    #[inline(always)]
    unsafe fn acos8(x: __m256) -> __m256 {
        unsafe {
            let c = |v: f32| _mm256_set1_ps(v);
            let mut p = c(ACOS_COEFFS[0]);
            for &k in &ACOS_COEFFS[1..] {
                p = _mm256_fmadd_ps(p, x, c(k));
            }
            let r = _mm256_sqrt_ps(_mm256_max_ps(_mm256_sub_ps(c(1.0), x), _mm256_setzero_ps()));
            _mm256_mul_ps(r, p)
        }
    }

    /// `sampling::squad_span` for up to eight tracks at once, from one
    /// group of `clip::SQUAD_ROWS` SoA rows; writes the rotations of
    /// `joints` (at most eight).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `rows.len() == SQUAD_ROWS`; every joint is
    /// inside `out`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn squad8<P: PoseSink + ?Sized>(
        rows: &[[f32; 8]],
        u: f32,
        joints: &[u16],
        out: &mut P,
    ) {
        unsafe {
            let l = |r: usize| _mm256_loadu_ps(rows.get_unchecked(r).as_ptr());
            let q = squad_lanes(l, _mm256_set1_ps(u));
            store_quats(q, joints, out);
        }
    }

    /// [`squad8`] for up to eight solo tracks, each its own span and
    /// fraction: the spans' fields turned into the same rows in registers
    /// (a 4x4 transpose per field), every lane's `u` its own.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; every joint is inside `out`; `spans` and
    /// `u` hold eight entries (spare lanes repeating a real one).
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn squad_solo8<P: PoseSink + ?Sized>(
        spans: &[&crate::anim::clip::SquadSpan; 8],
        u: &[f32; 8],
        joints: &[u16],
        out: &mut P,
    ) {
        unsafe {
            // Field `f` (q1, c, a, b, angles: 16 bytes each) of the eight
            // spans as x, y, z, w rows, lanes in span order.
            let field = |f: usize| {
                let p = |v: usize| {
                    let s = spans[v];
                    let q: *const Vec4 = match f {
                        0 => &s.q1 as *const Quat as *const Vec4,
                        1 => &s.c as *const Quat as *const Vec4,
                        2 => &s.a as *const Quat as *const Vec4,
                        3 => &s.b as *const Quat as *const Vec4,
                        _ => &s.angles,
                    };
                    q as *const f32
                };
                soa4_from(p)
            };
            let rows: [[__m256; 4]; 5] = std::array::from_fn(field);
            let q = squad_lanes(|r| rows[r / 4][r % 4], _mm256_loadu_ps(u.as_ptr()));
            store_quats(q, joints, out);
        }
    }

    /// The SQUAD arithmetic of [`squad8`] on rows `row(0..20)` (q1, c, a,
    /// b as x, y, z, w rows, then theta1, 1/sin1, theta2, 1/sin2) and a
    /// fraction per lane; returns x, y, z, w rows.
    #[inline(always)]
    unsafe fn squad_lanes(row: impl Fn(usize) -> __m256, uu: __m256) -> [__m256; 4] {
        unsafe {
            let l = row;
            let vv = _mm256_sub_ps(_mm256_set1_ps(1.0), uu);
            let (s0, s1) = slerp_weights8(l(16), l(17), uu);
            let (s2, s3) = slerp_weights8(l(18), l(19), uu);
            let p: [__m256; 4] =
                std::array::from_fn(|c| _mm256_fmadd_ps(l(c), s0, _mm256_mul_ps(l(4 + c), s1)));
            let r: [__m256; 4] = std::array::from_fn(|c| {
                _mm256_fmadd_ps(l(8 + c), s2, _mm256_mul_ps(l(12 + c), s3))
            });
            // h = 2 u (1 - u), in the scalar code's order.
            let h = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(2.0), uu), vv);
            let d = _mm256_fmadd_ps(
                p[0],
                r[0],
                _mm256_fmadd_ps(
                    p[1],
                    r[1],
                    _mm256_fmadd_ps(p[2], r[2], _mm256_mul_ps(p[3], r[3])),
                ),
            );
            // Shortest path: flip r where the dot product is negative.
            let sign = _mm256_and_ps(d, _mm256_set1_ps(-0.0));
            let d = _mm256_min_ps(_mm256_xor_ps(d, sign), _mm256_set1_ps(1.0));
            let theta = _mm256_max_ps(acos8(d), _mm256_set1_ps(MIN_SLERP_ANGLE));
            let sa = sin8(_mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(1.0), h), theta));
            let sb = sin8(_mm256_mul_ps(h, theta));
            let inv = _mm256_div_ps(_mm256_set1_ps(1.0), sin8(theta));
            let wa = _mm256_mul_ps(sa, inv);
            let wb = _mm256_xor_ps(_mm256_mul_ps(sb, inv), sign);
            std::array::from_fn(|c| _mm256_fmadd_ps(p[c], wa, _mm256_mul_ps(r[c], wb)))
        }
    }

    /// Writes eight quaternions given as x, y, z, w lanes into the
    /// rotations of `joints` (at most eight).
    #[inline(always)]
    unsafe fn store_quats<P: PoseSink + ?Sized>(q: [__m256; 4], joints: &[u16], out: &mut P) {
        unsafe {
            if P::SOA {
                return store_quats_soa(q, joints, out.as_blocks());
            }
            let out = out.as_transforms();
            let xy_lo = _mm256_unpacklo_ps(q[0], q[1]);
            let xy_hi = _mm256_unpackhi_ps(q[0], q[1]);
            let zw_lo = _mm256_unpacklo_ps(q[2], q[3]);
            let zw_hi = _mm256_unpackhi_ps(q[2], q[3]);
            let rows4 = [
                _mm256_shuffle_ps(xy_lo, zw_lo, 0b01_00_01_00),
                _mm256_shuffle_ps(xy_lo, zw_lo, 0b11_10_11_10),
                _mm256_shuffle_ps(xy_hi, zw_hi, 0b01_00_01_00),
                _mm256_shuffle_ps(xy_hi, zw_hi, 0b11_10_11_10),
            ];
            for (v, &j) in joints.iter().enumerate() {
                let q = if v < 4 {
                    _mm256_castps256_ps128(rows4[v])
                } else {
                    _mm256_extractf128_ps(rows4[v - 4], 1)
                };
                let o = &mut out.get_unchecked_mut(j as usize).rotation as *mut Quat as *mut f32;
                _mm_storeu_ps(o, q);
            }
        }
    }

    /// [`store_quats`] into SoA blocks: four row stores when the joints
    /// are one whole block's (`8k..8k + 8` in order), else lane by lane.
    #[inline(always)]
    unsafe fn store_quats_soa(q: [__m256; 4], joints: &[u16], out: &mut [SoaTransforms8]) {
        unsafe {
            if joints.len() == 8 {
                let j0 = *joints.get_unchecked(0);
                let want = _mm_add_epi16(
                    _mm_set1_epi16(j0 as i16),
                    _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7),
                );
                let got = _mm_loadu_si128(joints.as_ptr() as *const __m128i);
                if j0.is_multiple_of(8) && _mm_movemask_epi8(_mm_cmpeq_epi16(got, want)) == 0xFFFF {
                    let b = out.get_unchecked_mut(j0 as usize / 8);
                    for (c, row) in q.iter().enumerate() {
                        _mm256_store_ps(b.rotation[c].as_mut_ptr(), *row);
                    }
                    return;
                }
            }
            let mut rows = [[0.0f32; 8]; 4];
            for (r, v) in rows.iter_mut().zip(q) {
                _mm256_storeu_ps(r.as_mut_ptr(), v);
            }
            for (v, &j) in joints.iter().enumerate() {
                let b = out.get_unchecked_mut(j as usize / 8);
                let l = j as usize % 8;
                for (dst, row) in b.rotation.iter_mut().zip(&rows) {
                    dst[l] = row[v];
                }
            }
        }
    }

    /// Fixed-angle slerp of up to eight tracks from SoA key rows
    /// (`sampling::fixed_slerp` eight lanes wide).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `k0`, `k1` have 4 rows, `angles` 2; every
    /// joint is inside `out`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn slerp8<P: PoseSink + ?Sized>(
        k0: &[[f32; 8]],
        k1: &[[f32; 8]],
        angles: &[[f32; 8]],
        u: f32,
        joints: &[u16],
        out: &mut P,
    ) {
        unsafe {
            let l = |r: &[[f32; 8]], i: usize| _mm256_loadu_ps(r.get_unchecked(i).as_ptr());
            let (wa, wb) = slerp_weights8(l(angles, 0), l(angles, 1), _mm256_set1_ps(u));
            let q =
                std::array::from_fn(|c| _mm256_fmadd_ps(l(k0, c), wa, _mm256_mul_ps(l(k1, c), wb)));
            store_quats(q, joints, out);
        }
    }

    /// A fixed-angle slerp's two weights per lane, `sin((1-u) theta) /
    /// sin theta` and `sin(u theta) / sin theta`, from the angle, its
    /// reciprocal sine and the fraction.
    #[inline(always)]
    unsafe fn slerp_weights8(theta: __m256, inv: __m256, uu: __m256) -> (__m256, __m256) {
        unsafe {
            let vv = _mm256_sub_ps(_mm256_set1_ps(1.0), uu);
            (
                _mm256_mul_ps(sin8(_mm256_mul_ps(vv, theta)), inv),
                _mm256_mul_ps(sin8(_mm256_mul_ps(uu, theta)), inv),
            )
        }
    }

    /// Fixed-angle slerps of up to eight solo tracks, each its own
    /// interval: lane `l`'s two keys are `keys[at[l]]` and `keys[at[l] +
    /// 1]` (adjacent, one 32-byte load), its angle, reciprocal sine and
    /// fraction `theta[l]`, `inv[l]`, `u[l]`. The weights come eight lanes
    /// at a time; each key pair is then weighted `[wa x4 | wb x4]` and its
    /// halves added (`sampling::fixed_slerp`'s products and sum). Writes
    /// the rotations of `joints` (at most eight; spare lanes are computed,
    /// not stored).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `at[l] + 1 < keys.len()` for every lane;
    /// every joint is inside `out`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub unsafe fn slerp_solo8<P: PoseSink + ?Sized>(
        keys: &[Quat],
        at: &[usize; 8],
        theta: &[f32; 8],
        inv: &[f32; 8],
        u: &[f32; 8],
        joints: &[u16],
        out: &mut P,
    ) {
        unsafe {
            let l = |a: &[f32; 8]| _mm256_loadu_ps(a.as_ptr());
            let (wa, wb) = slerp_weights8(l(theta), l(inv), l(u));
            let (mut wa8, mut wb8) = ([0.0f32; 8], [0.0f32; 8]);
            _mm256_storeu_ps(wa8.as_mut_ptr(), wa);
            _mm256_storeu_ps(wb8.as_mut_ptr(), wb);
            let lane = |v: usize| {
                let pair = _mm256_loadu_ps(keys.as_ptr().add(at[v]) as *const f32);
                let w = _mm256_set_m128(_mm_set1_ps(wb8[v]), _mm_set1_ps(wa8[v]));
                let r = _mm256_mul_ps(pair, w);
                _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r))
            };
            if P::SOA {
                // All eight lanes (spare ones repeat a real track), turned
                // into x, y, z, w rows and stored as the batches' are.
                let r: [__m128; 8] = [
                    lane(0),
                    lane(1),
                    lane(2),
                    lane(3),
                    lane(4),
                    lane(5),
                    lane(6),
                    lane(7),
                ];
                let pair = |v: usize| _mm256_set_m128(r[v + 4], r[v]);
                let q = soa4(pair(0), pair(1), pair(2), pair(3));
                return store_quats_soa(q, joints, out.as_blocks());
            }
            for (v, &j) in joints.iter().enumerate() {
                let r = lane(v);
                let o = &mut out.as_transforms().get_unchecked_mut(j as usize).rotation as *mut Quat
                    as *mut f32;
                _mm_storeu_ps(o, r);
            }
        }
    }

    /// Transposes eight 8-float rows.
    #[inline(always)]
    unsafe fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
        unsafe {
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let t6 = _mm256_unpacklo_ps(r[6], r[7]);
            let t7 = _mm256_unpackhi_ps(r[6], r[7]);
            let u0 = _mm256_shuffle_ps(t0, t2, 0b01_00_01_00);
            let u1 = _mm256_shuffle_ps(t0, t2, 0b11_10_11_10);
            let u2 = _mm256_shuffle_ps(t1, t3, 0b01_00_01_00);
            let u3 = _mm256_shuffle_ps(t1, t3, 0b11_10_11_10);
            let u4 = _mm256_shuffle_ps(t4, t6, 0b01_00_01_00);
            let u5 = _mm256_shuffle_ps(t4, t6, 0b11_10_11_10);
            let u6 = _mm256_shuffle_ps(t5, t7, 0b01_00_01_00);
            let u7 = _mm256_shuffle_ps(t5, t7, 0b11_10_11_10);
            [
                _mm256_permute2f128_ps(u0, u4, 0x20),
                _mm256_permute2f128_ps(u1, u5, 0x20),
                _mm256_permute2f128_ps(u2, u6, 0x20),
                _mm256_permute2f128_ps(u3, u7, 0x20),
                _mm256_permute2f128_ps(u0, u4, 0x31),
                _mm256_permute2f128_ps(u1, u5, 0x31),
                _mm256_permute2f128_ps(u2, u6, 0x31),
                _mm256_permute2f128_ps(u3, u7, 0x31),
            ]
        }
    }

    /// `cofactor(M) n` for eight 3x3 matrices with columns `c` (SoA):
    /// `nx (c1 x c2) + ny (c2 x c0) + nz (c0 x c1) = c1 x (nx c2 - nz c0) +
    /// ny (c2 x c0)`, 21 operations instead of 27 (as the AVX-512 tier).
    #[inline(always)]
    unsafe fn cofactor_times8(
        [c0, c1, c2]: [[__m256; 3]; 3],
        [nx, ny, nz]: [__m256; 3],
    ) -> [__m256; 3] {
        unsafe {
            let (u, q) = cofactor_without_c1(c0, c2, [nx, nz]);
            cofactor_with_c1(c1, u, q, ny)
        }
    }

    /// [`cofactor_times8`]'s terms that do not need `c1`: `u = nx c2 - nz
    /// c0` and `q = c2 x c0` (so that a caller can form `c1` last).
    #[inline(always)]
    unsafe fn cofactor_without_c1(
        c0: [__m256; 3],
        c2: [__m256; 3],
        [nx, nz]: [__m256; 2],
    ) -> ([__m256; 3], [__m256; 3]) {
        unsafe {
            let u = std::array::from_fn(|i| _mm256_fmsub_ps(nx, c2[i], _mm256_mul_ps(nz, c0[i])));
            (u, cross8(c2, c0))
        }
    }

    /// [`cofactor_times8`]'s result from [`cofactor_without_c1`]'s terms:
    /// `c1 x u + ny q`.
    #[inline(always)]
    unsafe fn cofactor_with_c1(
        c1: [__m256; 3],
        u: [__m256; 3],
        q: [__m256; 3],
        ny: __m256,
    ) -> [__m256; 3] {
        unsafe {
            let bu = cross8(c1, u);
            std::array::from_fn(|i| _mm256_fmadd_ps(ny, q[i], bu[i]))
        }
    }

    #[inline(always)]
    unsafe fn cross8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
        unsafe {
            [
                _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
                _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
                _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
            ]
        }
    }

    /// The part of DQS after the blend, eight vertices in SoA form: `acc`
    /// holds the blended dual quaternions (real x, y, z, w, dual x, y, z,
    /// w over the eight, not normalised); the rotation as a matrix and the
    /// translation, then the positions and (when `out_normals` is not
    /// empty) the normals through them, each taken from its closure just
    /// before it is used (see [`dqs_scaled8`]). Both scale with
    /// `1 / |real|^2` (the matrix of `q v q*` is
    /// `|q|^2 R`, and the translation `2 d conj(r)` takes one `1 / |real|`
    /// from each factor), so one division by the squared length, and no
    /// square root, normalises the blend: `s = 2 / |real|^2` (0 for
    /// weights that cancel out, which gives the identity and no
    /// translation, as the scalar path). `between(0..4)` runs at four
    /// points between the steps (a pipelined caller's next blends).
    /// `halves`: both outputs lie on 16 bytes, and the blocks go out as
    /// [`store_vec3x8_halves`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dqs_finish8(
        acc: [__m256; 8],
        base: usize,
        positions: impl FnOnce() -> [__m256; 3],
        normals: impl FnOnce() -> [__m256; 3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
        halves: bool,
        between: &mut impl FnMut(usize),
    ) {
        let with_normals = !out_normals.is_empty();
        unsafe {
            let [x, y, z, w, dx, dy, dz, dw] = acc;
            let len2 = _mm256_fmadd_ps(
                x,
                x,
                _mm256_fmadd_ps(y, y, _mm256_fmadd_ps(z, z, _mm256_mul_ps(w, w))),
            );
            // Weights that cancel out (|real| < 1e-12, as the scalar path).
            let degenerate = _mm256_cmp_ps::<_CMP_LT_OQ>(len2, _mm256_set1_ps(1e-24));
            let s = _mm256_andnot_ps(degenerate, _mm256_div_ps(_mm256_set1_ps(2.0), len2));
            between(0);
            let (xs, ys, zs, ws) = (
                _mm256_mul_ps(x, s),
                _mm256_mul_ps(y, s),
                _mm256_mul_ps(z, s),
                _mm256_mul_ps(w, s),
            );
            let (wx, wy, wz) = (
                _mm256_mul_ps(w, xs),
                _mm256_mul_ps(w, ys),
                _mm256_mul_ps(w, zs),
            );
            // Row-major: m[r][c] of the rotation, 1 - s (y^2 + z^2) and
            // s (x y - w z) and so on.
            let one = _mm256_set1_ps(1.0);
            let a = _mm256_fnmadd_ps(x, xs, one);
            let m = [
                [
                    _mm256_fnmadd_ps(y, ys, _mm256_fnmadd_ps(z, zs, one)),
                    _mm256_fmsub_ps(x, ys, wz),
                    _mm256_fmadd_ps(x, zs, wy),
                ],
                [
                    _mm256_fmadd_ps(x, ys, wz),
                    _mm256_fnmadd_ps(z, zs, a),
                    _mm256_fmsub_ps(y, zs, wx),
                ],
                [
                    _mm256_fmsub_ps(x, zs, wy),
                    _mm256_fmadd_ps(y, zs, wx),
                    _mm256_fnmadd_ps(y, ys, a),
                ],
            ];
            // Translation s (d.xyz w - xyz d.w + xyz x d.xyz).
            let rs = [xs, ys, zs];
            let d = [dx, dy, dz];
            let t: [__m256; 3] = std::array::from_fn(|c| {
                let (j, k) = ((c + 1) % 3, (c + 2) % 3);
                let u = _mm256_fmadd_ps(rs[k], d[j], _mm256_mul_ps(dw, rs[c]));
                _mm256_fmadd_ps(d[c], ws, _mm256_fmsub_ps(rs[j], d[k], u))
            });
            between(1);
            let row = |r: usize, v: [__m256; 3], plus: __m256| {
                _mm256_fmadd_ps(
                    m[r][0],
                    v[0],
                    _mm256_fmadd_ps(m[r][1], v[1], _mm256_fmadd_ps(m[r][2], v[2], plus)),
                )
            };
            let p = positions();
            let o = [row(0, p, t[0]), row(1, p, t[1]), row(2, p, t[2])];
            store_vec3x8_either(halves, out_positions.as_mut_ptr().add(base), o);
            between(2);
            if with_normals {
                let (n, zero) = (normals(), _mm256_setzero_ps());
                let n = [row(0, n, zero), row(1, n, zero), row(2, n, zero)];
                between(3);
                let n = normalised8(n);
                store_vec3x8_either(halves, out_normals.as_mut_ptr().add(base), n);
            } else {
                between(3);
            }
        }
    }

    /// The two-phase variant's inputs for vertices `base..base + 8`:
    /// positions and normals (zero when there are none) in SoA form
    /// through [`scale_phase8`]; `None` for rigid DQS (`scale_shear`
    /// empty), whose [`dqs_finish8`] loads them itself, each as late as it
    /// can (fewer registers held over the rotation's build).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dqs_scaled8<const K: usize, const BLOCKS: bool>(
        scale_shear: &[Mat3A],
        joints: &[u16],
        weights: &[f32],
        base: usize,
        positions: &[Vec3],
        normals: &[Vec3],
        position_blocks: &[Vec3x8],
        normal_blocks: &[Vec3x8],
    ) -> Option<([__m256; 3], [__m256; 3])> {
        if scale_shear.is_empty() {
            return None;
        }
        unsafe {
            let p = load3x8_or_block::<BLOCKS>(positions, position_blocks, base);
            let n = if normals.is_empty() {
                [_mm256_setzero_ps(); 3]
            } else {
                load3x8_or_block::<BLOCKS>(normals, normal_blocks, base)
            };
            Some(scale_phase8::<K>(scale_shear, joints, weights, base, p, n))
        }
    }

    /// [`load_vec3x8`] as an array.
    #[inline(always)]
    unsafe fn load3x8(v: &[Vec3], base: usize) -> [__m256; 3] {
        unsafe {
            let (x, y, z) = load_vec3x8(v, base);
            [x, y, z]
        }
    }

    /// A block of eight prepared vertices ([`Vec3x8`]): three aligned
    /// loads.
    #[inline(always)]
    unsafe fn load_x8(b: &Vec3x8) -> [__m256; 3] {
        unsafe {
            [
                _mm256_load_ps(b.x.as_ptr()),
                _mm256_load_ps(b.y.as_ptr()),
                _mm256_load_ps(b.z.as_ptr()),
            ]
        }
    }

    /// Vertices `base..base + 8` (`base` a multiple of 8) in SoA form: with
    /// `BLOCKS` block `base / 8` of `blocks` ([`load_x8`]), else
    /// [`load3x8`] of `v`.
    #[inline(always)]
    unsafe fn load3x8_or_block<const BLOCKS: bool>(
        v: &[Vec3],
        blocks: &[Vec3x8],
        base: usize,
    ) -> [__m256; 3] {
        unsafe {
            if BLOCKS {
                load_x8(blocks.get_unchecked(base / 8))
            } else {
                load3x8(v, base)
            }
        }
    }

    /// The two-phase variant's first phase for vertices `base..base + 8`
    /// (`p`, `n` in SoA form): each vertex's linearly blended scale/shear
    /// matrix `sum w S_j` (weights unsigned, as the scalar definition)
    /// applied to its position, its cofactor to its normal. Each vertex's
    /// matrix is blended in registers (columns 0 and 1 in one 256-bit
    /// accumulator, column 2 in a 128-bit one), then the eight go to SoA
    /// form as in [`lbs`]. Not inlined into the rigid kernels' loops; its
    /// own target features, so that the closures inside get them too
    /// (without them the intrinsics there become calls).
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    unsafe fn scale_phase8<const K: usize>(
        scale_shear: &[Mat3A],
        joints: &[u16],
        weights: &[f32],
        base: usize,
        [px, py, pz]: [__m256; 3],
        [nx, ny, nz]: [__m256; 3],
    ) -> ([__m256; 3], [__m256; 3]) {
        unsafe {
            let sp = scale_shear.as_ptr() as *const f32;
            // Mat3A: three 16-byte columns. Their w lanes hold whatever
            // glam's arithmetic left there (a denormal would slow the FMAs
            // it meets), so they are cleared as they are loaded.
            let xyz = _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, -1, 0, -1, -1, -1, 0));
            let m: [(__m256, __m128); 8] = std::array::from_fn(|v| {
                let js = joints.as_ptr().add((base + v) * K);
                let ws = weights.as_ptr().add((base + v) * K);
                let mut c01 = _mm256_setzero_ps();
                let mut c2 = _mm_setzero_ps();
                for k in 0..K {
                    let s = sp.add(12 * *js.add(k) as usize);
                    let w = _mm256_broadcast_ss(&*ws.add(k));
                    c01 = _mm256_fmadd_ps(_mm256_and_ps(_mm256_loadu_ps(s), xyz), w, c01);
                    c2 = _mm_fmadd_ps(
                        _mm_and_ps(_mm_loadu_ps(s.add(8)), _mm256_castps256_ps128(xyz)),
                        _mm256_castps256_ps128(w),
                        c2,
                    );
                }
                (c01, c2)
            });
            // Column c of vertex v beside that of v + 4, then SoA.
            let col = |c: usize| {
                let r = |v: usize| match c {
                    0 => _mm256_permute2f128_ps(m[v].0, m[v + 4].0, 0x20),
                    1 => _mm256_permute2f128_ps(m[v].0, m[v + 4].0, 0x31),
                    _ => _mm256_set_m128(m[v + 4].1, m[v].1),
                };
                let (x, y, z) = soa3_from(r(0), r(1), r(2), r(3));
                [x, y, z]
            };
            let (c0, c1, c2) = (col(0), col(1), col(2));
            let p: [__m256; 3] = std::array::from_fn(|i| {
                _mm256_fmadd_ps(
                    c0[i],
                    px,
                    _mm256_fmadd_ps(c1[i], py, _mm256_mul_ps(c2[i], pz)),
                )
            });
            // The normals are zero when there are none, and then not stored.
            let n = cofactor_times8([c0, c1, c2], [nx, ny, nz]);
            (p, n)
        }
    }

    /// Defines a DQS table kernel, `$name`, compiled with `$features`:
    /// [`dqs_table`] (AVX2 and FMA) and [`dqs_table_avx512`] are the same
    /// code.
    macro_rules! dqs_table_kernel {
        ($(#[$doc:meta])* $name:ident, $features:literal, $halves:literal) => {
            $(#[$doc])*
            #[target_feature(enable = $features)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $name<const K: usize, const BLOCKS: bool>(
                palette: &[DualQuat],
                scale_shear: &[Mat3A],
                joints: &[u16],
                weights: &[f32],
                positions: &[Vec3],
                normals: &[Vec3],
                position_blocks: &[Vec3x8],
                normal_blocks: &[Vec3x8],
                out_positions: &mut [Vec3],
                out_normals: &mut [Vec3],
            ) -> usize {
                let np = palette.len();
                debug_assert!(np <= 64);
                // The palette and its negated copy, each entry on a 32-byte
                // boundary so that its one load never splits a cache line
                // (`DualQuat` itself is only 4-byte aligned): entry b at byte
                // 32 b, its negation at 32 (64 + b).
                #[repr(C, align(32))]
                #[derive(Clone, Copy)]
                struct Entry([f32; 8]);
                let mut signed = [[Entry([0.0; 8]); 64]; 2];
                // offsets[a][b]: the byte offset in `signed` of entry b as a vertex
                // whose first influence is a takes it, negated where
                // `real[b] . real[a] < 0` (the scalar path's own dot product, so
                // the same signs). 8 KiB: one 16-bit load gives an influence's
                // address, sign included.
                let mut offsets = [[0u16; 64]; 64];
                for (a, row) in offsets.iter_mut().enumerate().take(np) {
                    let ra = glam::Vec4::from_array(palette[a].real);
                    for (b, (q, o)) in palette.iter().zip(row.iter_mut()).enumerate() {
                        let negated = glam::Vec4::from_array(q.real).dot(ra) < 0.0;
                        *o = (32 * (64 * negated as usize + b)) as u16;
                    }
                    for (table, q) in signed.iter_mut().zip([palette[a], palette[a].negate()]) {
                        let e = &mut table[a].0;
                        e[..4].copy_from_slice(&q.real);
                        e[4..].copy_from_slice(&q.dual);
                    }
                }
                let entries = signed.as_ptr() as *const u8;
                let n = positions.len();
                let blocks = n / 8;
                // Outputs on 16 bytes (the normals' too, when there are
                // any) take 16-byte stores when `$halves`: in the AVX2
                // build on the Emerald Rapids 4.34 against 4.45 ns/vertex
                // (medians of 10 alternated processes), in the AVX-512
                // build 4.17 against 3.96, so not there.
                let on_16 = |v: &[Vec3]| (v.as_ptr() as usize).is_multiple_of(16);
                let halves = $halves
                    && on_16(out_positions)
                    && (out_normals.is_empty() || on_16(out_normals));
                // Vertex v's blended dual quaternion.
                let blend = |v: usize| unsafe {
                    let js = joints.as_ptr().add(v * K);
                    let ws = weights.as_ptr().add(v * K);
                    let j0 = *js as usize;
                    let row = offsets.get_unchecked(j0).as_ptr();
                    let entry = |off: usize| _mm256_load_ps(entries.add(off) as *const f32);
                    let mut acc = _mm256_mul_ps(entry(32 * j0), _mm256_broadcast_ss(&*ws));
                    for k in 1..K {
                        let off = *row.add(*js.add(k) as usize) as usize;
                        acc = _mm256_fmadd_ps(entry(off), _mm256_broadcast_ss(&*ws.add(k)), acc);
                    }
                    acc
                };
                // Software-pipelined in two stages (`lbs_pipelined` has three):
                // block b's sums are transposed into registers first, then, while
                // block b is finished, block b + 1's are blended into the same
                // buffer, two vertices at each of the finish's four pauses.
                let mut sums = [_mm256_setzero_ps(); 8];
                if blocks > 0 {
                    sums = std::array::from_fn(&blend);
                }
                for b in 0..blocks {
                    let base = b * 8;
                    unsafe {
                        let (pb, nb) = (position_blocks, normal_blocks);
                        let scaled = dqs_scaled8::<K, BLOCKS>(
                            scale_shear,
                            joints,
                            weights,
                            base,
                            positions,
                            normals,
                            pb,
                            nb,
                        );
                        let p = || {
                            scaled.map_or_else(|| load3x8_or_block::<BLOCKS>(positions, pb, base), |s| s.0)
                        };
                        let n = || {
                            scaled.map_or_else(|| load3x8_or_block::<BLOCKS>(normals, nb, base), |s| s.1)
                        };
                        let acc = transpose8(sums);
                        if b + 1 < blocks {
                            let mut between = |j: usize| {
                                for v in [2 * j, 2 * j + 1] {
                                    sums[v] = blend(base + 8 + v);
                                }
                            };
                            dqs_finish8(acc, base, p, n, out_positions, out_normals, halves, &mut between);
                        } else {
                            dqs_finish8(acc, base, p, n, out_positions, out_normals, halves, &mut |_| {});
                        }
                    }
                }
                blocks * 8
            }
        };
    }

    dqs_table_kernel!(
        /// DQS of `K` influences for the vertices `0..n / 8 * 8` of a palette
        /// of at most 64 entries, without transposing the palette: the
        /// hemisphere test against the first influence comes from a table
        /// built once per call (`offsets[a][b]`: where entry `b` lies, negated
        /// where `real[b] . real[a] < 0`, with the scalar path's own dot
        /// product, so the same signs), so each influence is one 16-bit load
        /// of its offset and one 32-byte load from the palette or its negated
        /// copy, accumulated per vertex with its weight broadcast from memory
        /// (no bit tests or selects per influence); the eight sums are then
        /// transposed once to SoA form for the rest.
        /// With `scale_shear` not empty, the two-phase variant (see
        /// [`dqs_scaled8`]). With `BLOCKS` the positions and normals of whole
        /// blocks come from `position_blocks` and `normal_blocks` (the
        /// [`BindVertices`](crate::anim::BindVertices) form, three loads each)
        /// instead of being rearranged from `positions` and `normals`. Returns
        /// how many vertices it did.
        ///
        /// # Safety
        /// The CPU has AVX2 and FMA; the streams passed
        /// `skinning::validate_streams`; `palette.len() <= 64`; `scale_shear`
        /// empty or as long as `palette`; with `BLOCKS`, `position_blocks` and
        /// `normal_blocks` hold `positions` and `normals` in blocks of eight
        /// (`normal_blocks` may be empty when `normals` is).
        dqs_table,
        "avx2,fma",
        true
    );

    dqs_table_kernel!(
        /// [`dqs_table`] compiled with AVX-512 (F, VL, BW, DQ) enabled, for
        /// that tier: the same 256-bit code, but with 32 vector registers
        /// instead of 16 the pipelined loop keeps its blended sums and the
        /// rotation's terms in registers (17 spilled registers a trip
        /// against 41 with four influences). On the Emerald Rapids: 4.49 to
        /// 4.51 against 3.97 to 4.00 ns/vertex with four influences and
        /// normals (alternated processes, 5 each).
        ///
        /// # Safety
        /// As [`dqs_table`], and the CPU has AVX-512 F, VL, BW and DQ.
        dqs_table_avx512,
        "avx2,fma,avx512f,avx512vl,avx512bw,avx512dq",
        false
    );

    /// Dual-quaternion skinning of `K` influences for the vertices
    /// `0..n / 8 * 8`, eight at a time in SoA form (with `scale_shear` not
    /// empty, the two-phase variant: [`dqs_scaled8`]); returns how many it
    /// did (the caller finishes the rest one by one).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the streams passed
    /// `skinning::validate_streams`; `scale_shear` empty or as long as
    /// `palette`.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dqs<const K: usize>(
        palette: &[DualQuat],
        scale_shear: &[Mat3A],
        joints: &[u16],
        weights: &[f32],
        positions: &[Vec3],
        normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
    ) -> usize {
        let n = positions.len();
        let blocks = n / 8;
        let sign = _mm256_set1_ps(-0.0);
        let stride = _mm256_setr_epi32(
            0,
            K as i32,
            2 * K as i32,
            3 * K as i32,
            4 * K as i32,
            5 * K as i32,
            6 * K as i32,
            7 * K as i32,
        );
        for b in 0..blocks {
            let base = b * 8;
            unsafe {
                let dq = |k: usize| -> [__m256; 8] {
                    transpose8(std::array::from_fn(|v| {
                        let j = *joints.get_unchecked((base + v) * K + k) as usize;
                        _mm256_loadu_ps(palette.as_ptr().add(j) as *const f32)
                    }))
                };
                let first = dq(0);
                let w0 = _mm256_i32gather_ps::<4>(weights.as_ptr().add(base * K), stride);
                let mut acc: [__m256; 8] = std::array::from_fn(|c| _mm256_mul_ps(first[c], w0));
                for k in 1..K {
                    let q = dq(k);
                    let w = _mm256_i32gather_ps::<4>(weights.as_ptr().add(base * K + k), stride);
                    let d = _mm256_fmadd_ps(
                        q[0],
                        first[0],
                        _mm256_fmadd_ps(
                            q[1],
                            first[1],
                            _mm256_fmadd_ps(q[2], first[2], _mm256_mul_ps(q[3], first[3])),
                        ),
                    );
                    // Antipodality: join the first influence's hemisphere.
                    let w = _mm256_xor_ps(w, _mm256_and_ps(d, sign));
                    for c in 0..8 {
                        acc[c] = _mm256_fmadd_ps(q[c], w, acc[c]);
                    }
                }
                let scaled = dqs_scaled8::<K, false>(
                    scale_shear,
                    joints,
                    weights,
                    base,
                    positions,
                    normals,
                    &[],
                    &[],
                );
                let p = || scaled.map_or_else(|| load3x8(positions, base), |s| s.0);
                let n = || scaled.map_or_else(|| load3x8(normals, base), |s| s.1);
                dqs_finish8(
                    acc,
                    base,
                    p,
                    n,
                    out_positions,
                    out_normals,
                    false,
                    &mut |_| {},
                );
            }
        }
        blocks * 8
    }
}
