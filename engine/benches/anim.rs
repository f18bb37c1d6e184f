//! CPU animation benchmarks on ozz-animation's workloads, so the figures
//! compare: balanced binary-tree (node i has children 2i+1, 2i+2) and chain
//! skeletons of 64 and 256 joints; one 1 s clip with 30 keys per track on
//! translation, rotation and scale; time advancing 1/60 s per sample and
//! looping, or seeking at random; skinning 100,000 vertices with a 64-joint
//! palette.
//!
//! `cargo bench -p vkskin --no-default-features --bench anim` runs criterion
//! (elements = joints or vertices) and then prints a summary table in ns per
//! joint / per vertex (and the bench clip's bytes per joint) beside the
//! targets, also written to `target/anim-bench.csv`. Compare with
//! ozz-animation only side by side, in one run on one machine:
//! the ozz-bench harness (kept outside this repository; see
//! `tools/ozz-bench-device.sh`) reads this summary's row names, and
//! `cargo run -p anim-compare -- RUNS_DIR` draws its run.
//!
//! The pose rows (sampling, local-to-model, the blend, the frame) run on
//! `SoaPose`s, structure-of-arrays poses as ozz's own; the rows ending in
//! `, transforms` run the same jobs on `Transform` slices.
//!
//! `ANIM_BENCH_SUMMARY_ONLY=1` skips criterion and prints the summary only;
//! `ANIM_BENCH_ONLY=text` keeps the summary rows whose name contains it;
//! `ANIM_BENCH_VERTICES=n` skins n vertices instead of 100,000, and
//! `ANIM_BENCH_OUT_MOD64=m` places the skinning outputs m bytes past a
//! cache line (`out_offset`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use vkskin::anim::*;
use vkskin::glam::{Affine3A, EulerRot, Mat3A, Quat, Vec3};

const KEYS: usize = 30;
const VERTICES_DEFAULT: usize = 100_000;

/// Where the skinning jobs' outputs start in their buffers (`n + 16`
/// vertices long): the buffer's start by default (a large `Vec` from glibc
/// lies 16 bytes past a page), or, with `ANIM_BENCH_OUT_MOD64=m` (0, 16, 32
/// or 48: the skinning kernels' 32-byte stores split cache lines or not),
/// the first vertex whose address is `m` past a 64-byte line.
fn out_offset(buffer: &[Vec3]) -> usize {
    match std::env::var("ANIM_BENCH_OUT_MOD64")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        None => 0,
        Some(m) => (0..16)
            .find(|o| (buffer.as_ptr() as usize + 12 * o) % 64 == m % 64)
            .expect("ANIM_BENCH_OUT_MOD64: a multiple of 4"),
    }
}

/// The `n` output vertices of each buffer from `at` ([`out_offset`]).
fn outputs<'a>(
    p: &'a mut [Vec3],
    q: &'a mut [Vec3],
    (a, b): (usize, usize),
    n: usize,
) -> (&'a mut [Vec3], &'a mut [Vec3]) {
    (&mut p[a..a + n], &mut q[b..b + n])
}

/// `ANIM_BENCH_VERTICES` overrides the vertex count (to tell cache misses
/// from arithmetic).
fn vertices() -> usize {
    std::env::var("ANIM_BENCH_VERTICES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(VERTICES_DEFAULT)
}
const PALETTE: usize = 64;

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Tree,
    Chain,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Tree => "tree",
            Shape::Chain => "chain",
        }
    }
}

fn skeleton(shape: Shape, n: usize) -> Skeleton {
    let parents: Vec<Option<usize>> = (0..n)
        .map(|i| match (shape, i) {
            (_, 0) => None,
            (Shape::Tree, i) => Some((i - 1) / 2),
            (Shape::Chain, i) => Some(i - 1),
        })
        .collect();
    let names = (0..n).map(|i| format!("joint{i}")).collect();
    let bind = (0..n)
        .map(|i| {
            Transform::from_translation_rotation(
                Vec3::new(0.0, 0.1, 0.0),
                Quat::from_rotation_z(0.01 * i as f32),
            )
        })
        .collect();
    match Skeleton::new(names, &parents, bind) {
        Ok((s, _)) => s,
        Err(e) => panic!("bench skeleton: {e}"),
    }
}

