use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};

use super::{AnimError, Skeleton, Skin, NO_PARENT};

pub(crate) mod formats;
pub(crate) mod rows;
pub(crate) mod skin;

pub use formats::{Affine4x3, DualQuat, QuatTranslation};
pub use rows::{
    write_4x3_rows, write_dual_quat_rows, write_dual_quat_scale_rows, write_quat_translation_rows,
};

/// Encodes skinning matrices as 4x3 rows. `out` must be as long as `skin`.
pub fn encode_4x3(skin: &[Affine3A], out: &mut [Affine4x3]) {
    for (o, m) in out.iter_mut().zip(skin) {
        *o = Affine4x3::from_affine(m);
    }
}

/// What an encoding could not keep. Encoders still write every bone (with
/// the scale dropped or folded as documented) so a caller may go on, but
/// they say which bones lost something.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PaletteReport {
    /// Palette entries whose scale the encoding dropped: non-uniform scale
    /// or shear for quaternion + translation, any scale for dual quaternions.
    pub lossy: Vec<usize>,
    /// Largest relative deviation found, `max |s_i / s - 1|` over the axes,
    /// or the off-diagonal shear, whichever is larger.
    pub max_deviation: f32,
}

impl PaletteReport {
    /// Whether no entry lost anything.
    pub fn is_exact(&self) -> bool {
        self.lossy.is_empty()
    }

    /// Records bone `k`'s deviation (lossy above [`SCALE_TOLERANCE`]).
    #[inline]
    pub fn note(&mut self, k: usize, deviation: f32) {
        if deviation > SCALE_TOLERANCE {
            self.lossy.push(k);
        }
        self.max_deviation = self.max_deviation.max(deviation);
    }

    /// Adds `other`'s bones (numbered as in `other`) to this report.
    pub fn merge(&mut self, other: &PaletteReport) {
        self.lossy.extend_from_slice(&other.lossy);
        self.max_deviation = self.max_deviation.max(other.max_deviation);
    }
}

/// Relative tolerance under which a scale counts as uniform (or as one).
pub const SCALE_TOLERANCE: f32 = 1e-4;

/// Proper rotation nearest to `m` (polar decomposition, Higham's iteration
/// `R <- (R + R^-T) / 2`), with a reflection first taken out of `m` so the
/// result is always a rotation; then `m = R * (R^T m)` exactly.
pub fn polar_rotation(m: &Mat3A) -> Mat3A {
    let flip = m.determinant() < 0.0;
    let mut r = if flip {
        Mat3A::from_cols(-m.x_axis, m.y_axis, m.z_axis)
    } else {
        *m
    };
    if r.determinant().abs() < 1e-20 || !r.is_finite() {
        return Mat3A::IDENTITY;
    }
    for _ in 0..20 {
        let next = (r + r.inverse().transpose()) * 0.5;
        let done = (next - r).to_cols_array().iter().all(|d| d.abs() < 1e-7);
        r = next;
        if done {
            break;
        }
    }
    // Re-orthonormalise away the iteration's last rounding.
    let x = r.x_axis.normalize_or(Vec3A::X);
    let y = (r.y_axis - x * x.dot(r.y_axis)).normalize_or(Vec3A::Y);
    Mat3A::from_cols(x, y, x.cross(y))
}

/// Rotation, uniform scale and how far from uniform (`max_deviation`).
fn rotation_and_scale(m: &Mat3A) -> (Quat, f32, f32) {
    let r = polar_rotation(m);
    let s = r.transpose() * *m;
    let diag = Vec3::new(s.x_axis.x, s.y_axis.y, s.z_axis.z);
    let uniform = diag.element_sum() / 3.0;
    let scale_ref = uniform.abs().max(1e-12);
    let mut dev = ((diag - Vec3::splat(uniform)).abs().max_element()) / scale_ref;
    let off = [
        s.y_axis.x, s.z_axis.x, s.x_axis.y, s.z_axis.y, s.x_axis.z, s.y_axis.z,
    ];
    for o in off {
        dev = dev.max(o.abs() / scale_ref);
    }
    (Quat::from_mat3a(&r).normalize(), uniform, dev)
}

