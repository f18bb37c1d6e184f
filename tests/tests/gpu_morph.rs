//! Morph targets on every skinning path (storage x encoding x stage): the
//! GPU-captured positions and normals of procedural tubes with dozens of
//! targets (dense, mostly-zero, normal-only), 4 and 8 influences, and of a
//! tube with 300 targets of which 4 are active, against a reference that
//! morphs with plain loops written here (`base + sum w * delta`, normals
//! renormalised) and then runs the path's own CPU skinning job. Random
//! poses, random weights (some outside [0, 1], some zero). A partitioned
//! mesh on every windowed storage, and the refusals: deltas beyond a limit,
//! a wrong number of weights. All under validation with synchronization
//! validation; the log is checked after teardown.
#![cfg(feature = "gpu")]

use glam::Affine3A;
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::builtin::procedural;
use vkskin::assets::Model;
use vkskin::gpu::vk;
use vkskin::mesh::SkinnedMesh;
use vkskin::render::{OffscreenTarget, SkinCapture};
use vkskin::skin::{paths, PathDesc, SkinPath, SkinPathConfig, Stage};
use vkskin_tests::gpu::{
    diagonal, max_differences, normal_sensitivity, path_reference, GpuTest, PathRig,
};
use vkskin_tests::morph::{add_targets, few_weights, morphed_by_hand, random_weights};

/// Relative position tolerance (of the bounding-box diagonal) and absolute
/// tolerance on unit normals beyond their conditioning, as gpu_paths.rs.
const TOL: f32 = 1e-5;

struct Case {
    label: String,
    model: Model,
    /// One instance each: a palette and its weights.
    instances: Vec<(Vec<Affine3A>, Vec<f32>)>,
}

/// A 4-joint tube (`k` influences) with `targets` targets and `instances`
/// random poses with random weights.
fn tube_case(k: usize, targets: usize, instances: u64, seed: u64) -> Case {
    tube_case_of(4, k, targets, instances, seed)
}

/// [`tube_case`] over `joints` joints.
fn tube_case_of(joints: usize, k: usize, targets: usize, instances: u64, seed: u64) -> Case {
    let mut model = procedural::chain_cylinder(joints, k, seed).expect("tube");
    add_targets(&mut model.meshes[0], targets, seed * 31);
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

/// Checks the captured vertices of instance `i` against the reference.
fn check_instance(
    label: &str,
    desc: &PathDesc,
    mesh: &SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    skin: &[Affine3A],
    weights: &[f32],
    got: &[vkskin::skin::CapturedVertex],
) {
    let morphed = morphed_by_hand(mesh, weights);
    let (pos, nrm) = path_reference(desc, &morphed, hierarchy, skin);
    let diag = diagonal(&pos).max(1e-3);
    let sens = normal_sensitivity(desc, &morphed, hierarchy, skin, &nrm);
    let (dp, dn, worst) = max_differences(got, &pos, &nrm, &mesh.indices, &sens);
    assert!(
        dp <= TOL * diag && dn <= TOL,
        "{label} on {} (ref {}): position error {dp:e} (diag {diag}), normal error {dn:e}; \
         worst vertex {worst}: gpu {} cpu {}",
        desc.name,
        desc.reference(),
        got[worst].position(),
        pos[worst]
    );
    // The morph moved something: the comparison is not of the base mesh.
    if weights.iter().any(|&w| w != 0.0) {
        let (base, _) = path_reference(desc, mesh, hierarchy, skin);
        let moved = base
            .iter()
            .zip(&pos)
            .map(|(a, b)| (*a - *b).length())
            .fold(0.0f32, f32::max);
        assert!(
            moved > 100.0 * TOL * diag,
            "{label}: the targets moved nothing"
        );
    }
}

/// Runs `cases` through `rig`: every instance against the reference.
/// Returns the refusals' messages.
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
        assert_eq!(prepared.morph_targets(), mesh.morph.targets.len());
        let palettes: Vec<&[Affine3A]> = case.instances.iter().map(|i| i.0.as_slice()).collect();
        let weights: Vec<&[f32]> = case.instances.iter().map(|i| i.1.as_slice()).collect();
        let (captured, _) = rig
            .run_morphed(&prepared, &palettes, &weights)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", case.label, desc.name));
        let vc = mesh.positions.len();
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
        // `run` (no weights) draws a mesh with targets at all-zero weights.
        let (captured, _) = rig
            .run(&prepared, &palettes[..1])
            .unwrap_or_else(|e| panic!("{} unmorphed on {}: {e}", case.label, desc.name));
        let zeros = vec![0.0; mesh.morph.targets.len()];
        check_instance(
            &format!("{} without weights", case.label),
            desc,
            mesh,
            &hierarchy,
            palettes[0],
            &zeros,
            &captured[..vc],
        );
    }
    refused
}

