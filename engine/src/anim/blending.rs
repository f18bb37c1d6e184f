use glam::{Quat, Vec3, Vec3A, Vec4};

use super::soa::{PoseRead, PoseWrite};
use super::{AnimError, SoaPose, Transform};

/// One input of a [`BlendingJob`]: a local pose, its weight, and optionally
/// a per-joint weight mask multiplied into the weight (0 leaves a joint out).
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    pub pose: &'a [Transform],
    /// Non-negative.
    pub weight: f32,
    /// One factor per joint, non-negative; `None` for all ones.
    pub mask: Option<&'a [f32]>,
}

impl<'a> BlendLayer<'a> {
    pub fn new(pose: &'a [Transform], weight: f32) -> Self {
        Self {
            pose,
            weight,
            mask: None,
        }
    }

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
    pub pose: &'a SoaPose,
    /// Non-negative.
    pub weight: f32,
    /// One factor per joint, non-negative; `None` for all ones.
    pub mask: Option<&'a [f32]>,
}

impl<'a> SoaBlendLayer<'a> {
    pub fn new(pose: &'a SoaPose, weight: f32) -> Self {
        Self {
            pose,
            weight,
            mask: None,
        }
    }

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
    pub layers: &'a [BlendLayer<'a>],
    pub additive: &'a [BlendLayer<'a>],
    /// The skeleton's bind pose, usually.
    pub rest_pose: &'a [Transform],
    /// Total weight below which the rest pose fills in; 0.1 is a common
    /// choice, 0 only fills joints with no weight at all.
    pub threshold: f32,
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
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(
            self.output.len(),
            self.rest_pose.len(),
            self.threshold,
            self.layers,
            self.additive,
        )
    }

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
    pub layers: &'a [SoaBlendLayer<'a>],
    pub additive: &'a [SoaBlendLayer<'a>],
    /// The skeleton's bind pose, usually.
    pub rest_pose: &'a SoaPose,
    /// Total weight below which the rest pose fills in.
    pub threshold: f32,
    pub output: &'a mut SoaPose,
}

