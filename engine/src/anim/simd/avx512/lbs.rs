//! AVX-512 (F, VL, BW, DQ) kernels: sixteen f32 lanes per register, two-
//! source lane permutes (`vpermt2ps`) and mask registers.
//!
//! Only called after [`crate::anim::simd::tier`] said `Avx512`. On Zen 4
//! the 512-bit operations are double-pumped, so a zmm operation costs the
//! same execution time as two ymm ones: the gains are in fewer instructions
//! (front end, register pressure) and in shuffles that do in one step what
//! AVX2 needs two or three for.

use std::arch::x86_64::*;

use glam::{Affine3A, Vec3};

use crate::anim::simd::lanes::Vec3x8;

/// Lanes between sixteen `Vec3` (48 floats: registers m0, m1, m2) and three
/// registers of x, y and z over the vertices.
///
/// Float e of the stream is lane e % 16 of register e / 16; as 16 = 1
/// (mod 3), lane p of register r holds component (r + p) % 3, so the three
/// registers hold each component in different lanes. Two blends gather a
/// component into one register (lane p from register (c - p) mod 3) and one
/// single-source permute puts vertex v in lane v, from lane (3v + c) % 16.
/// A store runs the same backwards. (Six blends and three permutes for
/// three components, against six two-source permutes: the blends are cheap.)
struct Vec3Lanes {
    /// Per component: lane v takes lane (3v + c) % 16 of the blend.
    gather: [__m512i; 3],
    /// Per component: lane p takes the vertex whose component c sits in
    /// lane p of the stream.
    scatter: [__m512i; 3],
    /// `lanes[r][c]`: the lanes p with (r + p) % 3 == c.
    lanes: [[__mmask16; 3]; 3],
}

const fn gather_lanes(c: usize) -> [i32; 16] {
    let mut a = [0i32; 16];
    let mut v = 0;
    while v < 16 {
        a[v] = ((3 * v + c) % 16) as i32;
        v += 1;
    }
    a
}

const fn scatter_lanes(c: usize) -> [i32; 16] {
    let mut a = [0i32; 16];
    let mut p = 0;
    while p < 16 {
        let r = (c + 3 * 16 - p) % 3;
        a[p] = ((16 * r + p - c) / 3) as i32;
        p += 1;
    }
    a
}

const fn component_lanes(r: usize, c: usize) -> u16 {
    let mut k = 0u16;
    let mut p = 0;
    while p < 16 {
        if (r + p) % 3 == c {
            k |= 1 << p;
        }
        p += 1;
    }
    k
}

const GATHER: [[i32; 16]; 3] = [gather_lanes(0), gather_lanes(1), gather_lanes(2)];
const SCATTER: [[i32; 16]; 3] = [scatter_lanes(0), scatter_lanes(1), scatter_lanes(2)];

impl Vec3Lanes {
    /// # Safety
    /// The [tier contract](super): the CPU has this tier's target features;
    /// nothing else (no raw pointer, no unchecked index).
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let l = |a: &[i32; 16]| _mm512_loadu_si512(a.as_ptr() as *const _);
            let k = |r: usize| {
                [
                    component_lanes(r, 0),
                    component_lanes(r, 1),
                    component_lanes(r, 2),
                ]
            };
            Self {
                gather: [l(&GATHER[0]), l(&GATHER[1]), l(&GATHER[2])],
                scatter: [l(&SCATTER[0]), l(&SCATTER[1]), l(&SCATTER[2])],
                lanes: [k(0), k(1), k(2)],
            }
        }
    }

    /// x, y, z of the sixteen `Vec3` at `p` (48 floats).
    ///
    /// # Safety
    /// The [tier contract](super); `p` is valid for reading 48 floats.
    #[inline(always)]
    unsafe fn load(&self, p: *const f32) -> [__m512; 3] {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let m0 = _mm512_loadu_ps(p);
            let m1 = _mm512_loadu_ps(p.add(16));
            let m2 = _mm512_loadu_ps(p.add(32));
            let mut v = [m0; 3];
            for (c, v) in v.iter_mut().enumerate() {
                let g = _mm512_mask_blend_ps(self.lanes[1][c], m0, m1);
                let g = _mm512_mask_blend_ps(self.lanes[2][c], g, m2);
                *v = _mm512_permutexvar_ps(self.gather[c], g);
            }
            v
        }
    }

    /// Writes x, y, z as sixteen `Vec3` at `p` (48 floats).
    ///
    /// # Safety
    /// The [tier contract](super); `p` is valid for writing 48 floats.
    #[inline(always)]
    unsafe fn store(&self, p: *mut f32, v: [__m512; 3]) {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let x = _mm512_permutexvar_ps(self.scatter[0], v[0]);
            let y = _mm512_permutexvar_ps(self.scatter[1], v[1]);
            let z = _mm512_permutexvar_ps(self.scatter[2], v[2]);
            for r in 0..3 {
                let m = _mm512_mask_blend_ps(self.lanes[r][1], x, y);
                let m = _mm512_mask_blend_ps(self.lanes[r][2], m, z);
                _mm512_storeu_ps(p.add(16 * r), m);
            }
        }
    }
}

