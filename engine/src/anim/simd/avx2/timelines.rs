//! Finding key intervals: a lane group's eight timelines at once
//! ([`locate_group_avx2`]) and keys counted eight at a time
//! ([`count_at_or_before_avx2`]).

use std::arch::x86_64::*;

use crate::anim::simd::lanes::{LaneGroup, LANES};

/// [`locate_one`](crate::anim::pose::timelines::locate_one) for the eight timelines of `group` at once: the number
/// of keys at or before `t` per lane (a compare and a subtract per row;
/// the `+inf` padding never counts) and the interval's two keys (kept by a
/// blend and a minimum per row as the scan passes them), then the
/// fraction divided out; lanes at or before their first key, or at
/// or after their last, take `(0, 0)` and `(len - 2, 1)`. Every lane's
/// result is the scalar one, bit for bit. `interval` comes in holding the
/// previous sample's intervals: a hint for where the count may start,
/// tested before it is used (whatever it holds, the result is the same).
///
/// # Safety
/// The CPU has AVX2; `group` was laid out in `times` by
/// [`Timelines::build`](crate::anim::pose::timelines::Timelines::build) (`rows` rows of eight from `at`, each `lens` entry
/// between 2 and `rows`; the seek index is only a hint); both outputs hold
/// eight entries.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) unsafe fn locate_group_avx2(
    times: &[f32],
    group: &LaneGroup,
    t: f32,
    interval: &mut [u32],
    fraction: &mut [f32],
) {
    debug_assert!(group.at as usize + group.rows as usize * LANES <= times.len());
    debug_assert!(interval.len() == LANES && fraction.len() == LANES);
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let base = times.as_ptr().add(group.at as usize);
        let tv = _mm256_set1_ps(t);
        // Two counts (even and odd rows) halve the chain of subtracts.
        let mut c1 = _mm256_setzero_si256();
        let rows = group.rows as usize;
        let row = |k: usize| _mm256_loadu_ps(base.add(k * LANES));
        let le = |v: __m256| _mm256_cmp_ps::<_CMP_LE_OQ>(v, tv);
        // Rows rise in every lane (+inf padding last). So every row before
        // one at or before t in all eight lanes is too, and the count can
        // start at such a row. Two hints name one: the previous sample's
        // smallest interval (playing on, it skips all but a few rows) and
        // the seek index's row for t's bucket (after a jump, it skips all
        // but two or three). Each is tested (so any hint is safe), and the
        // later of those that pass is taken without a branch (which way a
        // test goes after a jump is not predictable). And once a row lies
        // after t in all eight lanes, so do the rest: the scan stops there.
        let hint = (interval.iter().copied().min().unwrap_or(0) as usize).min(rows - 1);
        let seek = (*group.starts.get_unchecked(group.bucket(t)) as usize).min(rows - 1);
        let passes = |h: usize| _mm256_movemask_ps(le(row(h))) == 0xFF;
        let hint = if passes(hint) { hint } else { 0 };
        let seek = if passes(seek) { seek } else { 0 };
        let mut k = hint.max(seek);
        let mut c0 = _mm256_set1_epi32(k as i32);
        // Each lane's interval keys come out of the scan: the last row at
        // or before t (rows rise, so the last one taken) and the first
        // after it (the least of those after).
        let inf = _mm256_set1_ps(f32::INFINITY);
        let (mut lo, mut hi) = (_mm256_setzero_ps(), inf);
        let mut take = |v: __m256| {
            let m = le(v);
            lo = _mm256_blendv_ps(lo, v, m);
            hi = _mm256_min_ps(hi, _mm256_blendv_ps(v, inf, m));
            _mm256_castps_si256(m)
        };
        while k + 2 <= rows {
            let even = take(row(k));
            let odd = take(row(k + 1));
            c0 = _mm256_sub_epi32(c0, even);
            c1 = _mm256_sub_epi32(c1, odd);
            k += 2;
            if _mm256_testz_si256(odd, odd) != 0 {
                k = rows;
            }
        }
        if k < rows {
            c0 = _mm256_sub_epi32(c0, take(row(k)));
        }
        let count = _mm256_add_epi32(c0, c1);
        let lens = _mm256_loadu_si256(group.lens.as_ptr() as *const __m256i);
        let first = _mm256_cmp_ps::<_CMP_LE_OQ>(tv, _mm256_loadu_ps(base));
        let last = _mm256_cmpeq_epi32(count, lens);
        let i = _mm256_min_epi32(
            _mm256_max_epi32(
                _mm256_sub_epi32(count, _mm256_set1_epi32(1)),
                _mm256_setzero_si256(),
            ),
            _mm256_sub_epi32(lens, _mm256_set1_epi32(2)),
        );
        // At or before the first key: interval 0 (repeated first keys
        // counted more than one).
        let i = _mm256_andnot_si256(_mm256_castps_si256(first), i);
        _mm256_storeu_si256(interval.as_mut_ptr() as *mut __m256i, i);
        // Inside (neither end): lo = key(i) <= t < hi = key(i + 1), so
        // hi - lo > 0. At either end the fraction is set below.
        let u = _mm256_div_ps(_mm256_sub_ps(tv, lo), _mm256_sub_ps(hi, lo));
        let u = _mm256_min_ps(_mm256_max_ps(u, _mm256_setzero_ps()), _mm256_set1_ps(1.0));
        let u = _mm256_blendv_ps(u, _mm256_set1_ps(1.0), _mm256_castsi256_ps(last));
        let u = _mm256_andnot_ps(first, u);
        _mm256_storeu_ps(fraction.as_mut_ptr(), u);
    }
}

/// `keys_at_or_before` for `8 <= times.len()`: a compare and a bit count
/// per eight keys, the last eight loaded flush with the end (their lanes
/// already counted shifted out).
///
/// # Safety
/// The CPU has AVX2 and POPCNT; `times.len()` is at least 8.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
pub(crate) unsafe fn count_at_or_before_avx2(times: &[f32], t: f32) -> usize {
    let n = times.len();
    let p = times.as_ptr();
    let tv = _mm256_set1_ps(t);
    let le = |i: usize| {
        // SAFETY: i + 8 <= n.
        let k = unsafe { _mm256_loadu_ps(p.add(i)) };
        _mm256_movemask_ps(_mm256_cmp_ps(k, tv, _CMP_LE_OQ)) as u32
    };
    let mut count = 0;
    let mut i = 0;
    while i + 8 <= n {
        count += le(i).count_ones();
        i += 8;
    }
    if i < n {
        count += (le(n - 8) >> (8 - (n - i))).count_ones();
    }
    count as usize
}
