//! The clip file: a skeleton and compressed clips, so tools compress once.
//!
//! Layout (little-endian throughout):
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `VKSCLIP\0` |
//! | 4 | version ([`ClipFile::VERSION`]) |
//! | 8 | body length in bytes |
//! | 8 | FNV-1a 64 checksum of the body |
//! | body | skeleton, then clips |
//!
//! Skeleton: joint count (u32); per joint its name (u32 length, UTF-8),
//! parent (u16, `0xffff` for a root, always below the joint), bind
//! translation, rotation, scale (10 f32) and inverse bind matrix (12 f32).
//! Clip count (u32); per clip: name, duration, the spans (count; per
//! span its start f32, seconds per sample f32, sample count u32),
//! tolerance (2 f32), measured error f32, the quantized tracks (count;
//! joint u16, channel u8, six range f32), segments (count; data offset
//! u32), segment tracks (segments x tracks; bit rate in the low 5 bits
//! and a rotation's left-out component in the next 2, 3 minima, 3
//! extents, the stride's shift: u8), the bit stream (u32 length, bytes), the
//! constants (count; joint u16, channel u8, 4 f32 for a rotation, else
//! 3: the channels no other track drives whose value is not the bind
//! pose's), the step tracks (count; joint u16, channel u8, interpolation
//! u8, keys u32, first u32), their times
//! (count, f32) and values (count, 4 f32). Every count is checked against
//! the bytes left before anything is allocated, every index against what
//! it indexes, and the decoded layout against what sampling reads.

use std::path::{Path, PathBuf};

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};

use super::channels::channel4;
use super::format::{
    interpolation_code, interpolation_of, samples_kept, BaseTrack, CompressedClip, PackedTrack,
    Segment, SegmentTrack, Span, Tolerance, BIT_RATES, MAX_SHIFT, PAD, ROTATION, SCALE, SEGMENT,
    TRANSLATION,
};
use super::job::{is_constant, raw_add_base};
use crate::anim::{Clip, Interpolation, RawClip, Skeleton, Transform};

/// What is wrong with a clip file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClipFileFault {
    /// It could not be read or written.
    Io,
    /// It does not start with the clip file's magic.
    Magic,
    /// A version this build does not read.
    Version,
    /// It ends before what it announces.
    Truncated,
    /// The body's checksum does not match (the file is corrupt).
    Checksum,
    /// A count larger than the bytes left could hold.
    Count,
    /// A value or index that does not fit (a bad joint, bit rate, range).
    Invalid,
}

/// A clip file's fault: the file, the byte offset and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("clip file {}: at byte {at}: {message}", file.display())]
pub struct ClipFileError {
    /// The file (or the name given to [`ClipFile::from_bytes`]).
    pub file: PathBuf,
    /// Byte offset of the fault.
    pub at: u64,
    /// What kind of fault.
    pub fault: ClipFileFault,
    /// What is wrong, in words.
    pub message: String,
}

/// A skeleton and its compressed clips, as a clip file holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipFile {
    /// The skeleton the clips animate.
    pub skeleton: Skeleton,
    /// Compressed clips ([`crate::anim::CompressionJob`]'s output).
    pub clips: Vec<Clip>,
}