/// Sixteen rows `[c0 | c1 | c2 | t]` (vec4 columns) to twelve registers
/// over the rows, in order `c0.xyz, c1.xyz, c2.xyz, t.xyz` (w is dropped):
/// in-lane transposes of four rows at a time, then a 4x4 transpose of the
/// 128-bit lanes.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn soa12(r: &[__m512; 16]) -> [__m512; 12] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let mut x = [_mm512_setzero_ps(); 4];
        let mut y = x;
        let mut z = x;
        for g in 0..4 {
            let (a, b, c, d) = (r[4 * g], r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]);
            let lo01 = _mm512_unpacklo_ps(a, b); // ax bx ay by per lane
            let lo23 = _mm512_unpacklo_ps(c, d);
            let hi01 = _mm512_unpackhi_ps(a, b); // az bz aw bw
            let hi23 = _mm512_unpackhi_ps(c, d);
            x[g] = _mm512_shuffle_ps::<0b01_00_01_00>(lo01, lo23);
            y[g] = _mm512_shuffle_ps::<0b11_10_11_10>(lo01, lo23);
            z[g] = _mm512_shuffle_ps::<0b01_00_01_00>(hi01, hi23);
        }
        // s[g] lane c holds column c of rows 4g..4g+4; gather lane c of the
        // four into column c's register.
        let (cx, cy, cz) = (lanes4(x), lanes4(y), lanes4(z));
        [
            cx[0], cy[0], cz[0], cx[1], cy[1], cz[1], cx[2], cy[2], cz[2], cx[3], cy[3], cz[3],
        ]
    }
}

/// A 4x4 transpose of 128-bit lanes: lane c of the result i is lane i of
/// `s[c]`.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn lanes4(s: [__m512; 4]) -> [__m512; 4] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let a = _mm512_shuffle_f32x4::<0b01_00_01_00>(s[0], s[1]);
        let b = _mm512_shuffle_f32x4::<0b01_00_01_00>(s[2], s[3]);
        let c = _mm512_shuffle_f32x4::<0b11_10_11_10>(s[0], s[1]);
        let d = _mm512_shuffle_f32x4::<0b11_10_11_10>(s[2], s[3]);
        [
            _mm512_shuffle_f32x4::<0b10_00_10_00>(a, b),
            _mm512_shuffle_f32x4::<0b11_01_11_01>(a, b),
            _mm512_shuffle_f32x4::<0b10_00_10_00>(c, d),
            _mm512_shuffle_f32x4::<0b11_01_11_01>(c, d),
        ]
    }
}

/// `a x b` over sixteen lanes.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn cross16(a: [__m512; 3], b: [__m512; 3]) -> [__m512; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        [
            _mm512_fmsub_ps(a[1], b[2], _mm512_mul_ps(a[2], b[1])),
            _mm512_fmsub_ps(a[2], b[0], _mm512_mul_ps(a[0], b[2])),
            _mm512_fmsub_ps(a[0], b[1], _mm512_mul_ps(a[1], b[0])),
        ]
    }
}

/// `v / |v|` for sixteen vectors, zero in the lanes outside `live` and for
/// zero vectors. `vrsqrt14ps` (relative error below 2^-14) and one Newton
/// step: ~1e-7 relative.
///
/// # Safety
/// The [tier contract](super): the CPU has this tier's target features;
/// nothing else (no raw pointer, no unchecked index).
#[inline(always)]
unsafe fn normalize16(v: [__m512; 3], live: __mmask16) -> [__m512; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let d = _mm512_fmadd_ps(
            v[0],
            v[0],
            _mm512_fmadd_ps(v[1], v[1], _mm512_mul_ps(v[2], v[2])),
        );
        // Zero vectors (d = 0, where rsqrt is infinite) get y = 0.
        let live = _mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(live, d, _mm512_setzero_ps());
        let y = _mm512_maskz_rsqrt14_ps(live, d);
        // y (1.5 - 0.5 d y^2)
        let hy = _mm512_mul_ps(_mm512_mul_ps(y, y), _mm512_set1_ps(-0.5));
        let y = _mm512_mul_ps(y, _mm512_fmadd_ps(d, hy, _mm512_set1_ps(1.5)));
        [
            _mm512_mul_ps(v[0], y),
            _mm512_mul_ps(v[1], y),
            _mm512_mul_ps(v[2], y),
        ]
    }
}

