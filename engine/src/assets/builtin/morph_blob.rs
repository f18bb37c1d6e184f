use glam::{Quat, Vec2, Vec3, Vec4};

use super::tube::{self, MeshBuilder, TubeStyle};
use crate::anim::{
    Clip, Interpolation, RawClip, RawJointTrack, RawTrack, RawWeightTrack, Skeleton, Skin,
    Transform,
};
use crate::assets::{Material, Model};
use crate::mesh::{compute_normals, MorphSet, MorphTarget, MorphTargets, SkinnedMesh};

/// The morph-target demo and test model: a capsule along +Y (radius
/// `radius`, cylinder from y = 0 to y = `length`, closed by hemispheres)
/// bound to two joints, `base` at the origin and `top` half way up, with
/// four named morph targets of the kinds files hold:
///
/// - `"bulge"` (dense positions): the middle swells, most at half height;
/// - `"tip"` (sparse-like positions, flagged `sparse`): only the top
///   quarter moves, stretching up; every other delta is zero;
/// - `"shade"` (normals only): every normal leans towards +X, so only the
///   lighting changes;
/// - `"squash"` (dense positions and normals): X halved, normals to match.
///
/// Its one clip, `"morph"` ([`MorphBlob::SECONDS`] long), bends `top`
/// about Z (0, 30, 0, -30, 0 degrees at 0..4 s, linear), and animates the
/// weights with two tracks: `bulge` and `tip` LINEAR (keys each second:
/// (0, 0), (1, 0), (0, 1), (0.5, 0.5), (0, 0)), `shade` and `squash`
/// CUBICSPLINE (keys at 0, 2 and 4 s: 0, 1, 0, zero tangents, so they ease
/// in and out). Every weight is 0 at the clip's start and end; the model's
/// defaults are zeros.
#[derive(Clone, Debug, PartialEq)]
pub struct MorphBlob {
    /// Radius of the capsule.
    pub radius: f32,
    /// Length of the cylinder part, along +Y.
    pub length: f32,
    /// Rings from y = 0 to y = `length`.
    pub rings: usize,
    /// Vertices around each ring.
    pub radial: usize,
}

impl Default for MorphBlob {
    fn default() -> Self {
        Self {
            radius: 0.35,
            length: 2.0,
            rings: 25,
            radial: 24,
        }
    }
}

impl MorphBlob {
    /// The targets' names, in order (the model's one [`MorphSet`]).
    pub const TARGETS: [&'static str; 4] = ["bulge", "tip", "shade", "squash"];
    /// The joint that bends.
    pub const TOP: usize = 1;
    /// Seconds of the `"morph"` clip.
    pub const SECONDS: f32 = 4.0;

    /// The model, with the `"morph"` clip.
    pub fn model(&self) -> Model {
        self.build().0
    }

    fn skeleton(&self) -> Skeleton {
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
            self.rings.max(2),
            &style,
        );
        let lists: Vec<Vec<(u16, f32)>> = mesh.arc[span.first..span.end]
            .iter()
            .map(|&s| {
                let top = ((s / self.length - 0.3) * 2.5).clamp(0.0, 1.0);
                vec![(0, 1.0 - top), (1, top)]
            })
            .collect();
        let normals = compute_normals(&mesh.positions, &mesh.indices);
        let targets = self.targets(&mesh.positions, &normals, &mesh.centres);
        let out = SkinnedMesh {
            name: "morph_blob".into(),
            positions: mesh.positions,
            normals,
            uvs: Vec::new(),
            tangents: Vec::new(),
            colors: Vec::new(),
            influences: tube::influences(&lists, 4),
            indices: mesh.indices,
            skin: 0,
            material: Some(0),
            morph: MorphTargets {
                targets,
                first_weight: 0,
            },
        };
        let clip = self.clip(&skeleton);
        let model = Model {
            name: "morph_blob".into(),
            source: None,
            skins: vec![Skin::whole_skeleton(&skeleton)],
            skeleton,
            meshes: vec![out],
            clips: vec![clip],
            materials: vec![Material {
                name: "blob".into(),
                base_color: Vec4::new(0.2, 0.55, 0.85, 1.0),
                texture: None,
                ..Material::default()
            }],
            warnings: Vec::new(),
            morph_sets: vec![MorphSet {
                name: "morph_blob".into(),
                target_names: Self::TARGETS.iter().map(|s| s.to_string()).collect(),
                defaults: vec![0.0; Self::TARGETS.len()],
                first_weight: 0,
            }],
            file_axes: glam::Mat3::IDENTITY,
        };
        (model, mesh.centres)
    }

