use glam::{Quat, Vec3, Vec4};

use super::clip::{MatrixBatch, QuatBatch, SquadSpan, Vec3Batch, Vec3Field, SQUAD_ROWS};
use super::quat::{acos01, sin4, MIN_SLERP_ANGLE};
#[cfg(target_arch = "x86_64")]
use super::soa::soa_float;
use super::soa::PoseSink;
use super::timelines::locate_all;
use super::{AnimError, Clip, Interpolation, SoaPose, Transform};

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
/// always checked.
#[derive(Clone, Debug, Default)]
pub struct SamplingContext {
    cursors: Vec<u32>,
    /// This sample's interval and fraction per timeline.
    interval: Vec<u32>,
    fraction: Vec<f32>,
}

impl SamplingContext {
    pub fn new(clip: &Clip) -> Self {
        let n = clip.timelines.len();
        Self {
            cursors: vec![0; n],
            interval: vec![0; n],
            fraction: vec![0.0; n],
        }
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
        validate_job(self.clip, self.time, self.output.len())
    }

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
    pub clip: &'a Clip,
    pub context: &'a mut SamplingContext,
    /// Seconds from the clip's start, before wrapping or clamping.
    pub time: f32,
    pub mode: PlaybackMode,
    /// As many joints as the clip's skeleton.
    pub output: &'a mut SoaPose,
}

