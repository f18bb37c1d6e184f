use glam::{Quat, Vec3, Vec3A, Vec4};

use super::soa::{PoseRead, PoseWrite};
use crate::anim::{AnimError, SoaPose, Transform};

/// One input of a [`BlendingJob`]: a local pose, its weight, and optionally
/// a per-joint weight mask multiplied into the weight (0 leaves a joint out).
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    /// Local transforms, one per joint of the output.
    pub pose: &'a [Transform],
    /// Non-negative.
    pub weight: f32,
    /// One factor per joint, non-negative; `None` for all ones.
    pub mask: Option<&'a [f32]>,
}

impl<'a> BlendLayer<'a> {
    /// An unmasked layer.
    pub fn new(pose: &'a [Transform], weight: f32) -> Self {
        Self {
            pose,
            weight,
            mask: None,
        }
    }

    /// A layer whose weight is multiplied by `mask`, one factor per joint.
    pub fn masked(pose: &'a [Transform], weight: f32, mask: &'a [f32]) -> Self {
        Self {
            pose,
            weight,
            mask: Some(mask),
        }
    }
}

/// One input of a [`SoaBlendingJob`]: as [`BlendLayer`], the pose in
/// structure-of-arrays form.
#[derive(Clone, Copy, Debug)]
pub struct SoaBlendLayer<'a> {
    /// Local pose, as many joints as the output.
    pub pose: &'a SoaPose,
    /// Non-negative.
    pub weight: f32,
    /// One factor per joint, non-negative; `None` for all ones.
    pub mask: Option<&'a [f32]>,
}

impl<'a> SoaBlendLayer<'a> {
    /// An unmasked layer.
    pub fn new(pose: &'a SoaPose, weight: f32) -> Self {
        Self {
            pose,
            weight,
            mask: None,
        }
    }

    /// A layer whose weight is multiplied by `mask`, one factor per joint.
    pub fn masked(pose: &'a SoaPose, weight: f32, mask: &'a [f32]) -> Self {
        Self {
            pose,
            weight,
            mask: Some(mask),
        }
    }
}

/// A layer of either job, for the code they share.
trait Layer {
    type Pose: PoseRead + ?Sized;
    fn pose(&self) -> &Self::Pose;
    fn weight(&self) -> f32;
    fn mask(&self) -> Option<&[f32]>;

    #[inline(always)]
    fn weight_at(&self, joint: usize) -> f32 {
        match self.mask() {
            Some(m) => self.weight() * m[joint],
            None => self.weight(),
        }
    }
}

impl Layer for BlendLayer<'_> {
    type Pose = [Transform];
    #[inline(always)]
    fn pose(&self) -> &[Transform] {
        self.pose
    }
    #[inline(always)]
    fn weight(&self) -> f32 {
        self.weight
    }
    #[inline(always)]
    fn mask(&self) -> Option<&[f32]> {
        self.mask
    }
}

impl Layer for SoaBlendLayer<'_> {
    type Pose = SoaPose;
    #[inline(always)]
    fn pose(&self) -> &SoaPose {
        self.pose
    }
    #[inline(always)]
    fn weight(&self) -> f32 {
        self.weight
    }
    #[inline(always)]
    fn mask(&self) -> Option<&[f32]> {
        self.mask
    }
}

/// Blends local poses joint by joint.
///
/// Normal layers are averaged with their (masked) weights: translations and
/// scales linearly, rotations by nlerp, each rotation first negated when it
/// lies in the other hemisphere from what has been accumulated so far, so
/// `q` and `-q` blend alike. Where a joint's total weight is below
/// `threshold`, the rest pose makes up the difference (a joint no layer
/// covers gets the rest pose). Additive layers are then applied on top, in
/// order: `t += w dt`, `q = nlerp(identity, dq, w) * q`,
/// `s *= lerp(1, ds, w)`, with deltas from [`additive_delta`].
pub struct BlendingJob<'a> {
    /// Normal layers, averaged by weight.
    pub layers: &'a [BlendLayer<'a>],
    /// Additive layers, applied in order on top of the normal blend.
    pub additive: &'a [BlendLayer<'a>],
    /// The skeleton's bind pose, usually.
    pub rest_pose: &'a [Transform],
    /// Total weight below which the rest pose fills in; 0.1 is a common
    /// choice, 0 only fills joints with no weight at all.
    pub threshold: f32,
    /// Blended local transforms; every pose, mask and `rest_pose` has its length.
    pub output: &'a mut [Transform],
}

