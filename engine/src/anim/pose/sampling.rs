use glam::{Quat, Vec3, Vec4};

use super::clip::{MatrixBatch, QuatBatch, SquadSpan, Vec3Batch, Vec3Field, SQUAD_ROWS};
use super::compressed::decode::sample_packed;
use super::quat::{acos01, sin4, MIN_SLERP_ANGLE};
use super::soa::PoseSink;
use super::timelines::locate_all;
use crate::anim::{AnimError, Clip, Interpolation, SoaPose, Transform};

/// What happens past the clip's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlaybackMode {
    /// Wrap with `fmod(t, duration)` (seed 003), negative times wrapping
    /// backwards; SQUAD neighbours wrap too (the key before the first is
    /// the last, the one after the last is the first).
    #[default]
    Loop,
    /// Hold the first key before the start and the last after the end;
    /// SQUAD's missing neighbours repeat the end keys.
    Clamp,
}

impl PlaybackMode {
    /// Clip-local time in `[0, duration]` for an unwrapped time.
    #[inline]
    pub fn wrap(self, time: f32, duration: f32) -> f32 {
        match self {
            PlaybackMode::Loop if duration > 0.0 => {
                let t = time % duration;
                if t < 0.0 {
                    t + duration
                } else {
                    t
                }
            }
            PlaybackMode::Loop => 0.0,
            PlaybackMode::Clamp => time.clamp(0.0, duration),
        }
    }
}

/// Per-timeline key cursors: forward playback finds its keys in O(1) (the
/// cursor's interval or the next); any other jump counts the keys (see
/// `timelines`: with AVX2, short timelines are counted eight at a time
/// and need no cursor). One context per playing instance; a context moved
/// to another clip resizes itself, its cursors being hints that are
/// always checked. It holds a cursor per morph-weight track too, for
/// [`WeightSamplingJob`](crate::anim::WeightSamplingJob).
#[derive(Clone, Debug, Default)]
pub struct SamplingContext {
    cursors: Vec<u32>,
    /// One key cursor per weight track of the clip.
    weight_cursors: Vec<u32>,
    /// This sample's interval and fraction per timeline.
    interval: Vec<u32>,
    fraction: Vec<f32>,
}

impl SamplingContext {
    /// Cursors for `clip`'s timelines, all at the first key.
    pub fn new(clip: &Clip) -> Self {
        let n = clip.timelines.len();
        Self {
            cursors: vec![0; n],
            weight_cursors: vec![0; clip.weights.len()],
            interval: vec![0; n],
            fraction: vec![0.0; n],
        }
    }

    /// The weight-track cursors, resized to `clip` if needed.
    pub(crate) fn fit_weights(&mut self, clip: &Clip) -> &mut [u32] {
        if self.weight_cursors.len() != clip.weights.len() {
            self.weight_cursors = vec![0; clip.weights.len()];
        }
        &mut self.weight_cursors
    }

    fn fit(&mut self, clip: &Clip) {
        let n = clip.timelines.len();
        if self.cursors.len() != n {
            self.cursors = vec![0; n];
            self.interval = vec![0; n];
            self.fraction = vec![0.0; n];
        }
    }

    /// Forgets the cursors (the next sample binary-searches).
    pub fn reset(&mut self) {
        self.cursors.fill(0);
        self.weight_cursors.fill(0);
    }
}

/// Samples every joint of a clip at one time into local transforms.
pub struct SamplingJob<'a> {
    /// The clip to sample.
    pub clip: &'a Clip,
    /// Key cursors for this instance; resized to `clip` if needed.
    pub context: &'a mut SamplingContext,
    /// Seconds from the clip's start, before wrapping or clamping.
    pub time: f32,
    /// Loop or clamp past the clip's ends.
    pub mode: PlaybackMode,
    /// One transform per skeleton joint.
    pub output: &'a mut [Transform],
}

impl SamplingJob<'_> {
    /// Checks the output length and the time without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(self.clip, self.time, self.output.len())
    }

    /// Validates the job, then writes `output`.
    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        sample_into(self.clip, self.context, self.time, self.mode, self.output);
        Ok(())
    }
}

