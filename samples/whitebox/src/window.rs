//! The windowed mode: winit 0.30 + a Vulkan swapchain that survives resize
//! and minimise.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vkskin::gpu::{vk, Device, DeviceDesc, GpuError, MessageLog, Surface};
use vkskin::render::{FramesInFlight, WindowTarget, DEFAULT_FRAMES_IN_FLIGHT};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

use crate::{Args, Scene};

/// Everything on the GPU side. Dropping it idles the device first (the
/// last frames may still be executing), then the fields go in declaration
/// order: frames and scene, the swapchain, the surface, then the device
/// (and with the last Arc, the instance and its messenger).
struct Gpu<S: Scene> {
    frames: FramesInFlight,
    scene: S,
    target: WindowTarget,
    _surface: Arc<Surface>,
    device: Arc<Device>,
}

impl<S: Scene> Drop for Gpu<S> {
    fn drop(&mut self) {
        if let Err(e) = self.device.wait_idle() {
            log::error!("{}: wait_idle at exit: {e}", S::NAME);
        }
    }
}

struct App<S: Scene> {
    args: Args,
    // Declared before the window: the surface must go first.
    gpu: Option<Gpu<S>>,
    window: Option<Window>,
    log: Option<MessageLog>,
    error: Option<String>,
    presented: u64,
    start: Instant,
    size: PhysicalSize<u32>,
}

pub fn run<S: Scene>(args: &Args) -> Result<MessageLog, String> {
    let event_loop = EventLoop::new().map_err(|e| format!("opening the display: {e}"))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App::<S> {
        args: args.clone(),
        gpu: None,
        window: None,
        log: None,
        error: None,
        presented: 0,
        start: Instant::now(),
        size: PhysicalSize::new(args.width, args.height),
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| format!("event loop: {e}"))?;
    let recreations = app.gpu.as_ref().map_or(0, |g| g.target.recreations());
    // GPU objects first, then the window they draw into.
    drop(app.gpu.take());
    drop(app.window.take());
    if let Some(e) = app.error {
        return Err(e);
    }
    println!(
        "{}: presented {} frame(s); swapchains created: {recreations}",
        S::NAME,
        app.presented
    );
    app.log.ok_or_else(|| "the window never opened".to_string())
}

impl<S: Scene> App<S> {
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let attrs = Window::default_attributes()
            .with_title(format!("vkskin {}", S::NAME))
            .with_inner_size(self.size);
        let window = event_loop
            .create_window(attrs)
            .map_err(|e| format!("creating the window: {e}"))?;
        let display = window.display_handle().map_err(|e| e.to_string())?.as_raw();
        let handle = window.window_handle().map_err(|e| e.to_string())?.as_raw();
        let instance = sample_common::instance(S::NAME, self.args.validation(), Some(display))?;
        self.log = Some(instance.messages().clone());
        let err = |e: GpuError| e.to_string();
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
        let scene = S::new(
            &device,
            target.color_format().map_err(err)?,
            WindowTarget::DEPTH_FORMAT,
            DEFAULT_FRAMES_IN_FLIGHT,
        )
        .map_err(err)?;
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
        Ok(())
    }

    /// Draws and presents one frame; `Ok(false)` when it was skipped.
    fn draw(&mut self) -> Result<bool, GpuError> {
        let Some(gpu) = self.gpu.as_mut() else {
            return Ok(false);
        };
        let frame = gpu.frames.begin()?;
        let Some(image) = gpu.target.acquire(&frame)? else {
            gpu.frames.abandon(&frame)?;
            return Ok(false);
        };
        let aspect = image.extent.width as f32 / image.extent.height as f32;
        let t = self.start.elapsed().as_secs_f32();
        gpu.scene.update(frame.index, t, aspect)?;
        gpu.scene.prepass(frame.cmd, frame.index)?;
        gpu.target.begin(frame.cmd, image, S::CLEAR)?;
        gpu.scene.record(frame.cmd, frame.index, aspect)?;
        gpu.target.end(frame.cmd, image)?;
        gpu.scene.finish(frame.cmd, frame.index)?;
        gpu.frames.submit(
            &frame,
            Some((
                frame.image_available,
                vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
            )),
            Some(gpu.target.render_finished(image)),
        )?;
        gpu.target.present(image)?;
        Ok(true)
    }

    fn after_present(&mut self, event_loop: &ActiveEventLoop) {
        self.presented += 1;
        if let (Some(k), Some(w)) = (self.args.resize_at, self.window.as_ref()) {
            let to = if self.presented == k {
                Some(PhysicalSize::new(
                    self.size.width * 3 / 4,
                    self.size.height * 3 / 4,
                ))
            } else if self.presented == 2 * k {
                Some(self.size)
            } else {
                None
            };
            if let Some(to) = to {
                log::info!("{}: resizing to {}x{}", S::NAME, to.width, to.height);
                // Applied now or later by the window system; the Resized
                // event (and Vulkan's out-of-date reports) drive recreation.
                let _ = w.request_inner_size(to);
            }
        }
        if self.args.frames.is_some_and(|n| self.presented >= n) {
            event_loop.exit();
        }
    }
}

impl<S: Scene> ApplicationHandler for App<S> {
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
                    self.error = Some(e.to_string());
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
