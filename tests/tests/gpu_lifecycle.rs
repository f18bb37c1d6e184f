//! Paths over time and at their limits: partitioned and whole draws give
//! the same picture, meshes and paths dropped while frames are in flight
//! are freed when those frames retire (and the validation layer sees the
//! misuse when deferral is off), `auto` explains its choice, and bad
//! palettes or instance counts are errors naming the limit.
#![cfg(feature = "gpu")]

use std::time::Duration;

use glam::{Affine3A, Vec3};
use vkskin::anim::{PaletteHierarchy, PlaybackMode};
use vkskin::assets::builtin::Character;
use vkskin::assets::Model;
use vkskin::gpu::{vk, GpuError};
use vkskin::render::{Camera, Projection};
use vkskin::skin::{auto, find, SkinPath, SkinPathConfig};
use vkskin_tests::gpu::{agreeing, diagonal, GpuTest, PathRig};

fn walk_palette(model: &Model, t: f32) -> Vec<Affine3A> {
    let clip = model.clip("walk").expect("walk clip");
    let locals = model.pose(Some(clip), t, PlaybackMode::Loop).unwrap();
    model.skin_matrices(&locals).unwrap()[model.meshes[0].skin].clone()
}

fn framed_camera(model: &Model) -> Camera {
    let pos = &model.meshes[0].positions;
    let (lo, hi) = pos
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(a, b), p| (a.min(*p), b.max(*p)));
    let centre = (lo + hi) * 0.5;
    let d = diagonal(pos);
    Camera::look_at(
        centre + Vec3::new(0.3, 0.2, 1.0).normalize() * 1.4 * d,
        centre,
        Vec3::Y,
        Projection::Perspective {
            fov_y: 45f32.to_radians(),
            near: 0.05 * d,
            far: 4.0 * d,
        },
    )
}

fn render(gpu: &GpuTest, model: &Model, path: &str, limit: Option<usize>) -> (Vec<u8>, usize) {
    let mut rig = PathRig::new(
        gpu,
        find(path).unwrap(),
        model,
        0,
        vk::PolygonMode::FILL,
        false,
        limit,
        2,
        192,
    )
    .unwrap_or_else(|e| panic!("{path}: {e}"));
    rig.camera = framed_camera(model);
    let skin = walk_palette(model, 0.8);
    rig.draw(gpu, &[&skin], true);
    let parts = rig.mesh.parts().len();
    (rig.target.read_rgba().unwrap(), parts)
}

#[test]
fn partitioned_and_whole_draws_of_one_pose_give_the_same_image() {
    let gpu = GpuTest::new();
    let model = Character::model();
    for (whole, split, limit) in [
        ("4x3-ubo", "4x3-ubo", Some(8)),
        ("dq-ubo", "dq-ubo", Some(6)),
        ("qt-ssbo", "qt-push", None),
    ] {
        let (a, pa) = render(&gpu, &model, whole, None);
        let (b, pb) = render(&gpu, &model, split, limit);
        assert_eq!(pa, 1, "{whole} should draw the character whole");
        assert!(pb > 1, "{split} with {limit:?} should partition ({pb})");
        let covered = a.chunks_exact(4).filter(|p| p[..3] != [0, 0, 0]).count();
        assert!(
            covered * 100 >= a.len() / 4,
            "the character covers only {covered} pixels"
        );
        let f = agreeing(&a, &b);
        assert!(
            f >= 0.999,
            "{whole} whole vs {split} in {pb} partitions: {:.4}% of pixels agree",
            100.0 * f
        );
        eprintln!("{whole} vs {split} ({pb} parts): {:.4}% agree", 100.0 * f);
    }
    gpu.finish();
}

fn hierarchy(model: &Model) -> PaletteHierarchy {
    PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap()
}

