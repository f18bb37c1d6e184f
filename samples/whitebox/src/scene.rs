//! The whitebox scene, independent of where it is drawn: the trident's
//! pose at time t, its palette upload, and the recorded draws (wireframe
//! mesh + a marker per joint).

use std::sync::Arc;

use vkskin::anim::{LocalToModelJob, Transform};
use vkskin::assets::builtin::Trident;
use vkskin::assets::Model;
use vkskin::glam::{Affine3A, Vec3};
use vkskin::gpu::{vk, Device, GpuResult, ShaderSources};
use vkskin::render::{Camera, JointMarkers, Projection};
use vkskin::skin::{
    FrameSets, FrameUniforms, GpuMesh, PathKind, SkinPipeline, SkinPipelineDesc, SkinningPath,
};

pub const CLEAR: [f32; 4] = [0.06, 0.07, 0.09, 1.0];
const WIRE: [f32; 4] = [0.92, 0.92, 0.85, 1.0];
const MARKER: [f32; 4] = [1.0, 0.45, 0.15, 1.0];

pub struct Scene {
    model: Model,
    mesh: GpuMesh,
    path: Box<dyn SkinningPath>,
    frame_sets: FrameSets,
    pipeline: SkinPipeline,
    markers: JointMarkers,
    pub camera: Camera,
    pose: Vec<Transform>,
    models: Vec<Affine3A>,
    skin: Vec<Affine3A>,
    wireframe: bool,
}

impl Scene {
    pub fn new(
        device: &Arc<Device>,
        color_format: vk::Format,
        depth_format: vk::Format,
        frames_in_flight: usize,
    ) -> GpuResult<Self> {
        let model = Trident::model();
        let sources = ShaderSources::embedded();
        let mesh = GpuMesh::new(device, &model.meshes[0])?;
        let path =
            PathKind::Palette4x3Ubo.create(device, model.skins[0].len(), frames_in_flight)?;
        let frame_sets = FrameSets::new(device, frames_in_flight)?;
        let wireframe = device.features().fill_mode_non_solid;
        if !wireframe {
            log::warn!(
                "whitebox: the device lacks fillModeNonSolid; drawing solid instead of wireframe"
            );
        }
        let pipeline = SkinPipeline::new(
            device,
            &sources,
            path.as_ref(),
            &frame_sets,
            &SkinPipelineDesc {
                color_format,
                depth_format,
                polygon_mode: if wireframe {
                    vk::PolygonMode::LINE
                } else {
                    vk::PolygonMode::FILL
                },
                cull_mode: vk::CullModeFlags::NONE,
                capture: false,
            },
        )?;
        let markers = JointMarkers::new(device, &sources, color_format, depth_format)?;
        let n = model.skeleton.len();
        Ok(Self {
            mesh,
            path,
            frame_sets,
            pipeline,
            markers,
            camera: camera(),
            pose: vec![Transform::IDENTITY; n],
            models: vec![Affine3A::IDENTITY; n],
            skin: vec![Affine3A::IDENTITY; model.skins[0].len()],
            model,
            wireframe,
        })
    }

    /// Poses the trident at `t` seconds and writes frame `frame`'s palette
    /// and uniforms (the frame's previous submission has finished).
    pub fn update(&mut self, frame: usize, t: f32, aspect: f32) -> GpuResult<()> {
        let s = &self.model.skeleton;
        Trident::pose(s, t, &mut self.pose);
        LocalToModelJob {
            root: Trident::root(t),
            ..LocalToModelJob::full(s, &self.pose, &mut self.models)
        }
        .run()
        .map_err(|e| vkskin::gpu::GpuError::InvalidArgument(e.to_string()))?;
        self.model.skins[0]
            .skin_matrices(&self.models, &mut self.skin)
            .map_err(|e| vkskin::gpu::GpuError::InvalidArgument(e.to_string()))?;
        self.path.upload(frame, &self.skin)?;
        let (color, light) = if self.wireframe {
            (WIRE, [0.0, 0.0, 1.0, 0.0])
        } else {
            (WIRE, [0.3, 0.5, 1.0, 1.0])
        };
        self.frame_sets.write(
            frame,
            &FrameUniforms {
                view_proj: self.camera.view_proj(aspect).to_cols_array_2d(),
                color,
                light,
            },
        )
    }

    /// Records the draws inside a rendering scope.
    pub fn record(&self, cmd: vk::CommandBuffer, frame: usize, aspect: f32) -> GpuResult<()> {
        self.pipeline.record(
            cmd,
            &self.frame_sets,
            frame,
            self.path.as_ref(),
            &self.mesh,
            None,
        )?;
        self.markers.record(
            cmd,
            self.camera.view_proj(aspect),
            &self.models,
            0.12,
            MARKER,
        );
        Ok(())
    }
}

/// Looking down -Z at the trident (it lies in the XY plane), far enough
/// back that the turning model and the joints' 70-degree swings stay in view.
pub fn camera() -> Camera {
    Camera::look_at(
        Vec3::new(0.0, 0.0, 5.8),
        Vec3::ZERO,
        Vec3::Y,
        Projection::Perspective {
            fov_y: 50f32.to_radians(),
            near: 0.5,
            far: 20.0,
        },
    )
}
