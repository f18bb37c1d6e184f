//! `gpu-bench`: every skinning path of the registry at 1, 16, 256, 1,024
//! and 10,000 instances of `procedural::bench_character(10_000, 64)`.
//!
//! First, per instance count, the CPU animation alone (sample,
//! local-to-model, skinning matrices, into a sink that keeps nothing) on
//! one thread and on all threads, a crowd for each. Then per path and
//! instance count, after a warm-up frame, each timed frame: animates a
//! twin of the crowd alone on all threads, animates the crowd on all
//! threads straight into the path's mapped storage (`BatchWriter::animate`;
//! upload = that time less the twin's), draws one 256x256 offscreen frame
//! with depth, and reads the path's GPU timestamps (`SkinPath::gpu_ms`,
//! from the prepass through the draws). Skinned vertices per second =
//! instances x vertices / GPU seconds.
//!
//! A count a path or device cannot hold (a palette beyond the storage's
//! range, a triangle needing more bones than a push or uniform window
//! holds, compute output beyond maxStorageBufferRange) is recorded as
//! "limit: <message>" and the bench goes on. A case whose warm-up and first
//! timed frame together would take longer than `--max-seconds` (predicted
//! from the path's previous count, in proportion to instances) is
//! "skipped"; a case stops taking frames once it has used `--max-seconds`.
//!
//! Writes `gpu-bench.csv` and `gpu-bench.png` (skinned vertices per second
//! against instances, log-log, a panel per encoding) to `--out` and prints
//! Markdown tables. Release builds run without the validation layer unless
//! `--validation` or `VKSKIN_VALIDATION=1`; with it, any message fails the
//! run.
//!
//! `--morph` measures morph targets instead (see the `morph` module): the
//! character with `--morph-targets` targets, `--morph-active` of them
//! non-zero, against the character without, on the CPU (ns per vertex) and
//! per path and count (GPU ms), with the ratios; default paths
//! `4x3-ssbo,4x3-compute`.

mod chart;
mod gpu_anim;
mod morph;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use glam::{Affine3A, Vec3};
use vkskin::anim::{Crowd, CrowdInstance, PaletteHierarchy, Parallelism};
use vkskin::assets::builtin::procedural;
use vkskin::assets::Model;
use vkskin::gpu::{
    validation_default, vk, Device, DeviceDesc, GpuError, Instance, InstanceDesc, MessageLog,
};
use vkskin::render::{Camera, Frame, FramesInFlight, OffscreenTarget};
use vkskin::skin::{
    paths, FrameSets, FrameUniforms, PathDesc, PreparedMesh, SkinPath, SkinPathConfig,
};

