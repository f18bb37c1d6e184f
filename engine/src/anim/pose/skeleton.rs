use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use glam::Affine3A;

use crate::anim::{AnimError, Transform};

/// Parent index of a root joint.
pub const NO_PARENT: u16 = u16::MAX;
/// Most joints a skeleton holds (indices are `u16`, one value is the root marker).
pub const MAX_JOINTS: usize = NO_PARENT as usize;

/// A joint hierarchy in flat arrays, sorted so that every parent index is
/// smaller than its child's (`parents[i] < i`). Local-to-model is then one
/// forward pass. Several roots are allowed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skeleton {
    names: Vec<String>,
    parents: Vec<u16>,
    bind_local: Vec<Transform>,
    inverse_bind: Vec<Affine3A>,
}

impl Skeleton {
    /// Builds a skeleton from a parent list in any order.
    ///
    /// Joints are sorted with a stable topological sort: a list that already
    /// has `parents[i] < i` keeps its order; otherwise each joint is placed
    /// as early as its parent allows, ties broken by the input order. Returns
    /// the skeleton and the remap `new_index[old_index]`.
    ///
    /// Inverse bind matrices are the inverses of the bind pose's model
    /// matrices; [`Skeleton::set_inverse_bind`] replaces them.
    pub fn new(
        names: Vec<String>,
        parents: &[Option<usize>],
        bind_local: Vec<Transform>,
    ) -> Result<(Self, Vec<usize>), AnimError> {
        let n = parents.len();
        if n > MAX_JOINTS {
            return Err(AnimError::TooManyJoints {
                count: n,
                max: MAX_JOINTS,
            });
        }
        if names.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "joint names",
                expected: n,
                got: names.len(),
            });
        }
        if bind_local.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "bind-pose transforms",
                expected: n,
                got: bind_local.len(),
            });
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut heap = BinaryHeap::new();
        for (joint, parent) in parents.iter().enumerate() {
            match *parent {
                None => heap.push(Reverse(joint)),
                Some(p) if p >= n => {
                    return Err(AnimError::ParentOutOfRange {
                        joint,
                        parent: p,
                        count: n,
                    })
                }
                Some(p) if p == joint => {
                    return Err(AnimError::Cycle {
                        joint,
                        name: names[joint].clone(),
                    })
                }
                Some(p) => children[p].push(joint),
            }
        }
        // Kahn's algorithm with a min-heap on the input index: stable.
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(j)) = heap.pop() {
            order.push(j);
            for &c in &children[j] {
                heap.push(Reverse(c));
            }
        }
        if order.len() != n {
            let mut placed = vec![false; n];
            for &j in &order {
                placed[j] = true;
            }
            let joint = placed.iter().position(|p| !p).unwrap_or(0);
            return Err(AnimError::Cycle {
                joint,
                name: names[joint].clone(),
            });
        }
        let mut remap = vec![0usize; n];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new;
        }
        let mut names = names;
        let mut sorted_names = Vec::with_capacity(n);
        let mut sorted_parents = Vec::with_capacity(n);
        let mut sorted_bind = Vec::with_capacity(n);
        for &old in &order {
            sorted_names.push(std::mem::take(&mut names[old]));
            sorted_parents.push(match parents[old] {
                Some(p) => remap[p] as u16,
                None => NO_PARENT,
            });
            sorted_bind.push(bind_local[old]);
        }
        let mut skeleton = Self {
            names: sorted_names,
            parents: sorted_parents,
            bind_local: sorted_bind,
            inverse_bind: Vec::new(),
        };
        skeleton.inverse_bind = skeleton.bind_model().iter().map(|m| m.inverse()).collect();
        Ok((skeleton, remap))
    }

    /// Builds a skeleton from first-child / next-sibling links (seed 000's
    /// `Bone` layout). Joints that no link reaches are roots.
    pub fn from_first_child_sibling(
        names: Vec<String>,
        first_child: &[Option<usize>],
        sibling: &[Option<usize>],
        bind_local: Vec<Transform>,
    ) -> Result<(Self, Vec<usize>), AnimError> {
        let n = first_child.len();
        if sibling.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "sibling links",
                expected: n,
                got: sibling.len(),
            });
        }
        if names.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "joint names",
                expected: n,
                got: names.len(),
            });
        }
        let mut parents: Vec<Option<usize>> = vec![None; n];
        for (p, &first) in first_child.iter().enumerate() {
            let mut next = first;
            let mut steps = 0;
            while let Some(c) = next {
                if c >= n {
                    return Err(AnimError::ParentOutOfRange {
                        joint: c,
                        parent: p,
                        count: n,
                    });
                }
                steps += 1;
                if steps > n || c == p {
                    return Err(AnimError::Cycle {
                        joint: c,
                        name: names[c].clone(),
                    });
                }
                if parents[c].is_some() {
                    return Err(AnimError::TwoParents {
                        joint: c,
                        name: names[c].clone(),
                    });
                }
                parents[c] = Some(p);
                next = sibling[c];
            }
        }
        Self::new(names, &parents, bind_local)
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether the skeleton has no joints.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Joint names, in joint order (not necessarily unique).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Parent indices, [`NO_PARENT`] for roots; `parents()[i] < i` otherwise.
    pub fn parents(&self) -> &[u16] {
        &self.parents
    }

    /// The parent of `joint`, `None` for a root. Panics if `joint` is out of range.
    pub fn parent(&self, joint: usize) -> Option<usize> {
        match self.parents[joint] {
            NO_PARENT => None,
            p => Some(p as usize),
        }
    }

    /// Bind-pose transforms, relative to each joint's parent.
    pub fn bind_local(&self) -> &[Transform] {
        &self.bind_local
    }

    /// Inverse bind matrices: the inverse of each joint's bind-pose model matrix
    /// unless replaced.
    pub fn inverse_bind(&self) -> &[Affine3A] {
        &self.inverse_bind
    }

    /// Replaces the inverse bind matrices (a file's own, say).
    pub fn set_inverse_bind(&mut self, inverse_bind: Vec<Affine3A>) -> Result<(), AnimError> {
        if inverse_bind.len() != self.len() {
            return Err(AnimError::LengthMismatch {
                what: "inverse bind matrices",
                expected: self.len(),
                got: inverse_bind.len(),
            });
        }
        self.inverse_bind = inverse_bind;
        Ok(())
    }

    /// Model-space bind pose: one forward pass over the bind-local transforms.
    pub fn bind_model(&self) -> Vec<Affine3A> {
        let mut model: Vec<Affine3A> = Vec::with_capacity(self.len());
        for (i, local) in self.bind_local.iter().enumerate() {
            let m = match self.parents[i] {
                NO_PARENT => local.to_affine(),
                p => model[p as usize] * local.to_affine(),
            };
            model.push(m);
        }
        model
    }

    /// Index of the first joint with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// A name -> joint map for loaders that resolve joints by name; an error
    /// when two joints share a name, since the lookup would be ambiguous.
    pub fn name_index(&self) -> Result<HashMap<&str, usize>, AnimError> {
        let mut map = HashMap::with_capacity(self.len());
        for (i, name) in self.names.iter().enumerate() {
            if let Some(first) = map.insert(name.as_str(), i) {
                return Err(AnimError::DuplicateName {
                    name: name.clone(),
                    first,
                    second: i,
                });
            }
        }
        Ok(map)
    }

    /// Number of joints from `joint` up to its root, itself included.
    pub fn depth(&self, joint: usize) -> usize {
        let mut d = 1;
        let mut j = joint;
        while let Some(p) = self.parent(j) {
            d += 1;
            j = p;
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("j{i}")).collect()
    }

    #[test]
    fn sorted_input_keeps_its_order() {
        let parents = [None, Some(0), Some(1), Some(0), None, Some(4)];
        let (s, remap) = Skeleton::new(names(6), &parents, vec![Transform::IDENTITY; 6]).unwrap();
        assert_eq!(remap, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(s.parents(), &[NO_PARENT, 0, 1, 0, NO_PARENT, 4]);
    }

    #[test]
    fn unsorted_input_is_sorted_with_remap() {
        // 0's parent is 2, 2's parent is 1, 1 is the root.
        let parents = [Some(2), None, Some(1)];
        let (s, remap) = Skeleton::new(names(3), &parents, vec![Transform::IDENTITY; 3]).unwrap();
        assert_eq!(remap, vec![2, 0, 1]);
        assert_eq!(s.names(), &["j1", "j2", "j0"]);
        for (i, &p) in s.parents().iter().enumerate() {
            assert!(p == NO_PARENT || (p as usize) < i);
        }
    }

    #[test]
    fn cycles_and_bad_parents_are_errors() {
        let e = Skeleton::new(
            names(3),
            &[Some(2), Some(0), Some(1)],
            vec![Transform::IDENTITY; 3],
        );
        assert!(matches!(e, Err(AnimError::Cycle { .. })));
        let e = Skeleton::new(names(2), &[None, Some(7)], vec![Transform::IDENTITY; 2]);
        assert!(matches!(
            e,
            Err(AnimError::ParentOutOfRange { parent: 7, .. })
        ));
        let e = Skeleton::new(names(1), &[Some(0)], vec![Transform::IDENTITY; 1]);
        assert!(matches!(e, Err(AnimError::Cycle { .. })));
    }

    #[test]
    fn first_child_sibling_links() {
        // Seed 000: 0 -> {1 -> 2, 3 -> 4, 5 -> 6}.
        let fc = [Some(1), Some(2), None, Some(4), None, Some(6), None];
        let sib = [None, Some(3), None, Some(5), None, None, None];
        let (s, remap) =
            Skeleton::from_first_child_sibling(names(7), &fc, &sib, vec![Transform::IDENTITY; 7])
                .unwrap();
        assert_eq!(remap, (0..7).collect::<Vec<_>>());
        assert_eq!(s.parents(), &[NO_PARENT, 0, 1, 0, 3, 0, 5]);
        // A sibling loop is a cycle, not a hang.
        let fc = [Some(1), None, None];
        let sib = [None, Some(2), Some(1)];
        let e =
            Skeleton::from_first_child_sibling(names(3), &fc, &sib, vec![Transform::IDENTITY; 3]);
        assert!(e.is_err());
    }

    #[test]
    fn duplicate_names_fail_lookup_only() {
        let (s, _) = Skeleton::new(
            vec!["a".into(), "a".into()],
            &[None, Some(0)],
            vec![Transform::IDENTITY; 2],
        )
        .unwrap();
        assert!(matches!(
            s.name_index(),
            Err(AnimError::DuplicateName { .. })
        ));
    }

    #[test]
    fn inverse_bind_inverts_bind_model() {
        let bind = vec![
            Transform::from_translation_rotation(
                Vec3::new(1.0, 2.0, 3.0),
                Quat::from_rotation_z(0.3),
            ),
            Transform::from_translation_rotation(
                Vec3::new(0.0, 1.0, 0.0),
                Quat::from_rotation_x(-1.1),
            ),
        ];
        let (s, _) = Skeleton::new(names(2), &[None, Some(0)], bind).unwrap();
        for (m, inv) in s.bind_model().iter().zip(s.inverse_bind()) {
            let id = *m * *inv;
            assert!(id.abs_diff_eq(Affine3A::IDENTITY, 1e-6));
        }
    }
}
