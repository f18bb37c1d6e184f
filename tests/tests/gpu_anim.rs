//! GPU animation (`skin::anim`) against the CPU animation layer: palettes
//! written by the compute pass equal the CPU's (sampling, cross-fade
//! blending, local-to-model, inverse binds, the path's encoding) for 256
//! instances of distinct clips, times, speeds, loop modes and weights, on
//! every encoding and instanced storage, over the built-in character
//! (SQUAD and LINEAR), a 300-joint tree and a 200-joint chain (deeper than
//! a workgroup is wide) with STEP, LINEAR, SQUAD, CUBICSPLINE and matrix
//! tracks, and tiny_4anim.x's and Fox's clips when the shared assets are
//! present; skinned vertices through GPU animation equal those through CPU
//! palettes; 100,000 instances of a 300-vertex character animate and draw; the device's limits are
//! asked. All under validation with synchronization validation, the log
//! checked after teardown.
#![cfg(feature = "gpu")]

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use vkskin::anim::{Clip, PaletteHierarchy, Skin};
use vkskin::assets::builtin::{procedural, Character};
use vkskin::assets::Model;
use vkskin::gpu::{GpuError, GpuResult};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget, Projection};
use vkskin::skin::anim::{gpu_encoder_rows, AnimRecord, GpuAnimator, GpuClipStore};
use vkskin::skin::{
    paths, CaptureBuffer, CapturedVertex, FrameSets, FrameUniforms, PathDesc, PreparedMesh,
    SkinPath, SkinPathConfig, Stage,
};
use vkskin_tests::gpu::GpuTest;
use vkskin_tests::gpu_anim::{
    bind_extent, cpu_block, cpu_skin, is_translation, random_records, varied_clips,
};

/// Tolerance of rotation and scale terms; translations: times the
/// skeleton's bind-pose extent.
const TOL: f32 = 1e-5;

/// The paths GPU animation serves: instanced storages on a GPU stage.
fn instanced_paths() -> Vec<&'static PathDesc> {
    paths()
        .iter()
        .filter(|p| {
            p.stage != Stage::Cpu
                && p.storage
                    .is_some_and(|s| !s.windowed() && !s.in_push_constants())
                && gpu_encoder_rows(p.encoding.name()).is_some()
        })
        .collect()
}

/// A model drawn by one path with GPU animation, into a small offscreen
/// target.
struct Rig {
    // First, so it drops first: its drop waits for every frame's fence.
    frames: FramesInFlight,
    target: OffscreenTarget,
    frame_sets: FrameSets,
    capture: Option<CaptureBuffer>,
    animator: GpuAnimator,
    mesh: PreparedMesh,
    path: SkinPath,
}

impl Rig {
    fn new(
        gpu: &GpuTest,
        desc: &'static PathDesc,
        model: &Model,
        store: &Arc<GpuClipStore>,
        capture: bool,
    ) -> GpuResult<Self> {
        Self::with_size(gpu, desc, model, store, capture, 64)
    }

