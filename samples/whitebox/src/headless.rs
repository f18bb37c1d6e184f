//! `--headless`: offscreen target, N frames, one PNG each.

use vkskin::gpu::MessageLog;
use vkskin::render::{FramesInFlight, OffscreenTarget, DEFAULT_FRAMES_IN_FLIGHT};

use crate::{Args, Scene};

pub fn run<S: Scene>(args: &Args) -> Result<MessageLog, String> {
    let (device, log) =
        sample_common::headless_device(S::NAME, args.validation(), args.device.as_deref())?;
    let err = |e: vkskin::gpu::GpuError| e.to_string();
    let frames_total = args.frames.unwrap_or(60);
    {
        let target = OffscreenTarget::new(&device, args.width, args.height).map_err(err)?;
        let mut scene = S::new(
            &device,
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            DEFAULT_FRAMES_IN_FLIGHT,
        )
        .map_err(err)?;
        let mut frames = FramesInFlight::new(&device, DEFAULT_FRAMES_IN_FLIGHT).map_err(err)?;
        let out = args.out_dir(S::NAME);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let aspect = target.aspect_ratio();
        for i in 0..frames_total {
            let t = i as f32 / args.fps;
            let frame = frames.begin().map_err(err)?;
            scene.update(frame.index, t, aspect).map_err(err)?;
            scene.prepass(frame.cmd, frame.index).map_err(err)?;
            target.begin(frame.cmd, S::CLEAR);
            scene.record(frame.cmd, frame.index, aspect).map_err(err)?;
            target.end_and_copy(frame.cmd);
            scene.finish(frame.cmd, frame.index).map_err(err)?;
            frames.submit(&frame, None, None).map_err(err)?;
            // One readback target: wait before the next frame reuses it.
            frames.wait(&frame).map_err(err)?;
            let path = out.join(format!("frame_{i:04}.png"));
            target.write_png(&path).map_err(err)?;
        }
        println!(
            "{}: wrote {frames_total} frame(s) to {}",
            S::NAME,
            out.display()
        );
    }
    // Every resource is gone; the device (and then the instance with its
    // messenger) goes now, so the log includes the leak report.
    drop(device);
    Ok(log)
}
