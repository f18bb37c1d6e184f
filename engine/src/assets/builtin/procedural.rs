//! Generated test and benchmark content: chains with random influences,
//! random poses, a mesh spread over many joints, a benchmark creature.
//!
//! Counts come from the caller, so these return an [`AnimError`] for counts
//! no model can have (no joints, more than [`MAX_JOINTS`], influences
//! outside 1..=8) instead of panicking. Randomness is a SplitMix64 stream
//! seeded by the caller: the same seed gives the same model on every
//! platform.

use std::f32::consts::TAU;

use glam::{Quat, Vec2, Vec3, Vec4};

use super::tube::{self, MeshBuilder, TubeStyle};
use crate::anim::{
    AnimError, Clip, Interpolation, RawClip, RawJointTrack, RawTrack, Skeleton, Skin, Transform,
    MAX_JOINTS,
};
use crate::assets::{Material, Model};
use crate::mesh::{compute_normals, Influences, SkinnedMesh};

/// Most distinct bones with a non-zero weight on any one triangle of
/// [`many_joints`]: its weights are cubic B-splines over the chain (four
/// bones between two segment middles, three on them) and its rings sit on
/// every segment middle, so no triangle straddles two spans.
pub const MANY_JOINTS_BONES_PER_TRIANGLE: usize = 4;

/// SplitMix64: tiny, fast, and good enough to scatter test data.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

fn check_joints(joints: usize) -> Result<(), AnimError> {
    if joints == 0 {
        return Err(AnimError::InvalidJob(
            "a model needs at least one joint".into(),
        ));
    }
    if joints > MAX_JOINTS {
        return Err(AnimError::TooManyJoints {
            count: joints,
            max: MAX_JOINTS,
        });
    }
    Ok(())
}

/// A straight chain along +Y, `joints` joints `spacing` apart, the first at
/// the origin, all with identity bind rotations.
fn chain(joints: usize, spacing: f32, prefix: &str) -> Result<Skeleton, AnimError> {
    let names = (0..joints).map(|i| format!("{prefix}{i}")).collect();
    let parents: Vec<Option<usize>> = (0..joints).map(|i| i.checked_sub(1)).collect();
    let bind = (0..joints)
        .map(|i| {
            let y = if i == 0 { 0.0 } else { spacing };
            Transform::from_translation_rotation(Vec3::new(0.0, y, 0.0), Quat::IDENTITY)
        })
        .collect();
    Skeleton::new(names, &parents, bind).map(|(s, _)| s)
}

fn model(
    name: &str,
    skeleton: Skeleton,
    mesh: SkinnedMesh,
    clips: Vec<Clip>,
    colour: Vec4,
) -> Model {
    Model {
        name: name.into(),
        source: None,
        skins: vec![Skin::whole_skeleton(&skeleton)],
        skeleton,
        meshes: vec![mesh],
        clips,
        materials: vec![Material {
            name: name.into(),
            base_color: colour,
            texture: None,
            ..Material::default()
        }],
        warnings: Vec::new(),
        morph_sets: Vec::new(),
        file_axes: glam::Mat3::IDENTITY,
    }
}

fn skinned_mesh(name: &str, built: MeshBuilder, influences: Influences) -> SkinnedMesh {
    SkinnedMesh {
        name: name.into(),
        normals: compute_normals(&built.positions, &built.indices),
        positions: built.positions,
        uvs: Vec::new(),
        tangents: Vec::new(),
        colors: Vec::new(),
        influences,
        indices: built.indices,
        skin: 0,
        material: Some(0),
        morph: Default::default(),
    }
}

