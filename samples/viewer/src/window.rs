//! The windowed viewer: winit 0.30, a swapchain that survives resize,
//! minimise (zero extent) and out-of-date reports, the egui panel, mouse
//! and keyboard, dropped files and the `--script` events.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vkskin::glam::{Mat4, Vec3};
use vkskin::gpu::{vk, Device, DeviceDesc, GpuError, MessageLog, Surface};
use vkskin::render::{Camera, FramesInFlight, WindowTarget};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, KeyEvent, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, ModifiersState, NamedKey};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

use crate::egui_pass::EguiPass;
use crate::orbit::Orbit;
use crate::player::Player;
use crate::scene::{Scene, SceneDesc};
use crate::script::{Action, ClipRef, Script};
use crate::shot::ShotTarget;
use crate::ui::{self, Note, Snapshot, Stats};
use crate::{load_model, Args, CLEAR};

/// Step of the frame-step keys and buttons, seconds.
pub const STEP_SECONDS: f32 = 1.0 / 30.0;
/// Most frames in flight the panel offers.
pub const MAX_FRAMES_IN_FLIGHT: usize = 3;

/// Everything on the GPU side. Dropping it idles the device first, then
/// the fields go in declaration order: the egui renderer, frames and
/// scene, the swapchain, the surface, then the device (and with the last
/// Arc, the instance and its messenger).
struct Gpu {
    egui: EguiPass,
    frames: FramesInFlight,
    scene: Scene,
    target: WindowTarget,
    color_format: vk::Format,
    surface: Arc<Surface>,
    device: Arc<Device>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if let Err(e) = self.device.wait_idle() {
            log::error!("viewer: wait_idle at exit: {e}");
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Flags {
    wireframe: bool,
    skeleton: bool,
    names: bool,
    panel: bool,
    vsync: bool,
}

struct App {
    args: Args,
    // Declared before the window: the surface must go first.
    gpu: Option<Gpu>,
    egui_state: Option<egui_winit::State>,
    window: Option<Window>,
    egui_ctx: egui::Context,
    log: Option<MessageLog>,
    fatal: Option<String>,
    player: Option<Player>,
    orbit: Orbit,
    script: Script,
    /// Actions to apply before the next frame, and whether a script sent
    /// them (a script naming what does not exist is a failure).
    pending: Vec<(Action, bool)>,
    flags: Flags,
    fade_seconds: f32,
    ticks: u64,
    presented: u64,
    skipped: u64,
    /// Swapchains created by window targets since replaced (vsync).
    swapchains_before: u32,
    last: Instant,
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
    shot_request: Option<PathBuf>,
    shots: u32,
    minimised: bool,
}

pub fn run(args: &Args) -> Result<MessageLog, String> {
    let script = match &args.script {
        Some(s) => Script::parse(s)?,
        None => Script::default(),
    };
    let event_loop = EventLoop::new().map_err(|e| format!("opening the display: {e}"))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        args: args.clone(),
        gpu: None,
        egui_state: None,
        window: None,
        egui_ctx: egui::Context::default(),
        log: None,
        fatal: None,
        player: None,
        orbit: Orbit::default(),
        script,
        pending: Vec::new(),
        flags: Flags {
            wireframe: false,
            skeleton: false,
            names: false,
            panel: !args.no_panel,
            vsync: !args.no_vsync,
        },
        fade_seconds: 0.5,
        ticks: 0,
        presented: 0,
        skipped: 0,
        swapchains_before: 0,
        last: Instant::now(),
        stats: Stats::default(),
        notes: Vec::new(),
        hover: None,
        drag: None,
        cursor: None,
        modifiers: ModifiersState::empty(),
        last_camera: None,
        panel_points: 0.0,
        shot_request: None,
        shots: 0,
        minimised: false,
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| format!("event loop: {e}"))?;
    let swapchains = app.swapchains_before + app.gpu.as_ref().map_or(0, |g| g.target.recreations());
    // GPU objects first, then the window they draw into.
    drop(app.gpu.take());
    drop(app.egui_state.take());
    drop(app.window.take());
    if let Some(e) = app.fatal {
        return Err(e);
    }
    println!(
        "viewer: {} frame(s): {} presented, {} skipped; swapchains created: {swapchains}",
        app.ticks, app.presented, app.skipped
    );
    app.log.ok_or_else(|| "the window never opened".to_string())
}

fn err(e: GpuError) -> String {
    e.to_string()
}

impl App {
    fn note(&mut self, text: String, error: bool) {
        if error {
            eprintln!("viewer: {text}");
        } else {
            println!("viewer: {text}");
        }
        self.notes.push(Note {
            text,
            error,
            at: Instant::now(),
        });
        if self.notes.len() > 50 {
            self.notes.remove(0);
        }
    }

