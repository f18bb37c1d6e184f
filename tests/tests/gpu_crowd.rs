//! Crowds through the instanced paths: 256 instances animated in parallel
//! straight into one draw's storage (texel and storage palettes with every
//! encoding, the compute and CPU stages), each instance's captured vertices
//! equal to its own CPU reference; the same crowd frame through the vertex,
//! compute and CPU stages gives the same image; one compute pre-skinning
//! serves two passes; counts beyond the storage are errors naming the limit.
#![cfg(feature = "gpu")]

use std::sync::Mutex;

use glam::{Affine3A, Quat, Vec3};
use vkskin::anim::{Crowd, CrowdInstance, PaletteHierarchy, Parallelism};
use vkskin::assets::builtin::{procedural, Character};
use vkskin::assets::Model;
use vkskin::gpu::{vk, GpuError};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget};
use vkskin::skin::{
    find, paths, FrameSets, FrameUniforms, PathDesc, SkinPath, SkinPathConfig, Stage,
};
use vkskin_tests::gpu::{
    agreeing, diagonal, max_differences, normal_sensitivity, path_reference, GpuTest, PathRig,
};

/// A crowd of `n` instances of mesh 0's skin: clip `i % clips`, each out of
/// step with the others and at its own speed.
fn crowd_of(model: &Model, n: usize) -> Crowd {
    let skin = &model.skins[model.meshes[0].skin];
    let clips = model.clips.len().max(1);
    let instances = (0..n)
        .map(|i| CrowdInstance::new(i % clips, 0.173 * i as f32, 0.6 + 0.0137 * i as f32))
        .collect();
    Crowd::new(&model.skeleton, &model.clips, skin, instances).unwrap()
}

/// Instance `i`'s place in a grid far from the origin, turned about Y, and
/// its tint. Palettes stay in model space; only this matrix moves them.
fn place(i: usize, columns: usize, spacing: f32, origin: Vec3) -> (Affine3A, [f32; 4]) {
    let (x, z) = ((i % columns) as f32, (i / columns) as f32);
    let model = Affine3A::from_rotation_translation(
        Quat::from_rotation_y(0.7 * i as f32),
        origin + Vec3::new(x * spacing, 0.0, z * spacing),
    );
    let tint = [
        0.55 + 0.45 * ((i * 37) % 11) as f32 / 10.0,
        0.55 + 0.45 * ((i * 17) % 7) as f32 / 6.0,
        0.55 + 0.45 * ((i * 5) % 13) as f32 / 12.0,
        1.0,
    ];
    (model, tint)
}

/// Every instance's skinning matrices at `time`, animated one at a time.
fn reference_palettes(model: &Model, n: usize, time: f32) -> Vec<Vec<Affine3A>> {
    let mut crowd = crowd_of(model, n);
    let out = Mutex::new(vec![Vec::new(); n]);
    crowd
        .animate(time, Parallelism::Single, |i, skin| {
            out.lock().unwrap()[i] = skin.to_vec();
        })
        .unwrap();
    out.into_inner().unwrap()
}

/// The paths whose one draw (or dispatch) holds many instances' palettes
/// (instanced storages without a fixed window).
fn crowd_paths() -> Vec<&'static PathDesc> {
    paths()
        .iter()
        .filter(|p| match p.stage {
            Stage::Vertex => p.storage.is_some_and(|s| s.instanced() && !s.windowed()),
            Stage::Compute | Stage::Cpu => true,
        })
        .collect()
}

