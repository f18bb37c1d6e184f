//! The whitebox scene, independent of where it is drawn: the trident's
//! pose at time t, its palette upload, and the recorded draws (wireframe
//! mesh + a marker per joint).

use std::sync::Arc;

use vkskin::anim::{LocalToModelJob, PaletteHierarchy, Transform};
use vkskin::assets::builtin::Trident;
use vkskin::assets::Model;
use vkskin::glam::{Affine3A, Vec3};
use vkskin::gpu::{vk, Device, GpuError, GpuResult, ShaderSources};
use vkskin::render::{Camera, JointMarkers, Projection};
use vkskin::skin::{Batch, FrameSets, FrameUniforms, PreparedMesh, SkinPath, SkinPathConfig};

const WIRE: [f32; 4] = [0.92, 0.92, 0.85, 1.0];
const MARKER: [f32; 4] = [1.0, 0.45, 0.15, 1.0];

pub struct Scene {
    model: Model,
    mesh: PreparedMesh,
    path: SkinPath,
    frame_sets: FrameSets,
    batch: Option<Batch>,
    markers: JointMarkers,
    pub camera: Camera,
    pose: Vec<Transform>,
    models: Vec<Affine3A>,
    skin: Vec<Affine3A>,
    wireframe: bool,
}

impl whitebox::Scene for Scene {
    const NAME: &'static str = "whitebox";
    const ABOUT: &'static str = "Seed 000's whitebox trident, skinned on the GPU";
    const CLEAR: [f32; 4] = [0.06, 0.07, 0.09, 1.0];

    fn new(
        device: &Arc<Device>,
        color_format: vk::Format,
        depth_format: vk::Format,
        frames_in_flight: usize,
    ) -> GpuResult<Self> {
        let model = Trident::model();
        let sources = ShaderSources::embedded();
        let frame_sets = FrameSets::new(device, frames_in_flight)?;
        let wireframe = device.features().fill_mode_non_solid;
        if !wireframe {
            log::warn!(
                "whitebox: the device lacks fillModeNonSolid; drawing solid instead of wireframe"
            );
        }
        let mut cfg = SkinPathConfig::new(color_format, depth_format, frames_in_flight);
        cfg.wireframe = wireframe;
        let mut path = SkinPath::by_name(device, "4x3-ubo", cfg)?;
        let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton)
            .map_err(|e| GpuError::InvalidArgument(e.to_string()))?;
        let mesh = path.prepare(&model.meshes[0], &hierarchy)?;
        let markers = JointMarkers::new(device, &sources, color_format, depth_format)?;
        let n = model.skeleton.len();
        Ok(Self {
            mesh,
            path,
            frame_sets,
            batch: None,
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
    fn update(&mut self, frame: usize, t: f32, aspect: f32) -> GpuResult<()> {
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
        self.path.begin_frame(frame)?;
        let mut writer = self.path.batch(frame, &self.mesh, 1)?;
        self.batch = Some(writer.batch());
        let skin = &self.skin;
        writer.write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, [1.0; 4]))?;
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

    /// Records what precedes the rendering scope (the path's GPU timer).
    fn prepass(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        let batch = self.batch.as_ref().ok_or_else(no_update)?;
        self.path.prepass(cmd, frame, &[(batch, &self.mesh)])
    }

    /// Records what follows the rendering scope (the GPU timer's end).
    fn finish(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        self.path.finish(cmd, frame)
    }

    /// Records the draws inside a rendering scope.
    fn record(&self, cmd: vk::CommandBuffer, frame: usize, aspect: f32) -> GpuResult<()> {
        let batch = self.batch.as_ref().ok_or_else(no_update)?;
        let polygon = if self.wireframe {
            vk::PolygonMode::LINE
        } else {
            vk::PolygonMode::FILL
        };
        self.path.record_draw(
            cmd,
            frame,
            &self.frame_sets,
            batch,
            &self.mesh,
            polygon,
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

fn no_update() -> GpuError {
    GpuError::InvalidArgument("Scene::record before Scene::update".into())
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
