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

use glam::{Quat, Vec3, Vec4};

use super::format::{
    dequantize, interpolation_code, locate_span, samples_kept, stride_at, BaseTrack,
    CompressedClip, PackedTrack, Segment, SegmentTrack, Span, Tolerance, BIT_RATES, MAX_SHIFT, PAD,
    ROTATION, SCALE, SEGMENT, TRANSLATION,
};
use crate::anim::pose::clip::Vec3Field;
use crate::anim::{
    AnimError, Clip, Interpolation, PlaybackMode, RawClip, RawJointTrack, RawTrack,
    SamplingContext, Skeleton, Transform,
};

use super::channels::*;
use super::metric::*;
use super::spans::*;

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
                plan.extend(plan_span(
                    &mut ev,
                    &curve_ids,
                    (a, b),
                    duration,
                    &key_times,
                    tol,
                )?);
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
        // Constants live in the base clip's rest pose alone (the clip file
        // writes them from there): only step tracks are kept as keys.
        let (base, base_times, base_values) = step_tracks_only(&base, &base_times, &base_values);

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
            // Each check time in its segment's list, in `all_checks`' order
            // (one pass: filtering every time per segment was quadratic).
            let mut seg_checks: Vec<Vec<f32>> = vec![Vec::new(); seg_first.len()];
            for &t in &all_checks {
                if let Some(v) = seg_checks.get_mut(locate_span(&spans, t).0) {
                    v.push(t);
                }
            }
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
                    let checks = std::mem::take(&mut seg_checks[s]);
                    let seg = SegCtx {
                        curves: &curves,
                        values: &values,
                        ranges: &packed.ranges,
                        spans: &spans,
                    };
                    choose_bits(&mut ev, &seg, &mut sts, &checks, &shell, tol, force_bits)?;
                    // Pack: byte-aligned segment, each track's kept samples
                    // in order, track after track.
                    let data_at = bits_total.div_ceil(8);
                    packed.segments.push(Segment {
                        data_at: data_at as u32,
                    });
                    let mut pos = data_at * 8;
                    let n = last - first;
                    for ((st, v), r) in sts.iter().zip(&values).zip(&packed.ranges) {
                        for m in 0..samples_kept(n, st.shift) {
                            let q = quantize3(v[m << st.shift], st, r);
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
            Vec::new(),
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
    /// Track `i`'s decoded kept samples of the segment at `st` (every
    /// `2^st.shift`-th).
    fn decoded(&self, i: usize, st: &SegmentTrack) -> Vec<Vec4> {
        let c = self.curves[i].channel;
        self.values[i]
            .iter()
            .step_by(1 << st.shift)
            .map(|&v| unstored(c, decoded(v, st, &self.ranges[i]), st.largest))
            .collect()
    }

    /// Intervals in the segment.
    fn intervals(&self) -> usize {
        self.values.first().map_or(0, |v| v.len() - 1)
    }

    /// Interval (in the segment) and fraction at `t`.
    fn at(&self, t: f32) -> (usize, f32) {
        let (_, k, u) = locate_span(self.spans, t);
        (k, u)
    }
}

/// Track `c`'s channel in `t` set from its decoded kept samples `dec`
/// at interval `k`, fraction `u` of the segment, stride `shift`.
fn set_strided(t: &mut Transform, c: u8, dec: &[Vec4], k: usize, u: f32, shift: u8) {
    let (m, u) = stride_at(k, u, shift);
    set_channel(t, c, dec[m], dec[m + 1], u);
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
    // The track's error alone, at rate index `r` and stride `sh`.
    let local_error = |i: usize, r: usize, sh: u8| -> f32 {
        let c = &seg.curves[i];
        let mut st = sts[i];
        st.bits = BIT_RATES[r];
        st.shift = sh;
        let dec = seg.decoded(i, &st);
        let d = shell[c.joint];
        let mut worst = 0.0f32;
        for (o, &(k, u)) in origs.iter().zip(&at) {
            let a = o[c.joint];
            let mut b = a;
            set_strided(&mut b, c.channel, &dec, k, u, sh);
            worst = worst.max(joint_error(&a.to_affine(), &b.to_affine(), d));
        }
        worst
    };
    // Per track the stride and rate whose kept samples cost the fewest
    // bits with the track's error alone within the target: a stride
    // whose samples miss at the highest rate is not tried further.
    let n = seg.intervals();
    let top = BIT_RATES.len() - 1;
    let mut rate = vec![0usize; nt];
    let mut shift = vec![0u8; nt];
    let mut errs = vec![0.0f32; nt];
    for i in 0..nt {
        let mut best: Option<(usize, usize, u8, f32)> = None;
        for sh in (0..=MAX_SHIFT)
            .rev()
            .filter(|&sh| n.is_multiple_of(1 << sh))
        {
            if sh > 0 && local_error(i, top, sh) > target {
                continue;
            }
            let mut r = 0;
            let mut e = local_error(i, r, sh);
            while e > target && r < top {
                r += 1;
                e = local_error(i, r, sh);
            }
            if e > target && sh > 0 {
                continue;
            }
            let cost = usize::from(BIT_RATES[r]) * samples_kept(n, sh);
            if best.is_none_or(|b| cost < b.0 || (cost == b.0 && sh < b.2)) {
                best = Some((cost, r, sh, e));
            }
        }
        if let Some((_, r, sh, e)) = best {
            rate[i] = r;
            shift[i] = sh;
            errs[i] = e;
        }
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
                st.shift = shift[i];
                seg.decoded(i, &st)
            })
            .collect();
        let mut bad = vec![false; parents.len()];
        for (o, &(k, u)) in origs.iter().zip(&at) {
            let mut pose = o.clone();
            for (i, c) in seg.curves.iter().enumerate() {
                set_strided(&mut pose[c.joint], c.channel, &decs[i], k, u, shift[i]);
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
                    let can = rate[i] < top || shift[i] > 0;
                    if can && best.is_none_or(|b| errs[i] > errs[b]) {
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
        // A rate up where that lowers the track's error by a quarter or
        // more (its quantization dominates), else a stride down.
        for i in (0..nt).filter(|&i| bump[i]) {
            let up = (rate[i] < top).then(|| local_error(i, rate[i] + 1, shift[i]));
            match up {
                Some(e) if shift[i] == 0 || e <= 0.75 * errs[i] => {
                    rate[i] += 1;
                    errs[i] = e;
                }
                _ => {
                    shift[i] -= 1;
                    errs[i] = local_error(i, rate[i], shift[i]);
                }
            }
        }
    }
    for ((st, r), sh) in sts.iter_mut().zip(&rate).zip(&shift) {
        st.bits = BIT_RATES[*r];
        st.shift = *sh;
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

/// The base tracks that are not constants (a constant is one key of a
/// Linear track), renumbered into their own times and values.
pub(crate) fn step_tracks_only(
    base: &[BaseTrack],
    times: &[f32],
    values: &[[f32; 4]],
) -> (Vec<BaseTrack>, Vec<f32>, Vec<[f32; 4]>) {
    let (mut b, mut t, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for bt in base.iter().filter(|bt| !is_constant(bt)) {
        let (a, k) = (bt.first as usize, bt.keys as usize);
        b.push(BaseTrack {
            first: t.len() as u32,
            ..*bt
        });
        t.extend_from_slice(&times[a..a + k]);
        v.extend_from_slice(&values[a..a + k]);
    }
    (b, t, v)
}

/// A constant base track: one key, Linear.
pub(crate) fn is_constant(bt: &BaseTrack) -> bool {
    bt.keys == 1 && bt.interpolation == interpolation_code(Interpolation::Linear)
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
