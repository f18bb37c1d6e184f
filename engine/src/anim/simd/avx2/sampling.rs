//! Sampling: SQUAD and slerp of eight tracks at a time.

use std::arch::x86_64::*;

use super::common::{soa4, soa4_from};
use crate::anim::simd::lanes::{
    soa_float, PoseSink, SoaTransforms8, SoloVec3, SquadSpan, Transform, Vec3Field, ACOS_COEFFS,
    MIN_SLERP_ANGLE,
};
use glam::{Quat, Vec4};

/// `sin(x)` for x in [0, pi/2], as `quat::sin4`.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn sin8(x: __m256) -> __m256 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn acos8(x: __m256) -> __m256 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
pub unsafe fn squad8<P: PoseSink + ?Sized>(rows: &[[f32; 8]], u: f32, joints: &[u16], out: &mut P) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    spans: &[&SquadSpan; 8],
    u: &[f32; 8],
    joints: &[u16],
    out: &mut P,
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn squad_lanes(row: impl Fn(usize) -> __m256, uu: __m256) -> [__m256; 4] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let l = row;
        let vv = _mm256_sub_ps(_mm256_set1_ps(1.0), uu);
        let (s0, s1) = slerp_weights8(l(16), l(17), uu);
        let (s2, s3) = slerp_weights8(l(18), l(19), uu);
        let p: [__m256; 4] =
            std::array::from_fn(|c| _mm256_fmadd_ps(l(c), s0, _mm256_mul_ps(l(4 + c), s1)));
        let r: [__m256; 4] =
            std::array::from_fn(|c| _mm256_fmadd_ps(l(8 + c), s2, _mm256_mul_ps(l(12 + c), s3)));
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
///
/// # Safety
/// The [tier contract](super); `joints` holds at most eight joints, each
/// inside `out`.
#[inline(always)]
unsafe fn store_quats<P: PoseSink + ?Sized>(q: [__m256; 4], joints: &[u16], out: &mut P) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `joints` holds at most eight joints, each
/// inside `out` (a block for every eight joints).
#[inline(always)]
unsafe fn store_quats_soa(q: [__m256; 4], joints: &[u16], out: &mut [SoaTransforms8]) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let l = |r: &[[f32; 8]], i: usize| _mm256_loadu_ps(r.get_unchecked(i).as_ptr());
        let (wa, wb) = slerp_weights8(l(angles, 0), l(angles, 1), _mm256_set1_ps(u));
        let q = std::array::from_fn(|c| _mm256_fmadd_ps(l(k0, c), wa, _mm256_mul_ps(l(k1, c), wb)));
        store_quats(q, joints, out);
    }
}

/// A fixed-angle slerp's two weights per lane, `sin((1-u) theta) /
/// sin theta` and `sin(u theta) / sin theta`, from the angle, its
/// reciprocal sine and the fraction.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn slerp_weights8(theta: __m256, inv: __m256, uu: __m256) -> (__m256, __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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

/// The solo translation and scale tracks with AVX2: a track lerps its
/// two keys in one register (each key one 16-byte load; the keys end with
/// a padding key) and stores the three floats, into the joint's
/// `Transform` or its three rows of a `SoaPose` block: the scalar loop's
/// arithmetic, bit for bit.
///
/// # Safety
/// The [tier contract](super); `s` was built by `Clip::build` (every
/// index inside its array, a padding key after the last track's keys);
/// `iv`, `fr` hold every timeline's interval and fraction (as
/// `locate_all` writes them) and `out` one transform per joint of `s`.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub unsafe fn solo_vec3<P: PoseSink + ?Sized>(s: &SoloVec3, iv: &[u32], fr: &[f32], out: &mut P) {
    use std::mem::offset_of;
    let (t_at, s_at) = (
        offset_of!(Transform, translation),
        offset_of!(Transform, scale),
    );
    let keys = s.keys.as_ptr() as *const f32;
    debug_assert!(
        P::SOA
            || s.joints
                .iter()
                .all(|&j| (j as usize) < out.as_transforms().len())
    );
    debug_assert!(
        !P::SOA
            || s.joints
                .iter()
                .all(|&j| soa_float(j as usize, 9) < out.as_blocks().len() * 80)
    );
    // Transforms through `op`, a SoaPose's rows through `bp` (the other
    // is empty and unused).
    let op = out.as_transforms().as_mut_ptr() as *mut u8;
    let bp = out.as_blocks().as_mut_ptr() as *mut f32;
    let size = std::mem::size_of::<Transform>();
    for k in 0..s.joints.len() {
        // SAFETY: built so: every index in the block is inside its
        // array, keys `at` and `at + 1` are a track's (the padding key
        // after the last), and the joint inside `out`.
        unsafe {
            let tl = *s.timelines.get_unchecked(k) as usize;
            let (i, u) = (*iv.get_unchecked(tl), *fr.get_unchecked(tl));
            let at = *s.offsets.get_unchecked(k) as usize + i as usize;
            let k0 = _mm_loadu_ps(keys.add(at * 3));
            let k1 = _mm_loadu_ps(keys.add(at * 3 + 3));
            let r = _mm_add_ps(
                _mm_mul_ps(k0, _mm_set1_ps(1.0 - u)),
                _mm_mul_ps(k1, _mm_set1_ps(u)),
            );
            let field = if *s.fields.get_unchecked(k) == Vec3Field::Scale {
                s_at
            } else {
                t_at
            };
            let j = *s.joints.get_unchecked(k) as usize;
            if P::SOA {
                // x, y, z into their three rows of the joint's block.
                let row = if field == s_at { 7 } else { 0 };
                let dst = bp.add(soa_float(j, row));
                _mm_store_ss(dst, r);
                _mm_store_ss(dst.add(8), _mm_movehdup_ps(r));
                _mm_store_ss(dst.add(16), _mm_movehl_ps(r, r));
                continue;
            }
            let dst = op.add(j * size + field) as *mut f32;
            _mm_store_sd(dst as *mut f64, _mm_castps_pd(r));
            _mm_store_ss(dst.add(2), _mm_movehl_ps(r, r));
        }
    }
}
