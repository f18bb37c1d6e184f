use glam::{Affine3A, Mat3A};

use super::AnimError;

pub(crate) mod convert;
pub(crate) mod formats;
pub(crate) mod hierarchy;
pub(crate) mod rows;
pub(crate) mod skin;

pub use convert::{
    dual_quat_of, polar_rotation, quat_translation_of, PaletteReport, SCALE_TOLERANCE,
};
pub use formats::{Affine4x3, DualQuat, QuatTranslation};
pub use hierarchy::PaletteHierarchy;
pub use rows::{
    write_4x3_rows, write_dual_quat_rows, write_dual_quat_scale_rows, write_quat_translation_rows,
};

/// Encodes skinning matrices as 4x3 rows. `out` must be as long as `skin`.
pub fn encode_4x3(skin: &[Affine3A], out: &mut [Affine4x3]) {
    for (o, m) in out.iter_mut().zip(skin) {
        *o = Affine4x3::from_affine(m);
    }
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
    #[allow(unused_imports)]
    use crate::anim::{Skeleton, Skin, NO_PARENT};
    use crate::assets::builtin::Trident;
    #[allow(unused_imports)]
    use glam::{Quat, Vec3, Vec3A};

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
