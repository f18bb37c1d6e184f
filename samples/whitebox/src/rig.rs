//! What the whitebox and strip scenes share: a model's first mesh on the
//! 4x3 uniform palette path, posed on the CPU, with a marker per joint.

use vkskin::anim::{LocalToModelJob, PaletteHierarchy, Transform};
use vkskin::assets::Model;
use vkskin::glam::{Affine3A, Mat4};
use vkskin::gpu::{vk, GpuError, GpuResult, ShaderSources};
use vkskin::render::JointMarkers;
use vkskin::skin::{Batch, FrameSets, FrameUniforms, PreparedMesh, SkinPath, SkinPathConfig};

use crate::Setup;

pub struct Rig {
    pub model: Model,
    mesh: PreparedMesh,
    path: SkinPath,
    frame_sets: FrameSets,
    batch: Option<Batch>,
    markers: JointMarkers,
    /// The joints' local transforms: the scene poses them before
    /// [`Rig::upload`].
    pub pose: Vec<Transform>,
    /// Model-space joint matrices (where the markers go).
    pub models: Vec<Affine3A>,
    skin: Vec<Affine3A>,
}

fn anim_err(e: impl std::fmt::Display) -> GpuError {
    GpuError::InvalidArgument(e.to_string())
}

impl Rig {
    /// `model`'s first mesh and skin, with wireframe pipelines if asked.
    pub fn new(setup: &Setup<'_>, model: Model, wireframe: bool) -> GpuResult<Self> {
        let mut cfg = SkinPathConfig::new(
            setup.color_format,
            setup.depth_format,
            setup.frames_in_flight,
        );
        cfg.wireframe = wireframe;
        let mut path = SkinPath::by_name(setup.device, "4x3-ubo", cfg)?;
        let hierarchy =
            PaletteHierarchy::new(&model.skins[0], &model.skeleton).map_err(anim_err)?;
        let mesh = path.prepare(&model.meshes[0], &hierarchy)?;
        let markers = JointMarkers::new(
            setup.device,
            &ShaderSources::embedded(),
            setup.color_format,
            setup.depth_format,
        )?;
        let n = model.skeleton.len();
        Ok(Self {
            mesh,
            path,
            frame_sets: FrameSets::new(setup.device, setup.frames_in_flight)?,
            batch: None,
            markers,
            pose: vec![Transform::IDENTITY; n],
            models: vec![Affine3A::IDENTITY; n],
            skin: vec![Affine3A::IDENTITY; model.skins[0].len()],
            model,
        })
    }

    /// Places the joints from [`Rig::pose`] under `root`, skins, and
    /// writes frame slot `frame`'s palette and uniforms (the slot's previous
    /// submission has finished).
    pub fn upload(
        &mut self,
        frame: usize,
        root: Affine3A,
        uniforms: &FrameUniforms,
    ) -> GpuResult<()> {
        LocalToModelJob {
            root,
            ..LocalToModelJob::full(&self.model.skeleton, &self.pose, &mut self.models)
        }
        .run()
        .map_err(anim_err)?;
        self.model.skins[0]
            .skin_matrices(&self.models, &mut self.skin)
            .map_err(anim_err)?;
        self.path.begin_frame(frame)?;
        let mut writer = self.path.batch(frame, &self.mesh, 1)?;
        self.batch = Some(writer.batch());
        let skin = &self.skin;
        writer.write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, [1.0; 4]))?;
        self.frame_sets.write(frame, uniforms)
    }

    /// Records what precedes the rendering scope (the path's GPU timer).
    pub fn prepass(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        let batch = self.batch.as_ref().ok_or_else(no_upload)?;
        self.path.prepass(cmd, frame, &[(batch, &self.mesh)])
    }

    /// Records the mesh and a marker of `marker_size` per joint inside a
    /// rendering scope.
    pub fn record(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        polygon: vk::PolygonMode,
        view_proj: Mat4,
        (marker_size, marker_color): (f32, [f32; 4]),
    ) -> GpuResult<()> {
        let batch = self.batch.as_ref().ok_or_else(no_upload)?;
        self.path.record_draw(
            cmd,
            frame,
            &self.frame_sets,
            batch,
            &self.mesh,
            polygon,
            None,
        )?;
        self.markers
            .record(cmd, view_proj, &self.models, marker_size, marker_color);
        Ok(())
    }

    /// Records what follows the rendering scope (the GPU timer's end).
    pub fn finish(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        self.path.finish(cmd, frame)
    }
}

fn no_upload() -> GpuError {
    GpuError::InvalidArgument("Rig::record before Rig::upload".into())
}
