//! What every palette encoding provides ([`Encoding`]), the vertex
//! streams its CPU job reads and writes ([`CpuSkinning`]), and the CPU
//! stage's per-thread scratch palettes: the contract between the registry,
//! `SkinPath` and the encoding files, below all three.

use std::cell::RefCell;

use glam::{Affine3A, Vec3, Vec4};

use crate::anim::{AnimError, PaletteHierarchy, PaletteReport};

/// The vertex streams a CPU skinning job reads and writes: the same
/// arguments every `anim` skinning job takes.
pub struct CpuSkinning<'a> {
    /// Influences per vertex: `joints` and `weights` hold this many per
    /// vertex, consecutively.
    pub per_vertex: usize,
    /// Checked once (the CPU stage's prepared mesh): the job runs through
    /// `run_checked` and skips a per-call scan of the indices.
    pub joints: &'a crate::anim::CheckedJoints,
    /// One weight per influence (`per_vertex` per vertex), summing to one.
    pub weights: &'a [f32],
    /// Bind positions and normals, prepared once: the LBS and DQS jobs run
    /// through `run_prepared` and read their blocks of eight.
    pub vertices: &'a crate::anim::BindVertices,
    /// Skinned positions, one per mesh vertex (model space).
    pub out_positions: &'a mut [Vec3],
    /// Skinned normals, one per mesh vertex.
    pub out_normals: &'a mut [Vec3],
}

/// The tangent stream a CPU tangent job reads and writes, with the same
/// influences as [`CpuSkinning`]: the arguments of
/// [`TangentSkinningJob`](crate::anim::TangentSkinningJob).
pub struct CpuTangents<'a> {
    /// Influences per vertex.
    pub per_vertex: usize,
    /// `per_vertex` joint indices per vertex.
    pub joints: &'a [u16],
    /// One weight per influence.
    pub weights: &'a [f32],
    /// Bind-pose (or morphed) tangents, one per vertex: `xyz` a direction,
    /// `w` the bitangent's sign.
    pub tangents: &'a [Vec4],
    /// Skinned tangents, one per vertex (`xyz` renormalised, `w` copied).
    pub out_tangents: &'a mut [Vec4],
}

/// Which conservative box holds what an encoding's blend draws (the
/// skinned bounds of `mesh::JointBounds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlendBound {
    /// The linear blend of whole matrices: `JointBounds::skinned`.
    Linear,
    /// Dual quaternions, rigid: `JointBounds::skinned_dual_quat`.
    DualQuat,
    /// Dual quaternions with the scale/shear matrices kept:
    /// `JointBounds::skinned_dual_quat` given them.
    DualQuatScale,
}

/// One palette encoding.
pub trait Encoding: Send + Sync {
    /// Short name, the first part of a path name ("4x3", "qt", "dq", "dq-scale").
    fn name(&self) -> &'static str;
    /// The GLSL file defining `skin_vertex` (in [`crate::gpu::ShaderSources`]).
    fn shader(&self) -> &'static str;
    /// vec4s one bone takes in the palette.
    fn vec4s_per_bone(&self) -> usize;
    /// The CPU job the GPU is tested against, by name.
    fn reference(&self) -> &'static str;
    /// What the encoding cannot keep, in words (`None`: exact for every
    /// skinning matrix). Such bones are reported, not refused.
    fn lossy(&self) -> Option<&'static str> {
        None
    }
    /// The box that holds what this encoding draws (`None`: none is shown
    /// to, as for an encoding that may drop a scale).
    fn blend_bound(&self) -> Option<BlendBound> {
        None
    }
    /// Writes bones `bones` (entries of `skin`) into `out`, bone `k` at
    /// `out[k * vec4s_per_bone..]`. `hierarchy` is the sub-palette's (see
    /// [`PaletteHierarchy::restrict`]). Bones the encoding could not keep go
    /// into `report`, numbered as entries of `skin`. Allocates nothing once
    /// warm.
    fn encode(
        &self,
        skin: &[Affine3A],
        bones: &[u16],
        hierarchy: &PaletteHierarchy,
        out: &mut [[f32; 4]],
        report: &mut PaletteReport,
    ) -> Result<(), AnimError>;
    /// Runs the reference CPU job on the whole palette `skin` (the CPU stage
    /// and the tests' oracle).
    fn skin_cpu(
        &self,
        skin: &[Affine3A],
        hierarchy: &PaletteHierarchy,
        job: CpuSkinning<'_>,
    ) -> Result<PaletteReport, AnimError>;
    /// Skins tangents as [`Encoding::skin_cpu`] skins normals: the
    /// encoding's palette through
    /// [`TangentSkinningJob`](crate::anim::TangentSkinningJob) with the
    /// blend of its position job (the CPU stage and the tests' oracle).
    fn skin_tangents_cpu(
        &self,
        skin: &[Affine3A],
        hierarchy: &PaletteHierarchy,
        job: CpuTangents<'_>,
    ) -> Result<(), AnimError>;
}

/// The [`TangentSkinningJob`](crate::anim::TangentSkinningJob) of `job`
/// with `palette`.
pub(super) fn run_tangents(
    palette: crate::anim::TangentPalette<'_>,
    job: CpuTangents<'_>,
) -> Result<(), AnimError> {
    crate::anim::TangentSkinningJob {
        palette,
        per_vertex: job.per_vertex,
        joints: job.joints,
        weights: job.weights,
        tangents: job.tangents,
        out_tangents: job.out_tangents,
    }
    .run()
}

/// Per-thread palettes of the CPU stage's reference jobs, kept between
/// calls so that skinning a crowd on the CPU allocates nothing once warm.
#[derive(Default)]
struct CpuScratch {
    qt: Vec<crate::anim::QuatTranslation>,
    dq: Vec<crate::anim::DualQuat>,
    scale_shear: Vec<glam::Mat3A>,
    matrices: Vec<Affine3A>,
}

thread_local! {
    static CPU_SCRATCH: RefCell<CpuScratch> = RefCell::new(CpuScratch::default());
}

/// Runs `f` with this thread's scratch palettes resized to `n` entries.
pub(super) fn with_cpu_scratch<R>(
    n: usize,
    f: impl FnOnce(
        &mut [crate::anim::QuatTranslation],
        &mut [crate::anim::DualQuat],
        &mut [glam::Mat3A],
        &mut Vec<Affine3A>,
    ) -> R,
) -> R {
    CPU_SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let s = &mut *s;
        s.qt.resize(n, crate::anim::QuatTranslation::IDENTITY);
        s.dq.resize(n, crate::anim::DualQuat::IDENTITY);
        s.scale_shear.resize(n, glam::Mat3A::IDENTITY);
        f(&mut s.qt, &mut s.dq, &mut s.scale_shear, &mut s.matrices)
    })
}
