//! The compressed clip's data and the arithmetic its encoder and decoder
//! share (so what the compression job measures is what sampling decodes).
//! Imports nothing of the clip or the sampler: both sides import it.

use glam::{Quat, Vec3, Vec4};

/// Intervals per segment: a segment holds `SEGMENT + 1` samples, its last
/// also the next segment's first, so a sample and the next always lie in
/// one segment.
pub(crate) const SEGMENT: usize = 16;

/// The bit rates a track may take in a segment, per component. 0 is a
/// track constant over the segment (its segment minimum).
pub(crate) const BIT_RATES: [u8; 20] = [
    0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 24,
];

// The largest rate: a component read never spans more than `24 + 7`
// bits, so one unaligned 32-bit read holds it.
const _: () = assert!(BIT_RATES[BIT_RATES.len() - 1] == 24);

/// The largest temporal stride, as a power of two: a track may keep
/// every `2^shift`-th sample of a segment (`2^MAX_SHIFT` = [`SEGMENT`]).
pub(crate) const MAX_SHIFT: u8 = 4;
const _: () = assert!(1 << MAX_SHIFT == SEGMENT);

/// `2^-shift` for every shift up to [`MAX_SHIFT`].
pub(crate) const INV_POW2: [f32; 5] = [1.0, 0.5, 0.25, 0.125, 0.0625];

/// Zero bytes after the bit stream, so a component read near its end may
/// load whole words.
pub(crate) const PAD: usize = 8;

/// Which channel of a joint a compressed track animates.
pub(crate) const TRANSLATION: u8 = 0;
pub(crate) const ROTATION: u8 = 1;
pub(crate) const SCALE: u8 = 2;

/// A tolerance: the largest distance, in model units, between where a
/// point `distance` away from a joint lands under the original clip and
/// under the compressed one, in model space (each joint's error includes
/// its ancestors'). Model units are metres for glTF files: 1 mm at 10 cm
/// is `Tolerance::new(0.001, 0.1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// The largest error allowed, model units.
    pub error: f32,
    /// How far from each joint the virtual vertices lie, model units.
    pub distance: f32,
}

impl Tolerance {
    /// ozz-animation's optimizer default: 1 mm at 10 cm.
    pub const OZZ_DEFAULT: Tolerance = Tolerance {
        error: 0.001,
        distance: 0.1,
    };
    /// The Animation Compression Library's default: 0.01 cm at 3 cm.
    pub const ACL_DEFAULT: Tolerance = Tolerance {
        error: 0.0001,
        distance: 0.03,
    };

    /// `error` at `distance`, both in model units.
    pub const fn new(error: f32, distance: f32) -> Self {
        Self { error, distance }
    }

    /// Parses `MM@CM` (millimetres at centimetres, as `inspect --tolerance`
    /// takes it: `1@10` is ozz's default) into model units taken as metres.
    pub fn parse_mm_at_cm(s: &str) -> Option<Self> {
        let (mm, cm) = s.split_once('@')?;
        let mm: f32 = mm.trim().parse().ok()?;
        let cm: f32 = cm.trim().parse().ok()?;
        let t = Self::new(mm / 1000.0, cm / 100.0);
        t.is_valid().then_some(t)
    }

    /// Both finite and positive.
    pub fn is_valid(&self) -> bool {
        self.error.is_finite()
            && self.error > 0.0
            && self.distance.is_finite()
            && self.distance > 0.0
    }
}

/// One animated channel kept as quantized samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PackedTrack {
    pub joint: u16,
    /// [`TRANSLATION`], [`ROTATION`] or [`SCALE`].
    pub channel: u8,
}

/// One track in one segment: its bit rate per component, its temporal
/// stride (`shift`: it keeps the segment's samples `0, 2^shift, ...`, the
/// segment's interval count a multiple of `2^shift`), its range
/// inside the clip's range, in 255ths (`min`, `extent`), and for a
/// rotation the component left out (`largest`: 0 to 3 for x, y, z, w;
/// the one whose smallest magnitude over the segment is largest, kept
/// non-negative and rebuilt from the other three, which are stored in
/// order). Rebuilding a component near zero loses precision (`sqrt` of a
/// difference of nearly equal numbers): always dropping `w` cost Fox's
/// centimetre-sized skeleton tens of times the tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SegmentTrack {
    pub bits: u8,
    pub min: [u8; 3],
    pub extent: [u8; 3],
    pub largest: u8,
    pub shift: u8,
}

