//! Resampling, spans and sample rates for the compression job: the
//! original clip's curves sampled uniformly, cut into spans at jumps, and
//! each span's lowest rate within half the tolerance.

use super::format::{Span, Tolerance, SEGMENT};
use crate::anim::{
    AnimError, Clip, PlaybackMode, SamplingContext, SamplingJob, Skeleton, Transform,
};

use super::channels::*;
use super::metric::*;

/// Samples the original clip.
pub(super) struct Evaluator<'a> {
    pub(super) clip: &'a Clip,
    pub(super) skel: &'a Skeleton,
    pub(super) ctx: SamplingContext,
    pub(super) pose: Vec<Transform>,
}

impl Evaluator<'_> {
    pub(super) fn sample(
        &mut self,
        t: f32,
        mode: PlaybackMode,
    ) -> Result<Vec<Transform>, AnimError> {
        SamplingJob {
            clip: self.clip,
            context: &mut self.ctx,
            time: t,
            mode,
            output: &mut self.pose,
        }
        .run()?;
        Ok(self.pose.clone())
    }

    /// The worst model-space error at `times` of the pose `edit` makes of
    /// the original's.
    pub(super) fn max_error(
        &mut self,
        times: &[f32],
        distance: f32,
        mut edit: impl FnMut(f32, &mut [Transform]),
    ) -> Result<f32, AnimError> {
        let mut worst = 0.0f32;
        for &t in times {
            let orig = self.sample(t, PlaybackMode::Loop)?;
            let mut pose = orig.clone();
            edit(t, &mut pose);
            let (ma, mb) = (model(self.skel, &orig), model(self.skel, &pose));
            for j in 0..ma.len() {
                worst = worst.max(joint_error(&ma[j], &mb[j], distance));
            }
        }
        Ok(worst)
    }
}

/// `samples` uniform samples of each curve over `span` (start, end):
/// looping below the clip's end (as the clip plays), the end itself
/// clamped.
pub(super) fn resample(
    ev: &mut Evaluator,
    ids: &[(usize, u8)],
    span: (f32, f32),
    samples: usize,
    duration: f32,
) -> Result<Vec<Curve>, AnimError> {
    let sp = make_span(span, samples, 0);
    let mut curves: Vec<Curve> = ids
        .iter()
        .map(|&(j, c)| Curve {
            joint: j,
            channel: c,
            samples: Vec::with_capacity(samples),
        })
        .collect();
    for k in 0..samples {
        let pose = if k + 1 == samples {
            if span.1 >= duration {
                ev.sample(duration, PlaybackMode::Clamp)?
            } else {
                ev.sample(span.1, PlaybackMode::Loop)?
            }
        } else {
            ev.sample(sp.start + k as f32 * sp.step, PlaybackMode::Loop)?
        };
        for c in &mut curves {
            c.samples.push(channel_value(&pose[c.joint], c.channel));
        }
    }
    Ok(curves)
}

/// The span `(start, end)` with `samples` samples, its segments from
/// `first_segment`.
pub(super) fn make_span(span: (f32, f32), samples: usize, first_segment: usize) -> Span {
    let step = (span.1 - span.0) / (samples.max(2) - 1) as f32;
    Span {
        start: span.0,
        step,
        inv_step: if step > 0.0 { 1.0 / step } else { 0.0 },
        samples: samples as u32,
        first_segment: first_segment as u32,
    }
}

/// Jumps closer than this to each other or to the clip's ends are not
/// cut (a span needs room for its two samples).
pub(super) const MIN_SPAN: f32 = 1e-4;

/// At most this many jumps are cut (the largest kept).
pub(super) const MAX_JUMPS: usize = 256;

/// The scan for jumps: this many points a second.
pub(super) const JUMP_SCAN_RATE: f32 = 3840.0;

