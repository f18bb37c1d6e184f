//! The windowed viewer: a [`runner::App`] with the egui panel, mouse and
//! keyboard, dropped files and the `--script` events. The window, the
//! swapchain (resize, minimise, out-of-date reports), frames in flight and
//! screenshots are the runner's ([`sample_common::runner`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use sample_common::runner::{self, App, Control, FrameCtx, Summary};
use vkskin::glam::{Mat4, Vec3};
use vkskin::gpu::{vk, Device, MessageLog};
use vkskin::render::Camera;
use vkskin::skin::anim::{AnimRecord, AnimateOn};
use winit::event::{ElementState, KeyEvent, MouseButton, MouseScrollDelta, WindowEvent};
use winit::keyboard::{Key, ModifiersState, NamedKey};

use crate::egui_pass::EguiPass;
use crate::headless::find_clip;
use crate::orbit::Orbit;
use crate::player::Player;
use crate::scene::{Scene, SceneDesc};
use crate::script::{Action, ClipRef, Script};
use crate::ui::{self, Note, Snapshot, Stats};
use crate::{load_model, load_model_with_clips, Args, CLEAR};

/// Step of the frame-step keys and buttons, seconds.
pub const STEP_SECONDS: f32 = 1.0 / 30.0;
/// Most frames in flight the panel offers.
pub const MAX_FRAMES_IN_FLIGHT: usize = 3;

#[derive(Clone, Copy, Debug)]
struct Flags {
    wireframe: bool,
    skeleton: bool,
    /// The skinned box drawn as lines.
    bounds: bool,
    names: bool,
    panel: bool,
    vsync: bool,
    /// The model's up axis (the orbit's `up`).
    up: crate::args::Up,
}

/// What `prepare` leaves for `draw`: the frame's camera and panel.
struct Prepared {
    view_proj: Mat4,
    primitives: Vec<egui::ClippedPrimitive>,
    pixels_per_point: f32,
}

/// The viewer's state. Its GPU objects (the egui renderer, the scene) go
/// first, with the device idle (the runner's teardown), then the egui
/// state, before the window.
struct Viewer {
    egui: EguiPass,
    scene: Scene,
    device: Arc<Device>,
    color_format: vk::Format,
    egui_state: egui_winit::State,
    egui_ctx: egui::Context,
    args: Args,
    player: Player,
    orbit: Orbit,
    script: Script,
    /// Actions to apply before the next frame, and whether a script sent
    /// them (a script naming what does not exist is a failure).
    pending: Vec<(Action, bool)>,
    flags: Flags,
    fade_seconds: f32,
    stats: Stats,
    notes: Vec<Note>,
    hover: Option<usize>,
    drag: Option<MouseButton>,
    cursor: Option<(f64, f64)>,
    modifiers: ModifiersState,
    /// The last frame's camera and height in pixels (panning).
    last_camera: Option<(Camera, u32)>,
    /// The panel's width in points, last frame.
    panel_points: f32,
    frame: Option<Prepared>,
    shots: u32,
    /// Where the animation runs, in words, as last reported (a change,
    /// by any action, is a message).
    anim_text: String,
}

pub fn run(args: &Args) -> Result<MessageLog, String> {
    let script = match &args.script {
        Some(s) => Script::parse(s)?,
        None => Script::default(),
    };
    let opts = runner::Options {
        title: "vkskin viewer".into(),
        size: args.size,
        clear: CLEAR,
        frames_in_flight: args.frames_in_flight.clamp(1, MAX_FRAMES_IN_FLIGHT),
        frames: args.frames,
        count_skipped: true,
        ..args.gpu.options("viewer")
    };
    runner::window(&opts, |setup| Viewer::new(args, script, setup))
}

fn err(e: vkskin::gpu::GpuError) -> String {
    e.to_string()
}