/// A stretch of the clip sampled uniformly: clips whose curves jump (two
/// keys at one time, a SQUAD span whose outer slerp turns the other way)
/// are cut at each jump, a sample on each side, so no interval spans one.
/// Its segments follow the previous span's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Span {
    /// Clip time of its first sample.
    pub start: f32,
    /// Seconds between samples and its inverse.
    pub step: f32,
    pub inv_step: f32,
    /// Samples, at least two.
    pub samples: u32,
    /// Its first segment in [`CompressedClip::segments`].
    pub first_segment: u32,
}

impl Span {
    /// Segments of [`SEGMENT`] intervals it holds.
    pub fn segment_count(&self) -> usize {
        (self.samples as usize).saturating_sub(1).div_ceil(SEGMENT)
    }

    /// Intervals of its segment `q` ([`SEGMENT`] but for the last).
    pub fn segment_intervals(&self, q: usize) -> usize {
        ((self.samples as usize).saturating_sub(1) - q * SEGMENT).min(SEGMENT)
    }
}

/// One segment: where its samples start in the bit stream. Track by
/// track, each track's kept samples in order, `3 * bits` bits a sample
/// ([`samples_kept`] of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Byte offset of its first track's first sample in
    /// [`CompressedClip::data`].
    pub data_at: u32,
}

/// Samples a track keeps of a segment of `intervals` at stride `shift`.
#[inline(always)]
pub(crate) fn samples_kept(intervals: usize, shift: u8) -> usize {
    (intervals >> shift) + 1
}

/// A track's kept sample before interval `k` of its segment and the
/// fraction at `u` into that interval, at stride `shift`. The decoders
/// (scalar, AVX2 lanes) and the job all call this.
#[inline(always)]
pub(crate) fn stride_at(k: usize, u: f32, shift: u8) -> (usize, f32) {
    let mask = (1usize << shift) - 1;
    (
        k >> shift,
        ((k & mask) as f32 + u) * INV_POW2[shift as usize],
    )
}

/// A track of the base clip (step tracks with their keys, constants with
/// one): what the clip file stores of them, kept so it saves back the
/// same bytes it was loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BaseTrack {
    pub joint: u16,
    pub channel: u8,
    /// `Interpolation` as [`interpolation_code`] numbers it.
    pub interpolation: u8,
    /// Keys; the first at `first` in the time list and at `first * 4`
    /// in the values (four floats a key, the fourth 0 for vectors).
    pub keys: u32,
    pub first: u32,
}

/// The part of a compressed clip that is sampled from quantized samples:
/// uniform samples of the original clip's curves (whatever their
/// interpolation), cut in segments of [`SEGMENT`] intervals; per track a
/// range over the clip, per track and segment a range inside it (8 bits a
/// bound) and a bit rate; rotations as `x, y, z` with `w >= 0` implied.
/// Constant and bind-pose channels and step tracks are in the clip's base
/// layout (see [`crate::anim::CompressionJob`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedClip {
    /// The uniformly sampled stretches, by start time (the first at 0;
    /// none without tracks).
    pub(crate) spans: Vec<Span>,
    pub(crate) tracks: Vec<PackedTrack>,
    /// Per track: clip minimum `x, y, z`, then extent `x, y, z`.
    pub(crate) ranges: Vec<[f32; 6]>,
    pub(crate) segments: Vec<Segment>,
    /// Segment `s`, track `i` at `s * tracks + i`.
    pub(crate) segment_tracks: Vec<SegmentTrack>,
    /// The bit stream, then [`PAD`] zero bytes.
    pub(crate) data: Vec<u8>,
    pub(crate) base: Vec<BaseTrack>,
    pub(crate) base_times: Vec<f32>,
    pub(crate) base_values: Vec<[f32; 4]>,
    /// The tolerance asked for and the worst error measured once built.
    pub(crate) tolerance: Tolerance,
    pub(crate) measured_error: f32,
}

impl CompressedClip {
    /// Samples per second of the animated tracks: the highest of its
    /// spans' (0 without any).
    pub fn sample_rate(&self) -> f32 {
        self.spans.iter().map(|s| s.inv_step).fold(0.0, f32::max)
    }

    /// Number of samples per animated track, over every span.
    pub fn sample_count(&self) -> usize {
        self.spans.iter().map(|s| s.samples as usize).sum()
    }

    /// Number of uniformly sampled spans (one more than the jumps cut).
    pub fn span_count(&self) -> usize {
        self.spans.len()
    }

    /// Number of segments.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Channels kept as quantized samples.
    pub fn animated_track_count(&self) -> usize {
        self.tracks.len()
    }

