//! Local-to-model compiled for AVX-512 (VL).

use glam::Affine3A;

use crate::anim::simd::avx2::local_to_model::{local_to_model_body, LocalPose};

/// [`local_to_model`](fn@crate::anim::simd::avx2::local_to_model) compiled for AVX-512 (VL): the same code, but each
/// broadcast of a local matrix element folds into its multiply or FMA
/// as an embedded broadcast, which Zen 4 does in the load unit, where a
/// separate `vbroadcastss` takes a slot of the FMA pipes. Intel CPUs
/// do a `vbroadcastss` from memory in a load port alone, and get the
/// AVX2 build (`select::local_to_model_tier`; see
/// docs/kernel-notes.md).
///
/// # Safety
/// As [`local_to_model`](fn@crate::anim::simd::avx2::local_to_model), and the CPU has AVX-512 F and VL.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub unsafe fn local_to_model_avx512<L: LocalPose + ?Sized>(
    parents: &[u16],
    locals: &L,
    root: &Affine3A,
    from: usize,
    to: usize,
    models: &mut [Affine3A],
) {
    // SAFETY: the caller upholds this function's `# Safety` contract, which
    // covers every operation in the block.
    unsafe { local_to_model_body::<true, L>(parents, locals, root, from, to, models) }
}