    /// [`Rig::new`] into a `size` x `size` target.
    fn with_size(
        gpu: &GpuTest,
        desc: &'static PathDesc,
        model: &Model,
        store: &Arc<GpuClipStore>,
        capture: bool,
        size: u32,
    ) -> GpuResult<Self> {
        let d = &gpu.device;
        let mut cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            2,
        );
        cfg.gpu_animation = true;
        cfg.capture = capture;
        let mut path = SkinPath::new(d, desc, cfg)?;
        let m = &model.meshes[0];
        let skin = &model.skins[m.skin];
        let hierarchy = PaletteHierarchy::new(skin, &model.skeleton)
            .map_err(|e| GpuError::InvalidArgument(e.to_string()))?;
        let mesh = path.prepare(m, &hierarchy)?;
        let animator = GpuAnimator::new(store, &path, &mesh, skin)?;
        let capture = match capture {
            true => Some(CaptureBuffer::new(
                d,
                path.capture_layout().expect("capture layout"),
                mesh.vertex_count() as usize * 16,
            )?),
            false => None,
        };
        Ok(Self {
            frames: FramesInFlight::new(d, 2)?,
            target: OffscreenTarget::new(d, size, size)?,
            frame_sets: FrameSets::new(d, 2)?,
            capture,
            animator,
            mesh,
            path,
        })
    }

    /// One frame of `count` instances: animated on the GPU from `records`
    /// at `now`, or (`cpu`) with the palettes the host writes. Returns
    /// the palette blocks (instance-major) and the captured vertices.
    fn frame(
        &mut self,
        gpu: &GpuTest,
        count: usize,
        records: Option<(&[AnimRecord], f32)>,
        cpu: Option<&[Vec<Affine3A>]>,
    ) -> (Vec<[f32; 4]>, usize, Vec<CapturedVertex>) {
        let d = &gpu.device;
        let vc = self.mesh.vertex_count() as usize;
        if let Some(c) = &self.capture {
            if c.capacity() < count * vc {
                let layout = self.path.capture_layout().expect("layout");
                self.capture = Some(CaptureBuffer::new(d, layout, count * vc).expect("capture"));
            }
        }
        let frame = self.frames.begin().expect("begin");
        let idx = frame.index;
        self.path.begin_frame(idx).expect("begin frame");
        self.animator.begin_frame(idx).expect("begin animator");
        let mut w = self.path.batch(idx, &self.mesh, count).expect("batch");
        let batch = w.batch();
        match cpu {
            Some(skins) => {
                w.write_all(|i| (&skins[i], Affine3A::IDENTITY, [1.0; 4]))
                    .expect("write palettes");
            }
            None => w
                .write_records(|_| (Affine3A::IDENTITY, [1.0; 4]))
                .expect("records"),
        }
        let camera = Camera::look_at(
            Vec3::new(0.0, 1.0, 6.0),
            Vec3::ZERO,
            Vec3::Y,
            Projection::Perspective {
                fov_y: 50f32.to_radians(),
                near: 0.5,
                far: 40.0,
            },
        );
        self.frame_sets
            .write(
                idx,
                &FrameUniforms {
                    view_proj: camera.view_proj(1.0).to_cols_array_2d(),
                    color: [1.0; 4],
                    light: [0.3, 0.5, 1.0, 1.0],
                },
            )
            .expect("uniforms");
        if let Some(c) = &mut self.capture {
            let (v, first) = batch.capture_target();
            c.set_target(v, first).expect("capture target");
            c.barrier_before_draw(d, frame.cmd);
        }
        if let Some((records, now)) = records {
            self.animator
                .record(frame.cmd, &self.path, idx, &batch, records, now)
                .expect("record animation");
        }
        self.path
            .prepass(frame.cmd, idx, &[(&batch, &self.mesh)])
            .expect("prepass");
        self.target.begin(frame.cmd, [0.0, 0.0, 0.0, 1.0]);
        self.path
            .record_draw(
                frame.cmd,
                idx,
                &self.frame_sets,
                &batch,
                &self.mesh,
                vkskin::gpu::vk::PolygonMode::FILL,
                self.capture.as_ref(),
            )
            .expect("draw");
        self.target.end_and_copy(frame.cmd);
        self.path.finish(frame.cmd, idx).expect("finish");
        self.animator.barrier_to_host(frame.cmd);
        if let Some(c) = &self.capture {
            c.barrier_to_host(d, frame.cmd);
        }
        self.frames.submit(&frame, None, None).expect("submit");
        self.frames.wait(&frame).expect("wait");
        let stride = batch.palette_stride();
        let palettes = self
            .path
            .palette_buffer(idx)
            .expect("palette buffer")
            .read::<[f32; 4]>((batch.palette_base() * 16) as u64, count * stride)
            .expect("read palettes");
        let captured = match &self.capture {
            Some(c) => c.read(count * vc).expect("read capture"),
            None => Vec::new(),
        };
        (palettes, stride, captured)
    }
}

