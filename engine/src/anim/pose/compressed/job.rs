//! [`CompressionJob`]: a runtime [`Clip`] and its skeleton in, a clip of
//! the compressed layout out, every joint within a [`Tolerance`] of the
//! original in model space.
//!
//! How, in order:
//!
//! 1. Each channel of each joint is classified from the clip's layout:
//!    not animated (the rest pose: nothing if it is the bind pose, else a
//!    constant), a step track (Step, Nearest and whole-matrix keys keep
//!    their key times and values, in the base layout), or a curve
//!    (Linear, SQUAD, CubicSpline: resampled).
//! 2. Spans and sample rates: the curves' jumps (an instant where the
//!    pose changes by more than a quarter of the tolerance: two keys at
//!    one time, a SQUAD span whose outer slerp turns the other way) are
//!    found by a scan and bisection, and the clip is cut there into spans
//!    with a sample on each side. Each span is sampled uniformly (as the
//!    original clip samples it, so SQUAD and splines become the curve they
//!    define), at the lowest candidate rate (the key grid's own when the
//!    keys lie on one, then 10 to 3840 Hz) whose unquantized samples,
//!    interpolated as sampling will, stay within half the tolerance.
//!    Curves that stay put become constants (or nothing, on the bind pose).
//! 3. Per segment of [`SEGMENT`] intervals, per track, a range inside the
//!    clip's range (8 bits a bound) and the lowest bit rate whose error,
//!    the track alone, at a virtual vertex as far as the joint's farthest
//!    descendant plus the tolerance distance, is within 85% of the
//!    tolerance (the margin covers the times between check times);
//!    then the whole pose is checked in model space (errors accumulated
//!    down the hierarchy) and, while a joint is out, the track of its
//!    chain with the largest error goes up a rate.
//! 4. The error is measured on the clip as built, through the sampler,
//!    and kept ([`CompressedClip::measured_error`]).
//!
//! Rotations are interpolated by nlerp between two decoded samples; the
//! check times include the eighths of every interval (nlerp's angle
//! error against slerp peaks near a quarter and three quarters and is
//! zero at the middle), every key time of the original and the
//! middle of every key interval, so the measured error includes what
//! nlerp and resampling lose.

use glam::{Affine3A, Quat, Vec3, Vec3A, Vec4};

use super::format::{
    dequantize, interpolation_code, lerp3, locate_span, nlerp4, place, quat_of, stored_of,
    BaseTrack, CompressedClip, PackedTrack, Segment, SegmentTrack, Span, Tolerance, BIT_RATES, PAD,
    ROTATION, SCALE, SEGMENT, TRANSLATION,
};
use crate::anim::pose::clip::Vec3Field;
use crate::anim::{
    AnimError, Clip, Interpolation, PlaybackMode, RawClip, RawJointTrack, RawTrack,
    SamplingContext, SamplingJob, Skeleton, Transform,
};

/// Compresses a clip (see the module notes).
pub struct CompressionJob<'a> {
    /// The clip to compress, in the raw layout (not already compressed).
    pub clip: &'a Clip,
    /// Its skeleton.
    pub skeleton: &'a Skeleton,
    /// The error allowed, measured as [`Tolerance`] says.
    pub tolerance: Tolerance,
}

/// A base track before layout: joint, channel, interpolation, times, values.
type BaseKeys = (usize, u8, Interpolation, Vec<f32>, Vec<[f32; 4]>);

/// What one channel of one joint is.
#[derive(Clone, Debug)]
enum Kind {
    Rest,
    Curve,
    Step(Interpolation, Vec<f32>, Vec<[f32; 4]>),
}

/// A resampled curve track.
struct Curve {
    joint: usize,
    channel: u8,
    /// Per sample: vectors with a 0, rotations the normalised quaternion
    /// (the stored three are chosen per segment, [`stored_of`]).
    samples: Vec<Vec4>,
}

