//! `paths`: the skinning paths of the registry on this device.
//!
//! - `paths --table` prints the Markdown table of every path: storage,
//!   encoding, stage, bones per draw on this device, what it cannot serve,
//!   and the CPU job it is tested against (docs/skinning-paths.md's table).
//! - `paths --twist OUT.png` renders the candy-wrapper test headless: a
//!   cylinder whose top joint turns 150 degrees, linear blend skinning
//!   (4x3-ubo) beside dual-quaternion skinning (dq-ubo).
//! - `paths --gallery OUT.png` renders the built-in character in one pose
//!   on every path, a row per encoding and a column per storage or stage.
//!
//! Exits non-zero on any error or validation message.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use glam::{Affine3A, Vec3};
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::builtin::{Character, TwistCylinder};
use vkskin::assets::Model;
use vkskin::gpu::{Device, DeviceDesc, GpuError, Instance, InstanceDesc, MessageLog};
use vkskin::render::{write_png, Camera, FramesInFlight, OffscreenTarget, Projection};
use vkskin::skin::encoding::ENCODINGS;
use vkskin::skin::{paths, FrameSets, FrameUniforms, SkinPath, SkinPathConfig};

#[derive(Parser, Debug)]
#[command(about = "The skinning paths on this device")]
struct Args {
    /// Print the Markdown table of every path.
    #[arg(long)]
    table: bool,
    /// Render the LBS-vs-DQS twisted cylinder to this PNG.
    #[arg(long)]
    twist: Option<PathBuf>,
    /// Render the built-in character in one pose on every path to this PNG
    /// (a grid: a row per encoding, a column per storage or stage), each
    /// tile also as paths-<name>.png beside it.
    #[arg(long)]
    gallery: Option<PathBuf>,
    /// Twist of the top joint, degrees.
    #[arg(long, default_value_t = 150.0)]
    degrees: f32,
    /// Device index or name substring.
    #[arg(long)]
    device: Option<String>,
}

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("paths: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let instance = Instance::new(&InstanceDesc {
        app_name: "paths".into(),
        ..InstanceDesc::default()
    })
    .map_err(|e| e.to_string())?;
    let log = instance.messages().clone();
    {
        let device = Device::new(
            &instance,
            &DeviceDesc {
                selector: args.device.as_deref(),
                surface: None,
            },
        )
        .map_err(|e| e.to_string())?;
        if args.table {
            print_table(&device);
        }
        if let Some(out) = &args.gallery {
            gallery(&device, out).map_err(|e| e.to_string())?;
            println!("wrote {}", out.display());
        }
        if let Some(out) = &args.twist {
            twist(&device, args.degrees, out).map_err(|e| e.to_string())?;
            println!("wrote {}", out.display());
        }
    }
    drop(instance);
    let problems = log.problems();
    if !problems.is_empty() {
        return Err(format!(
            "the validation layer reported {} problem(s):\n{}",
            problems.len(),
            MessageLog::format(&problems)
        ));
    }
    Ok(())
}

fn print_table(device: &Device) {
    let limits = device.limits();
    println!(
        "Paths on {} (maxPushConstantsSize {}, maxUniformBufferRange {}, maxTexelBufferElements {}, maxStorageBufferRange {}):\n",
        device.physical().name,
        limits.max_push_constants_size,
        limits.max_uniform_buffer_range,
        limits.max_texel_buffer_elements,
        limits.max_storage_buffer_range
    );
    println!("| path | storage | encoding | stage | bones per draw | cannot serve | reference |");
    println!("|---|---|---|---|---|---|---|");
    for p in paths() {
        let cap = match (p.capacity(device), p.partitions()) {
            (None, _) => "unlimited".to_string(),
            (Some(c), true) => format!("{c} (partitions beyond)"),
            (Some(c), false) => c.to_string(),
        };
        println!(
            "| `{}` | {} | {} | {} | {} | {} | `{}` |",
            p.name,
            p.storage.map_or("mapped vertex buffer", |s| s.name()),
            p.encoding.name(),
            p.stage.name(),
            cap,
            p.limitation(limits),
            p.reference()
        );
    }
}

