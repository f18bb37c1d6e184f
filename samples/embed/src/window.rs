//! `embed --window`: the same embedding in a window. The sample runner
//! (`sample_common::runner`) stands in for the host's window code: it owns
//! the window, swapchain, frames in flight, command buffers and fences,
//! and hands this app each frame's command buffer around its rendering
//! scope. The app makes the three vkskin calls of the headless host
//! (`begin_frame` before the scope, `record` inside it, `end_frame`
//! after), so a window and the raw-ash host drive `Renderer` the same way.

use sample_common::runner::{self, App, FrameCtx, Setup, Summary};
use vkskin::embed::{Frame, FrameUniforms, Renderer, SkinPathConfig};
use vkskin::gpu::MessageLog;
use vkskin::render::Camera;

use crate::{CLEAR, LIGHT};

/// How the windowed mode runs.
pub struct WindowOptions {
    /// Frames to present, then exit (`None`: until closed).
    pub frames: Option<u64>,
    pub width: u32,
    pub height: u32,
    /// Skinning path (default: the engine's automatic choice).
    pub path: Option<String>,
    pub validation: bool,
    pub vsync: bool,
}

/// The host's frame in a window: vkskin's renderer, the camera framing the
/// character's animated bounds, and the frame begun before the scope.
struct EmbedApp {
    renderer: Renderer,
    bounds: (vkskin::glam::Vec3, vkskin::glam::Vec3),
    frame: Option<Frame>,
}

impl EmbedApp {
    fn new(setup: &Setup<'_>, path: Option<&str>) -> Result<Self, String> {
        let cfg = SkinPathConfig::new(
            setup.color_format,
            setup.depth_format,
            setup.frames_in_flight,
        );
        let (renderer, b) = crate::character_renderer(setup.device, path, cfg)?;
        println!("embed: drawing through {}", renderer.path().name);
        Ok(Self {
            renderer,
            bounds: (b.min, b.max),
            frame: None,
        })
    }
}

impl App for EmbedApp {
    /// vkskin call 1 of 3, outside the rendering scope.
    fn prepare(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let aspect = f.aspect();
        let (min, max) = self.bounds;
        let camera = Camera::framing(min, max, 0.5, 0.2, 45f32.to_radians(), aspect);
        let uniforms = FrameUniforms {
            view_proj: camera.view_proj(aspect).to_cols_array_2d(),
            color: [1.0; 4],
            light: LIGHT,
        };
        let frame = self
            .renderer
            .begin_frame(f.cmd, f.index, f.time, &uniforms)
            .map_err(|e| e.to_string())?;
        self.frame = Some(frame);
        Ok(())
    }

    /// vkskin call 2 of 3, inside the runner's rendering scope (again
    /// inside a screenshot's scope when one was asked for).
    fn draw(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let frame = self.frame.as_ref().ok_or("draw before prepare")?;
        self.renderer
            .record(f.cmd, frame)
            .map_err(|e| e.to_string())
    }

    /// vkskin call 3 of 3, after the scope; the runner then submits.
    fn finish(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let frame = self.frame.take().ok_or("finish before prepare")?;
        self.renderer
            .end_frame(f.cmd, frame)
            .map_err(|e| e.to_string())
    }

    fn finished(&mut self, s: &Summary) -> Result<(), String> {
        match &s.out {
            Some(out) => println!("embed: wrote {} frame(s) to {}", s.presented, out.display()),
            None => println!(
                "embed: presented {} frame(s); swapchains created: {}",
                s.presented, s.swapchains
            ),
        }
        Ok(())
    }
}

/// Runs the embedding in a window until closed (or `opts.frames` are
/// presented); with no display, headless into `out/embed-window/` as the
/// runner does. The validation log comes back once everything is gone.
pub fn run(opts: &WindowOptions) -> Result<MessageLog, String> {
    let runner_opts = runner::Options {
        title: "vkskin embed (windowed host)".into(),
        size: (opts.width, opts.height),
        clear: CLEAR,
        frames: opts.frames,
        validation: opts.validation,
        vsync: opts.vsync,
        out: "out/embed-window".into(),
        ..runner::Options::new("embed")
    };
    let path = opts.path.clone();
    runner::run(&runner_opts, |setup| EmbedApp::new(setup, path.as_deref()))
}