impl SoaBlendingJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(
            self.output.len(),
            self.rest_pose.len(),
            self.threshold,
            self.layers,
            self.additive,
        )
    }

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
    if super::simd::avx2_fma() {
        use super::simd::x86::{blend_soa, blend_soa2};
        let out = output.blocks_mut();
        // SAFETY (both calls): AVX2 and FMA checked; validate() made every
        // pose as long as the output, so each has as many blocks; 1 to 8
        // layers, as many weights.
        if let ([a, b], [wa, wb]) = (layers, w) {
            unsafe { blend_soa2(a.pose.blocks(), b.pose.blocks(), *wa, *wb, out) };
        } else {
            let mut poses: [&[super::SoaTransforms8]; 8] = [&[]; 8];
            for (p, l) in poses.iter_mut().zip(layers) {
                *p = l.pose.blocks();
            }
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
        if super::simd::avx2_fma() && super::simd::x86::TRANSFORM_PACKED {
            // SAFETY: features and layout checked; validate() made every
            // pose as long as the output.
            let backwards = super::simd::x86::store_runs_into_loads(
                output.as_ptr() as usize,
                &[a.pose.as_ptr() as usize, b.pose.as_ptr() as usize],
            );
            unsafe { super::simd::x86::blend2_either(a.pose, b.pose, *wa, *wb, output, backwards) };
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
mod tests {
    use super::*;

    fn tr(t: Vec3, q: Quat, s: f32) -> Transform {
        Transform {
            translation: t,
            rotation: q,
            scale: Vec3::splat(s),
        }
    }

    fn run(layers: &[BlendLayer], additive: &[BlendLayer], rest: &[Transform]) -> Vec<Transform> {
        let mut out = vec![Transform::IDENTITY; rest.len()];
        BlendingJob {
            layers,
            additive,
            rest_pose: rest,
            threshold: 0.1,
            output: &mut out,
        }
        .run()
        .unwrap();
        out
    }

    #[test]
    fn weighted_average_by_hand() {
        let a = [tr(Vec3::ZERO, Quat::IDENTITY, 1.0); 2];
        let b = [tr(
            Vec3::new(4.0, 0.0, 8.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            3.0,
        ); 2];
        let rest = [Transform::IDENTITY; 2];
        // Equal weights: translation halfway, scale 2, and the normalised
        // sum of identity and 90 degrees about z is exactly 45 degrees.
        let out = run(
            &[BlendLayer::new(&a, 1.0), BlendLayer::new(&b, 1.0)],
            &[],
            &rest,
        );
        assert!(out[0]
            .translation
            .abs_diff_eq(Vec3::new(2.0, 0.0, 4.0), 1e-6));
        assert!(out[0].scale.abs_diff_eq(Vec3::splat(2.0), 1e-6));
        assert!(out[0]
            .rotation
            .abs_diff_eq(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4), 1e-6));
        // 1:3 weights: a quarter of the way.
        let out = run(
            &[BlendLayer::new(&a, 0.5), BlendLayer::new(&b, 1.5)],
            &[],
            &rest,
        );
        assert!(out[1]
            .translation
            .abs_diff_eq(Vec3::new(3.0, 0.0, 6.0), 1e-6));
        // The other hemisphere's copy of b blends the same (three layers
        // take the general path).
        let nb = [tr(b[0].translation, -b[0].rotation, 3.0); 2];
        let z = [Transform::IDENTITY; 2];
        let out2 = run(
            &[
                BlendLayer::new(&a, 0.5),
                BlendLayer::new(&nb, 1.5),
                BlendLayer::new(&z, 0.0),
            ],
            &[],
            &rest,
        );
        assert!(out2[1].rotation.dot(out[1].rotation).abs() > 1.0 - 1e-6);
        assert!(out2[1].translation.abs_diff_eq(out[1].translation, 1e-6));
    }

    #[test]
    fn masks_threshold_and_rest_pose() {
        let a = [tr(Vec3::X, Quat::IDENTITY, 1.0); 3];
        let b = [tr(Vec3::Y, Quat::IDENTITY, 1.0); 3];
        let rest = [tr(Vec3::Z, Quat::from_rotation_x(0.5), 2.0); 3];
        let mask = [1.0, 0.0, 0.0];
        let out = run(
            &[
                BlendLayer::masked(&a, 1.0, &mask),
                BlendLayer::masked(&b, 1.0, &[1.0, 1.0, 0.0]),
            ],
            &[],
            &rest,
        );
        assert!(out[0]
            .translation
            .abs_diff_eq(Vec3::new(0.5, 0.5, 0.0), 1e-6));
        assert!(out[1].translation.abs_diff_eq(Vec3::Y, 1e-6));
        // No layer covers joint 2: the rest pose.
        assert!(out[2].translation.abs_diff_eq(Vec3::Z, 1e-6));
        assert!(out[2].rotation.abs_diff_eq(rest[2].rotation, 1e-6));
        // Weight 0.05 under a 0.1 threshold: half rest pose.
        let out = run(&[BlendLayer::new(&a, 0.05)], &[], &rest);
        assert!(out[0]
            .translation
            .abs_diff_eq(Vec3::new(0.5, 0.0, 0.5), 1e-6));
    }

    #[test]
    fn additive_delta_round_trips() {
        let reference = [tr(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_rotation_y(0.3),
            1.5,
        )];
        let pose = [tr(
            Vec3::new(0.0, 1.0, 5.0),
            Quat::from_rotation_x(-0.8),
            3.0,
        )];
        let delta = [additive_delta(&reference[0], &pose[0])];
        let full = run(
            &[BlendLayer::new(&reference, 1.0)],
            &[BlendLayer::new(&delta, 1.0)],
            &reference,
        );
        assert!(full[0].translation.abs_diff_eq(pose[0].translation, 1e-5));
        assert!(full[0].rotation.dot(pose[0].rotation).abs() > 1.0 - 1e-6);
        assert!(full[0].scale.abs_diff_eq(pose[0].scale, 1e-5));
        let none = run(
            &[BlendLayer::new(&reference, 1.0)],
            &[BlendLayer::new(&delta, 0.0)],
            &reference,
        );
        assert!(none[0]
            .translation
            .abs_diff_eq(reference[0].translation, 1e-6));
        assert!(none[0].rotation.abs_diff_eq(reference[0].rotation, 1e-6));
        // Half weight: half the translation delta.
        let half = run(
            &[BlendLayer::new(&reference, 1.0)],
            &[BlendLayer::new(&delta, 0.5)],
            &reference,
        );
        assert!(half[0]
            .translation
            .abs_diff_eq(Vec3::new(0.5, 1.5, 4.0), 1e-6));
    }

    /// `n` random transforms, rotations in either hemisphere, translations
    /// scaled by `reach`.
    fn random_pose(rng: &mut impl rand::Rng, n: usize, reach: f32) -> Vec<Transform> {
        (0..n)
            .map(|_| Transform {
                translation: Vec3::new(rng.gen(), rng.gen(), rng.gen()) * reach,
                rotation: Quat::from_euler(
                    glam::EulerRot::XYZ,
                    rng.gen_range(-3.0..3.0),
                    rng.gen_range(-1.5..1.5),
                    rng.gen_range(-3.0..3.0),
                ) * if rng.gen_bool(0.5) { -1.0 } else { 1.0 },
                scale: Vec3::new(rng.gen(), rng.gen(), rng.gen()),
            })
            .collect()
    }

    #[test]
    fn fast_two_layer_blend_matches_the_general_loop() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(61);
        let a = random_pose(&mut rng, 21, 1.0);
        let b = random_pose(&mut rng, 21, 1.0);
        let rest = vec![Transform::IDENTITY; 21];
        let fast = run(
            &[BlendLayer::new(&a, 0.3), BlendLayer::new(&b, 0.9)],
            &[],
            &rest,
        );
        // A mask of ones takes the general loop.
        let ones = vec![1.0; 21];
        let slow = run(
            &[BlendLayer::masked(&a, 0.3, &ones), BlendLayer::new(&b, 0.9)],
            &[],
            &rest,
        );
        for j in 0..21 {
            assert!(
                fast[j].translation.abs_diff_eq(slow[j].translation, 1e-6),
                "{j}"
            );
            assert!(fast[j].scale.abs_diff_eq(slow[j].scale, 1e-6), "{j}");
            assert!(fast[j].rotation.dot(slow[j].rotation) > 1.0 - 1e-6, "{j}");
        }
    }

    /// The kernel itself against the scalar two-layer loop, both ways
    /// through the joints (which one a job takes depends on addresses).
    #[test]
    fn fast_two_layer_kernel_matches_the_scalar_loop_both_ways() {
        #[cfg(target_arch = "x86_64")]
        if crate::anim::simd::avx2_fma() && crate::anim::simd::x86::TRANSFORM_PACKED {
            use rand::SeedableRng;
            let mut rng = rand::rngs::StdRng::seed_from_u64(62);
            // No block, one (no pipeline), two (both fronts, then both
            // backs), three (one trip of the loop), more.
            for n in [5, 8, 13, 16, 24, 29, 40, 64] {
                let (a, b) = (
                    random_pose(&mut rng, n, 10.0),
                    random_pose(&mut rng, n, 10.0),
                );
                let (wa, wb) = (0.35, 0.65);
                let mut want = vec![Transform::IDENTITY; n];
                blend2_scalar(&a, &b, wa, wb, &mut want, 0);
                for backwards in [false, true] {
                    let mut got = vec![Transform::IDENTITY; n];
                    // SAFETY: features and layout checked, lengths equal.
                    unsafe {
                        crate::anim::simd::x86::blend2_either(&a, &b, wa, wb, &mut got, backwards)
                    };
                    for j in 0..n / 8 * 8 {
                        let (g, w) = (&got[j], &want[j]);
                        assert!(g.translation.abs_diff_eq(w.translation, 1e-5), "{j}");
                        assert!(g.scale.abs_diff_eq(w.scale, 1e-6), "{j}");
                        assert!(g.rotation.abs_diff_eq(w.rotation, 1e-6), "{j}");
                    }
                    // The joints past the last block of eight are not written.
                    assert!(got[n / 8 * 8..].iter().all(|t| *t == Transform::IDENTITY));
                }
            }
        }
    }

    fn assert_close(got: &[Transform], want: &[Transform], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        for (j, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                g.translation.abs_diff_eq(w.translation, 1e-5),
                "{what} joint {j}"
            );
            assert!(g.scale.abs_diff_eq(w.scale, 1e-5), "{what} joint {j}");
            assert!(
                g.rotation.abs_diff_eq(w.rotation, 2e-6),
                "{what} joint {j}: {:?} against {:?}",
                g.rotation,
                w.rotation
            );
        }
    }

    /// The SoA job gives the AoS job's results on every path: the two-layer
    /// cross-fade, several unmasked layers, masks, the rest pose's fill-in
    /// and additive layers; and the lanes past the pose stay identity.
    #[test]
    fn soa_job_matches_the_aos_job() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(63);
        for n in [1usize, 7, 8, 9, 16, 23, 64, 70] {
            let poses: Vec<Vec<Transform>> =
                (0..4).map(|_| random_pose(&mut rng, n, 5.0)).collect();
            let rest = random_pose(&mut rng, n, 1.0);
            let mask: Vec<f32> = (0..n)
                .map(|_| if rng.gen_bool(0.3) { 0.0 } else { rng.gen() })
                .collect();
            let soa: Vec<SoaPose> = poses.iter().map(|p| SoaPose::from_transforms(p)).collect();
            let soa_rest = SoaPose::from_transforms(&rest);
            let delta = random_pose(&mut rng, n, 0.5);
            let soa_delta = SoaPose::from_transforms(&delta);
            // (weights, mask on layer 0, additive weight, threshold)
            let cases: [(&[f32], bool, Option<f32>, f32); 7] = [
                (&[0.3, 0.7], false, None, 0.1),
                (&[2.0, 0.5], false, None, 0.1),
                (&[0.2, 0.3, 0.1, 0.4], false, None, 0.1),
                (&[1.0], false, None, 0.1),
                (&[0.3, 0.7], true, None, 0.1),
                (&[0.02, 0.03], false, None, 0.5),
                (&[0.3, 0.7], false, Some(0.6), 0.1),
            ];
            for (case, (weights, masked, add, threshold)) in cases.iter().enumerate() {
                let layers: Vec<BlendLayer> = weights
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| match (i, masked) {
                        (0, true) => BlendLayer::masked(&poses[i], w, &mask),
                        _ => BlendLayer::new(&poses[i], w),
                    })
                    .collect();
                let soa_layers: Vec<SoaBlendLayer> = weights
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| match (i, masked) {
                        (0, true) => SoaBlendLayer::masked(&soa[i], w, &mask),
                        _ => SoaBlendLayer::new(&soa[i], w),
                    })
                    .collect();
                let additive: Vec<BlendLayer> =
                    add.iter().map(|&w| BlendLayer::new(&delta, w)).collect();
                let soa_additive: Vec<SoaBlendLayer> = add
                    .iter()
                    .map(|&w| SoaBlendLayer::new(&soa_delta, w))
                    .collect();
                let mut want = vec![Transform::IDENTITY; n];
                BlendingJob {
                    layers: &layers,
                    additive: &additive,
                    rest_pose: &rest,
                    threshold: *threshold,
                    output: &mut want,
                }
                .run()
                .unwrap();
                let mut got = SoaPose::identity(n);
                // Garbage in the output's spare lanes is put right.
                if let Some(last) = got.blocks_mut().last_mut() {
                    last.translation[0] = [9.0; 8];
                }
                SoaBlendingJob {
                    layers: &soa_layers,
                    additive: &soa_additive,
                    rest_pose: &soa_rest,
                    threshold: *threshold,
                    output: &mut got,
                }
                .run()
                .unwrap();
                assert_close(&got.to_vec(), &want, &format!("n {n} case {case}"));
                let last = got.blocks().last().unwrap();
                for lane in n % 8..if n % 8 == 0 { 0 } else { 8 } {
                    assert_eq!(last.get(lane), Transform::IDENTITY, "n {n} case {case}");
                }
            }
        }
    }

    /// The SoA kernels against the scalar loop they stand for, one to
    /// four layers, zero-length sums falling back to the first rotation.
    #[test]
    fn soa_kernels_match_the_scalar_loop() {
        #[cfg(target_arch = "x86_64")]
        if crate::anim::simd::avx2_fma() {
            use rand::SeedableRng;
            let mut rng = rand::rngs::StdRng::seed_from_u64(64);
            for n in [8usize, 16, 24, 40, 64] {
                let mut poses: Vec<Vec<Transform>> =
                    (0..4).map(|_| random_pose(&mut rng, n, 10.0)).collect();
                // Joint 3: a sum of squared length below 1e-20 takes the
                // first layer's rotation as it is.
                poses[0][3].rotation = Quat::from_xyzw(1e-12, 0.0, 0.0, 0.0);
                for p in &mut poses[1..] {
                    p[3].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
                }
                let soa: Vec<SoaPose> = poses.iter().map(|p| SoaPose::from_transforms(p)).collect();
                for w in [
                    &[0.5f32, 0.5][..],
                    &[0.2, 0.8],
                    &[0.1, 0.6, 0.3],
                    &[0.25; 4],
                ] {
                    let layers: Vec<SoaBlendLayer> = (0..w.len())
                        .map(|i| SoaBlendLayer::new(&soa[i], w[i]))
                        .collect();
                    let mut want = SoaPose::identity(n);
                    blend_uniform_scalar(&layers, w, &mut want);
                    let mut got = SoaPose::identity(n);
                    let blocks: Vec<&[crate::anim::SoaTransforms8]> =
                        layers.iter().map(|l| l.pose.blocks()).collect();
                    // SAFETY: AVX2 and FMA checked; poses as long as the output.
                    unsafe { crate::anim::simd::x86::blend_soa(&blocks, w, got.blocks_mut()) };
                    assert_close(&got.to_vec(), &want.to_vec(), &format!("general {w:?}"));
                    assert_eq!(got.get(3).unwrap().rotation, poses[0][3].rotation);
                    if let [wa, wb] = w {
                        let mut got2 = SoaPose::identity(n);
                        // SAFETY: as above.
                        unsafe {
                            crate::anim::simd::x86::blend_soa2(
                                blocks[0],
                                blocks[1],
                                *wa,
                                *wb,
                                got2.blocks_mut(),
                            )
                        };
                        assert_close(&got2.to_vec(), &want.to_vec(), &format!("two {w:?}"));
                        assert_eq!(got2.get(3).unwrap().rotation, poses[0][3].rotation);
                    }
                }
            }
        }
    }

    #[test]
    fn soa_bad_input_is_an_error() {
        let a = SoaPose::identity(2);
        let short = SoaPose::identity(1);
        let mut out = SoaPose::identity(2);
        let good = SoaBlendLayer::new(&a, 1.0);
        for (i, bad) in [
            SoaBlendLayer::new(&short, 1.0),
            SoaBlendLayer::new(&a, f32::NAN),
            SoaBlendLayer::new(&a, -1.0),
            SoaBlendLayer::masked(&a, 1.0, &[1.0]),
            SoaBlendLayer::masked(&a, 1.0, &[1.0, f32::INFINITY]),
        ]
        .into_iter()
        .enumerate()
        {
            for layers in [[good, bad], [bad, good]] {
                let r = SoaBlendingJob {
                    layers: &layers,
                    additive: &[],
                    rest_pose: &a,
                    threshold: 0.1,
                    output: &mut out,
                }
                .run();
                assert!(r.is_err(), "case {i}");
            }
        }
        for (rest, threshold) in [(&short, 0.1), (&a, f32::NAN), (&a, -1.0)] {
            let r = SoaBlendingJob {
                layers: &[good, good],
                additive: &[],
                rest_pose: rest,
                threshold,
                output: &mut out,
            }
            .run();
            assert!(r.is_err(), "{} {threshold}", rest.len());
        }
    }

    #[test]
    fn blend_direction_avoids_4k_aliasing() {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::anim::simd::x86::store_runs_into_loads as backwards;
            let a = 0x10_0630;
            // Output 480 bytes above an input (modulo 4 KiB): forward stores
            // meet that input's loads ten joints on, so go backwards.
            assert!(backwards(a + 480, &[a, a + 0x2000 + 3000]));
            assert!(backwards(a + 4096 * 3 + 480, &[a]));
            // Far apart either way, or the output below: forwards.
            assert!(!backwards(a + 2048, &[a]));
            assert!(!backwards(a - 480, &[a]));
            // Near both ways: forwards.
            assert!(!backwards(a + 480, &[a, a + 960]));
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let a = [Transform::IDENTITY; 2];
        let rest = [Transform::IDENTITY; 2];
        let mut out = [Transform::IDENTITY; 2];
        let mut run = |layers: &[BlendLayer], rest_pose: &[Transform], threshold: f32| {
            BlendingJob {
                layers,
                additive: &[],
                rest_pose,
                threshold,
                output: &mut out,
            }
            .run()
        };
        for layers in [
            [BlendLayer::new(&a[..1], 1.0)],
            [BlendLayer::new(&a, f32::NAN)],
            [BlendLayer::new(&a, -1.0)],
            [BlendLayer::masked(&a, 1.0, &[1.0])],
            [BlendLayer::masked(&a, 1.0, &[1.0, f32::INFINITY])],
        ] {
            assert!(run(&layers, &rest, 0.1).is_err());
        }
        // The two-layer cross-fade checks its input as well, whichever
        // layer or field is at fault.
        let good = BlendLayer::new(&a, 2.0);
        for (i, bad) in [
            BlendLayer::new(&a[..1], 1.0),
            BlendLayer::new(&a, f32::NAN),
            BlendLayer::new(&a, f32::INFINITY),
            BlendLayer::new(&a, -1.0),
            BlendLayer::masked(&a, 1.0, &[1.0]),
        ]
        .into_iter()
        .enumerate()
        {
            for layers in [[good, bad], [bad, good]] {
                assert!(run(&layers, &rest, 0.1).is_err(), "case {i}");
            }
        }
        for (rest_pose, threshold) in [(&rest[..1], 0.1), (&rest[..], f32::NAN), (&rest[..], -1.0)]
        {
            assert!(
                run(&[good, good], rest_pose, threshold).is_err(),
                "{} {threshold}",
                rest_pose.len()
            );
        }
    }
}