/// [`SamplingJob`] into a pose in structure-of-arrays form ([`SoaPose`]):
/// the same inputs, checks and results. Rotations sampled eight tracks at
/// a time are stored as whole rows where the eight are one block's joints
/// (joints `8k..8k + 8`, as a clip built from a skeleton's tracks in
/// joint order has them), with no transpose.
pub struct SoaSamplingJob<'a> {
    /// The clip to sample.
    pub clip: &'a Clip,
    /// Key cursors for this instance; resized to `clip` if needed.
    pub context: &'a mut SamplingContext,
    /// Seconds from the clip's start, before wrapping or clamping.
    pub time: f32,
    /// Loop or clamp past the clip's ends.
    pub mode: PlaybackMode,
    /// As many joints as the clip's skeleton.
    pub output: &'a mut SoaPose,
}

impl SoaSamplingJob<'_> {
    /// Checks the output length and the time without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(self.clip, self.time, self.output.len())
    }

    /// Validates the job, then writes `output`.
    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        sample_into(self.clip, self.context, self.time, self.mode, self.output);
        self.output.reset_spare_lanes();
        Ok(())
    }
}

fn validate_job(clip: &Clip, time: f32, joints: usize) -> Result<(), AnimError> {
    if joints != clip.joint_count() {
        return Err(AnimError::LengthMismatch {
            what: "sampled transforms",
            expected: clip.joint_count(),
            got: joints,
        });
    }
    if !time.is_finite() {
        return Err(AnimError::InvalidJob(format!("sampling time {time}")));
    }
    Ok(())
}

/// The sampling itself, on a validated job.
fn sample_into<P: PoseSink + ?Sized>(
    clip: &Clip,
    ctx: &mut SamplingContext,
    time: f32,
    mode: PlaybackMode,
    out: &mut P,
) {
    ctx.fit(clip);
    let t = mode.wrap(time, clip.duration());
    let looping = mode == PlaybackMode::Loop;
    for &j in &clip.rest_joints {
        out.put(j as usize, clip.rest[j as usize]);
    }
    let (iv, fr) = (&mut ctx.interval, &mut ctx.fraction);
    locate_all(&clip.timelines, t, &mut ctx.cursors, iv, fr);
    for b in &clip.vec3_batches {
        let (i, u) = (iv[b.timeline], fr[b.timeline]);
        sample_vec3(b, i as usize, u, out);
    }
    for b in &clip.quat_batches {
        let (i, u) = (iv[b.timeline], fr[b.timeline]);
        let last = clip.timelines.key_count(b.timeline) - 2;
        sample_quat(b, i as usize, u, looping, last, out);
    }
    sample_solo(clip, iv, fr, looping, out);
    for b in &clip.matrix_batches {
        let (i, u) = (iv[b.timeline], fr[b.timeline]);
        sample_matrix(b, i as usize, u, out);
    }
    if let Some(p) = clip.packed.as_deref() {
        sample_packed(p, t, out);
    }
}

#[inline(always)]
fn set_vec3<P: PoseSink + ?Sized>(out: &mut P, j: usize, field: Vec3Field, v: Vec3) {
    match field {
        Vec3Field::Translation => out.set_translation(j, v),
        Vec3Field::Scale => out.set_scale(j, v),
    }
}

/// `k0 * (1 - u) + k1 * u` over two keys' rows of a vec3 batch (flat
/// floats, three a track), a chunk of tracks at a time (a loop the
/// compiler vectorises), each result handed to its joint.
#[inline(always)]
fn lerp_rows<P: PoseSink + ?Sized>(
    joints: &[u16],
    f: Vec3Field,
    k0: &[f32],
    k1: &[f32],
    u: f32,
    out: &mut P,
) {
    let (w0, w1) = (1.0 - u, u);
    const CHUNK: usize = 32;
    let mut mixed = [0.0f32; CHUNK * 3];
    for (c, joints) in joints.chunks(CHUNK).enumerate() {
        let at = c * CHUNK * 3;
        let len = joints.len() * 3;
        let rows = k0[at..at + len].iter().zip(&k1[at..at + len]);
        for (m, (&a, &z)) in mixed[..len].iter_mut().zip(rows) {
            // a*(1-u) + c*u is exact at both ends, unlike a + (c-a)*u.
            *m = a * w0 + z * w1;
        }
        for (&j, v) in joints.iter().zip(mixed.chunks_exact(3)) {
            set_vec3(out, j as usize, f, Vec3::new(v[0], v[1], v[2]));
        }
    }
}