/// The `K` joint indices at `js`, read in general-purpose registers: 64-bit
/// loads split by shifts, then a 32- and a 16-bit one for the rest.
/// Plain loads: the volatile reads this once used (to keep LLVM from
/// merging the indices into vector loads and `vpextrd`s) were never
/// measured on an AVX-512 CPU, so they went (docs/kernel-notes.md).
///
/// # Safety
/// The [tier contract](super); `js` is valid for reading `K` consecutive
/// `u16` (on 2 bytes, as a `*const u16` is).
#[inline(always)]
unsafe fn joint_indices<const K: usize>(js: *const u16) -> [usize; K] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let mut out = [0usize; K];
        let mut k = 0;
        while k + 4 <= K {
            let c = (js.add(k) as *const [u16; 4]).read();
            let c = u64::from_le_bytes(std::mem::transmute::<[u16; 4], [u8; 8]>(c));
            for (i, o) in out[k..k + 4].iter_mut().enumerate() {
                *o = (c >> (16 * i)) as u16 as usize;
            }
            k += 4;
        }
        if k + 2 <= K {
            let c = (js.add(k) as *const [u16; 2]).read();
            let c = u32::from_le_bytes(std::mem::transmute::<[u16; 2], [u8; 4]>(c));
            out[k] = c as u16 as usize;
            out[k + 1] = (c >> 16) as u16 as usize;
            k += 2;
        }
        if k < K {
            out[k] = js.add(k).read() as usize;
        }
        out
    }
}

/// `sum_k w_k skin[j_k]` as one register (`[c0 | c1 | c2 | t]`); with one
/// influence, the entry itself (see [`lbs_block`]).
///
/// # Safety
/// The [tier contract](super); `js` is valid for reading `K` indices and,
/// with `K > 1`, `ws` for reading `K` floats; `skin` points at a palette
/// of 16-float entries holding every entry those indices name.
#[inline(always)]
unsafe fn blend_row<const K: usize>(skin: *const f32, js: *const u16, ws: *const f32) -> __m512 {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let js = joint_indices::<K>(js);
        let entry = |k: usize| _mm512_loadu_ps(skin.add(16 * js[k]));
        if K == 1 {
            return entry(0);
        }
        let mut acc = _mm512_mul_ps(entry(0), _mm512_set1_ps(*ws));
        for k in 1..K {
            acc = _mm512_fmadd_ps(entry(k), _mm512_set1_ps(*ws.add(k)), acc);
        }
        acc
    }
}

/// Raw pointers of one block of sixteen vertices.
#[derive(Clone, Copy)]
struct Block {
    joints: *const u16,
    weights: *const f32,
    positions: *const f32,
    normals: *const f32,
    out_positions: *mut f32,
    out_normals: *mut f32,
}

impl Block {
    /// The block that starts `v` vertices of `K` influences further on
    /// (wrapping: the normals' pointers of an empty stream are never read).
    #[inline(always)]
    fn at<const K: usize>(self, v: usize) -> Self {
        Self {
            joints: self.joints.wrapping_add(v * K),
            weights: self.weights.wrapping_add(v * K),
            positions: self.positions.wrapping_add(3 * v),
            normals: self.normals.wrapping_add(3 * v),
            out_positions: self.out_positions.wrapping_add(3 * v),
            out_normals: self.out_normals.wrapping_add(3 * v),
        }
    }
}

/// Where a block's sixteen matrices come from, as twelve registers of
/// elements over the vertices (`c0.xyz, c1.xyz, c2.xyz, t.xyz`).
trait Matrices {
    /// # Safety
    /// `b` points at a block of streams that passed validation against this
    /// source's palette.
    unsafe fn soa(&self, b: &Block) -> [__m512; 12];
}

/// `K` influences blended from 16-float palette entries (`Affine3A`,
/// cache-line-aligned by the caller when it can): each vertex's matrix as one zmm (K loads, K FMAs with the
/// weight broadcast from memory), then the sixteen transposed.
///
/// With one influence the weight is not blended in (see [`lbs_block`]).
struct Blended<const K: usize> {
    skin: *const f32,
}