#[test]
fn every_path_morphs_tubes_like_the_reference() {
    let gpu = GpuTest::new();
    let mut many = tube_case(4, 300, 2, 5);
    for (i, inst) in many.instances.iter_mut().enumerate() {
        inst.1 = few_weights(300, &[3, 77, 150 + i, 299], 40 + i as u64);
    }
    many.label = "tube k=4 targets=300 (4 active)".into();
    // One joint: fits every push palette (the others need up to 4 bones
    // per triangle, more than 4x3-push and dq-scale-push hold).
    let rigid = tube_case_of(1, 1, 12, 2, 4);
    let cases = [tube_case(4, 24, 3, 1), tube_case(8, 24, 2, 2), many, rigid];
    for case in &cases[..3] {
        assert!(case.model.meshes[0].positions.len() >= 200);
    }
    for desc in paths() {
        let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        let refused = check_cases(&mut rig, desc, &cases);
        for msg in &refused {
            // Only a push palette too small for a triangle's bones refuses.
            assert!(desc.name.ends_with("-push"), "{}: {msg}", desc.name);
            assert!(msg.contains("bones"), "{msg}");
        }
        assert!(refused.len() < cases.len(), "{} served no case", desc.name);
        eprintln!(
            "{}: {} of {} morph cases served",
            desc.name,
            cases.len() - refused.len(),
            cases.len()
        );
    }
    gpu.finish();
}

/// `SkinPath::batch_active`: the 300-target tube with 4 non-zero weights
/// per instance reserves 4 entries an instance on every GPU path (`batch`
/// reserves 300) and draws like the reference; an instance with more
/// non-zero weights than reserved is refused, naming the reservation.
#[test]
fn a_batch_reserves_only_the_active_targets() {
    let gpu = GpuTest::new();
    let mut case = tube_case(4, 300, 3, 5);
    for (i, inst) in case.instances.iter_mut().enumerate() {
        inst.1 = few_weights(300, &[3, 77, 150 + i, 299], 40 + i as u64);
    }
    let mesh = &case.model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).unwrap();
    let vc = mesh.positions.len();
    let n = case.instances.len();
    let five = few_weights(300, &[1, 2, 3, 4, 5], 9);
    let mut served = 0;
    for desc in paths() {
        if desc.stage == Stage::Cpu {
            continue;
        }
        let mut rig = match PathRig::new(
            &gpu,
            desc,
            &case.model,
            0,
            vk::PolygonMode::FILL,
            true,
            None,
            1,
            16,
        ) {
            Ok(r) => r,
            Err(e) => {
                assert!(desc.name.ends_with("-push"), "{}: {e}", desc.name);
                continue;
            }
        };
        let mut reserved = [0; 2];
        rig.draw_with(&gpu, n, false, |w| {
            reserved[0] = w.morph_entries_reserved();
            w.write_all(|i| (case.instances[i].0.as_slice(), Affine3A::IDENTITY, [1.0; 4]))
                .expect("write");
        });
        let got = rig.draw_active(&gpu, n, 4, false, |w| {
            reserved[1] = w.morph_entries_reserved();
            w.write_all_morphed(|i| {
                let inst = &case.instances[i];
                (
                    inst.0.as_slice(),
                    inst.1.as_slice(),
                    Affine3A::IDENTITY,
                    [1.0; 4],
                )
            })
            .expect("write");
        });
        assert_eq!(reserved, [300 * n, 4 * n], "{}", desc.name);
        for (i, (skin, w)) in case.instances.iter().enumerate() {
            check_instance(
                &format!("{}: batch_active instance {i}", desc.name),
                desc,
                mesh,
                &hierarchy,
                skin,
                w,
                &got[i * vc..(i + 1) * vc],
            );
        }
        // Five non-zero weights in a batch reserving four: refused; the
        // instances are then written without weights (a valid frame).
        rig.draw_active(&gpu, n, 4, false, |w| {
            let e = w
                .write_all_morphed(|i| {
                    (
                        case.instances[i].0.as_slice(),
                        five.as_slice(),
                        Affine3A::IDENTITY,
                        [1.0; 4],
                    )
                })
                .expect_err("five active in four entries");
            assert!(e.to_string().contains("batch_active"), "{e}");
            w.write_all(|i| (case.instances[i].0.as_slice(), Affine3A::IDENTITY, [1.0; 4]))
                .expect("write");
        });
        rig.wait_all();
        served += 1;
    }
    assert!(served > 0);
    gpu.finish();
}

