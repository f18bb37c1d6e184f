use glam::Affine3A;

use super::{AnimError, Skeleton, Transform, NO_PARENT};

/// Local-to-model: `model[i] = model[parent[i]] * local[i]`, roots taking
/// `root * local[i]`. One forward pass over the flat arrays.
///
/// Only joints `from..to` are written; joints before `from` must already hold
/// valid model matrices (their parents are read, never recomputed). The full
/// update is `from = 0, to = skeleton.len()`.
pub struct LocalToModelJob<'a> {
    pub skeleton: &'a Skeleton,
    pub locals: &'a [Transform],
    pub root: Affine3A,
    pub from: usize,
    pub to: usize,
    pub models: &'a mut [Affine3A],
}

impl<'a> LocalToModelJob<'a> {
    /// The whole skeleton with an identity root.
    pub fn full(
        skeleton: &'a Skeleton,
        locals: &'a [Transform],
        models: &'a mut [Affine3A],
    ) -> Self {
        Self {
            skeleton,
            locals,
            root: Affine3A::IDENTITY,
            from: 0,
            to: skeleton.len(),
            models,
        }
    }

    pub fn validate(&self) -> Result<(), AnimError> {
        let n = self.skeleton.len();
        if self.locals.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "local transforms",
                expected: n,
                got: self.locals.len(),
            });
        }
        if self.models.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "model matrices",
                expected: n,
                got: self.models.len(),
            });
        }
        if self.from > self.to || self.to > n {
            return Err(AnimError::InvalidJob(format!(
                "local-to-model range {}..{} outside 0..{n}",
                self.from, self.to
            )));
        }
        Ok(())
    }

    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        let parents = &self.skeleton.parents()[..self.to];
        for i in self.from..self.to {
            let local = self.locals[i].to_affine();
            let p = parents[i];
            self.models[i] = if p == NO_PARENT {
                self.root * local
            } else {
                self.models[p as usize] * local
            };
        }
        Ok(())
    }
}