/// A 2 m tube of radius 8 cm along +Y over a chain of `joints` joints (the
/// first at the origin), three rings per joint, 16 vertices around, whose
/// vertices have
/// random influences: each takes `influences_per_vertex` slots (1..=8),
/// fills all of them with distinct joints within that many joints of its
/// height, or in about one vertex of four fewer (the rest weight zero, on
/// random slots), with random weights normalised to one. The same `seed`
/// gives the same mesh. No clips: pose it with [`random_pose`].
pub fn chain_cylinder(
    joints: usize,
    influences_per_vertex: usize,
    seed: u64,
) -> Result<Model, AnimError> {
    check_joints(joints)?;
    let k = influences_per_vertex;
    if !(1..=8).contains(&k) {
        return Err(AnimError::InvalidJob(format!(
            "{k} influences per vertex; 1..=8 are supported"
        )));
    }
    let length = 2.0;
    let spacing = length / joints as f32;
    let skeleton = chain(joints, spacing, "chain")?;
    let mut built = MeshBuilder::default();
    let style = TubeStyle {
        radial: 16,
        cap_rings: 3,
        fillet: 0.0,
        follow_profile: false,
    };
    let points: Vec<Vec3> = (0..=joints)
        .map(|i| Vec3::Y * (i as f32 * spacing))
        .collect();
    let radii = vec![Vec2::splat(0.08); points.len()];
    built.tube(&points, &radii, Vec3::X, 3 * joints + 1, &style);

    let mut rng = SplitMix(seed);
    let n = built.positions.len();
    let mut inf = Influences::new(k, Vec::with_capacity(n * k), Vec::with_capacity(n * k));
    let mut candidates = Vec::with_capacity(2 * k + 1);
    for &s in &built.arc {
        let centre = ((s / spacing) as usize).min(joints - 1);
        candidates.clear();
        candidates.extend(centre.saturating_sub(k)..(centre + k + 1).min(joints));
        let mut live = if k > 1 && rng.unit() < 0.25 {
            1 + rng.below(k - 1)
        } else {
            k
        };
        live = live.min(candidates.len());
        // A partial Fisher-Yates shuffle picks `live` distinct joints.
        for i in 0..live {
            let pick = i + rng.below(candidates.len() - i);
            candidates.swap(i, pick);
        }
        let mut slots: Vec<(u16, f32)> = (0..k)
            .map(|i| {
                if i < live {
                    (candidates[i] as u16, rng.range(0.05, 1.0))
                } else {
                    (candidates[rng.below(candidates.len())] as u16, 0.0)
                }
            })
            .collect();
        let sum: f32 = slots.iter().map(|s| s.1).sum();
        for i in (1..k).rev() {
            slots.swap(i, rng.below(i + 1));
        }
        for (j, w) in slots {
            inf.joints.push(j);
            inf.weights.push(w / sum);
        }
    }
    let mesh = skinned_mesh("chain_cylinder", built, inf);
    Ok(model(
        "chain_cylinder",
        skeleton,
        mesh,
        Vec::new(),
        Vec4::new(0.2, 0.45, 0.75, 1.0),
    ))
}

/// A random local pose for `skeleton`: every joint gets a uniformly random
/// rotation (any angle) and its bind translation moved by up to 2 cm per
/// axis; with `non_uniform_scale`, about half the joints also get a scale
/// of 0.6..1.6 chosen per axis, the rest keep scale one. The same `seed`
/// gives the same pose.
pub fn random_pose(skeleton: &Skeleton, seed: u64, non_uniform_scale: bool) -> Vec<Transform> {
    let mut rng = SplitMix(seed);
    skeleton
        .bind_local()
        .iter()
        .map(|bind| {
            // Shoemake's uniform unit quaternion.
            let (u1, u2, u3) = (rng.unit(), rng.unit(), rng.unit());
            let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
            let rotation = Quat::from_xyzw(
                a * (TAU * u2).sin(),
                a * (TAU * u2).cos(),
                b * (TAU * u3).sin(),
                b * (TAU * u3).cos(),
            )
            .normalize();
            let mut offset = || rng.range(-0.02, 0.02);
            let translation = bind.translation + Vec3::new(offset(), offset(), offset());
            let scale = if non_uniform_scale && rng.unit() < 0.5 {
                Vec3::new(
                    rng.range(0.6, 1.6),
                    rng.range(0.6, 1.6),
                    rng.range(0.6, 1.6),
                )
            } else {
                Vec3::ONE
            };
            Transform {
                translation,
                rotation,
                scale,
            }
        })
        .collect()
}

