//! `vkskin::embed::Renderer`, the embedding API, on vkskin's own headless
//! device under validation (synchronization validation included): it draws
//! exactly what the low-level calls it wraps draw, on every stage; host
//! joint matrices equal the clip pose they come from; several instances,
//! several passes and removal behave; misuse is an error, not a panic.
//! Each frame is recorded with `gpu::one_shot`, which submits and waits, as
//! a host's fence wait would.

use vkskin::anim::{LocalToModelJob, PaletteHierarchy, PlaybackMode, SamplingContext, SamplingJob};
use vkskin::assets::builtin::Character;
use vkskin::assets::Model;
use vkskin::embed::{Frame, FrameUniforms, Pose, Renderer, SkinPathConfig};
use vkskin::glam::{Affine3A, Vec3};
use vkskin::gpu::{one_shot, vk, GpuError, GpuResult};
use vkskin::render::{Camera, OffscreenTarget};
use vkskin::skin::{find, FrameSets, SkinPath};
use vkskin_tests::gpu::GpuTest;

const SIZE: (u32, u32) = (160, 120);
const CLEAR: [f32; 4] = [0.06, 0.07, 0.09, 1.0];
const FRAMES_IN_FLIGHT: usize = 2;

fn config() -> SkinPathConfig {
    SkinPathConfig::new(
        OffscreenTarget::COLOR_FORMAT,
        OffscreenTarget::DEPTH_FORMAT,
        FRAMES_IN_FLIGHT,
    )
}

fn uniforms(model: &Model) -> FrameUniforms {
    let aspect = SIZE.0 as f32 / SIZE.1 as f32;
    let b = model.animated_bounds(16).unwrap();
    // Wide enough for a second instance beside the first.
    let camera = Camera::framing(b.min, b.max, 0.5, 0.2, 70f32.to_radians(), aspect);
    FrameUniforms {
        view_proj: camera.view_proj(aspect).to_cols_array_2d(),
        color: [1.0; 4],
        light: [0.3, 0.5, 1.0, 1.0],
    }
}

/// One frame through the renderer: `passes` rendering scopes (each
/// clearing the target) with `draws` records each; the pixels.
#[allow(clippy::too_many_arguments)]
fn renderer_frame(
    gpu: &GpuTest,
    target: &OffscreenTarget,
    renderer: &mut Renderer,
    slot: usize,
    time: f32,
    u: &FrameUniforms,
    passes: usize,
    draws: usize,
) -> Vec<u8> {
    one_shot(&gpu.device, |cmd| {
        let frame = renderer.begin_frame(cmd, slot, time, u)?;
        for _ in 0..passes {
            target.begin(cmd, CLEAR);
            for _ in 0..draws {
                renderer.record(cmd, &frame)?;
            }
            target.end_and_copy(cmd);
        }
        renderer.end_frame(cmd, frame)
    })
    .unwrap();
    target.read_rgba().unwrap()
}

/// The same frame through the low-level calls the renderer wraps: the
/// model at the first clip's `time`, every mesh one batch of one instance.
fn low_level_frame(
    gpu: &GpuTest,
    target: &OffscreenTarget,
    model: &Model,
    path: &'static vkskin::skin::PathDesc,
    time: f32,
    u: &FrameUniforms,
) -> Vec<u8> {
    low_level_frame_weighted(gpu, target, model, path, time, u, None)
}

