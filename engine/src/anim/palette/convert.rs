//! Conversions of one skinning matrix into a palette entry, and what an
//! encoding could not keep (`PaletteReport`). Below both the whole-palette
//! encoders (`palette/mod.rs`) and the GPU-layout writers (`rows`).

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};

use super::formats::{DualQuat, QuatTranslation};

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

/// One bone of [`crate::anim::encode_quat_translation`]: the nearest rotation, the mean
/// scale and the translation of `m`, with how far `m` is from that
/// (relative non-uniform scale or shear; above [`SCALE_TOLERANCE`] the bone
/// is lossy).
#[inline]
pub fn quat_translation_of(m: &Affine3A) -> (QuatTranslation, f32) {
    let (q, s, dev) = rotation_and_scale(&m.matrix3);
    (QuatTranslation::new(q, m.translation.into(), s), dev)
}

/// One bone of [`crate::anim::encode_dual_quat`] / [`crate::anim::encode_dual_quat_scale`]: `m`
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