/// A model and the clips its instances play.
struct Case {
    label: String,
    model: Model,
    clips: Vec<Clip>,
}

fn builtin_cases() -> Vec<Case> {
    let character = Character::model();
    let mut tree = procedural::bench_character(400, 300).expect("tree");
    let tree_clips = varied_clips(&tree.skeleton, 11);
    tree.clips.clear();
    let mut chain = procedural::many_joints(200).expect("chain");
    let chain_clips = varied_clips(&chain.skeleton, 12);
    chain.clips.clear();
    vec![
        Case {
            label: "character".into(),
            clips: character.clips.clone(),
            model: character,
        },
        Case {
            label: "tree-300".into(),
            model: tree,
            clips: tree_clips,
        },
        Case {
            label: "chain-200".into(),
            model: chain,
            clips: chain_clips,
        },
    ]
}

fn asset_cases() -> Vec<Case> {
    let Some(dir) = vkskin_tests::assets_dir() else {
        return Vec::new();
    };
    ["x/tiny_4anim.x", "gltf/Fox.glb"]
        .iter()
        .map(|name| {
            let model = vkskin::assets::load(dir.join(name)).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                model.clips.len() >= 3,
                "{name}: {} clips",
                model.clips.len()
            );
            Case {
                label: name.to_string(),
                clips: model.clips.clone(),
                model,
            }
        })
        .collect()
}

/// Compares one instance's palette (GPU against CPU), entry by entry:
/// translations within `TOL * extent`, the rest within `TOL`. Returns the
/// largest difference as a share of its tolerance.
fn compare(label: &str, desc: &PathDesc, gpu: &[[f32; 4]], cpu: &[[f32; 4]], extent: f32) -> f32 {
    assert_eq!(gpu.len(), cpu.len());
    let name = desc.encoding.name();
    let per_bone = gpu_encoder_rows(name).expect("encoder");
    let mut worst = 0.0f32;
    for (v, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let row = v % per_bone;
        for k in 0..4 {
            let tol = if is_translation(per_bone, name, row, k) {
                TOL * extent
            } else {
                TOL
            };
            let diff = (g[k] - c[k]).abs();
            worst = worst.max(diff / tol);
            assert!(
                diff <= tol,
                "{label} on {}: vec4 {v} component {k}: GPU {:?} CPU {:?} (difference {diff}, tolerance {tol})",
                desc.name,
                g,
                c
            );
        }
    }
    worst
}