/// 30 keys per track over 1 s on translation, rotation and scale. With
/// `shared_times` every track has the same key times (what exporters
/// produce); without, each track's times are jittered so no two tracks share
/// a timeline (the worst case for this engine's layout).
fn clip(skeleton: &Skeleton, rotation: Interpolation, shared_times: bool, seed: u64) -> Clip {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let times = |rng: &mut rand::rngs::StdRng| -> Vec<f32> {
        (0..KEYS)
            .map(|k| {
                let base = k as f32 / (KEYS - 1) as f32;
                if shared_times || k == 0 || k == KEYS - 1 {
                    base
                } else {
                    base + rng.gen_range(-0.3..0.3) / (KEYS - 1) as f32
                }
            })
            .collect()
    };
    let tracks = (0..skeleton.len())
        .map(|j| {
            let mut t = RawJointTrack::new(j);
            let tt = times(&mut rng);
            t.translation = RawTrack::new(
                Interpolation::Linear,
                tt,
                (0..KEYS)
                    .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
                    .collect(),
            );
            let tr = times(&mut rng);
            let mut q = Quat::IDENTITY;
            t.rotation = RawTrack::new(
                rotation,
                tr,
                (0..KEYS)
                    .map(|_| {
                        q = (Quat::from_euler(
                            EulerRot::XYZ,
                            rng.gen_range(-0.3..0.3),
                            rng.gen_range(-0.3..0.3),
                            rng.gen_range(-0.3..0.3),
                        ) * q)
                            .normalize();
                        q
                    })
                    .collect(),
            );
            let ts = times(&mut rng);
            t.scale = RawTrack::new(
                Interpolation::Linear,
                ts,
                (0..KEYS)
                    .map(|_| Vec3::splat(rng.gen_range(0.9..1.1)))
                    .collect(),
            );
            t
        })
        .collect();
    let raw = RawClip {
        name: "bench".into(),
        duration: 1.0,
        tracks,
        weights: Vec::new(),
    };
    match Clip::build(&raw, skeleton) {
        Ok(c) => c,
        Err(e) => panic!("bench clip: {e}"),
    }
}

/// The bench clip (seed 7) compressed at ozz's default tolerance.
fn compressed(shape: Shape, n: usize, interp: Interpolation, shared: bool) -> Clip {
    let skel = skeleton(shape, n);
    let raw = clip(&skel, interp, shared, 7);
    match (CompressionJob {
        clip: &raw,
        skeleton: &skel,
        tolerance: Tolerance::OZZ_DEFAULT,
    })
    .run()
    {
        Ok(c) => c,
        Err(e) => panic!("compressing the bench clip: {e}"),
    }
}

struct Sampler {
    clip: Clip,
    ctx: SamplingContext,
    out: Vec<Transform>,
    soa: SoaPose,
    t: f32,
    seeks: Vec<f32>,
    next: usize,
}

impl Sampler {
    fn new(clip: Clip) -> Self {
        let mut rng = rand::rngs::StdRng::seed_from_u64(99);
        Self {
            ctx: SamplingContext::new(&clip),
            out: vec![Transform::IDENTITY; clip.joint_count()],
            soa: SoaPose::identity(clip.joint_count()),
            clip,
            t: 0.0,
            seeks: (0..4096).map(|_| rng.gen_range(0.0..1.0)).collect(),
            next: 0,
        }
    }
    fn time(&mut self, seek: bool) -> f32 {
        if seek {
            self.next = (self.next + 1) % self.seeks.len();
            self.seeks[self.next]
        } else {
            self.t += 1.0 / 60.0;
            if self.t > 1.0 {
                self.t -= 1.0;
            }
            self.t
        }
    }
    fn step(&mut self, seek: bool) {
        let time = self.time(seek);
        black_box(self.out.sample(&self.clip, &mut self.ctx, time));
        black_box(&self.out);
    }
    /// [`Sampler::step`] into a SoA pose.
    fn step_soa(&mut self, seek: bool) {
        let time = self.time(seek);
        black_box(self.soa.sample(&self.clip, &mut self.ctx, time));
        black_box(&self.soa);
    }
}

