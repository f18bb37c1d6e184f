//! Dual-quaternion skinning: per-block blends ([`dqs`]), the table
//! kernel ([`dqs_table`]) and the two-phase scale/shear variant.

use std::arch::x86_64::*;

use super::common::{
    cofactor_times8, load_vec3x8, load_x8, normalised8, soa3_from, store_vec3x8_either,
};
use crate::anim::simd::lanes::{DualQuat, Vec3x8};
use glam::{Mat3A, Vec3};

/// Transposes eight 8-float rows.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
pub(crate) unsafe fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `base + 8 <= out_positions.len()`, and
/// `out_normals` empty or as long as `out_positions`; with `halves`, both
/// outputs lie on 16 bytes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn dqs_finish8(
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); vertices `base..base + 8` are inside the
/// streams (`joints` and `weights` hold `K` entries each for them, each
/// joint inside `scale_shear` when it is not empty); with `BLOCKS`, block
/// `base / 8` is inside `position_blocks` (and `normal_blocks` when there
/// are normals).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn dqs_scaled8<const K: usize, const BLOCKS: bool>(
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `base + 8 <= v.len()`.
#[inline(always)]
pub(crate) unsafe fn load3x8(v: &[Vec3], base: usize) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let (x, y, z) = load_vec3x8(v, base);
        [x, y, z]
    }
}

/// Vertices `base..base + 8` (`base` a multiple of 8) in SoA form: with
/// `BLOCKS` block `base / 8` of `blocks` ([`load_x8`]), else
/// [`load3x8`] of `v`.
///
/// # Safety
/// The [tier contract](super); with `BLOCKS`, `base / 8 < blocks.len()`,
/// else `base + 8 <= v.len()`.
#[inline(always)]
pub(crate) unsafe fn load3x8_or_block<const BLOCKS: bool>(
    v: &[Vec3],
    blocks: &[Vec3x8],
    base: usize,
) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
/// form as in [`lbs`](fn@super::lbs). Not inlined into the rigid kernels' loops; its
/// own target features, so that the closures inside get them too
/// (without them the intrinsics there become calls).
///
/// # Safety
/// The [tier contract](super); `joints` and `weights` hold `K` entries for
/// each of the vertices `base..base + 8`, and every one of those joints
/// is inside `scale_shear`.
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
pub(crate) unsafe fn scale_phase8<const K: usize>(
    scale_shear: &[Mat3A],
    joints: &[u16],
    weights: &[f32],
    base: usize,
    [px, py, pz]: [__m256; 3],
    [nx, ny, nz]: [__m256; 3],
) -> ([__m256; 3], [__m256; 3]) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
/// [`dqs_table`] (AVX2 and FMA) and [`dqs_table_avx512`](crate::anim::simd::avx512::dqs_table_avx512) are the same
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
            // any) take 16-byte stores when `$halves` (the AVX2 build;
            // not the AVX-512 one: see docs/kernel-notes.md).
            let on_16 = |v: &[Vec3]| (v.as_ptr() as usize).is_multiple_of(16);
            let halves = $halves
                && on_16(out_positions)
                && (out_normals.is_empty() || on_16(out_normals));
            // Vertex v's blended dual quaternion.
            // SAFETY: called only with vertices inside the streams, which this
            // function's `# Safety` contract covers.
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
                // SAFETY: the caller upholds this function's `# Safety` contract, which
                // covers every operation in the block.
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
pub(crate) use dqs_table_kernel;

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
    /// `deform::validate_streams`; `palette.len() <= 64`; `scale_shear`
    /// empty or as long as `palette`; with `BLOCKS`, `position_blocks` and
    /// `normal_blocks` hold `positions` and `normals` in blocks of eight
    /// (`normal_blocks` may be empty when `normals` is).
    dqs_table,
    "avx2,fma",
    true
);

/// Dual-quaternion skinning of `K` influences for the vertices
/// `0..n / 8 * 8`, eight at a time in SoA form (with `scale_shear` not
/// empty, the two-phase variant: [`dqs_scaled8`]); returns how many it
/// did (the caller finishes the rest one by one).
///
/// # Safety
/// The CPU has AVX2 and FMA; the streams passed
/// `deform::validate_streams`; `scale_shear` empty or as long as
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
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
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
