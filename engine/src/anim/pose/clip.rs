use std::collections::HashMap;

use glam::{Quat, Vec3, Vec4};

use super::compressed::format::CompressedClip;
use super::interpolation::Interpolation;
use super::quat::{slerp_angle, squad_setup};
use super::timelines::Timelines;
use super::weights::{build_weight_tracks, WeightTrackInfo, WeightTracks};
pub(crate) use crate::anim::simd::lanes::{SoloVec3, SquadSpan, Vec3Field};
use crate::anim::{AnimError, Skeleton, Transform};

/// Translation or scale tracks that share a timeline, a field and an
/// interpolation. Data are interval-major: everything sampled at one time
/// lies together.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Vec3Batch {
    pub timeline: usize,
    pub field: Vec3Field,
    pub interpolation: Interpolation,
    pub joints: Vec<u16>,
    /// Step, Nearest, Linear: key `k` of track `j` at `k * tracks + j`.
    /// CubicSpline: the coefficients `c0 + c1 u + c2 u^2 + c3 u^3` of
    /// interval `i` of track `j` at `(i * tracks + j) * 4 ..`. Twelve bytes
    /// a value (not `Vec3A`'s sixteen): the sampler's arithmetic is the
    /// same, the clip a quarter smaller.
    pub data: Vec<Vec3>,
}

/// Rotation tracks that share a timeline and an interpolation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QuatBatch {
    pub timeline: usize,
    pub interpolation: Interpolation,
    pub joints: Vec<u16>,
    /// Step, Nearest: key `k` of track `j` at `k * tracks + j`. (Linear
    /// keeps its keys only in the structure-of-arrays rows below.)
    pub keys: Vec<Quat>,
    /// Squad, looping neighbours (seed 003): interval `i` of track `j` at
    /// `i * tracks + j`.
    pub squad: Vec<SquadSpan>,
    /// Squad, clamped neighbours for the first (`j`) and last
    /// (`tracks + j`) interval when the clip does not loop.
    pub squad_clamped: Vec<SquadSpan>,
    /// CubicSpline: coefficients as in [`Vec3Batch::data`].
    pub cubic: Vec<Vec4>,
    /// Squad, the same spans in structure-of-arrays form for the AVX2
    /// sampler: tracks in groups of eight (the last group padded with
    /// copies of its last track), each group 20 rows of eight lanes
    /// (`q1.xyzw, c.xyzw, a.xyzw, b.xyzw, theta1, 1/sin1, theta2, 1/sin2`).
    /// Interval `i`, group `g` starts at row `(i * groups + g) * 20`.
    pub squad_soa: Vec<[f32; 8]>,
    /// The clamped first and last intervals in the same form.
    pub squad_clamped_soa: Vec<[f32; 8]>,
    /// Linear, for every sampler (eight lanes at once on AVX2, a lane at a
    /// time otherwise): keys in groups of eight tracks, each key flipped
    /// into the previous key's hemisphere so every interval's slerp is
    /// already the short way, four rows (x, y, z, w) per group, key `k`
    /// group `g` at row `(k * groups + g) * 4`; and `[theta, 1/sin(theta)]`
    /// rows, interval `i` group `g` at row `(i * groups + g) * 2`. The last
    /// group's unused lanes repeat its last track.
    pub linear_soa_keys: Vec<[f32; 8]>,
    pub linear_soa_angles: Vec<[f32; 8]>,
}

/// Rows per group of eight SQUAD spans in [`QuatBatch::squad_soa`].
pub(crate) const SQUAD_ROWS: usize = 20;

/// `spans` holds `tracks` spans per interval; returns their SoA form.
#[allow(clippy::needless_range_loop)]
fn squad_to_soa(spans: &[SquadSpan], tracks: usize) -> Vec<[f32; 8]> {
    let groups = tracks.div_ceil(8);
    let intervals = spans.len() / tracks;
    let mut out = vec![[0.0f32; 8]; intervals * groups * SQUAD_ROWS];
    for i in 0..intervals {
        for g in 0..groups {
            let rows = &mut out[(i * groups + g) * SQUAD_ROWS..][..SQUAD_ROWS];
            for lane in 0..8 {
                let k = (g * 8 + lane).min(tracks - 1);
                let sp = &spans[i * tracks + k];
                let v = [sp.q1, sp.c, sp.a, sp.b];
                for (q, quat) in v.iter().enumerate() {
                    for c in 0..4 {
                        rows[q * 4 + c][lane] = quat.to_array()[c];
                    }
                }
                for c in 0..4 {
                    rows[16 + c][lane] = sp.angles.to_array()[c];
                }
            }
        }
    }
    out
}

