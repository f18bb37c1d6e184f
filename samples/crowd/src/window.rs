//! The windowed mode: winit 0.30 and a Vulkan swapchain that survives
//! resize and minimise; the figures are printed once a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vkskin::gpu::{vk, Device, DeviceDesc, MessageLog, Surface};
use vkskin::render::{FramesInFlight, WindowTarget, DEFAULT_FRAMES_IN_FLIGHT};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

use crate::scene::{Cast, CrowdOptions, CrowdScene};
use crate::{describe, Args, Figures, FrameFigures, CLEAR, NAME};

/// Everything on the GPU side. Dropping it idles the device first (the
/// last frames may still be executing), then the fields go in declaration
/// order: frames and scene, the swapchain, the surface, then the device
/// (and with the last Arc, the instance and its messenger).
struct Gpu {
    frames: FramesInFlight,
    scene: CrowdScene,
    target: WindowTarget,
    _surface: Arc<Surface>,
    device: Arc<Device>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if let Err(e) = self.device.wait_idle() {
            log::error!("{NAME}: wait_idle at exit: {e}");
        }
    }
}

struct App<'a> {
    args: &'a Args,
    cast: &'a Cast,
    options: &'a CrowdOptions,
    // Declared before the window: the surface must go first.
    gpu: Option<Gpu>,
    window: Option<Window>,
    log: Option<MessageLog>,
    error: Option<String>,
    presented: u64,
    start: Instant,
    /// The current second's figures and when it began.
    second: Figures,
    second_start: Instant,
    all: Figures,
}

pub fn run(args: &Args, cast: &Cast, options: &CrowdOptions) -> Result<MessageLog, String> {
    let event_loop = EventLoop::new().map_err(|e| format!("opening the display: {e}"))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        args,
        cast,
        options,
        gpu: None,
        window: None,
        log: None,
        error: None,
        presented: 0,
        start: Instant::now(),
        second: Figures::default(),
        second_start: Instant::now(),
        all: Figures::default(),
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| format!("event loop: {e}"))?;
    // GPU objects first, then the window they draw into.
    drop(app.gpu.take());
    drop(app.window.take());
    if let Some(e) = app.error {
        return Err(e);
    }
    println!(
        "{NAME}: presented {} frame(s); median: {}",
        app.presented,
        app.all.medians()
    );
    app.log.ok_or_else(|| "the window never opened".to_string())
}

impl App<'_> {
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let attrs = Window::default_attributes()
            .with_title(format!("vkskin {NAME}"))
            .with_inner_size(PhysicalSize::new(
                self.args.size.width,
                self.args.size.height,
            ));
        let window = event_loop
            .create_window(attrs)
            .map_err(|e| format!("creating the window: {e}"))?;
        let display = window.display_handle().map_err(|e| e.to_string())?.as_raw();
        let handle = window.window_handle().map_err(|e| e.to_string())?.as_raw();
        let instance = sample_common::instance(NAME, self.args.validation(), Some(display))?;
        self.log = Some(instance.messages().clone());
        let err = |e: vkskin::gpu::GpuError| e.to_string();
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
        let target = WindowTarget::new(
            &device,
            &surface,
            size.width,
            size.height,
            !self.args.no_vsync,
        )
        .map_err(err)?;
        let scene = CrowdScene::new(
            &device,
            self.cast,
            self.options,
            target.color_format().map_err(err)?,
            WindowTarget::DEPTH_FORMAT,
            DEFAULT_FRAMES_IN_FLIGHT,
        )?;
        describe(
            self.cast,
            &scene,
            &device.physical().name,
            self.options.threads,
        );
        let frames = FramesInFlight::new(&device, DEFAULT_FRAMES_IN_FLIGHT).map_err(err)?;
        self.gpu = Some(Gpu {
            frames,
            scene,
            target,
            _surface: surface,
            device,
        });
        self.window = Some(window);
        self.start = Instant::now();
        self.second_start = self.start;
        Ok(())
    }

    /// Draws and presents one frame; `Ok(false)` when it was skipped.
    fn draw(&mut self) -> Result<bool, String> {
        let Some(gpu) = self.gpu.as_mut() else {
            return Ok(false);
        };
        let err = |e: vkskin::gpu::GpuError| e.to_string();
        let frame = gpu.frames.begin().map_err(err)?;
        let Some(image) = gpu.target.acquire(&frame).map_err(err)? else {
            gpu.frames.abandon(&frame).map_err(err)?;
            return Ok(false);
        };
        let aspect = image.extent.width as f32 / image.extent.height as f32;
        let t = self.start.elapsed().as_secs_f32();
        let cpu = gpu.scene.update(frame.index, t, aspect)?;
        // The slot's previous frame, read as the slot was begun.
        let gpu_ms = gpu.scene.gpu_ms(frame.index);
        gpu.scene.prepass(frame.cmd, frame.index)?;
        gpu.target.begin(frame.cmd, image, CLEAR).map_err(err)?;
        gpu.scene.record(frame.cmd, frame.index)?;
        gpu.target.end(frame.cmd, image).map_err(err)?;
        gpu.scene.finish(frame.cmd, frame.index)?;
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
        let f = FrameFigures { cpu, gpu_ms };
        self.second.push(&f);
        self.all.push(&f);
        Ok(true)
    }

    fn after_present(&mut self, event_loop: &ActiveEventLoop) {
        self.presented += 1;
        let elapsed = self.second_start.elapsed();
        if elapsed >= Duration::from_secs(1) {
            println!(
                "{:6.1} s: {:5.1} fps; median {}",
                self.start.elapsed().as_secs_f64(),
                self.second.len() as f64 / elapsed.as_secs_f64(),
                self.second.medians()
            );
            self.second.clear();
            self.second_start = Instant::now();
        }
        if self.args.frames.is_some_and(|n| self.presented >= n) {
            event_loop.exit();
        }
    }
}

impl ApplicationHandler for App<'_> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        if let Err(e) = self.init(event_loop) {
            self.error = Some(e);
            event_loop.exit();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::KeyboardInput { event, .. }
                if event.state == ElementState::Pressed
                    && event.logical_key == Key::Named(NamedKey::Escape) =>
            {
                event_loop.exit()
            }
            WindowEvent::Resized(size) => {
                if let Some(g) = self.gpu.as_mut() {
                    g.target.resize(size.width, size.height);
                }
            }
            WindowEvent::RedrawRequested => match self.draw() {
                Ok(true) => self.after_present(event_loop),
                // Minimised or out of date: don't spin.
                Ok(false) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => {
                    self.error = Some(e);
                    event_loop.exit();
                }
            },
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(w) = self.window.as_ref() {
            w.request_redraw();
        }
    }
}