/// [`lerp_rows`] compiled for AVX2 (no FMA contraction: the same results).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lerp_rows_avx2<P: PoseSink + ?Sized>(
    joints: &[u16],
    f: Vec3Field,
    k0: &[f32],
    k1: &[f32],
    u: f32,
    out: &mut P,
) {
    lerp_rows(joints, f, k0, k1, u, out)
}

fn sample_vec3<P: PoseSink + ?Sized>(b: &Vec3Batch, i: usize, u: f32, out: &mut P) {
    let nt = b.joints.len();
    let f = b.field;
    match b.interpolation {
        Interpolation::Linear | Interpolation::Squad => {
            let k0: &[f32] = bytemuck::cast_slice(&b.data[i * nt..(i + 1) * nt]);
            let k1: &[f32] = bytemuck::cast_slice(&b.data[(i + 1) * nt..(i + 2) * nt]);
            #[cfg(target_arch = "x86_64")]
            if crate::anim::simd::avx2_fma() {
                // SAFETY: AVX2 checked (the same code, eight lanes wide).
                unsafe { lerp_rows_avx2(&b.joints, f, k0, k1, u, out) };
                return;
            }
            lerp_rows(&b.joints, f, k0, k1, u, out);
        }
        Interpolation::Step | Interpolation::Nearest => {
            let next = if b.interpolation == Interpolation::Step {
                u >= 1.0
            } else {
                u > 0.5
            };
            let k = if next { i + 1 } else { i };
            let keys = &b.data[k * nt..(k + 1) * nt];
            for (&j, &v) in b.joints.iter().zip(keys) {
                set_vec3(out, j as usize, f, v);
            }
        }
        Interpolation::CubicSpline => {
            let coeffs = &b.data[i * nt * 4..(i + 1) * nt * 4];
            for (&j, c) in b.joints.iter().zip(coeffs.chunks_exact(4)) {
                let v = ((c[3] * u + c[2]) * u + c[1]) * u + c[0];
                set_vec3(out, j as usize, f, v);
            }
        }
    }
}

/// Weights of a slerp across a fixed angle: `sin((1-u) theta) / sin theta`
/// and `sin(u theta) / sin theta`.
#[inline(always)]
fn fixed_slerp(a: Quat, b: Quat, theta: f32, inv_sin: f32, u: f32) -> Vec4 {
    let s = sin4(Vec4::new((1.0 - u) * theta, u * theta, 0.0, 0.0)) * inv_sin;
    Vec4::from(a) * s.x + Vec4::from(b) * s.y
}

/// `Squad(q1, a, b, c, u)` on a precomputed span: the two fixed-end slerps
/// share one sine polynomial, the outer slerp takes the short way.
#[inline(always)]
pub(crate) fn squad_span(s: &SquadSpan, u: f32) -> Quat {
    let an = s.angles;
    let w = sin4(Vec4::new(
        (1.0 - u) * an.x,
        u * an.x,
        (1.0 - u) * an.z,
        u * an.z,
    )) * Vec4::new(an.y, an.y, an.w, an.w);
    let p = Vec4::from(s.q1) * w.x + Vec4::from(s.c) * w.y;
    let r = Vec4::from(s.a) * w.z + Vec4::from(s.b) * w.w;
    let h = 2.0 * u * (1.0 - u);
    let d = p.dot(r);
    let r = if d < 0.0 { -r } else { r };
    let theta = acos01(d.abs().min(1.0)).max(MIN_SLERP_ANGLE);
    let s = sin4(Vec4::new((1.0 - h) * theta, h * theta, theta, 0.0));
    let inv = 1.0 / s.z;
    Quat::from_vec4(p * (s.x * inv) + r * (s.y * inv))
}