    /// The four targets (see the type's docs). `centres` are the points on
    /// the axis each vertex was placed around.
    fn targets(&self, positions: &[Vec3], normals: &[Vec3], centres: &[Vec3]) -> Vec<MorphTarget> {
        let len = self.length;
        let bulge = positions
            .iter()
            .zip(centres)
            .map(|(p, c)| {
                let out = (*p - *c).normalize_or_zero();
                let u = (p.y / len).clamp(0.0, 1.0);
                out * (0.6 * self.radius * (std::f32::consts::PI * u).sin())
            })
            .collect();
        let tip = positions
            .iter()
            .map(|p| {
                let u = (p.y / len - 0.75) * 4.0;
                if u > 0.0 {
                    Vec3::Y * (0.5 * self.radius * u.min(1.5))
                } else {
                    Vec3::ZERO
                }
            })
            .collect();
        let shade = vec![Vec3::X * 0.8; normals.len()];
        let squash_p = positions.iter().map(|p| Vec3::X * (-0.5 * p.x)).collect();
        // (nx, ny, nz) under x -> x / 2 becomes proportional to (2nx, ny, nz).
        let squash_n = normals.iter().map(|n| Vec3::X * n.x).collect();
        vec![
            MorphTarget {
                positions: bulge,
                ..MorphTarget::default()
            },
            MorphTarget {
                positions: tip,
                sparse: true,
                ..MorphTarget::default()
            },
            MorphTarget {
                normals: shade,
                ..MorphTarget::default()
            },
            MorphTarget {
                positions: squash_p,
                normals: squash_n,
                ..MorphTarget::default()
            },
        ]
    }

