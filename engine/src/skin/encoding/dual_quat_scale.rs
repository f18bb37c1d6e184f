use glam::Affine3A;

use super::contract::{
    run_tangents, with_cpu_scratch, BlendBound, CpuSkinning, CpuTangents, Encoding,
};
use crate::anim::{
    encode_dual_quat_scale, AnimError, DualQuatSkinningJob, PaletteHierarchy, PaletteReport,
};

/// "dq-scale": two-phase dual-quaternion skinning for skeletons with scale.
/// Per bone five vec4: the rigid part's dual quaternion (real, dual), then
/// the rows of its scale/shear matrix `S` (`m = [R | t] * [S | 0]`). Nothing
/// is lost, so nothing is reported. Reference: [`DualQuatSkinningJob`] with
/// `scale_shear`.
pub struct DualQuatScaleEncoding;

impl Encoding for DualQuatScaleEncoding {
    fn name(&self) -> &'static str {
        "dq-scale"
    }
    fn blend_bound(&self) -> Option<BlendBound> {
        Some(BlendBound::DualQuatScale)
    }

    fn shader(&self) -> &'static str {
        "skin/encoding/dual_quat_scale.glsl"
    }

    fn vec4s_per_bone(&self) -> usize {
        5
    }

    fn reference(&self) -> &'static str {
        "anim::DualQuatSkinningJob (scale_shear)"
    }

    fn encode(
        &self,
        skin: &[Affine3A],
        bones: &[u16],
        hierarchy: &PaletteHierarchy,
        out: &mut [[f32; 4]],
        _report: &mut PaletteReport,
    ) -> Result<(), AnimError> {
        crate::anim::write_dual_quat_scale_rows(skin, bones, hierarchy, out)
    }

    fn skin_cpu(
        &self,
        skin: &[Affine3A],
        hierarchy: &PaletteHierarchy,
        job: CpuSkinning<'_>,
    ) -> Result<PaletteReport, AnimError> {
        with_cpu_scratch(skin.len(), |_, palette, scale_shear, _| {
            encode_dual_quat_scale(skin, hierarchy, palette, scale_shear)?;
            DualQuatSkinningJob {
                palette,
                scale_shear,
                per_vertex: job.per_vertex,
                joints: job.joints,
                weights: job.weights,
                positions: job.vertices.positions(),
                normals: job.vertices.normals(),
                out_positions: job.out_positions,
                out_normals: job.out_normals,
            }
            .run_prepared(job.joints, job.vertices)?;
            Ok(PaletteReport::default())
        })
    }

    fn skin_tangents_cpu(
        &self,
        skin: &[Affine3A],
        hierarchy: &PaletteHierarchy,
        job: CpuTangents<'_>,
    ) -> Result<(), AnimError> {
        with_cpu_scratch(skin.len(), |_, palette, scale_shear, _| {
            encode_dual_quat_scale(skin, hierarchy, palette, scale_shear)?;
            let palette = crate::anim::TangentPalette::DualQuat {
                palette,
                scale_shear,
            };
            run_tangents(palette, job)
        })
    }
}