/// Whole-matrix tracks (decomposed at build time) that share a timeline.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MatrixBatch {
    pub timeline: usize,
    /// `Step` holds the earlier key; anything else takes the nearer one.
    pub interpolation: Interpolation,
    pub joints: Vec<u16>,
    /// Key `k` of track `j` at `k * tracks + j`.
    pub keys: Vec<Transform>,
}

/// Batches narrower than this go to the solo layout instead.
pub(crate) const SOLO_BELOW: usize = 3;

/// Linear and SQUAD rotation tracks in the solo layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SoloQuat {
    /// Tracks `..linear` are linear, the rest SQUAD.
    pub linear: usize,
    pub joints: Vec<u16>,
    pub timelines: Vec<u32>,
    /// Linear: first key in `keys` and first interval in `angles`;
    /// Squad: first interval in `spans` and first of its two entries in
    /// `clamped`.
    pub offsets: Vec<[u32; 2]>,
    pub keys: Vec<Quat>,
    pub angles: Vec<[f32; 2]>,
    pub spans: Vec<SquadSpan>,
    /// Squad: the clamped first and last interval of each track, two
    /// entries a track.
    pub clamped: Vec<SquadSpan>,
}

/// Which channel of a joint a track animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// The joint's translation.
    Translation,
    /// The joint's rotation.
    Rotation,
    /// The joint's per-axis scale.
    Scale,
    /// The joint's whole local matrix.
    Matrix,
}

impl Channel {
    /// The channel's name in lower case, as messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Translation => "translation",
            Channel::Rotation => "rotation",
            Channel::Scale => "scale",
            Channel::Matrix => "matrix",
        }
    }
}

/// What a clip's track was built from, for tools that list tracks
/// (`inspect`): the runtime layout itself is grouped and not per track.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackInfo {
    /// Skeleton joint index.
    pub joint: usize,
    /// The channel the track animated.
    pub channel: Channel,
    /// Number of keys.
    pub keys: usize,
    /// How the track moved between its keys.
    pub interpolation: Interpolation,
    /// Seconds of the first and last key.
    pub start: f32,
    /// Seconds of the last key.
    pub end: f32,
}

/// A runtime clip: validated once, immutable, laid out for sampling.
///
/// Tracks are grouped by (key times, channel, interpolation); each group's
/// data are interval-major and pre-digested (slerp angles, SQUAD control
/// points, spline coefficients). Single-key tracks are folded into the
/// clip's rest pose; channels without a track take the skeleton's bind pose.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    name: String,
    duration: f32,
    tracks: Vec<TrackInfo>,
    /// Per joint: the bind pose with single-key tracks applied.
    pub(crate) rest: Vec<Transform>,
    /// Joints some channel of which is not animated: their rest transform is
    /// written before the batches overwrite the animated channels.
    pub(crate) rest_joints: Vec<u16>,
    /// Every distinct key-time array (see [`Timelines`]): a clip exported
    /// with one sampler per joint (glTF) or one key set per frame (.x) has a
    /// handful, so the sampler locates the current key interval once per
    /// timeline instead of once per track.
    pub(crate) timelines: Timelines,
    pub(crate) vec3_batches: Vec<Vec3Batch>,
    pub(crate) quat_batches: Vec<QuatBatch>,
    pub(crate) matrix_batches: Vec<MatrixBatch>,
    pub(crate) solo_vec3: SoloVec3,
    pub(crate) solo_quat: SoloQuat,
    /// Morph-weight tracks (see `weights`).
    pub(crate) weights: WeightTracks,
    /// [`Clip::bytes`], counted once the layouts are final.
    bytes: usize,
    /// A compressed clip's quantized tracks, sampled after the layouts
    /// above (which then hold its constants and step tracks).
    pub(crate) packed: Option<Box<CompressedClip>>,
}