    /// `"morph"`: the bend of `top` and the two weight tracks.
    fn clip(&self, skeleton: &Skeleton) -> Clip {
        let seconds: Vec<f32> = (0..=4).map(|k| k as f32).collect();
        let bend = [0.0f32, 30.0, 0.0, -30.0, 0.0]
            .iter()
            .map(|d| Quat::from_rotation_z(d.to_radians()))
            .collect();
        let mut track = RawJointTrack::new(Self::TOP);
        track.rotation = RawTrack::new(Interpolation::Linear, seconds.clone(), bend);
        let linear = RawWeightTrack {
            first: 0,
            count: 2,
            interpolation: Interpolation::Linear,
            times: seconds,
            values: vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.0, 0.0],
            tangents: Vec::new(),
        };
        let cubic = RawWeightTrack {
            first: 2,
            count: 2,
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 2.0, 4.0],
            values: vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0],
            tangents: vec![0.0; 3 * 2 * 2],
        };
        let raw = RawClip {
            name: "morph".into(),
            duration: Self::SECONDS,
            tracks: vec![track],
            weights: vec![linear, cubic],
        };
        match Clip::build(&raw, skeleton) {
            Ok(clip) => clip,
            Err(e) => unreachable!("the morph clip is valid: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{LinearBlendJob, PlaybackMode};
    use crate::assets::builtin::tube::checks;
    use crate::mesh::MorphJob;

    #[test]
    fn mesh_targets_and_clip_are_valid() {
        let blob = MorphBlob::default();
        let (model, centres) = blob.build();
        let mesh = &model.meshes[0];
        mesh.validate().unwrap();
        checks::parents_come_first(&model);
        checks::weights_are_normalised(&model);
        checks::normals_point_out(mesh, &centres);
        checks::bind_pose_is_rest(&model);
        assert_eq!(model.morph_weight_count(), 4);
        assert_eq!(mesh.morph.len(), 4);
        let t = &mesh.morph.targets;
        assert!(t[0].normals.is_empty() && !t[0].positions.is_empty());
        assert!(t[1].sparse);
        let moved = t[1].positions.iter().filter(|d| **d != Vec3::ZERO).count();
        assert!(
            moved > 0 && moved < mesh.vertex_count() / 3,
            "tip moves {moved}"
        );
        assert!(t[2].positions.is_empty() && !t[2].normals.is_empty());
        let clip = model.clip("morph").unwrap();
        assert_eq!(clip.weight_count(), 4);
        assert_eq!(clip.weight_tracks().len(), 2);
    }

    #[test]
    fn the_clip_animates_every_weight() {
        let model = MorphBlob::default().model();
        let clip = model.clip("morph");
        let at = |t: f32| model.morph_weights(clip, t, PlaybackMode::Loop).unwrap();
        assert_eq!(at(0.0), vec![0.0; 4]);
        assert_eq!(
            model.morph_weights(None, 1.0, PlaybackMode::Loop).unwrap(),
            vec![0.0; 4]
        );
        let w = at(1.0);
        assert!((w[0] - 1.0).abs() < 1e-6 && w[1].abs() < 1e-6, "{w:?}");
        // Cubic with zero tangents: smoothstep, half way at 1 s.
        assert!(
            (w[2] - 0.5).abs() < 1e-5 && (w[3] - 0.5).abs() < 1e-5,
            "{w:?}"
        );
        let w = at(2.0);
        assert!(w[0].abs() < 1e-6 && (w[1] - 1.0).abs() < 1e-6, "{w:?}");
        assert!((w[2] - 1.0).abs() < 1e-6, "{w:?}");
        let w = at(3.0);
        assert!(
            (w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6,
            "{w:?}"
        );
    }

    #[test]
    fn morphed_then_skinned_moves_the_surface() {
        let model = MorphBlob::default().model();
        let mesh = &model.meshes[0];
        let clip = model.clip("morph");
        let pose = model.pose(clip, 2.0, PlaybackMode::Loop).unwrap();
        let weights = model.morph_weights(clip, 2.0, PlaybackMode::Loop).unwrap();
        let palette = &model.skin_matrices(&pose).unwrap()[0];
        let n = mesh.vertex_count();
        let (mut mp, mut mn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        MorphJob {
            targets: &mesh.morph.targets,
            weights: mesh.morph.weights(&weights).unwrap(),
            positions: &mesh.positions,
            normals: &mesh.normals,
            tangents: &[],
            out_positions: &mut mp,
            out_normals: &mut mn,
            out_tangents: &mut [],
        }
        .run()
        .unwrap();
        let (mut sp, mut sn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        LinearBlendJob {
            skin: palette,
            per_vertex: mesh.influences.per_vertex,
            joints: &mesh.influences.joints,
            weights: &mesh.influences.weights,
            positions: &mp,
            normals: &mn,
            out_positions: &mut sp,
            out_normals: &mut sn,
            unit_normals: false,
        }
        .run()
        .unwrap();
        let plain = &model.skin_cpu(&pose).unwrap()[0];
        let top = plain.positions.iter().map(|p| p.y).fold(f32::MIN, f32::max);
        let top_morphed = sp.iter().map(|p| p.y).fold(f32::MIN, f32::max);
        // `tip` at 1 stretches the end up; `shade` and `squash` tilt normals.
        assert!(top_morphed > top + 0.1, "{top_morphed} vs {top}");
        let tilted = sn
            .iter()
            .zip(&plain.normals)
            .filter(|(a, b)| (a.normalize() - b.normalize()).length() > 0.1)
            .count();
        assert!(tilted > n / 2, "{tilted} of {n} normals changed");
    }
}
