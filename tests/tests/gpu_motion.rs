//! Motion vectors on every skinning path: each instance is posed at t and
//! t - dt (the trident's clip at random times; procedural tubes with morph
//! targets, 4 and 8 influences, and a 64-joint chain with targets, at
//! random poses whose weights change between the two frames), and the captured previous positions must equal
//! the path's CPU reference of the pose (and weights) at t - dt within 1e-5
//! of the bounding-box diagonal, while the current positions still equal
//! the reference at t. A flagged teleport (no previous pose) captures the
//! current positions as the previous ones: zero velocity. Every path serves
//! motion: the windowed storages (ubo, push) also with eight bones per draw,
//! so that the chain partitions and each draw's window holds a partition's
//! palette then its previous one (a mesh one of whose triangles needs more
//! bones than a window halved by motion holds is refused, as without
//! motion, and the test says which). All under validation with synchronization
//! validation; the log is checked after teardown.
#![cfg(feature = "gpu")]

use glam::{Affine3A, Vec3};
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::builtin::{procedural, Trident};
use vkskin::assets::Model;
use vkskin::mesh::SkinnedMesh;
use vkskin::render::SkinCapture;
use vkskin::skin::{paths, CapturedVertex, PathDesc, Stage};
use vkskin_tests::gpu::{
    diagonal, max_differences, normal_sensitivity, path_reference, trident_skin, GpuTest,
};
use vkskin_tests::morph::{add_targets, morphed_by_hand, random_weights, Rng};

/// Relative position tolerance (of the bounding-box diagonal).
const TOL: f32 = 1e-5;

/// One pose: skinning matrices and morph weights (empty without targets).
#[derive(Clone)]
struct Pose {
    skin: Vec<Affine3A>,
    weights: Vec<f32>,
}

struct Case {
    label: String,
    model: Model,
    /// Per instance: the pose at t and at t - dt (`None`: a teleport).
    instances: Vec<(Pose, Option<Pose>)>,
}

/// The trident's clip at random times t and t - dt; the last instance
/// teleports.
fn trident_case(seed: u64) -> Case {
    let model = Trident::model();
    let mut rng = Rng(seed);
    let mut instances: Vec<(Pose, Option<Pose>)> = (0..3)
        .map(|_| {
            let t = rng.range(0.2, 3.0);
            let dt = rng.range(0.02, 0.1);
            let pose = |t| Pose {
                skin: trident_skin(&model, Some(t)).1,
                weights: Vec::new(),
            };
            (pose(t), Some(pose(t - dt)))
        })
        .collect();
    instances[2].1 = None;
    Case {
        label: "trident".into(),
        model,
        instances,
    }
}

/// A 4-joint tube (`k` influences) with `targets` targets: two frames of
/// random poses whose weights change; the last instance teleports.
fn tube_case(k: usize, targets: usize, seed: u64) -> Case {
    let mut model = procedural::chain_cylinder(4, k, seed).expect("tube");
    add_targets(&mut model.meshes[0], targets, seed * 31);
    let pose = |s: u64| {
        let p = procedural::random_pose(&model.skeleton, s, s % 2 == 1);
        Pose {
            skin: model.skin_matrices(&p).expect("skin")[0].clone(),
            weights: random_weights(targets, s * 13),
        }
    };
    let mut instances: Vec<(Pose, Option<Pose>)> = (0..3u64)
        .map(|i| (pose(seed * 7 + 2 * i), Some(pose(seed * 7 + 2 * i + 1))))
        .collect();
    instances[2].1 = None;
    Case {
        label: format!("tube k={k} targets={targets}"),
        model,
        instances,
    }
}

/// The 64-joint chain (four bones per triangle at most, so that a window
/// of a few bones partitions it) with `targets` targets: two frames of
/// random poses; the last instance teleports.
fn chain_case(targets: usize, seed: u64) -> Case {
    let mut model = procedural::many_joints(64).expect("64 joints");
    add_targets(&mut model.meshes[0], targets, seed * 31);
    let pose = |s: u64| {
        let p = procedural::random_pose(&model.skeleton, s, false);
        Pose {
            skin: model.skin_matrices(&p).expect("skin")[0].clone(),
            weights: random_weights(targets, s * 13),
        }
    };
    let mut instances: Vec<(Pose, Option<Pose>)> = (0..3u64)
        .map(|i| (pose(seed * 7 + 2 * i), Some(pose(seed * 7 + 2 * i + 1))))
        .collect();
    instances[2].1 = None;
    Case {
        label: format!("64-joint chain targets={targets}"),
        model,
        instances,
    }
}

