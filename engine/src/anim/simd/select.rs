//! Where the jobs choose their kernels: the instruction-set tier (CPU
//! features, capped by `VKSKIN_SCALAR` / `VKSKIN_SIMD`), the CPU's vendor
//! and its level-2 cache size, and from them the kernel each job runs.
//! Every run-time check of the CPU or the environment the animation jobs
//! make is here.

/// The instruction-set tiers of the fast paths, lowest first.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tier {
    /// Portable Rust: the tested definitions.
    Scalar,
    /// AVX2 + FMA.
    Avx2,
    /// AVX-512 F, VL, BW and DQ (with AVX2 + FMA).
    Avx512,
}

/// The highest tier this CPU runs, ignoring the environment.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn cpu_tier() -> Tier {
    #[cfg(target_arch = "x86_64")]
    {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            return Tier::Scalar;
        }
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
        {
            return Tier::Avx512;
        }
        Tier::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Tier::Scalar
    }
}

/// The tier the jobs use: [`cpu_tier`], capped by the environment for
/// comparing paths. `VKSKIN_SCALAR=1` forces the scalar paths;
/// `VKSKIN_SIMD=scalar|avx2|avx512` caps the tier (a CPU without the
/// named tier still gets its own). Read once.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn tier() -> Tier {
    use std::sync::OnceLock;
    static TIER: OnceLock<Tier> = OnceLock::new();
    *TIER.get_or_init(|| {
        let cap = if std::env::var_os("VKSKIN_SCALAR").is_some() {
            Tier::Scalar
        } else {
            match std::env::var("VKSKIN_SIMD").as_deref() {
                Ok("scalar") => Tier::Scalar,
                Ok("avx2") => Tier::Avx2,
                _ => Tier::Avx512,
            }
        };
        cpu_tier().min(cap)
    })
}

/// Whether the AVX2 + FMA paths may run: the one check of the jobs that
/// have a single fast kernel (sampling's vec3 lerps, slerps, SQUAD and
/// solo tracks; the timelines' lane groups and key counts; blending of two
/// or more layers; the 4x3 palette rows; the joint-index scan). Jobs with
/// more than one kernel choose with `lbs_kernel`, `dqs_kernel` and
/// `local_to_model_tier` (x86-64 only).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline]
pub(crate) fn avx2_fma() -> bool {
    tier() >= Tier::Avx2
}

/// The tiers this CPU can run, for tests that check every fast path.
#[cfg(test)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn testable_tiers() -> Vec<Tier> {
    [Tier::Avx2, Tier::Avx512]
        .into_iter()
        .filter(|&t| t <= cpu_tier())
        .collect()
}

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{__cpuid, __cpuid_count};

