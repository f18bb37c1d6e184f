use glam::{Affine3A, Mat4, Quat, Vec3};

/// A joint's local transform as translation, rotation and scale, applied as
/// `T * R * S` (scale first) to column vectors.
///
/// `repr(C)` with the rotation first: floats 0..4 the rotation (x, y, z,
/// w), 4..7 the translation, 7..10 the scale, then padding to 48 bytes.
/// The AVX2 kernels read it through raw pointers in that layout
/// (`simd::avx2::TRANSFORM_PACKED`, the sampling and local-to-model
/// kernels); the assertion below keeps it.
#[repr(C)]
#[derive(Clone, Copy, PartialEq)]
pub struct Transform {
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Translation, applied last.
    pub translation: Vec3,
    /// Per-axis scale, applied first.
    pub scale: Vec3,
}

const _: () = assert!(
    std::mem::size_of::<Transform>() == 48
        && std::mem::align_of::<Transform>() == 16
        && std::mem::offset_of!(Transform, rotation) == 0
        && std::mem::offset_of!(Transform, translation) == 16
        && std::mem::offset_of!(Transform, scale) == 28
);

// Debug prints the fields in their `T * R * S` order, as before the
// layout put the rotation first.
impl std::fmt::Debug for Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transform")
            .field("translation", &self.translation)
            .field("rotation", &self.rotation)
            .field("scale", &self.scale)
            .finish()
    }
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No translation or rotation, unit scale.
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// A transform with unit scale.
    pub fn from_translation_rotation(translation: Vec3, rotation: Quat) -> Self {
        Self {
            translation,
            rotation,
            scale: Vec3::ONE,
        }
    }

    /// `T * R * S` as an affine matrix.
    #[inline]
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// `T * R * S` as a 4x4 matrix.
    #[inline]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Decomposes an affine matrix into translation, rotation and scale.
    /// Shear is lost; a negative determinant shows up as a negative scale on x.
    pub fn from_affine(m: &Affine3A) -> Self {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        Self {
            translation,
            rotation: rotation.normalize(),
            scale,
        }
    }

    /// Whether every component of translation, rotation and scale is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}