/// [`low_level_frame`] with the model's morph weight vector `weights`
/// (each mesh with targets takes its run).
fn low_level_frame_weighted(
    gpu: &GpuTest,
    target: &OffscreenTarget,
    model: &Model,
    path: &'static vkskin::skin::PathDesc,
    time: f32,
    u: &FrameUniforms,
    weights: Option<&[f32]>,
) -> Vec<u8> {
    let d = &gpu.device;
    let mut path = SkinPath::new(d, path, config()).unwrap();
    let meshes: Vec<_> = model
        .meshes
        .iter()
        .map(|m| {
            let h = PaletteHierarchy::new(&model.skins[m.skin], &model.skeleton).unwrap();
            path.prepare(m, &h).unwrap()
        })
        .collect();
    let mut sets = FrameSets::new(d, FRAMES_IN_FLIGHT).unwrap();
    let palettes = model
        .skin_matrices(
            &model
                .pose(model.clips.first(), time, PlaybackMode::Loop)
                .unwrap(),
        )
        .unwrap();
    one_shot(d, |cmd| {
        path.begin_frame(0)?;
        let mut batches = Vec::new();
        for (m, p) in model.meshes.iter().zip(&meshes) {
            let tint = m
                .material
                .and_then(|k| model.materials.get(k))
                .map_or([1.0; 4], |mat| mat.base_color.to_array());
            let mut w = path.batch(0, p, 1)?;
            let palette = palettes[m.skin].as_slice();
            match weights.and_then(|all| m.morph.weights(all)) {
                Some(mw) if !m.morph.is_empty() => {
                    w.write_all_morphed(|_| (palette, mw, Affine3A::IDENTITY, tint))?
                }
                _ => w.write_all(|_| (palette, Affine3A::IDENTITY, tint))?,
            };
            batches.push(w.batch());
        }
        sets.write(0, u)?;
        let list: Vec<_> = batches.iter().zip(&meshes).collect();
        path.prepass(cmd, 0, &list)?;
        target.begin(cmd, CLEAR);
        for (b, m) in &list {
            path.record_draw(cmd, 0, &sets, b, m, vk::PolygonMode::FILL, None)?;
        }
        target.end_and_copy(cmd);
        path.finish(cmd, 0)
    })
    .unwrap();
    target.read_rgba().unwrap()
}

fn is_drawn(rgba: &[u8]) -> bool {
    rgba.chunks_exact(4).filter(|p| p[0] > 60).count() > 100
}

#[test]
fn the_renderer_draws_what_the_low_level_calls_draw_on_every_stage() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let u = uniforms(&model);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).unwrap();
    for name in ["4x3-ubo", "4x3-ssbo", "dq-compute", "4x3-cpu"] {
        let desc = find(name).unwrap_or_else(|| panic!("no path {name}"));
        let mut renderer = Renderer::new(&gpu.device, desc, config()).unwrap();
        let c = renderer.add_character(&model).unwrap();
        renderer
            .add_instance(c, Affine3A::IDENTITY, Pose::clip(0))
            .unwrap();
        // Three frames over both slots; the last at t = 0.4 s.
        let mut ours = Vec::new();
        for (i, t) in [0.0, 0.2, 0.4].into_iter().enumerate() {
            ours = renderer_frame(&gpu, &target, &mut renderer, i % 2, t, &u, 1, 1);
        }
        assert_eq!(renderer.path().name, name);
        drop(renderer);
        let theirs = low_level_frame(&gpu, &target, &model, desc, 0.4, &u);
        assert!(is_drawn(&theirs), "{name}: an empty frame");
        let differing = ours.iter().zip(&theirs).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "{name}: {differing} bytes differ");
    }
    drop(target);
    gpu.finish();
}

/// The character with two morph targets on every mesh (one weight run):
/// target 0 moves every vertex 30 cm along +X and bends its normal, target
/// 1 moves normals only; clip 0 (prepended) animates the weights from
/// (0, 0) to (1, 2) over a second and poses the bind pose.
fn morph_character() -> Model {
    use vkskin::anim::{Clip, Interpolation, RawClip, RawWeightTrack};
    use vkskin::mesh::{MorphSet, MorphTarget};
    let mut model = Character::model();
    for mesh in &mut model.meshes {
        let n = mesh.positions.len();
        mesh.morph.targets = vec![
            MorphTarget {
                positions: vec![Vec3::new(0.3, 0.0, 0.0); n],
                normals: vec![Vec3::new(0.0, 0.5, 0.0); n],
                ..MorphTarget::default()
            },
            MorphTarget {
                normals: vec![Vec3::new(0.4, 0.0, -0.2); n],
                ..MorphTarget::default()
            },
        ];
        mesh.morph.first_weight = 0;
    }
    model.morph_sets = vec![MorphSet {
        name: "test".into(),
        target_names: vec![String::new(); 2],
        defaults: vec![0.0; 2],
        first_weight: 0,
    }];
    let raw = RawClip {
        name: "weights".into(),
        duration: 1.0,
        tracks: Vec::new(),
        weights: vec![RawWeightTrack {
            first: 0,
            count: 2,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 1.0],
            values: vec![0.0, 0.0, 1.0, 2.0],
            tangents: Vec::new(),
        }],
    };
    let clip = Clip::build(&raw, &model.skeleton).unwrap();
    model.clips.insert(0, clip);
    model
}

