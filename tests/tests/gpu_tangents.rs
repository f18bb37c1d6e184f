//! Tangents on every skinning path (storage x encoding x stage): the
//! GPU-captured tangents of procedural tubes with tangents and morph
//! targets (some with TANGENT deltas, some without, one NORMAL only), 4 and
//! 8 influences, random poses and weights (some outside [0, 1]), against a
//! reference that morphs the tangents with plain loops written here
//! (`xyz + sum w * delta`, renormalised, `w` kept) and then runs the path's
//! own CPU tangent job (`TangentSkinningJob` with the encoding's blend).
//! The vertex stage captures its skinned tangent, the compute and CPU
//! stages the tangent region of their output (read back through the plain
//! pipeline's stream). A mesh without tangents keeps its vertex layout and
//! output. All under validation with synchronization validation; the log
//! is checked after teardown.
#![cfg(feature = "gpu")]

use glam::{Affine3A, Vec3, Vec4};
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::builtin::procedural;
use vkskin::assets::Model;
use vkskin::gpu::vk;
use vkskin::mesh::SkinnedMesh;
use vkskin::render::{OffscreenTarget, SkinCapture};
use vkskin::skin::{paths, CapturedVertex, CpuTangents, PathDesc, SkinPath, SkinPathConfig, Stage};
use vkskin_tests::gpu::{
    diagonal, max_differences, normal_sensitivity, path_reference, perturbed_palettes, GpuTest,
};
use vkskin_tests::morph::{add_targets, morphed_by_hand, random_weights, Rng};

/// Relative position tolerance (of the bounding-box diagonal) and absolute
/// tolerance on unit normals and tangents beyond their conditioning.
const TOL: f32 = 1e-5;

struct Case {
    label: String,
    model: Model,
    /// One instance each: a palette and its weights.
    instances: Vec<(Vec<Affine3A>, Vec<f32>)>,
}

/// Gives `mesh` unit tangents in its surface (perpendicular to the normal,
/// turned by a random angle about it) with a random handedness, and to
/// every third target (never target 1, the normal-only one) random tangent
/// deltas.
fn add_tangents(mesh: &mut SkinnedMesh, seed: u64) {
    let mut rng = Rng(seed);
    mesh.tangents = mesh
        .normals
        .iter()
        .map(|n| {
            let a = n.any_orthonormal_vector();
            let b = n.cross(a);
            let angle = rng.range(0.0, std::f32::consts::TAU);
            let t = a * angle.cos() + b * angle.sin();
            let w = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
            t.extend(w)
        })
        .collect();
    let n = mesh.positions.len();
    for (i, target) in mesh.morph.targets.iter_mut().enumerate() {
        if i != 1 && i % 3 == 0 {
            target.tangents = (0..n).map(|_| rng.vec3(0.5)).collect();
        }
    }
}

/// A `joints`-joint tube (`k` influences) with tangents, `targets` targets
/// and `instances` random poses with random weights.
fn tube_case(joints: usize, k: usize, targets: usize, instances: u64, seed: u64) -> Case {
    let mut model = procedural::chain_cylinder(joints, k, seed).expect("tube");
    add_targets(&mut model.meshes[0], targets, seed * 31);
    add_tangents(&mut model.meshes[0], seed * 17);
    let instances = (0..instances)
        .map(|i| {
            let pose = procedural::random_pose(&model.skeleton, seed * 7 + i, i % 2 == 1);
            let skin = model.skin_matrices(&pose).expect("skin")[0].clone();
            (skin, random_weights(targets, seed * 13 + i))
        })
        .collect();
    Case {
        label: format!("tube joints={joints} k={k} targets={targets}"),
        model,
        instances,
    }
}

/// The mesh's bind tangents morphed by `weights` with plain loops
/// (independent of `MorphJob`): every target's tangent deltas scaled and
/// summed onto `xyz`, renormalised (zero stays zero), `w` kept.
fn tangents_by_hand(mesh: &SkinnedMesh, weights: &[f32]) -> Vec<Vec4> {
    let mut out = mesh.tangents.clone();
    for (t, target) in mesh.morph.targets.iter().enumerate() {
        for (o, d) in out.iter_mut().zip(&target.tangents) {
            o.x += d.x * weights[t];
            o.y += d.y * weights[t];
            o.z += d.z * weights[t];
        }
    }
    for o in &mut out {
        let len = (o.x * o.x + o.y * o.y + o.z * o.z).sqrt();
        if len > 0.0 {
            (o.x, o.y, o.z) = (o.x / len, o.y / len, o.z / len);
        } else {
            (o.x, o.y, o.z) = (0.0, 0.0, 0.0);
        }
    }
    out
}

