use std::sync::Arc;

use glam::{Affine3A, Mat4};

use crate::gpu::{one_shot, vk, Device, GpuError, GpuResult, ShaderSources};
use crate::mesh::SkinnedMesh;
use crate::skin::{
    CaptureBuffer, CapturedVertex, FrameSets, FrameUniforms, GpuMesh, PathKind, SkinPipeline,
    SkinPipelineDesc, SkinningPath,
};

use super::OffscreenTarget;

/// Skins meshes on the GPU through one path in capture mode and reads the
/// skinned positions and normals back: the GPU side of every comparison
/// with the CPU reference (tests, `inspect --path`).
///
/// Each [`SkinCapture::run`] is one submission that the call waits for, so
/// a single frame slot is reused safely.
pub struct SkinCapture {
    device: Arc<Device>,
    path: Box<dyn SkinningPath>,
    pipeline: SkinPipeline,
    frame_sets: FrameSets,
    // The draw needs a rendering scope; nothing is looked at.
    target: OffscreenTarget,
}

impl SkinCapture {
    /// A capture rig for `kind` with room for `capacity` bones per palette.
    pub fn new(device: &Arc<Device>, kind: PathKind, capacity: usize) -> GpuResult<Self> {
        let path = kind.create(device, capacity.max(1), 1)?;
        let frame_sets = FrameSets::new(device, 1)?;
        let pipeline = SkinPipeline::new(
            device,
            &ShaderSources::embedded(),
            path.as_ref(),
            &frame_sets,
            &SkinPipelineDesc {
                color_format: OffscreenTarget::COLOR_FORMAT,
                depth_format: OffscreenTarget::DEPTH_FORMAT,
                polygon_mode: vk::PolygonMode::FILL,
                cull_mode: vk::CullModeFlags::NONE,
                capture: true,
            },
        )?;
        let target = OffscreenTarget::new(device, 8, 8)?;
        Ok(Self {
            device: device.clone(),
            path,
            pipeline,
            frame_sets,
            target,
        })
    }

    pub fn path(&self) -> &dyn SkinningPath {
        self.path.as_ref()
    }

    /// Skins `mesh` with the skinning matrices `skin` (one per entry of the
    /// mesh's skin) and returns one captured vertex per mesh vertex.
    pub fn run(&mut self, mesh: &SkinnedMesh, skin: &[Affine3A]) -> GpuResult<Vec<CapturedVertex>> {
        if mesh.positions.is_empty() {
            return Ok(Vec::new());
        }
        if skin.len() > self.path.capacity() {
            return Err(GpuError::Limit {
                what: "palette bones for this capture",
                needed: skin.len() as u64,
                limit: self.path.capacity() as u64,
            });
        }
        let gpu_mesh = GpuMesh::new(&self.device, mesh)?;
        let capture = CaptureBuffer::new(&self.device, mesh.positions.len())?;
        self.path.upload(0, skin)?;
        self.frame_sets.write(
            0,
            &FrameUniforms {
                view_proj: Mat4::IDENTITY.to_cols_array_2d(),
                color: [1.0; 4],
                light: [0.0, 0.0, 1.0, 0.0],
            },
        )?;
        let device = &self.device;
        let (pipeline, frame_sets, path, target) = (
            &self.pipeline,
            &self.frame_sets,
            self.path.as_ref(),
            &self.target,
        );
        one_shot(device, |cmd| {
            capture.barrier_before_draw(device, cmd);
            target.begin(cmd, [0.0; 4]);
            let recorded = pipeline.record(cmd, frame_sets, 0, path, &gpu_mesh, Some(&capture));
            // Close the rendering scope even when recording failed.
            target.end_and_copy(cmd);
            recorded?;
            capture.barrier_to_host(device, cmd);
            Ok(())
        })?;
        capture.read()
    }
}