/// Renders mesh 0 of `model` posed by `skin` through `path` into `target`
/// and returns the RGBA pixels.
#[allow(clippy::too_many_arguments)]
fn render_one(
    device: &std::sync::Arc<Device>,
    path: &str,
    model: &Model,
    skin: &[Affine3A],
    model_to_world: Affine3A,
    camera: &Camera,
    color: [f32; 4],
    target: &OffscreenTarget,
) -> Result<Vec<u8>, GpuError> {
    let cfg = SkinPathConfig::new(
        OffscreenTarget::COLOR_FORMAT,
        OffscreenTarget::DEPTH_FORMAT,
        1,
    );
    let mut skin_path = SkinPath::by_name(device, path, cfg)?;
    let invalid = |e: vkskin::anim::AnimError| GpuError::InvalidArgument(e.to_string());
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).map_err(invalid)?;
    let mesh = skin_path.prepare(&model.meshes[0], &hierarchy)?;
    let mut frames = FramesInFlight::new(device, 1)?;
    let mut frame_sets = FrameSets::new(device, 1)?;
    let frame = frames.begin()?;
    skin_path.begin_frame(frame.index)?;
    let mut w = skin_path.batch(frame.index, &mesh, 1)?;
    let batch = w.batch();
    w.write_all(|_| (skin, model_to_world, [1.0; 4]))?;
    frame_sets.write(
        frame.index,
        &FrameUniforms {
            view_proj: camera.view_proj(target.aspect_ratio()).to_cols_array_2d(),
            color,
            light: [0.4, 0.8, 0.6, 1.0],
        },
    )?;
    skin_path.prepass(frame.cmd, frame.index, &[(&batch, &mesh)])?;
    target.begin(frame.cmd, BACKGROUND);
    let recorded = skin_path.record_draw(
        frame.cmd,
        frame.index,
        &frame_sets,
        &batch,
        &mesh,
        vkskin::gpu::vk::PolygonMode::FILL,
        None,
    );
    target.end_and_copy(frame.cmd);
    recorded?;
    skin_path.finish(frame.cmd, frame.index)?;
    frames.submit(&frame, None, None)?;
    frames.wait(&frame)?;
    target.read_rgba()
}

const BACKGROUND: [f32; 4] = [0.07, 0.08, 0.1, 1.0];

/// The twisted cylinder through `path`.
fn render_twist(
    device: &std::sync::Arc<Device>,
    path: &str,
    degrees: f32,
    target: &OffscreenTarget,
) -> Result<Vec<u8>, GpuError> {
    let twist = TwistCylinder::default();
    let model = twist.model();
    let invalid = |e: vkskin::anim::AnimError| GpuError::InvalidArgument(e.to_string());
    let locals = twist.pose(degrees);
    let skin = model.skin_matrices(&locals).map_err(invalid)?.remove(0);
    // The cylinder lies along +Y; turn it to lie across the picture.
    let model_to_world = Affine3A::from_rotation_z(-std::f32::consts::FRAC_PI_2)
        * Affine3A::from_translation(Vec3::new(0.0, -1.0, 0.0));
    let camera = Camera::look_at(
        Vec3::new(0.0, 0.7, 2.3),
        Vec3::ZERO,
        Vec3::Y,
        Projection::Perspective {
            fov_y: 45f32.to_radians(),
            near: 0.1,
            far: 20.0,
        },
    );
    render_one(
        device,
        path,
        &model,
        &skin,
        model_to_world,
        &camera,
        [0.85, 0.62, 0.35, 1.0],
        target,
    )
}

/// Copies `tile` (w x h RGBA) into `sheet` (sheet_w wide) at (x, y).
fn blit(sheet: &mut [u8], sheet_w: u32, tile: &[u8], w: u32, h: u32, x: u32, y: u32) {
    for row in 0..h as usize {
        let src = &tile[row * w as usize * 4..(row + 1) * w as usize * 4];
        let o = ((y as usize + row) * sheet_w as usize + x as usize) * 4;
        sheet[o..o + w as usize * 4].copy_from_slice(src);
    }
}