impl<const K: usize> Matrices for Blended<K> {
    /// # Safety
    /// As [`Matrices::soa`].
    #[inline(always)]
    unsafe fn soa(&self, b: &Block) -> [__m512; 12] {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe { soa12(&blend16::<K>(self.skin, b.joints, b.weights)) }
    }
}

/// A palette of at most 64 entries in structure-of-arrays form: element e
/// (`c0.xyz, c1.xyz, c2.xyz, t.xyz`) of entry j is `0[e][j]`.
#[repr(C, align(64))]
pub(crate) struct SoaPalette(pub(crate) [[f32; 64]; 12]);

impl SoaPalette {
    /// `None` past 64 entries.
    pub(crate) fn new(skin: &[Affine3A]) -> Option<Self> {
        if skin.len() > 64 {
            return None;
        }
        let mut t = [[0.0f32; 64]; 12];
        for (j, m) in skin.iter().enumerate() {
            let cols = [
                m.matrix3.x_axis,
                m.matrix3.y_axis,
                m.matrix3.z_axis,
                m.translation,
            ];
            for (c, col) in cols.iter().enumerate() {
                t[3 * c][j] = col.x;
                t[3 * c + 1][j] = col.y;
                t[3 * c + 2][j] = col.z;
            }
        }
        Some(Self(t))
    }
}

/// One influence per vertex, each matrix element picked from a
/// [`SoaPalette`] by the joint indices with lane permutes: one
/// `vpermps` per element for up to 16 entries (`Q = 1`), one `vpermt2ps`
/// for up to 32 (`Q = 2`), two and a blend for up to 64 (`Q = 4`). No
/// transpose, and no 64-byte load per vertex.
struct Table<'a, const Q: usize> {
    palette: &'a SoaPalette,
}

impl<const Q: usize> Matrices for Table<'_, Q> {
    /// # Safety
    /// As [`Matrices::soa`].
    #[inline(always)]
    unsafe fn soa(&self, b: &Block) -> [__m512; 12] {
        // SAFETY: the caller upholds this function's `# Safety` contract, which
        // covers every operation in the block.
        unsafe {
            let idx = _mm512_cvtepu16_epi32(_mm256_loadu_si256(b.joints as *const __m256i));
            let high = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(32));
            let mut out = [_mm512_setzero_ps(); 12];
            for (e, o) in out.iter_mut().enumerate() {
                let t = |q: usize| _mm512_load_ps(self.palette.0[e].as_ptr().add(16 * q));
                *o = match Q {
                    1 => _mm512_permutexvar_ps(idx, t(0)),
                    2 => _mm512_permutex2var_ps(t(0), idx, t(1)),
                    _ => _mm512_mask_blend_ps(
                        high,
                        _mm512_permutex2var_ps(t(0), idx, t(1)),
                        _mm512_permutex2var_ps(t(2), idx, t(3)),
                    ),
                };
            }
            out
        }
    }
}

/// Linear blend skinning of sixteen vertices with `K` influences each, the
/// matrices from `mats`: the position, the cofactor normal and its
/// normalisation sixteen at a time.
///
/// With one influence the weight is not blended into the matrix: the
/// position is `w (S p + t)` and the normal `cofactor(S) n` normalised,
/// which is `cofactor(w S) n = w^2 cofactor(S) n` normalised, except that
/// a weight of zero (or subnormal, infinite, NaN) gives a zero normal as
/// the reference does. (The reference's `w^2` also underflows for
/// weights below about 1e-19, which then still give a unit normal here.)
///
/// # Safety
/// The [tier contract](super); `blk` points at sixteen vertices of streams
/// that passed validation against `mats`'s palette: `K` joints and
/// weights each, positions (and with `with_normals`, normals) readable,
/// the outputs writable, for all sixteen.
#[inline(always)]
unsafe fn lbs_block<M: Matrices, const K: usize>(
    mats: &M,
    blk: Block,
    with_normals: bool,
    lanes: &Vec3Lanes,
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        lbs_finish::<K, false>(
            mats.soa(&blk),
            blk,
            with_normals,
            lanes,
            [std::ptr::null(); 2],
        )
    }
}