impl Viewer {
    fn new(args: &Args, script: Script, setup: &runner::Setup<'_>) -> Result<Self, String> {
        let window = setup.window.ok_or("the viewer's window is missing")?;
        let device = setup.device;
        let mut notes = Vec::new();
        let model = match load_model_with_clips(
            args.file.as_deref(),
            args.max_influences,
            args.clips.as_deref(),
        ) {
            Ok(m) => m,
            Err(e) => {
                // The error is shown; the viewer goes on with the built-in
                // character.
                note(&mut notes, e, true);
                load_model(None, args.max_influences)?
            }
        };
        let desc = SceneDesc {
            color_format: setup.color_format,
            depth_format: setup.depth_format,
            frames_in_flight: setup.frames_in_flight,
            extras: true,
            anim: args.anim_on(),
        };
        let mut scene = match Scene::new(device, model.clone(), args.path.as_deref(), desc.clone())
        {
            Ok(s) => s,
            Err(e) if args.path.is_some() => {
                note(&mut notes, format!("{e}; using the automatic choice"), true);
                Scene::new(device, model, None, desc)?
            }
            Err(e) => return Err(e),
        };
        if args.motion_view {
            scene.set_motion_view(true)?;
        }
        let anim_text = scene.anim_text();
        note(
            &mut notes,
            anim_text.clone(),
            scene.anim_fallback().is_some(),
        );
        let clip = args.clip.as_deref().and_then(|name| {
            find_clip(&scene.model, name)
                .map_err(|e| note(&mut notes, e, true))
                .ok()
        });
        let player = Player::new(&scene.model, clip);
        window.set_title(&format!("vkskin viewer: {}", scene.model.name));
        let egui = EguiPass::new(device, setup.color_format, setup.depth_format)?;
        let egui_ctx = egui::Context::default();
        let max_side = device.limits().max_image_dimension2_d as usize;
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            window,
            Some(window.scale_factor() as f32),
            None,
            Some(max_side),
        );
        let orbit = Orbit::with_up(scene.model.file_axis(args.up.vector()));
        Ok(Self {
            egui,
            scene,
            device: device.clone(),
            color_format: setup.color_format,
            egui_state,
            egui_ctx,
            args: args.clone(),
            player,
            orbit,
            script,
            pending: Vec::new(),
            flags: Flags {
                wireframe: false,
                skeleton: false,
                bounds: false,
                names: false,
                panel: !args.no_panel,
                vsync: !args.gpu.no_vsync,
                up: args.up,
            },
            fade_seconds: 0.5,
            stats: Stats::default(),
            notes,
            hover: None,
            drag: None,
            cursor: None,
            modifiers: ModifiersState::empty(),
            last_camera: None,
            panel_points: 0.0,
            frame: None,
            shots: 0,
            anim_text,
        })
    }

    fn note(&mut self, text: String, error: bool) {
        note(&mut self.notes, text, error);
    }

    fn resolve_clip(&self, r: &ClipRef) -> Result<usize, String> {
        let m = &self.scene.model;
        let n = m.clips.len();
        if n == 0 {
            return Err(format!("{} has no clips", m.name));
        }
        let cur = self.player.clip.unwrap_or(0);
        match r {
            ClipRef::Next => Ok((cur + 1) % n),
            ClipRef::Previous => Ok((cur + n - 1) % n),
            ClipRef::Index(i) if *i < n => Ok(*i),
            ClipRef::Index(i) => Err(format!("{}: no clip #{i} ({n} clips)", m.name)),
            ClipRef::Name(name) => find_clip(m, name),
        }
    }

    /// Applies one action. `Err` only for a scripted action naming what
    /// does not exist (the run fails); everything else that cannot be done
    /// is a message in the window and on stderr.
    fn apply(
        &mut self,
        action: Action,
        scripted: bool,
        ctl: &mut Control<'_>,
    ) -> Result<(), String> {
        match self.try_apply(action, ctl) {
            Ok(()) => Ok(()),
            Err(Refusal::Unknown(e)) if scripted => Err(format!("script: {e}")),
            Err(Refusal::Unknown(e) | Refusal::Refused(e)) => {
                self.note(e, true);
                Ok(())
            }
            Err(Refusal::Fatal(e)) => Err(e),
        }
    }

    fn try_apply(&mut self, action: Action, ctl: &mut Control<'_>) -> Result<(), Refusal> {
        use Refusal::{Fatal, Refused, Unknown};
        log::debug!("viewer: frame {}: {action:?}", ctl.ticks());
        let clip = match &action {
            Action::Clip(r) | Action::Crossfade(r, _) => {
                Some(self.resolve_clip(r).map_err(Unknown)?)
            }
            _ => None,
        };
        let player = &mut self.player;
        let scene = &mut self.scene;
        let model = &scene.model;
        match action {
            Action::Play(p) => player.playing = p,
            Action::TogglePlay => player.playing = !player.playing,
            Action::Speed(s) => player.speed = s,
            Action::SpeedBy(f) => player.speed *= f,
            Action::Seek(t) => {
                player.seek(model, t);
                scene.teleport();
            }
            Action::Step(n) => {
                player.playing = false;
                let t = player.time + n as f32 * STEP_SECONDS;
                player.seek(model, t);
            }
            Action::Clip(_) => {
                if let Some(c) = clip {
                    player.set_clip(model, c);
                    scene.teleport();
                }
            }
            Action::Crossfade(_, secs) => {
                if let Some(c) = clip {
                    let from = player.clip.and_then(|f| model.clips.get(f));
                    let text = format!(
                        "crossfade {} -> {} over {secs} s",
                        from.map_or("(bind pose)", |f| f.name()),
                        model.clips[c].name()
                    );
                    player.crossfade(model, c, secs);
                    self.note(text, false);
                }
            }
            Action::FadeSeconds(s) => self.fade_seconds = s.max(0.0),
            Action::Weight(i, v) => {
                if i >= player.overrides.len() {
                    return Err(Unknown(format!(
                        "morph weight {i}: the model has {}",
                        player.overrides.len()
                    )));
                }
                player.set_weight(i, v);
            }
            Action::ResetWeights => player.reset_weights(),
            Action::Path(name) => {
                let desc = vkskin::skin::find(&name).ok_or_else(|| {
                    Unknown(format!(
                        "unknown skinning path {name:?}; paths: {}",
                        vkskin::skin::registry::names()
                    ))
                })?;
                scene.set_path(desc).map_err(|e| {
                    Refused(format!(
                        "path {name}: {e}; staying on {}",
                        scene.path().name
                    ))
                })?;
                self.note(format!("path: {name}"), false);
            }
            Action::PathBy(d) => {
                let all = vkskin::skin::paths();
                let cur = all
                    .iter()
                    .position(|p| p.name == scene.path().name)
                    .unwrap_or(0) as i64;
                let next = (cur + i64::from(d)).rem_euclid(all.len() as i64) as usize;
                let desc = &all[next];
                scene.set_path(desc).map_err(|e| {
                    Refused(format!(
                        "path {}: {e}; staying on {}",
                        desc.name,
                        scene.path().name
                    ))
                })?;
                self.note(format!("path: {}", desc.name), false);
            }
            Action::Influences(k) => scene.set_influences(k).map_err(Refused)?,
            Action::InfluencesBy(d) => {
                let k = (scene.influences() as i64 + i64::from(d))
                    .clamp(1, scene.loaded_influences() as i64) as usize;
                scene.set_influences(Some(k)).map_err(Refused)?;
            }
            Action::FramesInFlight(_) | Action::CycleFramesInFlight => {
                let n = match action {
                    Action::FramesInFlight(n) => n,
                    _ => scene.frames_in_flight() % MAX_FRAMES_IN_FLIGHT + 1,
                };
                if !(1..=MAX_FRAMES_IN_FLIGHT).contains(&n) {
                    return Err(Refused(format!(
                        "{n} frames in flight (1..={MAX_FRAMES_IN_FLIGHT})"
                    )));
                }
                ctl.set_frames_in_flight(n).map_err(Fatal)?;
                scene.set_frames_in_flight(n).map_err(Fatal)?;
            }
            Action::Vsync(_) | Action::ToggleVsync => {
                let on = match action {
                    Action::Vsync(v) => v,
                    _ => !self.flags.vsync,
                };
                self.flags.vsync = on;
                ctl.set_vsync(on).map_err(Fatal)?;
            }
            Action::Wireframe(v) => {
                if !scene.wireframe_available() {
                    return Err(Refused(
                        "wireframe: the device lacks fillModeNonSolid".into(),
                    ));
                }
                self.flags.wireframe = v.unwrap_or(!self.flags.wireframe);
            }
            Action::Skeleton(v) => self.flags.skeleton = v.unwrap_or(!self.flags.skeleton),
            Action::Names(v) => self.flags.names = v.unwrap_or(!self.flags.names),
            Action::Bounds(v) => self.flags.bounds = v.unwrap_or(!self.flags.bounds),
            Action::Motion(v) => {
                let on = v.unwrap_or(!scene.motion_view());
                scene
                    .set_motion_view(on)
                    .map_err(|e| Refused(format!("motion view on {}: {e}", scene.path().name)))?;
            }
            Action::Anim(on) => {
                let on = on.unwrap_or(match scene.anim_asked() {
                    AnimateOn::Cpu => AnimateOn::Gpu,
                    AnimateOn::Gpu => AnimateOn::Cpu,
                });
                scene.set_anim(on).map_err(Fatal)?;
            }
            Action::Panel(v) => self.flags.panel = v.unwrap_or(!self.flags.panel),
            Action::ResetCamera => {
                self.orbit = Orbit::with_up(self.scene.model.file_axis(self.flags.up.vector()))
            }
            Action::Up(u) => {
                self.flags.up = u.unwrap_or(self.flags.up.toggled());
                self.orbit = Orbit::with_up(self.scene.model.file_axis(self.flags.up.vector()));
            }
            Action::Orbit(dy, dp) => {
                self.orbit.yaw += dy;
                self.orbit.pitch = (self.orbit.pitch + dp).clamp(-1.5, 1.5);
            }
            Action::Zoom(f) => self.orbit.zoom = (self.orbit.zoom * f).clamp(0.05, 20.0),
            Action::Screenshot(path) => {
                let path = path.unwrap_or_else(|| {
                    let mut n = self.shots;
                    loop {
                        let p = PathBuf::from(format!("screenshot_{n}.png"));
                        if !p.exists() {
                            break p;
                        }
                        n += 1;
                    }
                });
                self.shots += 1;
                ctl.screenshot(path);
            }
            Action::Open(path) => self.open(path, ctl).map_err(Refused)?,
            Action::Resize(w, h) => ctl.resize(w, h),
            Action::Minimise => ctl.minimise(),
            Action::Restore => ctl.restore(),
            Action::Quit => ctl.exit(),
        }
        Ok(())
    }

    /// Opens a model file; on any failure the current model stays.
    fn open(&mut self, path: PathBuf, ctl: &Control<'_>) -> Result<(), String> {
        let model = load_model(Some(&path), self.args.max_influences)?;
        let desc = SceneDesc {
            color_format: self.color_format,
            depth_format: runner::DEPTH_FORMAT,
            frames_in_flight: self.scene.frames_in_flight(),
            extras: true,
            anim: self.scene.anim_asked(),
        };
        self.device.wait_idle().map_err(err)?;
        let current = self.scene.path().name;
        let scene = match Scene::new(&self.device, model.clone(), Some(current), desc.clone()) {
            Ok(s) => s,
            Err(e) => {
                let s = Scene::new(&self.device, model, None, desc)?;
                let why = format!(
                    "path {current} cannot serve {}: {e}; switched to {}",
                    s.model.name,
                    s.path().name
                );
                self.notes.push(Note {
                    text: why.clone(),
                    error: true,
                    at: Instant::now(),
                });
                eprintln!("viewer: {why}");
                s
            }
        };
        self.scene = scene;
        self.player = Player::new(&self.scene.model, None);
        self.orbit = Orbit::with_up(self.scene.model.file_axis(self.flags.up.vector()));
        self.hover = None;
        ctl.window()
            .set_title(&format!("vkskin viewer: {}", self.scene.model.name));
        let text = format!(
            "opened {} ({} joints, {} clip(s))",
            path.display(),
            self.scene.model.skeleton.len(),
            self.scene.model.clips.len()
        );
        self.note(text, false);
        Ok(())
    }

    fn key(&mut self, event: &KeyEvent) {
        let shift = self.modifiers.shift_key();
        let sign = if shift { -1 } else { 1 };
        let action = match &event.logical_key {
            Key::Named(NamedKey::Space) => Action::TogglePlay,
            Key::Named(NamedKey::ArrowLeft) => Action::Step(-1),
            Key::Named(NamedKey::ArrowRight) => Action::Step(1),
            Key::Named(NamedKey::Home) => Action::Seek(0.0),
            Key::Named(NamedKey::Tab) => Action::Panel(None),
            Key::Named(NamedKey::F12) => Action::Screenshot(None),
            Key::Named(NamedKey::Escape) => Action::Quit,
            Key::Character(c) => match c.to_lowercase().as_str() {
                "+" | "=" => Action::SpeedBy(1.25),
                "-" | "_" => Action::SpeedBy(0.8),
                "c" if shift => Action::Clip(ClipRef::Previous),
                "c" => Action::Clip(ClipRef::Next),
                "x" => Action::Crossfade(ClipRef::Next, self.fade_seconds),
                "p" => Action::PathBy(sign),
                "i" => Action::InfluencesBy(sign),
                "f" => Action::CycleFramesInFlight,
                "v" => Action::ToggleVsync,
                "w" => Action::Wireframe(None),
                "k" => Action::Skeleton(None),
                "n" => Action::Names(None),
                "b" => Action::Bounds(None),
                "m" => Action::Motion(None),
                "g" => Action::Anim(None),
                "r" => Action::ResetCamera,
                "u" => Action::Up(None),
                "s" => Action::Screenshot(None),
                _ => return,
            },
            _ => return,
        };
        self.pending.push((action, false));
    }
}

