//! Shared harness of the GPU tests: every test makes its own instance (with
//! the validation layer and synchronization validation, both required) and
//! device, so one test's messages can never reach another's assertions.
//!
//! Messages: all severities from INFO up are recorded; INFO is ignored by
//! the assertions (the layer and loader report their startup there), any
//! WARNING or ERROR fails the test.

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use vkskin::anim::{LinearBlendJob, LocalToModelJob, Transform};
use vkskin::assets::builtin::Trident;
use vkskin::assets::Model;
use vkskin::gpu::{
    vk, Device, DeviceDesc, GpuError, Instance, InstanceDesc, MessageLog, ShaderSources,
};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget, Projection};
use vkskin::skin::{
    CaptureBuffer, CapturedVertex, FrameSets, FrameUniforms, GpuMesh, PathKind, SkinPipeline,
    SkinPipelineDesc, SkinningPath,
};

/// An instance with validation + sync validation and a headless device.
pub struct GpuTest {
    pub device: Arc<Device>,
    pub log: MessageLog,
}

impl GpuTest {
    pub fn new() -> Self {
        let instance = match Instance::new(&InstanceDesc {
            app_name: "vkskin-tests".into(),
            validation: true,
            synchronization_validation: true,
            display: None,
        }) {
            Ok(i) => i,
            Err(GpuError::ValidationLayerMissing) => panic!(
                "GPU tests need VK_LAYER_KHRONOS_validation: install the Debian package \
                 `vulkan-validationlayers` (./dev.sh test installs it)"
            ),
            Err(e) => panic!("creating the Vulkan instance: {e}"),
        };
        let log = instance.messages().clone();
        let device = Device::new(&instance, &DeviceDesc::default())
            .unwrap_or_else(|e| panic!("creating the device: {e}"));
        Self { device, log }
    }

    /// Fails on any validation warning or error so far.
    pub fn assert_clean(&self) {
        assert_no_problems(&self.log);
    }
}

impl Default for GpuTest {
    fn default() -> Self {
        Self::new()
    }
}

pub fn assert_no_problems(log: &MessageLog) {
    let problems = log.problems();
    assert!(
        problems.is_empty(),
        "the validation layer reported {} problem(s):\n{}",
        problems.len(),
        MessageLog::format(&problems)
    );
}

/// Skinning matrices of the trident at time `t` (the seed's animation), or
/// of the bind pose (identity deltas) for `None`.
pub fn trident_skin(model: &Model, t: Option<f32>) -> (Vec<Affine3A>, Vec<Affine3A>) {
    let s = &model.skeleton;
    let mut pose = vec![Transform::IDENTITY; s.len()];
    let root = match t {
        Some(t) => {
            Trident::pose(s, t, &mut pose);
            Trident::root(t)
        }
        None => {
            pose.copy_from_slice(s.bind_local());
            Affine3A::IDENTITY
        }
    };
    let mut models = vec![Affine3A::IDENTITY; s.len()];
    LocalToModelJob {
        root,
        ..LocalToModelJob::full(s, &pose, &mut models)
    }
    .run()
    .expect("local to model");
    let mut skin = vec![Affine3A::IDENTITY; model.skins[0].len()];
    model.skins[0]
        .skin_matrices(&models, &mut skin)
        .expect("skin matrices");
    (models, skin)
}

/// The CPU reference: `LinearBlendJob` positions and normals.
pub fn cpu_skin(model: &Model, skin: &[Affine3A]) -> (Vec<Vec3>, Vec<Vec3>) {
    let mesh = &model.meshes[0];
    let n = mesh.positions.len();
    let mut pos = vec![Vec3::ZERO; n];
    let mut nrm = vec![Vec3::ZERO; n];
    LinearBlendJob {
        skin,
        per_vertex: mesh.influences.per_vertex,
        joints: &mesh.influences.joints,
        weights: &mesh.influences.weights,
        positions: &mesh.positions,
        normals: &mesh.normals,
        out_positions: &mut pos,
        out_normals: &mut nrm,
    }
    .run()
    .expect("CPU skinning");
    (pos, nrm)
}

