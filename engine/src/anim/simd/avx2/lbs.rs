//! Linear blend skinning, one block of eight at a time ([`lbs`]) and
//! positions only ([`lbs_positions`]), and the cache-line-aligned palette
//! copy ([`aligned_palette`]) the LBS kernels read.

use std::arch::x86_64::*;

use super::common::{
    add_halves, cofactor_times8, cross128, cross256, load_affine, load_vec3x8, normalize3,
    soa3_from, splat2, store3, store_normalised8, store_vec3x8,
};
use glam::{Affine3A, Vec3};

/// Linear blend skinning of `K` influences per vertex: each vertex's
/// matrix is blended in AVX registers (with four influences, the
/// indices and the weights come in one load each), then eight at a time
/// are turned into structure-of-arrays form in registers (vertex v
/// paired with v + 4 by lane permutes, then unpacks) for the position,
/// the cofactor normal and its normalisation, which then cost a few
/// lanes each. The last vertices (fewer than eight) go one at a time.
/// Two to four influences with normals take [`lbs_pipelined`](fn@super::lbs_pipelined) (the same
/// steps, blocks overlapped), positions without normals
/// [`lbs_positions`], and one weightless influence with normals
/// [`lbs1_normals`](super::lbs1_normals).
///
/// With `K == 1` and no weights (validated: each weight 1) the
/// matrices are used as they are, no weight read or multiplied.
///
/// # Safety
/// The CPU has AVX2 and FMA; the streams passed
/// `deform::validate_streams` (every joint index inside `skin`,
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
    // SAFETY: called only with vertices inside the streams, which this
    // function's `# Safety` contract covers.
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
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
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
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
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

/// One block of eight vertices' blended matrices with vertex v and
/// v + 4 paired: `[p][c]` is column `c` (c0, c1, c2, t) of vertex `p`
/// in the low half and of vertex `p + 4` in the high half.
#[repr(C, align(32))]
#[derive(Clone, Copy)]
struct PairedBlock([[__m256; 4]; 4]);

/// Two vertices' blended matrices as [`blend_affine`] leaves them
/// (`[c0 | c1]`, `[c2 | t]`), paired column by column by 128-bit lane
/// permutes: a [`PairedBlock`] row, vertex `a` in the low halves.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn pair_vertices((a, c): (__m256, __m256), (b, d): (__m256, __m256)) -> [__m256; 4] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `c < 4`.
#[inline(always)]
unsafe fn paired_column(m: &PairedBlock, c: usize) -> [__m256; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let m = &m.0;
        let (x, y, z) = soa3_from(m[0][c], m[1][c], m[2][c], m[3][c]);
        [x, y, z]
    }
}

/// `[x x4 | y x4]` and `[z x4 | z x4]` from `q = (x, y, z, _)`: the
/// right operands for an affine matrix held as `[c0 | c1]`, `[c2 | t]`
/// (blend a 1 into the upper half of the second for the translation).
/// `idx` is [`PermuteIdx`]'s: in-lane permutes of `[q | q]`.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn splat_xy_zz(q: __m128, idx: &PermuteIdx) -> (__m256, __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    /// # Safety
    /// The [tier contract](super): the CPU has this tier's target features;
    /// nothing else (no raw pointer, no unchecked index).
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let p = |x: i32, y: i32| _mm256_setr_epi32(x, x, x, x, y, y, y, y);
            // Measured (4b91eab): LBS positions with one influence about 10 per cent
            // faster, Emerald Rapids; on a Zen 3 (25d93df) 0.99 to 0.91 ns/vertex
            // with one influence, 2.66 to 2.56 with four.
            std::hint::black_box(Self(
                [p(0, 1), p(3, 0), p(2, 3), p(1, 2)],
                _mm256_set1_epi32(2),
            ))
        }
    }
}

/// `v[i]` as `(x, y, z, _)`: one 16-byte load reaching into `v[i + 1]`
/// when there is one, else the three floats alone.
///
/// # Safety
/// The [tier contract](super); `i < v.len()`.
#[inline(always)]
unsafe fn load_vec3(v: &[Vec3], i: usize) -> __m128 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `(v + 1) * K <= joints.len()`, and with `W`
/// `(v + 1) * K <= weights.len()`; `sp` points at a palette of `Affine3A`
/// holding every entry those `K` indices name.
#[inline(always)]
unsafe fn blend_affine<const K: usize, const W: bool>(
    sp: *const Affine3A,
    joints: &[u16],
    weights: &[f32],
    v: usize,
) -> (__m256, __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        if weights.is_empty() {
            lbs_positions_with::<K, false>(skin, joints, weights, positions, out_positions);
        } else {
            lbs_positions_with::<K, true>(skin, joints, weights, positions, out_positions);
        }
    }
}

/// # Safety
/// As [`lbs_positions`], with `W` saying whether `weights` is not empty.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn lbs_positions_with<const K: usize, const W: bool>(
    skin: &[Affine3A],
    joints: &[u16],
    weights: &[f32],
    positions: &[Vec3],
    out_positions: &mut [Vec3],
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
            let zw = |i: usize| _mm256_blend_ps(_mm256_broadcast_ss(&*f.add(3 * i + 2)), one, 0xF0);
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
