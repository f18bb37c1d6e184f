//! The one error metric both libraries are measured by.
//!
//! For every joint, three virtual vertices at distance `d` from the joint
//! along its local x, y and z axes (`d * e_x`, `d * e_y`, `d * e_z` in the
//! joint's frame, scale included) are taken to model space through the
//! reference pose and through the candidate pose; the joint's error is the
//! largest of the three distances between the two positions. Both poses go
//! through the whole hierarchy (local-to-model), so an error in a parent
//! shows in every descendant, as ozz's optimizer and ACL accumulate it.

use vkskin::anim::Transform;
use vkskin::glam::{Affine3A, Vec3};

/// Model-space matrices of local transforms; `parents[i] < i`.
pub fn model_space(parents: &[Option<usize>], locals: &[Transform]) -> Vec<Affine3A> {
    let mut out: Vec<Affine3A> = Vec::with_capacity(locals.len());
    for (i, l) in locals.iter().enumerate() {
        let local = l.to_affine();
        let m = match parents.get(i).copied().flatten() {
            Some(p) if p < i => out[p] * local,
            _ => local,
        };
        out.push(m);
    }
    out
}

/// Per joint, the error of `candidate` against `reference` (local poses of
/// one skeleton) at the three axis points at distance `d`.
pub fn joint_errors(
    parents: &[Option<usize>],
    reference: &[Transform],
    candidate: &[Transform],
    d: f32,
) -> Vec<f32> {
    let a = model_space(parents, reference);
    let b = model_space(parents, candidate);
    a.iter()
        .zip(&b)
        .map(|(a, b)| {
            [Vec3::X, Vec3::Y, Vec3::Z]
                .iter()
                .map(|&axis| {
                    let p = axis * d;
                    a.transform_point3(p).distance(b.transform_point3(p))
                })
                .fold(0.0f32, f32::max)
        })
        .collect()
}

/// Worst and 99th percentile (nearest rank) of a set of errors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorStats {
    pub worst: f32,
    pub p99: f32,
    pub samples: usize,
}

impl ErrorStats {
    /// Over every joint of every evaluated pose.
    pub fn of(mut errors: Vec<f32>) -> Self {
        if errors.is_empty() {
            return Self::default();
        }
        errors.sort_by(f32::total_cmp);
        let rank = ((errors.len() as f64 * 0.99).ceil() as usize).clamp(1, errors.len());
        Self {
            worst: errors[errors.len() - 1],
            p99: errors[rank - 1],
            samples: errors.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vkskin::glam::Quat;

    /// A root at the origin and a child 0.5 along the root's x; the
    /// candidate turns the root by a further theta about z. The root's
    /// vertices lie d from the axis of the error rotation (x, y) or on it
    /// (z): error 2 sin(theta/2) d. The child's x vertex lies (0.5 + d) from
    /// that axis: error 2 sin(theta/2) (0.5 + d), the largest.
    #[test]
    fn two_joint_chain_rotation_error() {
        let parents = [None, Some(0)];
        let root = Transform::from_translation_rotation(Vec3::ZERO, Quat::from_rotation_y(0.0));
        let child = Transform::from_translation_rotation(Vec3::new(0.5, 0.0, 0.0), Quat::IDENTITY);
        let theta = 0.01f32;
        let turned = Transform::from_translation_rotation(Vec3::ZERO, Quat::from_rotation_z(theta));
        let d = 0.1;
        let e = joint_errors(&parents, &[root, child], &[turned, child], d);
        let chord = 2.0 * (theta / 2.0).sin();
        assert!((e[0] - chord * d).abs() < 1e-6, "root {}", e[0]);
        assert!((e[1] - chord * (0.5 + d)).abs() < 1e-6, "child {}", e[1]);
        // Same pose: no error; the error grows with d.
        let zero = joint_errors(&parents, &[root, child], &[root, child], d);
        assert_eq!(zero, vec![0.0, 0.0]);
        let far = joint_errors(&parents, &[root, child], &[turned, child], 2.0 * d);
        assert!(far[1] > e[1]);
    }

    /// A translation error of the child alone moves all its vertices by it.
    #[test]
    fn translation_error_is_the_offset() {
        let parents = [None, Some(0)];
        let root = Transform::IDENTITY;
        let child = Transform::from_translation_rotation(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY);
        let moved =
            Transform::from_translation_rotation(Vec3::new(0.0, 1.003, 0.0), Quat::IDENTITY);
        let e = joint_errors(&parents, &[root, child], &[root, moved], 0.03);
        assert_eq!(e[0], 0.0);
        assert!((e[1] - 0.003).abs() < 1e-6, "{}", e[1]);
    }

    #[test]
    fn percentile() {
        let s = ErrorStats::of((1..=200).map(|i| i as f32).collect());
        assert_eq!((s.worst, s.p99, s.samples), (200.0, 198.0, 200));
        assert_eq!(ErrorStats::of(vec![]), ErrorStats::default());
    }
}