/// [`lbs_block`] from the sixteen matrices as twelve registers of elements
/// over the vertices (`c0.xyz, c1.xyz, c2.xyz, t.xyz`). With `BLOCKS`, the
/// positions and normals come from `xb`: the first of the two blocks of
/// eight ([`Vec3x8`]) each that hold the block's sixteen vertices.
///
/// # Safety
/// As [`lbs_block`]; with `BLOCKS`, `xb` point at two consecutive
/// [`Vec3x8`] each (the positions', then the normals').
#[inline(always)]
unsafe fn lbs_finish<const K: usize, const BLOCKS: bool>(
    mats: [__m512; 12],
    blk: Block,
    with_normals: bool,
    lanes: &Vec3Lanes,
    xb: [*const Vec3x8; 2],
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let (m, live) = lbs_positions_cofactor::<K, BLOCKS>(mats, blk, with_normals, lanes, xb);
        if with_normals {
            lanes.store(blk.out_normals, normalize16(m, live));
        }
    }
}

/// [`lbs_finish`] up to the normals' normalisation: stores the positions
/// and returns the cofactor products (zero without normals) and the lanes
/// whose normals are live.
///
/// # Safety
/// As [`lbs_finish`].
#[inline(always)]
unsafe fn lbs_positions_cofactor<const K: usize, const BLOCKS: bool>(
    mats: [__m512; 12],
    blk: Block,
    with_normals: bool,
    lanes: &Vec3Lanes,
    xb: [*const Vec3x8; 2],
) -> ([__m512; 3], __mmask16) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let [c0x, c0y, c0z, c1x, c1y, c1z, c2x, c2y, c2z, tx, ty, tz] = mats;
        let [px, py, pz] = if BLOCKS {
            load_x16(xb[0])
        } else {
            lanes.load(blk.positions)
        };
        let mut o = [
            _mm512_fmadd_ps(
                c0x,
                px,
                _mm512_fmadd_ps(c1x, py, _mm512_fmadd_ps(c2x, pz, tx)),
            ),
            _mm512_fmadd_ps(
                c0y,
                px,
                _mm512_fmadd_ps(c1y, py, _mm512_fmadd_ps(c2y, pz, ty)),
            ),
            _mm512_fmadd_ps(
                c0z,
                px,
                _mm512_fmadd_ps(c1z, py, _mm512_fmadd_ps(c2z, pz, tz)),
            ),
        ];
        let w = if K == 1 {
            let w = _mm512_loadu_ps(blk.weights);
            for c in &mut o {
                *c = _mm512_mul_ps(*c, w);
            }
            w
        } else {
            _mm512_setzero_ps()
        };
        lanes.store(blk.out_positions, o);
        if with_normals {
            let (a, b, c) = ([c0x, c0y, c0z], [c1x, c1y, c1z], [c2x, c2y, c2z]);
            let [nx, ny, nz] = if BLOCKS {
                load_x16(xb[1])
            } else {
                lanes.load(blk.normals)
            };
            // cofactor(S) n = nx (b x c) + ny (c x a) + nz (a x b)
            //               = b x (nx c - nz a) + ny (c x a):
            // 21 operations instead of 27.
            let mut u = [nx; 3];
            for (i, u) in u.iter_mut().enumerate() {
                *u = _mm512_fmsub_ps(nx, c[i], _mm512_mul_ps(nz, a[i]));
            }
            let q = cross16(c, a);
            let m = [
                _mm512_fnmadd_ps(
                    b[2],
                    u[1],
                    _mm512_fmadd_ps(b[1], u[2], _mm512_mul_ps(ny, q[0])),
                ),
                _mm512_fnmadd_ps(
                    b[0],
                    u[2],
                    _mm512_fmadd_ps(b[2], u[0], _mm512_mul_ps(ny, q[1])),
                ),
                _mm512_fnmadd_ps(
                    b[1],
                    u[0],
                    _mm512_fmadd_ps(b[0], u[1], _mm512_mul_ps(ny, q[2])),
                ),
            ];
            let live = if K == 1 {
                // Not zero, subnormal, infinite or NaN (fpclass 0xBF).
                !_mm512_fpclass_ps_mask::<0xBF>(w)
            } else {
                0xffff
            };
            return (m, live);
        }
        ([_mm512_setzero_ps(); 3], 0)
    }
}

/// Linear blend skinning of `K` influences per vertex, sixteen vertices at
/// a time; the last (fewer than sixteen), and the first few when that puts
/// the blocks on cache lines (see [`Streams::lead`]), go through the same code
/// from padded copies, so a vertex's result does not depend on where the
/// streams lie.
///
/// `skin` points at the palette: 16-float entries (`Affine3A`).
///
/// # Safety
/// The CPU has AVX-512 F, VL, BW, DQ; the streams passed
/// `deform::validate_streams` against the `skin` entries (every joint
/// index inside, lengths consistent, `normals` empty or as long as
/// `positions`), and `1 <= K <= 8`.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub(crate) unsafe fn lbs<const K: usize>(skin: *const f32, s: Streams) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        lbs_run::<_, K>(&Blended::<K> { skin }, s);
    }
}

