use glam::Affine3A;

use super::contract::{run_tangents, BlendBound, CpuSkinning, CpuTangents, Encoding};
use crate::anim::{AnimError, LinearBlendJob, PaletteHierarchy, PaletteReport};

/// "4x3": the top three rows of each skinning matrix (three vec4,
/// [`crate::anim::Affine4x3`]); linear blend skinning, exact for any affine matrix.
/// Reference: [`LinearBlendJob`].
pub struct Affine4x3Encoding;

impl Encoding for Affine4x3Encoding {
    fn name(&self) -> &'static str {
        "4x3"
    }
    fn blend_bound(&self) -> Option<BlendBound> {
        Some(BlendBound::Linear)
    }

    fn shader(&self) -> &'static str {
        "skin/encoding/affine4x3.glsl"
    }

    fn vec4s_per_bone(&self) -> usize {
        3
    }

    fn reference(&self) -> &'static str {
        "anim::LinearBlendJob"
    }

    fn encode(
        &self,
        skin: &[Affine3A],
        bones: &[u16],
        hierarchy: &PaletteHierarchy,
        out: &mut [[f32; 4]],
        _report: &mut PaletteReport,
    ) -> Result<(), AnimError> {
        crate::anim::write_4x3_rows(skin, bones, hierarchy, out)
    }

    fn skin_cpu(
        &self,
        skin: &[Affine3A],
        _hierarchy: &PaletteHierarchy,
        job: CpuSkinning<'_>,
    ) -> Result<PaletteReport, AnimError> {
        LinearBlendJob {
            skin,
            per_vertex: job.per_vertex,
            joints: job.joints,
            weights: job.weights,
            positions: job.vertices.positions(),
            normals: job.vertices.normals(),
            out_positions: job.out_positions,
            out_normals: job.out_normals,
            unit_normals: false,
        }
        .run_prepared(job.joints, job.vertices)?;
        Ok(PaletteReport::default())
    }

    fn skin_tangents_cpu(
        &self,
        skin: &[Affine3A],
        _hierarchy: &PaletteHierarchy,
        job: CpuTangents<'_>,
    ) -> Result<(), AnimError> {
        run_tangents(crate::anim::TangentPalette::Matrices(skin), job)
    }
}