#[test]
fn two_hundred_fifty_six_instances_each_match_their_own_reference() {
    const N: usize = 256;
    const TIME: f32 = 0.45;
    let gpu = GpuTest::new();
    // A 64-joint four-influence character, and a 300-joint chain that no
    // instanced path partitions.
    let models = [
        procedural::bench_character(400, 64).unwrap(),
        procedural::many_joints(300).unwrap(),
    ];
    let descs = crowd_paths();
    assert_eq!(
        descs.len(),
        24,
        "texel + ssbo + bda x 4 encodings, (ssbo + bda) x 4 compute, 4 cpu"
    );
    for model in &models {
        let mesh = &model.meshes[0];
        let hierarchy = PaletteHierarchy::new(&model.skins[mesh.skin], &model.skeleton).unwrap();
        let palettes = reference_palettes(model, N, TIME);
        // Distinct poses: neighbours differ, so a wrong per-instance base
        // could not pass.
        let d = diagonal(&mesh.positions);
        for desc in &descs {
            let mut rig = PathRig::new(
                &gpu,
                desc,
                model,
                0,
                vk::PolygonMode::FILL,
                true,
                None,
                2,
                64,
            )
            .unwrap_or_else(|e| panic!("{} on {}: {e}", model.name, desc.name));
            assert_eq!(
                rig.mesh.parts().len(),
                1,
                "{} partitioned {}",
                desc.name,
                model.name
            );
            let mut crowd = crowd_of(model, N);
            let captured = rig.draw_with(&gpu, N, false, |w| {
                w.animate(&mut crowd, TIME, Parallelism::All, |i| {
                    place(i, 16, 3.0, Vec3::new(1.0e3, 0.0, -2.0e3))
                })
                .unwrap_or_else(|e| panic!("{}: {e}", desc.name));
            });
            let vc = mesh.vertex_count();
            assert_eq!(captured.len(), N * vc);
            let mut previous: Option<Vec<Vec3>> = None;
            for (i, skin) in palettes.iter().enumerate() {
                let (pos, nrm) = path_reference(desc, mesh, &hierarchy, skin);
                let sens = normal_sensitivity(desc, mesh, &hierarchy, skin, &nrm);
                let got = &captured[i * vc..(i + 1) * vc];
                let (dp, dn, worst) = max_differences(got, &pos, &nrm, &mesh.indices, &sens);
                assert!(
                    dp <= 1e-5 * d && dn <= 1e-5,
                    "{} on {}: instance {i}: position {dp:e} (vertex {worst}), normal {dn:e}",
                    model.name,
                    desc.name
                );
                if let Some(prev) = &previous {
                    let moved = pos
                        .iter()
                        .zip(prev)
                        .map(|(a, b)| (*a - *b).length())
                        .fold(0.0f32, f32::max);
                    assert!(moved > 1e-3 * d, "instances {} and {i} share a pose", i - 1);
                }
                previous = Some(pos);
            }
        }
    }
    gpu.finish();
}

/// One crowd frame of the built-in character through `path`, 256x256.
fn crowd_image(gpu: &GpuTest, model: &Model, path: &str, camera: Camera) -> Vec<u8> {
    const N: usize = 16;
    let mut rig = PathRig::new(
        gpu,
        find(path).unwrap(),
        model,
        0,
        vk::PolygonMode::FILL,
        false,
        None,
        2,
        256,
    )
    .unwrap_or_else(|e| panic!("{path}: {e}"));
    rig.camera = camera;
    let mut crowd = crowd_of(model, N);
    rig.draw_with(gpu, N, true, |w| {
        w.animate(&mut crowd, 0.8, Parallelism::All, |i| {
            place(i, 4, 1.6, Vec3::ZERO)
        })
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    });
    rig.target.read_rgba().unwrap()
}

fn grid_camera(model: &Model) -> Camera {
    let b = model.animated_bounds(8).unwrap();
    // Four by four, 1.6 m apart, each turned: the grid's box.
    let reach = (b.max - b.min).length() * 0.5;
    let min = b.center() - Vec3::splat(reach);
    let max = b.center() + Vec3::new(3.0 * 1.6, 0.0, 3.0 * 1.6) + Vec3::splat(reach);
    Camera::framing(min, max, 0.5, 0.35, 45f32.to_radians(), 1.0)
}

/// Fraction of pixels that are not the clear colour.
fn coverage(rgba: &[u8]) -> f64 {
    let clear = vkskin_tests::gpu::CLEAR_COLOR.map(|c| (c * 255.0).round() as u8);
    let covered = rgba
        .chunks_exact(4)
        .filter(|p| p[..3] != clear[..3])
        .count();
    covered as f64 / (rgba.len() / 4) as f64
}