#[test]
fn morph_weights_from_a_clip_or_the_host_draw_what_the_low_level_calls_draw() {
    let gpu = GpuTest::new();
    let model = morph_character();
    let u = uniforms(&model);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).unwrap();
    for name in ["4x3-ubo", "dq-ssbo", "dq-compute", "4x3-cpu"] {
        let desc = find(name).unwrap_or_else(|| panic!("no path {name}"));
        let mut renderer = Renderer::new(&gpu.device, desc, config()).unwrap();
        let c = renderer.add_character(&model).unwrap();
        assert_eq!(renderer.morph_weight_count(c).unwrap(), 2);
        let i = renderer
            .add_instance(c, Affine3A::IDENTITY, Pose::clip(0))
            .unwrap();
        // The clip's weights at 0.5 s: (0.5, 1).
        let mut ours = Vec::new();
        for (k, t) in [0.1, 0.5].into_iter().enumerate() {
            ours = renderer_frame(&gpu, &target, &mut renderer, k % 2, t, &u, 1, 1);
        }
        let sampled = model
            .morph_weights(model.clips.first(), 0.5, PlaybackMode::Loop)
            .unwrap();
        assert_eq!(sampled, vec![0.5, 1.0]);
        let theirs = low_level_frame_weighted(&gpu, &target, &model, desc, 0.5, &u, Some(&sampled));
        let unmorphed = low_level_frame(&gpu, &target, &model, desc, 0.5, &u);
        assert!(is_drawn(&theirs), "{name}: an empty frame");
        let moved = theirs
            .iter()
            .zip(&unmorphed)
            .filter(|(a, b)| a != b)
            .count();
        assert!(moved > 1000, "{name}: the weights moved {moved} bytes only");
        let differing = ours.iter().zip(&theirs).filter(|(a, b)| a != b).count();
        assert_eq!(
            differing, 0,
            "{name}: clip weights: {differing} bytes differ"
        );
        // Hand-set weights hold over the clip's.
        let hand = [-0.4, 1.5];
        renderer.set_morph_weights(i, &hand).unwrap();
        let ours = renderer_frame(&gpu, &target, &mut renderer, 0, 0.7, &u, 1, 1);
        let theirs = low_level_frame_weighted(&gpu, &target, &model, desc, 0.7, &u, Some(&hand));
        let differing = ours.iter().zip(&theirs).filter(|(a, b)| a != b).count();
        assert_eq!(
            differing, 0,
            "{name}: hand weights: {differing} bytes differ"
        );
        invalid(renderer.set_morph_weights(i, &[1.0]), "one weight of two");
        invalid(
            renderer.set_morph_weights(i, &[f32::NAN, 0.0]),
            "a NaN weight",
        );
        drop(renderer);
    }
    drop(target);
    gpu.finish();
}