/// One character's frame on the CPU: two clips sampled, cross-faded and
/// taken to model space, through transforms or SoA poses.
struct Frame {
    skeleton: Skeleton,
    clips: [Clip; 2],
    ctx: [SamplingContext; 2],
    t: f32,
    aos: [Vec<Transform>; 3],
    soa: [SoaPose; 3],
    models: Vec<Affine3A>,
}

impl Frame {
    fn new(shape: Shape, n: usize) -> Self {
        let skeleton = skeleton(shape, n);
        let clips = [
            clip(&skeleton, Interpolation::Linear, true, 7),
            clip(&skeleton, Interpolation::Linear, true, 8),
        ];
        Self {
            ctx: [
                SamplingContext::new(&clips[0]),
                SamplingContext::new(&clips[1]),
            ],
            clips,
            t: 0.0,
            aos: std::array::from_fn(|_| vec![Transform::IDENTITY; n]),
            soa: std::array::from_fn(|_| SoaPose::identity(n)),
            models: vec![Affine3A::IDENTITY; n],
            skeleton,
        }
    }
    fn step(&mut self, soa: bool) {
        self.t = (self.t + 1.0 / 60.0) % 1.0;
        let times = [self.t, (self.t + 0.37) % 1.0];
        let (sk, clips, ctx, m) = (&self.skeleton, &self.clips, &mut self.ctx, &mut self.models);
        let ok = if soa {
            frame(&mut self.soa, sk, clips, ctx, times, m)
        } else {
            frame(&mut self.aos, sk, clips, ctx, times, m)
        };
        black_box(ok);
        black_box(&self.models);
    }
}

/// A pose layout's jobs, for [`frame`].
trait FramePose {
    fn sample(&mut self, clip: &Clip, context: &mut SamplingContext, time: f32) -> bool;
    /// `a` and `b` cross-faded 0.3 / 0.7 (rest pose `rest`, threshold 0.1).
    fn blend(out: &mut Self, a: &Self, b: &Self, rest: &Self) -> bool;
    fn to_model(&self, skeleton: &Skeleton, models: &mut [Affine3A]) -> bool;
}

impl FramePose for Vec<Transform> {
    fn sample(&mut self, clip: &Clip, context: &mut SamplingContext, time: f32) -> bool {
        let mode = PlaybackMode::Loop;
        let output = self.as_mut_slice();
        SamplingJob {
            clip,
            context,
            time,
            mode,
            output,
        }
        .run()
        .is_ok()
    }
    fn blend(output: &mut Self, a: &Self, b: &Self, rest: &Self) -> bool {
        let layers = [BlendLayer::new(a, 0.3), BlendLayer::new(b, 0.7)];
        let (additive, threshold) = (&[][..], 0.1);
        BlendingJob {
            layers: &layers,
            additive,
            rest_pose: rest,
            threshold,
            output,
        }
        .run()
        .is_ok()
    }
    fn to_model(&self, skeleton: &Skeleton, models: &mut [Affine3A]) -> bool {
        LocalToModelJob::full(skeleton, self, models).run().is_ok()
    }
}

impl FramePose for SoaPose {
    fn sample(&mut self, clip: &Clip, context: &mut SamplingContext, time: f32) -> bool {
        let mode = PlaybackMode::Loop;
        SoaSamplingJob {
            clip,
            context,
            time,
            mode,
            output: self,
        }
        .run()
        .is_ok()
    }
    fn blend(output: &mut Self, a: &Self, b: &Self, rest: &Self) -> bool {
        let layers = [SoaBlendLayer::new(a, 0.3), SoaBlendLayer::new(b, 0.7)];
        let (additive, threshold) = (&[][..], 0.1);
        SoaBlendingJob {
            layers: &layers,
            additive,
            rest_pose: rest,
            threshold,
            output,
        }
        .run()
        .is_ok()
    }
    fn to_model(&self, skeleton: &Skeleton, models: &mut [Affine3A]) -> bool {
        SoaLocalToModelJob::full(skeleton, self, models)
            .run()
            .is_ok()
    }
}

