use glam::Affine3A;

use super::contract::{run_tangents, with_cpu_scratch, CpuSkinning, CpuTangents, Encoding};
use crate::anim::{
    encode_quat_translation, AnimError, PaletteHierarchy, PaletteReport, QuatTranslationSkinningJob,
};

/// "qt": a unit rotation quaternion and translation + uniform scale per bone
/// (two vec4, [`QuatTranslation`](crate::anim::QuatTranslation)), each
/// influence's matrix rebuilt then blended (seed 001). Non-uniform scale or
/// shear cannot be kept: such bones are reported. Reference:
/// [`QuatTranslationSkinningJob`].
pub struct QuatTranslationEncoding;

impl Encoding for QuatTranslationEncoding {
    fn name(&self) -> &'static str {
        "qt"
    }

    fn shader(&self) -> &'static str {
        "skin/encoding/quat_translation.glsl"
    }

    fn vec4s_per_bone(&self) -> usize {
        2
    }

    fn reference(&self) -> &'static str {
        "anim::QuatTranslationSkinningJob"
    }

    fn lossy(&self) -> Option<&'static str> {
        Some("non-uniform scale or shear (reported)")
    }

    fn encode(
        &self,
        skin: &[Affine3A],
        bones: &[u16],
        hierarchy: &PaletteHierarchy,
        out: &mut [[f32; 4]],
        report: &mut PaletteReport,
    ) -> Result<(), AnimError> {
        crate::anim::write_quat_translation_rows(skin, bones, hierarchy, out, report)
    }

    fn skin_cpu(
        &self,
        skin: &[Affine3A],
        _hierarchy: &PaletteHierarchy,
        job: CpuSkinning<'_>,
    ) -> Result<PaletteReport, AnimError> {
        with_cpu_scratch(skin.len(), |palette, _, _, matrices| {
            let report = encode_quat_translation(skin, palette)?;
            QuatTranslationSkinningJob {
                palette,
                per_vertex: job.per_vertex,
                joints: job.joints,
                weights: job.weights,
                positions: job.vertices.positions(),
                normals: job.vertices.normals(),
                out_positions: job.out_positions,
                out_normals: job.out_normals,
            }
            .run_checked_with(job.joints, matrices)?;
            Ok(report)
        })
    }

    fn skin_tangents_cpu(
        &self,
        skin: &[Affine3A],
        _hierarchy: &PaletteHierarchy,
        job: CpuTangents<'_>,
    ) -> Result<(), AnimError> {
        with_cpu_scratch(skin.len(), |palette, _, _, _| {
            encode_quat_translation(skin, palette)?;
            run_tangents(crate::anim::TangentPalette::QuatTranslation(palette), job)
        })
    }
}