/// The additive delta that takes `reference` to `pose`, as the additive
/// layers of [`BlendingJob`] apply it: blending it in with weight 1 on top
/// of `reference` gives back `pose`.
pub fn additive_delta(reference: &Transform, pose: &Transform) -> Transform {
    Transform {
        translation: pose.translation - reference.translation,
        rotation: (pose.rotation * reference.rotation.conjugate()).normalize(),
        scale: pose.scale / reference.scale,
    }
}

impl BlendingJob<'_> {
    /// Checks the job's lengths, weights, masks and threshold without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(
            self.output.len(),
            self.rest_pose.len(),
            self.threshold,
            self.layers,
            self.additive,
        )
    }

    /// Validates the job, then writes `output`.
    pub fn run(self) -> Result<(), AnimError> {
        run_job(
            self.layers,
            self.additive,
            self.rest_pose,
            self.threshold,
            self.output,
            blend_uniform,
        )
    }
}

/// [`BlendingJob`] on poses in structure-of-arrays form ([`SoaPose`]): the
/// same inputs, checks and results. Unmasked layers (up to eight, their
/// total weight at least the threshold) are blended eight joints per
/// register, with no transposes; masks, the rest pose's fill-in and
/// additive layers go joint by joint, as in [`BlendingJob`].
pub struct SoaBlendingJob<'a> {
    /// Normal layers, averaged by weight.
    pub layers: &'a [SoaBlendLayer<'a>],
    /// Additive layers, applied in order on top of the normal blend.
    pub additive: &'a [SoaBlendLayer<'a>],
    /// The skeleton's bind pose, usually.
    pub rest_pose: &'a SoaPose,
    /// Total weight below which the rest pose fills in.
    pub threshold: f32,
    /// Blended pose; every pose, mask and `rest_pose` has its length.
    pub output: &'a mut SoaPose,
}

impl SoaBlendingJob<'_> {
    /// Checks the job's lengths, weights, masks and threshold without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(
            self.output.len(),
            self.rest_pose.len(),
            self.threshold,
            self.layers,
            self.additive,
        )
    }

    /// Validates the job, then writes `output`.
    pub fn run(self) -> Result<(), AnimError> {
        let r = run_job(
            self.layers,
            self.additive,
            self.rest_pose,
            self.threshold,
            &mut *self.output,
            blend_uniform_soa,
        );
        self.output.reset_spare_lanes();
        r
    }
}

/// Either job's `run`: `uniform` blends unmasked layers with weights
/// already divided by their sum.
#[inline(always)]
fn run_job<L: Layer, R: PoseRead + ?Sized, O: PoseWrite + ?Sized>(
    layers: &[L],
    additive: &[L],
    rest_pose: &R,
    threshold: f32,
    output: &mut O,
    uniform: impl FnOnce(&[L], &[f32], &mut O),
) -> Result<(), AnimError> {
    let (n, rest) = (output.joints(), rest_pose.joints());
    if let Some(w) = cross_fade(layers, additive, n, rest, threshold) {
        uniform(layers, &w, output);
        return Ok(());
    }
    validate_job(n, rest, threshold, layers, additive)?;
    if let Some((w, k)) = uniform_weights(layers, threshold) {
        // Same weights for every joint: normalised once.
        uniform(layers, &w[..k], output);
    } else {
        blend_general(layers, rest_pose, threshold, output);
    }
    for layer in additive {
        apply_additive(layer, output);
    }
    Ok(())
}

/// The common cross-fade (two unmasked layers, nothing additive) with
/// validate's checks for it made inline, which spares it the general
/// validation's loops (3 to 4 per cent of a 64-joint blend; an inlined
/// validate does not get it back): its weights divided by their sum, or
/// `None` for anything else, bad input included (the general path and its
/// errors).
#[inline(always)]
fn cross_fade<L: Layer>(
    layers: &[L],
    additive: &[L],
    n: usize,
    rest: usize,
    threshold: f32,
) -> Option<[f32; 2]> {
    let ([a, b], []) = (layers, additive) else {
        return None;
    };
    let fits = a.mask().is_none()
        && b.mask().is_none()
        && a.pose().joints() == n
        && b.pose().joints() == n
        && rest == n
        && usable(a.weight())
        && usable(b.weight())
        && usable(threshold);
    let total = a.weight() + b.weight();
    (fits && total >= threshold && total > 0.0).then(|| [a.weight() / total, b.weight() / total])
}

