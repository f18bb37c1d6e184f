//! Reading a data object's flattened values by its template: integers,
//! counts checked against the values left, finite floats, strings, and the
//! left-handed row-vector types converted to the engine's (see the module
//! docs of [`super`]).

use glam::{Affine3A, Mat4, Quat, Vec2, Vec3};

use super::super::{FaultKind, LoadError};
use super::source::Source;
use super::tree::{Object, Value};

pub(crate) struct Reader<'o, 's> {
    pub src: &'s Source<'s>,
    pub obj: &'o Object,
    pos: usize,
}

impl<'o, 's> Reader<'o, 's> {
    pub fn new(src: &'s Source<'s>, obj: &'o Object) -> Self {
        Self { src, obj, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.obj.values.len() - self.pos
    }

    /// Byte offset of the next value (the closing brace when none is left).
    pub fn here(&self) -> u32 {
        self.obj
            .offsets
            .get(self.pos)
            .copied()
            .unwrap_or(self.obj.end)
    }

    pub fn err(&self, at: u32, kind: FaultKind, msg: impl AsRef<str>) -> LoadError {
        self.src
            .err(at, kind, format!("{}: {}", self.obj.label(), msg.as_ref()))
    }

    fn take(&mut self, what: &dyn Fn() -> String) -> Result<(&'o Value, u32), LoadError> {
        match self.obj.values.get(self.pos) {
            Some(v) => {
                let at = self.obj.offsets[self.pos];
                self.pos += 1;
                Ok((v, at))
            }
            None => Err(self.err(
                self.obj.end,
                FaultKind::Truncated,
                format!(
                    "the object ends after {} values, before {}",
                    self.obj.values.len(),
                    what()
                ),
            )),
        }
    }

    /// A whole number (a `DWORD` or `WORD` member).
    pub fn int(&mut self, what: &dyn Fn() -> String) -> Result<(i64, u32), LoadError> {
        let (v, at) = self.take(what)?;
        match v {
            Value::Int(i) => Ok((*i, at)),
            Value::Float(f) => Err(self.err(
                at,
                FaultKind::Syntax,
                format!("{} is {f}, expected a whole number", what()),
            )),
            Value::Str(s) => Err(self.err(
                at,
                FaultKind::Syntax,
                format!("{} is the string {s:?}, expected a whole number", what()),
            )),
        }
    }

    pub fn u32(&mut self, what: &dyn Fn() -> String) -> Result<(u32, u32), LoadError> {
        let (i, at) = self.int(what)?;
        u32::try_from(i).map(|v| (v, at)).map_err(|_| {
            self.err(
                at,
                FaultKind::OutOfRange,
                format!("{} is {i}, outside 0..=4294967295", what()),
            )
        })
    }

    /// A count of items that each take at least `min_values` values: checked
    /// against the values left before anything is sized by it.
    pub fn count(&mut self, what: &str, min_values: usize) -> Result<usize, LoadError> {
        self.count_with(&|| what.to_string(), min_values)
    }

    /// [`Reader::count`] with a description built only for messages.
    pub fn count_with(
        &mut self,
        what: &dyn Fn() -> String,
        min_values: usize,
    ) -> Result<usize, LoadError> {
        let (n, at) = self.u32(&|| format!("the number of {}", what()))?;
        let n = n as usize;
        let need = n as u64 * min_values as u64;
        if need > self.remaining() as u64 {
            return Err(self.err(
                at,
                FaultKind::Count,
                format!(
                    "{n} {} need at least {need} values but only {} follow",
                    what(),
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }

    /// A `FLOAT`: finite as an `f32`.
    pub fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32, LoadError> {
        let (v, at) = self.take(what)?;
        let f = match v {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Str(s) => {
                return Err(self.err(
                    at,
                    FaultKind::Syntax,
                    format!("{} is the string {s:?}, expected a number", what()),
                ))
            }
        };
        let x = f as f32;
        if !x.is_finite() {
            return Err(self.err(
                at,
                FaultKind::NonFinite,
                format!("{} is {f}, not a finite 32-bit float", what()),
            ));
        }
        Ok(x)
    }

    pub fn string(&mut self, what: &dyn Fn() -> String) -> Result<(&'o str, u32), LoadError> {
        let (v, at) = self.take(what)?;
        match v {
            Value::Str(s) => Ok((s, at)),
            _ => Err(self.err(at, FaultKind::Syntax, format!("{} is not a string", what()))),
        }
    }

    /// Three floats as a point or direction, mirrored into right-handed space.
    pub fn vec3_mirrored(&mut self, what: &dyn Fn() -> String) -> Result<Vec3, LoadError> {
        let x = self.f32(what)?;
        let y = self.f32(what)?;
        let z = self.f32(what)?;
        Ok(Vec3::new(x, y, -z))
    }

    /// Three floats as they are (scale keys).
    pub fn vec3(&mut self, what: &dyn Fn() -> String) -> Result<Vec3, LoadError> {
        Ok(Vec3::new(self.f32(what)?, self.f32(what)?, self.f32(what)?))
    }

    pub fn vec2(&mut self, what: &dyn Fn() -> String) -> Result<Vec2, LoadError> {
        Ok(Vec2::new(self.f32(what)?, self.f32(what)?))
    }

    /// A rotation key's quaternion, stored `w, x, y, z`, converted to the
    /// engine's convention: conjugated (the file stores the inverse of the
    /// rotation its frame matrices use, as seed 003's `quat.w = -quat.w`
    /// shows and the Wuson bind set confirms) and mirrored in Z.
    pub fn quat(&mut self, what: &dyn Fn() -> String) -> Result<(Quat, u32), LoadError> {
        let at = self.here();
        let w = self.f32(what)?;
        let x = self.f32(what)?;
        let y = self.f32(what)?;
        let z = self.f32(what)?;
        Ok((Quat::from_xyzw(x, y, -z, w), at))
    }

    /// A `Matrix4x4` (row-vector, left-handed) as a right-handed column-vector
    /// affine transform: see [`convert_matrix`].
    pub fn matrix(&mut self, what: &dyn Fn() -> String) -> Result<Affine3A, LoadError> {
        let at = self.here();
        let mut m = [0f32; 16];
        for v in &mut m {
            *v = self.f32(what)?;
        }
        convert_matrix(&m).ok_or_else(|| {
            self.err(
                at,
                FaultKind::Invalid,
                format!(
                    "{} is not affine: its last column is ({}, {}, {}, {}), expected (0, 0, 0, 1)",
                    what(),
                    m[3],
                    m[7],
                    m[11],
                    m[15]
                ),
            )
        })
    }
}

/// A .x `Matrix4x4` in file order (row-major, row vectors, left-handed) as
/// the engine's right-handed column-vector affine: `S * transpose(M) * S`
/// with `S = diag(1, 1, -1)`. Reading the 16 floats as glam's column-major
/// array is the transpose; the mirror negates row 2 and column 2 (the
/// corner entry twice, so it stays). `None` when the matrix is projective
/// (last column of the file's matrix not `(0, 0, 0, 1)` within 1e-4).
pub(crate) fn convert_matrix(m: &[f32; 16]) -> Option<Affine3A> {
    let mut c = *m;
    for (i, v) in c.iter_mut().enumerate() {
        let (row, col) = (i / 4, i % 4);
        if (row == 2) != (col == 2) {
            *v = -*v;
        }
    }
    let tol = 1e-4;
    if c[3].abs() > tol || c[7].abs() > tol || c[11].abs() > tol || (c[15] - 1.0).abs() > tol {
        return None;
    }
    Some(Affine3A::from_mat4(Mat4::from_cols_array(&c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_conversion_matches_mirrored_points() {
        // A row-vector LH matrix: rotate 90 degrees about Y (D3DXMatrixRotationY),
        // then translate by (1, 2, 3).
        let (s, c) = (1f32, 0f32);
        let m = [
            c, 0.0, -s, 0.0, //
            0.0, 1.0, 0.0, 0.0, //
            s, 0.0, c, 0.0, //
            1.0, 2.0, 3.0, 1.0,
        ];
        let a = convert_matrix(&m).unwrap();
        // Row-vector product in the file's space, then mirror, must equal
        // mirroring then the converted matrix.
        let p = [0.3f32, -0.7, 2.0];
        let mut q = [0f32; 3];
        for (j, qj) in q.iter_mut().enumerate() {
            *qj = p[0] * m[j] + p[1] * m[4 + j] + p[2] * m[8 + j] + m[12 + j];
        }
        let expect = Vec3::new(q[0], q[1], -q[2]);
        let got = a.transform_point3(Vec3::new(p[0], p[1], -p[2]));
        assert!(got.abs_diff_eq(expect, 1e-6), "{got} vs {expect}");
        let mut proj = m;
        proj[3] = 0.5;
        assert!(convert_matrix(&proj).is_none());
    }
}