#[test]
fn vertex_compute_and_cpu_stages_draw_the_same_crowd_frame() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let camera = grid_camera(&model);
    for enc in ["4x3", "dq"] {
        let vertex = crowd_image(&gpu, &model, &format!("{enc}-ssbo"), camera);
        if let Some(dir) = std::env::var_os("VKSKIN_TEST_OUT") {
            let path = std::path::Path::new(&dir).join(format!("crowd-{enc}.png"));
            vkskin::render::write_png(&path, 256, 256, &vertex).unwrap();
        }
        let cover = coverage(&vertex);
        assert!(cover > 0.02, "{enc}: the crowd covers only {cover}");
        for stage in ["compute", "cpu"] {
            let other = crowd_image(&gpu, &model, &format!("{enc}-{stage}"), camera);
            let f = agreeing(&vertex, &other);
            assert!(
                f >= 0.999,
                "{enc}-ssbo vs {enc}-{stage}: {:.4}% of pixels within 1/255",
                100.0 * f
            );
        }
    }
    gpu.finish();
}

/// Draws one crowd frame through `path` into two views. With `shared`,
/// one frame: one skinning (the compute dispatch, for the compute stage),
/// then two rendering scopes reading its output. Without, each view is its
/// own frame.
fn two_views(gpu: &GpuTest, model: &Model, path: &str, cameras: [Camera; 2]) -> [Vec<u8>; 2] {
    const N: usize = 9;
    let d = &gpu.device;
    let mut frames = FramesInFlight::new(d, 2).unwrap();
    let cfg = SkinPathConfig::new(
        OffscreenTarget::COLOR_FORMAT,
        OffscreenTarget::DEPTH_FORMAT,
        2,
    );
    let mut skin_path = SkinPath::by_name(d, path, cfg).unwrap();
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
    let mesh = skin_path.prepare(&model.meshes[0], &hierarchy).unwrap();
    let targets = [
        OffscreenTarget::new(d, 192, 144).unwrap(),
        OffscreenTarget::new(d, 192, 144).unwrap(),
    ];
    let mut sets = [FrameSets::new(d, 2).unwrap(), FrameSets::new(d, 2).unwrap()];
    let mut crowd = crowd_of(model, N);
    let frame = frames.begin().unwrap();
    skin_path.begin_frame(frame.index).unwrap();
    let mut w = skin_path.batch(frame.index, &mesh, N).unwrap();
    let batch = w.batch();
    w.animate(&mut crowd, 1.1, Parallelism::All, |i| {
        place(i, 3, 1.6, Vec3::ZERO)
    })
    .unwrap();
    for k in 0..2 {
        sets[k]
            .write(
                frame.index,
                &FrameUniforms {
                    view_proj: cameras[k]
                        .view_proj(targets[k].aspect_ratio())
                        .to_cols_array_2d(),
                    color: [1.0; 4],
                    light: [0.3, 0.5, 1.0, 1.0],
                },
            )
            .unwrap();
    }
    skin_path
        .prepass(frame.cmd, frame.index, &[(&batch, &mesh)])
        .unwrap();
    for k in 0..2 {
        targets[k].begin(frame.cmd, [0.0, 0.0, 0.0, 1.0]);
        skin_path
            .record_draw(
                frame.cmd,
                frame.index,
                &sets[k],
                &batch,
                &mesh,
                vk::PolygonMode::FILL,
                None,
            )
            .unwrap();
        targets[k].end_and_copy(frame.cmd);
    }
    skin_path.finish(frame.cmd, frame.index).unwrap();
    frames.submit(&frame, None, None).unwrap();
    frames.wait(&frame).unwrap();
    let images = [
        targets[0].read_rgba().unwrap(),
        targets[1].read_rgba().unwrap(),
    ];
    frames.wait_all().unwrap();
    images
}

