//! Skinned bounds (`mesh::JointBounds`): over every clip of every test
//! model and the built-in character, sampled 60 times per clip, every
//! vertex the CPU reference (`LinearBlendJob`, after `MorphJob`) skins lies
//! inside the instance's box, and the box's volume averages at most twice
//! the exact box of those vertices.
//!
//! The box pads itself for `f32` rounding (`mesh::ROUNDING_PAD`), so the
//! containment checked here is exact: no tolerance at all.

use glam::{Affine3A, Vec3};
use vkskin::anim::{LinearBlendJob, PlaybackMode, QuatTranslation, QuatTranslationSkinningJob};
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

/// Checks one pose; returns box volume / exact volume.
fn check_pose(
    model: &Model,
    bounds: &[JointBounds],
    locals: &[vkskin::anim::Transform],
    weights: &[f32],
    what: &str,
) -> f64 {
    let palettes = model.skin_matrices(locals).unwrap();
    let mut boxed = Aabb::EMPTY;
    let mut exact = Aabb::EMPTY;
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
    }
    let floor = 0.01 * (exact.max - exact.min).length();
    volume(&boxed, floor) / volume(&exact, floor)
}

/// Every clip at 60 times (ends included); the average ratio.
fn check_model(name: &str, model: &Model) -> f64 {
    let bounds: Vec<JointBounds> = model
        .meshes
        .iter()
        .map(|m| JointBounds::new(m, model.skins[m.skin].len()).unwrap())
        .collect();
    let (mut sum, mut count) = (0.0, 0usize);
    let bind = model.skeleton.bind_local().to_vec();
    sum += check_pose(model, &bounds, &bind, &model.default_morph_weights(), name);
    count += 1;
    for clip in &model.clips {
        for i in 0..SAMPLES {
            let t = clip.duration() * i as f32 / (SAMPLES - 1) as f32;
            let locals = model.pose(Some(clip), t, PlaybackMode::Clamp).unwrap();
            let weights = model
                .morph_weights(Some(clip), t, PlaybackMode::Clamp)
                .unwrap();
            sum += check_pose(model, &bounds, &locals, &weights, name);
            count += 1;
        }
    }
    let ratio = sum / count as f64;
    println!(
        "{name}: {} clip(s), {count} poses, mean volume ratio box/exact {ratio:.3}",
        model.clips.len()
    );
    ratio
}

#[test]
fn every_test_model_stays_inside_its_box() {
    let mut ratios = vec![(
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
    let mean = ratios.iter().map(|r| r.1).sum::<f64>() / ratios.len() as f64;
    println!(
        "overall mean volume ratio over {} models: {mean:.3}",
        ratios.len()
    );
    for (name, r) in &ratios {
        assert!(*r <= 2.0, "{name}: box averages {r:.3}x the exact box");
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
    let mut sum = 0.0;
    for i in 0..SAMPLES {
        let t = clip.duration() * i as f32 / (SAMPLES - 1) as f32;
        let locals = model.pose(Some(clip), t, PlaybackMode::Clamp).unwrap();
        let weights: Vec<f32> = (0..first).map(|_| rng.next(-1.5, 2.0)).collect();
        sum += check_pose(&model, &bounds, &locals, &weights, "morphed character");
    }
    // Reported, not bounded: the radius sum_t |w_t| max|dp_t| assumes the
    // targets' longest deltas line up on one vertex, which random deltas
    // never do.
    println!(
        "morphed character: mean volume ratio {:.3}",
        sum / SAMPLES as f64
    );
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
