//! `--headless`: the contract's frames (see the crate docs) into PNGs and a
//! contact sheet, with a progress bar, through the runner's headless loop
//! ([`sample_common::runner::headless`]).

use indicatif::{ProgressBar, ProgressStyle};
use sample_common::runner::{self, App, FrameCtx, Setup, Summary};
use vkskin::anim::{PlaybackMode, SamplingContext, SamplingJob, Transform};
use vkskin::glam::Mat4;
use vkskin::gpu::MessageLog;
use vkskin::skin::anim::{AnimRecord, AnimateOn};

use crate::contact::{self, Thumb};
use crate::orbit::Orbit;
use crate::scene::{Scene, SceneDesc};
use crate::{load_model_with_clips, Args, CLEAR};

/// Frames in flight of the headless run (each frame is waited for before
/// its readback, so more would not overlap anything).
pub const FRAMES_IN_FLIGHT: usize = 2;

/// The runner's options for `args` (headless or not).
pub fn options(args: &Args) -> runner::Options {
    runner::Options {
        size: args.size,
        clear: CLEAR,
        frames_in_flight: FRAMES_IN_FLIGHT,
        frames: args.frames,
        headless: args.headless,
        out: args.out.clone(),
        fps: args.fps,
        ..args.gpu.options("viewer")
    }
}

struct Headless {
    scene: Scene,
    clip: Option<usize>,
    locals: Vec<Transform>,
    context: SamplingContext,
    view_proj: Mat4,
    picks: Vec<u64>,
    thumbs: Vec<Thumb>,
    bar: ProgressBar,
    /// GPU milliseconds of each frame's animation pass (`--anim gpu`).
    anim_ms: Vec<f64>,
}

pub fn run(args: &Args) -> Result<MessageLog, String> {
    if !(args.fps.is_finite() && args.fps > 0.0) {
        return Err(format!("--fps {} is not a positive number", args.fps));
    }
    if args.frames == Some(0) {
        return Err("--frames 0: nothing to draw".into());
    }
    // A bad file fails before any Vulkan work, with the loader's message.
    let model = load_model_with_clips(
        args.file.as_deref(),
        args.max_influences,
        args.clips.as_deref(),
    )?;
    let clip = match &args.clip {
        Some(name) => Some(find_clip(&model, name)?),
        None if model.clips.is_empty() => None,
        None => Some(0),
    };
    let opts = options(args);
    let total = args.frames.unwrap_or(opts.headless_frames);
    runner::headless(&opts, |setup: &Setup<'_>| {
        let scene = Scene::new(
            setup.device,
            model,
            args.path.as_deref(),
            SceneDesc {
                color_format: setup.color_format,
                depth_format: setup.depth_format,
                frames_in_flight: setup.frames_in_flight,
                extras: false,
                anim: args.anim_on(),
            },
        )?;
        let mut scene = scene;
        if args.motion_view {
            scene.set_motion_view(true)?;
            scene.motion_dt = 1.0 / args.fps;
        }
        let (width, height) = args.size;
        let aspect = width as f32 / height as f32;
        let view_proj = Orbit::with_up(scene.model.file_axis(args.up.vector()))
            .camera(&scene.bounds, aspect)
            .view_proj(aspect);
        let bar = ProgressBar::new(total).with_style(
            ProgressStyle::with_template(
                "viewer {bar:40} {pos}/{len} frames, {per_sec}, eta {eta}",
            )
            .map_err(|e| e.to_string())?,
        );
        println!(
            "viewer: {} on {}{} ({} joints, {} mesh(es), {} vertices), {width}x{height}, clip {}",
            scene.model.name,
            scene.path().name,
            if args.motion_view {
                " (motion view)"
            } else {
                ""
            },
            scene.model.skeleton.len(),
            scene.model.meshes.len(),
            scene.model.vertex_count(),
            clip.map_or("(bind pose)", |c| scene.model.clips[c].name()),
        );
        println!(
            "viewer: {} texture(s) uploaded ({} BC-compressed)",
            scene.materials.texture_count(),
            scene.materials.compressed_count()
        );
        for w in scene.materials.warnings() {
            println!("viewer: warning: {w}");
        }
        println!("viewer: {}", scene.anim_text());
        let picks = contact::picks(total);
        Ok(Headless {
            locals: scene.model.skeleton.bind_local().to_vec(),
            context: clip
                .map(|c| SamplingContext::new(&scene.model.clips[c]))
                .unwrap_or_default(),
            thumbs: Vec::with_capacity(picks.len()),
            picks,
            scene,
            clip,
            view_proj,
            bar,
            anim_ms: Vec::new(),
        })
    })
}