#[test]
fn one_compute_skinning_serves_two_views_in_one_frame() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let b = model.animated_bounds(8).unwrap();
    let (min, max) = (b.min - Vec3::splat(2.0), b.max + Vec3::new(4.0, 0.0, 4.0));
    let cameras = [
        Camera::framing(min, max, 0.4, 0.3, 45f32.to_radians(), 1.3),
        Camera::framing(min, max, -2.2, 0.6, 60f32.to_radians(), 1.0),
    ];
    for enc in ["4x3", "dq-scale"] {
        let compute = two_views(&gpu, &model, &format!("{enc}-compute"), cameras);
        let vertex = two_views(&gpu, &model, &format!("{enc}-ssbo"), cameras);
        for k in 0..2 {
            let cover = coverage(&compute[k]);
            assert!(cover > 0.005, "{enc} view {k}: coverage {cover}");
            let f = agreeing(&compute[k], &vertex[k]);
            assert!(
                f >= 0.999,
                "{enc} view {k}: compute vs vertex stage {:.4}% within 1/255",
                100.0 * f
            );
        }
        let same = agreeing(&compute[0], &compute[1]);
        assert!(same < 0.99, "the two views agree on {same} of their pixels");
    }
    gpu.finish();
}

#[test]
fn crowd_counts_beyond_the_storage_are_errors_naming_the_limit() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let model = procedural::bench_character(2000, 64).unwrap();
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
    let cfg = SkinPathConfig::new(vk::Format::R8G8B8A8_UNORM, vk::Format::UNDEFINED, 1);
    let expect_limit = |r: Result<(), GpuError>, what: &str| match r {
        Err(e @ GpuError::Limit { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(what), "{msg}");
        }
        Err(e) => panic!("expected a limit naming {what}, got {e}"),
        Ok(()) => panic!("accepted beyond {what}"),
    };
    // Texel palettes: instances x bones x 3 texels beyond maxTexelBufferElements.
    let mut texel = SkinPath::by_name(d, "4x3-texel", cfg.clone()).unwrap();
    let texel_mesh = texel.prepare(&model.meshes[0], &hierarchy).unwrap();
    texel.begin_frame(0).unwrap();
    let texels = d.limits().max_texel_buffer_elements as usize;
    let too_many = texels / (3 * 64) + 1;
    expect_limit(texel.batch(0, &texel_mesh, too_many).map(|_| ()), "palette");
    // Compute output: instances x vertices x 12 bytes beyond maxStorageBufferRange.
    let mut compute = SkinPath::by_name(d, "4x3-compute", cfg.clone()).unwrap();
    let mesh = compute.prepare(&model.meshes[0], &hierarchy).unwrap();
    compute.begin_frame(0).unwrap();
    let range = d.limits().max_storage_buffer_range as usize;
    let too_many = range / (12 * mesh.vertex_count() as usize) + 1;
    expect_limit(
        compute.batch(0, &mesh, too_many).map(|_| ()),
        "maxStorageBufferRange",
    );
    // A crowd that does not match its batch.
    let mut w = compute.batch(0, &mesh, 4).unwrap();
    let mut crowd = crowd_of(&model, 5);
    let err = w
        .animate(&mut crowd, 0.0, Parallelism::Single, |_| {
            (Affine3A::IDENTITY, [1.0; 4])
        })
        .expect_err("a crowd of 5 in a batch of 4");
    assert!(
        err.to_string()
            .contains("a crowd of 5 instances for a batch of 4"),
        "{err}"
    );
    drop((mesh, texel_mesh, compute, texel));
    gpu.finish();
}