/// Two clips sampled at `times`, cross-faded 0.3 / 0.7, to model space.
fn frame<P: FramePose>(
    [a, b, out]: &mut [P; 3],
    skeleton: &Skeleton,
    clips: &[Clip; 2],
    ctx: &mut [SamplingContext; 2],
    times: [f32; 2],
    models: &mut [Affine3A],
) -> bool {
    let [ca, cb] = ctx;
    a.sample(&clips[0], ca, times[0])
        && b.sample(&clips[1], cb, times[1])
        && P::blend(out, a, b, a)
        && out.to_model(skeleton, models)
}

struct Skinning {
    palette: Vec<Affine3A>,
    dq: Vec<DualQuat>,
    /// The two-phase variant's palette: the same bones with a non-uniform
    /// scale each, as dual quaternions and scale/shear matrices.
    dq_scaled: Vec<DualQuat>,
    scale_shear: Vec<Mat3A>,
    /// Bind positions and normals, prepared once here as a program
    /// skinning a loaded mesh every frame would: the LBS and DQS jobs run
    /// through `run_prepared`, whose AVX2 and AVX-512 kernels with two to
    /// four influences read their blocks of eight (the same numbers as the
    /// `Vec3` streams; ozz's job reads float3 arrays).
    bind: BindVertices,
    /// Checked once here, as a program skinning a loaded mesh every frame
    /// would: the jobs run through `run_checked`, which skips the per-call
    /// scan of every index (ozz's jobs check none).
    joints4: CheckedJoints,
    weights4: Vec<f32>,
    joints1: CheckedJoints,
    no_weights: Vec<f32>,
    /// The jobs' outputs: `n` vertices from `out_at` in these (`n + 16`
    /// long), see [`out_offset`].
    out_p: Vec<Vec3>,
    out_n: Vec<Vec3>,
    out_at: (usize, usize),
}

