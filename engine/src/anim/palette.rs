use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Vec4};

/// One bone of the 4x3 palette: the top three rows of the skinning matrix,
/// so the shader computes `dot(row[i], vec4(p, 1))` per axis. 48 bytes, the
/// layout of `vec4 rows[3]` in std140 and std430.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Affine4x3 {
    pub rows: [[f32; 4]; 3],
}

impl Affine4x3 {
    pub const IDENTITY: Self = Self {
        rows: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };

    #[inline]
    pub fn from_affine(m: &Affine3A) -> Self {
        let c = m.matrix3;
        let t = m.translation;
        Self {
            rows: [
                [c.x_axis.x, c.y_axis.x, c.z_axis.x, t.x],
                [c.x_axis.y, c.y_axis.y, c.z_axis.y, t.y],
                [c.x_axis.z, c.y_axis.z, c.z_axis.z, t.z],
            ],
        }
    }

    pub fn to_affine(&self) -> Affine3A {
        let r = &self.rows;
        Affine3A::from_cols_array(&[
            r[0][0], r[1][0], r[2][0], //
            r[0][1], r[1][1], r[2][1], //
            r[0][2], r[1][2], r[2][2], //
            r[0][3], r[1][3], r[2][3],
        ])
    }

    pub fn row(&self, i: usize) -> Vec4 {
        Vec4::from_array(self.rows[i])
    }
}

/// Encodes skinning matrices as 4x3 rows. `out` must be as long as `skin`.
pub fn encode_4x3(skin: &[Affine3A], out: &mut [Affine4x3]) {
    for (o, m) in out.iter_mut().zip(skin) {
        *o = Affine4x3::from_affine(m);
    }
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