/// A crowd of the morph demo (`MorphBlob`: four targets, a clip animating
/// them) through the first crowd path of each stage: `Crowd::animate_weights`
/// samples every instance's weights at its own clip time and
/// `BatchWriter::animate_morphed` writes them with its palette; each
/// instance's captured vertices equal its CPU reference (`MorphJob` on the
/// bind pose, then the path's skinning), and the weights differ between
/// instances.
#[test]
fn a_crowd_of_morphing_blobs_morphs_each_instance() {
    use vkskin::assets::builtin::MorphBlob;
    use vkskin::mesh::MorphJob;
    const N: usize = 12;
    const TIME: f32 = 1.3;
    let gpu = GpuTest::new();
    let model = MorphBlob::default().model();
    let mesh = &model.meshes[0];
    let hierarchy = PaletteHierarchy::new(&model.skins[mesh.skin], &model.skeleton).unwrap();
    let palettes = reference_palettes(&model, N, TIME);
    let defaults = model.default_morph_weights();
    let stride = defaults.len();
    let mut weights = vec![0.0; N * stride];
    crowd_of(&model, N)
        .animate_weights(TIME, &defaults, &mut weights)
        .unwrap();
    assert!(weights[..stride] != weights[stride..2 * stride]);
    let d = diagonal(&mesh.positions);
    let mut stages = Vec::new();
    let descs: Vec<_> = crowd_paths()
        .into_iter()
        .filter(|p| {
            let first = !stages.contains(&p.stage);
            stages.push(p.stage);
            first
        })
        .collect();
    assert_eq!(descs.len(), 3, "one vertex, compute and CPU path");
    for desc in descs {
        let mut rig = PathRig::new(
            &gpu,
            desc,
            &model,
            0,
            vk::PolygonMode::FILL,
            true,
            None,
            2,
            64,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", desc.name));
        let mut crowd = crowd_of(&model, N);
        let first = mesh.morph.first_weight;
        let captured = rig.draw_with(&gpu, N, false, |w| {
            w.animate_morphed(
                &mut crowd,
                TIME,
                Parallelism::All,
                &weights[first..],
                stride,
                |i| place(i, 4, 3.0, Vec3::new(10.0, 0.0, -20.0)),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", desc.name));
        });
        let vc = mesh.vertex_count();
        assert_eq!(captured.len(), N * vc);
        for (i, skin) in palettes.iter().enumerate() {
            let w = mesh
                .morph
                .weights(&weights[i * stride..(i + 1) * stride])
                .unwrap();
            let mut morphed = mesh.clone();
            MorphJob {
                targets: &mesh.morph.targets,
                weights: w,
                positions: &mesh.positions,
                normals: &mesh.normals,
                tangents: &[],
                out_positions: &mut morphed.positions,
                out_normals: &mut morphed.normals,
                out_tangents: &mut [],
            }
            .run()
            .unwrap();
            morphed.morph = Default::default();
            let (pos, nrm) = path_reference(desc, &morphed, &hierarchy, skin);
            let sens = normal_sensitivity(desc, &morphed, &hierarchy, skin, &nrm);
            let got = &captured[i * vc..(i + 1) * vc];
            let (dp, dn, worst) = max_differences(got, &pos, &nrm, &mesh.indices, &sens);
            assert!(
                dp <= 1e-5 * d && dn <= 1e-5,
                "{}: instance {i} (weights {w:?}): position {dp:e} (vertex {worst}), normal {dn:e}",
                desc.name
            );
            if w.iter().any(|&x| x != 0.0) {
                let (base, _) = path_reference(desc, mesh, &hierarchy, skin);
                let moved = base
                    .iter()
                    .zip(&pos)
                    .map(|(a, b)| (*a - *b).length())
                    .fold(0.0f32, f32::max);
                assert!(
                    moved > 1e-3 * d,
                    "{}: instance {i} did not morph",
                    desc.name
                );
            }
        }
        // Too few weights are refused.
        let mut crowd = crowd_of(&model, N);
        rig.draw_with(&gpu, N, false, |w| {
            let e = w
                .animate_morphed(
                    &mut crowd,
                    TIME,
                    Parallelism::Single,
                    &weights[..8],
                    stride,
                    |i| place(i, 4, 3.0, Vec3::ZERO),
                )
                .unwrap_err();
            assert!(e.to_string().contains("crowd morph weights"), "{e}");
            w.animate(&mut crowd, TIME, Parallelism::Single, |i| {
                place(i, 4, 3.0, Vec3::ZERO)
            })
            .unwrap();
        });
    }
    gpu.finish();
}