/// A second batch in the frame reads its own headers and entries (its
/// records and entries start past the first batch's), with two frames in
/// flight, each slot drawn twice.
#[test]
fn a_second_batch_in_a_frame_reads_its_own_weights() {
    let gpu = GpuTest::new();
    let case = tube_case_of(2, 4, 16, 2, 6);
    let mesh = &case.model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).unwrap();
    let lead_weights = random_weights(16, 77);
    let vc = mesh.positions.len();
    for desc in paths() {
        let mut rig = match PathRig::new(
            &gpu,
            desc,
            &case.model,
            0,
            vk::PolygonMode::FILL,
            true,
            None,
            2,
            16,
        ) {
            Ok(r) => r,
            Err(e) => {
                assert!(desc.name.ends_with("-push"), "{}: {e}", desc.name);
                continue;
            }
        };
        for round in 0..4 {
            // The lead batch: three instances of other weights, bigger than
            // the second batch so that the frame's buffers grow meanwhile.
            let lead = 3 + round;
            let got = rig.draw_behind(
                &gpu,
                lead,
                |w| {
                    w.write_all_morphed(|_| {
                        (
                            case.instances[0].0.as_slice(),
                            lead_weights.as_slice(),
                            Affine3A::IDENTITY,
                            [1.0; 4],
                        )
                    })
                    .expect("lead");
                },
                2,
                |w| {
                    w.write_all_morphed(|i| {
                        let inst = &case.instances[(i + round) % 2];
                        (
                            inst.0.as_slice(),
                            inst.1.as_slice(),
                            Affine3A::IDENTITY,
                            [1.0; 4],
                        )
                    })
                    .expect("write");
                },
            );
            for i in 0..2 {
                let (skin, w) = &case.instances[(i + round) % 2];
                check_instance(
                    &format!("second batch, round {round}, instance {i}"),
                    desc,
                    mesh,
                    &hierarchy,
                    skin,
                    w,
                    &got[i * vc..(i + 1) * vc],
                );
            }
        }
        rig.wait_all();
    }
    gpu.finish();
}

#[test]
fn a_partitioned_mesh_morphs_on_every_windowed_storage() {
    let gpu = GpuTest::new();
    let mut model = procedural::many_joints(64).expect("64 joints");
    add_targets(&mut model.meshes[0], 12, 9);
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
        assert!(
            prepared.parts().len() >= 64 / 16,
            "{}: {} partitions",
            desc.name,
            prepared.parts().len()
        );
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
        eprintln!(
            "{}: {} partitions morphed",
            desc.name,
            prepared.parts().len()
        );
    }
    assert!(windowed > 0, "no windowed storage served the chain");
    gpu.finish();
}

#[test]
fn deltas_beyond_the_limit_and_wrong_weights_are_refused() {
    let gpu = GpuTest::new();
    let case = tube_case(4, 24, 1, 3);
    let mesh = &case.model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&case.model.skins[0], &case.model.skeleton).unwrap();
    for desc in paths() {
        let mut cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            1,
        );
        cfg.morph_bytes_limit = Some(4096);
        let mut path = SkinPath::new(&gpu.device, desc, cfg).expect("path");
        match path.prepare(mesh, &hierarchy) {
            // The CPU stage uploads no deltas.
            Ok(_) => assert_eq!(desc.stage, Stage::Cpu, "{} took the deltas", desc.name),
            Err(e) => {
                let msg = e.to_string();
                if desc.name.ends_with("-push") && msg.contains("needs") {
                    continue;
                }
                assert!(
                    msg.contains("morph_bytes_limit")
                        && msg.contains("4096")
                        && msg.contains("24 morph targets")
                        && msg.contains("\"chain_cylinder\"")
                        && msg.contains(desc.name),
                    "{}: {msg}",
                    desc.name
                );
            }
        }
    }
    // A wrong number of weights is an error, not a draw, on each stage.
    for stage in [Stage::Vertex, Stage::Compute, Stage::Cpu] {
        let desc = paths()
            .iter()
            .find(|d| d.stage == stage && !d.name.ends_with("-push"))
            .expect("a path of the stage");
        let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        let prepared = rig.prepare(mesh, &hierarchy).expect("prepare");
        let skin = case.instances[0].0.as_slice();
        let err = rig
            .run_morphed(&prepared, &[skin], &[&[0.5; 23]])
            .expect_err("23 weights for 24 targets");
        assert!(
            err.to_string().contains("23 morph weights"),
            "{}: {err}",
            desc.name
        );
        let err = rig
            .run_morphed(&prepared, &[skin], &[&[f32::NAN; 24]])
            .expect_err("NaN weights");
        assert!(
            err.to_string().contains("weight NaN"),
            "{}: {err}",
            desc.name
        );
        // Its sets name this rig's frame slots: another path of the same
        // name refuses it (the CPU stage holds no sets).
        let mut other = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        match other.run(&prepared, &[skin]) {
            Ok(_) => assert_eq!(stage, Stage::Cpu, "{} drew another path's mesh", desc.name),
            Err(e) => assert!(e.to_string().contains("another SkinPath"), "{e}"),
        }
    }
    gpu.finish();
}