/// Validated layers with the same weight at every joint (no masks, up to
/// eight, their total at least the threshold): the weights divided by
/// their sum, and how many.
fn uniform_weights<L: Layer>(layers: &[L], threshold: f32) -> Option<([f32; 8], usize)> {
    let unmasked = layers.iter().all(|l| l.mask().is_none());
    let total: f32 = layers.iter().map(|l| l.weight()).sum();
    if !(unmasked && total >= threshold && total > 0.0 && layers.len() <= 8) {
        return None;
    }
    let mut w = [0.0f32; 8];
    for (wi, l) in w.iter_mut().zip(layers) {
        *wi = l.weight() / total;
    }
    Some((w, layers.len()))
}

fn validate_job<L: Layer>(
    n: usize,
    rest: usize,
    threshold: f32,
    layers: &[L],
    additive: &[L],
) -> Result<(), AnimError> {
    if rest != n {
        return Err(AnimError::LengthMismatch {
            what: "rest pose",
            expected: n,
            got: rest,
        });
    }
    if !usable(threshold) {
        return Err(AnimError::InvalidJob(format!(
            "blend threshold {threshold} is not a finite, non-negative number"
        )));
    }
    for (what, layers) in [("blend layer", layers), ("additive layer", additive)] {
        for (i, l) in layers.iter().enumerate() {
            if l.pose().joints() != n {
                return Err(AnimError::LengthMismatch {
                    what,
                    expected: n,
                    got: l.pose().joints(),
                });
            }
            if !usable(l.weight()) {
                return Err(AnimError::InvalidJob(format!(
                    "{what} {i} has weight {}",
                    l.weight()
                )));
            }
            if let Some(m) = l.mask() {
                if m.len() != n {
                    return Err(AnimError::LengthMismatch {
                        what: "blend mask",
                        expected: n,
                        got: m.len(),
                    });
                }
                if let Some(j) = m.iter().position(|w| !usable(*w)) {
                    return Err(AnimError::InvalidJob(format!(
                        "{what} {i} mask has weight {} at joint {j}",
                        m[j]
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Masked layers or the rest pose's fill-in, joint by joint.
fn blend_general<L: Layer, R: PoseRead + ?Sized, O: PoseWrite + ?Sized>(
    layers: &[L],
    rest_pose: &R,
    threshold: f32,
    output: &mut O,
) {
    for j in 0..output.joints() {
        let mut t = Vec3A::ZERO;
        let mut s = Vec3A::ZERO;
        let mut q = Vec4::ZERO;
        let mut total = 0.0;
        for l in layers {
            let w = l.weight_at(j);
            if w <= 0.0 {
                continue;
            }
            accumulate(&l.pose().at(j), w, &mut t, &mut q, &mut s);
            total += w;
        }
        let rest = rest_pose.at(j);
        if total < threshold || total <= 0.0 {
            let w = (threshold - total).max(f32::MIN_POSITIVE);
            accumulate(&rest, w, &mut t, &mut q, &mut s);
            total += w;
        }
        let inv = 1.0 / total;
        output.put(
            j,
            Transform {
                translation: (t * inv).into(),
                rotation: normalize_or(q, rest.rotation),
                scale: (s * inv).into(),
            },
        );
    }
}

/// Unmasked layers with weights already divided by their sum, joint by
/// joint: the definition the SoA kernels are tested against.
fn blend_uniform_scalar<L: Layer, O: PoseWrite + ?Sized>(layers: &[L], w: &[f32], output: &mut O) {
    for j in 0..output.joints() {
        let mut t = Vec3A::ZERO;
        let mut s = Vec3A::ZERO;
        let mut q = Vec4::ZERO;
        for (l, &wl) in layers.iter().zip(w) {
            accumulate(&l.pose().at(j), wl, &mut t, &mut q, &mut s);
        }
        let first = layers[0].pose().at(j).rotation;
        output.put(
            j,
            Transform {
                translation: t.into(),
                rotation: normalize_or(q, first),
                scale: s.into(),
            },
        );
    }
}

/// [`blend_uniform_scalar`] on SoA poses: eight joints per register with
/// AVX2 (every block, spare lanes included), else joint by joint.
fn blend_uniform_soa(layers: &[SoaBlendLayer], w: &[f32], output: &mut SoaPose) {
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() {
        use crate::anim::simd::avx2::{blend_soa, blend_soa2};
        let out = output.blocks_mut();
        // Both calls: AVX2 and FMA checked; validate() made every pose as
        // long as the output, so each has as many blocks; 1 to 8 layers,
        // as many weights.
        if let ([a, b], [wa, wb]) = (layers, w) {
            // SAFETY: as said above, for two layers.
            unsafe { blend_soa2(a.pose.blocks(), b.pose.blocks(), *wa, *wb, out) };
        } else {
            let mut poses: [&[crate::anim::SoaTransforms8]; 8] = [&[]; 8];
            for (p, l) in poses.iter_mut().zip(layers) {
                *p = l.pose.blocks();
            }
            // SAFETY: as said above, for 1 to 8 layers.
            unsafe { blend_soa(&poses[..layers.len()], w, out) };
        }
        return;
    }
    blend_uniform_scalar(layers, w, output);
}

/// A weight, mask factor or threshold a job accepts: finite and not
/// negative.
#[inline(always)]
fn usable(w: f32) -> bool {
    w.is_finite() && w >= 0.0
}

#[inline(always)]
fn accumulate(x: &Transform, w: f32, t: &mut Vec3A, q: &mut Vec4, s: &mut Vec3A) {
    *t += Vec3A::from(x.translation) * w;
    *s += Vec3A::from(x.scale) * w;
    let r = Vec4::from(x.rotation);
    // Hemisphere check against what is accumulated so far.
    let w = if q.dot(r) < 0.0 { -w } else { w };
    *q += r * w;
}

#[inline(always)]
fn normalize_or(q: Vec4, fallback: Quat) -> Quat {
    let len2 = q.length_squared();
    if len2 > 1e-20 {
        Quat::from_vec4(q * len2.sqrt().recip())
    } else {
        fallback
    }
}

/// Unmasked layers with weights already divided by their sum.
fn blend_uniform(layers: &[BlendLayer], w: &[f32], output: &mut [Transform]) {
    if let ([a, b], [wa, wb]) = (layers, w) {
        // The common two-clip cross-fade, without the per-layer loop.
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut start = 0;
        #[cfg(target_arch = "x86_64")]
        if crate::anim::simd::avx2_fma() && crate::anim::simd::avx2::TRANSFORM_PACKED {
            let backwards = crate::anim::simd::avx2::store_runs_into_loads(
                output.as_ptr() as usize,
                &[a.pose.as_ptr() as usize, b.pose.as_ptr() as usize],
            );
            // SAFETY: features and layout checked; validate() made every
            // pose as long as the output.
            unsafe {
                crate::anim::simd::avx2::blend2_either(a.pose, b.pose, *wa, *wb, output, backwards)
            };
            start = output.len() / 8 * 8;
        }
        blend2_scalar(a.pose, b.pose, *wa, *wb, output, start);
        return;
    }
    blend_uniform_scalar(layers, w, output);
}

/// Two layers with weights `wa + wb = 1`, joints `start..`: the definition
/// the fast two-layer kernel is tested against.
fn blend2_scalar(
    a: &[Transform],
    b: &[Transform],
    wa: f32,
    wb: f32,
    output: &mut [Transform],
    start: usize,
) {
    for (j, out) in output.iter_mut().enumerate().skip(start) {
        let (x, y) = (&a[j], &b[j]);
        let qa = Vec4::from(x.rotation);
        let qb = Vec4::from(y.rotation);
        let wbq = if qa.dot(qb) < 0.0 { -wb } else { wb };
        let q = qa * wa + qb * wbq;
        *out = Transform {
            translation: (Vec3A::from(x.translation) * wa + Vec3A::from(y.translation) * wb).into(),
            rotation: normalize_or(q, x.rotation),
            scale: (Vec3A::from(x.scale) * wa + Vec3A::from(y.scale) * wb).into(),
        };
    }
}

fn apply_additive<L: Layer, O: PoseWrite + ?Sized>(layer: &L, output: &mut O) {
    for j in 0..output.joints() {
        let w = layer.weight_at(j);
        if w <= 0.0 {
            continue;
        }
        let d = layer.pose().at(j);
        let dq = if d.rotation.w < 0.0 {
            -d.rotation
        } else {
            d.rotation
        };
        let part = Vec4::from(Quat::IDENTITY).lerp(Vec4::from(dq), w);
        let part = normalize_or(part, Quat::IDENTITY);
        let mut out = output.at(j);
        out.translation += d.translation * w;
        out.rotation = (part * out.rotation).normalize();
        out.scale *= Vec3::ONE + (d.scale - Vec3::ONE) * w;
        output.put(j, out);
    }
}

#[cfg(test)]
mod tests;
