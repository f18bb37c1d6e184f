//! The orbit camera: yaw and pitch about the model's animated bounds, a
//! zoom factor on the framing distance, and a pan of the target.

use vkskin::assets::Bounds;
use vkskin::glam::Vec3;
use vkskin::render::{Camera, Projection};

use crate::{FOV_Y_DEGREES, PITCH, YAW};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orbit {
    pub yaw: f32,
    pub pitch: f32,
    /// Multiplies the framing distance (below 1 is closer).
    pub zoom: f32,
    /// World-space offset of the point looked at.
    pub pan: Vec3,
    /// The model's up axis (`--up`): yaw turns about it, the framing stands
    /// it upright on screen.
    pub up: Vec3,
}

impl Default for Orbit {
    /// The headless contract's view.
    fn default() -> Self {
        Self {
            yaw: YAW,
            pitch: PITCH,
            zoom: 1.0,
            pan: Vec3::ZERO,
            up: Vec3::Y,
        }
    }
}

impl Orbit {
    /// The headless contract's view of a model whose up axis is `up`.
    pub fn with_up(up: Vec3) -> Self {
        Self {
            up,
            ..Self::default()
        }
    }

    /// The camera for a viewport of `aspect`. Unzoomed and unpanned it is
    /// exactly `Camera::framing_up(b.min, b.max, yaw, pitch, 45°, aspect,
    /// up)`, which for +Y up is `Camera::framing`.
    pub fn camera(&self, b: &Bounds, aspect: f32) -> Camera {
        let base = Camera::framing_up(
            b.min,
            b.max,
            self.yaw,
            self.pitch,
            FOV_Y_DEGREES.to_radians(),
            aspect,
            self.up,
        );
        if self.zoom == 1.0 && self.pan == Vec3::ZERO {
            return base;
        }
        let offset = base.eye - base.target;
        let distance = offset.length() * self.zoom;
        let target = base.target + self.pan;
        let eye = target + offset.normalize_or(Vec3::Z) * distance;
        let radius = if b.is_empty() {
            1.0
        } else {
            b.diagonal() * 0.5
        } + self.pan.length();
        let near = (distance - radius * 1.1).max(distance * 1e-3);
        let far = distance + radius * 1.1;
        Camera::look_at(
            eye,
            target,
            base.up,
            Projection::Perspective {
                fov_y: FOV_Y_DEGREES.to_radians(),
                near,
                far,
            },
        )
    }

    /// Turns by a mouse drag of `dx, dy` pixels.
    pub fn rotate(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.01;
        self.pitch = (self.pitch + dy * 0.01).clamp(-1.5, 1.5);
    }

    /// Moves the target by a right-drag of `dx, dy` pixels in a view
    /// `height` pixels tall, so the model follows the pointer.
    pub fn pan_by(&mut self, camera: &Camera, dx: f32, dy: f32, height: f32) {
        let forward = (camera.target - camera.eye).normalize_or(Vec3::NEG_Z);
        let right = forward.cross(camera.up).normalize_or(Vec3::X);
        let up = right.cross(forward);
        let distance = (camera.target - camera.eye).length();
        let fov = match camera.projection {
            Projection::Perspective { fov_y, .. } => fov_y,
            Projection::Orthographic { .. } => FOV_Y_DEGREES.to_radians(),
        };
        let per_pixel = 2.0 * distance * (fov * 0.5).tan() / height.max(1.0);
        self.pan += (-right * dx + up * dy) * per_pixel;
    }

    /// Zooms by wheel `lines` (positive: closer).
    pub fn wheel(&mut self, lines: f32) {
        self.zoom = (self.zoom * 0.9f32.powf(lines)).clamp(0.05, 20.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_orbit_is_the_contract_framing_and_zoom_moves_closer() {
        let b = Bounds {
            min: Vec3::new(-0.5, 0.0, -0.3),
            max: Vec3::new(0.5, 1.8, 0.3),
        };
        let o = Orbit::default();
        let framed = Camera::framing(b.min, b.max, 0.5, 0.2, 45f32.to_radians(), 4.0 / 3.0);
        assert_eq!(o.camera(&b, 4.0 / 3.0), framed);
        let mut z = o;
        z.wheel(3.0);
        let c = z.camera(&b, 4.0 / 3.0);
        assert!((c.eye - c.target).length() < (framed.eye - framed.target).length());
        assert_eq!(c.target, framed.target);
        let mut p = o;
        p.pan_by(&framed, 10.0, 0.0, 600.0);
        assert!(p.pan.length() > 0.0);
    }
}
