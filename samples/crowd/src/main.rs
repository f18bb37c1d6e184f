//! `crowd`: many instances (default 1,000) of one character in a grid, each
//! playing its own clip (instance i gets clip i % clips) from its own phase
//! at its own speed, drawn with one skinning path. Every frame the crowd is
//! animated on all cores straight into the path's mapped storage
//! (`BatchWriter::animate`), and the sample reports the CPU animation time,
//! the upload time and the GPU time.
//!
//! - `crowd` opens a window (when a display exists) and prints the figures
//!   once a second.
//! - `crowd --headless --frames N --out DIR` writes `frame_NNNN.png` per
//!   frame, prints a line per frame and the medians at the end.
//!
//! In debug builds (or with `--validation`, or `VKSKIN_VALIDATION=1`) the
//! validation layer and synchronization validation are on, and the run
//! exits non-zero if the messenger recorded any warning or error.

mod gpu_anim;
mod scene;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

use clap::Parser;
use sample_common::{fail, report, GpuArgs};
use vkskin::anim::Parallelism;
use vkskin::skin::anim::AnimateOn;

use scene::{Cast, CrowdOptions, FrameTimes};

pub const NAME: &str = "crowd";
pub const CLEAR: [f32; 4] = [0.05, 0.06, 0.08, 1.0];

#[derive(Parser, Debug, Clone)]
#[command(
    name = "crowd",
    about = "Many instances of one character in a grid, each with its own clip, phase and speed"
)]
pub struct Args {
    /// A glTF (.gltf/.glb) or DirectX (.x) file; default: the built-in
    /// character; `builtin:morph` the built-in morph-target demo. The crowd
    /// animates the skin with the most vertices.
    pub model: Option<PathBuf>,
    /// A clip file (`.vkclip`, written by `inspect --compress`) whose
    /// compressed clips replace the model's; its skeleton must match the
    /// model's (joint count, names, parents). `--anim gpu` decodes them in
    /// the animation pass.
    #[arg(long, value_name = "FILE.vkclip")]
    pub clips: Option<PathBuf>,
    /// Instances in the grid.
    #[arg(long, default_value_t = 1000)]
    pub instances: usize,
    /// Skinning path (a registry name such as 4x3-ssbo, dq-texel,
    /// 4x3-compute, 4x3-cpu); default: skin::auto's choice.
    #[arg(long)]
    pub path: Option<String>,
    /// Animation threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Image or initial window size.
    #[arg(long, default_value = "960x540", value_name = "WxH")]
    pub size: Size,
    /// Render offscreen and write PNG frames; no display needed.
    #[arg(long)]
    pub headless: bool,
    /// Frames to draw, then exit (default: forever in a window, 30 headless).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Folder for the headless PNG frames.
    #[arg(long, default_value = "out/crowd")]
    pub out: PathBuf,
    /// Headless animation rate: frame i shows t = i / fps seconds.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Seed of every instance's phase, speed, turn and tint.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The model's up axis: y (glTF, most .x files) or z (files authored
    /// Z-up, such as tiny_4anim.x); every instance is stood on it.
    #[arg(long, value_enum, default_value_t = sample_common::Up::Y)]
    pub up: sample_common::Up,
    /// Cull the instances whose skinned box (`mesh::JointBounds`) is
    /// outside the view: on or off. The 4x3 paths cull with the
    /// linear-blend box, dq and dq-scale with the dual-quaternion one;
    /// qt paths draw all (the encoding may drop a scale).
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub cull: String,
    /// Move the camera towards the grid's centre by this factor (1: the
    /// whole grid in view; 3: a third of the distance, the outer
    /// instances out of view).
    #[arg(long, default_value_t = 1.0)]
    pub zoom: f32,
    /// Where the crowd is animated: cpu (the crowd's jobs write the
    /// palettes) or gpu (compute passes write them from 32-byte records).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu"])]
    pub anim: String,
    /// Morph targets: on (each instance's clip's weight tracks, sampled
    /// per instance) or off (every instance at the model's default
    /// weights).
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub morph: String,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

/// `WIDTHxHEIGHT` in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

impl FromStr for Size {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (width, height) = sample_common::parse_size(s)?;
        Ok(Self { width, height })
    }
}