/// A heap buffer a clip owns: what it holds, and giving back growth room.
trait Buffer {
    fn held(&self) -> usize;
    fn shrink(&mut self);
}

impl<T> Buffer for Vec<T> {
    fn held(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }
    fn shrink(&mut self) {
        self.shrink_to_fit();
    }
}

impl Buffer for String {
    fn held(&self) -> usize {
        self.capacity()
    }
    fn shrink(&mut self) {
        self.shrink_to_fit();
    }
}

/// A validated track before layout.
struct Track<T> {
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<T>,
    tangents: Vec<[T; 2]>,
}

/// Tracks of one batch, with their joints.
type Group<T> = Vec<(u16, Track<T>)>;

#[derive(Default)]
struct Builder {
    /// Distinct key-time arrays, in order of first use.
    timelines: Vec<Vec<f32>>,
    timeline_ids: HashMap<Vec<u32>, usize>,
    vec3: HashMap<(usize, Vec3Field, Interpolation), Group<Vec3>>,
    quat: HashMap<(usize, Interpolation), Group<Quat>>,
    matrix: HashMap<(usize, bool), Group<Transform>>,
}

impl Builder {
    fn timeline(&mut self, times: &[f32]) -> usize {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&id) = self.timeline_ids.get(&key) {
            return id;
        }
        self.timelines.push(times.to_vec());
        self.timeline_ids.insert(key, self.timelines.len() - 1);
        self.timelines.len() - 1
    }
}

/// Groups sorted by key so a clip builds the same way every time.
fn sorted<K: Ord + Copy, V>(map: HashMap<K, V>) -> Vec<(K, V)> {
    let mut v: Vec<(K, V)> = map.into_iter().collect();
    v.sort_by_key(|(k, _)| *k);
    v
}

