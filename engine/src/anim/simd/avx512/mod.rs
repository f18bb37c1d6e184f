//! The AVX-512 (F, VL, BW, DQ) tier, above [`super::avx2`] (its kernels
//! also enable AVX2 and FMA, and use that tier's helpers).
//!
//! # The tier contract
//! As [`super::avx2`]'s, with the CPU supporting AVX-512 F, VL, BW and DQ
//! as well as AVX2 and FMA.

pub(crate) mod dqs;
pub(crate) mod lbs;
pub(crate) mod local_to_model;

pub(crate) use dqs::dqs_table_avx512;
pub(crate) use lbs::{lbs, lbs1_table, lbs_pipelined, SoaPalette, Streams};
pub(crate) use local_to_model::local_to_model_avx512;
