use glam::{Quat, Vec2, Vec3, Vec4};

use super::tube::{self, MeshBuilder, TubeStyle};
use crate::anim::{
    Clip, Interpolation, RawClip, RawJointTrack, RawTrack, Skeleton, Skin, Transform,
};
use crate::assets::{Material, Model};
use crate::mesh::{compute_normals, SkinnedMesh};

/// The candy-wrapper test: a capsule along +Y (a cylinder of `radius` from
/// y = 0 to y = `length`, closed by hemispheres) bound to two joints,
/// `base` at the origin and `top` half way up, the top joint's weight
/// rising linearly from 0 at a quarter of the length to 1 at three
/// quarters. Twisting `top` about Y collapses the middle under linear blend
/// skinning (to the axis at 180 degrees) and keeps its radius under
/// dual-quaternion skinning.
#[derive(Clone, Debug, PartialEq)]
pub struct TwistCylinder {
    /// Radius of the capsule.
    pub radius: f32,
    /// Length of the cylinder part, along +Y (the hemispheres add `radius`
    /// at each end).
    pub length: f32,
    /// Rings from y = 0 to y = `length`; odd puts one in the middle.
    pub rings: usize,
    /// Vertices around each ring.
    pub radial: usize,
}

impl Default for TwistCylinder {
    fn default() -> Self {
        Self {
            radius: 0.2,
            length: 2.0,
            rings: 41,
            radial: 32,
        }
    }
}

impl TwistCylinder {
    /// Number of joints (`base`, `top`).
    pub const JOINTS: usize = 2;
    /// The joint that twists.
    pub const TOP: usize = 1;
    /// Seconds of the `"twist"` clip: 0 to 180 degrees and back.
    pub const TWIST_SECONDS: f32 = 4.0;

    /// The two-joint chain: `base` at the origin, `top` its child half way
    /// up (+Y by `length / 2`), no rotation.
    pub fn skeleton(&self) -> Skeleton {
        let bind = vec![
            Transform::IDENTITY,
            Transform::from_translation_rotation(
                Vec3::new(0.0, 0.5 * self.length, 0.0),
                Quat::IDENTITY,
            ),
        ];
        match Skeleton::new(vec!["base".into(), "top".into()], &[None, Some(0)], bind) {
            Ok((s, _)) => s,
            Err(e) => unreachable!("a two-joint chain is a valid skeleton: {e}"),
        }
    }

    /// The model, with the `"twist"` clip.
    pub fn model(&self) -> Model {
        self.build().0
    }

    fn build(&self) -> (Model, Vec<Vec3>) {
        let skeleton = self.skeleton();
        let style = TubeStyle {
            radial: self.radial.max(3),
            cap_rings: 4,
            fillet: 0.0,
            follow_profile: false,
        };
        let mut mesh = MeshBuilder::default();
        let r = Vec2::splat(self.radius);
        let span = mesh.tube(
            &[
                Vec3::ZERO,
                Vec3::Y * (0.5 * self.length),
                Vec3::Y * self.length,
            ],
            &[r, r, r],
            Vec3::X,
            self.rings,
            &style,
        );
        let lists: Vec<Vec<(u16, f32)>> = mesh.arc[span.first..span.end]
            .iter()
            .map(|&s| {
                let top = ((s / self.length - 0.25) * 2.0).clamp(0.0, 1.0);
                vec![(0, 1.0 - top), (1, top)]
            })
            .collect();
        let normals = compute_normals(&mesh.positions, &mesh.indices);
        let out = SkinnedMesh {
            name: "twist_cylinder".into(),
            positions: mesh.positions,
            normals,
            uvs: Vec::new(),
            tangents: Vec::new(),
            colors: Vec::new(),
            influences: tube::influences(&lists, 4),
            indices: mesh.indices,
            skin: 0,
            material: Some(0),
            morph: Default::default(),
        };
        let clip = self.twist_clip(&skeleton);
        let model = Model {
            name: "twist_cylinder".into(),
            source: None,
            skins: vec![Skin::whole_skeleton(&skeleton)],
            skeleton,
            meshes: vec![out],
            clips: vec![clip],
            materials: vec![Material {
                name: "candy".into(),
                base_color: Vec4::new(0.8, 0.12, 0.2, 1.0),
                texture: None,
                ..Material::default()
            }],
            warnings: Vec::new(),
            morph_sets: Vec::new(),
            file_axes: glam::Mat3::IDENTITY,
        };
        (model, mesh.centres)
    }

    /// The bind pose with the top joint turned `degrees` about Y.
    pub fn pose(&self, degrees: f32) -> Vec<Transform> {
        let mut pose = self.skeleton().bind_local().to_vec();
        pose[Self::TOP].rotation = Quat::from_rotation_y(degrees.to_radians());
        pose
    }

