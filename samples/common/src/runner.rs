//! The windowed samples' one frame loop, in a window or headless.
//!
//! A sample implements [`App`] (what to draw each frame, what to do with
//! its input) and hands [`run`] (or [`window`] / [`headless`]) a function
//! that makes it once the device exists. The runner owns everything else:
//!
//! - **window**: the winit event loop; on the first resume the window, the
//!   instance (with the display), the surface, the device and a
//!   [`WindowTarget`] (swapchain + depth, recreated on resize, on
//!   out-of-date or suboptimal reports and after a minimise: no acquire or
//!   present while the window has no area); [`FramesInFlight`] (per-slot
//!   command buffer, fence and acquire semaphore); screenshots of the
//!   presented frame (drawn a second time into an [`OffscreenTarget`] of
//!   the swapchain's format and size, written once the frame has
//!   finished); Close and (by default) Escape quit; `frames` passes or
//!   presents, then exit.
//! - **headless**: an [`OffscreenTarget`], N frames at `t = i / fps`, each
//!   waited for, read back and written as `frame_NNNN.png`.
//!
//! Either way the validation messages are returned once every GPU object,
//! the device and the instance are gone, so the leak report is included.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vkskin::gpu::{validation_default, vk, Device, DeviceDesc, GpuError, MessageLog, Surface};
use vkskin::render::{
    write_png, FramesInFlight, OffscreenTarget, WindowTarget, DEFAULT_FRAMES_IN_FLIGHT,
};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

use crate::display_present;

/// The depth format of both targets.
pub const DEPTH_FORMAT: vk::Format = WindowTarget::DEPTH_FORMAT;

fn err(e: GpuError) -> String {
    e.to_string()
}

/// How a sample runs; [`Options::new`] gives the usual defaults.
#[derive(Clone, Debug)]
pub struct Options {
    /// The sample's name: messages, the instance, the default title.
    pub name: &'static str,
    /// The window's title.
    pub title: String,
    /// Initial window size, or the headless image's size.
    pub size: (u32, u32),
    pub clear: [f32; 4],
    pub validation: bool,
    /// `--device`: index or name substring.
    pub device: Option<String>,
    pub vsync: bool,
    pub frames_in_flight: usize,
    /// Frames to draw, then exit: in a window `None` is until closed;
    /// headless `None` is [`Options::headless_frames`].
    pub frames: Option<u64>,
    /// In a window: whether the passes skipped (minimised, out of date)
    /// count towards `frames`, or only the presented ones.
    pub count_skipped: bool,
    /// `--headless` was given ([`run`] also goes headless with no display).
    pub headless: bool,
    pub headless_frames: u64,
    /// The headless PNG folder.
    pub out: PathBuf,
    /// Headless: frame i shows `t = i / fps` seconds.
    pub fps: f32,
}

impl Options {
    /// 512x512, vsync, the engine's frames in flight, validation as the
    /// build has it, 60 headless frames at 30 fps into `out/NAME`.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            title: format!("vkskin {name}"),
            size: (512, 512),
            clear: [0.0, 0.0, 0.0, 1.0],
            validation: validation_default(),
            device: None,
            vsync: true,
            frames_in_flight: DEFAULT_FRAMES_IN_FLIGHT,
            frames: None,
            count_skipped: false,
            headless: false,
            headless_frames: 60,
            out: PathBuf::from("out").join(name),
            fps: 30.0,
        }
    }

    /// Whether to go headless: when asked, or when there is no display
    /// (said on stderr).
    pub fn headless_wanted(&self) -> bool {
        let headless = self.headless || !display_present();
        if !self.headless && headless {
            eprintln!(
                "{}: no display (DISPLAY/WAYLAND_DISPLAY unset): rendering headless to {}",
                self.name,
                self.out.display()
            );
        }
        headless
    }
}

/// What a sample's [`App`] is made from.
pub struct Setup<'a> {
    pub device: &'a Arc<Device>,
    /// The formats its pipelines must be built for.
    pub color_format: vk::Format,
    pub depth_format: vk::Format,
    pub frames_in_flight: usize,
    /// The window (`None` headless).
    pub window: Option<&'a Window>,
}

/// The frame being recorded.
pub struct FrameCtx<'a> {
    /// The frame-in-flight slot: which per-frame copies are free to write.
    pub index: usize,
    /// Frames drawn before this one.
    pub number: u64,
    pub cmd: vk::CommandBuffer,
    pub extent: vk::Extent2D,
    /// Seconds: since the window opened, or `number / fps` headless.
    pub time: f32,
    /// Seconds since the previous pass of the loop (drawn or skipped), or
    /// `1 / fps` headless.
    pub dt: f32,
    /// Swapchains created so far (0 headless).
    pub swapchains: u32,
    /// The window (`None` headless).
    pub window: Option<&'a Window>,
}

