use glam::{Quat, Vec3, Vec4};

use super::clip::{JointChannels, Track};
use super::{AnimError, Clip, Interpolation, Transform};

/// What happens past the clip's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlaybackMode {
    /// Wrap with `fmod(t, duration)` (seed 003); SQUAD neighbours wrap too.
    #[default]
    Loop,
    /// Hold the first key before the start and the last after the end.
    Clamp,
}

/// Per-track key cursors: forward playback finds its keys in O(1); a jump
/// falls back to binary search. One context per (clip, instance).
#[derive(Clone, Debug, Default)]
pub struct SamplingContext {
    cursors: Vec<u32>,
}

impl SamplingContext {
    pub fn new(clip: &Clip) -> Self {
        Self {
            cursors: vec![0; clip.joints.len() * 4],
        }
    }

    fn fit(&mut self, clip: &Clip) {
        if self.cursors.len() != clip.joints.len() * 4 {
            self.cursors = vec![0; clip.joints.len() * 4];
        }
    }
}

/// Samples every joint of a clip at one time into local transforms.
pub struct SamplingJob<'a> {
    pub clip: &'a Clip,
    pub context: &'a mut SamplingContext,
    /// Seconds from the clip's start, before wrapping or clamping.
    pub time: f32,
    pub mode: PlaybackMode,
    /// One transform per skeleton joint.
    pub output: &'a mut [Transform],
}

impl SamplingJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        if self.output.len() != self.clip.joints.len() {
            return Err(AnimError::LengthMismatch {
                what: "sampled transforms",
                expected: self.clip.joints.len(),
                got: self.output.len(),
            });
        }
        if !self.time.is_finite() {
            return Err(AnimError::InvalidJob(format!(
                "sampling time {}",
                self.time
            )));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        self.context.fit(self.clip);
        let d = self.clip.duration();
        let t = match self.mode {
            PlaybackMode::Loop if d > 0.0 => {
                let t = self.time % d;
                if t < 0.0 {
                    t + d
                } else {
                    t
                }
            }
            PlaybackMode::Loop => 0.0,
            PlaybackMode::Clamp => self.time.clamp(0.0, d),
        };
        let wrap = self.mode == PlaybackMode::Loop;
        for (j, (ch, out)) in self
            .clip
            .joints
            .iter()
            .zip(self.output.iter_mut())
            .enumerate()
        {
            let cur = &mut self.context.cursors[j * 4..j * 4 + 4];
            *out = sample_joint(ch, t, wrap, cur);
        }
        Ok(())
    }
}

fn sample_joint(ch: &JointChannels, t: f32, wrap: bool, cur: &mut [u32]) -> Transform {
    if let Some(m) = &ch.matrix {
        let (i, u) = locate(&m.times, t, &mut cur[3]);
        let k = if m.interpolation == Interpolation::Step || u <= 0.5 || i + 1 >= m.values.len() {
            i
        } else {
            i + 1
        };
        return m.values[k];
    }
    Transform {
        translation: ch
            .translation
            .as_ref()
            .map_or(ch.rest.translation, |tr| sample_vec3(tr, t, &mut cur[0])),
        rotation: ch
            .rotation
            .as_ref()
            .map_or(ch.rest.rotation, |tr| sample_quat(tr, t, wrap, &mut cur[1])),
        scale: ch
            .scale
            .as_ref()
            .map_or(ch.rest.scale, |tr| sample_vec3(tr, t, &mut cur[2])),
    }
}

/// Finds key `i` with `times[i] <= t < times[i+1]` and the fraction `u`
/// between them. Before the first key: (0, 0); at or after the last:
/// (last, 0).
fn locate(times: &[f32], t: f32, cursor: &mut u32) -> (usize, f32) {
    let n = times.len();
    if n == 1 || t <= times[0] {
        *cursor = 0;
        return (0, 0.0);
    }
    if t >= times[n - 1] {
        *cursor = (n - 1) as u32;
        return (n - 1, 0.0);
    }
    let c = *cursor as usize;
    let i = if c + 1 < n && times[c] <= t && t < times[c + 1] {
        c
    } else if c + 2 < n && times[c + 1] <= t && t < times[c + 2] {
        c + 1
    } else {
        // partition_point gives the first key later than t; t < times[n-1].
        times.partition_point(|&k| k <= t) - 1
    };
    *cursor = i as u32;
    let span = times[i + 1] - times[i];
    let u = if span > 0.0 {
        (t - times[i]) / span
    } else {
        0.0
    };
    (i, u)
}

fn hermite(u: f32) -> [f32; 4] {
    let u2 = u * u;
    let u3 = u2 * u;
    [
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    ]
}