impl CompressionJob<'_> {
    /// Checks the inputs without running the job.
    pub fn validate(&self) -> Result<(), AnimError> {
        if !self.tolerance.is_valid() {
            return Err(AnimError::InvalidJob(format!(
                "compression tolerance {} at {} is not two positive numbers",
                self.tolerance.error, self.tolerance.distance
            )));
        }
        if self.clip.compressed().is_some() {
            return Err(AnimError::InvalidClip {
                clip: self.clip.name().to_string(),
                fault: "is compressed already".into(),
            });
        }
        if self.clip.joint_count() != self.skeleton.len() {
            return Err(AnimError::LengthMismatch {
                what: "skeleton joints for the clip",
                expected: self.clip.joint_count(),
                got: self.skeleton.len(),
            });
        }
        Ok(())
    }

    /// Validates, then compresses.
    pub fn run(self) -> Result<Clip, AnimError> {
        self.run_with(None)
    }

    /// [`run`](Self::run); `force_bits` skips the bit-rate search and gives
    /// every track that rate (for tests that break the choice on purpose).
    pub(crate) fn run_with(self, force_bits: Option<u8>) -> Result<Clip, AnimError> {
        self.validate()?;
        let clip = self.clip;
        let skel = self.skeleton;
        let tol = self.tolerance;
        let n = skel.len();
        let duration = clip.duration();
        let kinds = classify(clip, n);
        let key_times = key_times(clip);
        let shell = shell_distances(skel, tol.distance);
        let mut ev = Evaluator {
            clip,
            skel,
            ctx: SamplingContext::new(clip),
            pose: vec![Transform::IDENTITY; n],
        };

        // 2. Spans cut at the curves' jumps, a sample rate per span.
        let curve_ids: Vec<(usize, u8)> = (0..n)
            .flat_map(|j| (0..3u8).map(move |c| (j, c)))
            .filter(|&(j, c)| matches!(kinds[j][c as usize], Kind::Curve))
            .collect();
        let mut plan: Vec<(f32, f32, usize)> = Vec::new();
        if !curve_ids.is_empty() && duration > 0.0 {
            let jumps = find_jumps(&mut ev, &curve_ids, duration, tol)?;
            let mut a = 0.0f32;
            let mut bounds = Vec::with_capacity(jumps.len() + 1);
            for &(l, r) in &jumps {
                bounds.push((a, l));
                a = r;
            }
            bounds.push((a, duration));
            for (a, b) in bounds {
                let n = choose_rate(&mut ev, &curve_ids, (a, b), duration, &key_times, tol)?;
                plan.push((a, b, n));
            }
        }
        let mut spans = Vec::with_capacity(plan.len());
        let mut seg_first = Vec::new();
        let mut span_first = Vec::with_capacity(plan.len());
        let mut total = 0usize;
        for &(a, b, n) in &plan {
            let sp = make_span((a, b), n, seg_first.len());
            span_first.push(total);
            for q in 0..sp.segment_count() {
                seg_first.push(total + q * SEGMENT);
            }
            total += n;
            spans.push(sp);
        }

        // Curves (or, without spans, every curve) that stay put.
        let all = if !plan.is_empty() {
            let mut all: Vec<Curve> = curve_ids
                .iter()
                .map(|&(j, c)| Curve {
                    joint: j,
                    channel: c,
                    samples: Vec::with_capacity(total),
                })
                .collect();
            for &(a, b, n) in &plan {
                let part = resample(&mut ev, &curve_ids, (a, b), n, duration)?;
                for (c, p) in all.iter_mut().zip(part) {
                    c.samples.extend(p.samples);
                }
            }
            all
        } else {
            let pose = ev.sample(0.0, PlaybackMode::Clamp)?;
            curve_ids
                .iter()
                .map(|&(j, c)| Curve {
                    joint: j,
                    channel: c,
                    samples: vec![channel_value(&pose[j], c)],
                })
                .collect()
        };
        let bind = skel.bind_local();
        let mut base_tracks: Vec<BaseKeys> = Vec::new();
        for j in 0..n {
            for c in 0..3u8 {
                match &kinds[j][c as usize] {
                    Kind::Rest => {
                        let v = channel4(&clip.rest[j], c);
                        if v != channel4(&bind[j], c) {
                            base_tracks.push((j, c, Interpolation::Linear, vec![0.0], vec![v]));
                        }
                    }
                    Kind::Step(i, times, values) => {
                        base_tracks.push((j, c, *i, times.clone(), values.clone()))
                    }
                    Kind::Curve => {}
                }
            }
        }
        let mut curves = Vec::new();
        for cv in all {
            let eps = 0.01 * tol.error;
            let first = cv.samples[0];
            let d = shell[cv.joint];
            let moves = |a: Vec4, b: Vec4| channel_distance(cv.channel, a, b, d) > eps;
            if !plan.is_empty() && cv.samples.iter().any(|&s| moves(s, first)) {
                curves.push(cv);
                continue;
            }
            let v = first.to_array();
            let b = channel_value(&bind[cv.joint], cv.channel);
            if moves(first, b) {
                base_tracks.push((
                    cv.joint,
                    cv.channel,
                    Interpolation::Linear,
                    vec![0.0],
                    vec![v],
                ));
            }
        }
        base_tracks.sort_by_key(|t| (t.0, t.1));

        // The base layout: constants and step tracks, through Clip::build.
        let mut raw = RawClip {
            name: clip.name().to_string(),
            duration,
            tracks: Vec::new(),
            weights: Vec::new(),
        };
        let mut base = Vec::new();
        let (mut base_times, mut base_values) = (Vec::new(), Vec::new());
        for (j, c, interp, times, values) in &base_tracks {
            base.push(BaseTrack {
                joint: *j as u16,
                channel: *c,
                interpolation: interpolation_code(*interp),
                keys: times.len() as u32,
                first: base_times.len() as u32,
            });
            base_times.extend_from_slice(times);
            base_values.extend_from_slice(values);
        }
        raw_add_base(&mut raw, &base, &base_times, &base_values);
        let base_clip = Clip::build(&raw, skel)?;

        // 3. Ranges and bit rates per segment.
        let mut packed = CompressedClip {
            spans: Vec::new(),
            tracks: curves
                .iter()
                .map(|c| PackedTrack {
                    joint: c.joint as u16,
                    channel: c.channel,
                })
                .collect(),
            ranges: Vec::new(),
            segments: Vec::new(),
            segment_tracks: Vec::new(),
            data: Vec::new(),
            base,
            base_times,
            base_values,
            tolerance: tol,
            measured_error: 0.0,
        };
        let all_checks: Vec<f32> = plan
            .iter()
            .zip(&spans)
            .flat_map(|(&(_, b, _), sp)| span_checks(sp, b, duration, &key_times))
            .collect();
        if !curves.is_empty() {
            packed.spans = spans.clone();
            // Per segment and rotation track, the component left out; then
            // each track's stored values per segment and its clip range.
            let seg_range = |si: usize, q: usize| {
                let end = span_first[si] + spans[si].samples as usize - 1;
                let first = seg_first[spans[si].first_segment as usize + q];
                (first, (first + SEGMENT).min(end))
            };
            let mut largest: Vec<Vec<u8>> = Vec::with_capacity(seg_first.len());
            for (si, sp) in spans.iter().enumerate() {
                for q in 0..sp.segment_count() {
                    let (first, last) = seg_range(si, q);
                    largest.push(
                        curves
                            .iter()
                            .map(|c| left_out(c.channel, &c.samples[first..=last]))
                            .collect(),
                    );
                }
            }
            let stored_seg = |i: usize, s: usize, first: usize, last: usize| -> Vec<Vec3> {
                curves[i].samples[first..=last]
                    .iter()
                    .map(|&v| stored(curves[i].channel, v, largest[s][i]))
                    .collect()
            };
            packed.ranges = (0..curves.len())
                .map(|i| {
                    let mut all = Vec::new();
                    for (si, sp) in spans.iter().enumerate() {
                        for q in 0..sp.segment_count() {
                            let (first, last) = seg_range(si, q);
                            all.extend(stored_seg(i, sp.first_segment as usize + q, first, last));
                        }
                    }
                    clip_range(&all)
                })
                .collect();
            let mut bits_total = 0usize;
            let mut bitstream: Vec<u8> = Vec::new();
            for (si, sp) in spans.iter().enumerate() {
                let end = span_first[si] + sp.samples as usize - 1;
                for q in 0..sp.segment_count() {
                    let s = sp.first_segment as usize + q;
                    let first = seg_first[s];
                    let last = (first + SEGMENT).min(end);
                    let values: Vec<Vec<Vec3>> = (0..curves.len())
                        .map(|i| stored_seg(i, s, first, last))
                        .collect();
                    let mut sts: Vec<SegmentTrack> = values
                        .iter()
                        .zip(&packed.ranges)
                        .enumerate()
                        .map(|(i, (v, r))| {
                            let mut st = segment_range(v, r);
                            st.largest = largest[s][i];
                            st
                        })
                        .collect();
                    let checks: Vec<f32> = all_checks
                        .iter()
                        .filter(|&&t| locate_span(&spans, t).0 == s)
                        .copied()
                        .collect();
                    let seg = SegCtx {
                        curves: &curves,
                        values: &values,
                        ranges: &packed.ranges,
                        spans: &spans,
                    };
                    choose_bits(&mut ev, &seg, &mut sts, &checks, &shell, tol, force_bits)?;
                    // Pack: byte-aligned segment, samples of every track in order.
                    let sample_bits: usize = sts.iter().map(|t| 3 * t.bits as usize).sum();
                    let data_at = bits_total.div_ceil(8);
                    packed.segments.push(Segment {
                        data_at: data_at as u32,
                        sample_bits: sample_bits as u32,
                    });
                    let mut pos = data_at * 8;
                    for k in 0..=last - first {
                        for ((st, v), r) in sts.iter().zip(&values).zip(&packed.ranges) {
                            let q = quantize3(v[k], st, r);
                            for &qc in &q {
                                write_bits(&mut bitstream, pos, qc, st.bits);
                                pos += st.bits as usize;
                            }
                        }
                    }
                    bits_total = pos;
                    packed.segment_tracks.extend_from_slice(&sts);
                }
            }
            bitstream.resize(bits_total.div_ceil(8) + PAD, 0);
            packed.data = bitstream;
        }
        packed.shrink();
        let mut out = Clip::with_packed(
            base_clip,
            clip.name(),
            duration,
            clip.track_infos().to_vec(),
            clip.weights.clone(),
            packed,
        );

        // 4. The error as sampling sees it.
        let checks = if plan.is_empty() {
            let mut t = key_times.clone();
            t.push(0.0);
            t
        } else {
            all_checks
        };
        let measured = measure_error(clip, &out, skel, &checks, tol.distance)?;
        out.set_measured_error(measured);
        Ok(out)
    }
}

