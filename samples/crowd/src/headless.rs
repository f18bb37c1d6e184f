//! `--headless`: an offscreen target, N frames, one PNG and one line of
//! figures each, then the medians.

use vkskin::gpu::MessageLog;
use vkskin::render::{FramesInFlight, OffscreenTarget, DEFAULT_FRAMES_IN_FLIGHT};

use crate::scene::{Cast, CrowdOptions, CrowdScene};
use crate::{describe, fmt_ms, Args, Figures, FrameFigures, CLEAR, NAME};

pub fn run(args: &Args, cast: &Cast, options: &CrowdOptions) -> Result<MessageLog, String> {
    let (device, log) =
        sample_common::headless_device(NAME, args.validation(), args.device.as_deref())?;
    let err = |e: vkskin::gpu::GpuError| e.to_string();
    let frames_total = args.frames.unwrap_or(30);
    let result = (|| {
        let target =
            OffscreenTarget::new(&device, args.size.width, args.size.height).map_err(err)?;
        let mut scene = CrowdScene::new(
            &device,
            cast,
            options,
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            DEFAULT_FRAMES_IN_FLIGHT,
        )?;
        describe(cast, &scene, &device.physical().name, options.threads);
        let mut frames = FramesInFlight::new(&device, DEFAULT_FRAMES_IN_FLIGHT).map_err(err)?;
        std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
        let aspect = target.aspect_ratio();
        let mut figures = Figures::default();
        for i in 0..frames_total {
            let t = i as f32 / args.fps;
            let frame = frames.begin().map_err(err)?;
            let cpu = scene.update(frame.index, t, aspect)?;
            scene.prepass(frame.cmd, frame.index)?;
            target.begin(frame.cmd, CLEAR);
            let recorded = scene.record(frame.cmd, frame.index);
            target.end_and_copy(frame.cmd);
            recorded?;
            scene.finish(frame.cmd, frame.index)?;
            frames.submit(&frame, None, None).map_err(err)?;
            // One readback target: wait before the next frame reuses it.
            frames.wait(&frame).map_err(err)?;
            let gpu_ms = scene.collect_gpu_ms(frame.index)?;
            let f = FrameFigures { cpu, gpu_ms };
            println!(
                "frame {i:4}  anim {:>7} ms  upload {:>7} ms  gpu {:>7} ms",
                fmt_ms(Some(cpu.anim_ms)),
                fmt_ms(Some(cpu.upload_ms)),
                fmt_ms(gpu_ms)
            );
            // Frame 0 also builds thread pools and warms caches.
            if i > 0 || frames_total < 3 {
                figures.push(&f);
            }
            let png = args.out.join(format!("frame_{i:04}.png"));
            target.write_png(&png).map_err(err)?;
        }
        println!(
            "{NAME}: median of {} frame(s){}: {}",
            figures.len(),
            if frames_total >= 3 {
                " (frame 0 left out)"
            } else {
                ""
            },
            figures.medians()
        );
        println!(
            "{NAME}: wrote {frames_total} frame(s) to {}",
            args.out.display()
        );
        device.wait_idle().map_err(err)?;
        Ok::<(), String>(())
    })();
    // Every resource is gone; the device (and then the instance with its
    // messenger) goes now, so the log includes the leak report.
    drop(device);
    result.map(|()| log)
}