impl Clip {
    /// Validates `raw` against `skeleton`: key times finite and
    /// non-decreasing, values finite, counts consistent, joints in range, at
    /// most one track per joint, SQUAD only on rotations, tangents only on
    /// cubic splines. A whole-matrix track replaces the joint's other three.
    /// Weight tracks are checked alike, their runs disjoint (see `weights`).
    pub fn build(raw: &RawClip, skeleton: &Skeleton) -> Result<Self, AnimError> {
        let fault = |f: String| AnimError::InvalidClip {
            clip: raw.name.clone(),
            fault: f,
        };
        if !raw.duration.is_finite() || raw.duration < 0.0 {
            return Err(fault(format!(
                "duration {} is not a finite, non-negative number",
                raw.duration
            )));
        }
        let n = skeleton.len();
        let mut rest: Vec<Transform> = skeleton.bind_local().to_vec();
        // Per joint: translation, rotation, scale animated; matrix animated.
        let mut animated = vec![[false; 3]; n];
        let mut matrix_animated = vec![false; n];
        let mut seen = vec![false; n];
        let mut duration = raw.duration;
        let mut b = Builder::default();
        for t in &raw.tracks {
            if t.joint >= n {
                return Err(fault(format!(
                    "track for joint {} but the skeleton has {n} joints",
                    t.joint
                )));
            }
            if std::mem::replace(&mut seen[t.joint], true) {
                return Err(fault(format!("two tracks for joint {}", t.joint)));
            }
            let joint = t.joint as u16;
            let name = &skeleton.names()[t.joint];
            let translation =
                build_track(&t.translation, |v| v.is_finite(), |v| v.is_finite(), false)
                    .map_err(|f| fault(format!("joint {name:?} translation: {f}")))?;
            let rotation = build_track(
                &t.rotation,
                |q| q.is_finite() && q.length_squared() > 1e-12,
                |q| q.is_finite(),
                true,
            )
            .map_err(|f| fault(format!("joint {name:?} rotation: {f}")))?
            .map(normalise_rotations);
            let scale = build_track(&t.scale, |v| v.is_finite(), |v| v.is_finite(), false)
                .map_err(|f| fault(format!("joint {name:?} scale: {f}")))?;
            let matrix = build_track(&t.matrix, |m| m.is_finite(), |m| m.is_finite(), false)
                .map_err(|f| fault(format!("joint {name:?} matrix: {f}")))?;
            for last in [
                t.translation.last_time(),
                t.rotation.last_time(),
                t.scale.last_time(),
                t.matrix.last_time(),
            ]
            .into_iter()
            .flatten()
            {
                duration = duration.max(last);
            }
            if let Some(m) = matrix {
                if m.interpolation == Interpolation::CubicSpline {
                    return Err(fault(format!(
                        "joint {name:?} matrix: matrix keys take the nearest key, not a spline"
                    )));
                }
                let values: Vec<Transform> = m.values.iter().map(Transform::from_affine).collect();
                if values.len() == 1 {
                    rest[t.joint] = values[0];
                } else {
                    let tl = b.timeline(&m.times);
                    let step = m.interpolation == Interpolation::Step;
                    b.matrix.entry((tl, step)).or_default().push((
                        joint,
                        Track {
                            interpolation: m.interpolation,
                            times: m.times,
                            values,
                            tangents: Vec::new(),
                        },
                    ));
                    matrix_animated[t.joint] = true;
                }
                continue;
            }
            for (field, track) in [
                (Vec3Field::Translation, translation),
                (Vec3Field::Scale, scale),
            ] {
                let Some(track) = track else { continue };
                if track.values.len() == 1 {
                    match field {
                        Vec3Field::Translation => rest[t.joint].translation = track.values[0],
                        Vec3Field::Scale => rest[t.joint].scale = track.values[0],
                    }
                    continue;
                }
                let tl = b.timeline(&track.times);
                animated[t.joint][if field == Vec3Field::Scale { 2 } else { 0 }] = true;
                b.vec3
                    .entry((tl, field, track.interpolation))
                    .or_default()
                    .push((joint, track));
            }
            if let Some(track) = rotation {
                if track.values.len() == 1 {
                    rest[t.joint].rotation = track.values[0].normalize();
                } else {
                    let tl = b.timeline(&track.times);
                    animated[t.joint][1] = true;
                    b.quat
                        .entry((tl, track.interpolation))
                        .or_default()
                        .push((joint, track));
                }
            }
        }
        let weights = build_weight_tracks(&raw.weights).map_err(fault)?;
        duration = duration.max(weights.end);
        let rest_joints = (0..n)
            .filter(|&j| !matrix_animated[j] && !animated[j].iter().all(|&a| a))
            .map(|j| j as u16)
            .collect();
        let arrays = std::mem::take(&mut b.timelines);
        let (timelines, remap) = Timelines::build(&arrays)
            .ok_or_else(|| fault("more key times than a clip can index".into()))?;
        // Batches and solo tracks name timelines by their place in the
        // layout; `arrays` stays indexed as the builder numbered them.
        let id = |timeline: usize| remap[timeline] as usize;
        let mut solo_vec3 = SoloVec3::default();
        let mut vec3_batches = Vec::new();
        for ((timeline, field, interpolation), tracks) in sorted(std::mem::take(&mut b.vec3)) {
            if tracks.len() < SOLO_BELOW && interpolation == Interpolation::Linear {
                for (joint, t) in tracks {
                    solo_vec3.joints.push(joint);
                    solo_vec3.fields.push(field);
                    solo_vec3.timelines.push(id(timeline) as u32);
                    solo_vec3.offsets.push(solo_vec3.keys.len() as u32);
                    solo_vec3.keys.extend_from_slice(&t.values);
                }
            } else {
                let times = &arrays[timeline];
                vec3_batches.push(layout_vec3(
                    id(timeline),
                    field,
                    interpolation,
                    tracks,
                    times,
                ));
            }
        }
        // One key of padding past the last track's: the AVX2 sampler reads
        // each key as 16 bytes.
        if !solo_vec3.keys.is_empty() {
            solo_vec3.keys.push(Vec3::ZERO);
        }
        let mut solo_quat = SoloQuat::default();
        let mut quat_batches = Vec::new();
        // Solo rotation tracks: the linear ones first (the AVX2 sampler
        // takes them eight at a time), then SQUAD.
        let (mut solo_linear, mut solo_squad) = (Vec::new(), Vec::new());
        for ((timeline, interpolation), tracks) in sorted(std::mem::take(&mut b.quat)) {
            let squad = interpolation == Interpolation::Squad;
            if tracks.len() < SOLO_BELOW && (squad || interpolation == Interpolation::Linear) {
                let to = if squad {
                    &mut solo_squad
                } else {
                    &mut solo_linear
                };
                to.push((timeline, interpolation, tracks));
            } else {
                let times = &arrays[timeline];
                quat_batches.push(layout_quat(id(timeline), interpolation, tracks, times));
            }
        }
        solo_quat.linear = solo_linear.iter().map(|(_, _, t)| t.len()).sum();
        for (timeline, interpolation, tracks) in solo_linear.into_iter().chain(solo_squad) {
            let times = &arrays[timeline];
            let squad = interpolation == Interpolation::Squad;
            for (joint, t) in tracks {
                let s = &mut solo_quat;
                s.joints.push(joint);
                s.timelines.push(id(timeline) as u32);
                if squad {
                    // The batch layout of a one-track group, moved over.
                    let one = layout_quat(id(timeline), interpolation, vec![(joint, t)], times);
                    s.offsets
                        .push([s.spans.len() as u32, s.clamped.len() as u32]);
                    s.spans.extend_from_slice(&one.squad);
                    s.clamped.extend_from_slice(&one.squad_clamped);
                } else {
                    let keys = continuous(&t.values);
                    s.offsets.push([s.keys.len() as u32, s.angles.len() as u32]);
                    s.angles.extend(keys.windows(2).map(|w| {
                        let (theta, inv) = slerp_angle(w[0], w[1]);
                        [theta, inv]
                    }));
                    s.keys.extend_from_slice(&keys);
                }
            }
        }
        let matrix_batches = sorted(std::mem::take(&mut b.matrix))
            .into_iter()
            .map(|((timeline, _), tracks)| {
                let keys = arrays[timeline].len();
                let mut data = Vec::with_capacity(keys * tracks.len());
                for k in 0..keys {
                    data.extend(tracks.iter().map(|(_, t)| t.values[k]));
                }
                MatrixBatch {
                    timeline: id(timeline),
                    interpolation: tracks[0].1.interpolation,
                    joints: tracks.iter().map(|(j, _)| *j).collect(),
                    keys: data,
                }
            })
            .collect();
        let tracks = track_infos(raw);
        let mut clip = Self {
            name: raw.name.clone(),
            duration,
            tracks,
            rest,
            rest_joints,
            timelines,
            vec3_batches,
            quat_batches,
            matrix_batches,
            solo_vec3,
            solo_quat,
            weights,
            bytes: 0,
            packed: None,
        };
        // Immutable from here: give back the growth room the layouts were
        // built with, then count what is held.
        clip.for_each_buffer(&mut |b| b.shrink());
        let mut held = 0;
        clip.for_each_buffer(&mut |b| held += b.held());
        clip.bytes = std::mem::size_of::<Self>() + held;
        Ok(clip)
    }