#[test]
fn meshes_and_paths_dropped_in_flight_are_freed_when_their_frames_retire() {
    let gpu = GpuTest::new();
    let d = gpu.device.clone();
    let model = Character::model();
    let skin = walk_palette(&model, 0.3);
    for name in ["4x3-ubo", "dq-texel", "4x3-compute", "qt-cpu"] {
        let mut rig = PathRig::new(
            &gpu,
            find(name).unwrap(),
            &model,
            0,
            vk::PolygonMode::FILL,
            true,
            None,
            3,
            64,
        )
        .unwrap();
        // Replacements are made first: uploads wait on the queue, which
        // would retire the frames before the swap.
        let spare_mesh = rig
            .path
            .prepare(&model.meshes[0], &hierarchy(&model))
            .unwrap();
        let mut cfg = rig.path.config().clone();
        cfg.frames_in_flight = 3;
        let mut spare_path = SkinPath::new(&d, find(name).unwrap(), cfg).unwrap();
        let spare_path_mesh = spare_path
            .prepare(&model.meshes[0], &hierarchy(&model))
            .unwrap();
        let spare_capture =
            vkskin::skin::CaptureBuffer::new(&d, spare_path.capture_layout().unwrap(), 4 * 6252)
                .unwrap();
        // Two frames in flight, then the mesh is replaced under them.
        rig.submit(&gpu, &[&skin, &skin], false);
        rig.submit(&gpu, &[&skin], false);
        let before = d.parked_objects();
        rig.mesh = spare_mesh;
        assert!(
            d.parked_objects() > before,
            "{name}: the old mesh was freed at once"
        );
        // Then the whole path (pipelines, per-frame storage) goes too.
        rig.submit(&gpu, &[&skin], false);
        let before = d.parked_objects();
        rig.path = spare_path;
        rig.mesh = spare_path_mesh;
        rig.capture = Some(spare_capture);
        assert!(
            d.parked_objects() > before,
            "{name}: the old path was freed at once"
        );
        rig.wait_all();
        assert_eq!(
            d.parked_objects(),
            0,
            "{name}: retired frames left objects parked"
        );
        // The replacements work.
        let (_, captured) = rig.draw(&gpu, &[&skin], false);
        assert!(captured.iter().any(|v| v.position != [0.0; 4]));
    }
    drop(d);
    gpu.finish();
}

#[test]
fn without_deferral_the_validation_layer_sees_a_buffer_destroyed_in_use() {
    // The negative control of the test above: the harness would catch
    // deferred destruction not being there.
    let gpu = GpuTest::new();
    let model = Character::model();
    let skin = walk_palette(&model, 0.3);
    let mut rig = PathRig::new(
        &gpu,
        find("4x3-ubo").unwrap(),
        &model,
        0,
        vk::PolygonMode::FILL,
        false,
        None,
        2,
        64,
    )
    .unwrap();
    let spare = rig
        .path
        .prepare(&model.meshes[0], &hierarchy(&model))
        .unwrap();
    rig.submit(&gpu, &[&skin], false);
    // Let the (CPU) device finish the work, so nothing is really read after
    // the destruction; the fence has not been waited, so the buffers are
    // still in use as far as Vulkan is concerned.
    std::thread::sleep(Duration::from_millis(300));
    gpu.device.set_deferred_destruction(false);
    rig.mesh = spare;
    rig.wait_all();
    gpu.device.set_deferred_destruction(true);
    let problems = gpu.log.problems();
    assert!(
        problems.iter().any(|m| m.text.contains("vkDestroyBuffer")),
        "destroying an in-use buffer went unseen: {problems:?}"
    );
}

#[test]
fn auto_explains_its_choice_and_unknown_names_list_every_path() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let (p, why) = auto(d, 38, 1);
    assert_eq!(p.name, "4x3-ubo");
    assert!(why.contains("38 bones") && why.contains("fit"), "{why}");
    let (p, why) = auto(d, 5000, 1);
    assert_eq!(p.name, "4x3-ssbo");
    assert!(why.contains("5000 bones"), "{why}");
    let (p, why) = auto(d, 64, 1000);
    assert_eq!(p.name, "4x3-ssbo");
    assert!(why.contains("1000 instances"), "{why}");
    let cfg = SkinPathConfig::new(vk::Format::R8G8B8A8_UNORM, vk::Format::UNDEFINED, 2);
    match SkinPath::by_name(d, "4x3-nope", cfg) {
        Err(GpuError::InvalidArgument(msg)) => {
            for p in vkskin::skin::paths() {
                assert!(msg.contains(p.name), "{} missing from {msg}", p.name);
            }
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("an unknown path was made"),
    }
    gpu.finish();
}

