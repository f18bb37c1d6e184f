//! Linear blend skinning with normals through a three-stage software
//! pipeline ([`lbs_pipelined`]) over a packed palette ([`PackedAffine`]).

use std::arch::x86_64::*;

use glam::{Affine3A, Vec3};

use super::common::{
    cofactor_with_c1, cofactor_without_c1, load_vec3x8, load_x8, normalised8, soa4,
    store_vec3x8_either,
};
use super::lbs::lbs;
use crate::anim::simd::lanes::Vec3x8;

/// One block's `cofactor(M) n` (x, y, z over the eight), before
/// normalisation.
#[repr(C, align(32))]
#[derive(Clone, Copy)]
struct CofactorBlock([__m256; 3]);

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
            c0.x, c0.y, c0.z, t.x, c1.x, c1.y, c1.z, t.y, c2.x, c2.y, c2.z, t.z, 0.0, 0.0, 0.0, 0.0,
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
        // Measured (a6c9cbe): 3.50 to 3.39 ns/vertex, pipelined LBS, Emerald Rapids;
        // on a Zen 3 (25d93df) 3.79 to 3.73 (no loss there).
        std::arch::asm!(
            "/* {0} */",
            inout(reg) a,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    a as *const f32
}

/// Vertex `v`'s blended matrix from a [`packed_palette`]: `[c0 t.x |
/// c1 t.y]` and `[c2 t.z]` (as `lbs::blend_affine`, with the second
/// register's FMAs 128 bits wide). With `TIMES8`, `joints` holds the
/// indices times 8.
///
/// # Safety
/// The [tier contract](super); `(v + 1) * K` is at most `joints.len()` and
/// `weights.len()`; `sp` points at a packed palette ([`PackedAffine`], on
/// 64 bytes) holding every entry those `K` indices name (with `TIMES8`,
/// the indices are each entry's index times 8).
#[inline(always)]
unsafe fn blend_packed<const K: usize, const TIMES8: bool>(
    sp: *const PackedAffine,
    joints: &[u16],
    weights: &[f32],
    v: usize,
) -> (__m256, __m128) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let js = joints.as_ptr().add(v * K);
        let ws = weights.as_ptr().add(v * K);
        // Each index by a load of its own and each weight by a
        // broadcast from memory (the one-load alternative: see
        // docs/kernel-notes.md).
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
            // The entry's address in a register of its own (see
            // [`in_register`]): an FMA with an indexed memory operand
            // costs Intel cores two micro-operations where a plain one
            // costs one.
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
/// separate slice arguments, not a pair, so that LLVM keeps their
/// `noalias` (see docs/kernel-notes.md). With
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// As [`lbs_pipelined`]; with `HALVES`, both outputs lie on 16 bytes.
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
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            // Blends vertices j and j + 4 of block k and pairs their
            // columns (two lane permutes and an insert) here, in the
            // load-bound stage.
            let blend_pair = |k: usize, j: usize| {
                let to = bl.add(k & 1);
                let (a, b) = blend_packed::<K, BLOCKS>(sp, indices, weights, k * 8 + j);
                let (c, d) = blend_packed::<K, BLOCKS>(sp, indices, weights, k * 8 + j + 4);
                (*to).0[j] = [
                    _mm256_permute2f128_ps(a, c, 0x20),
                    _mm256_permute2f128_ps(a, c, 0x31),
                    _mm256_set_m128(d, b),
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
            // trip before's longest chain, which the start of a trip
            // would wait on.
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
                // Measured (a0c6ce6): 3.89 to 3.65 ns/vertex, pipelined LBS, Emerald
                // Rapids; on a Zen 3 (25d93df) 3.75 to 3.73 (no loss there).
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
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `v` is valid for reading eight `Vec3` (96
/// bytes); with `BLOCKS` it is a [`Vec3x8`] (on 32 bytes).
#[inline(always)]
unsafe fn load_block<const BLOCKS: bool>(v: *const Vec3) -> (__m256, __m256, __m256) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `bl` and `cf` point at two-entry buffers
/// (`k & 1` indexes them), `bl[k & 1]` holding block `k`'s blends; `pp`
/// and `np` are valid for block `k`'s eight vertices as [`load_block`]
/// reads them; `opp` is valid for writing block `k`'s eight positions,
/// on 16 bytes when `halves`.
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