fn check_case(gpu: &GpuTest, case: &Case, paths: &[&'static PathDesc], count: usize, seed: u64) {
    let store = Arc::new(
        GpuClipStore::new(&gpu.device, &case.model.skeleton, &case.clips).expect("clip store"),
    );
    let records = random_records(count, case.clips.len(), seed);
    let now = 0.37;
    let skin: &Skin = &case.model.skins[case.model.meshes[0].skin];
    let skins: Vec<Vec<Affine3A>> = records
        .iter()
        .map(|r| cpu_skin(&case.model.skeleton, &case.clips, skin, r, now))
        .collect();
    let extent = bind_extent(&case.model.skeleton);
    for &desc in paths {
        let mut rig = Rig::new(gpu, desc, &case.model, &store, false)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", case.label, desc.name));
        let (palettes, stride, _) = rig.frame(gpu, count, Some((&records, now)), None);
        let parts = rig.mesh.parts().to_vec();
        let mut worst = 0.0f32;
        for (i, s) in skins.iter().enumerate() {
            let want = cpu_block(desc, &parts, s, stride);
            let got = &palettes[i * stride..(i + 1) * stride];
            let per_bone = gpu_encoder_rows(desc.encoding.name()).expect("rows");
            let used: usize = parts
                .iter()
                .map(|p| p.palette_offset + p.bones.len() * per_bone)
                .max()
                .unwrap_or(0);
            let w = compare(
                &format!("{} instance {i} ({:?})", case.label, records[i]),
                desc,
                &got[..used],
                &want[..used],
                extent,
            );
            worst = worst.max(w);
        }
        println!(
            "{} on {}: {count} instances, largest difference {:.2} of the tolerance",
            case.label, desc.name, worst
        );
        drop(rig);
        gpu.assert_clean();
    }
}

#[test]
fn gpu_palettes_equal_the_cpu_animation_layers_on_every_instanced_path() {
    let gpu = GpuTest::new();
    let paths = instanced_paths();

    for (k, case) in builtin_cases().iter().enumerate() {
        check_case(&gpu, case, &paths, 256, 100 + k as u64);
    }
    gpu.finish();
}

#[test]
fn gpu_palettes_equal_the_cpu_on_the_asset_clips() {
    let cases = asset_cases();
    if cases.is_empty() {
        return;
    }
    let gpu = GpuTest::new();
    let paths = instanced_paths();
    for (k, case) in cases.iter().enumerate() {
        check_case(&gpu, case, &paths, 256, 200 + k as u64);
    }
    gpu.finish();
}

/// Skinned vertices through GPU animation equal those through CPU
/// palettes (the same records animated by the CPU layer) within 1e-5 of
/// the bounding-box diagonal, on a path of each instanced storage and on
/// the compute stage.
#[test]
fn skinned_vertices_through_gpu_animation_equal_cpu_animation() {
    let gpu = GpuTest::new();
    let mut model = procedural::bench_character(300, 24).expect("character");
    let clips = varied_clips(&model.skeleton, 21);
    model.clips.clear();
    let store = Arc::new(GpuClipStore::new(&gpu.device, &model.skeleton, &clips).expect("store"));
    let count = 12;
    let records = random_records(count, clips.len(), 22);
    let now = 1.3;
    let skin = &model.skins[0];
    let skins: Vec<Vec<Affine3A>> = records
        .iter()
        .map(|r| cpu_skin(&model.skeleton, &clips, skin, r, now))
        .collect();
    for name in [
        "4x3-texel",
        "dq-ssbo",
        "dq-scale-bda",
        "qt-texel",
        "4x3-compute",
    ] {
        let desc = vkskin::skin::find(name).expect("path");
        let mut rig =
            Rig::new(&gpu, desc, &model, &store, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, _, got) = rig.frame(&gpu, count, Some((&records, now)), None);
        let (_, _, want) = rig.frame(&gpu, count, None, Some(&skins));
        assert_eq!(got.len(), want.len());
        let points: Vec<Vec3> = want
            .iter()
            .map(|v| Vec3::new(v.position[0], v.position[1], v.position[2]))
            .collect();
        let diag = vkskin_tests::diagonal(&points);
        assert!(diag > 0.1, "{name}: diagonal {diag}");
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| {
                (0..3)
                    .map(|k| (g.position[k] - w.position[k]).abs())
                    .fold(0.0f32, f32::max)
            })
            .fold(0.0f32, f32::max);
        assert!(
            worst <= TOL * diag,
            "{name}: skinned positions differ by {worst} (diagonal {diag})"
        );
        drop(rig);
        gpu.assert_clean();
    }
    drop(store);
    gpu.finish();
}

/// Vertices and joints of the 100,000-instance test's character
/// (`procedural::bench_character`: eight limbs of tubes).
const CROWD_VERTICES: usize = 300;
const CROWD_JOINTS: usize = 16;
/// Its path and target side: see [`a_hundred_thousand_instances_animate_and_draw`].
const CROWD_PATH: &str = "4x3-texel";
const CROWD_TARGET: u32 = 16;