impl SoaSamplingJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(self.clip, self.time, self.output.len())
    }

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
            if super::simd::avx2_fma() {
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
            if nt >= 3 && super::simd::avx2_fma() {
                for (g, joints) in b.joints.chunks(8).enumerate() {
                    // SAFETY: features checked; the row slices hold whole
                    // groups; every joint is inside the output.
                    unsafe {
                        super::simd::x86::slerp8(
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
            if nt >= 3 && super::simd::avx2_fma() {
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
                    unsafe { super::simd::x86::squad8(rows, u, joints, out) };
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
    if super::simd::avx2_fma() {
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
        unsafe { super::simd::x86::squad_solo8(&spans, &us, &s.joints[base..base + lanes], out) };
        base += 8;
    }
}

/// The solo translation and scale tracks and the linear solo rotations
/// with AVX2. A vec3 track lerps its two keys in one register (each key
/// one 16-byte load; the keys end with a padding key) and stores the
/// three floats: the scalar loop's arithmetic, bit for bit. Rotations go
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
    use std::arch::x86_64::*;
    use std::mem::offset_of;
    let s = &clip.solo_vec3;
    let (t_at, s_at) = (
        offset_of!(Transform, translation),
        offset_of!(Transform, scale),
    );
    let keys = s.keys.as_ptr() as *const f32;
    debug_assert!(
        P::SOA
            || s.joints
                .iter()
                .all(|&j| (j as usize) < out.as_transforms().len())
    );
    debug_assert!(
        !P::SOA
            || s.joints
                .iter()
                .all(|&j| soa_float(j as usize, 9) < out.as_blocks().len() * 80)
    );
    // Transforms through `op`, a SoaPose's rows through `bp` (the other
    // is empty and unused).
    let op = out.as_transforms().as_mut_ptr() as *mut u8;
    let bp = out.as_blocks().as_mut_ptr() as *mut f32;
    let size = std::mem::size_of::<Transform>();
    for k in 0..s.joints.len() {
        // SAFETY (the block): built so: every index below is inside its
        // array, keys `at` and `at + 1` are a track's (the padding key
        // after the last), and the joint inside `out`.
        unsafe {
            let tl = *s.timelines.get_unchecked(k) as usize;
            let (i, u) = (*iv.get_unchecked(tl), *fr.get_unchecked(tl));
            let at = *s.offsets.get_unchecked(k) as usize + i as usize;
            let k0 = _mm_loadu_ps(keys.add(at * 3));
            let k1 = _mm_loadu_ps(keys.add(at * 3 + 3));
            let r = _mm_add_ps(
                _mm_mul_ps(k0, _mm_set1_ps(1.0 - u)),
                _mm_mul_ps(k1, _mm_set1_ps(u)),
            );
            let field = if *s.fields.get_unchecked(k) == Vec3Field::Scale {
                s_at
            } else {
                t_at
            };
            let j = *s.joints.get_unchecked(k) as usize;
            if P::SOA {
                // x, y, z into their three rows of the joint's block.
                let row = if field == s_at { 7 } else { 0 };
                let dst = bp.add(soa_float(j, row));
                _mm_store_ss(dst, r);
                _mm_store_ss(dst.add(8), _mm_movehdup_ps(r));
                _mm_store_ss(dst.add(16), _mm_movehl_ps(r, r));
                continue;
            }
            let dst = op.add(j * size + field) as *mut f32;
            _mm_store_sd(dst as *mut f64, _mm_castps_pd(r));
            _mm_store_ss(dst.add(2), _mm_movehl_ps(r, r));
        }
    }
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
        unsafe { super::simd::x86::slerp_solo8(&q.keys, &at, &theta, &inv, &uu, joints, out) };
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
    pub mode: PlaybackMode,
    pub context: SamplingContext,
}

impl Playback {
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
    fn head(&mut self, clip: &Clip) -> f32 {
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
mod tests {
    use super::super::quat::reference as r;
    use super::*;
    use crate::anim::{RawClip, RawJointTrack, RawTrack, Skeleton};
    use glam::Affine3A;
    use rand::{Rng, SeedableRng};

    fn skeleton(n: usize) -> Skeleton {
        let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let names = (0..n).map(|i| format!("j{i}")).collect();
        Skeleton::new(names, &parents, vec![Transform::IDENTITY; n])
            .unwrap()
            .0
    }

    fn sample(clip: &Clip, t: f32, mode: PlaybackMode) -> Vec<Transform> {
        let mut out = vec![Transform::IDENTITY; clip.joint_count()];
        let mut ctx = SamplingContext::new(clip);
        SamplingJob {
            clip,
            context: &mut ctx,
            time: t,
            mode,
            output: &mut out,
        }
        .run()
        .unwrap();
        out
    }

    fn rotation_clip(interp: Interpolation, keys: &[Quat], times: &[f32]) -> Clip {
        let mut track = RawJointTrack::new(0);
        track.rotation = RawTrack::new(interp, times.to_vec(), keys.to_vec());
        let raw = RawClip {
            name: "r".into(),
            duration: 0.0,
            tracks: vec![track],
        };
        Clip::build(&raw, &skeleton(1)).unwrap()
    }

    fn random_keys(n: usize, seed: u64) -> Vec<Quat> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                Quat::from_euler(
                    glam::EulerRot::XYZ,
                    rng.gen_range(-3.0..3.0),
                    rng.gen_range(-1.5..1.5),
                    rng.gen_range(-3.0..3.0),
                )
            })
            .collect()
    }

    /// Seed 003's SetTime, lines 391-395: `i0 = i1 - 1; i3 = i2 + 1;
    /// if (i0 < 0) i0 += n; if (i3 >= n) i3 -= n;`, then
    /// SquadSetup(q[i0], q[i1], q[i2], q[i3]) and Squad(q[i1], A, B, C, u),
    /// evaluated with the f64 reference.
    fn seed_003_squad(keys: &[Quat], i1: i64, u: f64) -> r::Q {
        let n = keys.len() as i64;
        let i2 = i1 + 1;
        let mut i0 = i1 - 1;
        let mut i3 = i2 + 1;
        if i0 < 0 {
            i0 += n;
        }
        if i3 >= n {
            i3 -= n;
        }
        let q = |i: i64| r::from_f32(keys[i as usize]);
        let (a, b, c) = r::squad_setup(q(i0), q(i1), q(i2), q(i3));
        r::squad(q(i1), a, b, c, u)
    }

    #[test]
    fn squad_track_wraps_neighbours_as_seed_003() {
        let keys = random_keys(6, 1);
        let times = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5];
        let clip = rotation_clip(Interpolation::Squad, &keys, &times);
        for (i1, &start) in times.iter().enumerate().take(5) {
            for u in [0.1f32, 0.37, 0.5, 0.81] {
                let t = start + 0.5 * u;
                let got = sample(&clip, t, PlaybackMode::Loop)[0].rotation;
                let want = seed_003_squad(&keys, i1 as i64, u as f64);
                assert!(r::dist(got, want) < 1e-5, "interval {i1} u {u}");
            }
        }
        // The first interval really uses the last key as its predecessor:
        // changing it changes the result.
        let mut other = keys.clone();
        other[5] = Quat::from_rotation_x(1.0);
        let clip2 = rotation_clip(Interpolation::Squad, &other, &times);
        let a = sample(&clip, 0.2, PlaybackMode::Loop)[0].rotation;
        let b = sample(&clip2, 0.2, PlaybackMode::Loop)[0].rotation;
        assert!(a.dot(b).abs() < 1.0 - 1e-6);
    }

    #[test]
    fn wide_batches_match_the_reference() {
        // Ten tracks on one timeline take the eight-lane paths where the CPU
        // has them; each is checked against the f64 formulas.
        let times: Vec<f32> = (0..7).map(|k| k as f32 * 0.25).collect();
        let keys: Vec<Vec<Quat>> = (0..10).map(|j| random_keys(7, 100 + j)).collect();
        for interp in [Interpolation::Squad, Interpolation::Linear] {
            let tracks = (0..10)
                .map(|j| {
                    let mut t = RawJointTrack::new(j);
                    t.rotation = RawTrack::new(interp, times.clone(), keys[j].clone());
                    t
                })
                .collect();
            let raw = RawClip {
                name: "wide".into(),
                duration: 0.0,
                tracks,
            };
            let clip = Clip::build(&raw, &skeleton(10)).unwrap();
            assert_eq!(clip.timeline_count(), 1);
            for t in [0.05f32, 0.3, 0.8, 1.49] {
                let i1 = (t / 0.25) as i64;
                let u = (t - i1 as f32 * 0.25) / 0.25;
                let out = sample(&clip, t, PlaybackMode::Loop);
                for (j, k) in keys.iter().enumerate() {
                    let want = match interp {
                        Interpolation::Squad => seed_003_squad(k, i1, u as f64),
                        _ => r::slerp(
                            r::from_f32(k[i1 as usize]),
                            r::from_f32(k[i1 as usize + 1]),
                            u as f64,
                        ),
                    };
                    assert!(
                        r::dist(out[j].rotation, want) < 1e-5,
                        "{interp:?} t {t} joint {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn squad_track_clamps_neighbours_without_looping() {
        let keys = random_keys(4, 2);
        let times = [0.0, 1.0, 2.0, 3.0];
        let clip = rotation_clip(Interpolation::Squad, &keys, &times);
        let q = |i: usize| r::from_f32(keys[i]);
        for (i, (i0, i3)) in [(0usize, (0usize, 2usize)), (1, (0, 3)), (2, (1, 3))] {
            let (a, b, c) = r::squad_setup(q(i0), q(i), q(i + 1), q(i3));
            let want = r::squad(q(i), a, b, c, 0.3);
            let got = sample(&clip, i as f32 + 0.3, PlaybackMode::Clamp)[0].rotation;
            assert!(r::dist(got, want) < 1e-5, "interval {i}");
        }
    }

    #[test]
    fn squad_track_passes_through_its_keys() {
        let keys = random_keys(5, 3);
        let times = [0.0, 0.3, 0.7, 1.0, 1.6];
        let clip = rotation_clip(Interpolation::Squad, &keys, &times);
        for mode in [PlaybackMode::Loop, PlaybackMode::Clamp] {
            for (k, &t) in times.iter().enumerate().take(4) {
                let got = sample(&clip, t, mode)[0].rotation;
                assert!(got.dot(keys[k]).abs() > 1.0 - 1e-6, "key {k} {mode:?}");
            }
        }
        let end = sample(&clip, 1.6, PlaybackMode::Clamp)[0].rotation;
        assert!(end.dot(keys[4]).abs() > 1.0 - 1e-6);
    }

    #[test]
    fn cubic_spline_matches_gltf_by_hand() {
        // glTF 2.0 Appendix C: p(t) = (2t^3-3t^2+1) v0 + td (t^3-2t^2+t) b0
        // + (-2t^3+3t^2) v1 + td (t^3-t^2) a1. With td = 2 and t = 0.25:
        // h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875, so
        // x = 0.84375 + 2*0.140625 + 4*0.15625 = 1.75,
        // y = 2*0.84375 + 2*2*(-0.046875) = 1.5,
        // z = 3*0.84375 - 0.15625 = 2.375.
        let mut track = RawJointTrack::new(0);
        track.translation = RawTrack {
            interpolation: Interpolation::CubicSpline,
            times: vec![1.0, 3.0],
            values: vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 0.0, -1.0)],
            tangents: vec![
                [Vec3::new(9.0, 9.0, 9.0), Vec3::new(1.0, 0.0, 0.0)],
                [Vec3::new(0.0, 2.0, 0.0), Vec3::new(-7.0, 5.0, 3.0)],
            ],
        };
        // Rotation: zero tangents, halfway: (v0 + v1) / 2 normalised, with
        // v0 = identity and v1 = 180 degrees about z: (0, 0, 1, 1) / sqrt 2.
        track.rotation = RawTrack {
            interpolation: Interpolation::CubicSpline,
            times: vec![1.0, 3.0],
            values: vec![Quat::IDENTITY, Quat::from_xyzw(0.0, 0.0, 1.0, 0.0)],
            tangents: vec![[Quat::from_xyzw(0.0, 0.0, 0.0, 0.0); 2]; 2],
        };
        let raw = RawClip {
            name: "c".into(),
            duration: 3.0,
            tracks: vec![track],
        };
        let clip = Clip::build(&raw, &skeleton(1)).unwrap();
        let out = sample(&clip, 1.5, PlaybackMode::Clamp)[0];
        assert!(
            out.translation
                .abs_diff_eq(Vec3::new(1.75, 1.5, 2.375), 1e-5),
            "{out:?}"
        );
        let out = sample(&clip, 2.0, PlaybackMode::Clamp)[0];
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!(out
            .rotation
            .abs_diff_eq(Quat::from_xyzw(0.0, 0.0, h, h), 1e-6));
    }

    #[test]
    fn linear_step_and_nearest_by_hand() {
        let mut track = RawJointTrack::new(0);
        track.translation = RawTrack::new(
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![Vec3::ZERO, Vec3::new(2.0, 4.0, 6.0)],
        );
        // 0 to 90 degrees about z: halfway is 45 degrees.
        track.rotation = RawTrack::new(
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![
                Quat::IDENTITY,
                Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            ],
        );
        track.scale = RawTrack::new(
            Interpolation::Step,
            vec![0.0, 0.5, 1.0],
            vec![Vec3::ONE, Vec3::splat(2.0), Vec3::splat(3.0)],
        );
        let mut t2 = RawJointTrack::new(1);
        let m = |x: f32| Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
        t2.matrix = RawTrack::new(Interpolation::Nearest, vec![0.0, 1.0], vec![m(1.0), m(2.0)]);
        let raw = RawClip {
            name: "l".into(),
            duration: 1.0,
            tracks: vec![track, t2],
        };
        let clip = Clip::build(&raw, &skeleton(2)).unwrap();
        let out = sample(&clip, 0.25, PlaybackMode::Clamp);
        assert!(out[0]
            .translation
            .abs_diff_eq(Vec3::new(0.5, 1.0, 1.5), 1e-6));
        assert_eq!(out[0].scale, Vec3::ONE);
        assert_eq!(out[1].translation.x, 1.0);
        let out = sample(&clip, 0.5, PlaybackMode::Clamp);
        let s = (22.5f32).to_radians();
        assert!(out[0]
            .rotation
            .abs_diff_eq(Quat::from_xyzw(0.0, 0.0, s.sin(), s.cos()), 1e-6));
        assert_eq!(out[0].scale, Vec3::splat(2.0));
        // Exactly half way the seed keeps the earlier matrix key.
        assert_eq!(out[1].translation.x, 1.0);
        let out = sample(&clip, 0.51, PlaybackMode::Clamp);
        assert_eq!(out[1].translation.x, 2.0);
        let out = sample(&clip, 5.0, PlaybackMode::Clamp);
        assert!(out[0]
            .translation
            .abs_diff_eq(Vec3::new(2.0, 4.0, 6.0), 1e-6));
        assert_eq!(out[0].scale, Vec3::splat(3.0));
    }

    fn big_clip(joints: usize, shared: bool) -> Clip {
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let tracks = (0..joints)
            .map(|j| {
                let mut t = RawJointTrack::new(j);
                let times = |rng: &mut rand::rngs::StdRng| -> Vec<f32> {
                    if shared {
                        (0..30).map(|k| k as f32 / 29.0).collect()
                    } else {
                        let mut v: Vec<f32> = (0..30)
                            .map(|k| (k as f32 + rng.gen_range(-0.3..0.3)) / 29.0)
                            .collect();
                        v[0] = 0.0;
                        v[29] = 1.0;
                        v
                    }
                };
                let tt = times(&mut rng);
                t.translation = RawTrack::new(
                    Interpolation::Linear,
                    tt.clone(),
                    tt.iter()
                        .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
                        .collect(),
                );
                let tr = times(&mut rng);
                t.rotation = RawTrack::new(
                    if j % 2 == 0 {
                        Interpolation::Squad
                    } else {
                        Interpolation::Linear
                    },
                    tr.clone(),
                    random_keys(30, j as u64),
                );
                let ts = times(&mut rng);
                t.scale = RawTrack::new(
                    Interpolation::Linear,
                    ts.clone(),
                    ts.iter()
                        .map(|_| Vec3::splat(rng.gen_range(0.5..2.0)))
                        .collect(),
                );
                t
            })
            .collect();
        let raw = RawClip {
            name: "big".into(),
            duration: 1.0,
            tracks,
        };
        Clip::build(&raw, &skeleton(joints)).unwrap()
    }

    #[test]
    fn cached_cursors_agree_with_fresh_search() {
        for shared in [true, false] {
            let clip = big_clip(8, shared);
            assert_eq!(clip.timeline_count() == 1, shared);
            let mut ctx = SamplingContext::new(&clip);
            let mut out = vec![Transform::IDENTITY; 8];
            let mut rng = rand::rngs::StdRng::seed_from_u64(4);
            let mut t = 0.0f32;
            for step in 0..400 {
                t = if step % 50 == 49 {
                    rng.gen_range(-3.0..3.0)
                } else {
                    t + 1.0 / 60.0
                };
                SamplingJob {
                    clip: &clip,
                    context: &mut ctx,
                    time: t,
                    mode: PlaybackMode::Loop,
                    output: &mut out,
                }
                .run()
                .unwrap();
                assert_eq!(out, sample(&clip, t, PlaybackMode::Loop), "t {t}");
            }
        }
    }

    /// The AVX2 solo sampler against the scalar loop on a clip of
    /// unshared key times (every track solo; 21 joints: ten linear and
    /// eleven SQUAD rotations, so whole and part groups of eight), looping
    /// and not: translations and scales bit for bit, linear rotations
    /// within 2e-7 and SQUAD ones within 1e-6 (the polynomials in FMA
    /// form).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn solo_avx2_matches_scalar() {
        if !crate::anim::simd::avx2_fma() {
            eprintln!("no AVX2: the solo kernel is not used on this CPU");
            return;
        }
        let n = 21;
        let clip = big_clip(n, false);
        assert_eq!(clip.solo_quat.linear, 10);
        assert_eq!(clip.solo_vec3.joints.len(), 2 * n);
        let mut rng = rand::rngs::StdRng::seed_from_u64(31);
        // Both ends (the first and last intervals take clamped SQUAD spans
        // when not looping) and between.
        let mut ts: Vec<f32> = vec![-0.5, 0.0, 0.01, 0.99, 1.0, 1.5];
        ts.extend((0..60).map(|_| rng.gen_range(0.0..1.0f32)));
        for (t, looping) in ts.into_iter().flat_map(|t| [(t, true), (t, false)]) {
            let mut ctx = SamplingContext::new(&clip);
            let (iv, fr) = (&mut ctx.interval, &mut ctx.fraction);
            locate_all(&clip.timelines, t, &mut ctx.cursors, iv, fr);
            let mut want = vec![Transform::IDENTITY; n];
            let mut got = want.clone();
            sample_solo_scalar(&clip, iv, fr, looping, &mut want[..]);
            // SAFETY: AVX2 checked; a whole clip and one transform a joint.
            unsafe {
                sample_solo_avx2(&clip, iv, fr, &mut got[..]);
                sample_solo_squad_avx2(&clip, iv, fr, looping, &mut got[..]);
            }
            for j in 0..n {
                assert_eq!(got[j].translation, want[j].translation, "t {t} joint {j}");
                assert_eq!(got[j].scale, want[j].scale, "t {t} joint {j}");
                let (g, w) = (Vec4::from(got[j].rotation), Vec4::from(want[j].rotation));
                if j % 2 == 0 {
                    // SQUAD: two sine polynomials and an arccosine in
                    // FMA form against the scalar ones.
                    assert!(
                        (g - w).abs().max_element() < 1e-6,
                        "squad t {t} looping {looping} joint {j} {g} {w}"
                    );
                    assert_ne!(g, Vec4::from(Quat::IDENTITY), "t {t} joint {j}");
                } else {
                    assert!(
                        (g - w).abs().max_element() < 2e-7,
                        "t {t} joint {j} {g} {w}"
                    );
                    assert_ne!(g, Vec4::from(Quat::IDENTITY), "t {t} joint {j}");
                }
            }
        }
    }

    /// A clip of `n` joints whose rotation tracks take `interp(j)`
    /// (`None`: no tracks at all, the joint keeps its bind pose).
    fn mixed_clip(n: usize, interp: impl Fn(usize) -> Option<Interpolation>) -> Clip {
        let mut rng = rand::rngs::StdRng::seed_from_u64(17);
        let times: Vec<f32> = (0..12).map(|k| k as f32 / 11.0).collect();
        let tracks = (0..n)
            .filter_map(|j| {
                let ip = interp(j)?;
                let mut t = RawJointTrack::new(j);
                t.translation = RawTrack::new(
                    Interpolation::Linear,
                    times.clone(),
                    times
                        .iter()
                        .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
                        .collect(),
                );
                t.rotation = RawTrack::new(ip, times.clone(), random_keys(12, 100 + j as u64));
                t.scale = RawTrack::new(
                    Interpolation::Step,
                    times.clone(),
                    times
                        .iter()
                        .map(|_| Vec3::splat(rng.gen_range(0.5..2.0)))
                        .collect(),
                );
                Some(t)
            })
            .collect();
        let raw = RawClip {
            name: "mixed".into(),
            duration: 1.0,
            tracks,
        };
        let names = (0..n).map(|i| format!("j{i}")).collect();
        let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let bind: Vec<Transform> = (0..n)
            .map(|i| {
                Transform::from_translation_rotation(
                    Vec3::X * i as f32,
                    Quat::from_rotation_z(0.1 * i as f32),
                )
            })
            .collect();
        let (sk, _) = Skeleton::new(names, &parents, bind).unwrap();
        Clip::build(&raw, &sk).unwrap()
    }

    /// Sampling into a SoaPose gives the same transforms, bit for bit, as
    /// sampling into a slice: whole blocks of linear rotations (row
    /// stores), scattered ones (lane stores), SQUAD, step, solo tracks
    /// (unshared key times), joints with no tracks; the spare lanes stay
    /// identity.
    #[test]
    fn soa_sampling_matches_transforms() {
        let mut clips: Vec<(String, Clip)> = Vec::new();
        for n in [1usize, 8, 13, 21, 64] {
            for shared in [true, false] {
                clips.push((format!("big {n} {shared}"), big_clip(n, shared)));
            }
            clips.push((
                format!("linear {n}"),
                mixed_clip(n, |_| Some(Interpolation::Linear)),
            ));
            clips.push((
                format!("mixed {n}"),
                mixed_clip(n, |j| match j % 5 {
                    0 => Some(Interpolation::Linear),
                    1 => Some(Interpolation::Squad),
                    2 => Some(Interpolation::Step),
                    3 => None,
                    _ => Some(Interpolation::Linear),
                }),
            ));
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(18);
        for (name, clip) in &clips {
            let n = clip.joint_count();
            let mut ctx = SamplingContext::new(clip);
            let mut soa = SoaPose::identity(n);
            if let Some(b) = soa.blocks_mut().last_mut() {
                b.rotation[0] = [5.0; 8];
            }
            for k in 0..25 {
                let t = if k < 3 {
                    k as f32 * 0.5
                } else {
                    rng.gen_range(-0.5..1.5)
                };
                for mode in [PlaybackMode::Loop, PlaybackMode::Clamp] {
                    let want = sample(clip, t, mode);
                    SoaSamplingJob {
                        clip,
                        context: &mut ctx,
                        time: t,
                        mode,
                        output: &mut soa,
                    }
                    .run()
                    .unwrap();
                    assert_eq!(soa.to_vec(), want, "{name} t {t} {mode:?}");
                    let last = soa.blocks().last().unwrap();
                    for lane in n % 8..if n % 8 == 0 { 0 } else { 8 } {
                        assert_eq!(last.get(lane), Transform::IDENTITY, "{name} lane {lane}");
                    }
                }
            }
        }
        // Its checks are the slice job's.
        let clip = &clips[0].1;
        let mut ctx = SamplingContext::new(clip);
        let mut wrong = SoaPose::identity(clip.joint_count() + 1);
        let job = |output: &mut SoaPose, time: f32, ctx: &mut SamplingContext| {
            SoaSamplingJob {
                clip,
                context: ctx,
                time,
                mode: PlaybackMode::Loop,
                output,
            }
            .run()
        };
        assert!(job(&mut wrong, 0.0, &mut ctx).is_err());
        let mut right = SoaPose::identity(clip.joint_count());
        assert!(job(&mut right, f32::NAN, &mut ctx).is_err());
        assert!(job(&mut right, 0.25, &mut ctx).is_ok());
    }

    #[test]
    fn loop_wraps_like_fmod() {
        let clip = big_clip(3, true);
        let a = sample(&clip, 0.3, PlaybackMode::Loop);
        for t in [1.3f32, 5.3, -0.7] {
            let b = sample(&clip, t, PlaybackMode::Loop);
            for (x, y) in a.iter().zip(&b) {
                assert!(x.translation.abs_diff_eq(y.translation, 1e-4), "{t}");
                assert!(x.rotation.dot(y.rotation).abs() > 1.0 - 1e-5, "{t}");
            }
        }
    }

    #[test]
    fn untracked_channels_keep_the_bind_pose_and_single_keys_hold() {
        let bind = Transform {
            translation: Vec3::new(1.0, 2.0, 3.0),
            rotation: Quat::from_rotation_y(0.4),
            scale: Vec3::splat(2.0),
        };
        let (s, _) = Skeleton::new(vec!["a".into()], &[None], vec![bind]).unwrap();
        let mut t = RawJointTrack::new(0);
        t.translation = RawTrack::new(Interpolation::Linear, vec![0.5], vec![Vec3::X]);
        let raw = RawClip {
            name: "k".into(),
            duration: 1.0,
            tracks: vec![t],
        };
        let clip = Clip::build(&raw, &s).unwrap();
        assert_eq!(clip.track_count(), 1);
        let out = sample(&clip, 0.7, PlaybackMode::Loop)[0];
        assert_eq!(out.translation, Vec3::X);
        assert_eq!(out.rotation, bind.rotation);
        assert_eq!(out.scale, bind.scale);
    }

    #[test]
    fn bad_jobs_are_errors() {
        let clip = big_clip(2, true);
        let mut ctx = SamplingContext::new(&clip);
        let mut out = vec![Transform::IDENTITY; 3];
        let job = SamplingJob {
            clip: &clip,
            context: &mut ctx,
            time: 0.0,
            mode: PlaybackMode::Loop,
            output: &mut out,
        };
        assert!(job.run().is_err());
        let mut out = vec![Transform::IDENTITY; 2];
        let job = SamplingJob {
            clip: &clip,
            context: &mut ctx,
            time: f32::NAN,
            mode: PlaybackMode::Loop,
            output: &mut out,
        };
        assert!(job.run().is_err());
    }

    #[test]
    fn playback_rate_and_start() {
        let clip = big_clip(2, true);
        let mut p = Playback::new(&clip, PlaybackMode::Loop);
        p.rate = 2.0;
        p.start = 0.25;
        p.advance(0.5);
        assert!((p.clip_time(&clip) - 0.25).abs() < 1e-6);
        let mut out = vec![Transform::IDENTITY; 2];
        p.sample(&clip, &mut out).unwrap();
        assert_eq!(out, sample(&clip, 0.25, PlaybackMode::Loop));
        let mut soa = SoaPose::identity(2);
        p.sample_soa(&clip, &mut soa).unwrap();
        assert_eq!(soa.to_vec(), out);
        p.rate = -1.0;
        p.advance(0.5);
        assert!((p.clip_time(&clip) - 0.75).abs() < 1e-6);
        p.sample_soa(&clip, &mut soa).unwrap();
        assert_eq!(soa.to_vec(), sample(&clip, 0.75, PlaybackMode::Loop));
        assert!(p.sample_soa(&clip, &mut SoaPose::identity(3)).is_err());
    }
}
