//! SIMD kernels for the hot loops, chosen at run time.
//!
//! The crate builds for baseline x86-64 (SSE2); the kernels carry
//! `#[target_feature]` and are only called after [`select`] said the CPU
//! has what they need: [`avx2`] holds the AVX2 + FMA tier, [`avx512`] the
//! AVX-512 (F, VL, BW, DQ) tier above it. Each has a scalar counterpart
//! (in the job's own file) that is the definition it is tested against.
//!
//! - [`select`]: the tier, the CPU facts the choices use, and the choice of
//!   kernel for each job.
//! - [`lanes`]: the types and helpers kernels share with their callers
//!   (`Vec3x8`, `cofactor`, `SquadSpan`, ...). It sits below both: kernels
//!   import from it, job files import kernels, never the reverse.
//! - `avx2/`, `avx512/`: one file per kernel family.

pub(crate) mod lanes;
pub(crate) mod select;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;

#[cfg(test)]
pub(crate) use select::testable_tiers;
pub(crate) use select::{avx2_fma, tier, Tier};