/// Why an action was not carried out.
enum Refusal {
    /// It names a clip or path that does not exist.
    Unknown(String),
    /// It cannot be done now (a path that cannot serve the mesh, a file
    /// that does not load); the previous state stays.
    Refused(String),
    /// The GPU failed while applying it.
    Fatal(String),
}

/// Prints a message and keeps it for the panel (the last 50).
fn note(notes: &mut Vec<Note>, text: String, error: bool) {
    if error {
        eprintln!("viewer: {text}");
    } else {
        println!("viewer: {text}");
    }
    notes.push(Note {
        text,
        error,
        at: Instant::now(),
    });
    if notes.len() > 50 {
        notes.remove(0);
    }
}

impl App for Viewer {
    fn event(&mut self, ctl: &mut Control<'_>, event: &WindowEvent) {
        let consumed = self
            .egui_state
            .on_window_event(ctl.window(), event)
            .consumed;
        let over_ui = self.egui_ctx.is_pointer_over_area() || self.egui_ctx.wants_pointer_input();
        match event {
            WindowEvent::ModifiersChanged(m) => self.modifiers = m.state(),
            WindowEvent::KeyboardInput { event, .. }
                if event.state == ElementState::Pressed
                    && !consumed
                    && !self.egui_ctx.wants_keyboard_input() =>
            {
                self.key(event)
            }
            WindowEvent::MouseInput { state, button, .. } => match state {
                ElementState::Pressed if !over_ui => self.drag = Some(*button),
                ElementState::Released => self.drag = None,
                _ => {}
            },
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x, position.y);
                if let (Some(b), Some((px, py))) = (self.drag, self.cursor) {
                    let (dx, dy) = ((x - px) as f32, (y - py) as f32);
                    let pan = b == MouseButton::Right
                        || (b == MouseButton::Left && self.modifiers.shift_key());
                    if pan {
                        if let Some((cam, h)) = self.last_camera {
                            self.orbit.pan_by(&cam, dx, dy, h as f32);
                        }
                    } else if b == MouseButton::Left {
                        self.orbit.rotate(dx, dy);
                    }
                }
                self.cursor = Some((x, y));
            }
            WindowEvent::MouseWheel { delta, .. } if !over_ui => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => *y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.orbit.wheel(lines);
            }
            WindowEvent::DroppedFile(path) => {
                self.pending.push((Action::Open(path.clone()), false))
            }
            _ => {}
        }
    }

    /// The script's events due now and the pending actions, before the
    /// frame.
    fn tick(&mut self, ctl: &mut Control<'_>) -> Result<(), String> {
        let due = self.script.due(ctl.ticks());
        self.pending.extend(due.into_iter().map(|a| (a, true)));
        for (action, scripted) in std::mem::take(&mut self.pending) {
            self.apply(action, scripted, ctl)?;
        }
        // A path, view or model change may move the animation (GPU
        // animation serves only some paths): say where it runs now.
        let text = self.scene.anim_text();
        if text != self.anim_text {
            let fell_back = self.scene.anim_fallback().is_some();
            self.anim_text = text.clone();
            self.note(text, fell_back);
        }
        Ok(())
    }

    /// Poses the model, runs the panel and records the scene's prepass.
    fn prepare(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let window = f.window.ok_or("the viewer's window is missing")?;
        let dt = f.dt.min(0.25);
        let t0 = Instant::now();
        self.player.advance(&self.scene.model, dt);
        self.scene.motion_dt = if self.player.playing {
            dt * self.player.speed
        } else {
            0.0
        };
        // With GPU animation the CPU poses the skeleton only for the
        // overlays that show it (the joints, the skinned box).
        let gpu = self.scene.anim_on() == AnimateOn::Gpu;
        if gpu {
            let p = &self.player;
            let mut record = AnimRecord::play(
                p.clip.unwrap_or(0) as u32,
                p.time,
                0.0,
                vkskin::anim::PlaybackMode::Loop,
            );
            if let Some(f) = &p.fade {
                record = record.crossfade(
                    f.to as u32,
                    f.time,
                    0.0,
                    vkskin::anim::PlaybackMode::Loop,
                    f.weight(),
                );
            }
            self.scene.set_record(record);
        }
        if !gpu || self.flags.skeleton || self.flags.names || self.flags.bounds {
            let locals = self
                .player
                .sample(&self.scene.model)
                .map_err(|e| format!("{}: {e}", self.scene.model.name))?;
            self.scene.pose(locals)?;
        }
        let weights = self
            .player
            .sample_weights(&self.scene.model)
            .map_err(|e| format!("{}: {e}", self.scene.model.name))?;
        self.scene.set_weights(weights);
        let cpu_ms = t0.elapsed().as_secs_f32() * 1e3;

        // The model is framed in the part of the window the panel leaves
        // free: the camera gets that part's aspect, and clip-space x is
        // squeezed and shifted into it (nothing changes with no panel).
        let ppp = egui_winit::pixels_per_point(&self.egui_ctx, window);
        let (w, h) = (f.extent.width as f32, f.extent.height as f32);
        let panel_px = if self.flags.panel {
            (self.panel_points * ppp).clamp(0.0, w * 0.6)
        } else {
            0.0
        };
        let free_aspect = (w - panel_px) / h;
        let camera = self.orbit.camera(&self.scene.bounds, free_aspect);
        let mut view_proj = camera.view_proj(free_aspect);
        if panel_px > 0.0 {
            view_proj = Mat4::from_translation(Vec3::new(panel_px / w, 0.0, 0.0))
                * Mat4::from_scale(Vec3::new((w - panel_px) / w, 1.0, 1.0))
                * view_proj;
        }
        self.last_camera = Some((camera, f.extent.height));
        self.scene.update(f.index, view_proj)?;
        let smooth = |old: f32, new: f32| {
            if old == 0.0 {
                new
            } else {
                old * 0.9 + new * 0.1
            }
        };
        self.stats.cpu_ms = smooth(self.stats.cpu_ms, cpu_ms);
        if dt > 0.0 {
            self.stats.fps = smooth(self.stats.fps, 1.0 / dt);
        }
        if let Some(ms) = self.scene.gpu_ms(f.index) {
            self.stats.gpu_ms = Some(ms);
        }
        self.stats.anim = self.scene.anim_on();
        self.stats.anim_gpu_ms = self.scene.anim_gpu_ms();

        let joints_on_screen: Vec<Option<egui::Pos2>> = if self.flags.skeleton || self.flags.names {
            self.scene
                .joints
                .iter()
                .map(|m| {
                    let clip = view_proj * Vec3::from(m.translation).extend(1.0);
                    (clip.w > 0.0).then(|| {
                        egui::pos2(
                            (clip.x / clip.w * 0.5 + 0.5) * w / ppp,
                            (clip.y / clip.w * 0.5 + 0.5) * h / ppp,
                        )
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        // The skinned box's corners on screen (corner c: bit 0 x, 1 y, 2 z
        // at max), `None` for a corner behind the eye.
        let bounds_on_screen: Vec<Option<egui::Pos2>> = match self
            .flags
            .bounds
            .then(|| self.scene.skinned_bounds())
            .flatten()
        {
            Some(b) => (0..8)
                .map(|c| {
                    let p = Vec3::new(
                        if c & 1 == 0 { b.min.x } else { b.max.x },
                        if c & 2 == 0 { b.min.y } else { b.max.y },
                        if c & 4 == 0 { b.min.z } else { b.max.z },
                    );
                    let clip = view_proj * p.extend(1.0);
                    (clip.w > 0.0).then(|| {
                        egui::pos2(
                            (clip.x / clip.w * 0.5 + 0.5) * w / ppp,
                            (clip.y / clip.w * 0.5 + 0.5) * h / ppp,
                        )
                    })
                })
                .collect(),
            None => Vec::new(),
        };
        let raw = self.egui_state.take_egui_input(window);
        let device_name = self.device.physical().name.clone();
        let (scene, player) = (&self.scene, &self.player);
        let snapshot = Snapshot {
            model: &scene.model,
            clip: player.clip,
            time: player.time,
            duration: player.duration(&scene.model),
            playing: player.playing,
            speed: player.speed,
            fade: player.fade.as_ref().map(|f| (f.to, f.weight())),
            fade_seconds: self.fade_seconds,
            path: scene.path().name,
            influences: scene.influences(),
            loaded_influences: scene.loaded_influences(),
            frames_in_flight: scene.frames_in_flight(),
            vsync: self.flags.vsync,
            wireframe: self.flags.wireframe,
            wireframe_available: scene.wireframe_available(),
            skeleton: self.flags.skeleton,
            bounds: self.flags.bounds,
            motion: scene.motion_view(),
            anim_asked: scene.anim_asked(),
            anim_fallback: scene.anim_fallback(),
            bounds_on_screen: &bounds_on_screen,
            names: self.flags.names,
            stats: self.stats,
            draw_parts: scene.draw_parts(),
            gpu_vertices: scene.gpu_vertices(),
            extent: (f.extent.width, f.extent.height),
            swapchains: f.swapchains,
            device: &device_name,
            lossy_bones: scene.report.lossy.len(),
            joints_on_screen: &joints_on_screen,
            notes: &self.notes,
            panel: self.flags.panel,
            up: self.flags.up,
            weights: scene.weights(),
            overridden: &player.overrides,
        };
        let mut actions = Vec::new();
        let mut hover = self.hover;
        let mut panel_points = self.panel_points;
        let output = self.egui_ctx.run(raw, |ctx| {
            panel_points = ui::build(ctx, &snapshot, &mut actions, &mut hover);
        });
        self.panel_points = panel_points;
        self.hover = hover;
        self.pending.extend(actions.into_iter().map(|a| (a, false)));
        self.egui_state
            .handle_platform_output(window, output.platform_output);
        self.egui.textures(&output.textures_delta)?;
        let primitives = self
            .egui_ctx
            .tessellate(output.shapes, output.pixels_per_point);
        self.frame = Some(Prepared {
            view_proj,
            primitives,
            pixels_per_point: output.pixels_per_point,
        });
        self.scene.prepass(f.cmd, f.index)
    }

    /// The scene, the skeleton overlay and the panel.
    fn draw(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let p = self.frame.as_ref().ok_or("viewer: draw before prepare")?;
        self.scene.record(f.cmd, f.index, self.flags.wireframe)?;
        if self.flags.skeleton {
            self.scene.record_markers(f.cmd, p.view_proj);
        }
        self.egui
            .draw(f.cmd, f.extent, p.pixels_per_point, &p.primitives)
    }

    fn finish(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.frame = None;
        self.scene.finish(f.cmd, f.index)
    }

    fn screenshot(&mut self, path: &std::path::Path, result: Result<(), String>) {
        match result {
            Ok(()) => self.note(format!("screenshot {}", path.display()), false),
            Err(e) => self.note(format!("screenshot: {e}"), true),
        }
    }

    fn finished(&mut self, s: &Summary) -> Result<(), String> {
        println!(
            "viewer: {} frame(s): {} presented, {} skipped; swapchains created: {}",
            s.ticks, s.presented, s.skipped, s.swapchains
        );
        Ok(())
    }
}