fn sample_quat<P: PoseSink + ?Sized>(
    b: &QuatBatch,
    i: usize,
    u: f32,
    looping: bool,
    last: usize,
    out: &mut P,
) {
    let nt = b.joints.len();
    match b.interpolation {
        Interpolation::Linear => {
            let groups = nt.div_ceil(8);
            let k0 = &b.linear_soa_keys[i * groups * 4..];
            let k1 = &b.linear_soa_keys[(i + 1) * groups * 4..];
            let an = &b.linear_soa_angles[i * groups * 2..];
            #[cfg(target_arch = "x86_64")]
            if nt >= 3 && crate::anim::simd::avx2_fma() {
                for (g, joints) in b.joints.chunks(8).enumerate() {
                    // SAFETY: features checked; the row slices hold whole
                    // groups; every joint is inside the output.
                    unsafe {
                        crate::anim::simd::avx2::slerp8(
                            &k0[g * 4..g * 4 + 4],
                            &k1[g * 4..g * 4 + 4],
                            &an[g * 2..g * 2 + 2],
                            u,
                            joints,
                            out,
                        )
                    };
                }
                return;
            }
            // A lane at a time from the same rows.
            let quat = |rows: &[[f32; 8]], g: usize, lane: usize| {
                let r = &rows[g * 4..g * 4 + 4];
                Quat::from_xyzw(r[0][lane], r[1][lane], r[2][lane], r[3][lane])
            };
            for (t, &j) in b.joints.iter().enumerate() {
                let (g, lane) = (t / 8, t % 8);
                let (theta, inv) = (an[g * 2][lane], an[g * 2 + 1][lane]);
                let (q0, q1) = (quat(k0, g, lane), quat(k1, g, lane));
                out.set_rotation(
                    j as usize,
                    Quat::from_vec4(fixed_slerp(q0, q1, theta, inv, u)),
                );
            }
        }
        Interpolation::Step | Interpolation::Nearest => {
            let next = if b.interpolation == Interpolation::Step {
                u >= 1.0
            } else {
                u > 0.5
            };
            let k = if next { i + 1 } else { i };
            for (&j, &q) in b.joints.iter().zip(&b.keys[k * nt..(k + 1) * nt]) {
                out.set_rotation(j as usize, q);
            }
        }
        Interpolation::Squad => {
            // Eight lanes pay off from a few tracks on; a track alone (key
            // times shared with no other) goes the scalar way.
            #[cfg(target_arch = "x86_64")]
            if nt >= 3 && crate::anim::simd::avx2_fma() {
                let groups = nt.div_ceil(8);
                let rows = if !looping && (i == 0 || i == last) {
                    let at = if i == 0 { 0 } else { groups };
                    &b.squad_clamped_soa[at * SQUAD_ROWS..(at + groups) * SQUAD_ROWS]
                } else {
                    &b.squad_soa[i * groups * SQUAD_ROWS..(i + 1) * groups * SQUAD_ROWS]
                };
                for (rows, joints) in rows.chunks_exact(SQUAD_ROWS).zip(b.joints.chunks(8)) {
                    // SAFETY: features checked; every joint index is below the
                    // output length (validated at build and in validate()).
                    unsafe { crate::anim::simd::avx2::squad8(rows, u, joints, out) };
                }
                return;
            }
            let spans = if !looping && (i == 0 || i == last) {
                let at = if i == 0 { 0 } else { nt };
                &b.squad_clamped[at..at + nt]
            } else {
                &b.squad[i * nt..(i + 1) * nt]
            };
            for (&j, s) in b.joints.iter().zip(spans) {
                out.set_rotation(j as usize, squad_span(s, u));
            }
        }
        Interpolation::CubicSpline => {
            let coeffs = &b.cubic[i * nt * 4..(i + 1) * nt * 4];
            for (&j, c) in b.joints.iter().zip(coeffs.chunks_exact(4)) {
                let v = ((c[3] * u + c[2]) * u + c[1]) * u + c[0];
                // glTF: rotations are normalised after the spline.
                out.set_rotation(j as usize, Quat::from_vec4(v.normalize_or(Vec4::W)));
            }
        }
    }
}

/// Tracks in the solo layout, each with its own timeline's interval.
fn sample_solo<P: PoseSink + ?Sized>(
    clip: &Clip,
    iv: &[u32],
    fr: &[f32],
    looping: bool,
    out: &mut P,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA; the clip was built whole and
        // `out` holds one transform per joint (validated by the job).
        unsafe {
            sample_solo_avx2(clip, iv, fr, out);
            sample_solo_squad_avx2(clip, iv, fr, looping, out);
        }
        return;
    }
    sample_solo_scalar(clip, iv, fr, looping, out);
}