/// The sixteen blended rows (`[c0 | c1 | c2 | t]`) of the block whose
/// joints and weights start at `js` and `ws`.
///
/// # Safety
/// The [tier contract](super); `js` and `ws` are valid for `16 K` entries
/// (the weights only with `K > 1`), each index naming an entry of `skin`
/// (16-float entries).
#[inline(always)]
unsafe fn blend16<const K: usize>(
    skin: *const f32,
    js: *const u16,
    ws: *const f32,
) -> [__m512; 16] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        // Written out: as a loop LLVM keeps the rows in memory.
        let r = |v: usize| blend_row::<K>(skin, js.add(v * K), ws.add(v * K));
        [
            r(0),
            r(1),
            r(2),
            r(3),
            r(4),
            r(5),
            r(6),
            r(7),
            r(8),
            r(9),
            r(10),
            r(11),
            r(12),
            r(13),
            r(14),
            r(15),
        ]
    }
}

/// Sixteen vertices' x, y and z from two consecutive blocks of eight
/// ([`Vec3x8`]): a 32-byte load and a 32-byte insert each.
///
/// # Safety
/// The [tier contract](super); `b` is valid for reading two consecutive
/// [`Vec3x8`].
#[inline(always)]
unsafe fn load_x16(b: *const Vec3x8) -> [__m512; 3] {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let (lo, hi) = (
            crate::anim::simd::avx2::common::load_x8(&*b),
            crate::anim::simd::avx2::common::load_x8(&*b.add(1)),
        );
        [0, 1, 2].map(|c| _mm512_insertf32x8::<1>(_mm512_castps256_ps512(lo[c]), hi[c]))
    }
}

/// LBS with `K` influences and normals, software-pipelined over blocks of
/// sixteen vertices in three stages: each trip blends the next block's
/// sixteen matrices (held in registers), transposes this block's and works
/// out its positions and cofactor products, and last normalises and stores
/// the block before's normals, from products the trip before left in
/// registers. The blends' loads and FMAs thus run beside the transpose and
/// the cofactor, and the normalisation's chain (about 36 cycles) is no
/// longer the end of the transpose's within one trip: a trip is about 430
/// micro-operations, near a Golden Cove's 512-entry reorder buffer, so
/// the core cannot look a trip ahead to overlap one long chain with the
/// next. On the Emerald Rapids, two stages (the normals finished in their
/// own trip) took 3.44 to 3.53 ns/vertex, three 2.94 to 3.00 (alternated
/// processes, 5 each). The first few vertices (see [`Streams::lead`]) and
/// the last (fewer than sixteen) go through padded copies, as in [`lbs`].
///
/// With `BLOCKS`, the positions and normals of the blocks come from
/// `blocks` (the streams' blocks of eight, [`BindVertices`]) with a 32-byte
/// load and insert per component, instead of being rearranged from the
/// `Vec3` streams; there is then no lead (the blocks of sixteen must start
/// on blocks of eight), and the stores may split cache lines.
///
/// [`BindVertices`]: crate::anim::BindVertices
///
/// # Safety
/// As [`lbs`], with normals as long as the positions; with `BLOCKS`,
/// `blocks` are the blocks of eight of the `positions` and `normals`.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub(crate) unsafe fn lbs_pipelined<const K: usize, const BLOCKS: bool>(
    skin: *const f32,
    s: Streams,
    position_blocks: &[Vec3x8],
    normal_blocks: &[Vec3x8],
) {
    debug_assert!(K > 1);
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let mats = Blended::<K> { skin };
        let lanes = Vec3Lanes::new();
        let lead = if BLOCKS { 0 } else { s.lead() };
        let (streams, blocks, tail) = lead_then_blocks::<_, K>(&mats, s, lead, &lanes);
        let xb = |blk: usize| {
            if BLOCKS {
                [
                    position_blocks.as_ptr().add(2 * blk),
                    normal_blocks.as_ptr().add(2 * blk),
                ]
            } else {
                [std::ptr::null(); 2]
            }
        };
        if blocks > 0 {
            let mut rows = blend16::<K>(skin, streams.joints, streams.weights);
            // The block before's cofactor products, normalised at the end
            // of the next trip.
            let mut cof = [_mm512_setzero_ps(); 3];
            for blk in 0..blocks - 1 {
                let b = streams.at::<K>(16 * blk);
                let nb = streams.at::<K>(16 * (blk + 1));
                let next = blend16::<K>(skin, nb.joints, nb.weights);
                let m = soa12(&rows);
                rows = next;
                // Every lane's normal is live with two or more influences
                // (the returned mask is all ones): normalised with 0xffff.
                let (c, _) = lbs_positions_cofactor::<K, BLOCKS>(m, b, true, &lanes, xb(blk));
                if blk > 0 {
                    let pb = streams.at::<K>(16 * (blk - 1));
                    lanes.store(pb.out_normals, normalize16(cof, 0xffff));
                }
                cof = c;
            }
            let last = streams.at::<K>(16 * (blocks - 1));
            let (c, _) = lbs_positions_cofactor::<K, BLOCKS>(
                soa12(&rows),
                last,
                true,
                &lanes,
                xb(blocks - 1),
            );
            if blocks > 1 {
                let pb = streams.at::<K>(16 * (blocks - 2));
                lanes.store(pb.out_normals, normalize16(cof, 0xffff));
            }
            lanes.store(last.out_normals, normalize16(c, 0xffff));
        }
        lbs_padded::<_, K>(&mats, tail, &lanes);
    }
}