/// The jumps of the curves: instants where the pose (its curve channels
/// alone, in model space, by the tolerance's metric) changes by more than
/// a quarter of the tolerance. A scan at [`JUMP_SCAN_RATE`] takes each
/// pair of neighbouring cells and compares the pose at their shared end
/// with the two outer poses interpolated half way (as sampling would):
/// a smooth curve, even a fast one or one with a kink, misses by a
/// fraction of the scan step; a jump by half its size. Bisection, by the
/// same measure, narrows each miss to neighbouring times `(l, r)`, kept
/// if the pose changes there (a jump) by more than the floor beyond, and
/// more than twice, its change across the neighbouring intervals of the
/// same width (a kink or fast smooth motion: at hundreds of units a
/// second, one f32 step of time moves the pose by more than the floor).
/// Sorted, at least [`MIN_SPAN`] apart and from the clip's ends.
pub(super) fn find_jumps(
    ev: &mut Evaluator,
    ids: &[(usize, u8)],
    duration: f32,
    tol: Tolerance,
) -> Result<Vec<(f32, f32)>, AnimError> {
    let cells = ((duration * JUMP_SCAN_RATE).ceil() as usize).clamp(2, 1 << 18);
    let h = duration / cells as f32;
    let floor = 0.25 * tol.error;
    let skel = ev.skel;
    // The miss at `pm` of `pa` and `pb` interpolated half way.
    let miss = |pa: &[Transform], pm: &[Transform], pb: &[Transform]| -> f32 {
        let mut q = pm.to_vec();
        for &(j, c) in ids {
            let (a, b) = (channel_value(&pa[j], c), channel_value(&pb[j], c));
            set_channel(&mut q[j], c, a, b, 0.5);
        }
        let (ma, mb) = (model(skel, pm), model(skel, &q));
        (0..ma.len())
            .map(|j| joint_error(&ma[j], &mb[j], tol.distance))
            .fold(0.0, f32::max)
    };
    // The change of the curve channels from pose `pa` to pose `pb`.
    let change = |pa: &[Transform], pb: &[Transform]| -> f32 {
        let mut q = pa.to_vec();
        for &(j, c) in ids {
            let b = channel_value(&pb[j], c);
            set_channel(&mut q[j], c, b, b, 0.0);
        }
        let mut p = pa.to_vec();
        for &(j, c) in ids {
            let a = channel_value(&pa[j], c);
            set_channel(&mut p[j], c, a, a, 0.0);
        }
        let (ma, mb) = (model(skel, &p), model(skel, &q));
        (0..ma.len())
            .map(|j| joint_error(&ma[j], &mb[j], tol.distance))
            .fold(0.0, f32::max)
    };
    // The scan stops short of the end (the clamped end is not a jump the
    // samples need: the last span ends there).
    let mut e = vec![0.0f32; cells];
    let mut p0 = ev.sample(0.0, PlaybackMode::Loop)?;
    let mut p1 = ev.sample(h, PlaybackMode::Loop)?;
    for (k, ek) in e.iter_mut().enumerate().take(cells - 1).skip(1) {
        let p2 = ev.sample((k + 1) as f32 * h, PlaybackMode::Loop)?;
        *ek = miss(&p0, &p1, &p2);
        p0 = std::mem::replace(&mut p1, p2);
    }
    let mut found: Vec<(f32, f32, f32)> = Vec::new();
    for k in 1..cells - 1 {
        if e[k] <= floor || e[k] < e[k - 1] || e[k] < e[k + 1] {
            continue;
        }
        let (mut l, mut r) = ((k - 1) as f32 * h, (k + 1) as f32 * h);
        let mut pl = ev.sample(l, PlaybackMode::Loop)?;
        let mut pr = ev.sample(r, PlaybackMode::Loop)?;
        for _ in 0..48 {
            let m = 0.5 * (l + r);
            let (ql, qr) = (0.5 * (l + m), 0.5 * (m + r));
            if m <= l || m >= r || ql <= l || ql >= m || qr <= m || qr >= r {
                break;
            }
            let pm = ev.sample(m, PlaybackMode::Loop)?;
            let el = miss(&pl, &ev.sample(ql, PlaybackMode::Loop)?, &pm);
            let er = miss(&pm, &ev.sample(qr, PlaybackMode::Loop)?, &pr);
            if el >= er {
                r = m;
                pr = pm;
            } else {
                l = m;
                pl = pm;
            }
        }
        // A jump changes the pose across (l, r) by its size however
        // narrow the interval; smooth motion (a kink, or a curve moving
        // hundreds of units a second, where one step of an f32 time near
        // 10 s is a microsecond) by its speed times the width, as much as
        // across the neighbouring intervals of the same width. So the
        // change is a jump's only by what it exceeds its neighbours'.
        let size = change(&pl, &pr);
        let w = r - l;
        let mut smooth = 0.0f32;
        if l - w >= 0.0 {
            smooth = smooth.max(change(&ev.sample(l - w, PlaybackMode::Loop)?, &pl));
        }
        if r + w < duration {
            smooth = smooth.max(change(&pr, &ev.sample(r + w, PlaybackMode::Loop)?));
        }
        if size - smooth > floor && size > 2.0 * smooth {
            found.push((l, r, size));
        }
    }
    if found.len() > MAX_JUMPS {
        found.sort_by(|a, b| b.2.total_cmp(&a.2));
        found.truncate(MAX_JUMPS);
    }
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f32, f32)> = Vec::with_capacity(found.len());
    let mut prev = 0.0f32;
    for (l, r, _) in found {
        if l - prev >= MIN_SPAN && duration - r >= MIN_SPAN {
            out.push((l, r));
            prev = r;
        }
    }
    Ok(out)
}

