//! Every skinning path (storage x encoding x stage) against its own CPU job:
//! GPU-captured positions and normals of the trident, a random 64-joint
//! cylinder (1, 2, 4, 8 influences; non-uniform scale), a 300-joint chain
//! (partitioned by forced small capacities) and the shared assets, each
//! within 1e-5 of the bounding-box diagonal. All under validation with
//! synchronization validation; the log is checked after teardown.
#![cfg(feature = "gpu")]

use glam::Affine3A;
use vkskin::anim::{PaletteHierarchy, PlaybackMode};
use vkskin::assets::builtin::{procedural, Trident};
use vkskin::assets::{LoadOptions, Model};
use vkskin::render::SkinCapture;
use vkskin::skin::{paths, PathDesc, Stage};
use vkskin_tests::gpu::{
    diagonal, max_differences, normal_sensitivity, path_reference, trident_skin, GpuTest,
};

/// Relative position tolerance (of the bounding-box diagonal) and absolute
/// tolerance on unit normals, beyond what the normal's own conditioning
/// explains (`normal_sensitivity`).
const TOL: f32 = 1e-5;

struct Case<'a> {
    label: String,
    model: &'a Model,
    mesh: usize,
    /// One palette per instance: every instance is compared.
    palettes: Vec<Vec<Affine3A>>,
}