/// The path's CPU tangent job on `tangents` (morphed bind tangents).
fn tangent_reference(
    desc: &PathDesc,
    mesh: &SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    skin: &[Affine3A],
    tangents: &[Vec4],
) -> Vec<Vec4> {
    let mut out = vec![Vec4::ZERO; tangents.len()];
    desc.encoding
        .skin_tangents_cpu(
            skin,
            hierarchy,
            CpuTangents {
                per_vertex: mesh.influences.per_vertex,
                joints: &mesh.influences.joints,
                weights: &mesh.influences.weights,
                tangents,
                out_tangents: &mut out,
            },
        )
        .expect("CPU tangent job");
    out
}

/// How far each reference tangent moves when every palette entry is
/// perturbed by about 2^-20 relative (as `normal_sensitivity`): a tangent
/// of a nearly singular blend is ill-conditioned, and float rounding alone
/// moves it by this much times 2^-20 / 2^-24.
fn tangent_sensitivity(
    desc: &PathDesc,
    mesh: &SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    skin: &[Affine3A],
    tangents: &[Vec4],
    reference: &[Vec4],
) -> Vec<f32> {
    let mut sens = vec![0.0f32; reference.len()];
    for perturbed in perturbed_palettes(skin) {
        let t2 = tangent_reference(desc, mesh, hierarchy, &perturbed, tangents);
        for (s, (a, b)) in sens.iter_mut().zip(reference.iter().zip(&t2)) {
            *s = s.max((a.truncate() - b.truncate()).length());
        }
    }
    sens
}

/// Checks instance `got`'s captured tangents (and positions and normals:
/// the tangent permutation must not disturb them) against the reference.
#[allow(clippy::too_many_arguments)]
fn check_instance(
    label: &str,
    desc: &PathDesc,
    mesh: &SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    skin: &[Affine3A],
    weights: &[f32],
    got: &[CapturedVertex],
) {
    let morphed = morphed_by_hand(mesh, weights);
    let (pos, nrm) = path_reference(desc, &morphed, hierarchy, skin);
    let diag = diagonal(&pos).max(1e-3);
    let sens = normal_sensitivity(desc, &morphed, hierarchy, skin, &nrm);
    let (dp, dn, worst) = max_differences(got, &pos, &nrm, &mesh.indices, &sens);
    assert!(
        dp <= TOL * diag && dn <= TOL,
        "{label} on {}: position error {dp:e} (diag {diag}), normal error {dn:e}, vertex {worst}",
        desc.name
    );
    let bind = tangents_by_hand(mesh, weights);
    let tan = tangent_reference(desc, mesh, hierarchy, skin, &bind);
    let tsens = tangent_sensitivity(desc, mesh, hierarchy, skin, &bind, &tan);
    let mut used = vec![false; tan.len()];
    for &i in &mesh.indices {
        used[i as usize] = true;
    }
    let (mut dt, mut worst) = (0.0f32, 0);
    for v in (0..tan.len()).filter(|&v| used[v]) {
        let g = got[v].tangent();
        assert_eq!(
            g.w, tan[v].w,
            "{label} on {}: vertex {v}'s handedness {} (cpu {})",
            desc.name, g.w, tan[v].w
        );
        let e = ((g.truncate() - tan[v].truncate()).length() - 2.0 * tsens[v]).max(0.0);
        if e.is_nan() || e > dt {
            dt = e;
            worst = v;
        }
    }
    assert!(
        dt <= TOL,
        "{label} on {} (ref {}): tangent error {dt:e}; worst vertex {worst}: gpu {} cpu {}",
        desc.name,
        desc.reference(),
        got[worst].tangent(),
        tan[worst]
    );
    // The tangent deltas moved something: not a comparison of bind tangents.
    if weights
        .iter()
        .enumerate()
        .any(|(t, &w)| w != 0.0 && !mesh.morph.targets[t].tangents.is_empty())
    {
        let unmorphed = tangent_reference(desc, mesh, hierarchy, skin, &mesh.tangents);
        let moved = unmorphed
            .iter()
            .zip(&tan)
            .map(|(a, b)| (a.truncate() - b.truncate()).length())
            .fold(0.0f32, f32::max);
        assert!(moved > 0.01, "{label}: the tangent deltas moved nothing");
    }
}