const MAGIC: [u8; 8] = *b"VKSCLIP\0";
const HEADER: usize = 28;

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl ClipFile {
    /// The version this build writes and reads.
    pub const VERSION: u32 = 3;
    /// The extension the loaders know it by.
    pub const EXTENSION: &'static str = "vkclip";

    /// The file's bytes. Every clip must be compressed, match the
    /// skeleton's joint count and have no morph-weight tracks (version 1
    /// holds none).
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let mut w = Vec::new();
        let s = &self.skeleton;
        put_u32(&mut w, s.len() as u32);
        for j in 0..s.len() {
            put_str(&mut w, &s.names()[j]);
            put_u16(&mut w, s.parent(j).map_or(u16::MAX, |p| p as u16));
            let b = s.bind_local()[j];
            put_f32s(&mut w, &b.translation.to_array());
            put_f32s(&mut w, &b.rotation.to_array());
            put_f32s(&mut w, &b.scale.to_array());
            let m = s.inverse_bind()[j];
            put_f32s(&mut w, &m.matrix3.to_cols_array());
            put_f32s(&mut w, &m.translation.to_array());
        }
        put_u32(&mut w, self.clips.len() as u32);
        for clip in &self.clips {
            let Some(p) = clip.compressed() else {
                return Err(format!("clip {:?} is not compressed", clip.name()));
            };
            if clip.joint_count() != s.len() {
                return Err(format!(
                    "clip {:?} drives {} joints, the skeleton has {}",
                    clip.name(),
                    clip.joint_count(),
                    s.len()
                ));
            }
            if clip.weight_count() > 0 {
                return Err(format!(
                    "clip {:?} has morph-weight tracks, which clip file version 2 does not hold",
                    clip.name()
                ));
            }
            put_str(&mut w, clip.name());
            put_f32(&mut w, clip.duration());
            put_u32(&mut w, p.spans.len() as u32);
            for sp in &p.spans {
                put_f32(&mut w, sp.start);
                put_f32(&mut w, sp.step);
                put_u32(&mut w, sp.samples);
            }
            put_f32(&mut w, p.tolerance.error);
            put_f32(&mut w, p.tolerance.distance);
            put_f32(&mut w, p.measured_error);
            put_u32(&mut w, p.tracks.len() as u32);
            for (t, r) in p.tracks.iter().zip(&p.ranges) {
                put_u16(&mut w, t.joint);
                w.push(t.channel);
                put_f32s(&mut w, r);
            }
            put_u32(&mut w, p.segments.len() as u32);
            for s in &p.segments {
                put_u32(&mut w, s.data_at);
            }
            for st in &p.segment_tracks {
                w.push(st.bits | st.largest << 5);
                w.extend_from_slice(&st.min);
                w.extend_from_slice(&st.extent);
                w.push(st.shift);
            }
            let data = &p.data[..p.data.len().saturating_sub(PAD)];
            put_u32(&mut w, data.len() as u32);
            w.extend_from_slice(data);
            // Constants: every channel neither quantized nor a step track
            // whose rest value is not the bind pose's.
            let consts = constants(clip, p, s);
            put_u32(&mut w, consts.len() as u32);
            for (j, c, v) in &consts {
                put_u16(&mut w, *j as u16);
                w.push(*c);
                let n = if *c == ROTATION { 4 } else { 3 };
                put_f32s(&mut w, &v[..n]);
            }
            put_u32(&mut w, p.base.len() as u32);
            for b in &p.base {
                put_u16(&mut w, b.joint);
                w.push(b.channel);
                w.push(b.interpolation);
                put_u32(&mut w, b.keys);
                put_u32(&mut w, b.first);
            }
            put_u32(&mut w, p.base_times.len() as u32);
            put_f32s(&mut w, &p.base_times);
            put_u32(&mut w, p.base_values.len() as u32);
            for v in &p.base_values {
                put_f32s(&mut w, v);
            }
        }
        let mut out = Vec::with_capacity(HEADER + w.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&Self::VERSION.to_le_bytes());
        out.extend_from_slice(&(w.len() as u64).to_le_bytes());
        out.extend_from_slice(&fnv1a(&w).to_le_bytes());
        out.extend_from_slice(&w);
        Ok(out)
    }

    /// Writes the file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ClipFileError> {
        let path = path.as_ref();
        let err = |fault, message: String| ClipFileError {
            file: path.to_path_buf(),
            at: 0,
            fault,
            message,
        };
        let bytes = self
            .to_bytes()
            .map_err(|m| err(ClipFileFault::Invalid, m))?;
        std::fs::write(path, bytes).map_err(|e| err(ClipFileFault::Io, e.to_string()))
    }

    /// Reads the file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ClipFileError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| ClipFileError {
            file: path.to_path_buf(),
            at: 0,
            fault: ClipFileFault::Io,
            message: e.to_string(),
        })?;
        Self::from_bytes(path, &bytes)
    }

    /// Parses a file's bytes; `file` names it in errors.
    pub fn from_bytes(file: impl AsRef<Path>, bytes: &[u8]) -> Result<Self, ClipFileError> {
        let file = file.as_ref();
        let fail = |at: usize, fault, message: String| ClipFileError {
            file: file.to_path_buf(),
            at: at as u64,
            fault,
            message,
        };
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            return Err(fail(
                0,
                ClipFileFault::Magic,
                "not a clip file (no VKSCLIP magic)".into(),
            ));
        }
        if bytes.len() < HEADER {
            return Err(fail(
                bytes.len(),
                ClipFileFault::Truncated,
                "the header is cut short".into(),
            ));
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != Self::VERSION {
            return Err(fail(
                8,
                ClipFileFault::Version,
                format!(
                    "version {version}, this build reads version {}",
                    Self::VERSION
                ),
            ));
        }
        let len = word(12);
        let body = &bytes[HEADER..];
        if len != body.len() as u64 {
            let fault = if len > body.len() as u64 {
                ClipFileFault::Truncated
            } else {
                ClipFileFault::Invalid
            };
            return Err(fail(
                12,
                fault,
                format!(
                    "the header announces {len} body bytes, the file has {}",
                    body.len()
                ),
            ));
        }
        if fnv1a(body) != word(20) {
            return Err(fail(
                20,
                ClipFileFault::Checksum,
                "the body's checksum does not match (corrupt file)".into(),
            ));
        }
        let mut r = Reader { bytes: body, at: 0 };
        let rebase = |e: ReadError| fail(HEADER + e.at, e.fault, e.message);
        let skeleton = read_skeleton(&mut r).map_err(rebase)?;
        let count = r.count(16).map_err(rebase)?;
        let mut clips = Vec::with_capacity(count);
        for _ in 0..count {
            clips.push(read_clip(&mut r, &skeleton).map_err(rebase)?);
        }
        if r.at != body.len() {
            return Err(fail(
                HEADER + r.at,
                ClipFileFault::Invalid,
                "bytes after the last clip".into(),
            ));
        }
        Ok(Self { skeleton, clips })
    }
}

