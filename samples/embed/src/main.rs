//! `embed`: a host program in raw `ash` that owns the Vulkan instance,
//! device, queue, command buffers, fences and its own offscreen image, and
//! lets vkskin record the built-in character's skinned draws into its frame
//! (the contract is `vkskin::embed`'s documentation). Writes the last frame
//! as a PNG and exits non-zero if the host's own validation messenger saw a
//! warning or error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "A raw-ash host renderer with vkskin's skinned character drawn into its frame")]
struct Args {
    /// Frames to render (frame i at t = i / 30 s); the last is written.
    /// With `--window`: frames to present, then exit (default: until
    /// closed).
    #[arg(long)]
    frames: Option<u32>,
    /// Draw in a window, through the samples' window runner, with the same
    /// three vkskin calls per frame (headless into out/embed-window/ when
    /// there is no display).
    #[arg(long)]
    window: bool,
    /// With `--window`: present without vsync.
    #[arg(long)]
    no_vsync: bool,
    /// Image size in pixels, WxH.
    #[arg(long, default_value = "800x600")]
    size: String,
    /// Skinning path (default: the engine's automatic choice).
    #[arg(long)]
    path: Option<String>,
    /// Output PNG.
    #[arg(long, default_value = "out/embed/frame.png")]
    out: PathBuf,
    /// Validation layer with synchronization validation (default: on in
    /// debug builds or with VKSKIN_VALIDATION=1).
    #[arg(long)]
    validation: bool,
    /// Draw the character textured (a checker the host makes, as its
    /// material's texture), shaded by vkskin.
    #[arg(long)]
    textured: bool,
    /// Draw the textured character with the host's OWN shader through one
    /// of vkskin's host routes: `vertex` (the host's vertex shader calls
    /// vkskin's `skin_vertex()`; a vertex-stage path) or `compute` (the host
    /// draws the compute stage's skinned output; a compute-stage path,
    /// 4x3-compute unless --path names one).
    #[arg(long, value_name = "vertex|compute")]
    own_shader: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let parsed = args
        .size
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
    let Some((width, height)) = parsed else {
        eprintln!("embed: --size {:?} is not WxH", args.size);
        return ExitCode::FAILURE;
    };
    let validation = args.validation || vkskin::gpu::validation_default();
    let shading = match args.own_shader.as_deref() {
        None if args.textured => embed::Shading::VkskinTextured,
        None => embed::Shading::Vkskin,
        Some("vertex") => embed::Shading::Own(embed::own::Route::Vertex),
        Some("compute") => embed::Shading::Own(embed::own::Route::Compute),
        Some(other) => {
            eprintln!("embed: --own-shader {other:?}: vertex or compute");
            return ExitCode::FAILURE;
        }
    };
    let path = match (shading, args.path) {
        (embed::Shading::Own(embed::own::Route::Compute), None) => Some("4x3-compute".to_owned()),
        (embed::Shading::Own(embed::own::Route::Vertex), None) => Some("4x3-ubo".to_owned()),
        (_, p) => p,
    };
    if args.window {
        if shading != embed::Shading::Vkskin {
            eprintln!("embed: --textured and --own-shader draw headless (no --window)");
            return ExitCode::FAILURE;
        }
        let opts = embed::window::WindowOptions {
            frames: args.frames.map(u64::from),
            width,
            height,
            path,
            validation,
            vsync: !args.no_vsync,
        };
        return match embed::window::run(&opts) {
            Ok(log) => sample_common::report("embed", &log),
            Err(e) => sample_common::fail("embed", &e),
        };
    }
    let opts = embed::HostOptions {
        width,
        height,
        frames: args.frames.unwrap_or(3),
        path,
        validation,
    };
    match embed::render_with(&opts, shading) {
        Ok(frame) => {
            if let Some(dir) = args.out.parent() {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    eprintln!("embed: {}: {e}", dir.display());
                    return ExitCode::FAILURE;
                }
            }
            if let Err(e) = vkskin::render::write_png(&args.out, width, height, &frame.rgba) {
                eprintln!("embed: {e}");
                return ExitCode::FAILURE;
            }
            println!(
                "embed: {} frame(s) through {}, last written to {}",
                opts.frames,
                frame.path,
                args.out.display()
            );
            if let Some(ms) = frame.gpu_ms {
                println!("embed: vkskin's GPU time of an early frame: {ms:.3} ms");
            }
            if frame.problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "embed: the host's validation messenger saw {} problem(s):\n{}",
                    frame.problems.len(),
                    frame.problems.join("\n")
                );
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("embed: {e}");
            ExitCode::FAILURE
        }
    }
}