/// Runs `cases` through `rig`, every instance against the reference, and
/// once without weights. Returns the refusals' messages.
fn check_cases(rig: &mut SkinCapture, desc: &PathDesc, cases: &[Case]) -> Vec<String> {
    let mut refused = Vec::new();
    for case in cases {
        let mesh = &case.model.meshes[0];
        let hierarchy =
            PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).expect("hierarchy");
        let prepared = match rig.prepare(mesh, &hierarchy) {
            Ok(p) => p,
            Err(e) => {
                refused.push(format!("{}: {e}", case.label));
                continue;
            }
        };
        assert!(prepared.has_tangents(), "{}", case.label);
        let palettes: Vec<&[Affine3A]> = case.instances.iter().map(|i| i.0.as_slice()).collect();
        let weights: Vec<&[f32]> = case.instances.iter().map(|i| i.1.as_slice()).collect();
        let vc = mesh.positions.len();
        let captured = if mesh.morph.targets.is_empty() {
            rig.run(&prepared, &palettes)
        } else {
            rig.run_morphed(&prepared, &palettes, &weights)
        }
        .unwrap_or_else(|e| panic!("{} on {}: {e}", case.label, desc.name))
        .0;
        assert_eq!(captured.len(), vc * palettes.len());
        for (i, (skin, w)) in case.instances.iter().enumerate() {
            check_instance(
                &format!("{} instance {i}", case.label),
                desc,
                mesh,
                &hierarchy,
                skin,
                w,
                &captured[i * vc..(i + 1) * vc],
            );
        }
    }
    refused
}

/// A tube with tangents but no morph targets (the TANGENTS permutation
/// without MORPH).
fn unmorphed_case(k: usize, seed: u64) -> Case {
    let mut case = tube_case(4, k, 0, 2, seed);
    case.label = format!("tube k={k} without targets");
    case
}

/// A tube with tangents and targets of which none moves tangents (two
/// texels per delta, the tangents only renormalised by the morph).
fn no_tangent_deltas_case(seed: u64) -> Case {
    let mut case = tube_case(4, 4, 6, 2, seed);
    for t in &mut case.model.meshes[0].morph.targets {
        t.tangents.clear();
    }
    case.label = "tube k=4 targets=6 without tangent deltas".into();
    case
}

#[test]
fn every_path_skins_tangents_like_the_reference() {
    let gpu = GpuTest::new();
    // One joint: fits every push palette.
    let rigid = tube_case(1, 1, 12, 2, 4);
    let cases = [
        tube_case(4, 4, 24, 3, 1),
        tube_case(4, 8, 24, 2, 2),
        unmorphed_case(4, 3),
        no_tangent_deltas_case(11),
        rigid,
    ];
    for case in &cases[..4] {
        assert!(case.model.meshes[0].positions.len() >= 200);
    }
    let mut served = 0;
    for desc in paths() {
        let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        let refused = check_cases(&mut rig, desc, &cases);
        for msg in &refused {
            // Only a push palette too small for a triangle's bones refuses.
            assert!(desc.name.ends_with("-push"), "{}: {msg}", desc.name);
            assert!(msg.contains("bones"), "{msg}");
        }
        assert!(refused.len() < cases.len(), "{} served no case", desc.name);
        served += 1;
        eprintln!(
            "{}: {} of {} tangent cases served",
            desc.name,
            cases.len() - refused.len(),
            cases.len()
        );
    }
    assert_eq!(served, paths().len());
    for stage in [Stage::Vertex, Stage::Compute, Stage::Cpu] {
        assert!(paths().iter().any(|d| d.stage == stage), "{stage:?}");
    }
    gpu.finish();
}

/// Partitioned meshes duplicate vertices: the tangent stream and its
/// deltas follow the GPU vertices on every windowed storage.
#[test]
fn a_partitioned_mesh_skins_tangents_on_every_windowed_storage() {
    let gpu = GpuTest::new();
    let mut model = procedural::many_joints(64).expect("64 joints");
    add_targets(&mut model.meshes[0], 12, 9);
    add_tangents(&mut model.meshes[0], 10);
    let mesh = &model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
    let instances: Vec<(Vec<Affine3A>, Vec<f32>)> = (0..2u64)
        .map(|i| {
            let pose = procedural::random_pose(&model.skeleton, 70 + i, false);
            let skin = model.skin_matrices(&pose).expect("skin")[0].clone();
            (skin, random_weights(12, 90 + i))
        })
        .collect();
    let mut windowed = 0;
    for desc in paths().iter().filter(|d| d.partitions()) {
        let mut rig = SkinCapture::new(&gpu.device, desc, Some(16)).expect("rig");
        let prepared = match rig.prepare(mesh, &hierarchy) {
            Ok(p) => p,
            Err(e) => {
                let cap = rig.path().capacity();
                assert!(
                    cap.is_some_and(|c| c < procedural::MANY_JOINTS_BONES_PER_TRIANGLE),
                    "{}: {e}",
                    desc.name
                );
                continue;
            }
        };
        assert!(prepared.gpu_vertex_count() > prepared.vertex_count());
        let palettes: Vec<&[Affine3A]> = instances.iter().map(|i| i.0.as_slice()).collect();
        let weights: Vec<&[f32]> = instances.iter().map(|i| i.1.as_slice()).collect();
        let (captured, _) = rig
            .run_morphed(&prepared, &palettes, &weights)
            .unwrap_or_else(|e| panic!("{}: {e}", desc.name));
        let vc = mesh.positions.len();
        for (i, (skin, w)) in instances.iter().enumerate() {
            check_instance(
                &format!("partitioned chain64 instance {i}"),
                desc,
                mesh,
                &hierarchy,
                skin,
                w,
                &captured[i * vc..(i + 1) * vc],
            );
        }
        windowed += 1;
    }
    assert!(windowed > 0, "no windowed storage served the chain");
    gpu.finish();
}