/// Spans no shorter than this are halved when their halves' own rates
/// save samples (see [`plan_span`]).
pub(super) const MIN_PIECE: f32 = 0.25;

/// Segments of a span of `n` samples.
fn segments(n: usize) -> usize {
    n.saturating_sub(1).div_ceil(SEGMENT)
}

/// The span `(a, b)` (between jumps) as pieces `(start, end, samples)`,
/// each at its own rate ([`choose_rate`]): one rate for a whole span is
/// the rate of its fastest moment, so a span is halved (at the key time
/// nearest its middle, else the middle; no jump there, so the pieces
/// share their end sample's value) while the halves' rates need at least
/// two segments fewer than the whole's, down to [`MIN_PIECE`]. A long
/// clip that idles and then moves fast keeps the high rate where it moves.
pub(super) fn plan_span(
    ev: &mut Evaluator,
    ids: &[(usize, u8)],
    span: (f32, f32),
    duration: f32,
    key_times: &[f32],
    tol: Tolerance,
) -> Result<Vec<(f32, f32, usize)>, AnimError> {
    let n = choose_rate(ev, ids, span, duration, key_times, tol)?;
    let mut out = Vec::new();
    let mut todo = vec![(span.0, span.1, n)];
    while let Some((a, b, n)) = todo.pop() {
        let whole = segments(n);
        if b - a < 2.0 * MIN_PIECE || whole < 3 {
            out.push((a, b, n));
            continue;
        }
        let mid = 0.5 * (a + b);
        let near = key_times
            .iter()
            .copied()
            .filter(|&t| t - a >= MIN_PIECE && b - t >= MIN_PIECE)
            .min_by(|x, y| (x - mid).abs().total_cmp(&(y - mid).abs()));
        let m = near.unwrap_or(mid);
        let n1 = choose_rate(ev, ids, (a, m), duration, key_times, tol)?;
        let n2 = choose_rate(ev, ids, (m, b), duration, key_times, tol)?;
        if segments(n1) + segments(n2) + 2 <= whole {
            // Halves pushed in reverse: popped in time order.
            todo.push((m, b, n2));
            todo.push((a, m, n1));
        } else {
            out.push((a, b, n));
        }
    }
    Ok(out)
}