    /// A compressed clip: `base` (built from the original's constants and
    /// step tracks) with `packed` sampled after it; the name, duration,
    /// track list and weight tracks of the original.
    pub(crate) fn with_packed(
        mut base: Clip,
        name: &str,
        duration: f32,
        tracks: Vec<TrackInfo>,
        weights: WeightTracks,
        packed: CompressedClip,
    ) -> Clip {
        base.name = name.to_string();
        base.duration = duration;
        base.tracks = tracks;
        base.weights = weights;
        base.for_each_buffer(&mut |b| b.shrink());
        let mut held = std::mem::size_of::<CompressedClip>() + packed.held();
        base.for_each_buffer(&mut |b| held += b.held());
        base.bytes = std::mem::size_of::<Self>() + held;
        base.packed = Some(Box::new(packed));
        base
    }

    /// The compressed part, `None` for a clip in the raw layout.
    pub fn compressed(&self) -> Option<&CompressedClip> {
        self.packed.as_deref()
    }

    pub(crate) fn set_measured_error(&mut self, error: f32) {
        if let Some(p) = &mut self.packed {
            p.measured_error = error;
        }
    }

    /// Calls `f` on every buffer the clip owns (the one list of them).
    fn for_each_buffer(&mut self, f: &mut dyn FnMut(&mut dyn Buffer)) {
        f(&mut self.name);
        f(&mut self.tracks);
        f(&mut self.rest);
        f(&mut self.rest_joints);
        f(&mut self.timelines.keys);
        f(&mut self.timelines.groups);
        f(&mut self.timelines.times);
        f(&mut self.vec3_batches);
        for b in &mut self.vec3_batches {
            f(&mut b.joints);
            f(&mut b.data);
        }
        f(&mut self.quat_batches);
        for b in &mut self.quat_batches {
            f(&mut b.joints);
            f(&mut b.keys);
            f(&mut b.squad);
            f(&mut b.squad_clamped);
            f(&mut b.cubic);
            f(&mut b.squad_soa);
            f(&mut b.squad_clamped_soa);
            f(&mut b.linear_soa_keys);
            f(&mut b.linear_soa_angles);
        }
        f(&mut self.matrix_batches);
        for b in &mut self.matrix_batches {
            f(&mut b.joints);
            f(&mut b.keys);
        }
        let s = &mut self.solo_vec3;
        f(&mut s.joints);
        f(&mut s.fields);
        f(&mut s.timelines);
        f(&mut s.offsets);
        f(&mut s.keys);
        let q = &mut self.solo_quat;
        f(&mut q.joints);
        f(&mut q.timelines);
        f(&mut q.offsets);
        f(&mut q.keys);
        f(&mut q.angles);
        f(&mut q.spans);
        f(&mut q.clamped);
        f(&mut self.weights.tracks);
        for t in &mut self.weights.tracks {
            f(&mut t.times);
            f(&mut t.data);
        }
    }