#[test]
fn host_joints_passes_instances_and_removal() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let u = uniforms(&model);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).unwrap();
    let desc = find("4x3-ssbo").unwrap();
    let mut renderer = Renderer::new(&gpu.device, desc, config()).unwrap();
    let c = renderer.add_character(&model).unwrap();
    let a = renderer
        .add_instance(c, Affine3A::IDENTITY, Pose::clip(0))
        .unwrap();
    let clip_frame = renderer_frame(&gpu, &target, &mut renderer, 0, 0.3, &u, 1, 1);
    assert!(is_drawn(&clip_frame));

    // The host's own joint matrices for the same moment draw the same.
    let clip = &model.clips[0];
    let mut locals = model.skeleton.bind_local().to_vec();
    SamplingJob {
        clip,
        context: &mut SamplingContext::new(clip),
        time: 0.3,
        mode: PlaybackMode::Loop,
        output: &mut locals,
    }
    .run()
    .unwrap();
    let mut joints = vec![Affine3A::IDENTITY; model.skeleton.len()];
    LocalToModelJob::full(&model.skeleton, &locals, &mut joints)
        .run()
        .unwrap();
    renderer.set_joints(a, &joints).unwrap();
    // The frame time no longer matters.
    let host_frame = renderer_frame(&gpu, &target, &mut renderer, 1, 9.0, &u, 1, 1);
    assert_eq!(host_frame, clip_frame, "host joints vs the clip pose");

    // Recorded twice in one scope, and in two scopes: the same frame.
    let twice = renderer_frame(&gpu, &target, &mut renderer, 0, 9.0, &u, 2, 2);
    assert_eq!(twice, clip_frame, "two passes of two records");

    // A second instance beside the first, tinted, changes the picture;
    // removing it restores it.
    let b = renderer
        .add_instance(
            c,
            Affine3A::from_translation(Vec3::new(1.5, 0.0, 0.0)),
            Pose::Clip {
                clip: 0,
                time_offset: 0.5,
                speed: 2.0,
                mode: PlaybackMode::Clamp,
            },
        )
        .unwrap();
    renderer.set_tint(b, [1.0, 0.2, 0.2, 1.0]).unwrap();
    let two = renderer_frame(&gpu, &target, &mut renderer, 1, 0.3, &u, 1, 1);
    assert_ne!(two, clip_frame, "the second instance is not drawn");
    renderer.remove_instance(b).unwrap();
    let one = renderer_frame(&gpu, &target, &mut renderer, 0, 0.3, &u, 1, 1);
    assert_eq!(one, clip_frame, "after removing the second instance");

    // Moved out of view: nothing but the clear colour.
    renderer
        .set_transform(a, Affine3A::from_translation(Vec3::new(0.0, 0.0, 1.0e4)))
        .unwrap();
    let gone = renderer_frame(&gpu, &target, &mut renderer, 1, 0.3, &u, 1, 1);
    assert!(!is_drawn(&gone), "an instance far behind the camera drew");
    assert!(renderer.report().is_exact());
    drop(renderer);
    drop(target);
    gpu.finish();
}

#[test]
fn the_gpu_timer_is_read_when_a_slot_begins_again() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let u = uniforms(&model);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).unwrap();
    let mut renderer = Renderer::new(&gpu.device, find("4x3-ubo").unwrap(), config()).unwrap();
    let c = renderer.add_character(&model).unwrap();
    renderer
        .add_instance(c, Affine3A::IDENTITY, Pose::Bind)
        .unwrap();
    assert_eq!(renderer.gpu_ms(0), None);
    for i in 0..3 {
        renderer_frame(&gpu, &target, &mut renderer, i % 2, 0.0, &u, 1, 1);
    }
    // Slot 0 began again in frame 2: frame 0's time is known.
    let timestamps = gpu.device.features().timestamps;
    assert_eq!(renderer.gpu_ms(0).is_some(), timestamps);
    if let Some(ms) = renderer.gpu_ms(0) {
        assert!(ms.is_finite() && ms >= 0.0, "{ms} ms");
    }
    drop(renderer);
    drop(target);
    gpu.finish();
}

