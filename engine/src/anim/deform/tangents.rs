//! Skinning tangents on the CPU: [`TangentSkinningJob`], the tangent
//! stream's counterpart of each position job, with that job's per-vertex
//! blend.
//!
//! A tangent lies in the surface, so it moves as a direction by the
//! linear part of the vertex's transform (not by the cofactor, which is
//! for normals), then is renormalised; its handedness `w` is kept.

use glam::{Affine3A, Mat3A, Quat, Vec3A, Vec4};

use super::bind::max_joint;
use crate::anim::{AnimError, DualQuat, QuatTranslation};

/// The palette a [`TangentSkinningJob`] reads, and so which position job's
/// transform it matches.
#[derive(Clone, Copy, Debug)]
pub enum TangentPalette<'a> {
    /// [`LinearBlendJob`](crate::anim::LinearBlendJob)'s skinning
    /// matrices: `t' = M t` with `M` the linear part of the blended
    /// matrix `sum w_k skin[j_k]`.
    Matrices(&'a [Affine3A]),
    /// [`QuatTranslationSkinningJob`](crate::anim::QuatTranslationSkinningJob)'s
    /// palette: each entry rebuilt as the matrix `[scale * R(q) | t]`, then
    /// as `Matrices`.
    QuatTranslation(&'a [QuatTranslation]),
    /// [`DualQuatSkinningJob`](crate::anim::DualQuatSkinningJob)'s palette:
    /// `t' = r t` with `r` the blended real part (each influence negated
    /// into the first influence's hemisphere) normalised; with
    /// `scale_shear` (one matrix per entry; empty for rigid skinning)
    /// `t' = r (S t)`, `S = sum w_k S_{j_k}`.
    DualQuat {
        /// Unit dual quaternions.
        palette: &'a [DualQuat],
        /// Empty, or one scale/shear matrix per palette entry.
        scale_shear: &'a [Mat3A],
    },
}

impl TangentPalette<'_> {
    fn len(&self) -> usize {
        match self {
            TangentPalette::Matrices(p) => p.len(),
            TangentPalette::QuatTranslation(p) => p.len(),
            TangentPalette::DualQuat { palette, .. } => palette.len(),
        }
    }
}

/// Skins tangents (`xyz` a unit direction, `w` the bitangent's sign) with
/// the influences of a position job: each vertex's `xyz` goes through the
/// transform that job gives the vertex (see [`TangentPalette`]) and is
/// renormalised (a zero result stays zero), `w` is copied. Run it next to
/// the position job, with the same palette, joints and weights.
pub struct TangentSkinningJob<'a> {
    /// The palette `joints` index, and which blend to use.
    pub palette: TangentPalette<'a>,
    /// Influences per vertex, at least 1.
    pub per_vertex: usize,
    /// Influence joint indices, `per_vertex` per vertex, into the palette.
    pub joints: &'a [u16],
    /// Influence weights, `per_vertex` per vertex; may be empty with one
    /// influence per vertex (every weight 1), except for dual quaternions
    /// (as their position job).
    pub weights: &'a [f32],
    /// Bind-pose tangents, one per vertex.
    pub tangents: &'a [Vec4],
    /// Skinned tangents, one per vertex.
    pub out_tangents: &'a mut [Vec4],
}

impl TangentSkinningJob<'_> {
    /// Checks the job's slices and indices without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        let (n, k) = (self.tangents.len(), self.per_vertex);
        if k == 0 {
            return Err(AnimError::InvalidJob("zero influences per vertex".into()));
        }
        let nk = n.checked_mul(k).ok_or_else(|| {
            AnimError::InvalidJob(format!("{n} vertices of {k} influences overflow"))
        })?;
        let dq = matches!(self.palette, TangentPalette::DualQuat { .. });
        let weightless = !dq && k == 1 && self.weights.is_empty();
        for (what, expected, got, free) in [
            ("influence joints", nk, self.joints.len(), false),
            ("influence weights", nk, self.weights.len(), weightless),
            ("skinned tangents", n, self.out_tangents.len(), false),
        ] {
            if got != expected && !free {
                return Err(AnimError::LengthMismatch {
                    what,
                    expected,
                    got,
                });
            }
        }
        if let TangentPalette::DualQuat {
            palette,
            scale_shear,
        } = self.palette
        {
            if !scale_shear.is_empty() && scale_shear.len() != palette.len() {
                return Err(AnimError::LengthMismatch {
                    what: "scale/shear matrices",
                    expected: palette.len(),
                    got: scale_shear.len(),
                });
            }
        }
        let len = self.palette.len();
        let max = max_joint(self.joints);
        if !self.joints.is_empty() && max as usize >= len {
            return Err(AnimError::InvalidJob(format!(
                "influence names joint {max}, but the palette has {len}"
            )));
        }
        Ok(())
    }

    /// Validates the job, then writes `out_tangents`.
    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        let k = self.per_vertex;
        let (joints, weights) = (self.joints, self.weights);
        for (v, (t, out)) in self.tangents.iter().zip(self.out_tangents).enumerate() {
            let js = &joints[v * k..v * k + k];
            // Validated: empty weights only with one influence, weight 1.
            let ws: &[f32] = if weights.is_empty() {
                &[]
            } else {
                &weights[v * k..v * k + k]
            };
            let x = Vec3A::from(t.truncate());
            let moved = match self.palette {
                TangentPalette::Matrices(skin) => blend_linear(js, ws, |j| skin[j].matrix3) * x,
                TangentPalette::QuatTranslation(pal) => {
                    blend_linear(js, ws, |j| pal[j].to_affine().matrix3) * x
                }
                TangentPalette::DualQuat {
                    palette,
                    scale_shear,
                } => dual_quat_direction(palette, scale_shear, js, ws, x),
            };
            *out = moved.normalize_or_zero().extend(t.w);
        }
        Ok(())
    }
}

/// The linear part of the blended matrix, as `lbs_reference` blends it:
/// the one influence's own matrix without weights, else
/// `sum w_k M_{j_k}` from zero in influence order.
#[inline]
fn blend_linear(js: &[u16], ws: &[f32], matrix: impl Fn(usize) -> Mat3A) -> Mat3A {
    if ws.is_empty() {
        return matrix(js[0] as usize);
    }
    let mut m3 = Mat3A::ZERO;
    for (&j, &w) in js.iter().zip(ws) {
        m3 += matrix(j as usize) * w;
    }
    m3
}

/// `x` through `dqs_reference`'s per-vertex transform, without the
/// translation: the scale/shear blend first, then the normalised blended
/// rotation (skipped when the blended real part vanishes, as there).
#[inline]
fn dual_quat_direction(
    palette: &[DualQuat],
    scale_shear: &[Mat3A],
    js: &[u16],
    ws: &[f32],
    x: Vec3A,
) -> Vec3A {
    let first = Vec4::from_array(palette[js[0] as usize].real);
    let mut real = Vec4::ZERO;
    let mut s3 = Mat3A::ZERO;
    for (&j, &w) in js.iter().zip(ws) {
        let r = Vec4::from_array(palette[j as usize].real);
        real += r * if r.dot(first) < 0.0 { -w } else { w };
        if !scale_shear.is_empty() {
            s3 += scale_shear[j as usize] * w;
        }
    }
    let x = if scale_shear.is_empty() { x } else { s3 * x };
    let len = real.length();
    if len < 1e-12 {
        return x;
    }
    Quat::from_vec4(real / len) * x
}

#[cfg(test)]
mod tests;