    /// Channels kept as step keys (constants are in the clip's rest pose).
    pub fn base_track_count(&self) -> usize {
        self.base.len()
    }

    /// The tolerance the clip was compressed to.
    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// The worst error measured by the compression job (the tolerance's
    /// metric, at every sample, key time and quarter interval).
    pub fn measured_error(&self) -> f32 {
        self.measured_error
    }

    /// The mean bit rate per component over tracks and segments.
    pub fn mean_bits(&self) -> f32 {
        if self.segment_tracks.is_empty() {
            return 0.0;
        }
        let sum: u32 = self.segment_tracks.iter().map(|t| u32::from(t.bits)).sum();
        sum as f32 / self.segment_tracks.len() as f32
    }

    /// Where the compressed part's bytes go, by what they hold (buffers by
    /// capacity, as [`held`](Self::held) counts them).
    pub fn bytes_by_part(&self) -> CompressedBytes {
        fn b<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        CompressedBytes {
            headers: b(&self.spans) + b(&self.tracks) + b(&self.segments),
            clip_ranges: b(&self.ranges),
            segment_ranges: b(&self.segment_tracks),
            samples: b(&self.data),
            base: b(&self.base) + b(&self.base_times) + b(&self.base_values),
        }
    }

    /// The compressed part's struct and each of its buffers (by
    /// capacity), named.
    pub(crate) fn parts(&self) -> Vec<(&'static str, usize)> {
        fn b<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        vec![
            ("CompressedClip struct", std::mem::size_of::<Self>()),
            ("spans", b(&self.spans)),
            ("track ids", b(&self.tracks)),
            ("clip ranges", b(&self.ranges)),
            ("segment table", b(&self.segments)),
            ("segment ranges and rates", b(&self.segment_tracks)),
            ("bit stream", b(&self.data)),
            ("base track list", b(&self.base)),
            ("base times", b(&self.base_times)),
            ("base values", b(&self.base_values)),
        ]
    }

    /// Bytes the compressed part holds (buffers by capacity).
    pub(crate) fn held(&self) -> usize {
        fn b<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        b(&self.spans)
            + b(&self.tracks)
            + b(&self.ranges)
            + b(&self.segments)
            + b(&self.segment_tracks)
            + b(&self.data)
            + b(&self.base)
            + b(&self.base_times)
            + b(&self.base_values)
    }

    pub(crate) fn shrink(&mut self) {
        self.spans.shrink_to_fit();
        self.tracks.shrink_to_fit();
        self.ranges.shrink_to_fit();
        self.segments.shrink_to_fit();
        self.segment_tracks.shrink_to_fit();
        self.data.shrink_to_fit();
        self.base.shrink_to_fit();
        self.base_times.shrink_to_fit();
        self.base_values.shrink_to_fit();
    }
}

/// [`CompressedClip::bytes_by_part`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompressedBytes {
    /// Spans, track list and segment offsets.
    pub headers: usize,
    /// Per track its range over the clip (six f32).
    pub clip_ranges: usize,
    /// Per track and segment its range, bit rate and stride (9 bytes).
    pub segment_ranges: usize,
    /// The bit stream of quantized samples (and its padding).
    pub samples: usize,
    /// Constants and step tracks: their descriptors, times and values.
    pub base: usize,
}

