//! Shared harness of the GPU tests: every test makes its own instance (with
//! the validation layer and synchronization validation, both required) and
//! device, so one test's messages can never reach another's assertions.
//!
//! Messages: all severities from INFO up are recorded; INFO is ignored by
//! the assertions (the layer and loader report their startup there), any
//! WARNING or ERROR fails the test.

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use vkskin::anim::PaletteHierarchy;
use vkskin::anim::{LinearBlendJob, LocalToModelJob, Transform};
use vkskin::assets::builtin::Trident;
use vkskin::assets::Model;
use vkskin::gpu::{vk, Device, DeviceDesc, GpuError, Instance, InstanceDesc, MessageLog};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget, Projection};
use vkskin::skin::{
    CaptureBuffer, CapturedVertex, FrameSets, FrameUniforms, PathDesc, PreparedMesh, SkinPath,
    SkinPathConfig,
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

    /// Destroys the device (every other holder must be gone: teardown
    /// messages count) and then fails on any validation warning or error.
    pub fn finish(self) {
        let Self { device, log } = self;
        assert_eq!(
            Arc::strong_count(&device),
            1,
            "something still holds the device; drop it before finish()"
        );
        drop(device);
        assert_no_problems(&log);
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
        unit_normals: false,
    }
    .run()
    .expect("CPU skinning");
    (pos, nrm)
}

pub const WIRE_COLOR: [f32; 4] = [1.0, 1.0, 1.0, 1.0];
pub const CLEAR_COLOR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// A model drawn through one skinning path into an offscreen target with
/// frames in flight, optionally in capture mode.
pub struct PathRig {
    // First, so it drops first: its drop waits for every frame's fence.
    frames: FramesInFlight,
    pub camera: Camera,
    pub target: OffscreenTarget,
    pub capture: Option<CaptureBuffer>,
    pub path: SkinPath,
    pub frame_sets: FrameSets,
    pub mesh: PreparedMesh,
    pub polygon: vk::PolygonMode,
}

