//! The CPU morph's pass ([`lanes::morph_pass`], the definition) in AVX2:
//! a block of eight vertices' sums in six registers, each active target's
//! rows multiplied and added (kept apart, no FMA: the same floats as the
//! definition), the normals renormalised with an exact square root and
//! division (the definition's `normalize_or_zero`), and the `Vec3` streams
//! written with in-register transposes instead of lane-by-lane stores.
//! A last partial block is left to the definition.

use std::arch::x86_64::*;

use super::common::{load_x8, store_vec3x8};
use crate::anim::simd::lanes::{self, MorphEntry, MorphOut, Vec3x8};
use glam::Vec3;

/// [`lanes::morph_pass`] in AVX2: the same arguments, the same results,
/// bit for bit.
///
/// # Safety
/// The tier contract ([`super`]); the slices are those the definition
/// takes (every index is checked).
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn morph_pass(
    base_blocks: (&[Vec3x8], &[Vec3x8]),
    base_tail: (&[Vec3], &[Vec3]),
    b0: usize,
    pass: &mut [MorphEntry],
    first: bool,
    last: bool,
    out: MorphOut,
) {
    let n = out.positions.len();
    let whole = n / 8;
    let with_normals = !out.normals.is_empty();
    // SAFETY: the tier contract; every load and store below goes through
    // a checked reference or slice (`load_x8` of a block, `store_vec3x8`
    // of `8 lb + 8 <= n` vertices).
    unsafe {
        let zero = _mm256_setzero_ps();
        for lb in 0..whole {
            let (pb, nb) = if first {
                (&base_blocks.0[lb], base_blocks.1.get(lb))
            } else {
                (&out.position_blocks[lb], out.normal_blocks.get(lb))
            };
            let mut p = load_x8(pb);
            let mut q = nb.map_or([zero; 3], |b| load_x8(b));
            let b = b0 + lb;
            for e in pass.iter_mut() {
                let d = if e.index.is_empty() {
                    &e.blocks[b]
                } else if e.index.get(e.cursor).is_some_and(|&i| i as usize == b) {
                    e.cursor += 1;
                    &e.blocks[e.cursor - 1]
                } else {
                    continue;
                };
                let w = _mm256_set1_ps(e.weight);
                let dp = load_x8(&d[0]);
                for c in 0..3 {
                    p[c] = _mm256_add_ps(p[c], _mm256_mul_ps(dp[c], w));
                }
                if with_normals {
                    let dq = load_x8(&d[1]);
                    for c in 0..3 {
                        q[c] = _mm256_add_ps(q[c], _mm256_mul_ps(dq[c], w));
                    }
                }
            }
            if last && with_normals {
                q = normalize_or_zero8(q);
            }
            store_x8(&mut out.position_blocks[lb], p);
            if with_normals {
                store_x8(&mut out.normal_blocks[lb], q);
            }
            if last {
                store_vec3x8(out.positions, 8 * lb, p[0], p[1], p[2]);
                if with_normals {
                    store_vec3x8(out.normals, 8 * lb, q[0], q[1], q[2]);
                }
            }
        }
    }
    if 8 * whole < n {
        let tail = MorphOut {
            position_blocks: &mut [],
            normal_blocks: &mut [],
            positions: &mut out.positions[8 * whole..],
            normals: match out.normals.get_mut(8 * whole..) {
                Some(s) => s,
                None => &mut [],
            },
        };
        lanes::morph_pass((&[], &[]), base_tail, b0 + whole, pass, first, last, tail);
    }
}

/// Three aligned stores into a block.
///
/// # Safety
/// The tier contract only (`b` is a reference to a block on 32 bytes).
#[inline(always)]
unsafe fn store_x8(b: &mut Vec3x8, [x, y, z]: [__m256; 3]) {
    // SAFETY: as the function's contract says.
    unsafe {
        _mm256_store_ps(b.x.as_mut_ptr(), x);
        _mm256_store_ps(b.y.as_mut_ptr(), y);
        _mm256_store_ps(b.z.as_mut_ptr(), z);
    }
}

/// The definition's `normalize_or_zero` on eight lanes: `r = 1 /
/// sqrt((x x + y y) + z z)`, each lane times `r` where `0 < r < inf`,
/// else zero.
///
/// # Safety
/// The tier contract only.
#[inline(always)]
unsafe fn normalize_or_zero8([x, y, z]: [__m256; 3]) -> [__m256; 3] {
    // SAFETY: as the function's contract says.
    unsafe {
        let d = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)),
            _mm256_mul_ps(z, z),
        );
        let r = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(d));
        let keep = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GT_OQ>(r, _mm256_setzero_ps()),
            _mm256_cmp_ps::<_CMP_LT_OQ>(r, _mm256_set1_ps(f32::INFINITY)),
        );
        [x, y, z].map(|v| _mm256_and_ps(_mm256_mul_ps(v, r), keep))
    }
}