impl FrameCtx<'_> {
    pub fn aspect(&self) -> f32 {
        self.extent.width as f32 / self.extent.height as f32
    }
}

/// Counts at the end of a run.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Passes of the redraw loop (headless: frames).
    pub ticks: u64,
    pub presented: u64,
    /// Passes with no frame (minimised or out of date).
    pub skipped: u64,
    pub swapchains: u32,
    /// The folder the frames went to (`None` in a window).
    pub out: Option<PathBuf>,
}

/// A sample: its frame, in three parts around the rendering scope, and
/// what it does with input. Errors end the run with that message.
pub trait App {
    /// A window event, before the runner's own handling (close, resize,
    /// redraw). By default Escape quits.
    fn event(&mut self, ctl: &mut Control<'_>, event: &WindowEvent) {
        if let WindowEvent::KeyboardInput { event, .. } = event {
            if event.state == ElementState::Pressed
                && event.logical_key == Key::Named(NamedKey::Escape)
            {
                ctl.exit();
            }
        }
    }

    /// Each pass of the window's redraw loop, before its frame.
    fn tick(&mut self, _ctl: &mut Control<'_>) -> Result<(), String> {
        Ok(())
    }

    /// Records what precedes the rendering scope (uniforms, prepasses).
    fn prepare(&mut self, frame: &FrameCtx<'_>) -> Result<(), String>;

    /// Records the draws inside a rendering scope: once into the target,
    /// and once more into a screenshot when one was asked for.
    fn draw(&mut self, frame: &FrameCtx<'_>) -> Result<(), String>;

    /// Records what follows the rendering scope.
    fn finish(&mut self, _frame: &FrameCtx<'_>) -> Result<(), String> {
        Ok(())
    }

    /// In a window, after a frame was presented.
    fn presented(&mut self, _ctl: &mut Control<'_>) -> Result<(), String> {
        Ok(())
    }

    /// Headless, after a frame was read back and written.
    fn written(&mut self, _frame: &FrameCtx<'_>, _rgba: &[u8]) -> Result<(), String> {
        Ok(())
    }

    /// A screenshot asked for with [`Control::screenshot`] was written,
    /// or could not be.
    fn screenshot(&mut self, path: &Path, result: Result<(), String>) {
        match result {
            Ok(()) => println!("screenshot {}", path.display()),
            Err(e) => eprintln!("screenshot {}: {e}", path.display()),
        }
    }

    /// The run ended without error (before the GPU objects go); an error
    /// here is the run's.
    fn finished(&mut self, _summary: &Summary) -> Result<(), String> {
        Ok(())
    }
}

/// The runner's window-side state, what [`Control`] acts on.
struct Win {
    frames: FramesInFlight,
    target: WindowTarget,
    surface: Arc<Surface>,
    device: Arc<Device>,
    /// Set by [`Control::minimise`]: resize events are ignored until
    /// [`Control::restore`].
    minimised: bool,
    /// Swapchains created by targets since replaced (vsync switches).
    swapchains_before: u32,
    shot: Option<PathBuf>,
    ticks: u64,
    presented: u64,
    skipped: u64,
    start: Instant,
    last: Instant,
}

impl Win {
    fn swapchains(&self) -> u32 {
        self.swapchains_before + self.target.recreations()
    }
}

/// What an [`App`] can ask of the window and its swapchain.
pub struct Control<'a> {
    event_loop: &'a ActiveEventLoop,
    window: &'a Window,
    win: &'a mut Win,
}

impl Control<'_> {
    /// Ends the run after this pass.
    pub fn exit(&self) {
        self.event_loop.exit();
    }

    pub fn window(&self) -> &Window {
        self.window
    }

    /// Passes of the redraw loop so far (this one not included).
    pub fn ticks(&self) -> u64 {
        self.win.ticks
    }

    /// Frames presented so far.
    pub fn presented(&self) -> u64 {
        self.win.presented
    }

    /// Asks the window system for a new size; a size applied at once goes
    /// to the swapchain now, a later one through the resize event.
    pub fn resize(&mut self, width: u32, height: u32) {
        if let Some(now) = self
            .window
            .request_inner_size(PhysicalSize::new(width, height))
        {
            self.win.target.resize(now.width, now.height);
        }
    }

