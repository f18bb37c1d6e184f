use glam::{Mat4, Quat, Vec2, Vec3, Vec4Swizzles};

/// How the camera projects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Projection {
    /// A perspective projection.
    Perspective {
        /// Vertical field of view in radians.
        fov_y: f32,
        /// Distance to the near plane (depth 0), world units, > 0.
        near: f32,
        /// Distance to the far plane (depth 1), world units.
        far: f32,
    },
    /// An orthographic projection: `height` world units fill the view
    /// vertically.
    Orthographic {
        /// World units the view spans vertically.
        height: f32,
        /// Distance to the near plane (depth 0), world units.
        near: f32,
        /// Distance to the far plane (depth 1), world units.
        far: f32,
    },
}

/// A look-at camera. Conventions, explicitly: right-handed view space
/// looking down -Z with +Y up; the projection maps to Vulkan clip space,
/// where NDC +Y points *down* the screen and depth runs 0 (near) to 1
/// (far). glam's `*_rh` projections already give depth 0..1 but keep +Y up,
/// so [`Camera::projection`] negates clip Y. With that flip a triangle that
/// is counter-clockwise on screen stays `FrontFace::COUNTER_CLOCKWISE` in
/// Vulkan's framebuffer coordinates, and the viewport needs no negative
/// height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Where the camera is, in world space.
    pub eye: Vec3,
    /// The point it looks at.
    pub target: Vec3,
    /// The world direction that is up on screen (not parallel to the view
    /// direction).
    pub up: Vec3,
    /// How it projects.
    pub projection: Projection,
}

impl Camera {
    /// A camera at `eye` looking at `target` with `up` up.
    pub fn look_at(eye: Vec3, target: Vec3, up: Vec3, projection: Projection) -> Self {
        Self {
            eye,
            target,
            up,
            projection,
        }
    }

    /// A perspective camera that frames the box `min..max` whole for any
    /// aspect at least `min_aspect`: it looks at the box's centre from the
    /// direction given by `yaw` (about +Y, 0 = from +Z) and `pitch` (up
    /// positive), radians, just far enough that all eight corners fall
    /// inside the view with a 5% margin (tighter than the bounding sphere:
    /// a standing figure fills the height). Near and far planes hug the box.
    /// An empty or degenerate box frames a unit box at its centre (or the
    /// origin).
    pub fn framing(
        min: Vec3,
        max: Vec3,
        yaw: f32,
        pitch: f32,
        fov_y: f32,
        min_aspect: f32,
    ) -> Self {
        let (center, half) = if min.is_finite() && max.is_finite() && min.cmple(max).all() {
            (
                (min + max) * 0.5,
                ((max - min) * 0.5).max(Vec3::splat(1e-3)),
            )
        } else {
            (Vec3::ZERO, Vec3::splat(0.5))
        };
        // Short of the poles, where the look-at up vector degenerates.
        let pitch = pitch.clamp(-1.5, 1.5);
        let tan_y = (fov_y * 0.5).tan().max(1e-3) / 1.05;
        let tan_x = tan_y * min_aspect.max(1e-3);
        let back = Vec3::new(
            pitch.cos() * yaw.sin(),
            pitch.sin(),
            pitch.cos() * yaw.cos(),
        );
        let right = Vec3::Y.cross(back).normalize_or(Vec3::X);
        let up = back.cross(right);
        // Each corner, in view axes about the centre, needs the eye at least
        // this far back along `back`.
        let mut distance = 0.0f32;
        let mut depth = 0.0f32;
        for c in 0..8 {
            let corner = Vec3::new(
                if c & 1 == 0 { -half.x } else { half.x },
                if c & 2 == 0 { -half.y } else { half.y },
                if c & 4 == 0 { -half.z } else { half.z },
            );
            let (x, y, z) = (corner.dot(right), corner.dot(up), corner.dot(back));
            distance = distance.max(z + x.abs() / tan_x).max(z + y.abs() / tan_y);
            depth = depth.max(z.abs());
        }
        let near = (distance - depth * 1.1).max(distance * 1e-3);
        let far = distance + depth * 1.1;
        Self::look_at(
            center + back * distance,
            center,
            Vec3::Y,
            Projection::Perspective { fov_y, near, far },
        )
    }

