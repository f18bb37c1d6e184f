//! Blending of two or more poses, `[Transform]` and SoA.

use super::common::soa4_from;
use crate::anim::simd::lanes::{SoaTransforms8, Transform};
use std::arch::x86_64::*;

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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn rsqrt_newton8(d: __m256) -> __m256 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn normalise_quats_or(q: [__m256; 4], d: __m256, fallback: [__m256; 4]) -> [__m256; 4] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