/// The model-space error of `compressed` against `original` (both sampled
/// looping, as the same clip) at each of `times`: per time, the largest
/// over joints of the distance between where the points `distance` along
/// each axis of the joint land under the one and under the other. Returns
/// the worst.
pub fn measure_error(
    original: &Clip,
    compressed: &Clip,
    skeleton: &Skeleton,
    times: &[f32],
    distance: f32,
) -> Result<f32, AnimError> {
    Ok(
        measure_errors(original, compressed, skeleton, times, distance)?
            .into_iter()
            .fold(0.0, f32::max),
    )
}

/// [`measure_error`] per time.
pub fn measure_errors(
    original: &Clip,
    compressed: &Clip,
    skeleton: &Skeleton,
    times: &[f32],
    distance: f32,
) -> Result<Vec<f32>, AnimError> {
    let n = skeleton.len();
    let (mut a, mut b) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let (mut ca, mut cb) = (
        SamplingContext::new(original),
        SamplingContext::new(compressed),
    );
    let mut out = Vec::with_capacity(times.len());
    for &t in times {
        for (clip, ctx, pose) in [(original, &mut ca, &mut a), (compressed, &mut cb, &mut b)] {
            SamplingJob {
                clip,
                context: ctx,
                time: t,
                mode: PlaybackMode::Loop,
                output: pose,
            }
            .run()?;
        }
        let (ma, mb) = (model(skeleton, &a), model(skeleton, &b));
        let e = (0..n)
            .map(|j| joint_error(&ma[j], &mb[j], distance))
            .fold(0.0, f32::max);
        out.push(e);
    }
    Ok(out)
}

