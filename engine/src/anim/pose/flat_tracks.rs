//! A runtime [`Clip`] seen one track at a time, for samplers that are not
//! this crate's CPU jobs (the GPU animation passes, `skin::anim`): every
//! animated channel of every joint with its timeline and its pre-digested
//! data (slerp angles, SQUAD spans with D3DX control points, spline
//! coefficients) copied out of the clip's grouped layouts, so the numbers a
//! GPU sampler reads are the numbers [`crate::anim::SamplingJob`] reads.
//! Read-only: it derives from the built clip and changes nothing in it.

use glam::Quat;

use super::clip::{Clip, SquadSpan, Vec3Field};
use super::interpolation::Interpolation;
use super::transform::Transform;

/// How a flat track is sampled, and so how its data are laid out (in
/// vec4s; `n` keys, `n - 1` intervals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum FlatKind {
    /// Translation or scale, the earlier key until the next (`n` keys).
    Vec3Step = 1,
    /// Translation or scale, the nearer key (`n` keys).
    Vec3Nearest = 2,
    /// Translation or scale, lerp (`n` keys).
    Vec3Linear = 3,
    /// Translation or scale, cubic spline: `c0..c3` per interval.
    Vec3Cubic = 4,
    /// Rotation, the earlier key (`n` keys, hemisphere-continuous).
    QuatStep = 5,
    /// Rotation, the nearer key (`n` keys, hemisphere-continuous).
    QuatNearest = 6,
    /// Rotation, shortest-path slerp: `n` keys flipped into the previous
    /// key's hemisphere, then per interval `(theta, 1/sin theta, 0, 0)`.
    QuatLinear = 7,
    /// Rotation, SQUAD: per interval the span `q1, c, a, b, angles` (five
    /// vec4s) with looping neighbours, then the clamped first and last
    /// spans (five vec4s each) used when the clip does not loop.
    QuatSquad = 8,
    /// Rotation, cubic spline: `c0..c3` per interval, normalised after.
    QuatCubic = 9,
    /// Whole matrix, the earlier key: per key translation, rotation, scale.
    MatrixStep = 10,
    /// Whole matrix, the nearer key: per key translation, rotation, scale.
    MatrixNearest = 11,
}

/// The channel a flat track writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlatChannel {
    /// Translation.
    Translation,
    /// Rotation.
    Rotation,
    /// Scale.
    Scale,
    /// All three (matrix keys).
    Matrix,
}

/// One animated channel of one joint.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatTrack {
    /// Skeleton joint index.
    pub joint: u16,
    /// What it writes.
    pub channel: FlatChannel,
    /// How it is sampled.
    pub kind: FlatKind,
    /// Index into [`FlatClip::timelines`].
    pub timeline: u32,
    /// Its data, laid out as [`FlatKind`] says.
    pub data: Vec<[f32; 4]>,
}

/// A clip, one track at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatClip {
    /// Seconds.
    pub duration: f32,
    /// Per joint: the pose channels without a track take (bind pose with
    /// single-key tracks applied).
    pub rest: Vec<Transform>,
    /// Key times, each at least two keys.
    pub timelines: Vec<Vec<f32>>,
    /// The animated channels.
    pub tracks: Vec<FlatTrack>,
}

fn v3(v: glam::Vec3) -> [f32; 4] {
    [v.x, v.y, v.z, 0.0]
}

fn q4(q: Quat) -> [f32; 4] {
    q.to_array()
}

fn span(s: &SquadSpan, out: &mut Vec<[f32; 4]>) {
    out.extend([q4(s.q1), q4(s.c), q4(s.a), q4(s.b), s.angles.to_array()]);
}

fn channel(f: Vec3Field) -> FlatChannel {
    match f {
        Vec3Field::Translation => FlatChannel::Translation,
        Vec3Field::Scale => FlatChannel::Scale,
    }
}

fn vec3_kind(i: Interpolation) -> FlatKind {
    match i {
        Interpolation::Step => FlatKind::Vec3Step,
        Interpolation::Nearest => FlatKind::Vec3Nearest,
        // SQUAD is refused on vec3 tracks at build; the sampler lerps it.
        Interpolation::Linear | Interpolation::Squad => FlatKind::Vec3Linear,
        Interpolation::CubicSpline => FlatKind::Vec3Cubic,
    }
}

