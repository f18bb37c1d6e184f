//! The whitebox scene, independent of where it is drawn: the trident's
//! pose at time t on the rig (wireframe mesh + a marker per joint) and the
//! camera.

use vkskin::assets::builtin::Trident;
use vkskin::glam::{Mat4, Vec3};
use vkskin::gpu::{vk, GpuResult};
use vkskin::render::{Camera, Projection};
use vkskin::skin::FrameUniforms;
use whitebox::{Rig, Setup};

const WIRE: [f32; 4] = [0.92, 0.92, 0.85, 1.0];

pub struct Scene {
    rig: Rig,
    pub camera: Camera,
    wireframe: bool,
}

impl whitebox::Scene for Scene {
    const NAME: &'static str = "whitebox";
    const ABOUT: &'static str = "Seed 000's whitebox trident, skinned on the GPU";
    const CLEAR: [f32; 4] = [0.06, 0.07, 0.09, 1.0];
    const MARKER: (f32, [f32; 4]) = (0.12, [1.0, 0.45, 0.15, 1.0]);

    fn new(setup: &Setup<'_>) -> GpuResult<Self> {
        let wireframe = setup.device.features().fill_mode_non_solid;
        if !wireframe {
            log::warn!(
                "whitebox: the device lacks fillModeNonSolid; drawing solid instead of wireframe"
            );
        }
        Ok(Self {
            rig: Rig::new(setup, Trident::model(), wireframe)?,
            camera: camera(),
            wireframe,
        })
    }

    /// Poses the trident at `t` seconds and writes frame `frame`'s palette
    /// and uniforms (the frame's previous submission has finished).
    fn update(&mut self, frame: usize, t: f32, aspect: f32) -> GpuResult<()> {
        let rig = &mut self.rig;
        Trident::pose(&rig.model.skeleton, t, &mut rig.pose);
        let light = if self.wireframe {
            [0.0, 0.0, 1.0, 0.0]
        } else {
            [0.3, 0.5, 1.0, 1.0]
        };
        let uniforms = FrameUniforms {
            view_proj: self.camera.view_proj(aspect).to_cols_array_2d(),
            color: WIRE,
            light,
        };
        rig.upload(frame, Trident::root(t), &uniforms)
    }

    fn rig(&self) -> &Rig {
        &self.rig
    }

    fn view_proj(&self, aspect: f32) -> Mat4 {
        self.camera.view_proj(aspect)
    }

    fn polygon(&self) -> vk::PolygonMode {
        if self.wireframe {
            vk::PolygonMode::LINE
        } else {
            vk::PolygonMode::FILL
        }
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