/// Model matrices of a local pose.
fn model(skel: &Skeleton, local: &[Transform]) -> Vec<Affine3A> {
    let mut m: Vec<Affine3A> = Vec::with_capacity(local.len());
    for (j, l) in local.iter().enumerate() {
        let a = l.to_affine();
        let v = match skel.parent(j) {
            Some(p) => m[p] * a,
            None => a,
        };
        m.push(v);
    }
    m
}

/// The largest distance between the images of the points `d` along each
/// axis under `a` and under `b`.
fn joint_error(a: &Affine3A, b: &Affine3A, d: f32) -> f32 {
    [Vec3A::X, Vec3A::Y, Vec3A::Z]
        .iter()
        .map(|&axis| {
            let p = axis * d;
            (a.transform_point3a(p) - b.transform_point3a(p)).length()
        })
        .fold(0.0, f32::max)
}

/// Per joint, the tolerance distance plus the farthest descendant's
/// offset chain in the bind pose (the lever an error of this joint acts
/// on).
fn shell_distances(skel: &Skeleton, d: f32) -> Vec<f32> {
    let n = skel.len();
    let mut shell = vec![d; n];
    let bind = skel.bind_local();
    for j in (0..n).rev() {
        if let Some(p) = skel.parent(j) {
            let reach = bind[j].translation.length() * bind[p].scale.abs().max_element() + shell[j];
            shell[p] = shell[p].max(reach);
        }
    }
    shell
}

/// Samples the original clip.
struct Evaluator<'a> {
    clip: &'a Clip,
    skel: &'a Skeleton,
    ctx: SamplingContext,
    pose: Vec<Transform>,
}

