use glam::Affine3A;

use super::{AnimError, Skeleton};

/// Binds a mesh to joints of a skeleton: the mesh's joint index `k` means
/// skeleton joint `joints[k]`, whose skinning matrix is
/// `model[joints[k]] * inverse_bind[k]` (identity in the bind pose).
#[derive(Clone, Debug, PartialEq)]
pub struct Skin {
    pub name: String,
    pub joints: Vec<u16>,
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

    pub fn len(&self) -> usize {
        self.joints.len()
    }

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