impl Args {
    fn options(&self) -> Result<CrowdOptions, String> {
        let threads = match self.threads {
            None => Parallelism::All,
            Some(0) => return Err("--threads 0: at least one thread".into()),
            Some(1) => Parallelism::Single,
            Some(n) => Parallelism::Threads(n),
        };
        if !(self.zoom.is_finite() && self.zoom > 0.0) {
            return Err(format!("--zoom {}: a factor above 0", self.zoom));
        }
        Ok(CrowdOptions {
            instances: self.instances,
            path: self.path.clone(),
            threads,
            seed: self.seed,
            cull: self.cull == "on",
            zoom: self.zoom,
            morph: self.morph == "on",
            anim: AnimateOn::from_name(&self.anim)
                .ok_or_else(|| format!("--anim {}: cpu or gpu", self.anim))?,
        })
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = Args::parse();
    if let Some(code) = args.gpu.list_devices(NAME) {
        return code;
    }
    let result = args.options().and_then(|options| {
        let cast = Cast::load(args.model.as_deref(), args.up, args.clips.as_deref())?;
        for note in &cast.notes {
            eprintln!("{NAME}: {note}");
        }
        window::run(&args, &cast, &options)
    });
    match result {
        Ok(log) => report(NAME, &log),
        Err(e) => fail(NAME, &e),
    }
}

/// What one frame cost.
#[derive(Clone, Copy, Debug)]
pub struct FrameFigures {
    pub cpu: FrameTimes,
    /// `None` where the device has no timestamps.
    pub gpu_ms: Option<f64>,
}

/// Collected figures, summarised as medians.
#[derive(Default)]
pub struct Figures {
    anim: Vec<f64>,
    upload: Vec<f64>,
    gpu: Vec<f64>,
}

impl Figures {
    pub fn push(&mut self, f: &FrameFigures) {
        self.anim.push(f.cpu.anim_ms);
        self.upload.push(f.cpu.upload_ms);
        if let Some(g) = f.gpu_ms {
            self.gpu.push(g);
        }
    }

    pub fn len(&self) -> usize {
        self.anim.len()
    }

    pub fn is_empty(&self) -> bool {
        self.anim.is_empty()
    }

    pub fn clear(&mut self) {
        self.anim.clear();
        self.upload.clear();
        self.gpu.clear();
    }

    /// "anim X ms, upload Y ms, gpu Z ms" (medians).
    pub fn medians(&self) -> String {
        format!(
            "anim {} ms, upload {} ms, gpu {} ms",
            fmt_ms(median(&self.anim)),
            fmt_ms(median(&self.upload)),
            fmt_ms(median(&self.gpu))
        )
    }
}

pub fn fmt_ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
        None => "n/a".into(),
    }
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) * 0.5
    })
}

/// The lines both modes print first.
pub fn describe(cast: &Cast, scene: &scene::CrowdScene, device: &str, threads: Parallelism) {
    let threads = match threads {
        Parallelism::Single => "1".to_string(),
        Parallelism::All => format!(
            "all ({})",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ),
        Parallelism::Threads(n) => n.to_string(),
    };
    println!(
        "{NAME}: {} instances of {} ({} vertices, {} joints, {} clip(s)) on {device}",
        scene.instances(),
        cast.label,
        cast.vertex_count(),
        cast.model.skeleton.len(),
        cast.model.clips.len()
    );
    println!(
        "{NAME}: path {} ({}); animation on the {}; animation threads: {threads}; up axis {} (U toggles); culling {}",
        scene.path_name(),
        scene.path_reason(),
        scene.anim_name(),
        cast.up.name(),
        if scene.culling() { "on" } else { "off" }
    );
}