/// `case`'s mesh unwelded, each triangle rigidly bound to the strongest
/// joint of its first vertex (one influence): every triangle needs one
/// bone, so a window that motion halves to one bone (`4x3-push`) still
/// draws it, one partition per bone.
fn rigid_case(mut case: Case) -> Case {
    let mesh = &mut case.model.meshes[0];
    let k = mesh.influences.per_vertex;
    let pick = |v: usize| {
        let w = &mesh.influences.weights[v * k..(v + 1) * k];
        let best = (0..k).fold(0, |b, i| if w[i] > w[b] { i } else { b });
        mesh.influences.joints[v * k + best]
    };
    let src: Vec<usize> = mesh.indices.iter().map(|&i| i as usize).collect();
    let joints: Vec<u16> = src
        .chunks(3)
        .flat_map(|t| {
            let j = pick(t[0]);
            [j, j, j]
        })
        .collect();
    let take = |v: &Vec<Vec3>| -> Vec<Vec3> {
        if v.is_empty() {
            Vec::new()
        } else {
            src.iter().map(|&i| v[i]).collect()
        }
    };
    let positions = take(&mesh.positions);
    let normals = take(&mesh.normals);
    for t in &mut mesh.morph.targets {
        t.positions = take(&t.positions);
        t.normals = take(&t.normals);
        t.tangents = take(&t.tangents);
    }
    let uvs = src
        .iter()
        .filter_map(|&i| mesh.uvs.get(i).copied())
        .collect();
    let colors = src
        .iter()
        .filter_map(|&i| mesh.colors.get(i).copied())
        .collect();
    let tangents = src
        .iter()
        .filter_map(|&i| mesh.tangents.get(i).copied())
        .collect();
    mesh.influences = vkskin::mesh::Influences::new(1, joints, vec![1.0; src.len()]);
    mesh.positions = positions;
    mesh.normals = normals;
    mesh.uvs = uvs;
    mesh.colors = colors;
    mesh.tangents = tangents;
    mesh.indices = (0..src.len() as u32).collect();
    case.label = format!("rigid {}", case.label);
    case
}

/// The path's CPU reference of `pose` on `mesh`.
fn reference(
    desc: &PathDesc,
    mesh: &SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    pose: &Pose,
) -> (SkinnedMesh, Vec<Vec3>, Vec<Vec3>) {
    let morphed = if pose.weights.is_empty() {
        mesh.clone()
    } else {
        morphed_by_hand(mesh, &pose.weights)
    };
    let (pos, nrm) = path_reference(desc, &morphed, hierarchy, &pose.skin);
    (morphed, pos, nrm)
}

/// Largest distance between the captured previous positions and `pos`
/// over the vertices the mesh's triangles use, and where.
fn previous_error(got: &[CapturedVertex], pos: &[Vec3], indices: &[u32]) -> (f32, usize) {
    let mut used = vec![false; pos.len()];
    for &i in indices {
        used[i as usize] = true;
    }
    let (mut worst, mut at) = (0.0f32, 0);
    for (v, c) in got.iter().enumerate().take(pos.len()) {
        let e = (c.previous() - pos[v]).length();
        if used[v] && (e.is_nan() || e > worst) {
            worst = e;
            at = v;
        }
    }
    (worst, at)
}

/// Checks `case` on `rig` and returns the prepared mesh's partitions;
/// `None` when the mesh does not fit the path's draws (a windowed storage whose window, halved by motion, holds fewer
/// bones than one of the mesh's triangles needs: the error says so).
fn check_case(rig: &mut SkinCapture, desc: &PathDesc, case: &Case) -> Option<usize> {
    let mesh = &case.model.meshes[0];
    let hierarchy =
        PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).expect("hierarchy");
    let prepared = match rig.prepare(mesh, &hierarchy) {
        Ok(p) => p,
        Err(e) => {
            let cap = rig.path().capacity();
            assert!(
                desc.partitions() && cap.is_some_and(|c| c < 12),
                "{} on {}: {e}",
                case.label,
                desc.name
            );
            eprintln!(
                "{} on {} ({cap:?} bones per draw with motion): {e}",
                case.label, desc.name
            );
            return None;
        }
    };
    let parts = prepared.parts().len();
    let palettes: Vec<&[Affine3A]> = case.instances.iter().map(|i| &i.0.skin[..]).collect();
    let weights: Vec<&[f32]> = case.instances.iter().map(|i| &i.0.weights[..]).collect();
    let previous: Vec<Option<(&[Affine3A], &[f32])>> = case
        .instances
        .iter()
        .map(|i| i.1.as_ref().map(|p| (&p.skin[..], &p.weights[..])))
        .collect();
    let (captured, _) = rig
        .run_motion(&prepared, &palettes, &weights, &previous)
        .unwrap_or_else(|e| panic!("{} on {}: {e}", case.label, desc.name));
    let vc = mesh.positions.len();
    assert_eq!(captured.len(), vc * palettes.len());
    for (i, (now, before)) in case.instances.iter().enumerate() {
        let got = &captured[i * vc..(i + 1) * vc];
        let label = format!("{} instance {i} on {}", case.label, desc.name);
        // The current pose still equals the reference at t.
        let (morphed, pos, nrm) = reference(desc, mesh, &hierarchy, now);
        let diag = diagonal(&pos).max(1e-3);
        let sens = normal_sensitivity(desc, &morphed, &hierarchy, &now.skin, &nrm);
        let (dp, dn, worst) = max_differences(got, &pos, &nrm, &mesh.indices, &sens);
        assert!(
            dp <= TOL * diag && dn <= TOL,
            "{label}: current position error {dp:e} (diag {diag}), normal error {dn:e} \
             at vertex {worst}"
        );
        match before {
            Some(prev) => {
                let (_, ppos, _) = reference(desc, mesh, &hierarchy, prev);
                let (e, at) = previous_error(got, &ppos, &mesh.indices);
                assert!(
                    e <= TOL * diag,
                    "{label}: previous position error {e:e} (diag {diag}) at vertex {at}: \
                     gpu {} cpu {}",
                    got[at].previous(),
                    ppos[at]
                );
                // The two frames differ: the check is not of the current pose.
                let moved = pos
                    .iter()
                    .zip(&ppos)
                    .map(|(a, b)| (*a - *b).length())
                    .fold(0.0f32, f32::max);
                assert!(moved > 100.0 * TOL * diag, "{label}: the pose did not move");
            }
            None => {
                // A teleport: zero velocity, exactly.
                for (v, c) in got.iter().enumerate() {
                    assert_eq!(
                        c.previous(),
                        c.position(),
                        "{label}: teleport vertex {v} has velocity"
                    );
                }
            }
        }
    }
    Some(parts)
}