impl PathRig {
    /// `capacity_limit` forces partitioning; `size` is the target's side.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &GpuTest,
        desc: &'static PathDesc,
        model: &Model,
        mesh: usize,
        polygon: vk::PolygonMode,
        capture: bool,
        capacity_limit: Option<usize>,
        frames_in_flight: usize,
        size: u32,
    ) -> Result<Self, GpuError> {
        let d = &gpu.device;
        let mut cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            frames_in_flight,
        );
        cfg.capture = capture;
        cfg.capacity_limit = capacity_limit;
        cfg.wireframe = polygon != vk::PolygonMode::FILL;
        let mut path = SkinPath::new(d, desc, cfg)?;
        let m = &model.meshes[mesh];
        let hierarchy = PaletteHierarchy::new(&model.skins[m.skin], &model.skeleton)
            .map_err(|e| GpuError::InvalidArgument(e.to_string()))?;
        let prepared = path.prepare(m, &hierarchy)?;
        let frame_sets = FrameSets::new(d, frames_in_flight)?;
        let target = OffscreenTarget::new(d, size, size)?;
        let capture = match capture {
            true => Some(CaptureBuffer::new(
                d,
                path.capture_layout().expect("capture layout"),
                prepared.vertex_count() as usize * 4,
            )?),
            false => None,
        };
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
        Ok(Self {
            frames: FramesInFlight::new(d, frames_in_flight)?,
            camera,
            target,
            capture,
            path,
            frame_sets,
            mesh: prepared,
            polygon,
        })
    }

    /// Draws one frame of one instance per palette, waits for it and
    /// returns the frame slot used and, in capture mode, the captured
    /// vertices (instance-major).
    pub fn draw(
        &mut self,
        gpu: &GpuTest,
        palettes: &[&[Affine3A]],
        shaded: bool,
    ) -> (usize, Vec<CapturedVertex>) {
        let frame = self.submit(gpu, palettes, shaded);
        self.frames.wait(&frame).expect("wait");
        let captured = match &self.capture {
            Some(c) => c
                .read(palettes.len() * self.mesh.vertex_count() as usize)
                .expect("read capture"),
            None => Vec::new(),
        };
        (frame.index, captured)
    }

    /// Waits for every frame in flight.
    pub fn wait_all(&self) {
        self.frames.wait_all().expect("wait all");
    }

    /// Records and submits one frame without waiting for it (the next
    /// `begin` of its slot waits).
    pub fn submit(
        &mut self,
        gpu: &GpuTest,
        palettes: &[&[Affine3A]],
        shaded: bool,
    ) -> vkskin::render::Frame {
        self.submit_with(gpu, palettes.len(), shaded, |w| {
            w.write_all(|i| (palettes[i], Affine3A::IDENTITY, [1.0; 4]))
                .expect("write palettes");
        })
    }

    /// Makes room in the capture buffer for `vertices` vertices.
    pub fn ensure_capture(&mut self, gpu: &GpuTest, vertices: usize) {
        if let Some(c) = &self.capture {
            if c.capacity() < vertices {
                let layout = self.path.capture_layout().expect("capture layout");
                self.capture =
                    Some(CaptureBuffer::new(&gpu.device, layout, vertices).expect("capture"));
            }
        }
    }

    /// Draws one frame of `count` instances, written by `fill`, waits for
    /// it and returns the captured vertices (instance-major) in capture
    /// mode.
    pub fn draw_with(
        &mut self,
        gpu: &GpuTest,
        count: usize,
        shaded: bool,
        fill: impl FnOnce(&mut vkskin::skin::BatchWriter<'_>),
    ) -> Vec<CapturedVertex> {
        self.draw_active(gpu, count, usize::MAX, shaded, fill)
    }

    /// [`PathRig::draw_with`] through `SkinPath::batch_active` (`active`
    /// morph entries reserved per instance).
    pub fn draw_active(
        &mut self,
        gpu: &GpuTest,
        count: usize,
        active: usize,
        shaded: bool,
        fill: impl FnOnce(&mut vkskin::skin::BatchWriter<'_>),
    ) -> Vec<CapturedVertex> {
        self.ensure_capture(gpu, count * self.mesh.vertex_count() as usize);
        let frame = self.submit_active(gpu, count, active, shaded, fill);
        self.frames.wait(&frame).expect("wait");
        match &self.capture {
            Some(c) => c
                .read(count * self.mesh.vertex_count() as usize)
                .expect("read capture"),
            None => Vec::new(),
        }
    }

    /// Draws one frame of two batches of the rig's mesh, `lead` instances
    /// written by `fill_lead`, then `count` written by `fill`, waits for it
    /// and returns the second batch's captured vertices (instance-major):
    /// its instance records, outputs and morph entries start past the
    /// first batch's.
    pub fn draw_behind(
        &mut self,
        gpu: &GpuTest,
        lead: usize,
        fill_lead: impl FnOnce(&mut vkskin::skin::BatchWriter<'_>),
        count: usize,
        fill: impl FnOnce(&mut vkskin::skin::BatchWriter<'_>),
    ) -> Vec<CapturedVertex> {
        let vc = self.mesh.vertex_count() as usize;
        self.ensure_capture(gpu, count * vc);
        let frame = self.frames.begin().expect("begin");
        self.path.begin_frame(frame.index).expect("begin frame");
        let mut w = self
            .path
            .batch(frame.index, &self.mesh, lead)
            .expect("lead batch");
        let first = w.batch();
        fill_lead(&mut w);
        let mut w = self
            .path
            .batch(frame.index, &self.mesh, count)
            .expect("batch");
        let second = w.batch();
        fill(&mut w);
        self.write_uniforms(frame.index, false);
        let d = &gpu.device;
        if let Some(c) = &mut self.capture {
            let (vc, first) = second.capture_target();
            c.set_target(vc, first).expect("capture target");
            c.barrier_before_draw(d, frame.cmd);
        }
        let batches = [(&first, &self.mesh), (&second, &self.mesh)];
        self.path
            .prepass(frame.cmd, frame.index, &batches)
            .expect("prepass");
        self.target.begin(frame.cmd, CLEAR_COLOR);
        for b in [&first, &second] {
            self.path
                .record_draw(
                    frame.cmd,
                    frame.index,
                    &self.frame_sets,
                    b,
                    &self.mesh,
                    self.polygon,
                    self.capture.as_ref(),
                )
                .expect("record");
        }
        self.target.end_and_copy(frame.cmd);
        self.path.finish(frame.cmd, frame.index).expect("finish");
        if let Some(c) = &self.capture {
            c.barrier_to_host(d, frame.cmd);
        }
        self.frames.submit(&frame, None, None).expect("submit");
        self.frames.wait(&frame).expect("wait");
        match &self.capture {
            Some(c) => c.read(count * vc).expect("read capture"),
            None => Vec::new(),
        }
    }

    /// Writes frame `index`'s uniforms: the rig's camera, the wire colour,
    /// the light (flat unless `shaded`).
    fn write_uniforms(&mut self, index: usize, shaded: bool) {
        self.frame_sets
            .write(
                index,
                &FrameUniforms {
                    view_proj: self
                        .camera
                        .view_proj(self.target.aspect_ratio())
                        .to_cols_array_2d(),
                    color: WIRE_COLOR,
                    light: [0.3, 0.5, 1.0, if shaded { 1.0 } else { 0.0 }],
                },
            )
            .expect("frame uniforms");
    }

    /// [`PathRig::submit`] with the batch of `count` instances written by
    /// `fill`.
    pub fn submit_with(
        &mut self,
        gpu: &GpuTest,
        count: usize,
        shaded: bool,
        fill: impl FnOnce(&mut vkskin::skin::BatchWriter<'_>),
    ) -> vkskin::render::Frame {
        self.submit_active(gpu, count, usize::MAX, shaded, fill)
    }

    /// [`PathRig::submit_with`] through `SkinPath::batch_active` (`active`
    /// morph entries reserved per instance).
    pub fn submit_active(
        &mut self,
        gpu: &GpuTest,
        count: usize,
        active: usize,
        shaded: bool,
        fill: impl FnOnce(&mut vkskin::skin::BatchWriter<'_>),
    ) -> vkskin::render::Frame {
        let frame = self.frames.begin().expect("begin");
        self.path.begin_frame(frame.index).expect("begin frame");
        let mut w = self
            .path
            .batch_active(frame.index, &self.mesh, count, active)
            .expect("batch");
        let batch = w.batch();
        fill(&mut w);
        self.write_uniforms(frame.index, shaded);
        let d = &gpu.device;
        if let Some(c) = &mut self.capture {
            let (vc, first) = batch.capture_target();
            c.set_target(vc, first).expect("capture target");
            c.barrier_before_draw(d, frame.cmd);
        }
        self.path
            .prepass(frame.cmd, frame.index, &[(&batch, &self.mesh)])
            .expect("prepass");
        self.target.begin(frame.cmd, CLEAR_COLOR);
        self.path
            .record_draw(
                frame.cmd,
                frame.index,
                &self.frame_sets,
                &batch,
                &self.mesh,
                self.polygon,
                self.capture.as_ref(),
            )
            .expect("record");
        self.target.end_and_copy(frame.cmd);
        self.path.finish(frame.cmd, frame.index).expect("finish");
        if let Some(c) = &self.capture {
            c.barrier_to_host(d, frame.cmd);
        }
        self.frames.submit(&frame, None, None).expect("submit");
        frame
    }
}

/// The path's own CPU job on `mesh`: what its GPU capture must equal.
pub fn path_reference(
    desc: &PathDesc,
    mesh: &vkskin::mesh::SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    skin: &[Affine3A],
) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = mesh.positions.len();
    let mut pos = vec![Vec3::ZERO; n];
    let mut nrm = vec![Vec3::ZERO; if mesh.normals.is_empty() { 0 } else { n }];
    desc.encoding
        .skin_cpu(
            skin,
            hierarchy,
            vkskin::skin::CpuSkinning {
                per_vertex: mesh.influences.per_vertex,
                joints: &vkskin::anim::CheckedJoints::new(mesh.influences.joints.clone()),
                weights: &mesh.influences.weights,
                vertices: &vkskin::anim::BindVertices::new(
                    mesh.positions.clone(),
                    mesh.normals.clone(),
                )
                .expect("bind vertices"),
                out_positions: &mut pos,
                out_normals: &mut nrm,
            },
        )
        .expect("CPU reference job");
    (pos, nrm)
}

pub use crate::diagonal;

/// The palette `skin` perturbed by about 2^-20 relative, up and down (the
/// two palettes the sensitivity functions compare against).
pub fn perturbed_palettes(skin: &[Affine3A]) -> [Vec<Affine3A>; 2] {
    [1.0f32, -1.0].map(|sign| {
        let eps = sign * (2.0f32).powi(-20);
        skin.iter()
            .enumerate()
            .map(|(j, m)| {
                let f = |k: usize| 1.0 + eps * if (j + k).is_multiple_of(3) { -1.0 } else { 1.0 };
                let mut p = *m;
                p.matrix3.x_axis *= f(0);
                p.matrix3.y_axis *= f(1);
                p.matrix3.z_axis *= f(2);
                p.translation *= f(3);
                p
            })
            .collect()
    })
}

/// How far each reference normal moves when every palette entry is
/// perturbed by about 2^-20 relative (two perturbations, the larger move):
/// the conditioning of the normal at that vertex. A normal of a nearly
/// singular blend (random rotations of any angle averaged) is
/// ill-conditioned, and float rounding alone moves it by this much times
/// 2^-20 / 2^-24; the comparison allows that on top of its 1e-5.
pub fn normal_sensitivity(
    desc: &PathDesc,
    mesh: &vkskin::mesh::SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    skin: &[Affine3A],
    normals: &[Vec3],
) -> Vec<f32> {
    let mut sens = vec![0.0f32; normals.len()];
    if normals.is_empty() {
        return sens;
    }
    for perturbed in perturbed_palettes(skin) {
        let (_, n2) = path_reference(desc, mesh, hierarchy, &perturbed);
        for (s, (a, b)) in sens.iter_mut().zip(normals.iter().zip(&n2)) {
            *s = s.max((*a - *b).length());
        }
    }
    sens
}

/// Largest position and normal differences between `captured` and the
/// reference, over the vertices the index list references. Normal
/// differences are counted beyond `2 * sensitivity[v]` (see
/// [`normal_sensitivity`]; empty for none).
pub fn max_differences(
    captured: &[CapturedVertex],
    pos: &[Vec3],
    nrm: &[Vec3],
    indices: &[u32],
    sensitivity: &[f32],
) -> (f32, f32, usize) {
    let mut used = vec![false; pos.len()];
    for &i in indices {
        used[i as usize] = true;
    }
    let (mut dp, mut dn, mut worst) = (0.0f32, 0.0f32, 0);
    for (v, c) in captured.iter().enumerate().take(pos.len()) {
        if !used[v] {
            continue;
        }
        let p = (c.position() - pos[v]).length();
        if p.is_nan() || p > dp {
            dp = p;
            worst = v;
        }
        if let Some(n) = nrm.get(v) {
            let allowed = sensitivity.get(v).map_or(0.0, |s| 2.0 * s);
            let e = ((c.normal() - *n).length() - allowed).max(0.0);
            if e.is_nan() || e > dn {
                dn = e;
            }
        }
    }
    (dp, dn, worst)
}

/// Fraction of pixels whose channels all differ by at most one step
/// (1/255) between two RGBA images of one size.
pub fn agreeing(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len(), "images of different sizes");
    let same = a
        .chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(q.iter()).all(|(x, y)| x.abs_diff(*y) <= 1))
        .count();
    same as f64 / (a.len() / 4).max(1) as f64
}