pub const WIRE_COLOR: [f32; 4] = [1.0, 1.0, 1.0, 1.0];
pub const CLEAR_COLOR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// The trident drawn through one skinning path into an offscreen target,
/// optionally in capture mode.
pub struct TridentRig {
    // First, so it drops first: its drop waits for every frame's fence
    // before the resources those frames used go.
    frames: FramesInFlight,
    pub model: Model,
    pub camera: Camera,
    pub target: OffscreenTarget,
    pub capture: Option<CaptureBuffer>,
    pub path: Box<dyn SkinningPath>,
    pipeline: SkinPipeline,
    frame_sets: FrameSets,
    mesh: GpuMesh,
}

impl TridentRig {
    pub fn new(
        gpu: &GpuTest,
        kind: PathKind,
        polygon_mode: vk::PolygonMode,
        capture: bool,
    ) -> Self {
        let d = &gpu.device;
        let model = Trident::model();
        let frames_in_flight = 2;
        let path = kind.create(d, 16, frames_in_flight).expect("path");
        let frame_sets = FrameSets::new(d, frames_in_flight).expect("frame sets");
        let target = OffscreenTarget::new(d, 256, 256).expect("target");
        let pipeline = SkinPipeline::new(
            d,
            &ShaderSources::embedded(),
            path.as_ref(),
            &frame_sets,
            &SkinPipelineDesc {
                color_format: OffscreenTarget::COLOR_FORMAT,
                depth_format: OffscreenTarget::DEPTH_FORMAT,
                polygon_mode,
                cull_mode: vk::CullModeFlags::NONE,
                capture,
            },
        )
        .expect("pipeline");
        let mesh = GpuMesh::new(d, &model.meshes[0]).expect("mesh");
        let capture =
            capture.then(|| CaptureBuffer::new(d, mesh.vertex_count() as usize).expect("capture"));
        let camera = Camera::look_at(
            Vec3::new(0.0, 0.0, 8.0),
            Vec3::ZERO,
            Vec3::Y,
            Projection::Perspective {
                fov_y: 50f32.to_radians(),
                near: 0.5,
                far: 20.0,
            },
        );
        Self {
            model,
            camera,
            target,
            capture,
            path,
            pipeline,
            frame_sets,
            mesh,
            frames: FramesInFlight::new(d, frames_in_flight).expect("frames"),
        }
    }

    /// Draws one frame with `skin` and waits for it. Returns the frame
    /// index used and, in capture mode, the captured vertices.
    pub fn draw(&mut self, gpu: &GpuTest, skin: &[Affine3A]) -> (usize, Vec<CapturedVertex>) {
        let d = &gpu.device;
        let frame = self.frames.begin().expect("begin");
        self.path.upload(frame.index, skin).expect("upload");
        self.frame_sets
            .write(
                frame.index,
                &FrameUniforms {
                    view_proj: self
                        .camera
                        .view_proj(self.target.aspect_ratio())
                        .to_cols_array_2d(),
                    color: WIRE_COLOR,
                    light: [0.0, 0.0, 1.0, 0.0],
                },
            )
            .expect("frame uniforms");
        if let Some(c) = &self.capture {
            c.barrier_before_draw(d, frame.cmd);
        }
        self.target.begin(frame.cmd, CLEAR_COLOR);
        self.pipeline
            .record(
                frame.cmd,
                &self.frame_sets,
                frame.index,
                self.path.as_ref(),
                &self.mesh,
                self.capture.as_ref(),
            )
            .expect("record");
        self.target.end_and_copy(frame.cmd);
        if let Some(c) = &self.capture {
            c.barrier_to_host(d, frame.cmd);
        }
        self.frames.submit(&frame, None, None).expect("submit");
        self.frames.wait(&frame).expect("wait");
        let captured = match &self.capture {
            Some(c) => c.read().expect("read capture"),
            None => Vec::new(),
        };
        (frame.index, captured)
    }
}