/// The built-in character in one pose (walk at 0.6 s) on every path: a
/// grid with a row per encoding (4x3, qt, dq, dq-scale) and a column per
/// storage or stage (push, ubo, texel, ssbo, compute, cpu). A path that
/// cannot serve the mesh leaves its tile dark red. Also writes each tile
/// beside `out` as `paths-<name>.png`.
fn gallery(device: &std::sync::Arc<Device>, out: &std::path::Path) -> Result<(), GpuError> {
    let (w, h) = (160u32, 220u32);
    let gap = 4u32;
    let target = OffscreenTarget::new(device, w, h)?;
    let model = Character::model();
    let invalid = |e: vkskin::anim::AnimError| GpuError::InvalidArgument(e.to_string());
    let clip = model.clip("walk");
    let locals = model
        .pose(clip, 0.6, vkskin::anim::PlaybackMode::Loop)
        .map_err(invalid)?;
    let skin = model.skin_matrices(&locals).map_err(invalid)?.remove(0);
    let b = model.animated_bounds(8).map_err(invalid)?;
    let camera = Camera::framing(
        b.min,
        b.max,
        0.5,
        0.15,
        40f32.to_radians(),
        w as f32 / h as f32,
    );
    // A row per encoding, a column per path of the first encoding (its
    // name after the encoding: storage, or stage).
    let encodings: Vec<&str> = ENCODINGS.iter().map(|e| e.name()).collect();
    let columns: Vec<&str> = paths()
        .iter()
        .filter(|p| p.encoding.name() == encodings[0])
        .map(|p| p.name.get(encodings[0].len() + 1..).unwrap_or(p.name))
        .collect();
    let sheet_w = columns.len() as u32 * (w + gap) - gap;
    let sheet_h = encodings.len() as u32 * (h + gap) - gap;
    let mut sheet = vec![255u8; (sheet_w * sheet_h * 4) as usize];
    let dir = out.parent().unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| GpuError::Io {
        path: dir.to_owned(),
        message: e.to_string(),
    })?;
    for (r, enc) in encodings.iter().enumerate() {
        for (c, col) in columns.iter().enumerate() {
            let name = format!("{enc}-{col}");
            let tile = match render_one(
                device,
                &name,
                &model,
                &skin,
                Affine3A::IDENTITY,
                &camera,
                [0.85, 0.62, 0.35, 1.0],
                &target,
            ) {
                Ok(t) => {
                    write_png(&dir.join(format!("paths-{name}.png")), w, h, &t)?;
                    t
                }
                Err(e) => {
                    println!("{name}: cannot serve the character: {e}");
                    [90u8, 20, 20, 255].repeat((w * h) as usize)
                }
            };
            blit(
                &mut sheet,
                sheet_w,
                &tile,
                w,
                h,
                c as u32 * (w + gap),
                r as u32 * (h + gap),
            );
        }
    }
    write_png(out, sheet_w, sheet_h, &sheet)
}

fn twist(
    device: &std::sync::Arc<Device>,
    degrees: f32,
    out: &std::path::Path,
) -> Result<(), GpuError> {
    let (w, h) = (480u32, 320u32);
    let target = OffscreenTarget::new(device, w, h)?;
    let lbs = render_twist(device, "4x3-ubo", degrees, &target)?;
    let dqs = render_twist(device, "dq-ubo", degrees, &target)?;
    // Side by side, a 4-pixel gap.
    let gap = 4u32;
    let width = 2 * w + gap;
    let mut rgba = vec![255u8; (width * h * 4) as usize];
    for y in 0..h as usize {
        let row = |img: &[u8]| img[y * w as usize * 4..(y + 1) * w as usize * 4].to_vec();
        let o = y * width as usize * 4;
        rgba[o..o + w as usize * 4].copy_from_slice(&row(&lbs));
        let o2 = o + ((w + gap) * 4) as usize;
        rgba[o2..o2 + w as usize * 4].copy_from_slice(&row(&dqs));
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| GpuError::Io {
            path: dir.to_owned(),
            message: e.to_string(),
        })?;
    }
    write_png(out, width, h, &rgba)
}
