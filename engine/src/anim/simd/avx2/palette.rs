//! Skin matrices as 4x3 rows ([`palette_rows_4x3`]).

use std::arch::x86_64::*;

use crate::anim::simd::lanes::Affine4x3;
use glam::Affine3A;

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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let mp = model.as_ptr() as *const f32;
        let ip = inverse_rows.as_ptr() as *const f32;
        let op = out.as_mut_ptr() as *mut f32;
        // [v.x x4 | v.y x4] from [v | v]: one in-lane permute. The
        // index goes through `black_box` so that LLVM cannot see it is
        // constant: seeing it, it rewrites each permute into a 128-bit
        // permute and a lane-crossing `vpermpd`, about a fifth slower.
        // Measured (4b91eab): 3.10 to 2.46 ns/joint for the 4x3 palette, Emerald
        // Rapids; 3.00 to 2.40 on a Zen 3 (25d93df).
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