#[cfg(target_arch = "x86_64")]
/// The CPU's vendor string (CPUID leaf 0: EBX, EDX, ECX), e.g.
/// `GenuineIntel`, `AuthenticAMD`.
pub(crate) fn vendor() -> [u8; 12] {
    let r = __cpuid(0);
    let mut v = [0u8; 12];
    for (i, w) in [r.ebx, r.edx, r.ecx].into_iter().enumerate() {
        v[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    v
}

#[cfg(target_arch = "x86_64")]
/// Whether the CPU is Intel's, for the few kernel choices measured to
/// go one way on Intel and the other on AMD. Read once.
pub(crate) fn intel() -> bool {
    use std::sync::OnceLock;
    static INTEL: OnceLock<bool> = OnceLock::new();
    *INTEL.get_or_init(|| &vendor() == b"GenuineIntel")
}

#[cfg(target_arch = "x86_64")]
/// The size of one core's level-2 cache in bytes, from CPUID leaf 4
/// (Intel's deterministic cache parameters); `None` where the leaf
/// does not tell. Read once.
pub(crate) fn l2_bytes() -> Option<usize> {
    use std::sync::OnceLock;
    static L2: OnceLock<Option<usize>> = OnceLock::new();
    *L2.get_or_init(|| {
        if __cpuid(0).eax < 4 {
            return None;
        }
        // Subleaves until a null one (type 0); a bound in case of none.
        (0..16)
            .map(|i| __cpuid_count(4, i))
            .take_while(|r| r.eax & 0x1f != 0)
            .find(|r| (r.eax >> 5) & 0x7 == 2 && r.eax & 0x1f != 2)
            .map(|r| {
                let ways = (r.ebx >> 22) as usize + 1;
                let partitions = ((r.ebx >> 12) & 0x3ff) as usize + 1;
                let line = (r.ebx & 0xfff) as usize + 1;
                let sets = r.ecx as usize + 1;
                ways * partitions * line * sets
            })
    })
}

#[cfg(target_arch = "x86_64")]
/// Whether a skinning job that touches `bytes` of streams (read and
/// written) writes its outputs with streaming (non-temporal) stores:
/// on Intel CPUs, when they are more than the level-2 cache holds.
/// Skinned vertices go on to the GPU, not back to this core, and past
/// the L2 an ordinary store first reads each line in. On the Emerald
/// Rapids measured, a copy of one-influence streams (26 bytes read and
/// 24 written a vertex) took 1.78 ns a vertex with ordinary stores
/// and 1.32 with streaming ones at 100,000 vertices; at 20,000 (all
/// in its 2 MiB L2) 0.89 against 1.16, and they crossed at about
/// 45,000. Not measured on AMD CPUs, which keep ordinary stores.
pub(crate) fn stream_outputs(bytes: usize) -> bool {
    intel() && l2_bytes().is_some_and(|l2| bytes > l2)
}

/// The linear blend skinning kernel a job runs (see
/// [`lbs_kernel`]). Matched on by `deform::lbs_fast`, which prepares what
/// each kernel reads.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LbsKernel {
    /// The scalar loop (no tier, or an influence count no kernel takes).
    Scalar,
    /// AVX-512, one weighted influence: the palette as SoA tables that the
    /// kernel picks elements from with lane permutes.
    Avx512Table,
    /// AVX-512, two to four weighted influences with normals: software
    /// pipelined.
    Avx512Pipelined,
    /// AVX-512, one to eight weighted influences: one 64-byte load per
    /// influence's matrix.
    Avx512,
    /// AVX2, one weightless influence with normals: a table of matrices
    /// and cofactors; `stream`: write the outputs with streaming stores.
    Avx2OneInfluence { stream: bool },
    /// AVX2, two to four weighted influences with normals: software
    /// pipelined over a packed palette.
    Avx2Pipelined,
    /// AVX2, positions without normals, one to eight influences.
    Avx2Positions,
    /// AVX2, one to eight influences, a block of eight at a time.
    Avx2,
}

/// What the LBS kernel choice depends on in a job.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct LbsShape {
    /// Influences per vertex.
    pub influences: usize,
    /// Whether the job has weights (without, one influence of weight 1).
    pub weighted: bool,
    /// Whether the job has normals.
    pub normals: bool,
    /// Palette entries.
    pub palette: usize,
    /// Vertices.
    pub vertices: usize,
}

/// Most palette entries the AVX-512 one-influence table kernel takes
/// (`avx512::SoaPalette`).
#[cfg(target_arch = "x86_64")]
pub(crate) const AVX512_TABLE_MAX: usize = 64;