    /// The clip's name, from its [`RawClip`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// Number of joints the clip drives (the skeleton's joint count).
    pub fn joint_count(&self) -> usize {
        self.rest.len()
    }

    /// Number of non-empty tracks (each channel of each joint counts once).
    pub fn track_count(&self) -> usize {
        self.tracks.len()
    }

    /// One entry per track the clip plays, in the raw clip's order
    /// (translation, rotation, scale per joint; a matrix track alone where
    /// one replaces the others).
    pub fn track_infos(&self) -> &[TrackInfo] {
        &self.tracks
    }

    /// The least morph-weight vector length the clip's weight tracks need
    /// (the largest `first + count`); 0 without weight tracks.
    pub fn weight_count(&self) -> usize {
        self.weights.count
    }

    /// One entry per weight track, in the raw clip's order.
    pub fn weight_tracks(&self) -> impl ExactSizeIterator<Item = WeightTrackInfo> + '_ {
        self.weights.infos()
    }

    /// Number of distinct key-time arrays among the animated tracks.
    pub fn timeline_count(&self) -> usize {
        self.timelines.len()
    }

    /// Bytes the clip holds: the struct and every buffer it owns, counted
    /// by capacity (sampling layouts, the rest pose, the name and the track
    /// list for tools), as ozz's `Animation::size()` counts its own. The
    /// anim bench prints it per joint (`clip memory` rows).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

fn track_infos(raw: &RawClip) -> Vec<TrackInfo> {
    fn info<T>(joint: usize, channel: Channel, t: &RawTrack<T>) -> Option<TrackInfo> {
        Some(TrackInfo {
            joint,
            channel,
            keys: t.len(),
            interpolation: t.interpolation,
            start: *t.times.first()?,
            end: *t.times.last()?,
        })
    }
    // A matrix track replaces the joint's other channels (see `build`).
    raw.tracks
        .iter()
        .flat_map(|t| {
            if !t.matrix.is_empty() {
                return [info(t.joint, Channel::Matrix, &t.matrix), None, None, None];
            }
            [
                info(t.joint, Channel::Translation, &t.translation),
                info(t.joint, Channel::Rotation, &t.rotation),
                info(t.joint, Channel::Scale, &t.scale),
                info(t.joint, Channel::Matrix, &t.matrix),
            ]
        })
        .flatten()
        .collect()
}

/// glTF cubic Hermite on interval `[p0, p1]` with out-tangent `m0` of the
/// first key and in-tangent `m1` of the second, both already scaled by the
/// interval's length, as power-basis coefficients in `u`.
fn hermite_coefficients(p0: Vec4, m0: Vec4, p1: Vec4, m1: Vec4) -> [Vec4; 4] {
    // (2u^3 - 3u^2 + 1) p0 + (u^3 - 2u^2 + u) m0 + (-2u^3 + 3u^2) p1 + (u^3 - u^2) m1
    [
        p0,
        m0,
        -3.0 * p0 - 2.0 * m0 + 3.0 * p1 - m1,
        2.0 * p0 + m0 - 2.0 * p1 + m1,
    ]
}