impl Clip {
    /// The clip one track at a time (see [`FlatClip`]).
    pub fn flatten(&self) -> FlatClip {
        let tl = &self.timelines;
        let timelines: Vec<Vec<f32>> = tl
            .keys
            .iter()
            .map(|k| {
                (0..k.len as usize)
                    .map(|i| tl.times[k.at as usize + i * k.stride as usize])
                    .collect()
            })
            .collect();
        let keys = |t: usize| timelines[t].len();
        let mut tracks = Vec::new();
        for b in &self.vec3_batches {
            let nt = b.joints.len();
            let n = keys(b.timeline);
            let kind = vec3_kind(b.interpolation);
            for (t, &joint) in b.joints.iter().enumerate() {
                let data = if kind == FlatKind::Vec3Cubic {
                    (0..n - 1)
                        .flat_map(|i| (0..4).map(move |c| (i * nt + t) * 4 + c))
                        .map(|at| v3(b.data[at]))
                        .collect()
                } else {
                    (0..n).map(|k| v3(b.data[k * nt + t])).collect()
                };
                tracks.push(FlatTrack {
                    joint,
                    channel: channel(b.field),
                    kind,
                    timeline: b.timeline as u32,
                    data,
                });
            }
        }
        for b in &self.quat_batches {
            let nt = b.joints.len();
            let n = keys(b.timeline);
            let groups = nt.div_ceil(8);
            for (t, &joint) in b.joints.iter().enumerate() {
                let mut data = Vec::new();
                let kind = match b.interpolation {
                    Interpolation::Step | Interpolation::Nearest => {
                        data.extend((0..n).map(|k| q4(b.keys[k * nt + t])));
                        if b.interpolation == Interpolation::Step {
                            FlatKind::QuatStep
                        } else {
                            FlatKind::QuatNearest
                        }
                    }
                    Interpolation::Linear => {
                        let (g, lane) = (t / 8, t % 8);
                        for k in 0..n {
                            let r = &b.linear_soa_keys[(k * groups + g) * 4..];
                            data.push([r[0][lane], r[1][lane], r[2][lane], r[3][lane]]);
                        }
                        for i in 0..n - 1 {
                            let r = &b.linear_soa_angles[(i * groups + g) * 2..];
                            data.push([r[0][lane], r[1][lane], 0.0, 0.0]);
                        }
                        FlatKind::QuatLinear
                    }
                    Interpolation::Squad => {
                        for i in 0..n - 1 {
                            span(&b.squad[i * nt + t], &mut data);
                        }
                        span(&b.squad_clamped[t], &mut data);
                        span(&b.squad_clamped[nt + t], &mut data);
                        FlatKind::QuatSquad
                    }
                    Interpolation::CubicSpline => {
                        for i in 0..n - 1 {
                            for c in 0..4 {
                                data.push(b.cubic[(i * nt + t) * 4 + c].to_array());
                            }
                        }
                        FlatKind::QuatCubic
                    }
                };
                tracks.push(FlatTrack {
                    joint,
                    channel: FlatChannel::Rotation,
                    kind,
                    timeline: b.timeline as u32,
                    data,
                });
            }
        }
        let s = &self.solo_vec3;
        for k in 0..s.joints.len() {
            let timeline = s.timelines[k];
            let n = keys(timeline as usize);
            let at = s.offsets[k] as usize;
            tracks.push(FlatTrack {
                joint: s.joints[k],
                channel: channel(s.fields[k]),
                kind: FlatKind::Vec3Linear,
                timeline,
                data: s.keys[at..at + n].iter().map(|&v| v3(v)).collect(),
            });
        }
        let s = &self.solo_quat;
        for k in 0..s.joints.len() {
            let timeline = s.timelines[k];
            let n = keys(timeline as usize);
            let [a, b] = s.offsets[k];
            let (a, b) = (a as usize, b as usize);
            let mut data = Vec::new();
            let kind = if k < s.linear {
                data.extend(s.keys[a..a + n].iter().map(|&q| q4(q)));
                data.extend(
                    s.angles[b..b + n - 1]
                        .iter()
                        .map(|&[t, i]| [t, i, 0.0, 0.0]),
                );
                FlatKind::QuatLinear
            } else {
                for sp in &s.spans[a..a + n - 1] {
                    span(sp, &mut data);
                }
                span(&s.clamped[b], &mut data);
                span(&s.clamped[b + 1], &mut data);
                FlatKind::QuatSquad
            };
            tracks.push(FlatTrack {
                joint: s.joints[k],
                channel: FlatChannel::Rotation,
                kind,
                timeline,
                data,
            });
        }
        for b in &self.matrix_batches {
            let nt = b.joints.len();
            let n = keys(b.timeline);
            let kind = if b.interpolation == Interpolation::Step {
                FlatKind::MatrixStep
            } else {
                FlatKind::MatrixNearest
            };
            for (t, &joint) in b.joints.iter().enumerate() {
                let mut data = Vec::with_capacity(3 * n);
                for k in 0..n {
                    let x = &b.keys[k * nt + t];
                    data.extend([v3(x.translation), q4(x.rotation), v3(x.scale)]);
                }
                tracks.push(FlatTrack {
                    joint,
                    channel: FlatChannel::Matrix,
                    kind,
                    timeline: b.timeline as u32,
                    data,
                });
            }
        }
        FlatClip {
            duration: self.duration(),
            rest: self.rest.clone(),
            timelines,
            tracks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assets::builtin::Character;

    #[test]
    fn every_channel_of_the_character_is_flattened_once() {
        let model = Character::model();
        for clip in &model.clips {
            let f = clip.flatten();
            assert_eq!(f.rest.len(), model.skeleton.len());
            let mut seen = std::collections::HashSet::new();
            for t in &f.tracks {
                assert!(seen.insert((t.joint, t.channel as u8)), "{:?}", t.joint);
                let n = f.timelines[t.timeline as usize].len();
                assert!(n >= 2);
                let want = match t.kind {
                    FlatKind::Vec3Cubic | FlatKind::QuatCubic => 4 * (n - 1),
                    FlatKind::QuatLinear => 2 * n - 1,
                    FlatKind::QuatSquad => 5 * (n + 1),
                    FlatKind::MatrixStep | FlatKind::MatrixNearest => 3 * n,
                    _ => n,
                };
                assert_eq!(t.data.len(), want, "{:?}", t.kind);
                assert!(t
                    .data
                    .iter()
                    .all(|d| glam::Vec4::from_array(*d).is_finite()));
            }
        }
    }
}