/// The constant channels of a compressed clip: joint, channel, value
/// (the rest pose's, where it differs from the bind pose's and neither
/// a quantized track nor a step track drives the channel).
fn constants(clip: &Clip, p: &CompressedClip, s: &Skeleton) -> Vec<(usize, u8, [f32; 4])> {
    let bind = s.bind_local();
    let mut out = Vec::new();
    for (j, (rest, bind)) in clip.rest.iter().zip(bind).enumerate() {
        for c in [TRANSLATION, ROTATION, SCALE] {
            let driven = |t: (u16, u8)| t == (j as u16, c);
            if p.tracks.iter().any(|t| driven((t.joint, t.channel)))
                || p.base.iter().any(|t| driven((t.joint, t.channel)))
            {
                continue;
            }
            let v = channel4(rest, c);
            if v != channel4(bind, c) {
                out.push((j, c, v));
            }
        }
    }
    out
}

fn put_u16(w: &mut Vec<u8>, v: u16) {
    w.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(w: &mut Vec<u8>, v: u32) {
    w.extend_from_slice(&v.to_le_bytes());
}
fn put_f32(w: &mut Vec<u8>, v: f32) {
    w.extend_from_slice(&v.to_le_bytes());
}
fn put_f32s(w: &mut Vec<u8>, v: &[f32]) {
    for &x in v {
        put_f32(w, x);
    }
}
fn put_str(w: &mut Vec<u8>, s: &str) {
    put_u32(w, s.len() as u32);
    w.extend_from_slice(s.as_bytes());
}

struct ReadError {
    at: usize,
    fault: ClipFileFault,
    message: String,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn err<T>(&self, fault: ClipFileFault, message: impl Into<String>) -> Result<T, ReadError> {
        Err(ReadError {
            at: self.at,
            fault,
            message: message.into(),
        })
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ReadError> {
        if self.bytes.len() - self.at < n {
            return self.err(
                ClipFileFault::Truncated,
                format!("the file ends inside {what}"),
            );
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, ReadError> {
        Ok(self.take(1, "a byte")?[0])
    }

    fn u16(&mut self) -> Result<u16, ReadError> {
        let b = self.take(2, "a number")?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, ReadError> {
        let b = self.take(4, "a number")?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A finite f32.
    fn f32(&mut self) -> Result<f32, ReadError> {
        let v = f32::from_bits(self.u32()?);
        if !v.is_finite() {
            self.at -= 4;
            return self.err(ClipFileFault::Invalid, format!("non-finite number {v}"));
        }
        Ok(v)
    }

    fn f32s<const N: usize>(&mut self) -> Result<[f32; N], ReadError> {
        let mut a = [0.0; N];
        for v in &mut a {
            *v = self.f32()?;
        }
        Ok(a)
    }

    /// A count of items at least `min_size` bytes each, checked against
    /// the bytes left.
    fn count(&mut self, min_size: usize) -> Result<usize, ReadError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_size.max(1)) > self.bytes.len() - self.at {
            self.at -= 4;
            return self.err(
                ClipFileFault::Count,
                format!(
                    "a count of {n} is more than the {} bytes left could hold",
                    self.bytes.len() - self.at - 4
                ),
            );
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, ReadError> {
        let n = self.count(1)?;
        let b = self.take(n, "a name")?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => {
                self.at -= n;
                self.err(ClipFileFault::Invalid, "a name that is not UTF-8")
            }
        }
    }
}

fn read_skeleton(r: &mut Reader) -> Result<Skeleton, ReadError> {
    let n = r.count(4 + 2 + 88)?;
    if n > crate::anim::MAX_JOINTS {
        return r.err(
            ClipFileFault::Invalid,
            format!("{n} joints, more than {}", crate::anim::MAX_JOINTS),
        );
    }
    let (mut names, mut parents, mut bind, mut inverse) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for j in 0..n {
        names.push(r.string()?);
        let p = r.u16()?;
        if p != u16::MAX && p as usize >= j {
            r.at -= 2;
            return r.err(
                ClipFileFault::Invalid,
                format!("joint {j} has parent {p}, not an earlier joint"),
            );
        }
        parents.push((p != u16::MAX).then_some(p as usize));
        let [tx, ty, tz, rx, ry, rz, rw, sx, sy, sz] = r.f32s::<10>()?;
        let q = Quat::from_xyzw(rx, ry, rz, rw);
        if (q.length() - 1.0).abs() > 1e-3 {
            return r.err(
                ClipFileFault::Invalid,
                format!("joint {j}'s bind rotation is not a unit quaternion"),
            );
        }
        bind.push(Transform {
            translation: Vec3::new(tx, ty, tz),
            rotation: q,
            scale: Vec3::new(sx, sy, sz),
        });
        let m = r.f32s::<12>()?;
        inverse.push(Affine3A {
            matrix3: Mat3A::from_cols_array(&[
                m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8],
            ]),
            translation: Vec3A::new(m[9], m[10], m[11]),
        });
    }
    let at = r.at;
    let fail = |e: crate::anim::AnimError| ReadError {
        at,
        fault: ClipFileFault::Invalid,
        message: e.to_string(),
    };
    let (mut s, remap) = Skeleton::new(names, &parents, bind).map_err(fail)?;
    if remap.iter().enumerate().any(|(i, &k)| i != k) {
        return r.err(
            ClipFileFault::Invalid,
            "joints are not in parent-first order",
        );
    }
    s.set_inverse_bind(inverse).map_err(fail)?;
    Ok(s)
}

fn read_clip(r: &mut Reader, skel: &Skeleton) -> Result<Clip, ReadError> {
    let n = skel.len();
    let name = r.string()?;
    let start = r.at;
    let duration = r.f32()?;
    if duration < 0.0 {
        return r.err(
            ClipFileFault::Invalid,
            format!("clip {name:?} has duration {duration}"),
        );
    }
    let joint = |r: &mut Reader, v: u16| -> Result<u16, ReadError> {
        if v as usize >= n {
            r.at -= 2;
            return r.err(
                ClipFileFault::Invalid,
                format!("joint {v}, the skeleton has {n}"),
            );
        }
        Ok(v)
    };
    let spans_n = r.count(12)?;
    let mut spans: Vec<Span> = Vec::with_capacity(spans_n);
    let mut segs_total = 0usize;
    // Per segment, its sample count (checked against the stream below).
    let mut seg_samples: Vec<u32> = Vec::new();
    for i in 0..spans_n {
        let [start, step] = r.f32s::<2>()?;
        let samples = r.u32()?;
        let after = spans.last().is_none_or(|p: &Span| start > p.start);
        if samples < 2
            || !start.is_finite()
            || step.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
            || !(1.0 / step).is_finite()
            || !after
            || (i == 0 && start != 0.0)
        {
            r.at -= 12;
            return r.err(
                ClipFileFault::Invalid,
                format!("span {i}: {samples} samples {step} s apart from {start}"),
            );
        }
        let sp = Span {
            start,
            step,
            inv_step: 1.0 / step,
            samples,
            first_segment: segs_total as u32,
        };
        let segs = sp.segment_count();
        if segs > r.bytes.len() - r.at {
            return r.err(
                ClipFileFault::Count,
                "more segments than the bytes left could hold",
            );
        }
        for q in 0..segs {
            seg_samples.push(((samples as usize - 1) - q * SEGMENT).min(SEGMENT) as u32 + 1);
        }
        segs_total += segs;
        spans.push(sp);
    }
    let [te, td, measured] = r.f32s::<3>()?;
    let tolerance = Tolerance::new(te, td);
    let tracks_n = r.count(27)?;
    let mut tracks = Vec::with_capacity(tracks_n);
    let mut ranges = Vec::with_capacity(tracks_n);
    for _ in 0..tracks_n {
        let j = r.u16()?;
        let j = joint(r, j)?;
        let channel = r.u8()?;
        if channel > SCALE {
            return r.err(ClipFileFault::Invalid, format!("channel {channel}"));
        }
        if tracks
            .iter()
            .any(|t: &PackedTrack| t.joint == j && t.channel == channel)
        {
            return r.err(ClipFileFault::Invalid, "two tracks for one channel");
        }
        tracks.push(PackedTrack { joint: j, channel });
        let range = r.f32s::<6>()?;
        if range[3..].iter().any(|&e| e < 0.0) {
            return r.err(ClipFileFault::Invalid, "a negative range extent");
        }
        ranges.push(range);
    }
    if tracks.is_empty() != spans.is_empty() {
        return r.err(
            ClipFileFault::Invalid,
            format!("{} spans for {} tracks", spans.len(), tracks.len()),
        );
    }
    let segs_n = r.count(4)?;
    if segs_n != segs_total {
        return r.err(
            ClipFileFault::Invalid,
            format!("{segs_n} segments for spans of {segs_total}"),
        );
    }
    let mut segments = Vec::with_capacity(segs_n);
    for _ in 0..segs_n {
        let data_at = r.u32()?;
        segments.push(Segment { data_at });
    }
    let st_n = segs_n.saturating_mul(tracks_n);
    if st_n.saturating_mul(8) > r.bytes.len() - r.at {
        return r.err(
            ClipFileFault::Count,
            "more segment tracks than the bytes left could hold",
        );
    }
    let mut segment_tracks = Vec::with_capacity(st_n);
    for k in 0..st_n {
        let b = r.take(8, "a segment track")?;
        // The rate in the low five bits, the rotation's left-out
        // component in the next two; the stride's shift, which must
        // divide the segment's intervals.
        let (bits, largest, shift) = (b[0] & 0x1f, (b[0] >> 5) & 3, b[7]);
        let rotation = tracks[k % tracks_n.max(1)].channel == ROTATION;
        let intervals = seg_samples[k / tracks_n.max(1)] as usize - 1;
        if !BIT_RATES.contains(&bits)
            || b[0] >> 7 != 0
            || (largest != 0 && !rotation)
            || shift > MAX_SHIFT
            || !intervals.is_multiple_of(1 << shift)
        {
            r.at -= 8;
            return r.err(
                ClipFileFault::Invalid,
                format!("segment track bytes {:#04x}, shift {shift}", b[0]),
            );
        }
        segment_tracks.push(SegmentTrack {
            bits,
            min: [b[1], b[2], b[3]],
            extent: [b[4], b[5], b[6]],
            largest,
            shift,
        });
    }
    let data_n = r.count(1)?;
    let mut data = r.take(data_n, "the bit stream")?.to_vec();
    data.resize(data_n + PAD, 0);
    // Every segment's samples inside the stream (what sampling reads
    // without checking).
    for (s, seg) in segments.iter().enumerate() {
        let intervals = seg_samples[s] as usize - 1;
        let bits: u64 = segment_tracks[s * tracks_n..(s + 1) * tracks_n]
            .iter()
            .map(|t| 3 * u64::from(t.bits) * samples_kept(intervals, t.shift) as u64)
            .sum();
        let end = u64::from(seg.data_at) * 8 + bits;
        if end > data_n as u64 * 8 {
            return r.err(
                ClipFileFault::Invalid,
                format!("segment {s} does not fit the bit stream"),
            );
        }
    }
    let consts_n = r.count(15)?;
    let mut consts: Vec<(u16, u8, [f32; 4])> = Vec::with_capacity(consts_n);
    for _ in 0..consts_n {
        let j = r.u16()?;
        let j = joint(r, j)?;
        let channel = r.u8()?;
        if channel > SCALE {
            return r.err(
                ClipFileFault::Invalid,
                format!("constant channel {channel}"),
            );
        }
        if consts.iter().any(|c| (c.0, c.1) == (j, channel))
            || tracks.iter().any(|t| (t.joint, t.channel) == (j, channel))
        {
            return r.err(
                ClipFileFault::Invalid,
                "a constant for a channel already driven",
            );
        }
        let v = if channel == ROTATION {
            let q = r.f32s::<4>()?;
            if (Quat::from_array(q).length() - 1.0).abs() > 1e-3 {
                return r.err(
                    ClipFileFault::Invalid,
                    "a constant rotation not of unit length",
                );
            }
            q
        } else {
            let [x, y, z] = r.f32s::<3>()?;
            [x, y, z, 0.0]
        };
        consts.push((j, channel, v));
    }
    let base_n = r.count(12)?;
    let mut base = Vec::with_capacity(base_n);
    for _ in 0..base_n {
        let j = r.u16()?;
        let j = joint(r, j)?;
        let channel = r.u8()?;
        let interpolation = r.u8()?;
        let keys = r.u32()?;
        let first = r.u32()?;
        if channel > SCALE || interpolation_of(interpolation).is_none() || keys == 0 {
            return r.err(
                ClipFileFault::Invalid,
                "a base track with a bad channel, interpolation or key count",
            );
        }
        base.push(BaseTrack {
            joint: j,
            channel,
            interpolation,
            keys,
            first,
        });
    }
    let times_n = r.count(4)?;
    let mut base_times = Vec::with_capacity(times_n);
    for _ in 0..times_n {
        base_times.push(r.f32()?);
    }
    let values_n = r.count(16)?;
    if values_n != times_n {
        return r.err(
            ClipFileFault::Invalid,
            format!("{times_n} base key times but {values_n} values"),
        );
    }
    let mut base_values = Vec::with_capacity(values_n);
    for _ in 0..values_n {
        base_values.push(r.f32s::<4>()?);
    }
    if base
        .iter()
        .any(|b| b.first as u64 + b.keys as u64 > times_n as u64)
    {
        return r.err(
            ClipFileFault::Invalid,
            "a base track's keys outside the key list",
        );
    }
    let mut raw = RawClip {
        name: name.clone(),
        duration,
        tracks: Vec::new(),
        weights: Vec::new(),
    };
    if base.iter().any(|b| {
        is_constant(b)
            || consts.iter().any(|c| (c.0, c.1) == (b.joint, b.channel))
            || tracks
                .iter()
                .any(|t| (t.joint, t.channel) == (b.joint, b.channel))
    }) {
        return r.err(
            ClipFileFault::Invalid,
            "a step track that is a constant or drives a channel already driven",
        );
    }
    let mut all = base.clone();
    let (mut all_times, mut all_values) = (base_times.clone(), base_values.clone());
    for &(j, channel, v) in &consts {
        all.push(BaseTrack {
            joint: j,
            channel,
            interpolation: interpolation_code(Interpolation::Linear),
            keys: 1,
            first: all_times.len() as u32,
        });
        all_times.push(0.0);
        all_values.push(v);
    }
    raw_add_base(&mut raw, &all, &all_times, &all_values);
    let mut base_clip = Clip::build(&raw, skel).map_err(|e| ReadError {
        at: start,
        fault: ClipFileFault::Invalid,
        message: e.to_string(),
    })?;
    // The constants exactly as written (the build normalises rotations),
    // so the clip saves back the same bytes.
    for &(j, channel, v) in &consts {
        let t = &mut base_clip.rest[j as usize];
        match channel {
            TRANSLATION => t.translation = Vec3::new(v[0], v[1], v[2]),
            SCALE => t.scale = Vec3::new(v[0], v[1], v[2]),
            _ => t.rotation = Quat::from_array(v),
        }
    }
    let packed = CompressedClip {
        spans,
        tracks,
        ranges,
        segments,
        segment_tracks,
        data,
        base,
        base_times,
        base_values,
        tolerance,
        measured_error: measured,
    };
    Ok(Clip::with_packed(
        base_clip,
        &name,
        duration,
        Vec::new(),
        Default::default(),
        packed,
    ))
}

// Channel constants are the channel codes of the packed tracks.
const _: () = assert!(TRANSLATION == 0 && ROTATION == 1 && SCALE == 2);