fn layout_vec3(
    timeline: usize,
    field: Vec3Field,
    interpolation: Interpolation,
    tracks: Vec<(u16, Track<Vec3>)>,
    times: &[f32],
) -> Vec3Batch {
    let keys = times.len();
    let mut data = Vec::new();
    if interpolation == Interpolation::CubicSpline {
        for i in 0..keys - 1 {
            let dt = times[i + 1] - times[i];
            for (_, t) in &tracks {
                let c = hermite_coefficients(
                    t.values[i].extend(0.0),
                    t.tangents[i][1].extend(0.0) * dt,
                    t.values[i + 1].extend(0.0),
                    t.tangents[i + 1][0].extend(0.0) * dt,
                );
                data.extend(c.iter().map(|v| v.truncate()));
            }
        }
    } else {
        for k in 0..keys {
            data.extend(tracks.iter().map(|(_, t)| t.values[k]));
        }
    }
    Vec3Batch {
        timeline,
        field,
        interpolation,
        joints: tracks.iter().map(|(j, _)| *j).collect(),
        data,
    }
}

/// The keys with each flipped into the previous key's hemisphere, so every
/// interval's slerp is already the short way.
fn continuous(values: &[Quat]) -> Vec<Quat> {
    let mut v = values.to_vec();
    for k in 1..v.len() {
        if v[k].dot(v[k - 1]) < 0.0 {
            v[k] = -v[k];
        }
    }
    v
}

fn squad_span(q0: Quat, q1: Quat, q2: Quat, q3: Quat) -> SquadSpan {
    let (a, b, c) = squad_setup(q0, q1, q2, q3);
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let (t1, i1) = slerp_angle(q1, c);
    let (t2, i2) = slerp_angle(a, b);
    SquadSpan {
        q1,
        c,
        a,
        b,
        angles: Vec4::new(t1, i1, t2, i2),
    }
}

#[allow(clippy::needless_range_loop)]
fn layout_quat(
    timeline: usize,
    interpolation: Interpolation,
    tracks: Vec<(u16, Track<Quat>)>,
    times: &[f32],
) -> QuatBatch {
    let keys = times.len();
    let nt = tracks.len();
    let mut batch = QuatBatch {
        timeline,
        interpolation,
        joints: tracks.iter().map(|(j, _)| *j).collect(),
        keys: Vec::new(),
        squad: Vec::new(),
        squad_clamped: Vec::new(),
        cubic: Vec::new(),
        squad_soa: Vec::new(),
        squad_clamped_soa: Vec::new(),
        linear_soa_keys: Vec::new(),
        linear_soa_angles: Vec::new(),
    };
    match interpolation {
        Interpolation::Step | Interpolation::Nearest | Interpolation::Linear => {
            let mut continuous: Vec<Vec<Quat>> = tracks
                .iter()
                .map(|(_, t)| self::continuous(&t.values))
                .collect();
            if interpolation != Interpolation::Linear {
                for k in 0..keys {
                    batch.keys.extend(continuous.iter().map(|v| v[k]));
                }
            } else {
                let groups = nt.div_ceil(8);
                let lane_track = |g: usize, lane: usize| (g * 8 + lane).min(nt - 1);
                for k in 0..keys {
                    for g in 0..groups {
                        let mut rows = [[0.0f32; 8]; 4];
                        for lane in 0..8 {
                            let q = continuous[lane_track(g, lane)][k].to_array();
                            for c in 0..4 {
                                rows[c][lane] = q[c];
                            }
                        }
                        batch.linear_soa_keys.extend_from_slice(&rows);
                    }
                }
                for i in 0..keys - 1 {
                    for g in 0..groups {
                        let mut rows = [[0.0f32; 8]; 2];
                        for lane in 0..8 {
                            let v = &continuous[lane_track(g, lane)];
                            let (theta, inv) = slerp_angle(v[i], v[i + 1]);
                            rows[0][lane] = theta;
                            rows[1][lane] = inv;
                        }
                        batch.linear_soa_angles.extend_from_slice(&rows);
                    }
                }
            }
            continuous.clear();
        }
        Interpolation::Squad => {
            let n = keys;
            for i in 0..n - 1 {
                // Seed 003: i0 = i1 - 1, wrapped to the last key; i3 = i2 + 1,
                // wrapped to the first.
                let i0 = if i == 0 { n - 1 } else { i - 1 };
                let i3 = if i + 2 >= n { i + 2 - n } else { i + 2 };
                batch.squad.extend(tracks.iter().map(|(_, t)| {
                    let v = &t.values;
                    squad_span(v[i0], v[i], v[i + 1], v[i3])
                }));
            }
            // Without looping the ends repeat themselves instead.
            for i in [0, n - 2] {
                let i0 = i.saturating_sub(1);
                let i3 = (i + 2).min(n - 1);
                batch.squad_clamped.extend(tracks.iter().map(|(_, t)| {
                    let v = &t.values;
                    squad_span(v[i0], v[i], v[i + 1], v[i3])
                }));
            }
            debug_assert_eq!(batch.squad_clamped.len(), 2 * nt);
            batch.squad_soa = squad_to_soa(&batch.squad, nt);
            batch.squad_clamped_soa = squad_to_soa(&batch.squad_clamped, nt);
        }
        Interpolation::CubicSpline => {
            for i in 0..keys - 1 {
                let dt = times[i + 1] - times[i];
                for (_, t) in &tracks {
                    let c = hermite_coefficients(
                        Vec4::from(t.values[i]),
                        Vec4::from(t.tangents[i][1]) * dt,
                        Vec4::from(t.values[i + 1]),
                        Vec4::from(t.tangents[i + 1][0]) * dt,
                    );
                    batch.cubic.extend_from_slice(&c);
                }
            }
        }
    }
    batch
}