/// With motion vectors on (MOTION with TANGENTS and MORPH), the tangents
/// are still the current pose's.
#[test]
fn tangents_with_motion_vectors_are_the_current_pose() {
    let gpu = GpuTest::new();
    let case = tube_case(2, 4, 9, 2, 12);
    let mesh = &case.model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).unwrap();
    let vc = mesh.positions.len();
    for desc in paths() {
        // A push palette may not hold a bone twice (current and previous).
        let mut rig = match SkinCapture::with_motion(&gpu.device, desc, None, true) {
            Ok(r) => r,
            Err(e) => {
                assert!(desc.name.ends_with("-push"), "{}: {e}", desc.name);
                continue;
            }
        };
        let prepared = match rig.prepare(mesh, &hierarchy) {
            Ok(p) => p,
            Err(e) => {
                assert!(desc.name.ends_with("-push"), "{}: {e}", desc.name);
                continue;
            }
        };
        let palettes: Vec<&[Affine3A]> = case.instances.iter().map(|i| i.0.as_slice()).collect();
        let weights: Vec<&[f32]> = case.instances.iter().map(|i| i.1.as_slice()).collect();
        // Each instance's previous pose is the other's.
        let previous: Vec<Option<(&[Affine3A], &[f32])>> = (0..2)
            .map(|i| Some((palettes[1 - i], weights[1 - i])))
            .collect();
        let (captured, _) = rig
            .run_motion(&prepared, &palettes, &weights, &previous)
            .unwrap_or_else(|e| panic!("{}: {e}", desc.name));
        for (i, (skin, w)) in case.instances.iter().enumerate() {
            check_instance(
                &format!("motion instance {i}"),
                desc,
                mesh,
                &hierarchy,
                skin,
                w,
                &captured[i * vc..(i + 1) * vc],
            );
        }
    }
    gpu.finish();
}

