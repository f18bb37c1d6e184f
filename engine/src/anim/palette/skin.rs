use glam::Affine3A;

use super::formats::Affine4x3;
use crate::anim::{AnimError, Skeleton};

/// Binds a mesh to joints of a skeleton: the mesh's joint index `k` means
/// skeleton joint `joints[k]`, whose skinning matrix is
/// `model[joints[k]] * inverse_bind[k]` (identity in the bind pose).
#[derive(Clone, Debug, PartialEq)]
pub struct Skin {
    /// The skin's name, as errors show it; may be empty.
    pub name: String,
    /// Skeleton joint of each palette entry (the mesh's joint index).
    pub joints: Vec<u16>,
    /// Inverse bind matrix of each palette entry, as many as `joints`.
    pub inverse_bind: Vec<Affine3A>,
}

impl Skin {
    /// Every joint of the skeleton, in order, with the skeleton's inverse binds.
    pub fn whole_skeleton(skeleton: &Skeleton) -> Self {
        Self {
            name: String::new(),
            joints: (0..skeleton.len() as u16).collect(),
            inverse_bind: skeleton.inverse_bind().to_vec(),
        }
    }

    /// Number of palette entries.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether the skin has no entries.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Checks the skin against the skeleton it will be used with.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), AnimError> {
        if self.inverse_bind.len() != self.joints.len() {
            return Err(AnimError::LengthMismatch {
                what: "skin inverse bind matrices",
                expected: self.joints.len(),
                got: self.inverse_bind.len(),
            });
        }
        if let Some((k, &j)) = self
            .joints
            .iter()
            .enumerate()
            .find(|(_, &j)| j as usize >= skeleton.len())
        {
            return Err(AnimError::InvalidJob(format!(
                "skin {:?} entry {k} names joint {j}, but the skeleton has {}",
                self.name,
                skeleton.len()
            )));
        }
        Ok(())
    }

    /// Skinning matrices `model[joints[k]] * inverse_bind[k]`.
    pub fn skin_matrices(&self, model: &[Affine3A], out: &mut [Affine3A]) -> Result<(), AnimError> {
        if out.len() != self.joints.len() {
            return Err(AnimError::LengthMismatch {
                what: "skin matrix output",
                expected: self.joints.len(),
                got: out.len(),
            });
        }
        for ((o, &j), inv) in out.iter_mut().zip(&self.joints).zip(&self.inverse_bind) {
            let m = model.get(j as usize).ok_or_else(|| {
                AnimError::InvalidJob(format!(
                    "skin joint {j} outside {} model matrices",
                    model.len()
                ))
            })?;
            *o = *m * *inv;
        }
        Ok(())
    }
}

/// A [`Skin`] laid out for the 4x3 palette, built once per skin: the
/// inverse binds stored as 4x3 rows, so each bone's rows come out of
/// broadcasts and FMAs with no transpose, and the largest joint index, so
/// a frame checks one number rather than every entry.
#[derive(Clone, Debug, PartialEq)]
pub struct PaletteSkin {
    joints: Vec<u16>,
    inverse_rows: Vec<Affine4x3>,
    max_joint: Option<u16>,
}

impl PaletteSkin {
    /// Lays `skin` out; an `Err` when its inverse binds and joints differ
    /// in number.
    pub fn new(skin: &Skin) -> Result<Self, AnimError> {
        if skin.inverse_bind.len() != skin.joints.len() {
            return Err(AnimError::LengthMismatch {
                what: "skin inverse bind matrices",
                expected: skin.joints.len(),
                got: skin.inverse_bind.len(),
            });
        }
        Ok(Self {
            joints: skin.joints.clone(),
            inverse_rows: skin
                .inverse_bind
                .iter()
                .map(Affine4x3::from_affine)
                .collect(),
            max_joint: skin.joints.iter().copied().max(),
        })
    }

    /// Number of palette entries.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether the skin has no entries.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The 4x3 palette in one pass: `out[k]` gets the rows of
    /// `model[joints[k]] * inverse_bind[k]` (what [`Skin::skin_matrices`]
    /// then [`encode_4x3`](super::encode_4x3) give, with no matrix in
    /// between). `out` may be mapped GPU memory: each bone is written once,
    /// whole. On AVX2 + FMA the product runs vectorised (FMA rounding: the
    /// rows may differ from the scalar product in the last bits).
    pub fn palette_4x3(&self, model: &[Affine3A], out: &mut [Affine4x3]) -> Result<(), AnimError> {
        if out.len() != self.joints.len() {
            return Err(AnimError::LengthMismatch {
                what: "4x3 palette output",
                expected: self.joints.len(),
                got: out.len(),
            });
        }
        if let Some(j) = self.max_joint.filter(|&j| j as usize >= model.len()) {
            return Err(AnimError::InvalidJob(format!(
                "skin joint {j} outside {} model matrices",
                model.len()
            )));
        }
        #[cfg(target_arch = "x86_64")]
        if crate::anim::simd::avx2_fma() {
            // SAFETY: AVX2 + FMA checked; lengths equal (new() and above)
            // and every joint inside `model` (its largest, above).
            unsafe {
                crate::anim::simd::avx2::palette_rows_4x3(
                    model,
                    &self.joints,
                    &self.inverse_rows,
                    out,
                )
            };
            return Ok(());
        }
        self.palette_4x3_reference(model, out);
        Ok(())
    }