    fn scene_desc(&self, color_format: vk::Format, frames_in_flight: usize) -> SceneDesc {
        SceneDesc {
            color_format,
            depth_format: WindowTarget::DEPTH_FORMAT,
            frames_in_flight,
            extras: true,
        }
    }

    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let (width, height) = self.args.size;
        let attrs = Window::default_attributes()
            .with_title("vkskin viewer")
            .with_inner_size(PhysicalSize::new(width, height));
        let window = event_loop
            .create_window(attrs)
            .map_err(|e| format!("creating the window: {e}"))?;
        let display = window.display_handle().map_err(|e| e.to_string())?.as_raw();
        let handle = window.window_handle().map_err(|e| e.to_string())?.as_raw();
        let instance = sample_common::instance("viewer", self.args.validation(), Some(display))?;
        self.log = Some(instance.messages().clone());
        // SAFETY: the window is stored in `self` and dropped after `gpu`.
        let surface = unsafe { Surface::new(&instance, display, handle) }.map_err(err)?;
        let device = Device::new(
            &instance,
            &DeviceDesc {
                selector: self.args.device.as_deref(),
                surface: Some(&surface),
            },
        )
        .map_err(err)?;
        let size = window.inner_size();
        let target =
            WindowTarget::new(&device, &surface, size.width, size.height, self.flags.vsync)
                .map_err(err)?;
        let color_format = target.color_format().map_err(err)?;
        let fif = self.args.frames_in_flight.clamp(1, MAX_FRAMES_IN_FLIGHT);
        let model = match load_model(self.args.file.as_deref(), self.args.max_influences) {
            Ok(m) => m,
            Err(e) => {
                // The error is shown; the viewer goes on with the built-in
                // character.
                self.note(e, true);
                load_model(None, self.args.max_influences)?
            }
        };
        let desc = self.scene_desc(color_format, fif);
        let scene = match Scene::new(
            &device,
            model.clone(),
            self.args.path.as_deref(),
            desc.clone(),
        ) {
            Ok(s) => s,
            Err(e) if self.args.path.is_some() => {
                self.note(format!("{e}; using the automatic choice"), true);
                Scene::new(&device, model, None, desc)?
            }
            Err(e) => return Err(e),
        };
        let clip = match &self.args.clip {
            Some(name) => {
                let c = scene.model.clips.iter().position(|c| c.name() == name);
                if c.is_none() {
                    self.note(
                        format!(
                            "{}: no clip {name:?}; clips: {}",
                            scene.model.name,
                            crate::headless::clip_names(&scene.model)
                        ),
                        true,
                    );
                }
                c
            }
            None => None,
        };
        self.player = Some(Player::new(&scene.model, clip));
        window.set_title(&format!("vkskin viewer: {}", scene.model.name));
        let egui = EguiPass::new(&device, color_format, WindowTarget::DEPTH_FORMAT)?;
        let frames = FramesInFlight::new(&device, fif).map_err(err)?;
        let max_side = device.limits().max_image_dimension2_d as usize;
        self.egui_state = Some(egui_winit::State::new(
            self.egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(max_side),
        ));
        self.gpu = Some(Gpu {
            egui,
            frames,
            scene,
            target,
            color_format,
            surface,
            device,
        });
        self.window = Some(window);
        self.last = Instant::now();
        Ok(())
    }