/// Runs every case through `rig` (one batch of instances each) and checks
/// each instance against the path's CPU job. Returns how many meshes the
/// path refused (with the refusals' messages checked by the caller).
fn check_cases(rig: &mut SkinCapture, desc: &PathDesc, cases: &[Case<'_>]) -> Vec<String> {
    let mut refused = Vec::new();
    for case in cases {
        let mesh = &case.model.meshes[case.mesh];
        let hierarchy = PaletteHierarchy::new(&case.model.skins[mesh.skin], &case.model.skeleton)
            .expect("hierarchy");
        let prepared = match rig.prepare(mesh, &hierarchy) {
            Ok(p) => p,
            Err(e) => {
                refused.push(format!("{}: {e}", case.label));
                continue;
            }
        };
        let palettes: Vec<&[Affine3A]> = case.palettes.iter().map(|p| p.as_slice()).collect();
        let (captured, _report) = rig
            .run(&prepared, &palettes)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", case.label, desc.name));
        let vc = mesh.positions.len();
        assert_eq!(captured.len(), vc * palettes.len());
        for (i, skin) in palettes.iter().enumerate() {
            let (pos, nrm) = path_reference(desc, mesh, &hierarchy, skin);
            let diag = diagonal(&pos).max(1e-3);
            let got = &captured[i * vc..(i + 1) * vc];
            let sens = normal_sensitivity(desc, mesh, &hierarchy, skin, &nrm);
            let (dp, dn, worst) = max_differences(got, &pos, &nrm, &mesh.indices, &sens);
            assert!(
                dp <= TOL * diag && dn <= TOL,
                "{} instance {i} on {} (ref {}): position error {dp:e} (diag {diag}), \
                 normal error {dn:e}; worst vertex {worst}: gpu {} cpu {}",
                case.label,
                desc.name,
                desc.reference(),
                got[worst].position(),
                pos[worst]
            );
        }
    }
    refused
}

fn palettes_of(
    model: &Model,
    mesh: usize,
    poses: &[Vec<vkskin::anim::Transform>],
) -> Vec<Vec<Affine3A>> {
    poses
        .iter()
        .map(|locals| {
            model.skin_matrices(locals).expect("skin matrices")[model.meshes[mesh].skin].clone()
        })
        .collect()
}

#[test]
fn every_path_matches_its_cpu_job_on_the_trident() {
    let gpu = GpuTest::new();
    let model = Trident::model();
    let palettes: Vec<Vec<Affine3A>> = [0.0f32, 0.37, 1.0, 2.5]
        .iter()
        .map(|&t| trident_skin(&model, Some(t)).1)
        .collect();
    let cases = [Case {
        label: "trident".into(),
        model: &model,
        mesh: 0,
        palettes,
    }];
    for desc in paths() {
        let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        let refused = check_cases(&mut rig, desc, &cases);
        let cap = desc.capacity(&gpu.device);
        match refused.first() {
            // Only a push palette smaller than a triangle's bones may refuse
            // (on 128 bytes: 4x3 holds two bones, dq-scale one), and it
            // says which mesh, which path and the limit.
            Some(msg) => {
                assert!(
                    desc.name.ends_with("-push") && cap.is_some_and(|c| c < 4),
                    "{} refused the trident: {msg}",
                    desc.name
                );
                assert!(
                    msg.to_lowercase().contains("\"trident\"")
                        && msg.contains(desc.name)
                        && msg.contains("bones"),
                    "{msg}"
                );
                eprintln!("{}: refused as expected: {msg}", desc.name);
            }
            None => eprintln!("{}: trident ok (capacity {cap:?})", desc.name),
        }
    }
    gpu.finish();
}

#[test]
fn every_path_and_influence_count_matches_on_a_random_64_joint_cylinder() {
    let gpu = GpuTest::new();
    let models: Vec<(usize, Model)> = [1usize, 2, 4, 8]
        .iter()
        .map(|&k| {
            (
                k,
                procedural::chain_cylinder(64, k, 7 + k as u64).expect("cylinder"),
            )
        })
        .collect();
    let cases: Vec<Case<'_>> = models
        .iter()
        .map(|(k, m)| {
            let poses: Vec<_> = (0..3u64)
                .map(|s| procedural::random_pose(&m.skeleton, 100 + s, s != 0))
                .collect();
            Case {
                label: format!("cylinder64 k={k}"),
                model: m,
                mesh: 0,
                palettes: palettes_of(m, 0, &poses),
            }
        })
        .collect();
    for desc in paths() {
        let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        let refused = check_cases(&mut rig, desc, &cases);
        for msg in &refused {
            // Triangles of random influences need many bones: only the
            // push storage may be too small.
            assert!(desc.name.ends_with("-push"), "{}: {msg}", desc.name);
            assert!(msg.contains("needs") && msg.contains("fit"), "{msg}");
        }
        eprintln!("{}: {} of 4 cylinders refused", desc.name, refused.len());
    }
    gpu.finish();
}

#[test]
fn a_300_joint_chain_is_partitioned_where_the_window_is_small_and_whole_elsewhere() {
    let gpu = GpuTest::new();
    let model = procedural::many_joints(300).expect("300 joints");
    let clip = model.clip("wave").expect("wave clip");
    let poses: Vec<_> = [0.3f32, 1.1]
        .iter()
        .map(|&t| model.pose(Some(clip), t, PlaybackMode::Loop).expect("pose"))
        // Non-uniform scale compounds over 300 joints into 1e5 coordinates;
        // the 64-joint cylinder covers it.
        .chain(std::iter::once(procedural::random_pose(
            &model.skeleton,
            5,
            false,
        )))
        .collect();
    let cases = [Case {
        label: "chain300".into(),
        model: &model,
        mesh: 0,
        palettes: palettes_of(&model, 0, &poses),
    }];
    let mesh = &model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
    for desc in paths() {
        // Windowed storages get a small window (16 bones): partitions.
        let limit = desc.partitions().then_some(16);
        let mut rig = SkinCapture::new(&gpu.device, desc, limit).expect("rig");
        let refused = check_cases(&mut rig, desc, &cases);
        let cap = rig.path().capacity();
        if refused.is_empty() {
            let parts = rig.prepare(mesh, &hierarchy).unwrap().parts().len();
            match desc.stage {
                Stage::Vertex if desc.partitions() => {
                    assert!(parts >= 300 / 16, "{}: {parts} partitions", desc.name)
                }
                _ => assert_eq!(parts, 1, "{} split a mesh it can hold whole", desc.name),
            }
            eprintln!("{}: capacity {cap:?}, {parts} partition(s)", desc.name);
        } else {
            // A triangle of this chain needs 4 bones.
            assert!(
                cap.is_some_and(|c| c < procedural::MANY_JOINTS_BONES_PER_TRIANGLE),
                "{}: {:?}",
                desc.name,
                refused
            );
        }
    }
    gpu.finish();
}

fn load(rel: &str) -> Option<Model> {
    let path = vkskin_tests::asset(rel)?;
    let opts = LoadOptions {
        max_influences: 8,
        ..LoadOptions::default()
    };
    Some(vkskin::assets::load_with(&path, &opts).unwrap_or_else(|e| panic!("{rel}: {e}")))
}

#[test]
fn every_path_matches_on_the_shared_assets() {
    let names = [
        "gltf/CesiumMan.glb",
        "gltf/Fox.glb",
        "x/tiny.x",
        "x/tiny_4anim.x",
        "x/bat.x",
    ];
    let mut models = Vec::new();
    for n in names {
        match load(n) {
            Some(m) => models.push((n, m)),
            None => return,
        }
    }
    let bat = &models.iter().find(|(n, _)| n.ends_with("bat.x")).unwrap().1;
    assert!(
        bat.meshes.iter().any(|m| m.influences.per_vertex > 4),
        "bat.x should need the 8-influence permutation"
    );
    let mut cases = Vec::new();
    for (name, model) in &models {
        // Every clip (Fox has three) at two times each, as instances.
        let mut poses = Vec::new();
        for clip in &model.clips {
            for f in [0.21f32, 0.68] {
                poses.push(
                    model
                        .pose(Some(clip), f * clip.duration(), PlaybackMode::Loop)
                        .expect("pose"),
                );
            }
        }
        if poses.is_empty() {
            poses.push(model.skeleton.bind_local().to_vec());
        }
        for (i, mesh) in model.meshes.iter().enumerate() {
            if mesh.indices.is_empty() {
                continue;
            }
            cases.push(Case {
                label: format!("{name} mesh {i} ({:?})", mesh.name),
                model,
                mesh: i,
                palettes: palettes_of(model, i, &poses),
            });
        }
    }
    let gpu = GpuTest::new();
    for desc in paths() {
        let mut rig = SkinCapture::new(&gpu.device, desc, None).expect("rig");
        let refused = check_cases(&mut rig, desc, &cases);
        for msg in &refused {
            assert!(desc.name.ends_with("-push"), "{}: {msg}", desc.name);
        }
        eprintln!(
            "{}: {} of {} meshes served",
            desc.name,
            cases.len() - refused.len(),
            cases.len()
        );
    }
    gpu.finish();
}

/// A storage that needs a device feature the device did not enable is an
/// `Err` naming the feature, not a validation error or a crash: the test
/// device wrapped as a host's that declares no `bufferDeviceAddress`.
#[test]
fn a_device_without_buffer_device_address_refuses_the_storages_that_need_it() {
    use vkskin::gpu::{vk, Device, EnabledFeatures, HostDevice};
    use vkskin::skin::{SkinPath, SkinPathConfig};
    let gpu = GpuTest::new();
    let d = &gpu.device;
    assert!(
        d.features().buffer_device_address,
        "lavapipe (Vulkan 1.3) has bufferDeviceAddress"
    );
    let host = HostDevice {
        physical_device: d.physical().raw,
        device: d.raw().clone(),
        queue: *d.queue(),
        queue_family: d.queue_family(),
        features: EnabledFeatures {
            buffer_device_address: false,
            ..d.features()
        },
    };
    // SAFETY: the handles are the test device's, which outlives `without`
    // (dropped first, below); nothing else uses the queue meanwhile.
    let without = unsafe { Device::from_host(d.instance(), host) }.expect("wrapped device");
    let cfg = SkinPathConfig::new(vk::Format::R8G8B8A8_UNORM, vk::Format::UNDEFINED, 1);
    let mut refused = 0;
    for desc in paths() {
        match SkinPath::new(&without, desc, cfg.clone()) {
            Ok(_) => {}
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("bufferDeviceAddress") && msg.contains("bda"),
                    "{}: {msg}",
                    desc.name
                );
                refused += 1;
            }
        }
    }
    // Each encoding on the bda storage, in the vertex and compute stages.
    assert_eq!(refused, 2 * vkskin::skin::encoding::ENCODINGS.len());
    drop(without);
    gpu.finish();
}
