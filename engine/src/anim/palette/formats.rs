//! The palette entry formats the shaders and the CPU skinning kernels
//! read: [`Affine4x3`], [`QuatTranslation`], [`DualQuat`]. Plain `repr(C)`
//! data with no dependency on the rest of the crate, so that kernels can
//! take them without importing the encoders.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

/// One bone of the 4x3 palette: the top three rows of the skinning matrix,
/// so the shader computes `dot(row[i], vec4(p, 1))` per axis. 48 bytes, the
/// layout of `vec4 rows[3]` in std140 and std430.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Affine4x3 {
    /// Rows 0..3 of the matrix: `[m_i0, m_i1, m_i2, t_i]` for axis `i`.
    pub rows: [[f32; 4]; 3],
}

// The AVX2 palette kernel writes entry k as the 12 floats at 12 k.
const _: () =
    assert!(std::mem::size_of::<Affine4x3>() == 48 && std::mem::offset_of!(Affine4x3, rows) == 0);

impl Affine4x3 {
    /// The identity matrix.
    pub const IDENTITY: Self = Self {
        rows: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };

    /// The top three rows of `m`.
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

    /// The matrix these rows stand for.
    pub fn to_affine(&self) -> Affine3A {
        let r = &self.rows;
        Affine3A::from_cols_array(&[
            r[0][0], r[1][0], r[2][0], //
            r[0][1], r[1][1], r[2][1], //
            r[0][2], r[1][2], r[2][2], //
            r[0][3], r[1][3], r[2][3],
        ])
    }

    /// Row `i` (below 3) as a vector; panics past it.
    pub fn row(&self, i: usize) -> Vec4 {
        Vec4::from_array(self.rows[i])
    }
}

/// One bone of the quaternion + translation palette (seed 001's
/// `QuatTransform`), 32 bytes, two vec4 in std140 and std430:
/// `rotation` is the unit quaternion `(x, y, z, w)`; `translation_scale`
/// holds the translation in `xyz` and one uniform scale in `w`. The bone
/// maps `p` to `rotation * (scale * p) + translation`. Shaders rebuild a
/// matrix per influence and blend matrices (seed 001: blending rotation and
/// translation apart would be wrong).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct QuatTranslation {
    /// Unit quaternion `(x, y, z, w)`.
    pub rotation: [f32; 4],
    /// Translation in `xyz`, uniform scale in `w`.
    pub translation_scale: [f32; 4],
}

impl QuatTranslation {
    /// No rotation or translation, scale 1.
    pub const IDENTITY: Self = Self {
        rotation: [0.0, 0.0, 0.0, 1.0],
        translation_scale: [0.0, 0.0, 0.0, 1.0],
    };

    /// A bone from a unit `rotation`, a `translation` and a uniform `scale`.
    pub fn new(rotation: Quat, translation: Vec3, scale: f32) -> Self {
        Self {
            rotation: rotation.to_array(),
            translation_scale: translation.extend(scale).to_array(),
        }
    }

    /// The rotation as a quaternion.
    pub fn rotation(&self) -> Quat {
        Quat::from_array(self.rotation)
    }

    /// The translation (`xyz` of `translation_scale`).
    pub fn translation(&self) -> Vec3 {
        Vec4::from_array(self.translation_scale).truncate()
    }

    /// The uniform scale (`w` of `translation_scale`).
    pub fn scale(&self) -> f32 {
        self.translation_scale[3]
    }

    /// The matrix this bone stands for.
    #[inline]
    pub fn to_affine(&self) -> Affine3A {
        let m = Mat3A::from_quat(self.rotation()) * self.scale();
        Affine3A::from_mat3_translation(m.into(), self.translation())
    }
}

/// One bone of the dual-quaternion palette, 32 bytes, two vec4 in std140
/// and std430: `real = (x, y, z, w)` is the rotation, `dual = (x, y, z, w)`
/// is `0.5 * (t, 0) * real` (Hamilton product) for translation `t`.
/// Rigid only: scale does not fit in a unit dual quaternion.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DualQuat {
    /// Rotation quaternion `(x, y, z, w)`.
    pub real: [f32; 4],
    /// Dual part `(x, y, z, w)`: `0.5 * (t, 0) * real` for translation `t`.
    pub dual: [f32; 4],
}

// The DQS kernels load entry j as the 8 floats at 8 j: `real`, then
// `dual`.
const _: () = assert!(
    std::mem::size_of::<DualQuat>() == 32
        && std::mem::offset_of!(DualQuat, real) == 0
        && std::mem::offset_of!(DualQuat, dual) == 16
);

impl DualQuat {
    /// No rotation or translation.
    pub const IDENTITY: Self = Self {
        real: [0.0, 0.0, 0.0, 1.0],
        dual: [0.0, 0.0, 0.0, 0.0],
    };

    /// The rigid transform rotating by the unit quaternion `rotation`, then
    /// translating by `translation`.
    pub fn from_rotation_translation(rotation: Quat, translation: Vec3) -> Self {
        let dual = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0) * rotation;
        Self {
            real: rotation.to_array(),
            dual: (Vec4::from(dual) * 0.5).to_array(),
        }
    }

    /// The real part as a quaternion.
    pub fn real(&self) -> Quat {
        Quat::from_array(self.real)
    }

    /// The dual part as a vector `(x, y, z, w)`.
    pub fn dual(&self) -> Vec4 {
        Vec4::from_array(self.dual)
    }

    /// `2 * dual * conjugate(real)`, the translation of a unit dual quaternion.
    pub fn translation(&self) -> Vec3 {
        let t = Quat::from_vec4(self.dual()) * self.real().conjugate();
        Vec3::new(t.x, t.y, t.z) * 2.0
    }

    /// Both parts negated: the same rigid transform, from the other hemisphere.
    pub fn negate(&self) -> Self {
        Self {
            real: (-Vec4::from_array(self.real)).to_array(),
            dual: (-Vec4::from_array(self.dual)).to_array(),
        }
    }

    /// Rotates then translates `p`; assumes a unit real part.
    #[inline]
    pub fn transform_point3(&self, p: Vec3) -> Vec3 {
        self.real() * p + self.translation()
    }
}