/// The lowest candidate sample count for `span` whose unquantized
/// samples, interpolated as sampling will, stay within half the
/// tolerance at its check times; if none does, the one that came
/// closest.
pub(super) fn choose_rate(
    ev: &mut Evaluator,
    ids: &[(usize, u8)],
    span: (f32, f32),
    duration: f32,
    key_times: &[f32],
    tol: Tolerance,
) -> Result<usize, AnimError> {
    let keys: Vec<f32> = key_times
        .iter()
        .filter(|&&t| t >= span.0 && t <= span.1)
        .map(|&t| t - span.0)
        .collect();
    let cands = candidates(span.1 - span.0, &keys);
    let mut found: Option<usize> = None;
    let mut best = (f32::INFINITY, 2usize);
    let mut error_at = |cand: usize| -> Result<f32, AnimError> {
        let curves = resample(ev, ids, span, cand, duration)?;
        let sp = [make_span(span, cand, 0)];
        let checks = span_checks(&sp[0], span.1, duration, key_times);
        let seg_first: Vec<usize> = (0..sp[0].segment_count()).map(|q| q * SEGMENT).collect();
        let err = ev.max_error(&checks, tol.distance, |t, pose| {
            apply_f32(&curves, &sp, &seg_first, duration, t, pose)
        })?;
        if err < best.0 {
            best = (err, cand);
        }
        Ok(err)
    };
    // The error falls as the rate rises, except that a rate whose samples
    // fall on the keys (the key grid's and its multiples) beats the rates
    // just above it: the grid's own first, then twice and four times it
    // (whose strides of 2 and 4 are the keys again), then a binary search
    // below the lowest rate found so far.
    if let Some(g) = grid_count(span.1 - span.0, &keys) {
        for m in [1, 2, 4] {
            let n = (g - 1) * m + 1;
            if n <= 1 << 20 && error_at(n)? <= 0.5 * tol.error {
                found = Some(n);
                break;
            }
        }
    }
    let below: Vec<usize> = cands
        .iter()
        .copied()
        .filter(|&c| found.is_none_or(|f| c < f))
        .collect();
    let (mut lo, mut hi) = (0usize, below.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let cand = below[mid];
        if error_at(cand)? <= 0.5 * tol.error {
            found = Some(cand);
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(found.unwrap_or(best.1))
}

/// The sample count of the key grid (when every key of the span lies on
/// one, from its start).
fn grid_count(duration: f32, keys: &[f32]) -> Option<usize> {
    let gaps = keys.windows(2).map(|w| w[1] - w[0]).filter(|&g| g > 1e-5);
    let h = gaps.fold(None, |m: Option<f32>, g| Some(m.map_or(g, |m| m.min(g))))?;
    let on_grid = |t: f32| ((t / h) - (t / h).round()).abs() < 1e-3;
    let n = (duration / h).round() as usize + 1;
    (keys.iter().all(|&t| on_grid(t)) && on_grid(duration) && n <= 1 << 20).then_some(n.max(2))
}

/// Sample counts to try, fewest first: the key grid's own (when every
/// curve key lies on one) and 10 to 3840 Hz.
pub(super) fn candidates(duration: f32, keys: &[f32]) -> Vec<usize> {
    let mut c: Vec<usize> = [
        10.0f32, 15.0, 20.0, 24.0, 30.0, 40.0, 50.0, 60.0, 90.0, 120.0, 240.0, 480.0, 960.0,
        1920.0, 3840.0,
    ]
    .iter()
    .map(|r| ((duration * r).round() as usize).max(1) + 1)
    .collect();
    c.extend(grid_count(duration, keys));
    c.sort_unstable();
    c.dedup();
    c.retain(|&n| n <= 1 << 20);
    c
}

/// Every distinct key time of the clip's timelines, sorted.
pub(super) fn key_times(clip: &Clip) -> Vec<f32> {
    let tl = &clip.timelines;
    let mut t: Vec<f32> = (0..tl.len())
        .flat_map(|i| (0..tl.key_count(i)).map(move |k| tl.time(i, k)))
        .collect();
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}

/// Check times per sample interval. Quarters were too few: a SQUAD
/// curve's outer slerp turning the short way mid-interval makes a kink
/// the chord misses, narrower than a quarter interval at 120 Hz (the
/// built-in walk clip).
pub(super) const CHECKS_PER_INTERVAL: usize = 8;

/// The times the error is checked at in a span ending at `end`: each
/// sample and the eighths of each interval, each key time and each key
/// interval's middle, all in the span and in `[0, duration)` (the end
/// wraps to the start when looping).
pub(super) fn span_checks(sp: &Span, end: f32, duration: f32, keys: &[f32]) -> Vec<f32> {
    let mut t: Vec<f32> = Vec::new();
    for k in 0..sp.samples as usize - 1 {
        for f in 0..CHECKS_PER_INTERVAL {
            t.push(sp.start + (k as f32 + f as f32 / CHECKS_PER_INTERVAL as f32) * sp.step);
        }
    }
    t.push(end);
    t.extend_from_slice(keys);
    t.extend(keys.windows(2).map(|w| 0.5 * (w[0] + w[1])));
    t.retain(|&x| x >= sp.start && x <= end && x >= 0.0 && x < duration);
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}
