//! Seed 000's whitebox trident: 15 vertices, 13 triangles, 7 joints,
//! skinned on the GPU through the 4x3 uniform palette and drawn in
//! wireframe with a marker per joint. Opens a window when a display exists;
//! `--headless --frames N --out DIR` writes N PNG frames instead.
//!
//! In debug builds (or with `--validation`) the validation layer and
//! synchronization validation are on, and the run exits non-zero if the
//! messenger recorded any warning or error.

mod headless;
mod scene;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use vkskin::gpu::{list_devices, validation_default, Instance, InstanceDesc, MessageLog};

#[derive(Parser, Debug, Clone)]
#[command(about = "Seed 000's whitebox trident, skinned on the GPU")]
pub struct Args {
    /// Render offscreen and write PNG frames; no display needed.
    #[arg(long)]
    pub headless: bool,
    /// Frames to draw, then exit (default: forever in a window, 60 headless).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Folder for the headless PNG frames.
    #[arg(long, default_value = "out/whitebox")]
    pub out: PathBuf,
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
    /// Present without vsync (IMMEDIATE or MAILBOX when offered).
    #[arg(long)]
    pub no_vsync: bool,
    /// List the Vulkan devices and exit.
    #[arg(long)]
    pub list_devices: bool,
    /// Device to use: index or name substring (default: $VKSKIN_DEVICE,
    /// else discrete > integrated > CPU).
    #[arg(long)]
    pub device: Option<String>,
    /// Force the validation layer on (it is always on in debug builds).
    #[arg(long)]
    pub validation: bool,
}

impl Args {
    pub fn validation(&self) -> bool {
        self.validation || validation_default()
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = Args::parse();
    if args.list_devices {
        return match print_devices(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        };
    }
    let headless = args.headless || !display_present();
    if !args.headless && headless {
        eprintln!(
            "whitebox: no display (DISPLAY/WAYLAND_DISPLAY unset): rendering headless to {}",
            args.out.display()
        );
    }
    let result = if headless {
        headless::run(&args)
    } else {
        window::run(&args)
    };
    match result {
        Ok(log) => report(&log),
        Err(e) => fail(&e),
    }
}

fn display_present() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

fn print_devices(args: &Args) -> Result<(), String> {
    let instance = Instance::new(&InstanceDesc {
        app_name: "whitebox".into(),
        validation: args.validation(),
        ..Default::default()
    })
    .map_err(|e| e.to_string())?;
    for d in list_devices(&instance).map_err(|e| e.to_string())? {
        println!("{d}");
    }
    Ok(())
}

/// The messenger's verdict once everything (device, instance) is gone.
fn report(log: &MessageLog) -> ExitCode {
    let problems = log.problems();
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "whitebox: the validation layer reported {} problem(s):\n{}",
            problems.len(),
            MessageLog::format(&problems)
        );
        ExitCode::FAILURE
    }
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("whitebox: {e}");
    ExitCode::FAILURE
}

/// The instance every mode starts from.
pub fn instance(
    args: &Args,
    display: Option<vkskin::gpu::raw_window_handle::RawDisplayHandle>,
) -> Result<Arc<Instance>, String> {
    Instance::new(&InstanceDesc {
        app_name: "whitebox".into(),
        validation: args.validation(),
        synchronization_validation: true,
        display,
    })
    .map_err(|e| e.to_string())
}
