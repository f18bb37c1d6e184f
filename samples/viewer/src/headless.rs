//! `--headless`: the contract's frames (see the crate docs) into PNGs and a
//! contact sheet, with a progress bar.

use indicatif::{ProgressBar, ProgressStyle};
use vkskin::anim::{PlaybackMode, SamplingContext, SamplingJob};
use vkskin::gpu::{GpuError, MessageLog};
use vkskin::render::{FramesInFlight, OffscreenTarget};

use crate::contact::{self, Thumb};
use crate::orbit::Orbit;
use crate::scene::{Scene, SceneDesc};
use crate::{load_model, Args, CLEAR};

/// Frames in flight of the headless run (each frame is waited for before
/// its readback, so more would not overlap anything).
pub const FRAMES_IN_FLIGHT: usize = 2;

pub fn run(args: &Args) -> Result<MessageLog, String> {
    if !(args.fps.is_finite() && args.fps > 0.0) {
        return Err(format!("--fps {} is not a positive number", args.fps));
    }
    if args.frames == Some(0) {
        return Err("--frames 0: nothing to draw".into());
    }
    // A bad file fails before any Vulkan work, with the loader's message.
    let model = load_model(args.file.as_deref(), args.max_influences)?;
    let clip = match &args.clip {
        Some(name) => Some(
            model
                .clips
                .iter()
                .position(|c| c.name() == name)
                .ok_or_else(|| {
                    format!(
                        "{}: no clip {name:?}; clips: {}",
                        model.name,
                        clip_names(&model)
                    )
                })?,
        ),
        None if model.clips.is_empty() => None,
        None => Some(0),
    };
    let (device, log) =
        sample_common::headless_device("viewer", args.validation(), args.device.as_deref())?;
    let err = |e: GpuError| e.to_string();
    let total = args.frames.unwrap_or(60);
    let (width, height) = args.size;
    {
        let target = OffscreenTarget::new(&device, width, height).map_err(err)?;
        let mut scene = Scene::new(
            &device,
            model,
            args.path.as_deref(),
            SceneDesc {
                color_format: OffscreenTarget::COLOR_FORMAT,
                depth_format: OffscreenTarget::DEPTH_FORMAT,
                frames_in_flight: FRAMES_IN_FLIGHT,
                extras: false,
            },
        )?;
        let mut frames = FramesInFlight::new(&device, FRAMES_IN_FLIGHT).map_err(err)?;
        std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
        let aspect = width as f32 / height as f32;
        let view_proj = Orbit::default()
            .camera(&scene.bounds, aspect)
            .view_proj(aspect);
        let mut locals = scene.model.skeleton.bind_local().to_vec();
        let mut context = clip
            .map(|c| SamplingContext::new(&scene.model.clips[c]))
            .unwrap_or_default();
        let picks = contact::picks(total);
        let mut thumbs: Vec<Thumb> = Vec::with_capacity(picks.len());
        let bar = ProgressBar::new(total).with_style(
            ProgressStyle::with_template(
                "viewer {bar:40} {pos}/{len} frames, {per_sec}, eta {eta}",
            )
            .map_err(|e| e.to_string())?,
        );
        println!(
            "viewer: {} on {} ({} joints, {} mesh(es), {} vertices), {width}x{height}, clip {}",
            scene.model.name,
            scene.path().name,
            scene.model.skeleton.len(),
            scene.model.meshes.len(),
            scene.model.vertex_count(),
            clip.map_or("(bind pose)", |c| scene.model.clips[c].name()),
        );
        for i in 0..total {
            if let Some(c) = clip {
                SamplingJob {
                    clip: &scene.model.clips[c],
                    context: &mut context,
                    time: i as f32 / args.fps,
                    mode: PlaybackMode::Loop,
                    output: &mut locals,
                }
                .run()
                .map_err(|e| format!("{}: {e}", scene.model.name))?;
            }
            scene.pose(&locals)?;
            let frame = frames.begin().map_err(err)?;
            scene.update(frame.index, view_proj)?;
            scene.prepass(frame.cmd, frame.index)?;
            target.begin(frame.cmd, CLEAR);
            scene.record(frame.cmd, frame.index, false)?;
            target.end_and_copy(frame.cmd);
            scene.finish(frame.cmd, frame.index)?;
            frames.submit(&frame, None, None).map_err(err)?;
            // One readback target: wait before the next frame reuses it.
            frames.wait(&frame).map_err(err)?;
            let rgba = target.read_rgba().map_err(err)?;
            let path = args.out.join(format!("frame_{i:04}.png"));
            vkskin::render::write_png(&path, width, height, &rgba).map_err(err)?;
            if picks.contains(&i) {
                thumbs.push(contact::thumb(width, height, &rgba));
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        if !thumbs.is_empty() {
            contact::write_sheet(&args.out.join("contact_sheet.png"), &thumbs)?;
        }
        println!(
            "viewer: wrote {total} frame(s) and contact_sheet.png to {}",
            args.out.display()
        );
    }
    // Every resource is gone; the device (and then the instance with its
    // messenger) goes now, so the log includes the leak report.
    drop(device);
    Ok(log)
}

pub fn clip_names(model: &vkskin::assets::Model) -> String {
    if model.clips.is_empty() {
        return "(none)".into();
    }
    model
        .clips
        .iter()
        .map(|c| format!("{:?}", c.name()))
        .collect::<Vec<_>>()
        .join(", ")
}