/// `1 / (2^bits - 1)` for every bit count up to [`MAX_BITS`] (0 for 0).
pub(crate) const INV_LEVELS: [f32; 25] = {
    let mut t = [0.0f32; 25];
    let mut b = 1;
    while b < 25 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// 1/255: segment ranges are in 255ths of the clip's.
pub(crate) const INV_255: f32 = 1.0 / 255.0;

/// A component's value from its quantized integer: the clip range
/// `(cmin, cext)`, the segment range in 255ths `(smin, sext)`, the
/// level `q` of `2^bits - 1`. Sampling and the compression job both call
/// this (the AVX2 decoder does the same operations in the same order).
#[inline(always)]
pub(crate) fn dequantize(q: u32, bits: u8, smin: u8, sext: u8, cmin: f32, cext: f32) -> f32 {
    let n = q as f32 * INV_LEVELS[bits as usize];
    let v01 = smin as f32 * INV_255 + (sext as f32 * INV_255) * n;
    cmin + cext * v01
}

/// The quaternion whose components other than `largest` are `q.x, q.y,
/// q.z` in order and whose `largest` is `q.w` (the rebuilt one).
#[inline(always)]
pub(crate) fn place(q: Quat, largest: u8) -> Quat {
    match largest {
        0 => Quat::from_xyzw(q.w, q.x, q.y, q.z),
        1 => Quat::from_xyzw(q.x, q.w, q.y, q.z),
        2 => Quat::from_xyzw(q.x, q.y, q.w, q.z),
        _ => q,
    }
}

/// The three stored components of `q` with `largest` left out (its sign
/// made non-negative first).
#[inline(always)]
pub(crate) fn stored_of(q: Vec4, largest: u8) -> Vec3 {
    let q = if q[largest as usize & 3] < 0.0 { -q } else { q };
    match largest {
        0 => Vec3::new(q.y, q.z, q.w),
        1 => Vec3::new(q.x, q.z, q.w),
        2 => Vec3::new(q.x, q.y, q.w),
        _ => Vec3::new(q.x, q.y, q.z),
    }
}

/// Three stored components and the fourth rebuilt (`>= 0`) as `w`; see
/// [`place`] for where it goes.
#[inline(always)]
pub(crate) fn quat_of(v: Vec3) -> Vec4 {
    let w2 = 1.0 - (v.x * v.x + v.y * v.y + v.z * v.z);
    Vec4::new(v.x, v.y, v.z, w2.max(0.0).sqrt())
}

/// Normalised lerp of two decoded samples, the short way.
#[inline(always)]
pub(crate) fn nlerp4(a: Vec4, b: Vec4, u: f32) -> Quat {
    let d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    let b = if d < 0.0 { -b } else { b };
    let r = a * (1.0 - u) + b * u;
    let len2 = r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w;
    let inv = 1.0 / len2.sqrt();
    Quat::from_vec4(r * inv)
}

/// `a (1 - u) + b u`.
#[inline(always)]
pub(crate) fn lerp3(a: Vec3, b: Vec3, u: f32) -> Vec3 {
    a * (1.0 - u) + b * u
}

/// Sample interval `k` (`0..samples - 1`) and fraction at clip time `t`.
#[inline(always)]
pub(crate) fn locate(samples: u32, inv_step: f32, t: f32) -> (usize, f32) {
    let x = (t * inv_step).max(0.0);
    let k = (x as u32).min(samples - 2);
    let u = (x - k as f32).clamp(0.0, 1.0);
    (k as usize, u)
}

/// The segment, the sample in it and the fraction at clip time `t`: the
/// last span starting at or before `t` (the first for earlier times),
/// then [`locate`] in it. `spans` is not empty.
#[inline(always)]
pub(crate) fn locate_span(spans: &[Span], t: f32) -> (usize, usize, f32) {
    // The spans are few (one per jump): a binary search without branches
    // on the data would gain nothing over this.
    let mut i = 0;
    while i + 1 < spans.len() && spans[i + 1].start <= t {
        i += 1;
    }
    let sp = &spans[i];
    let (k, u) = locate(sp.samples, sp.inv_step, t - sp.start);
    (sp.first_segment as usize + k / SEGMENT, k % SEGMENT, u)
}

/// Reads `bits` bits at bit `pos` of `data` (LSB first).
#[inline(always)]
pub(crate) fn read_bits(data: &[u8], pos: usize, bits: u8) -> u32 {
    let at = pos >> 3;
    let w = u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    (w >> (pos & 7)) & ((1u32 << bits) - 1)
}

/// [`locate_span`] and the number of intervals of the segment found.
#[inline(always)]
pub(crate) fn locate_segment(spans: &[Span], t: f32) -> (usize, usize, f32, usize) {
    let mut i = 0;
    while i + 1 < spans.len() && spans[i + 1].start <= t {
        i += 1;
    }
    let sp = &spans[i];
    let (k, u) = locate(sp.samples, sp.inv_step, t - sp.start);
    let q = k / SEGMENT;
    (
        sp.first_segment as usize + q,
        k % SEGMENT,
        u,
        sp.segment_intervals(q),
    )
}

/// Stable numbers for [`crate::anim::Interpolation`] in the base tracks.
pub(crate) fn interpolation_code(i: crate::anim::Interpolation) -> u8 {
    use crate::anim::Interpolation as I;
    match i {
        I::Step => 0,
        I::Linear => 1,
        I::Nearest => 2,
        I::Squad => 3,
        I::CubicSpline => 4,
    }
}

/// The inverse of [`interpolation_code`].
pub(crate) fn interpolation_of(code: u8) -> Option<crate::anim::Interpolation> {
    use crate::anim::Interpolation as I;
    Some(match code {
        0 => I::Step,
        1 => I::Linear,
        2 => I::Nearest,
        3 => I::Squad,
        4 => I::CubicSpline,
        _ => return None,
    })
}