    /// Minimises the window and gives the swapchain zero extent (a window
    /// manager would say so; Xvfb has none), so no frame is acquired until
    /// [`Control::restore`].
    pub fn minimise(&mut self) {
        self.window.set_minimized(true);
        self.win.target.resize(0, 0);
        self.win.minimised = true;
    }

    /// Restores the window and gives the swapchain its size back.
    pub fn restore(&mut self) {
        self.window.set_minimized(false);
        let s = self.window.inner_size();
        self.win.target.resize(s.width, s.height);
        self.win.minimised = false;
    }

    /// A new window target presenting with or without vsync.
    pub fn set_vsync(&mut self, on: bool) -> Result<(), String> {
        let win = &mut *self.win;
        win.swapchains_before += win.target.recreations();
        // A target with no area has no swapchain yet, so the old one can go
        // first; the resize below makes the new one.
        win.target = WindowTarget::new(&win.device, &win.surface, 0, 0, on).map_err(err)?;
        if !win.minimised {
            let s = self.window.inner_size();
            win.target.resize(s.width, s.height);
        }
        Ok(())
    }

    /// `n` frames in flight from the next frame on (the device idles
    /// first); the app remakes its per-frame copies itself.
    pub fn set_frames_in_flight(&mut self, n: usize) -> Result<(), String> {
        self.win.device.wait_idle().map_err(err)?;
        self.win.frames = FramesInFlight::new(&self.win.device, n).map_err(err)?;
        Ok(())
    }

    /// Writes the next presented frame to `path` as a PNG.
    pub fn screenshot(&mut self, path: PathBuf) {
        self.win.shot = Some(path);
    }
}