impl Skinning {
    fn new() -> Self {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let n = vertices();
        let palette: Vec<Affine3A> = (0..PALETTE)
            .map(|_| {
                Affine3A::from_rotation_translation(
                    Quat::from_euler(
                        EulerRot::XYZ,
                        rng.gen_range(-3.0..3.0),
                        rng.gen_range(-1.5..1.5),
                        rng.gen_range(-3.0..3.0),
                    ),
                    Vec3::new(rng.gen(), rng.gen(), rng.gen()),
                )
            })
            .collect();
        let mut dq = vec![DualQuat::default(); PALETTE];
        let _ = encode_dual_quat(&palette, &PaletteHierarchy::flat(PALETTE), &mut dq);
        let scaled: Vec<Affine3A> = palette
            .iter()
            .map(|m| {
                *m * Affine3A::from_scale(Vec3::new(
                    rng.gen_range(0.5..2.0),
                    rng.gen_range(0.5..2.0),
                    rng.gen_range(0.5..2.0),
                ))
            })
            .collect();
        let mut dq_scaled = vec![DualQuat::default(); PALETTE];
        let mut scale_shear = vec![Mat3A::IDENTITY; PALETTE];
        let _ = encode_dual_quat_scale(
            &scaled,
            &PaletteHierarchy::flat(PALETTE),
            &mut dq_scaled,
            &mut scale_shear,
        );
        let mut joints4 = Vec::with_capacity(n * 4);
        let mut weights4 = Vec::with_capacity(n * 4);
        for _ in 0..n {
            let w: [f32; 4] = std::array::from_fn(|_| rng.gen_range(0.05..1.0));
            let s: f32 = w.iter().sum();
            for wi in w {
                joints4.push(rng.gen_range(0..PALETTE as u16));
                weights4.push(wi / s);
            }
        }
        let positions: Vec<Vec3> = (0..n)
            .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
            .collect();
        let normals: Vec<Vec3> = (0..n)
            .map(|_| {
                Vec3::new(
                    rng.gen::<f32>() - 0.5,
                    rng.gen::<f32>() - 0.5,
                    rng.gen::<f32>() - 0.5,
                )
                .normalize()
            })
            .collect();
        let (out_p, out_n) = (vec![Vec3::ZERO; n + 16], vec![Vec3::ZERO; n + 16]);
        let s = Self {
            palette,
            dq,
            dq_scaled,
            scale_shear,
            bind: BindVertices::new(positions, normals).expect("bind vertices"),
            joints1: CheckedJoints::new((0..n).map(|_| rng.gen_range(0..PALETTE as u16)).collect()),
            no_weights: Vec::new(),
            joints4: CheckedJoints::new(joints4),
            weights4,
            out_at: (out_offset(&out_p), out_offset(&out_n)),
            out_p,
            out_n,
        };
        assert!(normals_are_unit(s.bind.normals()), "bench normals are unit");
        s
    }
    /// LBS with `k` influences, with or without normals; `unit`: the job is
    /// told the normals are unit (they are: `Skinning::new` checks).
    fn lbs(&mut self, k: usize, with_normals: bool, unit: bool) {
        let (joints, weights) = if k == 4 {
            (&self.joints4, &self.weights4)
        } else {
            // One influence: no weights (each is 1), as ozz reads k - 1.
            (&self.joints1, &self.no_weights)
        };
        let (palette, bind) = (&self.palette, &self.bind);
        let n = bind.positions().len();
        let (out_positions, out_n) = outputs(&mut self.out_p, &mut self.out_n, self.out_at, n);
        let (normals, out_normals): (&[Vec3], &mut [Vec3]) = if with_normals {
            (bind.normals(), out_n)
        } else {
            (&[], &mut [])
        };
        let r = LinearBlendJob {
            skin: palette,
            per_vertex: k,
            joints: joints.as_slice(),
            weights,
            positions: bind.positions(),
            normals,
            out_positions,
            out_normals,
            unit_normals: unit,
        }
        .run_prepared(joints, bind);
        // An error would time the checks alone: fail loudly instead.
        black_box(r).expect("LBS job");
    }
    /// DQS with 4 influences and normals; `scaled`: the two-phase variant.
    fn dqs(&mut self, scaled: bool) {
        let (palette, scale_shear): (&[DualQuat], &[Mat3A]) = if scaled {
            (&self.dq_scaled, &self.scale_shear)
        } else {
            (&self.dq, &[])
        };
        let n = self.bind.positions().len();
        let (out_positions, out_normals) =
            outputs(&mut self.out_p, &mut self.out_n, self.out_at, n);
        let r = DualQuatSkinningJob {
            palette,
            scale_shear,
            per_vertex: 4,
            joints: &self.joints4,
            weights: &self.weights4,
            positions: self.bind.positions(),
            normals: self.bind.normals(),
            out_positions,
            out_normals,
        }
        .run_prepared(&self.joints4, &self.bind);
        black_box(r).expect("DQS job");
    }
}

/// Two poses to blend (the bench clip at two times), a rest pose and an
/// output, in one layout.
struct PoseSet<P> {
    a: P,
    b: P,
    rest: P,
    out: P,
}

struct Poses {
    skeleton: Skeleton,
    aos: PoseSet<Vec<Transform>>,
    soa: PoseSet<SoaPose>,
    models: Vec<Affine3A>,
    palette_skin: PaletteSkin,
    rows: Vec<Affine4x3>,
}