/// A 3 cm thick tube along +Y over a chain of `joints` joints 2 cm apart,
/// one segment per joint, for bone partitioning: the whole mesh uses every
/// joint but no triangle more than [`MANY_JOINTS_BONES_PER_TRIANGLE`], and
/// no vertex more than four. Two rings per segment, eight vertices around.
/// Its `"wave"` clip (2 s, linear) sends a bend up the chain.
pub fn many_joints(joints: usize) -> Result<Model, AnimError> {
    check_joints(joints)?;
    const SPACING: f32 = 0.02;
    let skeleton = chain(joints, SPACING, "segment")?;
    let mut built = MeshBuilder::default();
    let style = TubeStyle {
        radial: 8,
        cap_rings: 2,
        fillet: 0.0,
        follow_profile: false,
    };
    let points: Vec<Vec3> = (0..=joints)
        .map(|i| Vec3::Y * (i as f32 * SPACING))
        .collect();
    let radii = vec![Vec2::splat(0.015); points.len()];
    // An even number of rings per segment puts one on every segment middle.
    built.tube(&points, &radii, Vec3::X, 2 * joints + 1, &style);
    let bones: Vec<u16> = (0..joints as u16).collect();
    let lists: Vec<Vec<(u16, f32)>> = built
        .arc
        .iter()
        .map(|&s| tube::bspline_weights(s / SPACING, &bones))
        .collect();
    let mesh = skinned_mesh("many_joints", built, tube::influences(&lists, 4));

    const KEYS: usize = 20;
    const SECONDS: f32 = 2.0;
    let times: Vec<f32> = (0..=KEYS)
        .map(|k| SECONDS * k as f32 / KEYS as f32)
        .collect();
    let tracks = (0..joints)
        .map(|j| {
            let values = times
                .iter()
                .map(|&t| {
                    let phase = TAU * t / SECONDS - 0.2 * j as f32;
                    Quat::from_rotation_z(3f32.to_radians() * phase.sin())
                })
                .collect();
            let mut track = RawJointTrack::new(j);
            track.rotation = RawTrack::new(Interpolation::Linear, times.clone(), values);
            track
        })
        .collect();
    let clip = Clip::build(
        &RawClip {
            weights: Vec::new(),
            name: "wave".into(),
            duration: SECONDS,
            tracks,
        },
        &skeleton,
    )?;
    Ok(model(
        "many_joints",
        skeleton,
        mesh,
        vec![clip],
        Vec4::new(0.3, 0.65, 0.3, 1.0),
    ))
}