#[test]
fn every_path_outputs_the_previous_pose_like_the_reference() {
    let gpu = GpuTest::new();
    let cases = [
        trident_case(3),
        tube_case(4, 6, 1),
        tube_case(8, 6, 2),
        tube_case(4, 0, 5),
        chain_case(5, 6),
        rigid_case(chain_case(3, 8)),
    ];
    let (mut served, mut partitioned, mut refused) = (0, 0, 0);
    for desc in paths() {
        // The windowed storages (ubo, push) also with eight bones per draw:
        // every mesh partitions, each window holding a partition's palette
        // then its previous one.
        let limits: &[Option<usize>] = if desc.partitions() {
            &[None, Some(8)]
        } else {
            &[None]
        };
        for &limit in limits {
            let mut rig = match SkinCapture::with_motion(&gpu.device, desc, limit, true) {
                Ok(r) => r,
                Err(e) => {
                    // Only a window holding a single bone refuses: motion
                    // halves it to none. The error says so.
                    let plain = SkinCapture::new(&gpu.device, desc, limit).expect("rig");
                    let msg = e.to_string();
                    assert!(
                        plain.path().capacity() == Some(1) && msg.contains("not one bone"),
                        "{} with motion: {msg}",
                        desc.name
                    );
                    eprintln!("{}: one bone per draw, none with motion: {msg}", desc.name);
                    refused += 1;
                    continue;
                }
            };
            let parts: Vec<usize> = cases
                .iter()
                .filter_map(|case| check_case(&mut rig, desc, case))
                .collect();
            let checked = parts.len();
            // Every path draws some of the cases (a windowed one
            // partitioned where it must; one whose halved window holds
            // fewer bones than a triangle needs refuses that mesh, above).
            assert!(checked >= 1, "{}: no case drawn", desc.name);
            partitioned += parts.iter().filter(|&&p| p > 1).count();
            eprintln!(
                "{} (capacity limit {limit:?}, {:?} bones per draw): motion ok, {checked} cases",
                desc.name,
                rig.path().capacity()
            );
        }
        served += 1;
    }
    assert!(paths().iter().any(|d| d.stage == Stage::Cpu));
    assert!(partitioned > 0, "no mesh was partitioned");
    eprintln!("{served} paths, {refused} refusals of a one-bone window");
    assert_eq!(served, paths().len());
    gpu.finish();
}

#[test]
fn a_path_without_motion_refuses_write_motion() {
    let gpu = GpuTest::new();
    let desc = paths()
        .iter()
        .find(|d| d.name.ends_with("ssbo") && d.stage == Stage::Vertex)
        .expect("an ssbo path");
    let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
    let case = trident_case(9);
    let mesh = &case.model.meshes[0];
    let hierarchy =
        PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).expect("hierarchy");
    let prepared = rig.prepare(mesh, &hierarchy).expect("prepare");
    let skin = &case.instances[0].0.skin[..];
    let err = rig
        .run_motion(&prepared, &[skin], &[&[]], &[Some((skin, &[]))])
        .expect_err("write_motion on a path without motion");
    assert!(err.to_string().contains("motion"), "{err}");
    drop(prepared);
    drop(rig);
    gpu.finish();
}