impl Poses {
    fn new(shape: Shape, n: usize) -> Self {
        let skeleton = skeleton(shape, n);
        let c = clip(&skeleton, Interpolation::Linear, true, 1);
        let mut s = Sampler::new(c);
        s.step(false);
        let a = s.out.clone();
        s.step(true);
        let b = s.out.clone();
        let rest = skeleton.bind_local().to_vec();
        let skin = Skin::whole_skeleton(&skeleton);
        let mut p = Self {
            soa: PoseSet {
                a: SoaPose::from_transforms(&a),
                b: SoaPose::from_transforms(&b),
                rest: SoaPose::from_transforms(&rest),
                out: SoaPose::identity(n),
            },
            aos: PoseSet {
                a,
                b,
                rest,
                out: vec![Transform::IDENTITY; n],
            },
            models: vec![Affine3A::IDENTITY; n],
            rows: vec![Affine4x3::default(); n],
            palette_skin: PaletteSkin::new(&skin).expect("palette skin"),
            skeleton,
        };
        p.l2m();
        p
    }
    fn l2m(&mut self) {
        black_box(self.aos.a.to_model(&self.skeleton, &mut self.models));
        black_box(&self.models);
    }
    fn l2m_soa(&mut self) {
        black_box(self.soa.a.to_model(&self.skeleton, &mut self.models));
        black_box(&self.models);
    }
    fn blend(&mut self) {
        let p = &mut self.aos;
        black_box(FramePose::blend(&mut p.out, &p.a, &p.b, &p.rest));
        black_box(&p.out);
    }
    fn blend_soa(&mut self) {
        let p = &mut self.soa;
        black_box(FramePose::blend(&mut p.out, &p.a, &p.b, &p.rest));
        black_box(&p.out);
    }
    fn palette(&mut self) {
        let r = self.palette_skin.palette_4x3(&self.models, &mut self.rows);
        black_box(r.is_ok());
        black_box(&self.rows);
    }
}

fn criterion_benches(c: &mut Criterion) {
    for shape in [Shape::Tree, Shape::Chain] {
        for n in [64usize, 256] {
            let sk = skeleton(shape, n);
            let mut g = c.benchmark_group(format!("{}-{n}", shape.name()));
            g.throughput(Throughput::Elements(n as u64));
            for (interp, iname) in [
                (Interpolation::Linear, "linear"),
                (Interpolation::Squad, "squad"),
            ] {
                for shared in [true, false] {
                    let mut s = Sampler::new(clip(&sk, interp, shared, 7));
                    let tag = if shared { "" } else { "-unshared" };
                    g.bench_function(
                        BenchmarkId::new(format!("sample-{iname}{tag}"), "cached"),
                        |b| b.iter(|| s.step_soa(false)),
                    );
                    g.bench_function(
                        BenchmarkId::new(format!("sample-{iname}{tag}"), "seek"),
                        |b| b.iter(|| s.step_soa(true)),
                    );
                }
            }
            let mut p = Poses::new(shape, n);
            g.bench_function("local-to-model", |b| b.iter(|| p.l2m_soa()));
            g.bench_function("local-to-model-transforms", |b| b.iter(|| p.l2m()));
            g.bench_function("blend-2", |b| b.iter(|| p.blend_soa()));
            g.bench_function("blend-2-transforms", |b| b.iter(|| p.blend()));
            g.bench_function("palette-4x3", |b| b.iter(|| p.palette()));
            g.finish();
        }
    }
    let mut sk = Skinning::new();
    let mut g = c.benchmark_group("skinning-100k");
    g.throughput(Throughput::Elements(vertices() as u64));
    g.sample_size(20);
    g.bench_function("lbs-4-normals", |b| b.iter(|| sk.lbs(4, true, true)));
    g.bench_function("lbs-1-normals", |b| b.iter(|| sk.lbs(1, true, true)));
    g.bench_function("lbs-1-normals-renormalised", |b| {
        b.iter(|| sk.lbs(1, true, false))
    });
    g.bench_function("dqs-4-normals", |b| b.iter(|| sk.dqs(false)));
    g.bench_function("dqs-scale-4-normals", |b| b.iter(|| sk.dqs(true)));
    g.finish();
}

/// Time per element: the fastest of 41 runs of about 1 ms each after a
/// warm-up. The minimum, not the median, because this 2-core machine is
/// shared and other processes only ever add time; runs this short often
/// fall between two preemptions. Criterion's figures (above the summary)
/// are the contended means.
fn per_element(elements: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < Duration::from_millis(5) {
        f();
        calls += 1;
    }
    let calls_per_run = (calls / 5).max(1);
    (0..41)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls_per_run {
                f();
            }
            t.elapsed().as_nanos() as f64 / (calls_per_run as f64 * elements as f64)
        })
        .fold(f64::INFINITY, f64::min)
}

