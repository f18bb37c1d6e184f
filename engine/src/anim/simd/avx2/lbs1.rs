//! Linear blend skinning of one weightless influence with normals
//! ([`lbs1_normals`]): a table of matrices and cofactors side by side.

use std::arch::x86_64::*;

use crate::anim::simd::lanes::{cofactor, similarity_cofactor};
use glam::{Affine3A, Vec3};

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
/// to keep lengths for a similarity (`deform::similarity_cofactor`)
/// and flagged, else as they are with every flag 0.
#[inline(always)]
fn lbs1_table<const UNIT: bool>(skin: &[Affine3A], table: &mut [std::mem::MaybeUninit<Lbs1Entry>]) {
    for (m, e) in skin.iter().zip(table.iter_mut()) {
        let (k, f) = if UNIT {
            let (k, similar) = similarity_cofactor(&m.matrix3);
            (k, if similar { 0.0 } else { -1.0 })
        } else {
            (cofactor(&m.matrix3), 0.0)
        };
        let (c, t) = (&m.matrix3, m.translation);
        e.write(Lbs1Entry([
            c.x_axis.x, c.x_axis.y, c.x_axis.z, 0.0, k.x_axis.x, k.x_axis.y, k.x_axis.z, 0.0,
            c.y_axis.x, c.y_axis.y, c.y_axis.z, 0.0, k.y_axis.x, k.y_axis.y, k.y_axis.z, 0.0,
            c.z_axis.x, c.z_axis.y, c.z_axis.z, 0.0, k.z_axis.x, k.z_axis.y, k.z_axis.z, 0.0, t.x,
            t.y, t.z, 0.0, 0.0, 0.0, 0.0, f,
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
/// `stream` (see [`stream_outputs`](crate::anim::simd::select::stream_outputs)): with `UNIT`, and both outputs
/// alike modulo 32 bytes, the blocks write their outputs with
/// streaming stores, after a lead of up to seven vertices that puts
/// them on 32 bytes, and prefetch their inputs. The lead and the tail
/// go through the same block code from padded copies, so a vertex's
/// result does not depend on where the streams lie (only, with
/// `UNIT`, on whether its block of eight took the similarity path).
/// Returns whether it took the streaming path.
///
/// # Safety
/// As [`lbs`](fn@super::lbs), with one influence per vertex, no weights, normals as
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
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        // Only the palette's entries are written (no 16 KiB clear per
        // call); validate_streams keeps every joint index inside them.
        let mut table = [const { std::mem::MaybeUninit::<Lbs1Entry>::uninit() }; LBS1_TABLE_MAX];
        lbs1_table::<UNIT>(skin, &mut table);
        let tp = table.as_ptr() as *const f32;
        let n = positions.len();
        let (op, on) = (out_positions.as_mut_ptr(), out_normals.as_mut_ptr());
        // Streaming stores need both outputs on 32 bytes at the same
        // vertex: a lead of up to seven vertices puts them there when
        // they lie alike modulo 32 (else no streaming). Only with
        // `UNIT` (see docs/kernel-notes.md).
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
///
/// # Safety
/// The [tier contract](super); `rest <= 8`; `tp` points at an
/// [`Lbs1Entry`] table with an entry for every joint the `rest` vertices
/// at `s` name; `s`'s pointers are valid for `rest` vertices (reading
/// one joint index and three floats of position and normal each, writing
/// three floats of each output).
#[inline(always)]
unsafe fn lbs1_padded<const UNIT: bool>(tp: *const f32, s: Lbs1Streams, rest: usize) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `tp` points at an [`Lbs1Entry`] table (on
/// 32 bytes) with an entry for vertex `v`'s joint; `s`'s positions and
/// normals are valid for reading vertex `v` and the next vertex's x (one
/// 16-byte load each), and without `STREAM`, `out_positions` for writing
/// the same four floats.
#[inline(always)]
unsafe fn lbs1_vertex<const STREAM: bool>(tp: *const f32, s: Lbs1Streams, v: usize) -> __m256 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `tp` as [`lbs1_vertex`] needs for each of
/// the eight vertices at `s`; `s`'s streams are valid for reading nine
/// vertices (the ninth's x only) and its outputs for writing eight
/// vertices and the ninth's x; with `STREAM`, both outputs lie on 32
/// bytes.
#[inline(always)]
unsafe fn lbs1_block8<const UNIT: bool, const STREAM: bool>(tp: *const f32, s: Lbs1Streams) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
///
/// # Safety
/// The [tier contract](super); `p` is valid for writing 24 floats (96
/// bytes) and lies on a 32-byte boundary.
#[inline(always)]
unsafe fn stream_vec3x8(p: *mut f32, q: [__m256; 4]) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
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
