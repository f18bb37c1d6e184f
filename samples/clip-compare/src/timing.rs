//! vkskin's sampling timed as the anim bench and ozz-compress time theirs.

use std::hint::black_box;
use std::time::{Duration, Instant};

use vkskin::anim::{Clip, PlaybackMode, SamplingContext, SoaPose, SoaSamplingJob};

/// The anim bench's `per_element`: 3 warm-up calls, calls counted in 5 ms,
/// a run is a fifth of that (about 1 ms), the fastest of 41 runs, in ns per
/// element. The minimum because the machine is shared and other processes
/// only ever add time.
pub fn per_element(elements: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < Duration::from_millis(5) {
        f();
        calls += 1;
    }
    let per_run = (calls / 5).max(1);
    (0..41)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_run {
                f();
            }
            t.elapsed().as_nanos() as f64 / (per_run as f64 * elements as f64)
        })
        .fold(f64::INFINITY, f64::min)
}

/// ns per joint of vkskin's SoA sampling of `clip` (clamped playback, as
/// ozz clamps its ratio): cached (time advancing by `step`, wrapping at
/// `duration`) and random seek (`seeks` in order, cycling).
pub fn sample_clip(clip: &Clip, duration: f32, step: f32, seeks: &[f32]) -> (f64, f64) {
    let n = clip.joint_count();
    let mut context = SamplingContext::new(clip);
    let mut pose = SoaPose::identity(n);
    let run = |time: f32, context: &mut SamplingContext, pose: &mut SoaPose| {
        let ok = SoaSamplingJob {
            clip,
            context,
            time,
            mode: PlaybackMode::Clamp,
            output: pose,
        }
        .run()
        .is_ok();
        black_box(ok);
        black_box(&*pose);
    };
    let mut t = 0.0f32;
    let cached = per_element(n, || {
        t += step;
        if t > duration {
            t -= duration;
        }
        run(t, &mut context, &mut pose);
    });
    let mut next = 0usize;
    let seek = per_element(n, || {
        next = (next + 1) % seeks.len().max(1);
        run(
            seeks.get(next).copied().unwrap_or(0.0),
            &mut context,
            &mut pose,
        );
    });
    (cached, seek)
}