/// One bone of [`encode_quat_translation`]: the nearest rotation, the mean
/// scale and the translation of `m`, with how far `m` is from that
/// (relative non-uniform scale or shear; above [`SCALE_TOLERANCE`] the bone
/// is lossy).
#[inline]
pub fn quat_translation_of(m: &Affine3A) -> (QuatTranslation, f32) {
    let (q, s, dev) = rotation_and_scale(&m.matrix3);
    (QuatTranslation::new(q, m.translation.into(), s), dev)
}

/// Encodes skinning matrices as quaternion + translation + uniform scale.
/// A bone with non-uniform scale or shear gets its nearest rotation and its
/// mean scale, and is listed in the report.
pub fn encode_quat_translation(
    skin: &[Affine3A],
    out: &mut [QuatTranslation],
) -> Result<PaletteReport, AnimError> {
    check_len("quaternion + translation palette", skin.len(), out.len())?;
    let mut report = PaletteReport::default();
    for (k, (o, m)) in out.iter_mut().zip(skin).enumerate() {
        let (qt, dev) = quat_translation_of(m);
        report.note(k, dev);
        *o = qt;
    }
    Ok(report)
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), AnimError> {
    if expected != got {
        return Err(AnimError::LengthMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}

/// The order in which dual-quaternion signs are chosen and, for each
/// palette entry, the entry whose hemisphere it joins: its nearest ancestor
/// in the skeleton that is also in the skin. Built once per skin.
#[derive(Clone, Debug, PartialEq)]
pub struct PaletteHierarchy {
    /// Palette entries, ancestors before descendants.
    pub order: Vec<u16>,
    /// Per palette entry, the entry it follows, or [`NO_PARENT`].
    pub parent: Vec<u16>,
}

impl PaletteHierarchy {
    /// No neighbours: every entry is put in the identity's hemisphere.
    pub fn flat(len: usize) -> Self {
        Self {
            order: (0..len as u16).collect(),
            parent: vec![NO_PARENT; len],
        }
    }

    /// The hierarchy of a sub-palette whose entry `k` is this palette's
    /// entry `bones[k]` (a bone partition): each entry follows its nearest
    /// ancestor, through this hierarchy, that the sub-palette also holds.
    /// Entries of `bones` outside this palette become roots.
    pub fn restrict(&self, bones: &[u16]) -> Self {
        let n = self.parent.len();
        let mut local = vec![NO_PARENT; n];
        for (k, &b) in bones.iter().enumerate() {
            if (b as usize) < n && local[b as usize] == NO_PARENT {
                local[b as usize] = k as u16;
            }
        }
        let mut rank = vec![usize::MAX; n];
        for (r, &e) in self.order.iter().enumerate() {
            if let Some(slot) = rank.get_mut(e as usize) {
                *slot = r;
            }
        }
        let mut order: Vec<u16> = (0..bones.len() as u16).collect();
        order.sort_by_key(|&k| rank.get(bones[k as usize] as usize).copied().unwrap_or(0));
        let parent = bones
            .iter()
            .map(|&b| {
                let mut a = self.parent.get(b as usize).copied().unwrap_or(NO_PARENT);
                // At most `n` steps: a malformed (cyclic) hierarchy cannot hang.
                for _ in 0..n {
                    if a == NO_PARENT || a as usize >= n {
                        return NO_PARENT;
                    }
                    if local[a as usize] != NO_PARENT {
                        return local[a as usize];
                    }
                    a = self.parent[a as usize];
                }
                NO_PARENT
            })
            .collect();
        Self { order, parent }
    }

    /// The hierarchy of `skin`'s entries, from `skeleton`'s parents; an error
    /// if the skin does not fit the skeleton.
    pub fn new(skin: &Skin, skeleton: &Skeleton) -> Result<Self, AnimError> {
        skin.validate(skeleton)?;
        let mut entry_of = vec![NO_PARENT; skeleton.len()];
        for (k, &j) in skin.joints.iter().enumerate() {
            if entry_of[j as usize] == NO_PARENT {
                entry_of[j as usize] = k as u16;
            }
        }
        let mut order: Vec<u16> = (0..skin.len() as u16).collect();
        order.sort_by_key(|&k| skin.joints[k as usize]);
        let parent = skin
            .joints
            .iter()
            .map(|&j| {
                let mut a = skeleton.parent(j as usize);
                while let Some(p) = a {
                    if entry_of[p] != NO_PARENT {
                        return entry_of[p];
                    }
                    a = skeleton.parent(p);
                }
                NO_PARENT
            })
            .collect();
        Ok(Self { order, parent })
    }
}

/// Encodes skinning matrices as unit dual quaternions, each sign chosen so
/// that its real part shares a hemisphere with its hierarchy parent's (roots
/// with the identity): influences of neighbouring joints then blend without
/// flips in the common case. Scale cannot be kept; bones that had any are
/// listed in the report (use [`encode_dual_quat_scale`] for two-phase
/// skinning).
pub fn encode_dual_quat(
    skin: &[Affine3A],
    hierarchy: &PaletteHierarchy,
    out: &mut [DualQuat],
) -> Result<PaletteReport, AnimError> {
    encode_dq(skin, hierarchy, out, None)
}

/// Two-phase encoding for dual-quaternion skinning with scale: each skinning
/// matrix `[A | t]` is split as `[R | t] * [S | 0]` with `R` the polar
/// rotation of `A` and `S = R^T A` (scale and shear, exact). `out` gets the
/// rigid `[R | t]` as dual quaternions, `scale_shear` gets `S`.
pub fn encode_dual_quat_scale(
    skin: &[Affine3A],
    hierarchy: &PaletteHierarchy,
    out: &mut [DualQuat],
    scale_shear: &mut [Mat3A],
) -> Result<(), AnimError> {
    check_len("scale/shear palette", skin.len(), scale_shear.len())?;
    encode_dq(skin, hierarchy, out, Some(scale_shear)).map(|_| ())
}

fn encode_dq(
    skin: &[Affine3A],
    hierarchy: &PaletteHierarchy,
    out: &mut [DualQuat],
    mut scale_shear: Option<&mut [Mat3A]>,
) -> Result<PaletteReport, AnimError> {
    check_len("dual-quaternion palette", skin.len(), out.len())?;
    check_len("palette hierarchy", skin.len(), hierarchy.parent.len())?;
    check_len("palette hierarchy order", skin.len(), hierarchy.order.len())?;
    let mut report = PaletteReport::default();
    rows::walk_with_scratch(skin.len(), |reals| {
        rows::walk_dual_quats(skin, None, hierarchy, reals, |k, dq, s, dev| {
            report.note(k, dev);
            if let Some(ss) = scale_shear.as_deref_mut() {
                ss[k] = *s;
            }
            out[k] = *dq;
        })
    })?;
    Ok(report)
}

/// One bone of [`encode_dual_quat`] / [`encode_dual_quat_scale`]: `m`
/// split as `[R | t] * [S | 0]` (`R` its polar rotation), the rigid part as
/// a unit dual quaternion whose real part shares a hemisphere with
/// `reference`, the scale/shear `S`, and how far `S` is from the identity
/// (above [`SCALE_TOLERANCE`] rigid dual-quaternion skinning loses it).
#[inline]
pub fn dual_quat_of(m: &Affine3A, reference: Quat) -> (DualQuat, Mat3A, f32) {
    let r = polar_rotation(&m.matrix3);
    let s = r.transpose() * m.matrix3;
    let dev = (s - Mat3A::IDENTITY)
        .to_cols_array()
        .iter()
        .fold(0.0f32, |a, d| a.max(d.abs()));
    let mut q = Quat::from_mat3a(&r).normalize();
    if q.dot(reference) < 0.0 {
        q = -q;
    }
    (
        DualQuat::from_rotation_translation(q, m.translation.into()),
        s,
        dev,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    #[test]
    fn rows_round_trip_and_transform_like_the_matrix() {
        let m = Affine3A::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 0.5),
            Quat::from_rotation_y(0.7),
            Vec3::new(3.0, -1.0, 2.0),
        );
        let r = Affine4x3::from_affine(&m);
        assert!(r.to_affine().abs_diff_eq(m, 1e-7));
        let p = Vec3::new(0.3, -0.2, 1.5);
        let by_rows = Vec3::new(
            r.row(0).dot(p.extend(1.0)),
            r.row(1).dot(p.extend(1.0)),
            r.row(2).dot(p.extend(1.0)),
        );
        assert!(by_rows.abs_diff_eq(m.transform_point3(p), 1e-6));
        assert_eq!(
            Affine4x3::from_affine(&Affine3A::IDENTITY),
            Affine4x3::IDENTITY
        );
    }
}

#[cfg(test)]
mod encoding_tests {
    use super::*;
    use crate::anim::{LocalToModelJob, Transform};
    use crate::assets::builtin::Trident;

    #[test]
    fn bind_pose_gives_identity_in_every_encoding() {
        let model = Trident::model();
        let s = &model.skeleton;
        let mut models = vec![Affine3A::IDENTITY; s.len()];
        LocalToModelJob::full(s, s.bind_local(), &mut models)
            .run()
            .unwrap();
        let skin = &model.skins[0];
        let mut mats = vec![Affine3A::IDENTITY; skin.len()];
        skin.skin_matrices(&models, &mut mats).unwrap();
        let mut rows = vec![Affine4x3::default(); skin.len()];
        encode_4x3(&mats, &mut rows);
        let mut qt = vec![QuatTranslation::default(); skin.len()];
        assert!(encode_quat_translation(&mats, &mut qt).unwrap().is_exact());
        let h = PaletteHierarchy::new(skin, s).unwrap();
        let mut dq = vec![DualQuat::default(); skin.len()];
        assert!(encode_dual_quat(&mats, &h, &mut dq).unwrap().is_exact());
        let mut dq2 = vec![DualQuat::default(); skin.len()];
        let mut ss = vec![Mat3A::ZERO; skin.len()];
        encode_dual_quat_scale(&mats, &h, &mut dq2, &mut ss).unwrap();
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5);
        for k in 0..skin.len() {
            assert!(close(
                &rows[k].rows.concat(),
                &Affine4x3::IDENTITY.rows.concat()
            ));
            assert!(close(&qt[k].rotation, &QuatTranslation::IDENTITY.rotation));
            assert!(close(
                &qt[k].translation_scale,
                &QuatTranslation::IDENTITY.translation_scale
            ));
            for d in [&dq[k], &dq2[k]] {
                assert!(close(&d.real, &DualQuat::IDENTITY.real), "{d:?}");
                assert!(close(&d.dual, &DualQuat::IDENTITY.dual), "{d:?}");
            }
            assert!(ss[k].abs_diff_eq(Mat3A::IDENTITY, 1e-5));
        }
    }

    #[test]
    fn encodings_transform_like_the_matrix_and_report_scale() {
        let rigid = Affine3A::from_rotation_translation(
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.2, 2.5),
            Vec3::new(1.0, -2.0, 0.5),
        );
        let uniform = rigid * Affine3A::from_scale(Vec3::splat(1.5));
        let skewed = rigid * Affine3A::from_scale(Vec3::new(1.0, 2.0, 1.0));
        let mats = [rigid, uniform, skewed];
        let mut qt = [QuatTranslation::default(); 3];
        let rep = encode_quat_translation(&mats, &mut qt).unwrap();
        assert_eq!(rep.lossy, vec![2]);
        let p = Vec3::new(0.3, 0.7, -0.4);
        for k in 0..2 {
            assert!(qt[k]
                .to_affine()
                .transform_point3(p)
                .abs_diff_eq(mats[k].transform_point3(p), 1e-5));
        }
        let mut dq = [DualQuat::default(); 3];
        let rep = encode_dual_quat(&mats, &PaletteHierarchy::flat(3), &mut dq).unwrap();
        assert_eq!(rep.lossy, vec![1, 2]);
        assert!(dq[0]
            .transform_point3(p)
            .abs_diff_eq(rigid.transform_point3(p), 1e-5));
        // Two-phase: scale/shear first, then the rigid part, is exact.
        let mut ss = [Mat3A::ZERO; 3];
        encode_dual_quat_scale(&mats, &PaletteHierarchy::flat(3), &mut dq, &mut ss).unwrap();
        for k in 0..3 {
            let two_phase = dq[k].transform_point3((ss[k] * Vec3A::from(p)).into());
            assert!(
                two_phase.abs_diff_eq(mats[k].transform_point3(p), 1e-5),
                "{k}"
            );
        }
    }

    #[test]
    fn dual_quat_signs_follow_the_hierarchy() {
        // A chain whose joints each turn 120 degrees: model rotations go
        // round the circle, so raw quaternion signs alternate hemispheres.
        let n: usize = 6;
        let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let names = (0..n).map(|i| format!("j{i}")).collect();
        let bind = vec![Transform::IDENTITY; n];
        let (s, _) = Skeleton::new(names, &parents, bind).unwrap();
        let skin = Skin::whole_skeleton(&s);
        let mats: Vec<Affine3A> = (0..n)
            .map(|i| Affine3A::from_rotation_z(i as f32 * 2.1))
            .collect();
        let h = PaletteHierarchy::new(&skin, &s).unwrap();
        let mut dq = vec![DualQuat::default(); n];
        encode_dual_quat(&mats, &h, &mut dq).unwrap();
        assert!(dq[0].real[3] >= 0.0);
        for i in 1..n {
            assert!(dq[i].real().dot(dq[i - 1].real()) >= 0.0, "{i}");
        }
    }

    #[test]
    fn restricted_hierarchy_follows_the_nearest_kept_ancestor() {
        // Chain 0 <- 1 <- 2 <- 3 <- 4; keep {4, 1, 3}: 1 is a root (0 is
        // gone), 3 follows 1 (2 is gone), 4 follows 3.
        let full = PaletteHierarchy {
            order: vec![0, 1, 2, 3, 4],
            parent: vec![NO_PARENT, 0, 1, 2, 3],
        };
        let sub = full.restrict(&[4, 1, 3]);
        assert_eq!(sub.parent, vec![2, NO_PARENT, 1]);
        // Ancestors first: local 1 (bone 1), local 2 (bone 3), local 0 (bone 4).
        assert_eq!(sub.order, vec![1, 2, 0]);
        // Encoding through it is valid: parents come before children.
        let mats = vec![Affine3A::from_rotation_z(2.0); 3];
        let mut dq = vec![DualQuat::default(); 3];
        encode_dual_quat(&mats, &sub, &mut dq).unwrap();
    }

    #[test]
    fn pod_layouts_are_two_vec4() {
        assert_eq!(std::mem::size_of::<QuatTranslation>(), 32);
        assert_eq!(std::mem::size_of::<DualQuat>(), 32);
        assert_eq!(std::mem::size_of::<Affine4x3>(), 48);
        assert_eq!(std::mem::offset_of!(QuatTranslation, translation_scale), 16);
        assert_eq!(std::mem::offset_of!(DualQuat, dual), 16);
    }
}