/// [`sample_solo`] a track at a time: the definition the AVX2 path is
/// tested against.
fn sample_solo_scalar<P: PoseSink + ?Sized>(
    clip: &Clip,
    iv: &[u32],
    fr: &[f32],
    looping: bool,
    out: &mut P,
) {
    let s = &clip.solo_vec3;
    for k in 0..s.joints.len() {
        let tl = s.timelines[k] as usize;
        let (i, u) = (iv[tl], fr[tl]);
        let at = s.offsets[k] as usize + i as usize;
        let v = s.keys[at] * (1.0 - u) + s.keys[at + 1] * u;
        set_vec3(out, s.joints[k] as usize, s.fields[k], v);
    }
    let s = &clip.solo_quat;
    for k in 0..s.joints.len() {
        let tl = s.timelines[k] as usize;
        let (i, u) = (iv[tl] as usize, fr[tl]);
        let q = if k >= s.linear {
            squad_span(solo_squad_span(clip, k, i, looping), u)
        } else {
            let [a, b] = s.offsets[k];
            let (a, b) = (a as usize + i, b as usize + i);
            let [theta, inv] = s.angles[b];
            Quat::from_vec4(fixed_slerp(s.keys[a], s.keys[a + 1], theta, inv, u))
        };
        out.set_rotation(s.joints[k] as usize, q);
    }
}

/// Solo SQUAD track `k`'s span for interval `i`: the clamped one at the
/// clip's ends when not looping.
#[inline(always)]
fn solo_squad_span(clip: &Clip, k: usize, i: usize, looping: bool) -> &SquadSpan {
    let s = &clip.solo_quat;
    let [a, b] = s.offsets[k];
    let last = clip.timelines.key_count(s.timelines[k] as usize) - 2;
    if !looping && (i == 0 || i == last) {
        &s.clamped[b as usize + usize::from(i != 0)]
    } else {
        &s.spans[a as usize + i]
    }
}

/// The solo SQUAD rotations eight tracks at a time: each lane's span
/// (the clamped one at a clip's ends when not looping, as the scalar
/// loop) and fraction, then `squad_span`'s arithmetic eight lanes wide.
/// A last group of fewer than eight repeats its last track in the spare
/// lanes and stores only its own.
///
/// # Safety
/// As [`sample_solo_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sample_solo_squad_avx2<P: PoseSink + ?Sized>(
    clip: &Clip,
    iv: &[u32],
    fr: &[f32],
    looping: bool,
    out: &mut P,
) {
    let s = &clip.solo_quat;
    let n = s.joints.len();
    let mut base = s.linear;
    while base < n {
        let lanes = (n - base).min(8);
        let mut us = [0.0f32; 8];
        let spans: [&SquadSpan; 8] = std::array::from_fn(|l| {
            let k = base + l.min(lanes - 1);
            let tl = s.timelines[k] as usize;
            us[l] = fr[tl];
            solo_squad_span(clip, k, iv[tl] as usize, looping)
        });
        // SAFETY: AVX2 and FMA enabled; every joint is inside `out`.
        unsafe {
            crate::anim::simd::avx2::squad_solo8(&spans, &us, &s.joints[base..base + lanes], out)
        };
        base += 8;
    }
}