fn sample_vec3(tr: &Track<Vec3>, t: f32, cursor: &mut u32) -> Vec3 {
    let (i, u) = locate(&tr.times, t, cursor);
    let n = tr.values.len();
    if i + 1 >= n {
        return tr.values[i];
    }
    match tr.interpolation {
        Interpolation::Step => tr.values[i],
        Interpolation::Nearest => tr.values[if u > 0.5 { i + 1 } else { i }],
        Interpolation::Linear | Interpolation::Squad => tr.values[i].lerp(tr.values[i + 1], u),
        Interpolation::CubicSpline => {
            let dt = tr.times[i + 1] - tr.times[i];
            let h = hermite(u);
            tr.values[i] * h[0]
                + tr.tangents[i][1] * (dt * h[1])
                + tr.values[i + 1] * h[2]
                + tr.tangents[i + 1][0] * (dt * h[3])
        }
    }
}

fn sample_quat(tr: &Track<Quat>, t: f32, wrap: bool, cursor: &mut u32) -> Quat {
    let (i, u) = locate(&tr.times, t, cursor);
    let n = tr.values.len();
    if i + 1 >= n {
        return tr.values[i].normalize();
    }
    match tr.interpolation {
        Interpolation::Step => tr.values[i],
        Interpolation::Nearest => tr.values[if u > 0.5 { i + 1 } else { i }],
        Interpolation::Linear => tr.values[i].slerp(tr.values[i + 1], u),
        Interpolation::CubicSpline => {
            let dt = tr.times[i + 1] - tr.times[i];
            let h = hermite(u);
            let v = Vec4::from(tr.values[i]) * h[0]
                + Vec4::from(tr.tangents[i][1]) * (dt * h[1])
                + Vec4::from(tr.values[i + 1]) * h[2]
                + Vec4::from(tr.tangents[i + 1][0]) * (dt * h[3]);
            Quat::from_vec4(v).normalize()
        }
        Interpolation::Squad => {
            let (i0, i3) = if wrap {
                (
                    if i == 0 { n - 1 } else { i - 1 },
                    if i + 2 >= n { i + 2 - n } else { i + 2 },
                )
            } else {
                (i.saturating_sub(1), (i + 2).min(n - 1))
            };
            let v = &tr.values;
            let (a, b, c) = squad_setup(v[i0], v[i], v[i + 1], v[i3]);
            squad(v[i], a, b, c, u)
        }
    }
}

/// `D3DXQuaternionSquad`: `Slerp(Slerp(q1, c, t), Slerp(a, b, t), 2t(1-t))`.
pub(crate) fn squad(q1: Quat, a: Quat, b: Quat, c: Quat, t: f32) -> Quat {
    q1.slerp(c, t).slerp(a.slerp(b, t), 2.0 * t * (1.0 - t))
}

/// `D3DXQuaternionSquadSetup` in Hamilton products: neighbours are flipped
/// into the hemisphere of the key before them, then
/// `A = exp(-(ln(q2 q1^-1) + ln(q0 q1^-1)) / 4) q1`,
/// `B = exp(-(ln(q3 q2^-1) + ln(q1 q2^-1)) / 4) q2`, `C = q2`
/// (D3DX's `Multiply(a, b)` is the Hamilton product `b a`).
pub(crate) fn squad_setup(q0: Quat, q1: Quat, q2: Quat, q3: Quat) -> (Quat, Quat, Quat) {
    let flip = |a: Quat, b: Quat| {
        if (a + b).length_squared() < (a - b).length_squared() {
            -b
        } else {
            b
        }
    };
    let q0 = flip(q1, q0);
    let q2 = flip(q1, q2);
    let q3 = flip(q2, q3);
    let a = quat_exp((quat_ln(q2 * q1.inverse()) + quat_ln(q0 * q1.inverse())) * -0.25) * q1;
    let b = quat_exp((quat_ln(q3 * q2.inverse()) + quat_ln(q1 * q2.inverse())) * -0.25) * q2;
    (a, b, q2)
}

/// Log of a unit quaternion as a pure quaternion (w = 0).
pub(crate) fn quat_ln(q: Quat) -> Vec4 {
    let v = Vec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s < 1e-7 {
        return Vec4::new(v.x, v.y, v.z, 0.0);
    }
    let theta = s.atan2(q.w);
    (v * (theta / s)).extend(0.0)
}

/// Exp of a pure quaternion (w ignored).
pub(crate) fn quat_exp(v: Vec4) -> Quat {
    let v3 = v.truncate();
    let theta = v3.length();
    if theta < 1e-7 {
        return Quat::from_xyzw(v3.x, v3.y, v3.z, 1.0).normalize();
    }
    let s = theta.sin() / theta;
    Quat::from_xyzw(v3.x * s, v3.y * s, v3.z * s, theta.cos())
}