impl App for Headless {
    /// Samples the clip at the frame's time and writes its palettes.
    fn prepare(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let gpu = self.scene.anim_on() == AnimateOn::Gpu;
        if let (true, Some(c)) = (gpu, self.clip) {
            // The contract's clip and time, sampled by the animation pass.
            self.scene
                .set_record(AnimRecord::play(c as u32, f.time, 0.0, PlaybackMode::Loop));
        } else if let Some(c) = self.clip {
            SamplingJob {
                clip: &self.scene.model.clips[c],
                context: &mut self.context,
                time: f.time,
                mode: PlaybackMode::Loop,
                output: &mut self.locals,
            }
            .run()
            .map_err(|e| format!("{}: {e}", self.scene.model.name))?;
        }
        if !gpu {
            self.scene.pose(&self.locals)?;
        }
        let weights = self
            .scene
            .model
            .morph_weights(
                self.clip.map(|c| &self.scene.model.clips[c]),
                f.time,
                PlaybackMode::Loop,
            )
            .map_err(|e| format!("{}: {e}", self.scene.model.name))?;
        self.scene.set_weights(&weights);
        self.scene.update(f.index, self.view_proj)?;
        self.scene.prepass(f.cmd, f.index)
    }

    fn draw(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.scene.record(f.cmd, f.index, false)
    }

    fn finish(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.scene.finish(f.cmd, f.index)
    }

    fn written(&mut self, f: &FrameCtx<'_>, rgba: &[u8]) -> Result<(), String> {
        if self.picks.contains(&f.number) {
            let e = f.extent;
            self.thumbs.push(contact::thumb(e.width, e.height, rgba));
        }
        if let Some(ms) = self.scene.collect_anim_ms(f.index)? {
            self.anim_ms.push(ms);
        }
        self.bar.inc(1);
        Ok(())
    }

    fn finished(&mut self, s: &Summary) -> Result<(), String> {
        self.bar.finish_and_clear();
        let out = s.out.as_deref().unwrap_or(std::path::Path::new("."));
        if !self.thumbs.is_empty() {
            contact::write_sheet(&out.join("contact_sheet.png"), &self.thumbs)?;
        }
        println!(
            "viewer: wrote {} frame(s) and contact_sheet.png to {}",
            s.presented,
            out.display()
        );
        let pass = if self.scene.anim_on() != AnimateOn::Gpu {
            String::new()
        } else if self.anim_ms.is_empty() {
            ", animation pass: no timestamps".into()
        } else {
            self.anim_ms.sort_by(f64::total_cmp);
            format!(
                ", animation pass {:.3} ms GPU (median of {})",
                self.anim_ms[self.anim_ms.len() / 2],
                self.anim_ms.len()
            )
        };
        println!("viewer: stats: {}{pass}", self.scene.anim_text());
        Ok(())
    }
}

/// The clip called `name`, or an error naming the model's clips.
pub fn find_clip(model: &vkskin::assets::Model, name: &str) -> Result<usize, String> {
    model
        .clips
        .iter()
        .position(|c| c.name() == name)
        .ok_or_else(|| {
            format!(
                "{}: no clip {name:?}; clips: {}",
                model.name,
                clip_names(model)
            )
        })
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
