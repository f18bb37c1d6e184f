//! The crowd as a [`runner::App`], windowed or headless: the scene around
//! the rendering scope and its figures (once a second in a window, a line
//! per frame headless, the medians at the end). The window, swapchain and
//! headless loop are the runner's.

use std::time::{Duration, Instant};

use sample_common::runner::{self, App, Control, FrameCtx, Summary};
use vkskin::gpu::MessageLog;
use winit::event::{ElementState, WindowEvent};
use winit::keyboard::{Key, NamedKey};

use crate::scene::{Cast, CrowdOptions, CrowdScene, FrameTimes};
use crate::{describe, fmt_ms, Args, Figures, FrameFigures, CLEAR, NAME};

struct Crowd {
    scene: CrowdScene,
    /// The character (the U key stands it on the other up axis).
    cast: Cast,
    /// The frame being drawn: its CPU times, and (in a window) the GPU time
    /// of the slot's previous frame, read as the slot was begun.
    cpu: Option<FrameTimes>,
    gpu_ms: Option<f64>,
    /// Headless frames to draw (frame 0 is left out of the medians when
    /// there are 3 or more).
    headless_total: Option<u64>,
    /// The current second's figures and when it began (windowed).
    second: Figures,
    second_start: Instant,
    start: Instant,
    all: Figures,
}

pub fn run(args: &Args, cast: &Cast, options: &CrowdOptions) -> Result<MessageLog, String> {
    let opts = runner::Options {
        size: (args.size.width, args.size.height),
        clear: CLEAR,
        frames: args.frames,
        headless: args.headless,
        headless_frames: 30,
        out: args.out.clone(),
        fps: args.fps,
        ..args.gpu.options(NAME)
    };
    let total = args.frames.unwrap_or(opts.headless_frames);
    runner::run(&opts, |setup| {
        let scene = CrowdScene::new(
            setup.device,
            cast,
            options,
            setup.color_format,
            setup.depth_format,
            setup.frames_in_flight,
        )?;
        describe(cast, &scene, &setup.device.physical().name, options.threads);
        let now = Instant::now();
        Ok(Crowd {
            scene,
            cast: cast.clone(),
            cpu: None,
            gpu_ms: None,
            headless_total: setup.window.is_none().then_some(total),
            second: Figures::default(),
            second_start: now,
            start: now,
            all: Figures::default(),
        })
    })
}

impl Crowd {
    fn figures(&self, gpu_ms: Option<f64>) -> Result<FrameFigures, String> {
        let cpu = self.cpu.ok_or("crowd: a frame with no update")?;
        Ok(FrameFigures { cpu, gpu_ms })
    }
}

impl App for Crowd {
    /// U stands the instances on the other up axis; Escape quits.
    fn event(&mut self, ctl: &mut Control<'_>, event: &WindowEvent) {
        if let WindowEvent::KeyboardInput { event, .. } = event {
            if event.state != ElementState::Pressed {
                return;
            }
            match &event.logical_key {
                Key::Named(NamedKey::Escape) => ctl.exit(),
                Key::Character(c) if c.eq_ignore_ascii_case("u") => {
                    self.cast.stand(self.cast.up.toggled());
                    self.scene.restand(&self.cast);
                    println!("{NAME}: up axis {}", self.cast.up.name());
                }
                _ => {}
            }
        }
    }

    fn prepare(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.cpu = Some(self.scene.update(f.index, f.time, f.aspect())?);
        self.gpu_ms = self.scene.gpu_ms(f.index);
        self.scene.prepass(f.cmd, f.index)
    }

    fn draw(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.scene.record(f.cmd, f.index)
    }

    fn finish(&mut self, f: &FrameCtx<'_>) -> Result<(), String> {
        self.scene.finish(f.cmd, f.index)
    }

    /// The figures, printed once a second.
    fn presented(&mut self, _ctl: &mut Control<'_>) -> Result<(), String> {
        let f = self.figures(self.gpu_ms)?;
        self.second.push(&f);
        self.all.push(&f);
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
        Ok(())
    }

    /// A line of figures per frame, the GPU time read now that the frame
    /// has been waited for.
    fn written(&mut self, f: &FrameCtx<'_>, _rgba: &[u8]) -> Result<(), String> {
        let gpu_ms = self.scene.collect_gpu_ms(f.index)?;
        let figures = self.figures(gpu_ms)?;
        println!(
            "frame {:4}  anim {:>7} ms  upload {:>7} ms  gpu {:>7} ms  drawn {} of {}",
            f.number,
            fmt_ms(Some(figures.cpu.anim_ms)),
            fmt_ms(Some(figures.cpu.upload_ms)),
            fmt_ms(gpu_ms),
            self.scene.drawn(),
            self.scene.instances()
        );
        // Frame 0 also builds thread pools and warms caches.
        if f.number > 0 || self.headless_total.is_some_and(|n| n < 3) {
            self.all.push(&figures);
        }
        Ok(())
    }

    fn finished(&mut self, s: &Summary) -> Result<(), String> {
        let Some(out) = &s.out else {
            println!(
                "{NAME}: presented {} frame(s); median: {}",
                s.presented,
                self.all.medians()
            );
            return Ok(());
        };
        println!(
            "{NAME}: median of {} frame(s){}: {}",
            self.all.len(),
            if s.presented >= 3 {
                " (frame 0 left out)"
            } else {
                ""
            },
            self.all.medians()
        );
        println!(
            "{NAME}: wrote {} frame(s) to {}",
            s.presented,
            out.display()
        );
        Ok(())
    }
}