#[derive(Parser, Debug)]
#[command(
    name = "gpu-bench",
    about = "Every skinning path at 1 to 10,000 instances: GPU ms, skinned vertices/s, CPU animation and upload"
)]
struct Args {
    /// Paths to run, comma-separated registry names (default: all).
    #[arg(long, value_delimiter = ',')]
    paths: Vec<String>,
    /// Instance counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,256,1024,10000")]
    instances: Vec<usize>,
    /// Timed frames per case, after the warm-up frame.
    #[arg(long, default_value_t = 5)]
    frames: usize,
    /// Seconds one case may take: a case predicted (from the path's
    /// previous count) to need more for its warm-up and one timed frame is
    /// skipped; a case stops taking frames once past it (at least one).
    #[arg(long, default_value_t = 30.0)]
    max_seconds: f64,
    /// Vertices of the benchmark character.
    #[arg(long, default_value_t = 10_000)]
    vertices: usize,
    /// Joints of the benchmark character.
    #[arg(long, default_value_t = 64)]
    joints: usize,
    /// Side of the square offscreen target, pixels.
    #[arg(long, default_value_t = 256)]
    size: u32,
    /// Folder for gpu-bench.csv and gpu-bench.png.
    #[arg(long, default_value = "out/gpu-bench")]
    out: PathBuf,
    /// TrueType font for the chart's text.
    #[arg(
        long,
        default_value = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    )]
    font: PathBuf,
    /// Device to use: index or name substring (default: $VKSKIN_DEVICE,
    /// else discrete > integrated > CPU).
    #[arg(long)]
    device: Option<String>,
    /// Turn the validation layer on (always on in debug builds).
    #[arg(long)]
    validation: bool,
    /// Measure morph targets: with and without, CPU and GPU, and ratios.
    #[arg(long)]
    morph: bool,
    /// Targets of the --morph character (dense positions and normals).
    #[arg(long, default_value_t = 64)]
    morph_targets: usize,
    /// Targets with a non-zero weight per instance, for --morph.
    #[arg(long, default_value_t = 4)]
    morph_active: usize,
    /// Per cent of the vertices each --morph target moves (1 to 100): a
    /// run of consecutive vertices, as a face's region; the others have
    /// zero deltas (100: dense).
    #[arg(long, default_value_t = 100)]
    morph_moved: usize,
    /// Measure GPU animation instead (see the `gpu_anim` module): the
    /// animation passes alone and with skinning and the draw, and the
    /// bytes written per frame against CPU palettes; default paths
    /// `4x3-ssbo,dq-texel,4x3-compute`.
    #[arg(long)]
    gpu_anim: bool,
    /// With --gpu-anim: compress the character's clips first at this
    /// tolerance (`MM@CM`, as `inspect --tolerance`; `1@10` is ozz's
    /// default), so the animation passes decode compressed clips.
    #[arg(long, value_name = "MM@CM")]
    compressed: Option<String>,
}

/// The most instances one case may ask for, and the most vertices of the
/// character (ten times the figures the bench is meant for): crowds,
/// placements, push palettes and the mesh live in host memory, sized by
/// these.
const MAX_INSTANCES: usize = 100_000;
const MAX_VERTICES: usize = 100_000;

/// What a case came to.
#[derive(Clone, Debug)]
pub enum Outcome {
    Measured(Measured),
    /// The path or device cannot hold the case; the engine's message.
    Limit(String),
    Skipped(String),
    Error(String),
}

/// Medians over a case's timed frames.
#[derive(Clone, Debug)]
pub struct Measured {
    pub frames: usize,
    /// `None` where the device has no timestamps.
    pub gpu_ms: Option<f64>,
    /// The crowd's twin animated alone on all threads.
    pub anim_all_ms: f64,
    /// Animating the crowd into the path's storage, less `anim_all_ms`.
    pub upload_ms: f64,
    /// The whole frame on the wall clock, the twin's animation included.
    pub wall_ms: f64,
}

/// One path at one instance count.
#[derive(Clone, Debug)]
pub struct Case {
    pub path: &'static PathDesc,
    pub instances: usize,
    /// Vertices of one instance.
    pub vertices: usize,
    pub outcome: Outcome,
}

impl Case {
    pub fn measured(&self) -> Option<&Measured> {
        match &self.outcome {
            Outcome::Measured(m) => Some(m),
            _ => None,
        }
    }
}