/// 100,000 instances of a small character (`bench_character`: about 300
/// vertices, 16 joints) animated on the GPU and drawn for 3 frames into
/// a 16x16 target, validation silent: the host writes a 32-byte
/// animation record and the 64-byte instance record per instance instead
/// of the palettes. 30 million skinned vertices a frame; what lavapipe
/// took on this machine's two shared cores per path and target is in
/// docs/gpu-animation.md: the texel storage skins and draws them about
/// twice as fast as ssbo there; the compute stage's skinned output (358
/// MB) is past lavapipe's maxStorageBufferRange.
#[test]
fn a_hundred_thousand_instances_animate_and_draw() {
    let gpu = GpuTest::new();
    let mut model =
        procedural::bench_character(CROWD_VERTICES, CROWD_JOINTS).expect("small character");
    let vertices = model.meshes[0].vertex_count();
    assert!(
        (200..=500).contains(&vertices),
        "a small character: {vertices} vertices"
    );
    let clips = varied_clips(&model.skeleton, 31);
    model.clips.clear();
    let store = Arc::new(GpuClipStore::new(&gpu.device, &model.skeleton, &clips).expect("store"));
    let n = 100_000;
    let desc = vkskin::skin::find(CROWD_PATH).expect("path");
    let mut rig = Rig::with_size(&gpu, desc, &model, &store, false, CROWD_TARGET).expect("rig");
    let records = random_records(n, clips.len(), 32);
    let mut last = Vec::new();
    for f in 0..3 {
        let (palettes, stride, _) = rig.frame(&gpu, n, Some((&records, f as f32 / 30.0)), None);
        assert_eq!(palettes.len(), n * stride);
        // Spot checks against the CPU layer, first, middle and last.
        for i in [0, n / 2, n - 1] {
            let want = cpu_block(
                desc,
                rig.mesh.parts(),
                &cpu_skin(
                    &model.skeleton,
                    &clips,
                    &model.skins[0],
                    &records[i],
                    f as f32 / 30.0,
                ),
                stride,
            );
            let got = &palettes[i * stride..(i + 1) * stride];
            compare(
                &format!("instance {i} frame {f}"),
                desc,
                got,
                &want,
                bind_extent(&model.skeleton),
            );
        }
        assert_ne!(palettes, last, "frame {f}: nothing moved");
        last = palettes;
        let instance = std::mem::size_of::<vkskin::skin::InstanceRecord>();
        let gpu_bytes = n * (std::mem::size_of::<AnimRecord>() + instance);
        let cpu_bytes = n * (stride * 16 + instance);
        println!(
            "frame {f}: {n} instances of {vertices} vertices, {} joints on {CROWD_PATH}: \
             the host writes {gpu_bytes} bytes (animation \
             and instance records) against {cpu_bytes} with CPU palettes ({:.1}x)",
            model.skeleton.len(),
            cpu_bytes as f64 / gpu_bytes as f64
        );
    }
    drop(rig);
    drop(store);
    gpu.finish();
}

