use glam::{Affine3A, Quat, Vec3};

use super::{AnimError, Skeleton, Transform};

/// How a track moves between its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Hold each key's value until the next key.
    Step,
    /// Lerp; shortest-path slerp for rotations.
    Linear,
    /// Rotations only: spherical quadrangle interpolation with Direct3D's
    /// `D3DXQuaternionSquadSetup` control points (seed 003).
    Squad,
    /// glTF cubic Hermite spline with per-key in and out tangents, scaled by
    /// the key interval; rotations normalised after evaluation.
    CubicSpline,
    /// The nearer of the two surrounding keys (seed 003's rule for matrix keys).
    Nearest,
}

/// One editable keyframe track. Times are in seconds and non-decreasing.
/// `tangents` holds `[in, out]` per key for [`Interpolation::CubicSpline`]
/// and is empty otherwise. An empty track means the channel is not animated.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTrack<T> {
    pub interpolation: Interpolation,
    pub times: Vec<f32>,
    pub values: Vec<T>,
    pub tangents: Vec<[T; 2]>,
}

impl<T> Default for RawTrack<T> {
    fn default() -> Self {
        Self {
            interpolation: Interpolation::Linear,
            times: Vec::new(),
            values: Vec::new(),
            tangents: Vec::new(),
        }
    }
}

impl<T> RawTrack<T> {
    pub fn new(interpolation: Interpolation, times: Vec<f32>, values: Vec<T>) -> Self {
        Self {
            interpolation,
            times,
            values,
            tangents: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn last_time(&self) -> Option<f32> {
        self.times.last().copied()
    }
}

/// The channels that animate one joint. A whole-matrix track (.x key type 4)
/// replaces the other three when present.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawJointTrack {
    /// Skeleton joint index.
    pub joint: usize,
    pub translation: RawTrack<Vec3>,
    pub rotation: RawTrack<Quat>,
    pub scale: RawTrack<Vec3>,
    pub matrix: RawTrack<Affine3A>,
}

impl RawJointTrack {
    pub fn new(joint: usize) -> Self {
        Self {
            joint,
            ..Self::default()
        }
    }
}

/// An editable clip: what loaders produce and tools edit. [`Clip::build`]
/// validates it once into the runtime form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawClip {
    pub name: String,
    /// Seconds. Raised to the last key time if shorter.
    pub duration: f32,
    pub tracks: Vec<RawJointTrack>,
}

/// A validated track of the runtime clip.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Track<T> {
    pub interpolation: Interpolation,
    pub times: Vec<f32>,
    pub values: Vec<T>,
    pub tangents: Vec<[T; 2]>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JointChannels {
    /// Value of every channel that has no track: the skeleton's bind pose.
    pub rest: Transform,
    pub translation: Option<Track<Vec3>>,
    pub rotation: Option<Track<Quat>>,
    pub scale: Option<Track<Vec3>>,
    /// Matrix keys, decomposed once at build time.
    pub matrix: Option<Track<Transform>>,
}

/// A runtime clip: validated, one entry per skeleton joint, untracked
/// channels filled from the skeleton's bind pose.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    name: String,
    duration: f32,
    pub(crate) joints: Vec<JointChannels>,
}

impl Clip {
    /// Validates `raw` against `skeleton`: key times finite and
    /// non-decreasing, values finite, counts consistent, joints in range, at
    /// most one track per joint, SQUAD only on rotations.
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
        let mut joints: Vec<JointChannels> = skeleton
            .bind_local()
            .iter()
            .map(|&rest| JointChannels {
                rest,
                translation: None,
                rotation: None,
                scale: None,
                matrix: None,
            })
            .collect();
        let mut seen = vec![false; skeleton.len()];
        let mut duration = raw.duration;
        for t in &raw.tracks {
            if t.joint >= skeleton.len() {
                return Err(fault(format!(
                    "track for joint {} but the skeleton has {} joints",
                    t.joint,
                    skeleton.len()
                )));
            }
            if std::mem::replace(&mut seen[t.joint], true) {
                return Err(fault(format!("two tracks for joint {}", t.joint)));
            }
            let name = &skeleton.names()[t.joint];
            let ch = &mut joints[t.joint];
            ch.translation =
                build_track(&t.translation, |v| v.is_finite(), |v| v.is_finite(), false)
                    .map_err(|f| fault(format!("joint {name:?} translation: {f}")))?;
            ch.rotation = build_track(
                &t.rotation,
                |q| q.is_finite() && q.length_squared() > 1e-12,
                |q| q.is_finite(),
                true,
            )
            .map_err(|f| fault(format!("joint {name:?} rotation: {f}")))?
            .map(normalise_rotations);
            ch.scale = build_track(&t.scale, |v| v.is_finite(), |v| v.is_finite(), false)
                .map_err(|f| fault(format!("joint {name:?} scale: {f}")))?;
            ch.matrix = build_track(&t.matrix, |m| m.is_finite(), |m| m.is_finite(), false)
                .map_err(|f| fault(format!("joint {name:?} matrix: {f}")))?
                .map(|m| Track {
                    interpolation: m.interpolation,
                    times: m.times,
                    values: m.values.iter().map(Transform::from_affine).collect(),
                    tangents: m
                        .tangents
                        .iter()
                        .map(|[a, b]| [Transform::from_affine(a), Transform::from_affine(b)])
                        .collect(),
                });
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
        }
        Ok(Self {
            name: raw.name.clone(),
            duration,
            joints,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// Number of joints the clip drives (the skeleton's joint count).
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    /// Number of non-empty tracks (each channel of each joint counts once).
    pub fn track_count(&self) -> usize {
        self.joints
            .iter()
            .map(|j| {
                j.translation.is_some() as usize
                    + j.rotation.is_some() as usize
                    + j.scale.is_some() as usize
                    + j.matrix.is_some() as usize
            })
            .sum()
    }
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