impl Evaluator<'_> {
    fn sample(&mut self, t: f32, mode: PlaybackMode) -> Result<Vec<Transform>, AnimError> {
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
    fn max_error(
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
fn resample(
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
fn make_span(span: (f32, f32), samples: usize, first_segment: usize) -> Span {
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
const MIN_SPAN: f32 = 1e-4;

/// At most this many jumps are cut (the largest kept).
const MAX_JUMPS: usize = 256;

/// The scan for jumps: this many points a second.
const JUMP_SCAN_RATE: f32 = 3840.0;

/// The jumps of the curves: instants where the pose (its curve channels
/// alone, in model space, by the tolerance's metric) changes by more than
/// a quarter of the tolerance. A scan at [`JUMP_SCAN_RATE`] takes each
/// pair of neighbouring cells and compares the pose at their shared end
/// with the two outer poses interpolated half way (as sampling would):
/// a smooth curve, even a fast one or one with a kink, misses by a
/// fraction of the scan step; a jump by half its size. Bisection, by the
/// same measure, narrows each miss to neighbouring times `(l, r)`, kept
/// if the pose still changes there (a jump) rather than not (a kink).
/// Sorted, at least [`MIN_SPAN`] apart and from the clip's ends.
fn find_jumps(
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
        let size = change(&pl, &pr);
        if size > floor {
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

/// The lowest candidate sample count for `span` whose unquantized
/// samples, interpolated as sampling will, stay within half the
/// tolerance at its check times; if none does, the one that came
/// closest.
fn choose_rate(
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
    let mut found = None;
    let mut best = (f32::INFINITY, 2usize);
    // The error falls as the rate rises: a binary search.
    let (mut lo, mut hi) = (0usize, cands.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let cand = cands[mid];
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
        if err <= 0.5 * tol.error {
            found = Some(cand);
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(found.unwrap_or(best.1))
}

/// A channel as four floats: vectors with a 0, rotations normalised.
fn channel_value(t: &Transform, c: u8) -> Vec4 {
    match c {
        TRANSLATION => t.translation.extend(0.0),
        SCALE => t.scale.extend(0.0),
        _ => Vec4::from(t.rotation.normalize()),
    }
}

/// The component a rotation track leaves out over `samples` (the one
/// whose smallest magnitude is largest); 0 for vectors.
fn left_out(c: u8, samples: &[Vec4]) -> u8 {
    if c != ROTATION {
        return 0;
    }
    let mut best = (3u8, f32::NEG_INFINITY);
    for k in [3u8, 0, 1, 2] {
        let m = samples
            .iter()
            .map(|q| q[k as usize].abs())
            .fold(f32::INFINITY, f32::min);
        if m > best.1 {
            best = (k, m);
        }
    }
    best.0
}

/// The three stored components of a channel value.
fn stored(c: u8, v: Vec4, largest: u8) -> Vec3 {
    if c == ROTATION {
        stored_of(v, largest)
    } else {
        v.truncate()
    }
}

/// The channel value of three stored components.
fn unstored(c: u8, v: Vec3, largest: u8) -> Vec4 {
    if c == ROTATION {
        Vec4::from(place(Quat::from_vec4(quat_of(v)), largest))
    } else {
        v.extend(0.0)
    }
}

/// A channel as four floats (vectors with 0).
fn channel4(t: &Transform, c: u8) -> [f32; 4] {
    match c {
        TRANSLATION => t.translation.extend(0.0).to_array(),
        SCALE => t.scale.extend(0.0).to_array(),
        _ => t.rotation.to_array(),
    }
}

/// How far two values of a channel move a point `d` away.
fn channel_distance(c: u8, a: Vec4, b: Vec4, d: f32) -> f32 {
    match c {
        TRANSLATION => (a - b).length(),
        SCALE => (a - b).abs().max_element() * d,
        _ => {
            let dot = a.dot(b).abs().min(1.0);
            2.0 * dot.acos() * d
        }
    }
}

/// Puts unquantized samples of `curves` (interpolated as sampling does)
/// into `pose` at `t`; `seg_first` is each segment's first sample.
fn apply_f32(
    curves: &[Curve],
    spans: &[Span],
    seg_first: &[usize],
    duration: f32,
    t: f32,
    pose: &mut [Transform],
) {
    let (s, k, u) = locate_span(spans, PlaybackMode::Loop.wrap(t, duration));
    let g = seg_first[s] + k;
    for c in curves {
        let (a, b) = (c.samples[g], c.samples[g + 1]);
        set_channel(&mut pose[c.joint], c.channel, a, b, u);
    }
}

#[inline]
fn set_channel(t: &mut Transform, c: u8, a: Vec4, b: Vec4, u: f32) {
    match c {
        ROTATION => t.rotation = nlerp4(a, b, u),
        SCALE => t.scale = lerp3(a.truncate(), b.truncate(), u),
        _ => t.translation = lerp3(a.truncate(), b.truncate(), u),
    }
}

/// Sample counts to try, fewest first: the key grid's own (when every
/// curve key lies on one) and 10 to 3840 Hz.
fn candidates(duration: f32, keys: &[f32]) -> Vec<usize> {
    let mut c: Vec<usize> = [
        10.0f32, 15.0, 20.0, 24.0, 30.0, 40.0, 50.0, 60.0, 90.0, 120.0, 240.0, 480.0, 960.0,
        1920.0, 3840.0,
    ]
    .iter()
    .map(|r| ((duration * r).round() as usize).max(1) + 1)
    .collect();
    let gaps = keys.windows(2).map(|w| w[1] - w[0]).filter(|&g| g > 1e-5);
    if let Some(h) = gaps.fold(None, |m: Option<f32>, g| Some(m.map_or(g, |m| m.min(g)))) {
        let on_grid = |t: f32| ((t / h) - (t / h).round()).abs() < 1e-3;
        if keys.iter().all(|&t| on_grid(t)) && on_grid(duration) {
            let n = (duration / h).round() as usize + 1;
            if n <= 1 << 20 {
                c.push(n.max(2));
            }
        }
    }
    c.sort_unstable();
    c.dedup();
    c.retain(|&n| n <= 1 << 20);
    c
}

/// Every distinct key time of the clip's timelines, sorted.
fn key_times(clip: &Clip) -> Vec<f32> {
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
const CHECKS_PER_INTERVAL: usize = 8;

/// The times the error is checked at in a span ending at `end`: each
/// sample and the eighths of each interval, each key time and each key
/// interval's middle, all in the span and in `[0, duration)` (the end
/// wraps to the start when looping).
fn span_checks(sp: &Span, end: f32, duration: f32, keys: &[f32]) -> Vec<f32> {
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

/// Per component: minimum, extent.
fn clip_range(s: &[Vec3]) -> [f32; 6] {
    let lo = s.iter().fold(Vec3::splat(f32::INFINITY), |m, v| m.min(*v));
    let hi = s
        .iter()
        .fold(Vec3::splat(f32::NEG_INFINITY), |m, v| m.max(*v));
    let e = hi - lo;
    [lo.x, lo.y, lo.z, e.x, e.y, e.z]
}

/// The segment's range in 255ths of the clip's (bits left at 0).
fn segment_range(s: &[Vec3], r: &[f32; 6]) -> SegmentTrack {
    let mut st = SegmentTrack::default();
    for c in 0..3 {
        let (cmin, cext) = (r[c], r[3 + c]);
        if cext <= 0.0 {
            continue;
        }
        let lo = s.iter().map(|v| v[c]).fold(f32::INFINITY, f32::min);
        let hi = s.iter().map(|v| v[c]).fold(f32::NEG_INFINITY, f32::max);
        let a = (((lo - cmin) / cext) * 255.0).floor().clamp(0.0, 255.0);
        let b = (((hi - cmin) / cext) * 255.0).ceil().clamp(a, 255.0);
        st.min[c] = a as u8;
        st.extent[c] = (b - a) as u8;
    }
    st
}

/// Three quantized levels of one value in a segment's range.
fn quantize3(v: Vec3, st: &SegmentTrack, r: &[f32; 6]) -> [u32; 3] {
    let levels = ((1u64 << st.bits) - 1) as f64;
    std::array::from_fn(|c| {
        let (cmin, cext) = (r[c] as f64, r[3 + c] as f64);
        let (smin, sext) = (st.min[c] as f64 / 255.0, st.extent[c] as f64 / 255.0);
        if st.bits == 0 || cext <= 0.0 || sext <= 0.0 {
            return 0;
        }
        let n = (((v[c] as f64 - cmin) / cext - smin) / sext).clamp(0.0, 1.0);
        // The nearest level as dequantize reads it back (f32), checked
        // one level either side.
        let q0 = (n * levels).round() as i64;
        let mut best = (q0.clamp(0, levels as i64) as u32, f32::INFINITY);
        for q in [q0 - 1, q0, q0 + 1] {
            if q < 0 || q > levels as i64 {
                continue;
            }
            let d = dequantize(q as u32, st.bits, st.min[c], st.extent[c], r[c], r[3 + c]);
            let e = (d - v[c]).abs();
            if e < best.1 {
                best = (q as u32, e);
            }
        }
        best.0
    })
}

/// The value sampling will decode for `v`.
fn decoded(v: Vec3, st: &SegmentTrack, r: &[f32; 6]) -> Vec3 {
    let q = quantize3(v, st, r);
    Vec3::from_array(std::array::from_fn(|c| {
        dequantize(q[c], st.bits, st.min[c], st.extent[c], r[c], r[3 + c])
    }))
}

fn write_bits(data: &mut Vec<u8>, pos: usize, v: u32, bits: u8) {
    let end = (pos + bits as usize).div_ceil(8) + PAD;
    if data.len() < end {
        data.resize(end, 0);
    }
    for b in 0..bits as usize {
        if (v >> b) & 1 != 0 {
            let p = pos + b;
            data[p >> 3] |= 1 << (p & 7);
        }
    }
}

/// One segment's curves, as the bit-rate search sees them.
struct SegCtx<'a> {
    curves: &'a [Curve],
    /// Per track its stored values in the segment.
    values: &'a [Vec<Vec3>],
    ranges: &'a [[f32; 6]],
    spans: &'a [Span],
}

impl SegCtx<'_> {
    /// Track `i`'s decoded samples of the segment at `st`.
    fn decoded(&self, i: usize, st: &SegmentTrack) -> Vec<Vec4> {
        let c = self.curves[i].channel;
        self.values[i]
            .iter()
            .map(|&v| unstored(c, decoded(v, st, &self.ranges[i]), st.largest))
            .collect()
    }

    /// Interval (in the segment) and fraction at `t`.
    fn at(&self, t: f32) -> (usize, f32) {
        let (_, k, u) = locate_span(self.spans, t);
        (k, u)
    }
}

/// The share of the tolerance the bit-rate search aims at.
const SEARCH_MARGIN: f32 = 0.85;

/// The bit rates of one segment (see the module notes, step 3).
fn choose_bits(
    ev: &mut Evaluator,
    seg: &SegCtx,
    sts: &mut [SegmentTrack],
    checks: &[f32],
    shell: &[f32],
    tol: Tolerance,
    force: Option<u8>,
) -> Result<(), AnimError> {
    let nt = seg.curves.len();
    // Between the check times the error may rise a little past what
    // they saw: the search aims below the tolerance.
    let target = SEARCH_MARGIN * tol.error;
    if let Some(b) = force {
        for st in sts.iter_mut() {
            st.bits = b;
        }
        return Ok(());
    }
    let origs: Vec<Vec<Transform>> = checks
        .iter()
        .map(|&t| ev.sample(t, PlaybackMode::Loop))
        .collect::<Result<_, _>>()?;
    let at: Vec<(usize, f32)> = checks.iter().map(|&t| seg.at(t)).collect();
    // The track's error alone, at rate index `r`.
    let local_error = |i: usize, r: usize| -> f32 {
        let c = &seg.curves[i];
        let mut st = sts[i];
        st.bits = BIT_RATES[r];
        let dec = seg.decoded(i, &st);
        let d = shell[c.joint];
        let mut worst = 0.0f32;
        for (o, &(k, u)) in origs.iter().zip(&at) {
            let a = o[c.joint];
            let mut b = a;
            set_channel(&mut b, c.channel, dec[k], dec[k + 1], u);
            worst = worst.max(joint_error(&a.to_affine(), &b.to_affine(), d));
        }
        worst
    };
    let mut rate = vec![0usize; nt];
    let mut errs = vec![0.0f32; nt];
    for i in 0..nt {
        let mut r = 0;
        let mut e = local_error(i, r);
        while e > target && r + 1 < BIT_RATES.len() {
            r += 1;
            e = local_error(i, r);
        }
        rate[i] = r;
        errs[i] = e;
    }
    let parents: Vec<Option<usize>> = (0..ev.skel.len()).map(|j| ev.skel.parent(j)).collect();
    let mut tracks_of: Vec<Vec<usize>> = vec![Vec::new(); parents.len()];
    for (i, c) in seg.curves.iter().enumerate() {
        tracks_of[c.joint].push(i);
    }
    loop {
        let decs: Vec<Vec<Vec4>> = (0..nt)
            .map(|i| {
                let mut st = sts[i];
                st.bits = BIT_RATES[rate[i]];
                seg.decoded(i, &st)
            })
            .collect();
        let mut bad = vec![false; parents.len()];
        for (o, &(k, u)) in origs.iter().zip(&at) {
            let mut pose = o.clone();
            for (i, c) in seg.curves.iter().enumerate() {
                set_channel(&mut pose[c.joint], c.channel, decs[i][k], decs[i][k + 1], u);
            }
            let (ma, mb) = (model(ev.skel, o), model(ev.skel, &pose));
            for j in 0..ma.len() {
                if joint_error(&ma[j], &mb[j], tol.distance) > target {
                    bad[j] = true;
                }
            }
        }
        let mut bump = vec![false; nt];
        for j in (0..parents.len()).filter(|&j| bad[j]) {
            let mut best: Option<usize> = None;
            let mut at_j = Some(j);
            while let Some(x) = at_j {
                for &i in &tracks_of[x] {
                    if rate[i] + 1 < BIT_RATES.len() && best.is_none_or(|b| errs[i] > errs[b]) {
                        best = Some(i);
                    }
                }
                at_j = parents[x];
            }
            if let Some(i) = best {
                bump[i] = true;
            }
        }
        if !bump.contains(&true) {
            break;
        }
        for i in (0..nt).filter(|&i| bump[i]) {
            rate[i] += 1;
            errs[i] = local_error(i, rate[i]);
        }
    }
    for (st, r) in sts.iter_mut().zip(&rate) {
        st.bits = BIT_RATES[*r];
    }
    Ok(())
}

/// Each joint channel's kind, from the clip's layout.
fn classify(clip: &Clip, n: usize) -> Vec<[Kind; 3]> {
    let mut kinds: Vec<[Kind; 3]> = (0..n)
        .map(|_| [Kind::Rest, Kind::Rest, Kind::Rest])
        .collect();
    let tl = &clip.timelines;
    let times = |t: usize| -> Vec<f32> { (0..tl.key_count(t)).map(|k| tl.time(t, k)).collect() };
    let step = |i: Interpolation| matches!(i, Interpolation::Step | Interpolation::Nearest);
    for b in &clip.vec3_batches {
        let c = match b.field {
            Vec3Field::Translation => TRANSLATION,
            Vec3Field::Scale => SCALE,
        };
        let nt = b.joints.len();
        for (t, &j) in b.joints.iter().enumerate() {
            kinds[j as usize][c as usize] = if step(b.interpolation) {
                let values = (0..tl.key_count(b.timeline))
                    .map(|k| b.data[k * nt + t].extend(0.0).to_array())
                    .collect();
                Kind::Step(b.interpolation, times(b.timeline), values)
            } else {
                Kind::Curve
            };
        }
    }
    for b in &clip.quat_batches {
        let nt = b.joints.len();
        for (t, &j) in b.joints.iter().enumerate() {
            kinds[j as usize][ROTATION as usize] = if step(b.interpolation) {
                let values = (0..tl.key_count(b.timeline))
                    .map(|k| b.keys[k * nt + t].to_array())
                    .collect();
                Kind::Step(b.interpolation, times(b.timeline), values)
            } else {
                Kind::Curve
            };
        }
    }
    for (&j, f) in clip.solo_vec3.joints.iter().zip(&clip.solo_vec3.fields) {
        let c = match f {
            Vec3Field::Translation => TRANSLATION,
            Vec3Field::Scale => SCALE,
        };
        kinds[j as usize][c as usize] = Kind::Curve;
    }
    for &j in &clip.solo_quat.joints {
        kinds[j as usize][ROTATION as usize] = Kind::Curve;
    }
    for b in &clip.matrix_batches {
        let nt = b.joints.len();
        let interp = if b.interpolation == Interpolation::Step {
            Interpolation::Step
        } else {
            Interpolation::Nearest
        };
        for (t, &j) in b.joints.iter().enumerate() {
            for c in [TRANSLATION, ROTATION, SCALE] {
                let values = (0..tl.key_count(b.timeline))
                    .map(|k| channel4(&b.keys[k * nt + t], c))
                    .collect();
                kinds[j as usize][c as usize] = Kind::Step(interp, times(b.timeline), values);
            }
        }
    }
    kinds
}

/// Adds the base tracks to `raw` (one joint track per joint).
pub(crate) fn raw_add_base(
    raw: &mut RawClip,
    base: &[BaseTrack],
    times: &[f32],
    values: &[[f32; 4]],
) {
    for bt in base {
        let j = bt.joint as usize;
        let idx = match raw.tracks.iter().position(|t| t.joint == j) {
            Some(i) => i,
            None => {
                raw.tracks.push(RawJointTrack::new(j));
                raw.tracks.len() - 1
            }
        };
        let track = &mut raw.tracks[idx];
        let (a, k) = (bt.first as usize, bt.keys as usize);
        let ts = times[a..a + k].to_vec();
        let vs = &values[a..a + k];
        let interp =
            super::format::interpolation_of(bt.interpolation).unwrap_or(Interpolation::Step);
        match bt.channel {
            TRANSLATION => {
                track.translation = RawTrack::new(
                    interp,
                    ts,
                    vs.iter().map(|v| Vec3::new(v[0], v[1], v[2])).collect(),
                )
            }
            SCALE => {
                track.scale = RawTrack::new(
                    interp,
                    ts,
                    vs.iter().map(|v| Vec3::new(v[0], v[1], v[2])).collect(),
                )
            }
            _ => {
                track.rotation = RawTrack::new(
                    interp,
                    ts,
                    vs.iter().map(|v| Quat::from_array(*v)).collect(),
                )
            }
        }
    }
}