/// The LBS kernel for a job of `shape` on `tier` (which the CPU must
/// have).
///
/// AVX-512, when the palette is no longer than the mesh (so that
/// rearranging it once costs less than the vertices): with one influence
/// and at most [`AVX512_TABLE_MAX`] entries, the table kernel; otherwise
/// one to eight weighted influences read each matrix as one 64-byte load,
/// two to four with normals software-pipelined (as on AVX2; five to eight
/// keep the one-block loop, unmeasured there). One influence without
/// weights (all 1) takes the AVX2 kernels on every tier: the AVX-512 ones
/// read weights.
///
/// AVX2: one weightless influence with normals takes each palette entry's
/// cofactor from a table made once per call (when the palette is no
/// longer than the mesh and fits the kernel's stack table); two to four
/// weighted influences with normals, when packing the palette costs less
/// than the vertices, the software-pipelined kernel (five to eight keep
/// the one-block-at-a-time loop; see docs/kernel-notes.md); positions
/// alone need no transpose.
#[cfg(target_arch = "x86_64")]
pub(crate) fn lbs_kernel(tier: Tier, s: LbsShape) -> LbsKernel {
    let k = s.influences;
    if tier == Tier::Avx512 && s.weighted {
        if k == 1 && s.palette <= s.vertices && s.palette <= AVX512_TABLE_MAX {
            return LbsKernel::Avx512Table;
        }
        if (1..=8).contains(&k) {
            return if s.normals && (2..=4).contains(&k) {
                LbsKernel::Avx512Pipelined
            } else {
                LbsKernel::Avx512
            };
        }
    }
    if tier == Tier::Scalar {
        return LbsKernel::Scalar;
    }
    if s.normals
        && k == 1
        && !s.weighted
        && s.palette <= super::avx2::LBS1_TABLE_MAX
        && s.palette <= s.vertices
    {
        // Joint index, position and normal read, position and normal
        // written.
        let stream = stream_outputs(s.vertices * (2 + 4 * 12));
        return LbsKernel::Avx2OneInfluence { stream };
    }
    if s.weighted && s.normals && (2..=4).contains(&k) && s.palette <= s.vertices {
        return LbsKernel::Avx2Pipelined;
    }
    if !(1..=8).contains(&k) {
        return LbsKernel::Scalar;
    }
    if s.normals {
        LbsKernel::Avx2
    } else {
        LbsKernel::Avx2Positions
    }
}

/// The DQS kernel a job runs (see [`dqs_kernel`]).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DqsKernel {
    /// The scalar loop only.
    Scalar,
    /// AVX2, one to four influences, each block's dual quaternions blended
    /// in registers.
    Avx2,
    /// The offset-table kernel compiled for AVX2.
    Avx2Table,
    /// The offset-table kernel compiled with AVX-512 enabled (its 32
    /// registers).
    Avx512Table,
}

/// The DQS kernel for `influences` per vertex, a palette of `palette`
/// entries and `vertices` vertices on `tier` (which the CPU must have).
/// The offset table costs palette^2 dot products: worth it from sixteen
/// vertices per palette entry, on palettes of at most 64 entries, with two
/// to four influences.
#[cfg(target_arch = "x86_64")]
pub(crate) fn dqs_kernel(
    tier: Tier,
    influences: usize,
    palette: usize,
    vertices: usize,
) -> DqsKernel {
    if tier == Tier::Scalar {
        return DqsKernel::Scalar;
    }
    let table = palette <= 64 && vertices >= 16 * palette;
    if !table || !(2..=4).contains(&influences) {
        return if (1..=4).contains(&influences) {
            DqsKernel::Avx2
        } else {
            DqsKernel::Scalar
        };
    }
    if tier == Tier::Avx512 {
        DqsKernel::Avx512Table
    } else {
        DqsKernel::Avx2Table
    }
}

/// The tier whose local-to-model kernel runs: [`tier`], but Intel CPUs
/// take the AVX2 build on the AVX-512 tier. The AVX-512 build is the AVX2
/// code with its broadcasts folded into the FMAs and the translation's
/// sum split: a gain where a separate broadcast takes an FMA-pipe slot
/// (AMD), none where it is a load alone (Intel).
#[cfg(target_arch = "x86_64")]
pub(crate) fn local_to_model_tier() -> Tier {
    match tier() {
        Tier::Avx512 if intel() => Tier::Avx2,
        tier => tier,
    }
}
