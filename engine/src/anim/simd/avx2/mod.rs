//! The AVX2 + FMA tier: one file per kernel family, the helpers they share
//! in [`common`].
//!
//! # The tier contract
//! Every `unsafe fn` here (and in [`super::avx512`], which adds AVX-512 F,
//! VL, BW and DQ to the list) may be called only when both hold:
//! 1. the CPU supports the target features the function is compiled with
//!    (AVX2 and FMA here): the caller has asked [`super::select`], which
//!    reads CPUID, and
//! 2. the slices and pointers it takes are in range as its job's
//!    `validate` checks them (for the skinning kernels,
//!    `deform::validate_streams`: every joint index inside the palette,
//!    lengths consistent), plus what its own `# Safety` section adds.
//!
//! A kernel's `# Safety` section refers to this contract and states only
//! what it adds. Kernels take their shared types from
//! [`super::lanes`]; they never import a job.
//!
//! To add a kernel: put it in the file of its family (or a new file here),
//! re-export it below, and choose it in [`super::select`].

pub(crate) mod blending;
pub(crate) mod common;
pub(crate) mod compressed;
pub(crate) mod dqs;
pub(crate) mod lbs;
pub(crate) mod lbs1;
pub(crate) mod lbs_pipelined;
pub(crate) mod local_to_model;
pub(crate) mod morph;
pub(crate) mod palette;
pub(crate) mod sampling;
pub(crate) mod timelines;

pub(crate) use blending::{
    blend2_either, blend_soa, blend_soa2, store_runs_into_loads, TRANSFORM_PACKED,
};
pub(crate) use compressed::decode8;
pub(crate) use dqs::{dqs, dqs_table};
pub(crate) use lbs::{aligned_palette, lbs, lbs_positions, LineAffine, ALIGNED_PALETTE_MAX};
pub(crate) use lbs1::{lbs1_normals, LBS1_TABLE_MAX};
pub(crate) use lbs_pipelined::{lbs_pipelined, packed_palette, PackedAffine, PACKED_PALETTE_MAX};
pub(crate) use local_to_model::{local_to_model, LocalPose};
pub(crate) use palette::palette_rows_4x3;
pub(crate) use sampling::{slerp8, slerp_solo8, solo_vec3, squad8, squad_solo8};
