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

use vkskin::assets::builtin::Strip;
use vkskin::glam::{Affine3A, Mat4, Vec3};
use vkskin::gpu::GpuResult;
use vkskin::render::{Camera, Projection};
use vkskin::skin::FrameUniforms;
use whitebox::{Rig, Setup};

const COLOR: [f32; 4] = [0.95, 0.62, 0.25, 1.0];

struct StripScene {
    rig: Rig,
    camera: Camera,
    /// Frames drawn so far: the seed's `count`.
    count: u64,
}

impl whitebox::Scene for StripScene {
    const NAME: &'static str = "strip";
    const ABOUT: &'static str =
        "Seed 002's strip: 12 vertices, 5 joints turning by sin(count)/5 per frame, lit";
    const CLEAR: [f32; 4] = [0.08, 0.08, 0.1, 1.0];
    const MARKER: (f32, [f32; 4]) = (0.25, [0.3, 0.75, 1.0, 1.0]);

    fn new(setup: &Setup<'_>) -> GpuResult<Self> {
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
            rig: Rig::new(setup, Strip::model(), false)?,
            camera,
            count: 0,
        })
    }

    fn update(&mut self, frame: usize, _t: f32, aspect: f32) -> GpuResult<()> {
        let rig = &mut self.rig;
        Strip::pose(
            &rig.model.skeleton,
            Strip::angle(self.count, 1.0),
            &mut rig.pose,
        );
        self.count += 1;
        let uniforms = FrameUniforms {
            view_proj: self.camera.view_proj(aspect).to_cols_array_2d(),
            color: COLOR,
            light: [0.3, 0.5, 1.0, 1.0],
        };
        rig.upload(frame, Affine3A::IDENTITY, &uniforms)
    }

    fn rig(&self) -> &Rig {
        &self.rig
    }

    fn view_proj(&self, aspect: f32) -> Mat4 {
        self.camera.view_proj(aspect)
    }
}

fn main() -> std::process::ExitCode {
    whitebox::run::<StripScene>()
}
