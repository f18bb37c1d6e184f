//! Seed 002's strip: twelve vertices, five joints in a chain, every joint
//! turned about Z by a further `sin(count) / 5` radians each frame (the
//! seed's `count` is the frame number), skinned on the GPU through the 4x3
//! uniform palette and lit through its skinned normals (the cofactor of the
//! blended matrix: the inverse transpose up to a positive factor, which the
//! shader's normalisation removes). Joint markers show the chain.
//!
//! Windowed when a display exists, else (or with `--headless`) N PNG frames;
//! the same options as `whitebox` (`--help`). The motion is counted in
//! frames, as the seed's is, so `--fps` only names the frames' times.

use std::sync::Arc;

use vkskin::anim::{LocalToModelJob, PaletteHierarchy, Transform};
use vkskin::assets::builtin::Strip;
use vkskin::assets::Model;
use vkskin::glam::{Affine3A, Vec3};
use vkskin::gpu::{vk, Device, GpuError, GpuResult, ShaderSources};
use vkskin::render::{Camera, JointMarkers, Projection};
use vkskin::skin::{Batch, FrameSets, FrameUniforms, PreparedMesh, SkinPath, SkinPathConfig};

const COLOR: [f32; 4] = [0.95, 0.62, 0.25, 1.0];
const MARKER: [f32; 4] = [0.3, 0.75, 1.0, 1.0];

struct StripScene {
    model: Model,
    mesh: PreparedMesh,
    path: SkinPath,
    frame_sets: FrameSets,
    batch: Option<Batch>,
    markers: JointMarkers,
    camera: Camera,
    pose: Vec<Transform>,
    models: Vec<Affine3A>,
    skin: Vec<Affine3A>,
    /// Frames drawn so far: the seed's `count`.
    count: u64,
}

fn anim_err(e: vkskin::anim::AnimError) -> GpuError {
    GpuError::InvalidArgument(e.to_string())
}

impl whitebox::Scene for StripScene {
    const NAME: &'static str = "strip";
    const ABOUT: &'static str =
        "Seed 002's strip: 12 vertices, 5 joints turning by sin(count)/5 per frame, lit";
    const CLEAR: [f32; 4] = [0.08, 0.08, 0.1, 1.0];

    fn new(
        device: &Arc<Device>,
        color_format: vk::Format,
        depth_format: vk::Format,
        frames_in_flight: usize,
    ) -> GpuResult<Self> {
        let model = Strip::model();
        let cfg = SkinPathConfig::new(color_format, depth_format, frames_in_flight);
        let mut path = SkinPath::by_name(device, "4x3-ubo", cfg)?;
        let hierarchy =
            PaletteHierarchy::new(&model.skins[0], &model.skeleton).map_err(anim_err)?;
        let mesh = path.prepare(&model.meshes[0], &hierarchy)?;
        let markers = JointMarkers::new(
            device,
            &ShaderSources::embedded(),
            color_format,
            depth_format,
        )?;
        // Facing the strip's lit side; the bend stays in the XY plane.
        let camera = Camera::look_at(
            Vec3::new(1.0, 3.0, 10.0),
            Vec3::new(1.0, 3.0, 0.0),
            Vec3::Y,
            Projection::Perspective {
                fov_y: 55f32.to_radians(),
                near: 1.0,
                far: 30.0,
            },
        );
        Ok(Self {
            frame_sets: FrameSets::new(device, frames_in_flight)?,
            batch: None,
            markers,
            camera,
            pose: vec![Transform::IDENTITY; 5],
            models: vec![Affine3A::IDENTITY; 5],
            skin: vec![Affine3A::IDENTITY; 5],
            mesh,
            path,
            model,
            count: 0,
        })
    }

    fn update(&mut self, frame: usize, _t: f32, aspect: f32) -> GpuResult<()> {
        let s = &self.model.skeleton;
        Strip::pose(s, Strip::angle(self.count, 1.0), &mut self.pose);
        self.count += 1;
        LocalToModelJob::full(s, &self.pose, &mut self.models)
            .run()
            .map_err(anim_err)?;
        self.model.skins[0]
            .skin_matrices(&self.models, &mut self.skin)
            .map_err(anim_err)?;
        self.path.begin_frame(frame)?;
        let mut w = self.path.batch(frame, &self.mesh, 1)?;
        self.batch = Some(w.batch());
        let skin = &self.skin;
        w.write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, [1.0; 4]))?;
        self.frame_sets.write(
            frame,
            &FrameUniforms {
                view_proj: self.camera.view_proj(aspect).to_cols_array_2d(),
                color: COLOR,
                light: [0.3, 0.5, 1.0, 1.0],
            },
        )
    }

    fn prepass(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        let batch = self.batch.as_ref().ok_or_else(no_update)?;
        self.path.prepass(cmd, frame, &[(batch, &self.mesh)])
    }

    fn record(&self, cmd: vk::CommandBuffer, frame: usize, aspect: f32) -> GpuResult<()> {
        let batch = self.batch.as_ref().ok_or_else(no_update)?;
        self.path.record_draw(
            cmd,
            frame,
            &self.frame_sets,
            batch,
            &self.mesh,
            vk::PolygonMode::FILL,
            None,
        )?;
        self.markers.record(
            cmd,
            self.camera.view_proj(aspect),
            &self.models,
            0.25,
            MARKER,
        );
        Ok(())
    }

    fn finish(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        self.path.finish(cmd, frame)
    }
}

fn no_update() -> GpuError {
    GpuError::InvalidArgument("strip: record before update".into())
}

fn main() -> std::process::ExitCode {
    whitebox::run::<StripScene>()
}
