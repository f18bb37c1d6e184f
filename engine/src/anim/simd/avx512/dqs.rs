//! The AVX2 tier's `dqs_table` compiled for AVX-512.

use std::arch::x86_64::*;

use glam::{Mat3A, Vec3};

use crate::anim::simd::avx2::dqs::*;
use crate::anim::simd::lanes::*;

dqs_table_kernel!(
    /// [`dqs_table`] compiled with AVX-512 (F, VL, BW, DQ) enabled, for
    /// that tier: the same 256-bit code, but with 32 vector registers
    /// instead of 16 the pipelined loop keeps its blended sums and the
    /// rotation's terms in registers (17 spilled registers a trip
    /// against 41 with four influences). On the Emerald Rapids: 4.49 to
    /// 4.51 against 3.97 to 4.00 ns/vertex with four influences and
    /// normals (alternated processes, 5 each).
    ///
    /// # Safety
    /// As [`dqs_table`], and the CPU has AVX-512 F, VL, BW and DQ.
    dqs_table_avx512,
    "avx2,fma,avx512f,avx512vl,avx512bw,avx512dq",
    false
);