/// Windowed when a display exists and `--headless` was not given, else
/// headless; `make` builds the app once the device exists.
pub fn run<A, F>(opts: &Options, make: F) -> Result<MessageLog, String>
where
    A: App,
    F: FnOnce(&Setup<'_>) -> Result<A, String>,
{
    if opts.headless_wanted() {
        headless(opts, make)
    } else {
        window(opts, make)
    }
}

/// Records a frame: `prepare`, the target's rendering scope (`begin`,
/// `draw`, `end`: ended even when the draws fail), then `after_scope` (the
/// screenshot pass) and `finish`.
fn record<A: App>(
    app: &mut A,
    ctx: &FrameCtx<'_>,
    begin: impl FnOnce() -> Result<(), String>,
    end: impl FnOnce() -> Result<(), String>,
    after_scope: impl FnOnce(&mut A) -> Result<(), String>,
) -> Result<(), String> {
    app.prepare(ctx)?;
    begin()?;
    let drawn = app.draw(ctx);
    end()?;
    drawn?;
    after_scope(app)?;
    app.finish(ctx)
}

/// `opts.frames` (else `opts.headless_frames`) offscreen frames, each
/// written as `frame_NNNN.png` in `opts.out`.
pub fn headless<A, F>(opts: &Options, make: F) -> Result<MessageLog, String>
where
    A: App,
    F: FnOnce(&Setup<'_>) -> Result<A, String>,
{
    let (device, log) = crate::headless_device(opts.name, opts.validation, opts.device.as_deref())?;
    let total = opts.frames.unwrap_or(opts.headless_frames);
    let result = (|| {
        let target = OffscreenTarget::new(&device, opts.size.0, opts.size.1).map_err(err)?;
        let mut app = make(&Setup {
            device: &device,
            color_format: OffscreenTarget::COLOR_FORMAT,
            depth_format: OffscreenTarget::DEPTH_FORMAT,
            frames_in_flight: opts.frames_in_flight,
            window: None,
        })?;
        let mut frames = FramesInFlight::new(&device, opts.frames_in_flight).map_err(err)?;
        std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
        for i in 0..total {
            let frame = frames.begin().map_err(err)?;
            let ctx = FrameCtx {
                index: frame.index,
                number: i,
                cmd: frame.cmd,
                extent: target.extent(),
                time: i as f32 / opts.fps,
                dt: 1.0 / opts.fps,
                swapchains: 0,
                window: None,
            };
            let recorded = record(
                &mut app,
                &ctx,
                || {
                    target.begin(frame.cmd, opts.clear);
                    Ok(())
                },
                || {
                    target.end_and_copy(frame.cmd);
                    Ok(())
                },
                |_| Ok(()),
            );
            if let Err(e) = recorded {
                let _ = frames.abandon(&frame);
                return Err(e);
            }
            frames.submit(&frame, None, None).map_err(err)?;
            // One readback target: wait before the next frame reuses it.
            frames.wait(&frame).map_err(err)?;
            let rgba = target.read_rgba().map_err(err)?;
            let e = target.extent();
            let png = opts.out.join(format!("frame_{i:04}.png"));
            write_png(&png, e.width, e.height, &rgba).map_err(err)?;
            app.written(&ctx, &rgba)?;
        }
        device.wait_idle().map_err(err)?;
        app.finished(&Summary {
            ticks: total,
            presented: total,
            skipped: 0,
            swapchains: 0,
            out: Some(opts.out.clone()),
        })
    })();
    // Every resource is gone; the device (and then the instance with its
    // messenger) goes now, so the log includes the leak report.
    drop(device);
    result.map(|()| log)
}

/// Everything on the GPU side. Dropping it idles the device first (the
/// last frames may still be executing), then the fields go in declaration
/// order: the app, frames, the swapchain, the surface, then the device
/// (and with the last Arc, the instance and its messenger).
struct Gpu<A> {
    app: A,
    win: Win,
}

impl<A> Drop for Gpu<A> {
    fn drop(&mut self) {
        if let Err(e) = self.win.device.wait_idle() {
            log::error!("wait_idle at exit: {e}");
        }
    }
}

struct Runner<'o, A, F> {
    opts: &'o Options,
    make: Option<F>,
    // Declared before the window: the surface must go first.
    gpu: Option<Gpu<A>>,
    window: Option<Window>,
    log: Option<MessageLog>,
    error: Option<String>,
}

/// The windowed run: until closed, Escape (unless the app handles keys
/// itself), [`Control::exit`] or `opts.frames` passes or presents.
pub fn window<A, F>(opts: &Options, make: F) -> Result<MessageLog, String>
where
    A: App,
    F: FnOnce(&Setup<'_>) -> Result<A, String>,
{
    let event_loop = EventLoop::new().map_err(|e| format!("opening the display: {e}"))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut runner = Runner {
        opts,
        make: Some(make),
        gpu: None,
        window: None,
        log: None,
        error: None,
    };
    event_loop
        .run_app(&mut runner)
        .map_err(|e| format!("event loop: {e}"))?;
    if runner.error.is_none() {
        if let Some(g) = runner.gpu.as_mut() {
            let summary = Summary {
                ticks: g.win.ticks,
                presented: g.win.presented,
                skipped: g.win.skipped,
                swapchains: g.win.swapchains(),
                out: None,
            };
            runner.error = g.app.finished(&summary).err();
        }
    }
    // GPU objects first, then the window they draw into.
    drop(runner.gpu.take());
    drop(runner.window.take());
    if let Some(e) = runner.error {
        return Err(e);
    }
    runner
        .log
        .ok_or_else(|| "the window never opened".to_string())
}

impl<A, F> Runner<'_, A, F>
where
    A: App,
    F: FnOnce(&Setup<'_>) -> Result<A, String>,
{
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let opts = self.opts;
        let attrs = Window::default_attributes()
            .with_title(opts.title.clone())
            .with_inner_size(PhysicalSize::new(opts.size.0, opts.size.1));
        let window = event_loop
            .create_window(attrs)
            .map_err(|e| format!("creating the window: {e}"))?;
        let display = window.display_handle().map_err(|e| e.to_string())?.as_raw();
        let handle = window.window_handle().map_err(|e| e.to_string())?.as_raw();
        let instance = crate::instance(opts.name, opts.validation, Some(display))?;
        self.log = Some(instance.messages().clone());
        // SAFETY: the window is stored in `self` and dropped after `gpu`,
        // which holds every user of the surface.
        let surface = unsafe { Surface::new(&instance, display, handle) }.map_err(err)?;
        let device = Device::new(
            &instance,
            &DeviceDesc {
                selector: opts.device.as_deref(),
                surface: Some(&surface),
            },
        )
        .map_err(err)?;
        let size = window.inner_size();
        let target = WindowTarget::new(&device, &surface, size.width, size.height, opts.vsync)
            .map_err(err)?;
        let make = self.make.take().ok_or("the window opened twice")?;
        let app = make(&Setup {
            device: &device,
            color_format: target.color_format().map_err(err)?,
            depth_format: DEPTH_FORMAT,
            frames_in_flight: opts.frames_in_flight,
            window: Some(&window),
        })?;
        let frames = FramesInFlight::new(&device, opts.frames_in_flight).map_err(err)?;
        let now = Instant::now();
        self.gpu = Some(Gpu {
            app,
            win: Win {
                frames,
                target,
                surface,
                device,
                minimised: false,
                swapchains_before: 0,
                shot: None,
                ticks: 0,
                presented: 0,
                skipped: 0,
                start: now,
                last: now,
            },
        });
        self.window = Some(window);
        Ok(())
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, e: String) {
        self.error = Some(e);
        event_loop.exit();
    }

    /// One pass of the redraw loop: the app's tick, then a frame (skipped
    /// while the window has no area or the swapchain is out of date).
    fn tick(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let (Some(gpu), Some(window)) = (self.gpu.as_mut(), self.window.as_ref()) else {
            return Ok(());
        };
        let Gpu { app, win } = gpu;
        app.tick(&mut Control {
            event_loop,
            window,
            win,
        })?;
        if draw(app, win, window, self.opts.clear)? {
            win.presented += 1;
            app.presented(&mut Control {
                event_loop,
                window,
                win,
            })?;
        } else {
            win.skipped += 1;
            // Minimised or out of date: don't spin.
            std::thread::sleep(Duration::from_millis(5));
        }
        win.ticks += 1;
        let counted = if self.opts.count_skipped {
            win.ticks
        } else {
            win.presented
        };
        if self.opts.frames.is_some_and(|n| counted >= n) {
            event_loop.exit();
        }
        Ok(())
    }
}

/// Draws and presents one frame; `Ok(false)` when it was skipped.
fn draw<A: App>(
    app: &mut A,
    win: &mut Win,
    window: &Window,
    clear: [f32; 4],
) -> Result<bool, String> {
    let frame = win.frames.begin().map_err(err)?;
    let Some(image) = win.target.acquire(&frame).map_err(err)? else {
        win.frames.abandon(&frame).map_err(err)?;
        win.last = Instant::now();
        return Ok(false);
    };
    let now = Instant::now();
    let ctx = FrameCtx {
        index: frame.index,
        number: win.presented,
        cmd: frame.cmd,
        extent: image.extent,
        time: (now - win.start).as_secs_f32(),
        dt: (now - win.last).as_secs_f32(),
        swapchains: win.swapchains(),
        window: Some(window),
    };
    win.last = now;
    let target = &win.target;
    let mut shot = None;
    let recorded = record(
        app,
        &ctx,
        || target.begin(frame.cmd, image, clear).map_err(err),
        || target.end(frame.cmd, image).map_err(err),
        |app| {
            // The screenshot: the same draws into an image of the
            // swapchain's format and size (the pipelines are built for it).
            let Some(path) = win.shot.take() else {
                return Ok(());
            };
            let format = target.color_format().map_err(err)?;
            let e = image.extent;
            let s = OffscreenTarget::with_format(&win.device, e.width, e.height, format)
                .map_err(|e| format!("screenshot {}: {e}", path.display()))?;
            s.begin(frame.cmd, clear);
            let drawn = app.draw(&ctx);
            s.end_and_copy(frame.cmd);
            shot = Some((s, path));
            drawn
        },
    );
    if let Err(e) = recorded {
        let _ = win.frames.abandon(&frame);
        return Err(e);
    }
    win.frames
        .submit(
            &frame,
            Some((
                frame.image_available,
                vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
            )),
            Some(win.target.render_finished(image)),
        )
        .map_err(err)?;
    win.target.present(image).map_err(err)?;
    if let Some((s, path)) = shot {
        win.frames.wait(&frame).map_err(err)?;
        app.screenshot(&path, write_shot(&s, &path));
    }
    Ok(true)
}

/// The screenshot's PNG (after its frame's fence).
fn write_shot(s: &OffscreenTarget, path: &Path) -> Result<(), String> {
    let mut px = s.read_rgba().map_err(err)?;
    // The swapchain is opaque: whatever alpha the draws left, the window
    // shows it as 1.
    px.chunks_exact_mut(4).for_each(|p| p[3] = 255);
    let e = s.extent();
    write_png(path, e.width, e.height, &px).map_err(err)
}

impl<A, F> ApplicationHandler for Runner<'_, A, F>
where
    A: App,
    F: FnOnce(&Setup<'_>) -> Result<A, String>,
{
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        if let Err(e) = self.init(event_loop) {
            self.fail(event_loop, e);
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        if let WindowEvent::CloseRequested = event {
            event_loop.exit();
        }
        let (Some(gpu), Some(window)) = (self.gpu.as_mut(), self.window.as_ref()) else {
            return;
        };
        let Gpu { app, win } = gpu;
        app.event(
            &mut Control {
                event_loop,
                window,
                win,
            },
            &event,
        );
        match event {
            WindowEvent::Resized(size) if !win.minimised => {
                win.target.resize(size.width, size.height);
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.tick(event_loop) {
                    self.fail(event_loop, e);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(w) = self.window.as_ref() {
            w.request_redraw();
        }
    }
}