/// A benchmark creature with exactly `joints` joints and about `vertices`
/// vertices, four influences each: a root at 0.6 m with up to eight
/// drooping limbs around it sharing the other joints, each limb a tapering
/// tube weighted by cubic B-splines along its chain: four non-zero weights
/// on most vertices, three on segment middles, fewer at the limb ends. Its `"writhe"` clip (2 s, linear keys at
/// 15 Hz, looping) turns every joint and bobs the root.
///
/// The vertex count is within 8 of `vertices` (rings come in whole
/// rounds of 16 vertices; 6 below 400 vertices per limb) unless `vertices`
/// is under about 30 per limb, where every limb keeps its smallest tube and
/// the count comes out higher.
pub fn bench_character(vertices: usize, joints: usize) -> Result<Model, AnimError> {
    check_joints(joints)?;
    let limbs = (joints - 1).clamp(1, 8);
    let mut names = vec!["root".to_string()];
    let mut parents = vec![None];
    let mut positions = vec![Vec3::new(0.0, 0.6, 0.0)];
    let mut aims = vec![Vec3::new(0.0, 1.0, 0.0)];
    // Each limb: its chain of joints (the root first), centre line, radii.
    let mut limb_chains: Vec<(Vec<usize>, Vec<Vec3>, Vec<Vec2>)> = Vec::new();
    let others = joints - 1;
    const SEGMENT: f32 = 0.12;
    for limb in 0..limbs {
        let count = others / limbs + usize::from(limb < others % limbs);
        let angle = TAU * limb as f32 / limbs as f32;
        let dir = Vec3::new(angle.cos(), -0.35, angle.sin()).normalize();
        let root = positions[0];
        let at = |k: usize| root + dir * (SEGMENT * k as f32);
        let mut chain = vec![0];
        let mut points = vec![positions[0]];
        let segments = count + 1;
        let radius = |k: usize| 0.06 - 0.04 * k as f32 / segments as f32;
        let mut radii = vec![Vec2::splat(radius(0))];
        let mut parent = 0;
        for k in 1..=count {
            names.push(format!("limb{limb}_{k}"));
            parents.push(Some(parent));
            positions.push(at(k));
            aims.push(at(k + 1));
            parent = names.len() - 1;
            chain.push(parent);
            points.push(at(k));
            radii.push(Vec2::splat(radius(k)));
        }
        points.push(at(count + 1));
        radii.push(Vec2::splat(radius(segments)));
        limb_chains.push((chain, points, radii));
    }
    let rotations: Vec<Quat> = positions
        .iter()
        .zip(&aims)
        .map(|(p, a)| Quat::from_rotation_arc(Vec3::Y, (*a - *p).normalize_or(Vec3::Y)))
        .collect();
    let bind = (0..names.len())
        .map(|i| match parents[i] {
            Some(p) => {
                let inv = rotations[p].inverse();
                Transform::from_translation_rotation(
                    inv * (positions[i] - positions[p]),
                    (inv * rotations[i]).normalize(),
                )
            }
            None => Transform::from_translation_rotation(positions[i], rotations[i]),
        })
        .collect();
    let (skeleton, _) = Skeleton::new(names, &parents, bind)?;

    // Vertices per tube: rings * radial + two caps of cap_rings rings and
    // a pole each; solve for the rings.
    let (radial, cap_rings) = if vertices >= 400 * limbs {
        (16, 3)
    } else {
        (6, 1)
    };
    let caps = 2 * (cap_rings * radial + 1);
    let body = vertices.saturating_sub(limbs * caps);
    let rings_total = ((body as f32 / radial as f32).round() as usize).max(2 * limbs);
    let style = TubeStyle {
        radial,
        cap_rings,
        fillet: 0.0,
        follow_profile: false,
    };
    let mut built = MeshBuilder::default();
    let mut lists = Vec::new();
    for (limb, (chain, points, radii)) in limb_chains.iter().enumerate() {
        let rings = rings_total / limbs + usize::from(limb < rings_total % limbs);
        let span = built.tube(points, radii, Vec3::Y, rings, &style);
        let bones: Vec<u16> = chain.iter().map(|&j| j as u16).collect();
        lists.extend(built.arc[span.first..span.end].iter().map(|&s| {
            // Segments are equal, so arc length maps to segments linearly.
            tube::bspline_weights(s / SEGMENT, &bones)
        }));
    }
    let mesh = skinned_mesh("bench", built, tube::influences(&lists, 4));

    const KEYS: usize = 30;
    const SECONDS: f32 = 2.0;
    let times: Vec<f32> = (0..=KEYS)
        .map(|k| SECONDS * k as f32 / KEYS as f32)
        .collect();
    let tracks = (0..skeleton.len())
        .map(|j| {
            let bind = skeleton.bind_local()[j];
            let rotations = times
                .iter()
                .map(|&t| {
                    let phase = TAU * t / SECONDS - 0.6 * j as f32;
                    let turn = Quat::from_rotation_x(0.3 * phase.sin())
                        * Quat::from_rotation_z(0.2 * phase.cos());
                    (bind.rotation * turn).normalize()
                })
                .collect();
            let mut track = RawJointTrack::new(j);
            track.rotation = RawTrack::new(Interpolation::Linear, times.clone(), rotations);
            if j == 0 {
                let bob = times
                    .iter()
                    .map(|&t| bind.translation + Vec3::Y * (0.05 * (TAU * t / SECONDS).sin()))
                    .collect();
                track.translation = RawTrack::new(Interpolation::Linear, times.clone(), bob);
            }
            track
        })
        .collect();
    let clip = Clip::build(
        &RawClip {
            weights: Vec::new(),
            name: "writhe".into(),
            duration: SECONDS,
            tracks,
        },
        &skeleton,
    )?;
    Ok(model(
        "bench",
        skeleton,
        mesh,
        vec![clip],
        Vec4::new(0.55, 0.4, 0.7, 1.0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::PlaybackMode;
    use crate::assets::builtin::tube::checks;
    use crate::mesh::{partition_bones, MeshError};

    fn live(inf: &Influences, v: usize) -> usize {
        inf.vertex(v).1.iter().filter(|&&w| w > 0.0).count()
    }

    #[test]
    fn chain_cylinder_influences() {
        for k in [1, 2, 4, 8] {
            let model = chain_cylinder(64, k, 7).unwrap();
            assert_eq!(model.skeleton.len(), 64);
            checks::parents_come_first(&model);
            let mesh = &model.meshes[0];
            mesh.validate().unwrap();
            let inf = &mesh.influences;
            assert_eq!(inf.per_vertex, k);
            checks::weights_are_normalised(&model);
            checks::bind_pose_is_rest(&model);
            let n = mesh.vertex_count();
            assert!(n > 3_000, "{n}");
            let counts: Vec<usize> = (0..n).map(|v| live(inf, v)).collect();
            assert!(counts.iter().all(|&c| (1..=k).contains(&c)));
            assert!(counts.contains(&k));
            if k > 1 {
                let fewer = counts.iter().filter(|&&c| c < k).count();
                assert!(fewer > n / 10 && fewer < n / 2, "{fewer} of {n} with fewer");
                // Zero slots are not always the last ones.
                assert!((0..n).any(|v| inf.vertex(v).1[0] == 0.0));
            }
            for v in 0..n {
                let (js, ws) = inf.vertex(v);
                let live: Vec<u16> = js
                    .iter()
                    .zip(ws)
                    .filter(|(_, &w)| w > 0.0)
                    .map(|(&j, _)| j)
                    .collect();
                let mut distinct = live.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), live.len(), "vertex {v}: {js:?} {ws:?}");
                // Joints near the vertex's height.
                let height = (mesh.positions[v].y.clamp(0.0, 2.0) / (2.0 / 64.0)) as i64;
                assert!(live
                    .iter()
                    .all(|&j| (j as i64 - height).abs() <= k as i64 + 1));
            }
        }
    }

    #[test]
    fn chain_cylinder_is_deterministic() {
        let a = chain_cylinder(64, 4, 11).unwrap();
        let b = chain_cylinder(64, 4, 11).unwrap();
        let c = chain_cylinder(64, 4, 12).unwrap();
        assert_eq!(a.meshes, b.meshes);
        assert_ne!(a.meshes[0].influences, c.meshes[0].influences);
        assert_eq!(a.meshes[0].positions, c.meshes[0].positions);
    }

    #[test]
    fn bad_counts_are_errors() {
        assert!(chain_cylinder(0, 4, 1).is_err());
        assert!(chain_cylinder(64, 0, 1).is_err());
        assert!(chain_cylinder(64, 9, 1).is_err());
        assert!(matches!(
            chain_cylinder(MAX_JOINTS + 1, 4, 1),
            Err(AnimError::TooManyJoints { .. })
        ));
        assert!(many_joints(0).is_err());
        assert!(bench_character(10_000, 0).is_err());
    }

    #[test]
    fn random_poses() {
        let model = chain_cylinder(64, 4, 1).unwrap();
        let s = &model.skeleton;
        let a = random_pose(s, 3, false);
        assert_eq!(a.len(), 64);
        assert_eq!(a, random_pose(s, 3, false));
        assert_ne!(a, random_pose(s, 4, false));
        assert!(a.iter().all(|t| t.scale == Vec3::ONE && t.is_finite()));
        assert!(a.iter().all(|t| t.rotation.is_normalized()));
        // Any angle: some turns are past 90 degrees, some under.
        let angles: Vec<f32> = a
            .iter()
            .map(|t| t.rotation.angle_between(Quat::IDENTITY))
            .collect();
        assert!(angles.iter().any(|&x| x > 2.0) && angles.iter().any(|&x| x < 1.5));
        for (t, b) in a.iter().zip(s.bind_local()) {
            let d = t.translation - b.translation;
            assert!(d.abs().max_element() <= 0.02 + 1e-6 && d != Vec3::ZERO);
        }
        let scaled = random_pose(s, 3, true);
        let non_uniform = scaled
            .iter()
            .filter(|t| t.scale.max_element() - t.scale.min_element() > 0.05)
            .count();
        assert!(non_uniform > 10 && non_uniform < 54, "{non_uniform}");
        assert!(scaled
            .iter()
            .all(|t| t.scale.min_element() >= 0.6 && t.scale.max_element() <= 1.6));
        assert!(model.skin_cpu(&scaled).unwrap()[0]
            .positions
            .iter()
            .all(|p| p.is_finite()));
    }

    #[test]
    fn many_joints_partitions_at_its_bound() {
        let model = many_joints(300).unwrap();
        assert_eq!(model.skeleton.len(), 300);
        checks::parents_come_first(&model);
        let mesh = &model.meshes[0];
        mesh.validate().unwrap();
        checks::weights_are_normalised(&model);
        checks::bind_pose_is_rest(&model);
        let inf = &mesh.influences;
        assert_eq!(inf.per_vertex, 4);
        let mut used = vec![false; 300];
        for (&j, &w) in inf.joints.iter().zip(&inf.weights) {
            used[j as usize] |= w > 0.0;
        }
        assert!(used.iter().all(|&u| u));
        let cap = MANY_JOINTS_BONES_PER_TRIANGLE;
        let parts = partition_bones(&mesh.indices, inf, cap).unwrap();
        assert!(parts.len() >= 300 / cap);
        assert!(parts.iter().all(|p| p.bones.len() <= cap));
        assert!(matches!(
            partition_bones(&mesh.indices, inf, cap - 1),
            Err(MeshError::TriangleNeedsTooManyBones { bones: 4, .. })
        ));
        let parts = partition_bones(&mesh.indices, inf, 64).unwrap();
        assert!((5..=8).contains(&parts.len()), "{}", parts.len());
        let clip = model.clip("wave").unwrap();
        let pose = model.pose(Some(clip), 0.7, PlaybackMode::Loop).unwrap();
        assert!(pose.iter().all(|t| t.is_finite()));
    }

    #[test]
    fn bench_character_counts() {
        let model = bench_character(10_000, 64).unwrap();
        assert_eq!(model.skeleton.len(), 64);
        checks::parents_come_first(&model);
        let n = model.vertex_count();
        assert!(n.abs_diff(10_000) <= 200, "{n} vertices");
        let mesh = &model.meshes[0];
        mesh.validate().unwrap();
        assert_eq!(mesh.influences.per_vertex, 4);
        checks::weights_are_normalised(&model);
        checks::bind_pose_is_rest(&model);
        let four = (0..n).filter(|&v| live(&mesh.influences, v) == 4).count();
        assert!(four > n / 2, "{four} of {n} with four weights");
        // The clip moves every joint.
        let clip = model.clip("writhe").unwrap();
        let pose = model.pose(Some(clip), 0.45, PlaybackMode::Loop).unwrap();
        for (j, (p, b)) in pose.iter().zip(model.skeleton.bind_local()).enumerate() {
            assert!(p.rotation.angle_between(b.rotation) > 0.01, "joint {j}");
        }
        for (v, j) in [(2_000, 16), (50_000, 200), (5_000, 2), (1_000, 1)] {
            let model = bench_character(v, j).unwrap();
            assert_eq!(model.skeleton.len(), j);
            let n = model.vertex_count();
            assert!(n.abs_diff(v) * 50 <= v, "{n} vertices for {v}");
            model.meshes[0].validate().unwrap();
        }
    }
}
