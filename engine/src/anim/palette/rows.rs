//! The palette encoders that write the GPU's layout: each bone as rows of
//! vec4s (`[f32; 4]`), straight into a frame's mapped storage. They are
//! what the engine's skinning paths call (`skin::encoding` only names
//! them), so the encoding math exists once, here, and a palette flows one
//! way: skinning matrices -> these writers -> mapped memory.
//!
//! Each writer encodes a sub-palette: entry `k` is `skin[bones[k]]` (a
//! mesh partition; the whole skin is `bones = 0..n`), at
//! `out[k * vec4s_per_bone..]`, and reports lossy bones numbered as entries
//! of `skin`. None of them reads back from `out` (mapped memory may be
//! write-combined) or allocates once warm.

use std::cell::RefCell;

use glam::{Affine3A, Mat3A, Quat};

use super::convert::{dual_quat_of, quat_translation_of, PaletteReport};
use super::formats::{Affine4x3, DualQuat};
use super::hierarchy::PaletteHierarchy;
use crate::anim::{AnimError, NO_PARENT};

/// vec4s per bone of each layout.
pub const ROWS_4X3: usize = 3;
/// Quaternion + translation/scale: rotation, then `[t, s]`.
pub const ROWS_QUAT_TRANSLATION: usize = 2;
/// Dual quaternion: real part, then dual part.
pub const ROWS_DUAL_QUAT: usize = 2;
/// Dual quaternion, then the three rows of the scale/shear matrix.
pub const ROWS_DUAL_QUAT_SCALE: usize = 5;

/// Checks the shapes every writer shares: room in `out`, a hierarchy of
/// the sub-palette's length, bones within the skin.
fn check(
    skin: &[Affine3A],
    bones: &[u16],
    hierarchy: &PaletteHierarchy,
    out: &[[f32; 4]],
    per_bone: usize,
) -> Result<(), AnimError> {
    if out.len() < bones.len() * per_bone {
        return Err(AnimError::LengthMismatch {
            what: "palette vec4s",
            expected: bones.len() * per_bone,
            got: out.len(),
        });
    }
    if hierarchy.parent.len() != bones.len() || hierarchy.order.len() != bones.len() {
        return Err(AnimError::LengthMismatch {
            what: "palette hierarchy",
            expected: bones.len(),
            got: hierarchy.parent.len(),
        });
    }
    if let Some(&b) = bones.iter().find(|&&b| b as usize >= skin.len()) {
        return Err(AnimError::InvalidJob(format!(
            "palette names skin entry {b}, but the skin has {}",
            skin.len()
        )));
    }
    Ok(())
}

/// 4x3: the top three rows of each skinning matrix. Exact for any matrix.
pub fn write_4x3_rows(
    skin: &[Affine3A],
    bones: &[u16],
    hierarchy: &PaletteHierarchy,
    out: &mut [[f32; 4]],
) -> Result<(), AnimError> {
    check(skin, bones, hierarchy, out, ROWS_4X3)?;
    for (o, &b) in out.chunks_exact_mut(ROWS_4X3).zip(bones) {
        o.copy_from_slice(&Affine4x3::from_affine(&skin[b as usize]).rows);
    }
    Ok(())
}

/// Quaternion + translation and uniform scale: rotation, then `[t, s]`.
/// Non-uniform scale or shear is reported.
pub fn write_quat_translation_rows(
    skin: &[Affine3A],
    bones: &[u16],
    hierarchy: &PaletteHierarchy,
    out: &mut [[f32; 4]],
    report: &mut PaletteReport,
) -> Result<(), AnimError> {
    check(skin, bones, hierarchy, out, ROWS_QUAT_TRANSLATION)?;
    for (o, &b) in out.chunks_exact_mut(ROWS_QUAT_TRANSLATION).zip(bones) {
        let (qt, dev) = quat_translation_of(&skin[b as usize]);
        report.note(b as usize, dev);
        o[0] = qt.rotation().to_array();
        let t = qt.translation();
        o[1] = [t.x, t.y, t.z, qt.scale()];
    }
    Ok(())
}

/// Unit dual quaternions (real, dual), each real part in its hierarchy
/// parent's hemisphere. Any scale is dropped and reported.
pub fn write_dual_quat_rows(
    skin: &[Affine3A],
    bones: &[u16],
    hierarchy: &PaletteHierarchy,
    out: &mut [[f32; 4]],
    report: &mut PaletteReport,
) -> Result<(), AnimError> {
    check(skin, bones, hierarchy, out, ROWS_DUAL_QUAT)?;
    walk_with_scratch(bones.len(), |reals| {
        walk_dual_quats(skin, Some(bones), hierarchy, reals, |k, dq, _s, dev| {
            report.note(bones[k] as usize, dev);
            out[2 * k] = dq.real;
            out[2 * k + 1] = dq.dual;
        })
    })
}