/// What the report needs besides the cases.
pub struct Setup {
    pub device: String,
    pub cpu: String,
    pub threads: usize,
    pub vertices: usize,
    pub joints: usize,
    pub size: u32,
    pub frames: usize,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpu-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let descs = if args.gpu_anim && args.paths.is_empty() {
        select_paths(&["4x3-ssbo".into(), "dq-texel".into(), "4x3-compute".into()])?
    } else if args.morph && args.paths.is_empty() {
        select_paths(&["4x3-ssbo".into(), "4x3-compute".into()])?
    } else {
        select_paths(&args.paths)?
    };
    if args.morph && (args.morph_targets == 0 || args.morph_targets > 1024) {
        return Err(format!("--morph-targets {}: 1 to 1024", args.morph_targets));
    }
    if !(1..=100).contains(&args.morph_moved) {
        return Err(format!("--morph-moved {}: 1 to 100", args.morph_moved));
    }
    if args.instances.is_empty() || args.instances.iter().any(|&n| n == 0 || n > MAX_INSTANCES) {
        return Err(format!(
            "--instances {:?}: each count must be 1 to {MAX_INSTANCES}",
            args.instances
        ));
    }
    if args.frames == 0 {
        return Err("--frames 0: at least one timed frame".into());
    }
    if args.max_seconds.is_nan() || args.max_seconds <= 0.0 {
        return Err(format!(
            "--max-seconds {}: must be positive",
            args.max_seconds
        ));
    }
    if !(16..=4096).contains(&args.size) {
        return Err(format!("--size {}: 16 to 4096 pixels", args.size));
    }
    if args.vertices == 0 || args.vertices > MAX_VERTICES {
        return Err(format!(
            "--vertices {}: this bench builds characters of 1 to {MAX_VERTICES} vertices",
            args.vertices
        ));
    }
    let model = procedural::bench_character(args.vertices, args.joints).map_err(|e| {
        format!(
            "bench character ({} vertices, {} joints): {e}",
            args.vertices, args.joints
        )
    })?;
    let instance = Instance::new(&InstanceDesc {
        app_name: "gpu-bench".into(),
        validation: args.validation || validation_default(),
        synchronization_validation: true,
        display: None,
    })
    .map_err(|e| e.to_string())?;
    let log = instance.messages().clone();
    let device = Device::new(
        &instance,
        &DeviceDesc {
            selector: args.device.as_deref(),
            surface: None,
        },
    )
    .map_err(|e| e.to_string())?;
    drop(instance);
    if args.morph || args.gpu_anim {
        let name = device.physical().name.clone();
        if args.gpu_anim {
            let model = match &args.compressed {
                Some(t) => compress_clips(model.clone(), t)?,
                None => model.clone(),
            };
            gpu_anim::run(args, &device, &model, &descs, &name)?;
        } else {
            morph::run(args, &device, &model, &descs, &name)?;
        }
        drop(device);
        let problems = log.problems();
        if !problems.is_empty() {
            return Err(format!(
                "the validation layer reported {} problem(s):\n{}",
                problems.len(),
                MessageLog::format(&problems)
            ));
        }
        return Ok(());
    }
    let setup = Setup {
        device: device.physical().name.clone(),
        cpu: cpu_model(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        vertices: model.meshes[0].vertex_count(),
        joints: model.skeleton.len(),
        size: args.size,
        frames: args.frames,
    };
    println!(
        "gpu-bench: {} paths x {:?} instances of a {}-vertex, {}-joint character on {} (CPU: {}, {} threads); {} timed frame(s) per case, --max-seconds {}",
        descs.len(),
        args.instances,
        setup.vertices,
        setup.joints,
        setup.device,
        setup.cpu,
        setup.threads,
        args.frames,
        args.max_seconds
    );
    let animation = animation_pass(&model, &args.instances, (4 * args.frames).max(20))?;
    let cases = {
        let bench = Bench::new(&device, &model, args)?;
        let started = Instant::now();
        let total = descs.len() * args.instances.len();
        let mut cases = Vec::with_capacity(total);
        for desc in descs {
            bench.run_path(desc, args, &mut cases, total)?;
        }
        println!(
            "gpu-bench: {} case(s) in {:.0} s",
            cases.len(),
            started.elapsed().as_secs_f64()
        );
        device.wait_idle().map_err(|e| e.to_string())?;
        cases
    };
    drop(device);
    let problems = log.problems();
    if !problems.is_empty() {
        return Err(format!(
            "the validation layer reported {} problem(s):\n{}",
            problems.len(),
            MessageLog::format(&problems)
        ));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let csv = args.out.join("gpu-bench.csv");
    std::fs::write(&csv, report::csv(&setup, &cases, &animation))
        .map_err(|e| format!("{}: {e}", csv.display()))?;
    println!("gpu-bench: wrote {}", csv.display());
    println!();
    println!(
        "{}",
        report::markdown(&setup, &cases, &animation, &args.instances)
    );
    let png = args.out.join("gpu-bench.png");
    chart::draw(&png, &args.font, &setup, &cases)?;
    println!("gpu-bench: wrote {}", png.display());
    Ok(())
}

/// CPU animation alone at one instance count: the same work for every
/// path, so measured once, GPU or no GPU.
#[derive(Clone, Debug)]
pub struct AnimationRow {
    pub instances: usize,
    pub frames: usize,
    pub one_thread_ms: f64,
    pub all_threads_ms: f64,
}

/// Animates a crowd of each count on one thread and on all, `frames`
/// times each after a warm-up, with a sink that keeps nothing.
fn animation_pass(
    model: &Model,
    counts: &[usize],
    frames: usize,
) -> Result<Vec<AnimationRow>, String> {
    let mut rows = Vec::with_capacity(counts.len());
    for &n in counts {
        // A crowd per mode, so that neither run finds keys the other
        // already looked up at this time.
        let mut single = bench_crowd(model, n)?;
        let mut parallel = bench_crowd(model, n)?;
        let mut one = Vec::with_capacity(frames);
        let mut all = Vec::with_capacity(frames);
        for f in 0..=frames {
            let t = f as f32 / 60.0;
            for (crowd, threads, out) in [
                (&mut single, Parallelism::Single, &mut one),
                (&mut parallel, Parallelism::All, &mut all),
            ] {
                let start = Instant::now();
                crowd
                    .animate(t, threads, |_, _| {})
                    .map_err(|e| format!("crowd: {e}"))?;
                if f > 0 {
                    out.push(start.elapsed().as_secs_f64() * 1e3);
                }
            }
        }
        let row = AnimationRow {
            instances: n,
            frames,
            one_thread_ms: median(one),
            all_threads_ms: median(all),
        };
        println!(
            "[animation] {n:6} instances: {:.3} ms on 1 thread, {:.3} ms on all ({:.2}x)",
            row.one_thread_ms,
            row.all_threads_ms,
            row.one_thread_ms / row.all_threads_ms
        );
        rows.push(row);
    }
    Ok(rows)
}

/// `n` instances of the bench character's clip, out of step and at their
/// own speeds.
fn bench_crowd(model: &Model, n: usize) -> Result<Crowd, String> {
    let skin = &model.skins[model.meshes[0].skin];
    let instances = (0..n)
        .map(|i| {
            CrowdInstance::new(
                0,
                0.37 * i as f32 % 2.0,
                0.8 + 0.4 * ((i * 7919) % 101) as f32 / 100.0,
            )
        })
        .collect();
    Crowd::new(&model.skeleton, &model.clips, skin, instances).map_err(|e| format!("crowd: {e}"))
}

fn select_paths(names: &[String]) -> Result<Vec<&'static PathDesc>, String> {
    if names.is_empty() {
        return Ok(paths().iter().collect());
    }
    names
        .iter()
        .map(|n| {
            vkskin::skin::find(n.trim()).ok_or_else(|| {
                format!(
                    "--paths: unknown skinning path {n:?}; paths: {}",
                    vkskin::skin::registry::names()
                )
            })
        })
        .collect()
}

/// The CPU's model name (Linux: /proc/cpuinfo), for the report.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// What every case shares: the device, the character, the target.
struct Bench<'a> {
    device: &'a Arc<Device>,
    model: &'a Model,
    hierarchy: PaletteHierarchy,
    target: OffscreenTarget,
    /// The character's animated box.
    bounds: (Vec3, Vec3),
    /// `--morph`: the targets each instance weights (a mesh with targets
    /// is drawn through `BatchWriter::animate_morphed`).
    morph_active: Vec<usize>,
}