#[test]
fn bad_palettes_and_too_many_instances_are_errors_naming_the_limit() {
    let gpu = GpuTest::new();
    let d = &gpu.device;
    let model = Character::model();
    let cfg = SkinPathConfig::new(vk::Format::R8G8B8A8_UNORM, vk::Format::UNDEFINED, 1);
    let mut path = SkinPath::by_name(d, "4x3-ssbo", cfg.clone()).unwrap();
    // A hierarchy (palette) shorter than the joints the mesh names.
    let short = PaletteHierarchy::flat(5);
    let err = path
        .prepare(&model.meshes[0], &short)
        .err()
        .expect("short palette accepted");
    assert!(err.to_string().contains("palette has 5 entries"), "{err}");
    let mesh = path.prepare(&model.meshes[0], &hierarchy(&model)).unwrap();
    path.begin_frame(0).unwrap();
    // A palette of the wrong length for an instance.
    {
        let mut w = path.batch(0, &mesh, 1).unwrap();
        let skin = vec![Affine3A::IDENTITY; 3];
        let err = w
            .instances()
            .next()
            .unwrap()
            .write(&skin, &Affine3A::IDENTITY, [1.0; 4])
            .expect_err("short palette written");
        assert!(err.to_string().contains("a palette of 3 matrices"), "{err}");
    }
    // More instances than the storage range addresses.
    let limit = d.limits().max_storage_buffer_range as usize / 16;
    let too_many = limit / (3 * model.skins[0].len()) + 1;
    match path.batch(0, &mesh, too_many) {
        Err(GpuError::Limit {
            needed, limit: l, ..
        }) => {
            assert!(needed > l && l as usize == limit, "{needed} vs {l}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("{too_many} instances accepted"),
    }
    // Push storage: a too small window is refused at creation.
    let mut small = cfg;
    small.capacity_limit = Some(0);
    assert!(SkinPath::by_name(d, "4x3-push", small).is_err());
    drop((mesh, path));
    gpu.finish();
}

#[test]
fn encodings_report_the_bones_they_cannot_keep() {
    let gpu = GpuTest::new();
    let model = vkskin::assets::builtin::procedural::chain_cylinder(16, 4, 9).unwrap();
    let h = hierarchy(&model);
    let pose = |nus| {
        let locals = vkskin::assets::builtin::procedural::random_pose(&model.skeleton, 4, nus);
        model.skin_matrices(&locals).unwrap().remove(0)
    };
    let (rigid, scaled) = (pose(false), pose(true));
    for (name, lossy_when_scaled) in [
        ("4x3-ssbo", false),
        ("qt-ssbo", true),
        ("qt-cpu", true),
        ("dq-texel", true),
        ("dq-compute", true),
        ("dq-scale-ubo", false),
    ] {
        let mut rig =
            vkskin::render::SkinCapture::new(&gpu.device, find(name).unwrap(), None).unwrap();
        let mesh = rig.prepare(&model.meshes[0], &h).unwrap();
        let (_, r) = rig.run(&mesh, &[&rigid]).unwrap();
        assert!(
            r.lossy.is_empty(),
            "{name}: rigid pose reported lossy {:?}",
            r.lossy
        );
        let (_, r) = rig.run(&mesh, &[&scaled]).unwrap();
        assert_eq!(!r.lossy.is_empty(), lossy_when_scaled, "{name}: {r:?}");
        if lossy_when_scaled {
            assert!(r.max_deviation > 0.05, "{name}: {r:?}");
        }
    }
    gpu.finish();
}