/// The solo translation and scale tracks and the linear solo rotations
/// with AVX2. The vec3 tracks go through the `solo_vec3` kernel (each
/// lerped in one register: the scalar loop's arithmetic, bit for bit).
/// Rotations go
/// eight tracks at a time to `slerp_solo8`: each lane's keys, interval
/// angle, reciprocal sine and fraction. A last group of fewer than eight
/// repeats its last track in the spare lanes and stores only its own.
///
/// # Safety
/// The CPU has AVX2 and FMA; `clip` was built by `Clip::build`; `iv`,
/// `fr` hold every timeline's interval and fraction (as `locate_all`
/// writes them) and `out` one transform per joint (a `SoaPose` of the
/// clip's joint count).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sample_solo_avx2<P: PoseSink + ?Sized>(clip: &Clip, iv: &[u32], fr: &[f32], out: &mut P) {
    // SAFETY: AVX2 and FMA enabled here; the clip was built whole (so
    // its solo vec3 layout is as the kernel needs), `iv` and `fr` hold
    // every timeline's, and `out` one transform per joint.
    unsafe { crate::anim::simd::avx2::solo_vec3(&clip.solo_vec3, iv, fr, out) };
    let q = &clip.solo_quat;
    let n = q.linear;
    let mut base = 0;
    while base < n {
        let lanes = (n - base).min(8);
        let (mut theta, mut inv, mut uu, mut at) = ([0.0f32; 8], [0.0f32; 8], [0.0f32; 8], [0; 8]);
        for l in 0..8 {
            let k = base + l.min(lanes - 1);
            // SAFETY: k < n <= the track count; `tl` is a timeline of the
            // clip (so inside `iv`, `fr`); the interval's angle entry
            // belongs to the track (built so).
            unsafe {
                let tl = *q.timelines.get_unchecked(k) as usize;
                let (i, u) = (*iv.get_unchecked(tl) as usize, *fr.get_unchecked(tl));
                let [a, b] = *q.offsets.get_unchecked(k);
                [theta[l], inv[l]] = *q.angles.get_unchecked(b as usize + i);
                uu[l] = u;
                at[l] = a as usize + i;
            }
        }
        let joints = &q.joints[base..base + lanes];
        // SAFETY: AVX2 and FMA enabled; each lane's keys are its track's
        // interval's (built so); every joint is inside `out`.
        unsafe {
            crate::anim::simd::avx2::slerp_solo8(&q.keys, &at, &theta, &inv, &uu, joints, out)
        };
        base += 8;
    }
}

fn sample_matrix<P: PoseSink + ?Sized>(b: &MatrixBatch, i: usize, u: f32, out: &mut P) {
    let nt = b.joints.len();
    // Seed 003: `iKey = (0.5 < fLerpValue) ? dwp3 : dwp2`.
    let next = if b.interpolation == Interpolation::Step {
        u >= 1.0
    } else {
        u > 0.5
    };
    let k = if next { i + 1 } else { i };
    for (&j, v) in b.joints.iter().zip(&b.keys[k * nt..(k + 1) * nt]) {
        out.put(j as usize, *v);
    }
}

/// Plays a clip: keeps the unwrapped time, advances it by `dt * rate`, and
/// samples at `start + time`. A negative rate plays backwards.
#[derive(Clone, Debug)]
pub struct Playback {
    /// Seconds played so far (before wrapping), already scaled by the rate.
    pub time: f32,
    /// Speed multiplier: 1 is real time, 0 pauses, negative plays backwards.
    pub rate: f32,
    /// Clip time at which playback starts.
    pub start: f32,
    /// Loop or clamp past the clip's ends.
    pub mode: PlaybackMode,
    /// Key cursors; resized when sampling another clip.
    pub context: SamplingContext,
}

impl Playback {
    /// Playback from the clip's start, at rate 1.
    pub fn new(clip: &Clip, mode: PlaybackMode) -> Self {
        Self {
            time: 0.0,
            rate: 1.0,
            start: 0.0,
            mode,
            context: SamplingContext::new(clip),
        }
    }

    /// Moves the play head by `dt` seconds of real time.
    pub fn advance(&mut self, dt: f32) {
        self.time += dt * self.rate;
    }

    /// The clip-local time that the next sample uses, in `[0, duration]`.
    pub fn clip_time(&self, clip: &Clip) -> f32 {
        self.mode.wrap(self.start + self.time, clip.duration())
    }

    /// The unwrapped sampling time of the play head, its own time first
    /// wrapped when looping (which keeps the f32 small however long it
    /// plays).
    pub(crate) fn head(&mut self, clip: &Clip) -> f32 {
        if self.mode == PlaybackMode::Loop && clip.duration() > 0.0 {
            self.time %= clip.duration();
        }
        self.start + self.time
    }

    /// Samples `clip` at the play head.
    pub fn sample(&mut self, clip: &Clip, output: &mut [Transform]) -> Result<(), AnimError> {
        let time = self.head(clip);
        validate_job(clip, time, output.len())?;
        sample_into(clip, &mut self.context, time, self.mode, output);
        Ok(())
    }

    /// [`sample`](Self::sample) into a pose in structure-of-arrays form.
    pub fn sample_soa(&mut self, clip: &Clip, output: &mut SoaPose) -> Result<(), AnimError> {
        let time = self.head(clip);
        validate_job(clip, time, output.len())?;
        sample_into(clip, &mut self.context, time, self.mode, output);
        output.reset_spare_lanes();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