/// The benchmark runs one frame at a time (each waited for), so one slot.
const FRAMES_IN_FLIGHT: usize = 1;
const CLEAR: [f32; 4] = [0.05, 0.06, 0.08, 1.0];

impl<'a> Bench<'a> {
    fn new(device: &'a Arc<Device>, model: &'a Model, args: &Args) -> Result<Self, String> {
        let skin = &model.skins[model.meshes[0].skin];
        let hierarchy = PaletteHierarchy::new(skin, &model.skeleton).map_err(|e| e.to_string())?;
        let target =
            OffscreenTarget::new(device, args.size, args.size).map_err(|e| e.to_string())?;
        let b = model
            .animated_bounds(4)
            .map_err(|e| format!("bench character bounds: {e}"))?;
        Ok(Self {
            device,
            model,
            hierarchy,
            target,
            bounds: (b.min, b.max),
            morph_active: Vec::new(),
        })
    }

    /// Every instance count on `desc`, in order; results are pushed to
    /// `cases` (and printed) as they come.
    fn run_path(
        &self,
        desc: &'static PathDesc,
        args: &Args,
        cases: &mut Vec<Case>,
        total: usize,
    ) -> Result<(), String> {
        let cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            FRAMES_IN_FLIGHT,
        );
        let prepared = SkinPath::new(self.device, desc, cfg).and_then(|mut path| {
            let mesh = path.prepare(&self.model.meshes[0], &self.hierarchy)?;
            Ok((path, mesh))
        });
        let (mut path, mesh) = match prepared {
            Ok(p) => p,
            Err(e) => {
                // The bench mesh is well formed: a refusal here is the
                // path's capacity on this device.
                for &n in &args.instances {
                    let case = Case {
                        path: desc,
                        instances: n,
                        vertices: self.model.meshes[0].vertex_count(),
                        outcome: Outcome::Limit(e.to_string()),
                    };
                    progress(cases.len() + 1, total, &case);
                    cases.push(case);
                }
                return Ok(());
            }
        };
        let mut frame_sets =
            FrameSets::new(self.device, FRAMES_IN_FLIGHT).map_err(|e| e.to_string())?;
        let mut frames =
            FramesInFlight::new(self.device, FRAMES_IN_FLIGHT).map_err(|e| e.to_string())?;
        // (instances, wall seconds of one frame) of the last measured case.
        let mut last: Option<(usize, f64)> = None;
        for &n in &args.instances {
            let predicted = last.map(|(m, s)| s * n as f64 / m as f64);
            let outcome = match predicted {
                Some(p) if 2.0 * p > args.max_seconds => Outcome::Skipped(format!(
                    "about {p:.0} s a frame (from {} instances), over --max-seconds {}",
                    last.map_or(0, |l| l.0),
                    args.max_seconds
                )),
                _ => self.run_case(&mut path, &mesh, &mut frame_sets, &mut frames, n, args),
            };
            if let Outcome::Measured(m) = &outcome {
                last = Some((n, m.wall_ms * 1e-3));
            }
            let case = Case {
                path: desc,
                instances: n,
                vertices: self.model.meshes[0].vertex_count(),
                outcome,
            };
            progress(cases.len() + 1, total, &case);
            cases.push(case);
        }
        self.device.wait_idle().map_err(|e| e.to_string())?;
        Ok(())
    }

    fn run_case(
        &self,
        path: &mut SkinPath,
        mesh: &PreparedMesh,
        frame_sets: &mut FrameSets,
        frames: &mut FramesInFlight,
        n: usize,
        args: &Args,
    ) -> Outcome {
        // The drawn crowd, and its twin animated alone for the
        // animation figure (each finds its keys from its own last frame).
        let (mut crowd, mut twin) = match (bench_crowd(self.model, n), bench_crowd(self.model, n)) {
            (Ok(c), Ok(t)) => (c, t),
            (Err(e), _) | (_, Err(e)) => return Outcome::Error(e),
        };
        let (place, min, max) = self.grid(n);
        let camera = Camera::framing(min, max, 0.6, 0.5, 40f32.to_radians(), 1.0);
        let started = Instant::now();
        let mut samples: Vec<Sample> = Vec::with_capacity(args.frames);
        for f in 0..=args.frames {
            let t = f as f32 / 60.0;
            let frame_start = Instant::now();
            let s = match self.frame(
                path, mesh, frame_sets, frames, &mut crowd, &mut twin, &place, &camera, t,
            ) {
                Ok(s) => s,
                Err(FrameError::Limit(e)) => return Outcome::Limit(e),
                Err(FrameError::Other(e)) => return Outcome::Error(e),
            };
            let wall = frame_start.elapsed().as_secs_f64() * 1e3;
            // Frame 0 warms up: storage grows, thread pools start.
            if f > 0 {
                samples.push(Sample { wall, ..s });
                if started.elapsed().as_secs_f64() > args.max_seconds {
                    break;
                }
            }
        }
        let pick = |g: fn(&Sample) -> f64| median(samples.iter().map(g).collect());
        let gpu: Vec<f64> = samples.iter().filter_map(|s| s.gpu_ms).collect();
        Outcome::Measured(Measured {
            frames: samples.len(),
            gpu_ms: if gpu.is_empty() {
                None
            } else {
                Some(median(gpu))
            },
            anim_all_ms: pick(|s| s.anim_all),
            upload_ms: pick(|s| s.upload),
            wall_ms: pick(|s| s.wall),
        })
    }

    /// Instance placements on a square grid, and the grid's box.
    fn grid(&self, n: usize) -> (Vec<Affine3A>, Vec3, Vec3) {
        let (bmin, bmax) = self.bounds;
        let half = (bmax - bmin) * 0.5;
        let spacing = 2.2 * half.x.max(half.z);
        let columns = (n as f64).sqrt().ceil() as usize;
        let rows = n.div_ceil(columns);
        let center = (bmin + bmax) * 0.5;
        let place = (0..n)
            .map(|i| {
                let at = Vec3::new(
                    (i % columns) as f32 * spacing,
                    0.0,
                    (i / columns) as f32 * spacing,
                );
                Affine3A::from_translation(at - Vec3::new(center.x, 0.0, center.z))
            })
            .collect();
        let far = Vec3::new(
            (columns - 1) as f32 * spacing,
            0.0,
            (rows - 1) as f32 * spacing,
        );
        let lo = Vec3::new(-half.x, bmin.y, -half.z);
        let hi = Vec3::new(half.x, bmax.y, half.z) + far;
        (place, lo, hi)
    }

    /// One frame: the two animation timings, the upload, the draw, its GPU
    /// time.
    #[allow(clippy::too_many_arguments)]
    fn frame(
        &self,
        path: &mut SkinPath,
        mesh: &PreparedMesh,
        frame_sets: &mut FrameSets,
        frames: &mut FramesInFlight,
        crowd: &mut Crowd,
        twin: &mut Crowd,
        place: &[Affine3A],
        camera: &Camera,
        t: f32,
    ) -> Result<Sample, FrameError> {
        let frame = frames.begin()?;
        let recorded = self.record(
            path, mesh, frame_sets, &frame, crowd, twin, place, camera, t,
        );
        let sample = match recorded {
            Ok(s) => s,
            Err(e) => {
                // Nothing was submitted: leave the slot as it was.
                frames.abandon(&frame)?;
                return Err(e);
            }
        };
        frames.submit(&frame, None, None)?;
        frames.wait(&frame)?;
        // The slot's fence has passed: read its timestamps now.
        path.begin_frame(frame.index)?;
        Ok(Sample {
            gpu_ms: path.gpu_ms(frame.index),
            ..sample
        })
    }

    /// Everything of [`Bench::frame`] up to its submission.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        path: &mut SkinPath,
        mesh: &PreparedMesh,
        frame_sets: &mut FrameSets,
        frame: &Frame,
        crowd: &mut Crowd,
        twin: &mut Crowd,
        place: &[Affine3A],
        camera: &Camera,
        t: f32,
    ) -> Result<Sample, FrameError> {
        let f = frame.index;
        path.begin_frame(f)?;
        let targets = mesh.morph_targets();
        let weights = morph::instance_weights(crowd.len(), targets, &self.morph_active, t);
        let start = Instant::now();
        twin.animate(t, Parallelism::All, |_, _| {})
            .map_err(|e| FrameError::Other(format!("crowd: {e}")))?;
        let anim_all = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        let mut w = path.batch(f, mesh, crowd.len())?;
        let batch = w.batch();
        if targets > 0 {
            w.animate_morphed(crowd, t, Parallelism::All, &weights, targets, |i| {
                (place[i], [1.0; 4])
            })?;
        } else {
            w.animate(crowd, t, Parallelism::All, |i| (place[i], [1.0; 4]))?;
        }
        let write = start.elapsed().as_secs_f64() * 1e3;
        let aspect = self.target.aspect_ratio();
        frame_sets.write(
            f,
            &FrameUniforms {
                view_proj: camera.view_proj(aspect).to_cols_array_2d(),
                color: [0.8, 0.75, 0.6, 1.0],
                light: [0.35, 0.85, 0.45, 1.0],
            },
        )?;
        path.prepass(frame.cmd, f, &[(&batch, mesh)])?;
        self.target.begin(frame.cmd, CLEAR);
        let drawn = path.record_draw(
            frame.cmd,
            f,
            frame_sets,
            &batch,
            mesh,
            vk::PolygonMode::FILL,
            None,
        );
        self.target.end_and_copy(frame.cmd);
        drawn?;
        path.finish(frame.cmd, f)?;
        Ok(Sample {
            gpu_ms: None,
            anim_all,
            upload: (write - anim_all).max(0.0),
            wall: 0.0,
        })
    }
}