    /// The scalar definition (inputs checked): the matrix product, then
    /// rows.
    pub(crate) fn palette_4x3_reference(&self, model: &[Affine3A], out: &mut [Affine4x3]) {
        for ((o, &j), inv) in out.iter_mut().zip(&self.joints).zip(&self.inverse_rows) {
            *o = Affine4x3::from_affine(&(model[j as usize] * inv.to_affine()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Mat3A, Vec3A};
    use rand::{Rng, SeedableRng};

    fn random_affine(rng: &mut impl Rng) -> Affine3A {
        let mut r = || rng.gen_range(-2.0f32..2.0);
        Affine3A {
            matrix3: Mat3A::from_cols_array(&[r(), r(), r(), r(), r(), r(), r(), r(), r()]),
            translation: Vec3A::new(r() * 10.0, r() * 10.0, r() * 10.0),
        }
    }

    fn random_skin(rng: &mut impl Rng, n: usize, joints: usize) -> (Skin, Vec<Affine3A>) {
        let skin = Skin {
            name: "random".into(),
            joints: (0..n).map(|_| rng.gen_range(0..joints as u16)).collect(),
            inverse_bind: (0..n).map(|_| random_affine(rng)).collect(),
        };
        let model = (0..joints).map(|_| random_affine(rng)).collect();
        (skin, model)
    }

    /// Each row element within a few ulps of the sum of the magnitudes of
    /// the terms it adds (the product of the absolute matrices): the fast
    /// path fuses multiply and add where the definition rounds twice.
    fn assert_rows_close(got: &[Affine4x3], want: &[Affine4x3], bound: &[Affine4x3], what: &str) {
        assert_eq!(got.len(), want.len());
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            for i in 0..3 {
                for c in 0..4 {
                    let d = (g.rows[i][c] - w.rows[i][c]).abs();
                    assert!(
                        d <= 4.0 * f32::EPSILON * bound[k].rows[i][c],
                        "{what} bone {k} row {i} col {c}: {} vs {}",
                        g.rows[i][c],
                        w.rows[i][c]
                    );
                }
            }
        }
    }

    fn abs(m: &Affine3A) -> Affine3A {
        Affine3A {
            matrix3: m.matrix3.abs(),
            translation: m.translation.abs(),
        }
    }

    #[test]
    fn palette_4x3_is_skin_matrices_then_rows() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(41);
        for n in [0usize, 1, 3, 64, 257] {
            let (skin, model) = random_skin(&mut rng, n, 70);
            let mut mats = vec![Affine3A::IDENTITY; n];
            skin.skin_matrices(&model, &mut mats).unwrap();
            let mut want = vec![Affine4x3::default(); n];
            crate::anim::encode_4x3(&mats, &mut want);
            let prepared = PaletteSkin::new(&skin).unwrap();
            let mut reference = vec![Affine4x3::default(); n];
            prepared.palette_4x3_reference(&model, &mut reference);
            assert_eq!(reference, want, "the definition is the two-step palette");
            // The sum of the magnitudes of the terms each element adds.
            let bound_skin = Skin {
                name: String::new(),
                joints: skin.joints.clone(),
                inverse_bind: skin.inverse_bind.iter().map(abs).collect(),
            };
            let abs_model: Vec<Affine3A> = model.iter().map(abs).collect();
            let mut bound = vec![Affine4x3::default(); n];
            PaletteSkin::new(&bound_skin)
                .unwrap()
                .palette_4x3_reference(&abs_model, &mut bound);
            let mut got = vec![Affine4x3::default(); n];
            prepared.palette_4x3(&model, &mut got).unwrap();
            assert_rows_close(&got, &want, &bound, &format!("palette_4x3 n {n}"));
            #[cfg(target_arch = "x86_64")]
            for tier in crate::anim::simd::testable_tiers() {
                let mut rows = vec![Affine4x3::default(); n];
                // SAFETY: testable_tiers lists only tiers this CPU runs
                // (AVX2 + FMA at least); lengths equal, joints < 70.
                unsafe {
                    crate::anim::simd::avx2::palette_rows_4x3(
                        &model,
                        &skin.joints,
                        &prepared.inverse_rows,
                        &mut rows,
                    )
                };
                assert_rows_close(&rows, &want, &bound, &format!("{tier:?} n {n}"));
                if n > 0 {
                    assert_ne!(rows, vec![Affine4x3::default(); n], "{tier:?} wrote rows");
                }
            }
        }
    }

    #[test]
    fn palette_4x3_refuses_bad_lengths_and_joints() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(42);
        let (mut skin, model) = random_skin(&mut rng, 8, 10);
        let mut short = vec![Affine4x3::default(); 7];
        let e = PaletteSkin::new(&skin)
            .unwrap()
            .palette_4x3(&model, &mut short)
            .unwrap_err();
        assert!(e.to_string().contains("4x3 palette output"), "{e}");
        let mut out = vec![Affine4x3::default(); 8];
        skin.joints[5] = 10;
        let e = PaletteSkin::new(&skin)
            .unwrap()
            .palette_4x3(&model, &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("joint 10 outside 10"), "{e}");
        skin.joints[5] = 0;
        skin.inverse_bind.pop();
        let e = PaletteSkin::new(&skin).unwrap_err();
        assert!(e.to_string().contains("inverse bind"), "{e}");
    }
}