struct Row {
    what: String,
    unit: &'static str,
    tree64: f64,
    tree256: f64,
    chain64: f64,
    chain256: f64,
    target: Option<f64>,
}

fn summary() {
    let only = std::env::var("ANIM_BENCH_ONLY").unwrap_or_default();
    let wanted = |what: &str| only.is_empty() || what.contains(only.as_str());
    let mut rows: Vec<Row> = Vec::new();
    let mut joint_row =
        |what: &str, target: Option<f64>, mut f: Box<dyn FnMut(Shape, usize) -> f64>| {
            if !wanted(what) {
                return;
            }
            rows.push(Row {
                what: what.into(),
                unit: "ns/joint",
                tree64: f(Shape::Tree, 64),
                tree256: f(Shape::Tree, 256),
                chain64: f(Shape::Chain, 64),
                chain256: f(Shape::Chain, 256),
                target,
            });
        };
    for (name, interp, shared, seek, target) in [
        (
            "sample LINEAR, cached",
            Interpolation::Linear,
            true,
            false,
            Some(8.0),
        ),
        (
            "sample SQUAD, cached",
            Interpolation::Squad,
            true,
            false,
            Some(16.0),
        ),
        (
            "sample LINEAR, random seek",
            Interpolation::Linear,
            true,
            true,
            Some(40.0),
        ),
        (
            "sample SQUAD, random seek",
            Interpolation::Squad,
            true,
            true,
            Some(40.0),
        ),
        (
            "sample LINEAR, cached, unshared key times",
            Interpolation::Linear,
            false,
            false,
            Some(8.0),
        ),
        (
            "sample SQUAD, cached, unshared key times",
            Interpolation::Squad,
            false,
            false,
            Some(16.0),
        ),
        (
            "sample LINEAR, random seek, unshared key times",
            Interpolation::Linear,
            false,
            true,
            Some(40.0),
        ),
    ] {
        joint_row(
            name,
            target,
            Box::new(move |shape, n| {
                let mut s = Sampler::new(clip(&skeleton(shape, n), interp, shared, 7));
                per_element(n, || s.step_soa(seek))
            }),
        );
    }
    for (name, shared, seek) in [
        ("sample LINEAR, cached, transforms", true, false),
        ("sample LINEAR, random seek, transforms", true, true),
        (
            "sample LINEAR, cached, unshared key times, transforms",
            false,
            false,
        ),
        (
            "sample LINEAR, random seek, unshared key times, transforms",
            false,
            true,
        ),
    ] {
        joint_row(
            name,
            None,
            Box::new(move |shape, n| {
                let c = clip(&skeleton(shape, n), Interpolation::Linear, shared, 7);
                let mut s = Sampler::new(c);
                per_element(n, || s.step(seek))
            }),
        );
    }
    // The same bench clip compressed at ozz's default tolerance (1 mm at
    // 10 cm): sampled into a SoA pose, played forward and seeking.
    for (name, seek) in [
        ("sample compressed 1mm@10cm, cached", false),
        ("sample compressed 1mm@10cm, random seek", true),
    ] {
        joint_row(
            name,
            None,
            Box::new(move |shape, n| {
                let mut s = Sampler::new(compressed(shape, n, Interpolation::Linear, true));
                per_element(n, || s.step_soa(seek))
            }),
        );
    }
    joint_row(
        "local-to-model",
        Some(4.0),
        Box::new(|shape, n| {
            let mut p = Poses::new(shape, n);
            per_element(n, || p.l2m_soa())
        }),
    );
    joint_row(
        "local-to-model, transforms",
        None,
        Box::new(|shape, n| {
            let mut p = Poses::new(shape, n);
            per_element(n, || p.l2m())
        }),
    );
    joint_row(
        "two-layer blend",
        Some(2.0),
        Box::new(|shape, n| {
            let mut p = Poses::new(shape, n);
            per_element(n, || p.blend_soa())
        }),
    );
    joint_row(
        "two-layer blend, transforms",
        None,
        Box::new(|shape, n| {
            let mut p = Poses::new(shape, n);
            per_element(n, || p.blend())
        }),
    );
    for (name, soa) in [
        ("frame (sample two clips, blend, local-to-model)", true),
        (
            "frame (sample two clips, blend, local-to-model), transforms",
            false,
        ),
    ] {
        joint_row(
            name,
            None,
            Box::new(move |shape, n| {
                let mut f = Frame::new(shape, n);
                per_element(n, || f.step(soa))
            }),
        );
    }
    joint_row(
        "palette (skin matrices + 4x3)",
        None,
        Box::new(|shape, n| {
            let mut p = Poses::new(shape, n);
            per_element(n, || p.palette())
        }),
    );
    // Bytes the bench clip holds (linear, seed 7), per joint, for each
    // shape: ozz-bench prints `Animation::size()` under the same names.
    for (name, shared, packed) in [
        ("clip memory", true, false),
        ("clip memory, unshared key times", false, false),
        ("clip memory, compressed 1mm@10cm", true, true),
        (
            "clip memory, unshared key times, compressed 1mm@10cm",
            false,
            true,
        ),
    ] {
        if !wanted(name) {
            continue;
        }
        let per_joint = |shape: Shape, n: usize| {
            let c = if packed {
                compressed(shape, n, Interpolation::Linear, shared)
            } else {
                clip(&skeleton(shape, n), Interpolation::Linear, shared, 7)
            };
            c.bytes() as f64 / n as f64
        };
        rows.push(Row {
            what: name.into(),
            unit: "B/joint",
            tree64: per_joint(Shape::Tree, 64),
            tree256: per_joint(Shape::Tree, 256),
            chain64: per_joint(Shape::Chain, 64),
            chain256: per_joint(Shape::Chain, 256),
            target: None,
        });
    }
    let mut sk = Skinning::new();
    for (name, target, which) in [
        ("LBS, 4 influences, positions + normals", Some(3.5), 0),
        ("LBS, 1 influence, positions + normals", Some(2.0), 1),
        (
            "LBS, 1 influence, positions + normals, every normal renormalised",
            None,
            6,
        ),
        ("DQS, 4 influences, positions + normals", None, 2),
        (
            "DQS two-phase (scale/shear), 4 influences, positions + normals",
            None,
            5,
        ),
        ("LBS, 4 influences, positions only", None, 3),
        ("LBS, 1 influence, positions only", None, 4),
    ] {
        if !wanted(name) {
            continue;
        }
        let v = per_element(vertices(), || match which {
            0 => sk.lbs(4, true, true),
            1 => sk.lbs(1, true, true),
            6 => sk.lbs(1, true, false),
            3 => sk.lbs(4, false, false),
            4 => sk.lbs(1, false, false),
            5 => sk.dqs(true),
            _ => sk.dqs(false),
        });
        rows.push(Row {
            what: name.into(),
            unit: "ns/vertex",
            tree64: v,
            tree256: f64::NAN,
            chain64: f64::NAN,
            chain256: f64::NAN,
            target,
        });
    }
    let fmt = |x: f64| {
        if x.is_nan() {
            "-".to_string()
        } else {
            format!("{x:.2}")
        }
    };
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
    println!();
    println!("| workload | unit | tree 64 | tree 256 | chain 64 | chain 256 | target |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let mut csv = String::from("workload,unit,tree64,tree256,chain64,chain256,target\n");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.what,
            r.unit,
            fmt(r.tree64),
            fmt(r.tree256),
            fmt(r.chain64),
            fmt(r.chain256),
            opt(r.target)
        );
        csv += &format!(
            "\"{}\",{},{},{},{},{},{}\n",
            r.what,
            r.unit,
            r.tree64,
            r.tree256,
            r.chain64,
            r.chain256,
            r.target.map_or(String::new(), |v| v.to_string())
        );
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/anim-bench.csv");
    match std::fs::write(&path, csv) {
        Ok(()) => println!("\nwritten to {}", path.display()),
        Err(e) => println!("\ncould not write {}: {e}", path.display()),
    }
}

fn main() {
    if std::env::var_os("ANIM_BENCH_SUMMARY_ONLY").is_none() {
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .configure_from_args();
        criterion_benches(&mut c);
        c.final_summary();
    }
    summary();
}
