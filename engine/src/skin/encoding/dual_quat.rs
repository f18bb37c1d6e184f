use glam::Affine3A;

use super::contract::{
    run_tangents, with_cpu_scratch, BlendBound, CpuSkinning, CpuTangents, Encoding,
};
use crate::anim::{
    encode_dual_quat, AnimError, DualQuatSkinningJob, PaletteHierarchy, PaletteReport,
};

/// "dq": a unit dual quaternion per bone (real and dual part, two vec4),
/// signs chosen along the hierarchy; blended with the hemisphere fix against
/// the first influence (Kavan et al. 2008). Scale is dropped and reported.
/// Reference: [`DualQuatSkinningJob`] without scale/shear.
pub struct DualQuatEncoding;

impl Encoding for DualQuatEncoding {
    fn name(&self) -> &'static str {
        "dq"
    }
    fn blend_bound(&self) -> Option<BlendBound> {
        Some(BlendBound::DualQuat)
    }

    fn shader(&self) -> &'static str {
        "skin/encoding/dual_quat.glsl"
    }

    fn vec4s_per_bone(&self) -> usize {
        2
    }

    fn reference(&self) -> &'static str {
        "anim::DualQuatSkinningJob"
    }

    fn lossy(&self) -> Option<&'static str> {
        Some("any scale (reported; use dq-scale)")
    }

    fn encode(
        &self,
        skin: &[Affine3A],
        bones: &[u16],
        hierarchy: &PaletteHierarchy,
        out: &mut [[f32; 4]],
        report: &mut PaletteReport,
    ) -> Result<(), AnimError> {
        crate::anim::write_dual_quat_rows(skin, bones, hierarchy, out, report)
    }

    fn skin_cpu(
        &self,
        skin: &[Affine3A],
        hierarchy: &PaletteHierarchy,
        job: CpuSkinning<'_>,
    ) -> Result<PaletteReport, AnimError> {
        with_cpu_scratch(skin.len(), |_, palette, _, _| {
            let report = encode_dual_quat(skin, hierarchy, palette)?;
            DualQuatSkinningJob {
                palette,
                scale_shear: &[],
                per_vertex: job.per_vertex,
                joints: job.joints,
                weights: job.weights,
                positions: job.vertices.positions(),
                normals: job.vertices.normals(),
                out_positions: job.out_positions,
                out_normals: job.out_normals,
            }
            .run_prepared(job.joints, job.vertices)?;
            Ok(report)
        })
    }

    fn skin_tangents_cpu(
        &self,
        skin: &[Affine3A],
        hierarchy: &PaletteHierarchy,
        job: CpuTangents<'_>,
    ) -> Result<(), AnimError> {
        with_cpu_scratch(skin.len(), |_, palette, _, _| {
            encode_dual_quat(skin, hierarchy, palette)?;
            let palette = crate::anim::TangentPalette::DualQuat {
                palette,
                scale_shear: &[],
            };
            run_tangents(palette, job)
        })
    }
}