    /// One pass of the redraw loop: due script events and pending actions,
    /// then a frame (skipped while the window has no area).
    fn tick(&mut self, event_loop: &ActiveEventLoop) {
        let due = self.script.due(self.ticks);
        self.pending.extend(due.into_iter().map(|a| (a, true)));
        for (action, scripted) in std::mem::take(&mut self.pending) {
            if let Err(e) = self.apply(action, scripted, event_loop) {
                self.fatal = Some(e);
                event_loop.exit();
                return;
            }
        }
        match self.draw() {
            Ok(true) => self.presented += 1,
            Ok(false) => {
                self.skipped += 1;
                // Minimised or out of date: don't spin.
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                self.fatal = Some(e);
                event_loop.exit();
                return;
            }
        }
        self.ticks += 1;
        if self.args.frames.is_some_and(|n| self.ticks >= n) {
            event_loop.exit();
        }
    }

    fn resolve_clip(&self, r: &ClipRef) -> Result<usize, String> {
        let (Some(gpu), Some(player)) = (self.gpu.as_ref(), self.player.as_ref()) else {
            return Err("no model".into());
        };
        let m = &gpu.scene.model;
        let n = m.clips.len();
        if n == 0 {
            return Err(format!("{} has no clips", m.name));
        }
        let cur = player.clip.unwrap_or(0);
        match r {
            ClipRef::Next => Ok((cur + 1) % n),
            ClipRef::Previous => Ok((cur + n - 1) % n),
            ClipRef::Index(i) if *i < n => Ok(*i),
            ClipRef::Index(i) => Err(format!("{}: no clip #{i} ({n} clips)", m.name)),
            ClipRef::Name(name) => m
                .clips
                .iter()
                .position(|c| c.name() == name)
                .ok_or_else(|| {
                    format!(
                        "{}: no clip {name:?}; clips: {}",
                        m.name,
                        crate::headless::clip_names(m)
                    )
                }),
        }
    }

    /// Applies one action. `Err` only for a scripted action naming what
    /// does not exist (the run fails); everything else that cannot be done
    /// is a message in the window and on stderr.
    fn apply(
        &mut self,
        action: Action,
        scripted: bool,
        event_loop: &ActiveEventLoop,
    ) -> Result<(), String> {
        match self.try_apply(action, event_loop) {
            Ok(()) => Ok(()),
            Err(Refusal::Unknown(e)) if scripted => Err(format!("script: {e}")),
            Err(Refusal::Unknown(e) | Refusal::Refused(e)) => {
                self.note(e, true);
                Ok(())
            }
            Err(Refusal::Fatal(e)) => Err(e),
        }
    }

