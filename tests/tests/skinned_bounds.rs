//! Skinned bounds (`mesh::JointBounds`): over every clip of every test
//! model and the built-in character, sampled 60 times per clip, every
//! vertex the CPU references (`LinearBlendJob` and
//! `QuatTranslationSkinningJob`, after `MorphJob`; and
//! `DualQuatSkinningJob` with and without scale against
//! `JointBounds::skinned_dual_quat`) skin lies inside the instance's box,
//! and the box's volume averages at most twice the exact box of those
//! vertices (the linear blends' and each dual-quaternion encoding's).
//!
//! The box pads itself for `f32` rounding (`mesh::ROUNDING_PAD`), so the
//! containment checked here is exact: no tolerance at all.

use glam::{Affine3A, Mat3A, Quat, Vec3};
use vkskin::anim::{
    encode_dual_quat, encode_dual_quat_scale, DualQuat, DualQuatSkinningJob, LinearBlendJob,
    PaletteHierarchy, PlaybackMode, QuatTranslation, QuatTranslationSkinningJob,
};
use vkskin::assets::builtin::Character;
use vkskin::assets::Model;
use vkskin::mesh::{Aabb, JointBounds, MorphTarget, MorphTargets};

const SAMPLES: usize = 60;

/// A tiny deterministic generator (SplitMix64), numbers in [lo, hi).
struct Rng(u64);
impl Rng {
    fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        lo + (hi - lo) * ((z >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// Volume with every extent floored at 1% of the exact box's diagonal, so
/// that a flat model (a plane: zero volume) gives a finite ratio.
fn volume(b: &Aabb, floor: f32) -> f64 {
    let d = (b.max - b.min).max(Vec3::splat(floor));
    d.x as f64 * d.y as f64 * d.z as f64
}

/// One pose's volume ratios (box / exact): the linear blends', then the
/// dual quaternions' without and with scale (`None`: no bound claimed
/// for the pose).
struct Ratios {
    linear: f64,
    dq: [Option<f64>; 2],
}

/// Checks one pose; returns box volume / exact volume.
fn check_pose(
    model: &Model,
    bounds: &[JointBounds],
    locals: &[vkskin::anim::Transform],
    weights: &[f32],
    what: &str,
) -> Ratios {
    let palettes = model.skin_matrices(locals).unwrap();
    let mut boxed = Aabb::EMPTY;
    let mut exact = Aabb::EMPTY;
    let mut dq_boxed = [Aabb::EMPTY; 2];
    let mut dq_exact = [Aabb::EMPTY; 2];
    let mut dq_bounded = [true; 2];
    for (mesh, jb) in model.meshes.iter().zip(bounds) {
        let skin: &[Affine3A] = &palettes[mesh.skin];
        let b = jb.skinned(skin, weights).unwrap();
        let morphed = mesh.morphed(weights).unwrap();
        let mut out = vec![Vec3::ZERO; mesh.vertex_count()];
        LinearBlendJob {
            skin,
            per_vertex: mesh.influences.per_vertex,
            joints: &mesh.influences.joints,
            weights: &mesh.influences.weights,
            positions: &morphed.positions,
            normals: &[],
            out_positions: &mut out,
            out_normals: &mut [],
            unit_normals: false,
        }
        .run()
        .unwrap();
        for (v, &p) in out.iter().enumerate() {
            assert!(
                b.contains(p),
                "{what}: mesh {:?} vertex {v} at {p} outside {b:?}",
                mesh.name
            );
            exact.extend(p);
        }
        boxed.extend(b.min);
        boxed.extend(b.max);
        // The qt encoding: the box of the matrices its job rebuilds from
        // the quaternions and translations (scale made uniform) holds
        // what that job skins.
        let qt: Vec<QuatTranslation> = skin
            .iter()
            .map(|m| {
                let (s, r, t) = m.to_scale_rotation_translation();
                QuatTranslation::new(r, t, s.x)
            })
            .collect();
        let rebuilt: Vec<Affine3A> = qt.iter().map(QuatTranslation::to_affine).collect();
        let bq = jb.skinned(&rebuilt, weights).unwrap();
        QuatTranslationSkinningJob {
            palette: &qt,
            per_vertex: mesh.influences.per_vertex,
            joints: &mesh.influences.joints,
            weights: &mesh.influences.weights,
            positions: &morphed.positions,
            normals: &[],
            out_positions: &mut out,
            out_normals: &mut [],
        }
        .run()
        .unwrap();
        for (v, &p) in out.iter().enumerate() {
            assert!(
                bq.contains(p),
                "{what}: qt: mesh {:?} vertex {v} at {p} outside {bq:?}",
                mesh.name
            );
        }
        // The dual-quaternion encodings: the palette as the paths encode
        // it, the matrices it stands for, the job's vertices.
        let hierarchy = PaletteHierarchy::new(&model.skins[mesh.skin], &model.skeleton).unwrap();
        for (s, scaled) in [false, true].into_iter().enumerate() {
            let mut dq = vec![DualQuat::IDENTITY; skin.len()];
            let mut ss = vec![Mat3A::IDENTITY; skin.len()];
            if scaled {
                encode_dual_quat_scale(skin, &hierarchy, &mut dq, &mut ss).unwrap();
            } else {
                encode_dual_quat(skin, &hierarchy, &mut dq).unwrap();
                ss.clear();
            }
            let held: Vec<Affine3A> = dq
                .iter()
                .enumerate()
                .map(|(j, d)| {
                    let m = Affine3A::from_rotation_translation(d.real(), d.translation());
                    match ss.get(j) {
                        Some(s) => Affine3A {
                            matrix3: m.matrix3 * *s,
                            ..m
                        },
                        None => m,
                    }
                })
                .collect();
            let rotations: Vec<Quat> = dq.iter().map(DualQuat::real).collect();
            let b = jb
                .skinned_dual_quat(&held, &rotations, &ss, weights)
                .unwrap();
            DualQuatSkinningJob {
                palette: &dq,
                scale_shear: &ss,
                per_vertex: mesh.influences.per_vertex,
                joints: &mesh.influences.joints,
                weights: &mesh.influences.weights,
                positions: &morphed.positions,
                normals: &[],
                out_positions: &mut out,
                out_normals: &mut [],
            }
            .run()
            .unwrap();
            let Some(b) = b else {
                dq_bounded[s] = false;
                continue;
            };
            for (v, &p) in out.iter().enumerate() {
                assert!(
                    b.contains(p),
                    "{what}: dq (scale {scaled}): mesh {:?} vertex {v} at {p} outside {b:?}",
                    mesh.name
                );
                dq_exact[s].extend(p);
            }
            dq_boxed[s].extend(b.min);
            dq_boxed[s].extend(b.max);
        }
    }
    let ratio = |boxed: &Aabb, exact: &Aabb| {
        let floor = 0.01 * (exact.max - exact.min).length();
        volume(boxed, floor) / volume(exact, floor)
    };
    Ratios {
        linear: ratio(&boxed, &exact),
        dq: [0, 1].map(|s| dq_bounded[s].then(|| ratio(&dq_boxed[s], &dq_exact[s]))),
    }
}

/// Sums of [`Ratios`] over poses.
#[derive(Default)]
struct Totals {
    linear: f64,
    dq: [f64; 2],
    dq_poses: [usize; 2],
    poses: usize,
}

impl Totals {
    fn add(&mut self, r: Ratios) {
        self.linear += r.linear;
        self.poses += 1;
        for s in 0..2 {
            if let Some(x) = r.dq[s] {
                self.dq[s] += x;
                self.dq_poses[s] += 1;
            }
        }
    }

    /// Mean ratios: linear, dq, dq-scale (NaN without a bounded pose).
    fn means(&self) -> [f64; 3] {
        [
            self.linear / self.poses as f64,
            self.dq[0] / self.dq_poses[0] as f64,
            self.dq[1] / self.dq_poses[1] as f64,
        ]
    }

    fn report(&self, name: &str, clips: usize) {
        let [l, d, ds] = self.means();
        println!(
            "{name}: {clips} clip(s), {} poses, mean volume ratio box/exact: linear {l:.3}, \
             dq {d:.3} ({} poses bounded), dq-scale {ds:.3} ({} poses bounded)",
            self.poses, self.dq_poses[0], self.dq_poses[1]
        );
    }
}

/// Every clip at 60 times (ends included); the average ratios.
fn check_model(name: &str, model: &Model) -> Totals {
    let bounds: Vec<JointBounds> = model
        .meshes
        .iter()
        .map(|m| JointBounds::new(m, model.skins[m.skin].len()).unwrap())
        .collect();
    let mut totals = Totals::default();
    let bind = model.skeleton.bind_local().to_vec();
    totals.add(check_pose(
        model,
        &bounds,
        &bind,
        &model.default_morph_weights(),
        name,
    ));
    for clip in &model.clips {
        for i in 0..SAMPLES {
            let t = clip.duration() * i as f32 / (SAMPLES - 1) as f32;
            let locals = model.pose(Some(clip), t, PlaybackMode::Clamp).unwrap();
            let weights = model
                .morph_weights(Some(clip), t, PlaybackMode::Clamp)
                .unwrap();
            totals.add(check_pose(model, &bounds, &locals, &weights, name));
        }
    }
    totals.report(name, model.clips.len());
    totals
}

#[test]
fn every_test_model_stays_inside_its_box() {
    let mut ratios: Vec<(&str, Totals)> = vec![(
        "builtin character",
        check_model("builtin character", &Character::model()),
    )];
    for rel in [
        "gltf/CesiumMan.glb",
        "gltf/Fox.glb",
        "gltf/RiggedFigure.glb",
        "gltf/RiggedSimple.glb",
        "gltf/RecursiveSkeletons.glb",
        "gltf/quad_skin.glb",
        "x/tiny_4anim.x",
        "x/tiny.x",
        "x/anim_test.x",
        "x/bat.x",
    ] {
        let Some(path) = vkskin_tests::asset(rel) else {
            continue;
        };
        let model = vkskin::assets::load(&path).unwrap();
        ratios.push((rel, check_model(rel, &model)));
    }
    let mut overall = [0.0; 3];
    for (k, what) in ["linear", "dq", "dq-scale"].into_iter().enumerate() {
        let means: Vec<f64> = ratios.iter().map(|r| r.1.means()[k]).collect();
        overall[k] = means.iter().sum::<f64>() / means.len() as f64;
        println!(
            "overall mean volume ratio ({what}) over {} models: {:.3}",
            means.len(),
            overall[k]
        );
    }
    for (name, t) in &ratios {
        let [l, _, _] = t.means();
        assert!(l <= 2.0, "{name}: box averages {l:.3}x the exact box");
        // The dual-quaternion bound holds every pose of these models (none
        // has a vertex whose influences are more than a half turn apart).
        for s in 0..2 {
            assert_eq!(
                t.dq_poses[s], t.poses,
                "{name}: dq (scale {s}) poses unbounded"
            );
        }
    }
    // The dual-quaternion boxes: at most 2x averaged over the models (per
    // model up to 3.5x, on CesiumMan: see docs/skinning-paths.md).
    for (k, what) in [(1, "dq"), (2, "dq-scale")] {
        assert!(
            overall[k] <= 2.0,
            "{what}: boxes average {:.3}x the exact box",
            overall[k]
        );
    }
}

/// The character with three synthetic targets on each mesh, driven by
/// random weights in [-1.5, 2) (outside [0, 1] on purpose).
#[test]
fn morph_targets_stay_inside_the_box() {
    let mut model = Character::model();
    let mut rng = Rng(7);
    let mut first = 0;
    for mesh in &mut model.meshes {
        let n = mesh.vertex_count();
        let targets = (0..3)
            .map(|t| MorphTarget {
                positions: (0..n)
                    .map(|_| {
                        let s = 0.05 * (t + 1) as f32;
                        Vec3::new(rng.next(-s, s), rng.next(-s, s), rng.next(-s, s))
                    })
                    .collect(),
                ..MorphTarget::default()
            })
            .collect();
        mesh.morph = MorphTargets {
            targets,
            first_weight: first,
        };
        first += 3;
    }
    let bounds: Vec<JointBounds> = model
        .meshes
        .iter()
        .map(|m| JointBounds::new(m, model.skins[m.skin].len()).unwrap())
        .collect();
    let clip = &model.clips[0];
    let mut totals = Totals::default();
    for i in 0..SAMPLES {
        let t = clip.duration() * i as f32 / (SAMPLES - 1) as f32;
        let locals = model.pose(Some(clip), t, PlaybackMode::Clamp).unwrap();
        let weights: Vec<f32> = (0..first).map(|_| rng.next(-1.5, 2.0)).collect();
        totals.add(check_pose(
            &model,
            &bounds,
            &locals,
            &weights,
            "morphed character",
        ));
    }
    // Reported, not bounded: the radius sum_t |w_t| max|dp_t| assumes the
    // targets' longest deltas line up on one vertex, which random deltas
    // never do.
    totals.report("morphed character", 1);
}

/// The check can fail: a box shrunk by 1% on one side loses a vertex.
#[test]
fn a_shrunk_box_misses_a_vertex() {
    let model = Character::model();
    let mesh = &model.meshes[0];
    let jb = JointBounds::new(mesh, model.skins[mesh.skin].len()).unwrap();
    let palettes = model.skin_matrices(model.skeleton.bind_local()).unwrap();
    let b = jb.skinned(&palettes[mesh.skin], &[]).unwrap();
    let shrunk = Aabb {
        max: b.max - (b.max - b.min) * Vec3::new(0.01, 0.0, 0.0),
        ..b
    };
    let skinned = model.skin_cpu(model.skeleton.bind_local()).unwrap();
    assert!(skinned[0].positions.iter().all(|&p| b.contains(p)));
    assert!(skinned[0].positions.iter().any(|&p| !shrunk.contains(p)));
}
