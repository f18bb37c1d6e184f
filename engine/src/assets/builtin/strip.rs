//! Seed 002's strip: twelve vertices in five quads up the XY plane, five
//! joints in a chain, every joint turned about Z a little more each frame.

use glam::{Quat, Vec3};

use super::super::Model;
use crate::anim::{Skeleton, Transform};

/// Seed 002's strip, its data exactly as the seed types it: positions,
/// normals (+Z), two triangles per quad, four joint indices and three
/// weights per vertex (the fourth weight is one minus the others).
///
/// The seed gives no joint positions; here joint `k` sits at
/// `(2.5, k + 0.5, 0)`, between the rows its weights share (the seed's own
/// aside moves "to x 2.5, y 1.5", joint 1), each a child of the one below.
pub struct Strip;

impl Strip {
    /// Vertex positions, two per row, rows at y = 0..=5.
    pub const POSITIONS: [[f32; 3]; 12] = [
        [2.0, 0.0, 0.0],
        [2.0, 1.0, 0.0],
        [3.0, 1.0, 0.0],
        [3.0, 0.0, 0.0],
        [2.0, 2.0, 0.0],
        [3.0, 2.0, 0.0],
        [2.0, 3.0, 0.0],
        [3.0, 3.0, 0.0],
        [2.0, 4.0, 0.0],
        [3.0, 4.0, 0.0],
        [2.0, 5.0, 0.0],
        [3.0, 5.0, 0.0],
    ];
    /// Triangle list, two triangles per quad.
    pub const INDICES: [u32; 30] = [
        0, 1, 2, 2, 3, 0, 1, 4, 5, 5, 2, 1, 4, 6, 7, 7, 5, 4, 6, 8, 9, 9, 7, 6, 8, 10, 11, 11, 9, 8,
    ];
    /// Four joint indices per vertex.
    pub const JOINT_INDICES: [[u16; 4]; 12] = [
        [0, 0, 0, 0],
        [1, 2, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 0],
        [1, 2, 0, 0],
        [1, 2, 0, 0],
        [2, 3, 0, 0],
        [2, 3, 0, 0],
        [3, 4, 0, 0],
        [3, 4, 0, 0],
        [4, 0, 0, 0],
        [4, 0, 0, 0],
    ];
    /// Three explicit weights per vertex; the fourth is `1 - w0 - w1 - w2`.
    pub const WEIGHTS: [[f32; 3]; 12] = [
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
    ];
    /// The seed turns every joint about Z.
    pub const AXIS: Vec3 = Vec3::Z;

    /// The five-joint chain `bone0`..`bone4`: the root at (2.5, 0.5, 0),
    /// each child one unit up +Y from its parent, no rotation.
    pub fn skeleton() -> Skeleton {
        let names = (0..5).map(|k| format!("bone{k}")).collect();
        let parents = [None, Some(0), Some(1), Some(2), Some(3)];
        let bind_local = (0..5)
            .map(|k| {
                let at = if k == 0 {
                    Vec3::new(2.5, 0.5, 0.0)
                } else {
                    Vec3::Y
                };
                Transform::from_translation_rotation(at, Quat::IDENTITY)
            })
            .collect();
        match Skeleton::new(names, &parents, bind_local) {
            Ok((s, _)) => s,
            Err(e) => unreachable!("the built-in strip hierarchy is valid: {e}"),
        }
    }

    /// The whole model: skeleton, one skin over all joints, one mesh
    /// (normals +Z), no clips (the animation is procedural, see
    /// [`Strip::pose`]).
    pub fn model() -> Model {
        super::seed::seed_model(
            "strip",
            Self::skeleton(),
            Self::POSITIONS.iter().map(|&p| Vec3::from(p)).collect(),
            &Self::JOINT_INDICES,
            &Self::WEIGHTS,
            &Self::INDICES,
        )
    }

    /// The seed's per-frame step: frame `n` (from 0) turns every joint by
    /// a further `sin(count_n) / 5` radians, `count_n = n * step` (the seed
    /// counts frames, `step` 1). Returns the angle after frames `0..=n`,
    /// summed in f64 so long runs keep their precision.
    pub fn angle(n: u64, step: f64) -> f32 {
        (0..=n).map(|k| (k as f64 * step).sin() / 5.0).sum::<f64>() as f32
    }

    /// Every joint at its bind pose turned by `angle` about Z.
    pub fn pose(skeleton: &Skeleton, angle: f32, out: &mut [Transform]) {
        let r = Quat::from_axis_angle(Self::AXIS, angle);
        for (o, bind) in out.iter_mut().zip(skeleton.bind_local()) {
            *o = *bind;
            o.rotation = bind.rotation * r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Affine3A, Mat3};

    /// The seed's own arithmetic: matrices blended by weight, positions by
    /// the blend, normals by its inverse transpose.
    fn seed_skin(skin: &[Affine3A]) -> (Vec<Vec3>, Vec<Vec3>) {
        let mut pos = Vec::new();
        let mut nrm = Vec::new();
        for v in 0..12 {
            let w = Strip::WEIGHTS[v];
            let w4 = 1.0 - (w[0] + w[1] + w[2]);
            let ws = [w[0], w[1], w[2], w4];
            let mut m = glam::Mat4::ZERO;
            for (k, &wk) in ws.iter().enumerate() {
                m += glam::Mat4::from(skin[Strip::JOINT_INDICES[v][k] as usize]) * wk;
            }
            pos.push(m.transform_point3(Vec3::from(Strip::POSITIONS[v])));
            let n = Mat3::from_mat4(m).inverse().transpose() * Vec3::Z;
            nrm.push(n.normalize());
        }
        (pos, nrm)
    }

    #[test]
    fn engine_skinning_equals_the_seeds_arithmetic() {
        let model = Strip::model();
        let mut locals = vec![Transform::IDENTITY; 5];
        for n in [0u64, 3, 17, 40] {
            Strip::pose(&model.skeleton, Strip::angle(n, 1.0), &mut locals);
            let skin = model.skin_matrices(&locals).unwrap().remove(0);
            let (want_p, want_n) = seed_skin(&skin);
            let got = model.skin_cpu(&locals).unwrap().remove(0);
            for v in 0..12 {
                let (p, nrm) = (got.positions[v], got.normals[v]);
                assert!(p.abs_diff_eq(want_p[v], 1e-5), "frame {n} vertex {v}");
                assert!(nrm.abs_diff_eq(want_n[v], 1e-5), "frame {n} normal {v}");
            }
        }
        // The bind pose leaves the strip as typed; later frames bend it.
        Strip::pose(&model.skeleton, 0.0, &mut locals);
        let skin = model.skin_matrices(&locals).unwrap().remove(0);
        assert!(skin.iter().all(|m| m.abs_diff_eq(Affine3A::IDENTITY, 1e-6)));
        assert!(Strip::angle(2, 1.0) > 0.3);
    }

    #[test]
    fn the_angle_is_the_running_sum_of_the_seeds_steps() {
        let a: f64 = (0..=10).map(|k| (k as f64).sin() / 5.0).sum();
        assert!((Strip::angle(10, 1.0) as f64 - a).abs() < 1e-6);
        assert_eq!(Strip::angle(0, 1.0), 0.0);
    }
}