/// Linear blend skinning of one influence per vertex from a palette of at
/// most 64 entries in SoA form (see [`Table`]).
///
/// # Safety
/// The CPU has AVX-512 F, VL, BW, DQ; the streams passed
/// `deform::validate_streams` against the palette `palette` was built
/// from, with one influence per vertex.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub(crate) unsafe fn lbs1_table(palette: &SoaPalette, palette_len: usize, s: Streams) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        if palette_len <= 16 {
            lbs_run::<_, 1>(&Table::<1> { palette }, s);
        } else if palette_len <= 32 {
            lbs_run::<_, 1>(&Table::<2> { palette }, s);
        } else {
            lbs_run::<_, 1>(&Table::<4> { palette }, s);
        }
    }
}

/// How many vertices (0 to 15) to skin apart, ahead of a kernel's blocks
/// of sixteen, so that the blocks start on cache lines in as many of the
/// `Vec3` streams at the addresses `streams` (4-byte aligned) as can be:
/// then none of their 64-byte block loads or stores splits a line (glibc
/// hands out a large `Vec` 16 bytes past a page: with no lead, every one
/// of them would). Earlier streams win over all later ones together, and
/// of equal choices the shortest lead wins. 0 for meshes shorter than 128
/// vertices, where the lead's padded block would cost more than it saves.
pub(crate) fn stream_lead(n: usize, streams: &[usize]) -> usize {
    if n < 128 {
        return 0;
    }
    let score = |s: usize| {
        streams
            .iter()
            .enumerate()
            .filter(|(_, a)| (*a + 12 * s).is_multiple_of(64))
            .map(|(i, _)| 1usize << (streams.len() - i))
            .sum::<usize>()
    };
    (0..16)
        .max_by_key(|&s| (score(s), std::cmp::Reverse(s)))
        .unwrap_or(0)
}

/// A job's six streams, split and handed on together (`normals` and
/// `out_normals` empty when there are no normals): what the public
/// kernels take, built once by the job's dispatch.
pub(crate) struct Streams<'a> {
    joints: &'a [u16],
    weights: &'a [f32],
    positions: &'a [Vec3],
    normals: &'a [Vec3],
    out_positions: &'a mut [Vec3],
    out_normals: &'a mut [Vec3],
}

impl<'a> Streams<'a> {
    pub(crate) fn new(
        joints: &'a [u16],
        weights: &'a [f32],
        positions: &'a [Vec3],
        normals: &'a [Vec3],
        out_positions: &'a mut [Vec3],
        out_normals: &'a mut [Vec3],
    ) -> Self {
        Self {
            joints,
            weights,
            positions,
            normals,
            out_positions,
            out_normals,
        }
    }

    fn len(&self) -> usize {
        self.positions.len()
    }

    /// The first `v` vertices (of `K` influences) and the rest.
    fn split<const K: usize>(self, v: usize) -> (Self, Self) {
        let nv = if self.normals.is_empty() { 0 } else { v };
        let (j0, j1) = self.joints.split_at(v * K);
        let (w0, w1) = self.weights.split_at(v * K);
        let (p0, p1) = self.positions.split_at(v);
        let (n0, n1) = self.normals.split_at(nv);
        let (op0, op1) = self.out_positions.split_at_mut(v);
        let (on0, on1) = self.out_normals.split_at_mut(nv);
        (
            Self::new(j0, w0, p0, n0, op0, on0),
            Self::new(j1, w1, p1, n1, op1, on1),
        )
    }