    /// [`Camera::framing`] for a world whose up is `up` (a model authored
    /// Z-up: `Vec3::Z`): the box is framed as `framing` frames it in a
    /// frame where `up` is +Y (yaw about `up`, pitch towards it), and the
    /// camera's up vector is `up`. `Vec3::Y` (or a zero vector) is exactly
    /// `framing`. An axis-aligned `up` frames the box exactly; any other
    /// frames the box of its corners turned into that frame.
    #[allow(clippy::too_many_arguments)]
    pub fn framing_up(
        min: Vec3,
        max: Vec3,
        yaw: f32,
        pitch: f32,
        fov_y: f32,
        min_aspect: f32,
        up: Vec3,
    ) -> Self {
        let up = up.normalize_or(Vec3::Y);
        if up == Vec3::Y {
            return Self::framing(min, max, yaw, pitch, fov_y, min_aspect);
        }
        // Turns +Y onto `up`; its inverse takes the box into the Y-up frame.
        let turn = Quat::from_rotation_arc(Vec3::Y, up);
        let (lo, hi) = if min.is_finite() && max.is_finite() && min.cmple(max).all() {
            (0..8).fold(
                (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
                |(lo, hi), c| {
                    let corner = Vec3::new(
                        if c & 1 == 0 { min.x } else { max.x },
                        if c & 2 == 0 { min.y } else { max.y },
                        if c & 4 == 0 { min.z } else { max.z },
                    );
                    let p = turn.inverse() * corner;
                    (lo.min(p), hi.max(p))
                },
            )
        } else {
            (min, max)
        };
        let local = Self::framing(lo, hi, yaw, pitch, fov_y, min_aspect);
        Self::look_at(turn * local.eye, turn * local.target, up, local.projection)
    }

    /// The view matrix: world space to right-handed view space (-Z forward).
    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye, self.target, self.up)
    }

    /// Vulkan clip space for a viewport of `aspect` = width / height.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let gl_y_up = match self.projection {
            Projection::Perspective { fov_y, near, far } => {
                Mat4::perspective_rh(fov_y, aspect, near, far)
            }
            Projection::Orthographic { height, near, far } => {
                let h = height * 0.5;
                let w = h * aspect;
                Mat4::orthographic_rh(-w, w, -h, h, near, far)
            }
        };
        Mat4::from_scale(Vec3::new(1.0, -1.0, 1.0)) * gl_y_up
    }

    /// Projection times view: world space to Vulkan clip space.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        self.projection(aspect) * self.view()
    }

    /// Pixel position (x right, y down, origin at the top-left corner) of a
    /// world point in a `width` x `height` target; `None` behind the camera.
    pub fn project_to_pixel(&self, p: Vec3, width: u32, height: u32) -> Option<Vec2> {
        let clip = self.view_proj(width as f32 / height as f32) * p.extend(1.0);
        if clip.w <= 0.0 {
            return None;
        }
        let ndc = clip.xy() / clip.w;
        Some(Vec2::new(
            (ndc.x * 0.5 + 0.5) * width as f32,
            (ndc.y * 0.5 + 0.5) * height as f32,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight corners of the box `min..max`.
    fn corners(min: Vec3, max: Vec3) -> impl Iterator<Item = Vec3> {
        (0..8).map(move |c| {
            Vec3::new(
                if c & 1 == 0 { min.x } else { max.x },
                if c & 2 == 0 { min.y } else { max.y },
                if c & 4 == 0 { min.z } else { max.z },
            )
        })
    }

    #[test]
    fn framing_keeps_every_corner_of_the_box_in_view() {
        let (min, max) = (Vec3::new(-0.3, 0.0, -2.0), Vec3::new(0.5, 1.8, 0.7));
        for &(yaw, pitch, aspect) in &[(0.0, 0.0, 1.0), (1.2, 0.4, 0.5), (-2.5, -0.7, 2.0)] {
            let cam = Camera::framing(min, max, yaw, pitch, 45f32.to_radians(), aspect);
            let vp = cam.view_proj(aspect);
            let mut widest = 0f32;
            for (c, p) in corners(min, max).enumerate() {
                let clip = vp * p.extend(1.0);
                let ndc = clip.xyz() / clip.w;
                assert!(ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0, "{c}: {ndc}");
                assert!((0.0..=1.0).contains(&ndc.z), "{c}: depth {}", ndc.z);
                widest = widest.max(ndc.x.abs()).max(ndc.y.abs());
            }
            // Framed tightly: some corner touches the margin.
            assert!(widest > 0.9, "box fills only {widest} of the view");
        }
    }

    #[test]
    fn framing_up_z_stands_a_z_up_box_upright_and_keeps_it_in_view() {
        // A figure 2 tall along +Z, narrow in x and y.
        let (min, max) = (Vec3::new(-0.2, -0.1, 0.0), Vec3::new(0.2, 0.1, 2.0));
        let aspect = 4.0 / 3.0;
        for &(yaw, pitch) in &[(0.5, 0.2), (2.0, -0.4)] {
            let cam = Camera::framing_up(min, max, yaw, pitch, 45f32.to_radians(), aspect, Vec3::Z);
            assert_eq!(cam.up, Vec3::Z);
            let px = |p: Vec3| cam.project_to_pixel(p, 800, 600).unwrap();
            let (foot, head) = (px(Vec3::new(0.0, 0.0, 0.0)), px(Vec3::new(0.0, 0.0, 2.0)));
            // Upright: the head straight above the feet on screen (y down).
            assert!(head.y < foot.y, "head {head} not above feet {foot}");
            assert!(
                (head.x - foot.x).abs() < 1e-3 * 800.0,
                "tilted: {head} {foot}"
            );
            let vp = cam.view_proj(aspect);
            for (c, p) in corners(min, max).enumerate() {
                let clip = vp * p.extend(1.0);
                let ndc = clip.xyz() / clip.w;
                assert!(ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0, "{c}: {ndc}");
            }
        }
        // Y up is `framing` itself.
        let y = Camera::framing_up(min, max, 0.5, 0.2, 0.8, 1.5, Vec3::Y);
        assert_eq!(y, Camera::framing(min, max, 0.5, 0.2, 0.8, 1.5));
        // Without the up axis the same box lies on its side.
        let flat = Camera::framing(min, max, 0.5, 0.2, 45f32.to_radians(), aspect);
        let px = |p: Vec3| flat.project_to_pixel(p, 800, 600).unwrap();
        let d = px(Vec3::new(0.0, 0.0, 2.0)) - px(Vec3::ZERO);
        assert!(
            d.x.abs() > d.y.abs(),
            "Y-up framing should show the Z axis sideways: {d}"
        );
    }

    #[test]
    fn up_is_up_on_screen_and_depth_is_zero_to_one() {
        let cam = Camera::look_at(
            Vec3::new(0.0, 0.0, 5.0),
            Vec3::ZERO,
            Vec3::Y,
            Projection::Perspective {
                fov_y: 1.0,
                near: 1.0,
                far: 9.0,
            },
        );
        let above = cam
            .project_to_pixel(Vec3::new(0.0, 1.0, 0.0), 100, 100)
            .unwrap();
        let centre = cam.project_to_pixel(Vec3::ZERO, 100, 100).unwrap();
        assert!(above.y < centre.y, "world +Y must be higher on screen");
        let vp = cam.view_proj(1.0);
        let near = vp * Vec3::new(0.0, 0.0, 4.0).extend(1.0);
        let far = vp * Vec3::new(0.0, 0.0, -4.0).extend(1.0);
        assert!((near.z / near.w).abs() < 1e-6);
        assert!((far.z / far.w - 1.0).abs() < 1e-6);
    }

    #[test]
    fn orthographic_keeps_the_same_handedness() {
        let cam = Camera::look_at(
            Vec3::new(0.0, 0.0, 5.0),
            Vec3::ZERO,
            Vec3::Y,
            Projection::Orthographic {
                height: 4.0,
                near: 0.1,
                far: 10.0,
            },
        );
        let p = cam
            .project_to_pixel(Vec3::new(1.0, 1.0, 0.0), 200, 100)
            .unwrap();
        // 4 units tall over 100 px: 25 px per unit, right and up of centre.
        assert!(
            (p.x - 125.0).abs() < 1e-3 && (p.y - 25.0).abs() < 1e-3,
            "{p}"
        );
    }
}