    fn try_apply(&mut self, action: Action, event_loop: &ActiveEventLoop) -> Result<(), Refusal> {
        use Refusal::{Fatal, Refused, Unknown};
        log::debug!("viewer: frame {}: {action:?}", self.ticks);
        let clip = match &action {
            Action::Clip(r) | Action::Crossfade(r, _) => {
                Some(self.resolve_clip(r).map_err(Unknown)?)
            }
            _ => None,
        };
        let (Some(gpu), Some(player), Some(window)) = (
            self.gpu.as_mut(),
            self.player.as_mut(),
            self.window.as_ref(),
        ) else {
            return Ok(());
        };
        let model = &gpu.scene.model;
        match action {
            Action::Play(p) => player.playing = p,
            Action::TogglePlay => player.playing = !player.playing,
            Action::Speed(s) => player.speed = s,
            Action::SpeedBy(f) => player.speed *= f,
            Action::Seek(t) => player.seek(model, t),
            Action::Step(n) => {
                player.playing = false;
                let t = player.time + n as f32 * STEP_SECONDS;
                player.seek(model, t);
            }
            Action::Clip(_) => {
                if let Some(c) = clip {
                    player.set_clip(model, c);
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
            Action::Path(name) => {
                let desc = vkskin::skin::find(&name).ok_or_else(|| {
                    Unknown(format!(
                        "unknown skinning path {name:?}; paths: {}",
                        vkskin::skin::registry::names()
                    ))
                })?;
                gpu.scene.set_path(desc).map_err(|e| {
                    Refused(format!(
                        "path {name}: {e}; staying on {}",
                        gpu.scene.path().name
                    ))
                })?;
                self.note(format!("path: {name}"), false);
            }
            Action::PathBy(d) => {
                let all = vkskin::skin::paths();
                let cur = all
                    .iter()
                    .position(|p| p.name == gpu.scene.path().name)
                    .unwrap_or(0) as i64;
                let next = (cur + i64::from(d)).rem_euclid(all.len() as i64) as usize;
                let desc = &all[next];
                gpu.scene.set_path(desc).map_err(|e| {
                    Refused(format!(
                        "path {}: {e}; staying on {}",
                        desc.name,
                        gpu.scene.path().name
                    ))
                })?;
                self.note(format!("path: {}", desc.name), false);
            }
            Action::Influences(k) => gpu.scene.set_influences(k).map_err(Refused)?,
            Action::InfluencesBy(d) => {
                let k = (gpu.scene.influences() as i64 + i64::from(d))
                    .clamp(1, gpu.scene.loaded_influences() as i64)
                    as usize;
                gpu.scene.set_influences(Some(k)).map_err(Refused)?;
            }
            Action::FramesInFlight(_) | Action::CycleFramesInFlight => {
                let n = match action {
                    Action::FramesInFlight(n) => n,
                    _ => gpu.scene.frames_in_flight() % MAX_FRAMES_IN_FLIGHT + 1,
                };
                if !(1..=MAX_FRAMES_IN_FLIGHT).contains(&n) {
                    return Err(Refused(format!(
                        "{n} frames in flight (1..={MAX_FRAMES_IN_FLIGHT})"
                    )));
                }
                gpu.device.wait_idle().map_err(|e| Fatal(err(e)))?;
                gpu.frames = FramesInFlight::new(&gpu.device, n).map_err(|e| Fatal(err(e)))?;
                gpu.scene.set_frames_in_flight(n).map_err(Fatal)?;
            }
            Action::Vsync(_) | Action::ToggleVsync => {
                let on = match action {
                    Action::Vsync(v) => v,
                    _ => !self.flags.vsync,
                };
                self.flags.vsync = on;
                self.swapchains_before += gpu.target.recreations();
                // A target with no area has no swapchain yet, so the old
                // one can go first; the resize below makes the new one.
                gpu.target = WindowTarget::new(&gpu.device, &gpu.surface, 0, 0, on)
                    .map_err(|e| Fatal(err(e)))?;
                if !self.minimised {
                    let s = window.inner_size();
                    gpu.target.resize(s.width, s.height);
                }
            }
            Action::Wireframe(v) => {
                if !gpu.scene.wireframe_available() {
                    return Err(Refused(
                        "wireframe: the device lacks fillModeNonSolid".into(),
                    ));
                }
                self.flags.wireframe = v.unwrap_or(!self.flags.wireframe);
            }
            Action::Skeleton(v) => self.flags.skeleton = v.unwrap_or(!self.flags.skeleton),
            Action::Names(v) => self.flags.names = v.unwrap_or(!self.flags.names),
            Action::Panel(v) => self.flags.panel = v.unwrap_or(!self.flags.panel),
            Action::ResetCamera => self.orbit = Orbit::default(),
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
                self.shot_request = Some(path);
            }
            Action::Open(path) => self.open(path).map_err(Refused)?,
            Action::Resize(w, h) => {
                if let Some(now) = window.request_inner_size(PhysicalSize::new(w, h)) {
                    gpu.target.resize(now.width, now.height);
                }
            }
            Action::Minimise => {
                window.set_minimized(true);
                // Without a window manager (Xvfb) nothing else would tell
                // the swapchain; with one, this is what its resize says.
                gpu.target.resize(0, 0);
                self.minimised = true;
            }
            Action::Restore => {
                window.set_minimized(false);
                let s = window.inner_size();
                gpu.target.resize(s.width, s.height);
                self.minimised = false;
            }
            Action::Quit => event_loop.exit(),
        }
        Ok(())
    }

    /// Opens a model file; on any failure the current model stays.
    fn open(&mut self, path: PathBuf) -> Result<(), String> {
        let model = load_model(Some(&path), self.args.max_influences)?;
        let Some(gpu) = self.gpu.as_mut() else {
            return Ok(());
        };
        let desc = SceneDesc {
            color_format: gpu.color_format,
            depth_format: WindowTarget::DEPTH_FORMAT,
            frames_in_flight: gpu.scene.frames_in_flight(),
            extras: true,
        };
        gpu.device.wait_idle().map_err(err)?;
        let current = gpu.scene.path().name;
        let scene = match Scene::new(&gpu.device, model.clone(), Some(current), desc.clone()) {
            Ok(s) => s,
            Err(e) => {
                let s = Scene::new(&gpu.device, model, None, desc)?;
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
        gpu.scene = scene;
        self.player = Some(Player::new(&gpu.scene.model, None));
        self.orbit = Orbit::default();
        self.hover = None;
        if let Some(w) = self.window.as_ref() {
            w.set_title(&format!("vkskin viewer: {}", gpu.scene.model.name));
        }
        let text = format!(
            "opened {} ({} joints, {} clip(s))",
            path.display(),
            gpu.scene.model.skeleton.len(),
            gpu.scene.model.clips.len()
        );
        self.note(text, false);
        Ok(())
    }

    /// Draws and presents one frame; `Ok(false)` when it was skipped.
    fn draw(&mut self) -> Result<bool, String> {
        let (Some(gpu), Some(window), Some(egui_state), Some(player)) = (
            self.gpu.as_mut(),
            self.window.as_ref(),
            self.egui_state.as_mut(),
            self.player.as_mut(),
        ) else {
            return Ok(false);
        };
        let frame = gpu.frames.begin().map_err(err)?;
        let Some(image) = gpu.target.acquire(&frame).map_err(err)? else {
            gpu.frames.abandon(&frame).map_err(err)?;
            self.last = Instant::now();
            return Ok(false);
        };
        let now = Instant::now();
        let dt = (now - self.last).as_secs_f32().min(0.25);
        self.last = now;
        let extent = image.extent;

        let t0 = Instant::now();
        player.advance(&gpu.scene.model, dt);
        let locals = player
            .sample(&gpu.scene.model)
            .map_err(|e| format!("{}: {e}", gpu.scene.model.name))?;
        gpu.scene.pose(locals)?;
        let cpu_ms = t0.elapsed().as_secs_f32() * 1e3;

        // The model is framed in the part of the window the panel leaves
        // free: the camera gets that part's aspect, and clip-space x is
        // squeezed and shifted into it (nothing changes with no panel).
        let ppp = egui_winit::pixels_per_point(&self.egui_ctx, window);
        let (w, h) = (extent.width as f32, extent.height as f32);
        let panel_px = if self.flags.panel {
            (self.panel_points * ppp).clamp(0.0, w * 0.6)
        } else {
            0.0
        };
        let free_aspect = (w - panel_px) / h;
        let camera = self.orbit.camera(&gpu.scene.bounds, free_aspect);
        let mut view_proj = camera.view_proj(free_aspect);
        if panel_px > 0.0 {
            view_proj = Mat4::from_translation(Vec3::new(panel_px / w, 0.0, 0.0))
                * Mat4::from_scale(Vec3::new((w - panel_px) / w, 1.0, 1.0))
                * view_proj;
        }
        self.last_camera = Some((camera, extent.height));
        gpu.scene.update(frame.index, view_proj)?;
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
        if let Some(ms) = gpu.scene.gpu_ms(frame.index) {
            self.stats.gpu_ms = Some(ms);
        }

        let joints_on_screen: Vec<Option<egui::Pos2>> = if self.flags.skeleton || self.flags.names {
            gpu.scene
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
        let raw = egui_state.take_egui_input(window);
        let device_name = gpu.device.physical().name.clone();
        let snapshot = Snapshot {
            model: &gpu.scene.model,
            clip: player.clip,
            time: player.time,
            duration: player.duration(&gpu.scene.model),
            playing: player.playing,
            speed: player.speed,
            fade: player.fade.as_ref().map(|f| (f.to, f.weight())),
            fade_seconds: self.fade_seconds,
            path: gpu.scene.path().name,
            influences: gpu.scene.influences(),
            loaded_influences: gpu.scene.loaded_influences(),
            frames_in_flight: gpu.scene.frames_in_flight(),
            vsync: self.flags.vsync,
            wireframe: self.flags.wireframe,
            wireframe_available: gpu.scene.wireframe_available(),
            skeleton: self.flags.skeleton,
            names: self.flags.names,
            stats: self.stats,
            draw_parts: gpu.scene.draw_parts(),
            gpu_vertices: gpu.scene.gpu_vertices(),
            extent: (extent.width, extent.height),
            swapchains: self.swapchains_before + gpu.target.recreations(),
            device: &device_name,
            lossy_bones: gpu.scene.report.lossy.len(),
            joints_on_screen: &joints_on_screen,
            notes: &self.notes,
            panel: self.flags.panel,
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
        egui_state.handle_platform_output(window, output.platform_output);
        gpu.egui.textures(&output.textures_delta)?;
        let primitives = self
            .egui_ctx
            .tessellate(output.shapes, output.pixels_per_point);

        let cmd = frame.cmd;
        let flags = self.flags;
        gpu.scene.prepass(cmd, frame.index)?;
        gpu.target.begin(cmd, image, CLEAR).map_err(err)?;
        let pass = |gpu: &mut Gpu| -> Result<(), String> {
            gpu.scene.record(cmd, frame.index, flags.wireframe)?;
            if flags.skeleton {
                gpu.scene.record_markers(cmd, view_proj);
            }
            gpu.egui
                .draw(cmd, extent, output.pixels_per_point, &primitives)
        };
        pass(gpu)?;
        gpu.target.end(cmd, image).map_err(err)?;
        let shot = match self.shot_request.take() {
            Some(path) => {
                let s = ShotTarget::new(
                    &gpu.device,
                    gpu.color_format,
                    WindowTarget::DEPTH_FORMAT,
                    extent,
                    path,
                )?;
                s.begin(cmd, CLEAR);
                pass(gpu)?;
                s.end_and_copy(cmd);
                Some(s)
            }
            None => None,
        };
        gpu.scene.finish(cmd, frame.index)?;
        gpu.frames
            .submit(
                &frame,
                Some((
                    frame.image_available,
                    vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                )),
                Some(gpu.target.render_finished(image)),
            )
            .map_err(err)?;
        gpu.target.present(image).map_err(err)?;
        if let Some(s) = shot {
            gpu.frames.wait(&frame).map_err(err)?;
            match s.write() {
                Ok(()) => self.note(format!("screenshot {}", s.path.display()), false),
                Err(e) => self.note(format!("screenshot: {e}"), true),
            }
        }
        Ok(true)
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
                "r" => Action::ResetCamera,
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

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        if let Err(e) = self.init(event_loop) {
            self.fatal = Some(e);
            event_loop.exit();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let consumed = match (self.egui_state.as_mut(), self.window.as_ref()) {
            (Some(s), Some(w)) => s.on_window_event(w, &event).consumed,
            _ => false,
        };
        let over_ui = self.egui_ctx.is_pointer_over_area() || self.egui_ctx.wants_pointer_input();
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::ModifiersChanged(m) => self.modifiers = m.state(),
            WindowEvent::KeyboardInput { event, .. }
                if event.state == ElementState::Pressed
                    && !consumed
                    && !self.egui_ctx.wants_keyboard_input() =>
            {
                self.key(&event)
            }
            WindowEvent::MouseInput { state, button, .. } => match state {
                ElementState::Pressed if !over_ui => self.drag = Some(button),
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
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.orbit.wheel(lines);
            }
            WindowEvent::DroppedFile(path) => self.pending.push((Action::Open(path), false)),
            WindowEvent::Resized(size) => {
                if let Some(g) = self.gpu.as_mut() {
                    if !self.minimised {
                        g.target.resize(size.width, size.height);
                    }
                }
            }
            WindowEvent::RedrawRequested => self.tick(event_loop),
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(w) = self.window.as_ref() {
            w.request_redraw();
        }
    }
}
