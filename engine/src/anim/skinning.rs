use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use super::AnimError;

/// CPU reference linear blend skinning of positions and (optionally) normals.
///
/// Each vertex has `per_vertex` influences stored consecutively in `joints`
/// (indices into `skin`) and `weights` (summing to one). The blended matrix
/// `M = sum w_k skin[j_k]` moves the position; the normal is moved by the
/// cofactor of M's 3x3 (the inverse transpose up to scale, so non-uniform
/// scale stays right) and renormalised.
pub struct LinearBlendJob<'a> {
    pub skin: &'a [Affine3A],
    pub per_vertex: usize,
    pub joints: &'a [u16],
    pub weights: &'a [f32],
    pub positions: &'a [Vec3],
    /// Empty to skip normals.
    pub normals: &'a [Vec3],
    pub out_positions: &'a mut [Vec3],
    /// Empty to skip normals.
    pub out_normals: &'a mut [Vec3],
}

/// Columns of the cofactor matrix of `m` (= det(m) * m^-T).
#[inline]
pub(crate) fn cofactor(m: &Mat3A) -> Mat3A {
    Mat3A::from_cols(
        m.y_axis.cross(m.z_axis),
        m.z_axis.cross(m.x_axis),
        m.x_axis.cross(m.y_axis),
    )
}

impl LinearBlendJob<'_> {
    pub fn validate(&self) -> Result<(), AnimError> {
        let n = self.positions.len();
        let k = self.per_vertex;
        if k == 0 {
            return Err(AnimError::InvalidJob("zero influences per vertex".into()));
        }
        for (what, got) in [
            ("influence joints", self.joints.len()),
            ("influence weights", self.weights.len()),
        ] {
            if got != n * k {
                return Err(AnimError::LengthMismatch {
                    what,
                    expected: n * k,
                    got,
                });
            }
        }
        if self.out_positions.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "skinned positions",
                expected: n,
                got: self.out_positions.len(),
            });
        }
        if !self.normals.is_empty() || !self.out_normals.is_empty() {
            for (what, got) in [
                ("normals", self.normals.len()),
                ("skinned normals", self.out_normals.len()),
            ] {
                if got != n {
                    return Err(AnimError::LengthMismatch {
                        what,
                        expected: n,
                        got,
                    });
                }
            }
        }
        if let Some(&j) = self.joints.iter().find(|&&j| j as usize >= self.skin.len()) {
            return Err(AnimError::InvalidJob(format!(
                "influence names joint {j}, but the palette has {}",
                self.skin.len()
            )));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        let k = self.per_vertex;
        let with_normals = !self.normals.is_empty();
        for v in 0..self.positions.len() {
            let js = &self.joints[v * k..v * k + k];
            let ws = &self.weights[v * k..v * k + k];
            let mut m3 = Mat3A::ZERO;
            let mut t = Vec3A::ZERO;
            for (&j, &w) in js.iter().zip(ws) {
                let s = &self.skin[j as usize];
                m3 += s.matrix3 * w;
                t += s.translation * w;
            }
            let p = Vec3A::from(self.positions[v]);
            self.out_positions[v] = (m3 * p + t).into();
            if with_normals {
                let n = cofactor(&m3) * Vec3A::from(self.normals[v]);
                self.out_normals[v] = n.normalize_or_zero().into();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn cofactor_is_det_times_inverse_transpose() {
        let m = Mat3A::from_cols(
            Vec3A::new(2.0, 0.1, 0.0),
            Vec3A::new(0.3, 1.0, -0.2),
            Vec3A::new(0.0, 0.4, 0.5),
        );
        let expect = m.inverse().transpose() * m.determinant();
        assert!(cofactor(&m).abs_diff_eq(expect, 1e-5));
    }

    #[test]
    fn normals_under_non_uniform_scale_stay_perpendicular() {
        // A plane x + y = 0 with normal (1,1,0)/sqrt2, stretched along x.
        let skin = [Affine3A::from_scale_rotation_translation(
            Vec3::new(3.0, 1.0, 1.0),
            Quat::from_rotation_z(0.4),
            Vec3::ZERO,
        )];
        let tangent = Vec3::new(1.0, -1.0, 0.0);
        let normal = Vec3::new(1.0, 1.0, 0.0).normalize();
        let mut pos = [Vec3::ZERO; 1];
        let mut nrm = [Vec3::ZERO; 1];
        LinearBlendJob {
            skin: &skin,
            per_vertex: 1,
            joints: &[0],
            weights: &[1.0],
            positions: &[tangent],
            normals: &[normal],
            out_positions: &mut pos,
            out_normals: &mut nrm,
        }
        .run()
        .unwrap();
        assert!(pos[0].dot(nrm[0]).abs() < 1e-6, "{pos:?} {nrm:?}");
        assert!((nrm[0].length() - 1.0).abs() < 1e-6);
    }
}