/// One timed frame.
#[derive(Clone, Copy)]
struct Sample {
    gpu_ms: Option<f64>,
    anim_all: f64,
    upload: f64,
    wall: f64,
}

enum FrameError {
    /// The device or path cannot hold the case.
    Limit(String),
    Other(String),
}

impl From<GpuError> for FrameError {
    fn from(e: GpuError) -> Self {
        match e {
            GpuError::Limit { .. } => Self::Limit(e.to_string()),
            e => Self::Other(e.to_string()),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) * 0.5
    }
}

fn progress(k: usize, total: usize, case: &Case) {
    let what = match &case.outcome {
        Outcome::Measured(m) => format!(
            "gpu {} ms, {} verts/s, anim {:.2} ms (all threads), upload {:.2} ms, {} frame(s)",
            m.gpu_ms.map_or("n/a".into(), |g| format!("{g:.2}")),
            report::verts_per_s(case).map_or("n/a".into(), report::si),
            m.anim_all_ms,
            m.upload_ms,
            m.frames
        ),
        Outcome::Limit(e) => format!("limit: {e}"),
        Outcome::Skipped(e) => format!("skipped: {e}"),
        Outcome::Error(e) => format!("error: {e}"),
    };
    println!(
        "[{k:3}/{total}] {:16} {:6} instances: {what}",
        case.path.name, case.instances
    );
}

/// `model` with its clips compressed at `tolerance` (`MM@CM`).
fn compress_clips(mut model: Model, tolerance: &str) -> Result<Model, String> {
    let tol = vkskin::anim::Tolerance::parse_mm_at_cm(tolerance)
        .ok_or_else(|| format!("--compressed {tolerance}: MM@CM, both above 0"))?;
    let mut clips = Vec::with_capacity(model.clips.len());
    for clip in &model.clips {
        clips.push(
            vkskin::anim::CompressionJob {
                clip,
                skeleton: &model.skeleton,
                tolerance: tol,
            }
            .run()
            .map_err(|e| format!("compressing clip {}: {e}", clip.name()))?,
        );
    }
    model.clips = clips;
    Ok(model)
}