    /// `"twist"`: the top joint from 0 to 180 degrees over the first half of
    /// [`TwistCylinder::TWIST_SECONDS`] and back, linear keys 22.5 degrees
    /// apart (slerp between them stays on the one axis).
    fn twist_clip(&self, skeleton: &Skeleton) -> Clip {
        const KEYS: usize = 16;
        let times: Vec<f32> = (0..=KEYS)
            .map(|k| Self::TWIST_SECONDS * k as f32 / KEYS as f32)
            .collect();
        let values = (0..=KEYS)
            .map(|k| {
                let up = k.min(KEYS - k) as f32 / (KEYS / 2) as f32;
                Quat::from_rotation_y((180.0 * up).to_radians())
            })
            .collect();
        let mut track = RawJointTrack::new(Self::TOP);
        track.rotation = RawTrack::new(Interpolation::Linear, times, values);
        let raw = RawClip {
            weights: Vec::new(),
            name: "twist".into(),
            duration: Self::TWIST_SECONDS,
            tracks: vec![track],
        };
        match Clip::build(&raw, skeleton) {
            Ok(clip) => clip,
            Err(e) => unreachable!("the twist clip is valid: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Affine3A, Vec3Swizzles};

    use super::*;
    use crate::anim::{
        encode_dual_quat, DualQuat, DualQuatSkinningJob, PaletteHierarchy, PlaybackMode,
    };
    use crate::assets::builtin::tube::checks;

    /// Distance from the Y axis of every skinned vertex whose bind position
    /// lies on the middle ring, LBS and DQS.
    fn middle_radii(cyl: &TwistCylinder, degrees: f32) -> (Vec<f32>, Vec<f32>) {
        let model = cyl.model();
        let mesh = &model.meshes[0];
        let pose = cyl.pose(degrees);
        let lbs = &model.skin_cpu(&pose).unwrap()[0].positions;
        let skin = &model.skin_matrices(&pose).unwrap()[0];
        let mut dq = vec![DualQuat::IDENTITY; skin.len()];
        let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
        encode_dual_quat(skin, &hierarchy, &mut dq).unwrap();
        let mut dqs = vec![Vec3::ZERO; mesh.vertex_count()];
        DualQuatSkinningJob {
            palette: &dq,
            scale_shear: &[],
            per_vertex: mesh.influences.per_vertex,
            joints: &mesh.influences.joints,
            weights: &mesh.influences.weights,
            positions: &mesh.positions,
            normals: &[],
            out_positions: &mut dqs,
            out_normals: &mut [],
        }
        .run()
        .unwrap();
        let middle: Vec<usize> = (0..mesh.vertex_count())
            .filter(|&v| (mesh.positions[v].y - 0.5 * cyl.length).abs() < 1e-4)
            .collect();
        assert_eq!(middle.len(), cyl.radial);
        let radius = |p: &[Vec3]| middle.iter().map(|&v| p[v].xz().length()).collect();
        (radius(lbs), radius(&dqs))
    }

    #[test]
    fn lbs_collapses_where_dqs_keeps_volume() {
        let cyl = TwistCylinder::default();
        let r = cyl.radius;
        let (lbs, dqs) = middle_radii(&cyl, 150.0);
        for (l, d) in lbs.iter().zip(&dqs) {
            assert!(*l < 0.5 * r, "LBS radius {l}");
            assert!(*d > 0.9 * r, "DQS radius {d}");
        }
        // Untwisted, both keep the radius.
        let (lbs, dqs) = middle_radii(&cyl, 0.0);
        assert!(lbs.iter().chain(&dqs).all(|x| (x - r).abs() < 1e-4));
    }

    #[test]
    fn mesh_weights_and_bind_pose() {
        let cyl = TwistCylinder::default();
        let (model, centres) = cyl.build();
        let mesh = &model.meshes[0];
        mesh.validate().unwrap();
        assert_eq!(model.skeleton.len(), TwistCylinder::JOINTS);
        checks::parents_come_first(&model);
        checks::weights_are_normalised(&model);
        checks::normals_point_out(mesh, &centres);
        checks::bind_pose_is_rest(&model);
        // The top joint's weight ramps linearly across the middle half.
        for (v, p) in mesh.positions.iter().enumerate() {
            let (js, ws) = mesh.influences.vertex(v);
            let top: f32 = js
                .iter()
                .zip(ws)
                .filter(|(&j, _)| j == 1)
                .map(|(_, &w)| w)
                .sum();
            let want = ((p.y / cyl.length - 0.25) * 2.0).clamp(0.0, 1.0);
            assert!((top - want).abs() < 1e-5, "y {} weight {top}", p.y);
        }
        let ys: Vec<f32> = mesh.positions.iter().map(|p| p.y).collect();
        assert!(ys.iter().any(|&y| y < -0.9 * cyl.radius));
        assert!(ys.iter().any(|&y| y > cyl.length + 0.9 * cyl.radius));
    }

    #[test]
    fn twist_clip_reaches_half_a_turn() {
        let cyl = TwistCylinder::default();
        let model = cyl.model();
        let clip = model.clip("twist").unwrap();
        assert_eq!(clip.duration(), TwistCylinder::TWIST_SECONDS);
        for (t, degrees) in [
            (0.0, 0.0),
            (0.5, 45.0),
            (1.0, 90.0),
            (2.0, 180.0),
            (3.0, 90.0),
        ] {
            let pose = model.pose(Some(clip), t, PlaybackMode::Loop).unwrap();
            let want = cyl.pose(degrees);
            assert!(
                pose[1].rotation.abs_diff_eq(want[1].rotation, 1e-5)
                    || pose[1].rotation.abs_diff_eq(-want[1].rotation, 1e-5),
                "t = {t}"
            );
            assert_eq!(pose[0], model.skeleton.bind_local()[0]);
        }
        let m = model.model_matrices(&cyl.pose(90.0)).unwrap();
        let x = m[1].transform_vector3(Vec3::X);
        assert!(x.abs_diff_eq(-Vec3::Z, 1e-5));
        assert!(m[0].abs_diff_eq(Affine3A::IDENTITY, 0.0));
    }
}