/// A skeleton whose joints do not fit one workgroup's shared memory is an
/// `Err` naming maxComputeSharedMemorySize; bad records are `Err`s naming
/// the record.
#[test]
fn limits_are_asked_of_the_device_and_bad_records_refused() {
    let gpu = GpuTest::new();
    let limit = gpu.device.limits().max_compute_shared_memory_size as usize;
    let joints = limit / 48 + 1;
    let mut model = procedural::many_joints(joints).expect("chain");
    let clips = std::mem::take(&mut model.clips);
    let store = Arc::new(GpuClipStore::new(&gpu.device, &model.skeleton, &clips).expect("store"));
    let desc = vkskin::skin::find("4x3-ssbo").expect("path");
    match Rig::new(&gpu, desc, &model, &store, false) {
        Err(e) => assert!(e.to_string().contains("maxComputeSharedMemorySize"), "{e}"),
        Ok(_) => panic!("{joints} joints fit {limit} bytes of shared memory?"),
    }
    drop(store);
    // A path built without gpu_animation, and a windowed storage.
    let small = procedural::bench_character(100, 4).expect("small");
    let small_clips = varied_clips(&small.skeleton, 41);
    let store =
        Arc::new(GpuClipStore::new(&gpu.device, &small.skeleton, &small_clips).expect("store"));
    let err = Rig::new(
        &gpu,
        vkskin::skin::find("4x3-ubo").expect("ubo"),
        &small,
        &store,
        false,
    )
    .err()
    .expect("ubo refused");
    assert!(err.to_string().contains("instanced"), "{err}");
    let mut rig = Rig::new(&gpu, desc, &small, &store, false).expect("rig");
    let bad = [AnimRecord::play(
        7,
        0.0,
        1.0,
        vkskin::anim::PlaybackMode::Loop,
    )];
    let frame = rig.frames.begin().expect("begin");
    rig.path.begin_frame(frame.index).expect("begin");
    rig.animator.begin_frame(frame.index).expect("begin");
    let batch = rig
        .path
        .batch(frame.index, &rig.mesh, 1)
        .expect("batch")
        .batch();
    let e = rig
        .animator
        .record(frame.cmd, &rig.path, frame.index, &batch, &bad, 0.0)
        .expect_err("clip 7 of 3");
    assert!(e.to_string().contains("record 0"), "{e}");
    rig.frames.abandon(&frame).expect("abandon");
    drop(rig);
    drop(store);
    gpu.finish();
}

/// Compressed clips (`CompressionJob` at 1 mm at 10 cm) decoded by the
/// animate shader (`shaders/anim/sample_packed.glsl`): the palettes equal
/// the CPU animation layer's sampling of the same compressed clips within
/// the tolerances above, on every instanced path, over the built-in
/// character, a 60-joint tree with every interpolation, and Fox's clips
/// when the shared assets are present. Also says what the
/// store costs on the GPU, compressed against flat.
#[test]
fn gpu_palettes_from_compressed_clips_equal_the_cpu_sampling_of_them() {
    use vkskin::anim::{CompressionJob, Tolerance};
    let compress = |case: Case| -> Case {
        let clips: Vec<Clip> = case
            .clips
            .iter()
            .map(|c| {
                CompressionJob {
                    clip: c,
                    skeleton: &case.model.skeleton,
                    tolerance: Tolerance::OZZ_DEFAULT,
                }
                .run()
                .unwrap_or_else(|e| panic!("{}: {e}", case.label))
            })
            .collect();
        Case {
            label: format!("{} compressed", case.label),
            model: case.model,
            clips,
        }
    };
    let mut tree = procedural::bench_character(400, 60).expect("tree");
    let tree_clips = varied_clips(&tree.skeleton, 13);
    tree.clips.clear();
    let character = Character::model();
    let mut cases = vec![
        Case {
            label: "character".into(),
            clips: character.clips.clone(),
            model: character,
        },
        Case {
            label: "tree-60".into(),
            model: tree,
            clips: tree_clips,
        },
    ];
    // Fox's three clips (tiny_4anim.x's take minutes to compress in a
    // debug build: docs/compression.md).
    cases.extend(
        asset_cases()
            .into_iter()
            .filter(|c| c.label.contains("Fox")),
    );
    let cases: Vec<(usize, Case)> = cases
        .into_iter()
        .map(|c| {
            let flat = vkskin::skin::anim::store_bytes(c.model.skeleton.len(), &c.clips)
                .expect("flat store bytes");
            (flat, compress(c))
        })
        .collect();
    let gpu = GpuTest::new();
    let paths = instanced_paths();
    for (k, (flat, case)) in cases.iter().enumerate() {
        assert!(case.clips.iter().all(|c| c.compressed().is_some()));
        let store = GpuClipStore::new(&gpu.device, &case.model.skeleton, &case.clips)
            .expect("compressed store");
        println!(
            "{}: GPU clip store {} bytes compressed, {} bytes flat",
            case.label,
            store.bytes(),
            flat
        );
        drop(store);
        check_case(&gpu, case, &paths, 256, 300 + k as u64);
    }
    gpu.finish();
}