/// `value_ok` checks each key value, `tangent_ok` each tangent (rotation
/// tangents may be zero quaternions, so the two differ).
fn build_track<T: Copy>(
    raw: &RawTrack<T>,
    value_ok: impl Fn(&T) -> bool,
    tangent_ok: impl Fn(&T) -> bool,
    rotation: bool,
) -> Result<Option<Track<T>>, String> {
    if raw.times.is_empty() {
        if !raw.values.is_empty() {
            return Err(format!("{} values but no key times", raw.values.len()));
        }
        return Ok(None);
    }
    if raw.values.len() != raw.times.len() {
        return Err(format!(
            "{} key times but {} values",
            raw.times.len(),
            raw.values.len()
        ));
    }
    let cubic = raw.interpolation == Interpolation::CubicSpline;
    if cubic && raw.tangents.len() != raw.times.len() {
        return Err(format!(
            "cubic spline with {} keys but {} tangent pairs",
            raw.times.len(),
            raw.tangents.len()
        ));
    }
    if !cubic && !raw.tangents.is_empty() {
        return Err("tangents given for a track that is not a cubic spline".into());
    }
    if raw.interpolation == Interpolation::Squad && !rotation {
        return Err("SQUAD applies to rotations only".into());
    }
    for (i, t) in raw.times.iter().enumerate() {
        if !t.is_finite() {
            return Err(format!("key {i} has time {t}"));
        }
        if i > 0 && *t < raw.times[i - 1] {
            return Err(format!(
                "key {i} at {t} s comes before key {} at {} s",
                i - 1,
                raw.times[i - 1]
            ));
        }
    }
    if let Some(i) = raw.values.iter().position(|v| !value_ok(v)) {
        return Err(format!("key {i} has a non-finite or degenerate value"));
    }
    if let Some(i) = raw
        .tangents
        .iter()
        .position(|[a, b]| !(tangent_ok(a) && tangent_ok(b)))
    {
        return Err(format!("key {i} has a non-finite tangent"));
    }
    Ok(Some(Track {
        interpolation: raw.interpolation,
        times: raw.times.clone(),
        values: raw.values.clone(),
        tangents: raw.tangents.clone(),
    }))
}

fn normalise_rotations(mut t: Track<Quat>) -> Track<Quat> {
    if t.interpolation != Interpolation::CubicSpline {
        for q in &mut t.values {
            *q = q.normalize();
        }
    }
    t
}

mod raw;
pub use raw::{RawClip, RawJointTrack, RawTrack};

#[cfg(test)]
mod tests;
