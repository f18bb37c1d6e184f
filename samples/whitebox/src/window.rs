//! The sample as a [`runner::App`]: the [`Scene`] around the rendering
//! scope, the window's programmatic resize (`--resize-at`) and the closing
//! line. The window, swapchain and headless loop are the runner's.

use sample_common::runner::{self, App, Control, FrameCtx, Summary};
use winit::dpi::PhysicalSize;

use crate::{Args, Scene};

struct SceneApp<S> {
    scene: S,
    name: &'static str,
    resize_at: Option<u64>,
    size: PhysicalSize<u32>,
}

/// Draws `S` as `args` ask: windowed or headless (see [`runner::run`]).
pub fn run<S: Scene>(args: &Args) -> Result<vkskin::gpu::MessageLog, String> {
    let opts = runner::Options {
        size: (args.width, args.height),
        clear: S::CLEAR,
        frames: args.frames,
        headless: args.headless,
        out: args.out_dir(S::NAME),
        fps: args.fps,
        ..args.gpu.options(S::NAME)
    };
    runner::run(&opts, |setup| {
        Ok(SceneApp {
            scene: S::new(setup).map_err(|e| e.to_string())?,
            name: S::NAME,
            resize_at: args.resize_at,
            size: PhysicalSize::new(args.width, args.height),
        })
    })
}

impl<S: Scene> App for SceneApp<S> {
    fn prepare(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.scene
            .update(f.index, f.time, f.aspect())
            .and_then(|()| self.scene.rig().prepass(f.cmd, f.index))
            .map_err(|e| e.to_string())
    }

    fn draw(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let s = &self.scene;
        s.rig()
            .record(
                f.cmd,
                f.index,
                s.polygon(),
                s.view_proj(f.aspect()),
                S::MARKER,
            )
            .map_err(|e| e.to_string())
    }

    fn finish(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        let rig = self.scene.rig();
        rig.finish(f.cmd, f.index).map_err(|e| e.to_string())
    }

    /// `--resize-at K`: to 3/4 of the size after frame K, back after 2K.
    fn presented(&mut self, ctl: &mut Control<'_>) -> Result<(), String> {
        let Some(k) = self.resize_at else {
            return Ok(());
        };
        let n = ctl.presented();
        let to = if n == k {
            PhysicalSize::new(self.size.width * 3 / 4, self.size.height * 3 / 4)
        } else if n == 2 * k {
            self.size
        } else {
            return Ok(());
        };
        log::info!("{}: resizing to {}x{}", self.name, to.width, to.height);
        // Applied now or later by the window system; the Resized event
        // (and Vulkan's out-of-date reports) drive recreation.
        ctl.resize(to.width, to.height);
        Ok(())
    }

    fn finished(&mut self, s: &Summary) -> Result<(), String> {
        match &s.out {
            Some(out) => println!(
                "{}: wrote {} frame(s) to {}",
                self.name,
                s.presented,
                out.display()
            ),
            None => println!(
                "{}: presented {} frame(s); swapchains created: {}",
                self.name, s.presented, s.swapchains
            ),
        }
        Ok(())
    }
}