/// Two-phase dual quaternions with scale: the rigid part as
/// [`write_dual_quat_rows`], then the rows of the scale/shear matrix `S`
/// (`[A | t] = [R | t] * [S | 0]`). Exact for any matrix.
pub fn write_dual_quat_scale_rows(
    skin: &[Affine3A],
    bones: &[u16],
    hierarchy: &PaletteHierarchy,
    out: &mut [[f32; 4]],
) -> Result<(), AnimError> {
    check(skin, bones, hierarchy, out, ROWS_DUAL_QUAT_SCALE)?;
    walk_with_scratch(bones.len(), |reals| {
        walk_dual_quats(skin, Some(bones), hierarchy, reals, |k, dq, s, _dev| {
            let o = &mut out[5 * k..5 * k + 5];
            o[0] = dq.real;
            o[1] = dq.dual;
            // Rows of S (glam stores columns).
            let t = s.transpose();
            o[2] = [t.x_axis.x, t.x_axis.y, t.x_axis.z, 0.0];
            o[3] = [t.y_axis.x, t.y_axis.y, t.y_axis.z, 0.0];
            o[4] = [t.z_axis.x, t.z_axis.y, t.z_axis.z, 0.0];
        })
    })
}

thread_local! {
    /// Real parts already written, for the next bones' hemisphere choice:
    /// kept here, not read back from (write-combined) mapped memory.
    static REALS: RefCell<Vec<Quat>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's real-part scratch, `n` entries long.
pub(crate) fn walk_with_scratch<R>(n: usize, f: impl FnOnce(&mut [Quat]) -> R) -> R {
    REALS.with(|r| {
        let mut reals = r.borrow_mut();
        reals.clear();
        reals.resize(n, Quat::IDENTITY);
        f(&mut reals)
    })
}

/// The dual-quaternion encoders' one walk: palette entries in hierarchy
/// order, each converted with its real part in its parent's hemisphere
/// (roots in the identity's), then handed to `emit(k, dq, scale_shear,
/// deviation)`. Entry `k` is `skin[bones[k]]` (`skin[k]` when `bones` is
/// `None`). `reals` (one per entry) remembers the real parts written; a
/// zero marks "not yet" (a unit quaternion never is zero). Errors: an order
/// naming an entry twice or out of range, or an entry before its parent.
pub(crate) fn walk_dual_quats(
    skin: &[Affine3A],
    bones: Option<&[u16]>,
    hierarchy: &PaletteHierarchy,
    reals: &mut [Quat],
    mut emit: impl FnMut(usize, &DualQuat, &Mat3A, f32),
) -> Result<(), AnimError> {
    let n = bones.map_or(skin.len(), <[u16]>::len);
    if reals.len() != n || hierarchy.parent.len() != n || hierarchy.order.len() != n {
        return Err(AnimError::LengthMismatch {
            what: "palette hierarchy",
            expected: n,
            got: hierarchy.parent.len(),
        });
    }
    let unwritten = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    reals.fill(unwritten);
    for &k in &hierarchy.order {
        let k = k as usize;
        let entry = match bones {
            Some(b) => b.get(k).map(|&b| b as usize),
            None => Some(k),
        };
        let (Some(entry), Some(&p)) = (entry, hierarchy.parent.get(k)) else {
            return Err(AnimError::InvalidJob(format!(
                "palette hierarchy order names entry {k} of {n}"
            )));
        };
        if reals[k] != unwritten {
            return Err(AnimError::InvalidJob(format!(
                "palette hierarchy order names entry {k} twice"
            )));
        }
        let reference = if p == NO_PARENT {
            Quat::IDENTITY
        } else {
            match reals.get(p as usize) {
                Some(q) if *q != unwritten => *q,
                _ => {
                    return Err(AnimError::InvalidJob(format!(
                        "palette entry {k} follows entry {p}, which comes later or does not exist"
                    )))
                }
            }
        };
        let m = skin.get(entry).ok_or_else(|| {
            AnimError::InvalidJob(format!(
                "palette names skin entry {entry}, but the skin has {}",
                skin.len()
            ))
        })?;
        let (dq, s, dev) = dual_quat_of(m, reference);
        reals[k] = dq.real();
        emit(k, &dq, &s, dev);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::anim::palette::{encode_dual_quat, encode_dual_quat_scale, encode_quat_translation};
    use crate::anim::QuatTranslation;

    /// A chain of rotations round a circle (signs alternate hemispheres),
    /// some with scale, and a sub-palette in reverse order.
    fn fixture() -> (Vec<Affine3A>, Vec<u16>, PaletteHierarchy) {
        let skin: Vec<Affine3A> = (0..7)
            .map(|i| {
                let q = Quat::from_rotation_y(i as f32 * 1.1);
                let q = if i % 2 == 1 { -q } else { q };
                Affine3A::from_scale_rotation_translation(
                    Vec3::new(1.0, 1.0 + 0.2 * (i % 3) as f32, 1.0),
                    q,
                    Vec3::new(i as f32, 0.5, -1.0),
                )
            })
            .collect();
        let bones = vec![6, 4, 2, 0];
        let chain = PaletteHierarchy {
            parent: vec![NO_PARENT, 0, 1, 2],
            order: vec![0, 1, 2, 3],
        };
        (skin, bones, chain)
    }

    /// The whole-palette encoders, run on the sub-palette's matrices.
    fn picked(skin: &[Affine3A], bones: &[u16]) -> Vec<Affine3A> {
        bones.iter().map(|&b| skin[b as usize]).collect()
    }

    #[test]
    fn row_writers_match_the_palette_encoders_on_a_sub_palette() {
        let (skin, bones, h) = fixture();
        let sub = picked(&skin, &bones);
        let n = bones.len();

        let mut rows = vec![[0.0; 4]; 3 * n];
        write_4x3_rows(&skin, &bones, &h, &mut rows).unwrap();
        for (k, m) in sub.iter().enumerate() {
            assert_eq!(&rows[3 * k..3 * k + 3], &Affine4x3::from_affine(m).rows);
        }

        let mut rows = vec![[0.0; 4]; 2 * n];
        let mut report = PaletteReport::default();
        write_quat_translation_rows(&skin, &bones, &h, &mut rows, &mut report).unwrap();
        let mut qt = vec![QuatTranslation::default(); n];
        let whole = encode_quat_translation(&sub, &mut qt).unwrap();
        for k in 0..n {
            assert_eq!(rows[2 * k], qt[k].rotation);
            assert_eq!(rows[2 * k + 1], qt[k].translation_scale);
        }
        // Lossy bones are numbered as skin entries, not sub-palette ones.
        let renumbered: Vec<usize> = whole.lossy.iter().map(|&k| bones[k] as usize).collect();
        assert_eq!(report.lossy, renumbered);
        assert!(!report.lossy.is_empty());

        let mut rows = vec![[0.0; 4]; 2 * n];
        let mut report = PaletteReport::default();
        write_dual_quat_rows(&skin, &bones, &h, &mut rows, &mut report).unwrap();
        let mut dq = vec![DualQuat::default(); n];
        encode_dual_quat(&sub, &h, &mut dq).unwrap();
        for k in 0..n {
            assert_eq!([rows[2 * k], rows[2 * k + 1]], [dq[k].real, dq[k].dual]);
        }
        // Each real part in its parent's hemisphere.
        for k in 1..n {
            let (a, b) = (
                Quat::from_array(rows[2 * k]),
                Quat::from_array(rows[2 * k - 2]),
            );
            assert!(a.dot(b) >= 0.0, "entry {k}");
        }

        let mut rows = vec![[0.0; 4]; 5 * n];
        write_dual_quat_scale_rows(&skin, &bones, &h, &mut rows).unwrap();
        let mut ss = vec![Mat3A::ZERO; n];
        encode_dual_quat_scale(&sub, &h, &mut dq, &mut ss).unwrap();
        for k in 0..n {
            assert_eq!([rows[5 * k], rows[5 * k + 1]], [dq[k].real, dq[k].dual]);
            let t = ss[k].transpose();
            assert_eq!(rows[5 * k + 2][..3], t.x_axis.to_array());
            assert_eq!(rows[5 * k + 4][..3], t.z_axis.to_array());
        }
    }

    #[test]
    fn row_writers_refuse_bad_shapes_and_orders() {
        let (skin, bones, h) = fixture();
        let mut short = vec![[0.0; 4]; 3];
        assert!(write_4x3_rows(&skin, &bones, &h, &mut short).is_err());
        let mut rows = vec![[0.0; 4]; 20];
        assert!(write_4x3_rows(&skin, &[0, 1, 2, 99], &h, &mut rows).is_err());
        let mut report = PaletteReport::default();
        let child_first = PaletteHierarchy {
            parent: h.parent.clone(),
            order: vec![1, 0, 2, 3],
        };
        let e = write_dual_quat_rows(&skin, &bones, &child_first, &mut rows, &mut report);
        assert!(e.unwrap_err().to_string().contains("comes later"));
        let twice = PaletteHierarchy {
            parent: h.parent.clone(),
            order: vec![0, 1, 1, 3],
        };
        let e = write_dual_quat_scale_rows(&skin, &bones, &twice, &mut rows);
        assert!(e.unwrap_err().to_string().contains("twice"));
    }
}