/// A mesh without tangents: no tangent stream, attribute or output, the
/// vertex layout it had before tangents existed, and a zero captured
/// tangent; the tangent permutation's layout is that plus stream 8.
#[test]
fn a_mesh_without_tangents_keeps_its_vertex_layout() {
    let gpu = GpuTest::new();
    assert_eq!(std::mem::size_of::<vkskin::skin::BaseVertex>(), 32);
    assert_eq!(std::mem::size_of::<vkskin::skin::InfluenceVertex>(), 24);
    // One joint (four slots): fits every push palette.
    let model = procedural::chain_cylinder(1, 4, 5).expect("tube");
    let mesh = &model.meshes[0];
    assert!(mesh.tangents.is_empty());
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
    let pose = procedural::random_pose(&model.skeleton, 3, false);
    let skin = model.skin_matrices(&pose).expect("skin")[0].clone();
    for desc in paths() {
        let cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            1,
        );
        let mut path = SkinPath::new(&gpu.device, desc, cfg).expect("path");
        let prepared = path.prepare(mesh, &hierarchy).expect("prepare");
        assert!(!prepared.has_tangents());
        if desc.stage == Stage::Vertex {
            // The layout before tangents: bindings 0, 1, 3, 7 and locations
            // 0-4, 7-10, 13 (4 influences), each with its format.
            let route = path.host_vertex_route(4, false).expect("route");
            let bindings: Vec<(u32, u32)> = route
                .vertex_bindings
                .iter()
                .map(|b| (b.binding, b.stride))
                .collect();
            let mut expected = vec![(0, 32), (1, 24), (7, 16), (3, 64)];
            assert_eq!(bindings, expected, "{}", desc.name);
            let attrs: Vec<(u32, u32, vk::Format, u32)> = route
                .vertex_attributes
                .iter()
                .map(|a| (a.location, a.binding, a.format, a.offset))
                .collect();
            let f3 = vk::Format::R32G32B32_SFLOAT;
            let f4 = vk::Format::R32G32B32A32_SFLOAT;
            let mut expected_attrs = vec![
                (0, 0, f3, 0),
                (1, 0, f3, 12),
                (2, 0, vk::Format::R32G32_SFLOAT, 24),
                (3, 1, vk::Format::R16G16B16A16_UINT, 0),
                (4, 1, f4, 8),
                (13, 7, f4, 0),
                (7, 3, f4, 0),
                (8, 3, f4, 16),
                (9, 3, f4, 32),
                (10, 3, f4, 48),
            ];
            assert_eq!(attrs, expected_attrs, "{}", desc.name);
            assert!(!route.header.contains("TANGENTS"));
            // The tangent permutation adds stream 8 at location 14, only.
            let with = path.host_vertex_route_with(4, false, true).expect("route");
            expected.insert(3, (8, 16));
            expected_attrs.insert(6, (14, 8, f4, 0));
            let bindings: Vec<(u32, u32)> = with
                .vertex_bindings
                .iter()
                .map(|b| (b.binding, b.stride))
                .collect();
            let attrs: Vec<(u32, u32, vk::Format, u32)> = with
                .vertex_attributes
                .iter()
                .map(|a| (a.location, a.binding, a.format, a.offset))
                .collect();
            assert_eq!(bindings, expected, "{}", desc.name);
            assert_eq!(attrs, expected_attrs, "{}", desc.name);
            assert!(with.header.contains("#define TANGENTS 1"));
        } else {
            // No tangent region in the output of a mesh without tangents.
            path.begin_frame(0).expect("begin");
            let mut w = path.batch(0, &prepared, 1).expect("batch");
            let batch = w.batch();
            w.write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, [1.0; 4]))
                .expect("write");
            let out = path.skinned_output(0, &batch, &prepared).expect("output");
            assert_eq!(out.tangent_format, None, "{}", desc.name);
            assert_eq!(out.tangents_at(0), None, "{}", desc.name);
        }
        drop(prepared);
        drop(path);
    }
    // The capture of a mesh without tangents leaves the tangent zero.
    let desc = paths()
        .iter()
        .find(|d| d.stage == Stage::Vertex)
        .expect("a vertex path");
    let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
    let got = rig.run_mesh(mesh, &hierarchy, &skin).expect("run");
    assert!(got.iter().all(|v| v.tangent == [0.0; 4]));
    assert!(got.iter().any(|v| v.position() != Vec3::ZERO));
    drop(rig);
    gpu.finish();
}

/// The compute route of a mesh with tangents names the tangent region:
/// after the others, 16 bytes a vertex, instance-major.
#[test]
fn the_skinned_output_names_the_tangent_region() {
    let gpu = GpuTest::new();
    let case = tube_case(2, 4, 0, 1, 8);
    let mesh = &case.model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).unwrap();
    let skin = &case.instances[0].0;
    for desc in paths().iter().filter(|d| d.stage != Stage::Vertex) {
        for motion in [false, true] {
            let mut cfg = SkinPathConfig::new(
                OffscreenTarget::COLOR_FORMAT,
                OffscreenTarget::DEPTH_FORMAT,
                1,
            );
            cfg.motion = motion;
            let mut path = SkinPath::new(&gpu.device, desc, cfg).expect("path");
            let prepared = path.prepare(mesh, &hierarchy).expect("prepare");
            assert!(prepared.has_tangents());
            path.begin_frame(0).expect("begin");
            let mut w = path.batch(0, &prepared, 3).expect("batch");
            let batch = w.batch();
            w.write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, [1.0; 4]))
                .expect("write");
            let out = path.skinned_output(0, &batch, &prepared).expect("output");
            assert_eq!(out.tangent_format, Some(vk::Format::R32G32B32A32_SFLOAT));
            assert_eq!(out.tangent_stride, 16);
            let t0 = out.tangents_at(0).expect("tangents");
            let regions = if motion { 4 } else { 2 };
            let region = out.normals_offset - out.positions_offset;
            assert_eq!(t0, regions * region, "{}", desc.name);
            let vc = u64::from(out.vertex_count);
            assert_eq!(out.tangents_at(2), Some(t0 + 2 * vc * 16));
            drop(prepared);
            drop(path);
        }
    }
    gpu.finish();
}
