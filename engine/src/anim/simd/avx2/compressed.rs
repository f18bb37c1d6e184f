//! Compressed clips: eight quantized tracks decoded and interpolated at
//! once (the scalar definition is `pose::compressed::decode`).

use std::arch::x86_64::*;

use crate::anim::simd::lanes::PackedLanes;

/// The two samples of eight tracks (see [`PackedLanes`]) decoded from
/// `data`, each lane's later sample its `row` bits after the earlier,
/// and interpolated at its `u`: returns the lerped `x, y, z` rows (for translation and scale
/// tracks) and the nlerped quaternion rows `x, y, z, w` (for rotation
/// tracks, `w` rebuilt as `sqrt(max(0, 1 - x² - y² - z²))`). The same
/// operations in the same order as the scalar decoder (no fused
/// multiply-adds), so the results are the same bits.
///
/// # Safety
/// The [tier contract](super), and: for every lane and component, the
/// four bytes at `(pos + c * bits [+ row]) / 8` lie inside `data` (the
/// bit stream's padding guarantees it for a built or validated clip),
/// and every bit position fits an `i32`.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn decode8(data: &[u8], l: &PackedLanes) -> ([[f32; 8]; 3], [[f32; 8]; 4]) {
    // SAFETY: AVX2 enabled on this function; the loads read the lane
    // arrays of `l` (eight values each); the gathers read four bytes at
    // offsets the caller guarantees inside `data`.
    unsafe {
        let ld = |a: &[f32; 8]| _mm256_loadu_ps(a.as_ptr());
        let pos = _mm256_loadu_si256(l.pos.as_ptr().cast());
        let bits = _mm256_loadu_si256(l.bits.as_ptr().cast());
        let ones = _mm256_set1_epi32(1);
        let mask = _mm256_sub_epi32(_mm256_sllv_epi32(ones, bits), ones);
        let inv = ld(&l.inv_levels);
        let seven = _mm256_set1_epi32(7);
        let base = data.as_ptr().cast::<i32>();
        let read = |p: __m256i| -> __m256 {
            let w = _mm256_i32gather_epi32::<1>(base, _mm256_srli_epi32::<3>(p));
            let q = _mm256_and_si256(_mm256_srlv_epi32(w, _mm256_and_si256(p, seven)), mask);
            _mm256_cvtepi32_ps(q)
        };
        let rowv = _mm256_loadu_si256(l.row.as_ptr().cast());
        let mut a = [_mm256_setzero_ps(); 3];
        let mut b = [_mm256_setzero_ps(); 3];
        for c in 0..3 {
            let p = _mm256_add_epi32(pos, _mm256_mullo_epi32(bits, _mm256_set1_epi32(c as i32)));
            let smin = ld(&l.seg_min[c]);
            let sext = ld(&l.seg_ext[c]);
            let cmin = ld(&l.clip_min[c]);
            let cext = ld(&l.clip_ext[c]);
            let deq = |q: __m256| {
                let n = _mm256_mul_ps(q, inv);
                let v01 = _mm256_add_ps(smin, _mm256_mul_ps(sext, n));
                _mm256_add_ps(cmin, _mm256_mul_ps(cext, v01))
            };
            a[c] = deq(read(p));
            b[c] = deq(read(_mm256_add_epi32(p, rowv)));
        }
        let w1 = ld(&l.u);
        let w0 = _mm256_sub_ps(_mm256_set1_ps(1.0), w1);
        let lerp = |x: __m256, y: __m256| _mm256_add_ps(_mm256_mul_ps(x, w0), _mm256_mul_ps(y, w1));
        let mut v3 = [[0.0f32; 8]; 3];
        for c in 0..3 {
            _mm256_storeu_ps(v3[c].as_mut_ptr(), lerp(a[c], b[c]));
        }
        let one = _mm256_set1_ps(1.0);
        let zero = _mm256_setzero_ps();
        let wof = |v: &[__m256; 3]| {
            let s = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(v[0], v[0]), _mm256_mul_ps(v[1], v[1])),
                _mm256_mul_ps(v[2], v[2]),
            );
            _mm256_sqrt_ps(_mm256_max_ps(_mm256_sub_ps(one, s), zero))
        };
        let qa = [a[0], a[1], a[2], wof(&a)];
        let qb = [b[0], b[1], b[2], wof(&b)];
        let mut d = _mm256_mul_ps(qa[0], qb[0]);
        for c in 1..4 {
            d = _mm256_add_ps(d, _mm256_mul_ps(qa[c], qb[c]));
        }
        let neg = _mm256_and_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(d, zero), _mm256_set1_ps(-0.0));
        let r: [__m256; 4] = std::array::from_fn(|c| lerp(qa[c], _mm256_xor_ps(qb[c], neg)));
        let mut len2 = _mm256_mul_ps(r[0], r[0]);
        for rc in &r[1..] {
            len2 = _mm256_add_ps(len2, _mm256_mul_ps(*rc, *rc));
        }
        let k = _mm256_div_ps(one, _mm256_sqrt_ps(len2));
        let mut q4 = [[0.0f32; 8]; 4];
        for c in 0..4 {
            _mm256_storeu_ps(q4[c].as_mut_ptr(), _mm256_mul_ps(r[c], k));
        }
        (v3, q4)
    }
}