    /// How many vertices (0 to 15) go ahead of the blocks so that their
    /// 64-byte loads and stores of the `Vec3` streams start on cache lines
    /// (see [`stream_lead`]; stores first, empty streams left out).
    fn lead(&self) -> usize {
        let mut at = [0usize; 4];
        let mut m = 0;
        let outs = [&*self.out_positions, &*self.out_normals];
        for s in outs.into_iter().chain([self.positions, self.normals]) {
            if !s.is_empty() {
                at[m] = s.as_ptr() as usize;
                m += 1;
            }
        }
        stream_lead(self.len(), &at[..m])
    }

    /// The streams' pointers at their first vertex (normals may be empty).
    fn block(&mut self) -> Block {
        Block {
            joints: self.joints.as_ptr(),
            weights: self.weights.as_ptr(),
            positions: self.positions.as_ptr() as *const f32,
            normals: self.normals.as_ptr() as *const f32,
            out_positions: self.out_positions.as_mut_ptr() as *mut f32,
            out_normals: self.out_normals.as_mut_ptr() as *mut f32,
        }
    }
}

/// Skins the lead (see [`Streams::lead`]) through [`lbs_padded`], and
/// returns the streams of the blocks of sixteen vertices after it, how
/// many blocks there are, and the tail (fewer than sixteen vertices) for
/// [`lbs_padded`]. (Not a function taking the block loop as a closure: a
/// closure here would not inherit the kernels' target features, and its
/// intrinsics would be calls.)
///
/// # Safety
/// The [tier contract](super); the streams `s` passed validation against
/// `mats`'s palette, and `lead <= s.len()`.
#[inline(always)]
unsafe fn lead_then_blocks<'a, M: Matrices, const K: usize>(
    mats: &M,
    s: Streams<'a>,
    lead: usize,
    lanes: &Vec3Lanes,
) -> (Block, usize, Streams<'a>) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let (head, body) = s.split::<K>(lead);
        lbs_padded::<M, K>(mats, head, lanes);
        let blocks = body.len() / 16;
        let (mut full, tail) = body.split::<K>(blocks * 16);
        (full.block(), blocks, tail)
    }
}

/// The lead, the loop over blocks of sixteen vertices, then the padded
/// tail.
///
/// # Safety
/// The [tier contract](super); the streams `s` passed validation against
/// `mats`'s palette.
#[inline(always)]
unsafe fn lbs_run<M: Matrices, const K: usize>(mats: &M, s: Streams) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let with_normals = !s.normals.is_empty();
        let lanes = Vec3Lanes::new();
        let lead = s.lead();
        let (streams, blocks, tail) = lead_then_blocks::<M, K>(mats, s, lead, &lanes);
        for blk in 0..blocks {
            lbs_block::<M, K>(mats, streams.at::<K>(blk * 16), with_normals, &lanes);
        }
        lbs_padded::<M, K>(mats, tail, &lanes);
    }
}

/// Fewer than sixteen vertices (none: nothing) through [`lbs_block`],
/// from padded copies.
///
/// # Safety
/// The [tier contract](super); the streams `s` (fewer than sixteen
/// vertices) passed validation against `mats`'s palette.
#[inline(always)]
unsafe fn lbs_padded<M: Matrices, const K: usize>(mats: &M, s: Streams, lanes: &Vec3Lanes) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe {
        let rest = s.len();
        if rest == 0 {
            return;
        }
        let with_normals = !s.normals.is_empty();
        // Padding vertices take joint 0 (the palette is not empty: a
        // vertex names a joint inside it) with weight 0 at the origin.
        let mut js = [0u16; 16 * 8];
        let mut ws = [0.0f32; 16 * 8];
        let mut p = [Vec3::ZERO; 16];
        let mut nn = [Vec3::ZERO; 16];
        let mut op = [Vec3::ZERO; 16];
        let mut on = [Vec3::ZERO; 16];
        js[..rest * K].copy_from_slice(s.joints);
        ws[..rest * K].copy_from_slice(s.weights);
        p[..rest].copy_from_slice(s.positions);
        if with_normals {
            nn[..rest].copy_from_slice(s.normals);
        }
        let mut padded = Streams::new(&js, &ws, &p, &nn, &mut op, &mut on);
        lbs_block::<M, K>(mats, padded.block(), with_normals, lanes);
        s.out_positions.copy_from_slice(&op[..rest]);
        if with_normals {
            s.out_normals.copy_from_slice(&on[..rest]);
        }
    }
}
