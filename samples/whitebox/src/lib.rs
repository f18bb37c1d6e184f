//! The frame for vkskin's small samples (the whitebox trident, seed 002's
//! strip): one [`Scene`] drawn either in a window (winit + a swapchain that
//! survives resize and minimise) or headless to PNG frames, with the same
//! command line, and a non-zero exit when the validation layer reported
//! anything.
//!
//! In debug builds (or with `--validation`) the validation layer and
//! synchronization validation are on.

mod rig;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};
use sample_common::{fail, report, GpuArgs};
use vkskin::glam::Mat4;
use vkskin::gpu::{vk, GpuResult};

pub use rig::Rig;
pub use sample_common::runner::Setup;

/// What a sample draws: a [`Rig`] made for the device and target formats
/// and posed per frame; the frame around it is the same for every scene.
pub trait Scene: Sized {
    /// The sample's name (window title, messages).
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;
    const CLEAR: [f32; 4];
    /// The joint markers' size and colour.
    const MARKER: (f32, [f32; 4]);

    fn new(setup: &Setup<'_>) -> GpuResult<Self>;
    /// Poses the rig for frame slot `frame` at `t` seconds and uploads it
    /// (the slot's previous submission has finished).
    fn update(&mut self, frame: usize, t: f32, aspect: f32) -> GpuResult<()>;
    fn rig(&self) -> &Rig;
    fn view_proj(&self, aspect: f32) -> Mat4;
    /// How the mesh is drawn.
    fn polygon(&self) -> vk::PolygonMode {
        vk::PolygonMode::FILL
    }
}

#[derive(Parser, Debug, Clone)]
pub struct Args {
    /// Render offscreen and write PNG frames; no display needed.
    #[arg(long)]
    pub headless: bool,
    /// Frames to draw, then exit (default: forever in a window, 60 headless).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Folder for the headless PNG frames (default out/NAME).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Image or initial window size in pixels.
    #[arg(long, default_value_t = 512)]
    pub width: u32,
    #[arg(long, default_value_t = 512)]
    pub height: u32,
    /// Headless animation rate: frame i shows t = i / fps seconds.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Resize the window (to 3/4 of its size, then back at 2K) at frame K.
    #[arg(long, value_name = "K")]
    pub resize_at: Option<u64>,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

impl Args {
    /// The headless output folder.
    pub fn out_dir(&self, name: &str) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("out").join(name))
    }
}

/// The whole sample: parses the command line, then draws `S` in a window
/// (when a display exists and `--headless` is not given) or headless.
pub fn run<S: Scene>() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let matches = Args::command().name(S::NAME).about(S::ABOUT).get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    if let Some(code) = args.gpu.list_devices(S::NAME) {
        return code;
    }
    match window::run::<S>(&args) {
        Ok(log) => report(S::NAME, &log),
        Err(e) => fail(S::NAME, &e),
    }
}