fn invalid<T: std::fmt::Debug>(r: GpuResult<T>, what: &str) {
    match r {
        Err(GpuError::InvalidArgument(_)) => {}
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn misuse_is_an_error() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let u = uniforms(&model);
    let desc = find("4x3-ubo").unwrap();
    let mut capture = config();
    capture.capture = true;
    invalid(
        Renderer::new(&gpu.device, desc, capture).map(|_| ()),
        "a capture config",
    );
    let mut renderer = Renderer::new(&gpu.device, desc, config()).unwrap();
    let c = renderer.add_character(&model).unwrap();
    let a = renderer
        .add_instance(c, Affine3A::IDENTITY, Pose::clip(0))
        .unwrap();
    invalid(
        renderer.add_instance(c, Affine3A::IDENTITY, Pose::clip(model.clips.len())),
        "a clip past the model's",
    );
    invalid(
        renderer.set_pose(
            a,
            Pose::Clip {
                clip: 0,
                time_offset: f32::NAN,
                speed: 1.0,
                mode: PlaybackMode::Loop,
            },
        ),
        "a NaN time offset",
    );
    invalid(renderer.set_joints(a, &[Affine3A::IDENTITY]), "one joint");
    let b = renderer
        .add_instance(c, Affine3A::IDENTITY, Pose::Bind)
        .unwrap();
    renderer.remove_instance(b).unwrap();
    invalid(renderer.remove_instance(b), "removing twice");
    invalid(renderer.set_tint(b, [1.0; 4]), "tinting a removed instance");
    invalid(
        renderer.set_transform(b, Affine3A::IDENTITY),
        "moving a removed instance",
    );

    let stale: Frame = one_shot(&gpu.device, |cmd| {
        let r = renderer.begin_frame(cmd, FRAMES_IN_FLIGHT, 0.0, &u);
        invalid(r, "a slot past the frames in flight");
        let r = renderer.begin_frame(cmd, 0, f32::INFINITY, &u);
        invalid(r, "an infinite frame time");
        // Begun and never ended: the next begin_frame drops it.
        renderer.begin_frame(cmd, 0, 0.0, &u)
    })
    .unwrap();
    one_shot(&gpu.device, |cmd| {
        let frame = renderer.begin_frame(cmd, 1, 0.1, &u)?;
        invalid(renderer.record(cmd, &stale), "recording a dropped frame");
        invalid(renderer.end_frame(cmd, stale), "ending a dropped frame");
        renderer.end_frame(cmd, frame)
    })
    .unwrap();
    drop(renderer);
    gpu.finish();
}

/// Motion vectors through the renderer: on a motion path it keeps each
/// instance's last pose, a teleport is accepted, and the frames draw what
/// a renderer without motion draws (the previous position changes no
/// colour), on a windowed storage too (its window holds both palettes).
#[test]
fn motion_paths_draw_like_plain_ones_and_teleport() {
    let gpu = GpuTest::new();
    let model = Character::model();
    let u = uniforms(&model);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).unwrap();
    let mut motion = config();
    motion.motion = true;
    for name in ["4x3-ssbo", "4x3-ubo", "dq-compute", "4x3-cpu"] {
        let desc = find(name).unwrap_or_else(|| panic!("no path {name}"));
        let mut frames = Vec::new();
        for cfg in [motion.clone(), config()] {
            let mut renderer = Renderer::new(&gpu.device, desc, cfg).unwrap();
            let c = renderer.add_character(&model).unwrap();
            let i = renderer
                .add_instance(c, Affine3A::IDENTITY, Pose::clip(0))
                .unwrap();
            let mut last = Vec::new();
            for (k, t) in [0.0, 0.2, 0.4, 1.3].into_iter().enumerate() {
                if k == 3 {
                    renderer.teleport(i).unwrap();
                }
                last = renderer_frame(&gpu, &target, &mut renderer, k % 2, t, &u, 1, 1);
            }
            assert!(is_drawn(&last), "{name}: an empty frame");
            frames.push(last);
        }
        let differing = frames[0]
            .iter()
            .zip(&frames[1])
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(differing, 0, "{name}: {differing} bytes differ with motion");
    }
    drop(target);
    gpu.finish();
}
