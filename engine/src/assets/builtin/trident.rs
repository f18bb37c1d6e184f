use glam::{Affine3A, Quat, Vec3};

use crate::anim::{Skeleton, Transform};
use crate::assets::Model;

/// Seed 000's hand-made "whitebox" trident: 7 joints, 15 vertices, 13
/// triangles, skinned by up to 4 influences with the fourth weight implied.
pub struct Trident;

impl Trident {
    /// Number of joints.
    pub const JOINTS: usize = 7;

    /// Vertex positions (z = 0), exactly as the seed types them.
    pub const POSITIONS: [[f32; 2]; 15] = [
        [-0.5000, -2.2887],
        [-0.5000, -1.2887],
        [-0.5000, -0.2887],
        [-1.3660, 0.2113],
        [-2.2321, 0.7113],
        [-1.7321, 1.5774],
        [-0.8660, 1.0774],
        [0.0000, 0.5774],
        [0.8660, 1.0774],
        [1.7321, 1.5774],
        [2.2321, 0.7113],
        [1.3660, 0.2113],
        [0.5000, -0.2887],
        [0.5000, -1.2887],
        [0.5000, -2.2887],
    ];

    /// Three explicit weights per vertex; the fourth is `1 - w0 - w1 - w2`.
    pub const WEIGHTS: [[f32; 3]; 15] = [
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [1.0, 0.0, 0.0],
    ];

    /// Four joint indices per vertex.
    pub const JOINT_INDICES: [[u16; 4]; 15] = [
        [2, 0, 0, 0],
        [1, 2, 0, 0],
        [0, 0, 0, 0],
        [3, 4, 0, 0],
        [4, 0, 0, 0],
        [4, 0, 0, 0],
        [3, 4, 0, 0],
        [0, 0, 0, 0],
        [5, 6, 0, 0],
        [6, 0, 0, 0],
        [6, 0, 0, 0],
        [5, 6, 0, 0],
        [0, 0, 0, 0],
        [1, 2, 0, 0],
        [2, 0, 0, 0],
    ];

    /// Triangle list, 13 triangles.
    pub const INDICES: [u32; 39] = [
        0, 1, 14, 1, 13, 14, 1, 2, 13, 2, 12, 13, 2, 7, 12, 2, 6, 7, 2, 3, 6, 3, 5, 6, 3, 4, 5, 7,
        8, 12, 8, 11, 12, 8, 9, 11, 9, 10, 11,
    ];

    /// Bind rotation about Z (degrees) of each joint, in model space.
    pub const BIND_DEGREES: [f32; 7] = [-90.0, -90.0, -90.0, 150.0, 150.0, 30.0, 30.0];

    /// Bind position (x, y) of each joint, in model space.
    pub const BIND_POSITIONS: [[f32; 2]; 7] = [
        [0.0, 0.0],
        [0.0, -1.0],
        [0.0, -2.0],
        [-0.6830, 0.3943],
        [-1.5490, 0.8943],
        [0.6830, 0.3943],
        [1.5490, 0.8943],
    ];

    /// First-child / sibling links, as seed 000 wires its `Bone` array.
    pub const FIRST_CHILD: [Option<usize>; 7] =
        [Some(1), Some(2), None, Some(4), None, Some(6), None];
    /// Next-sibling links, the other half of [`Trident::FIRST_CHILD`].
    pub const SIBLING: [Option<usize>; 7] = [None, Some(3), None, Some(5), None, None, None];

    /// Model-space bind matrix of joint `i`: rotate about Z, then translate.
    pub fn bind_model(i: usize) -> Affine3A {
        let [x, y] = Self::BIND_POSITIONS[i];
        Affine3A::from_rotation_translation(
            Quat::from_rotation_z(Self::BIND_DEGREES[i].to_radians()),
            Vec3::new(x, y, 0.0),
        )
    }

    /// The skeleton: model-space bind poses made parent-relative
    /// (`local = inverse(parent bind) * bind`).
    pub fn skeleton() -> Skeleton {
        let mut parents = [None; 7];
        for p in 0..7 {
            let mut c = Self::FIRST_CHILD[p];
            while let Some(ci) = c {
                parents[ci] = Some(p);
                c = Self::SIBLING[ci];
            }
        }
        let bind_local = (0..7)
            .map(|i| {
                let local = match parents[i] {
                    Some(p) => Self::bind_model(p).inverse() * Self::bind_model(i),
                    None => Self::bind_model(i),
                };
                Transform::from_affine(&local)
            })
            .collect();
        let names = (0..7).map(|i| format!("joint{i}")).collect();
        // The seed's links are a valid tree, already in parent-before-child order.
        match Skeleton::from_first_child_sibling(
            names,
            &Self::FIRST_CHILD,
            &Self::SIBLING,
            bind_local,
        ) {
            Ok((s, _)) => s,
            Err(e) => unreachable!("the built-in trident hierarchy is valid: {e}"),
        }
    }

    /// The whole model: skeleton, one skin over all joints, one mesh, no clips
    /// (the animation is procedural, see [`Trident::pose`]).
    pub fn model() -> Model {
        super::seed::seed_model(
            "trident",
            Self::skeleton(),
            Self::POSITIONS
                .iter()
                .map(|&[x, y]| Vec3::new(x, y, 0.0))
                .collect(),
            &Self::JOINT_INDICES,
            &Self::WEIGHTS,
            &Self::INDICES,
        )
    }

    /// The seed's animation at time `t` (seconds): joints 1..=6 turn about
    /// their own Y axis by `70 deg * sin(t)` on top of their bind pose; the
    /// root keeps its bind pose.
    pub fn pose(skeleton: &Skeleton, t: f32, out: &mut [Transform]) {
        let delta = Quat::from_rotation_y((70.0f32 * t.sin()).to_radians());
        for (i, (o, bind)) in out.iter_mut().zip(skeleton.bind_local()).enumerate() {
            *o = *bind;
            if i > 0 {
                o.rotation = bind.rotation * delta;
            }
        }
    }

    /// The whole model turns about Z by `0.1 t` radians.
    pub fn root(t: f32) -> Affine3A {
        Affine3A::from_rotation_z(0.1 * t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{LinearBlendJob, LocalToModelJob};

    #[test]
    fn bind_pose_skins_to_the_stored_positions() {
        let model = Trident::model();
        let s = &model.skeleton;
        let mut models = vec![Affine3A::IDENTITY; 7];
        LocalToModelJob::full(s, s.bind_local(), &mut models)
            .run()
            .unwrap();
        for (i, m) in models.iter().enumerate() {
            assert!(m.abs_diff_eq(Trident::bind_model(i), 1e-5), "joint {i}");
        }
        let mut skin = vec![Affine3A::IDENTITY; 7];
        model.skins[0].skin_matrices(&models, &mut skin).unwrap();
        for m in &skin {
            assert!(m.abs_diff_eq(Affine3A::IDENTITY, 1e-5));
        }
        let mesh = &model.meshes[0];
        let mut out = vec![Vec3::ZERO; 15];
        LinearBlendJob {
            skin: &skin,
            per_vertex: 4,
            joints: &mesh.influences.joints,
            weights: &mesh.influences.weights,
            positions: &mesh.positions,
            normals: &[],
            out_positions: &mut out,
            out_normals: &mut [],
            unit_normals: false,
        }
        .run()
        .unwrap();
        for (a, b) in out.iter().zip(&mesh.positions) {
            assert!(a.abs_diff_eq(*b, 1e-5));
        }
    }

    #[test]
    fn seed_recursion_matches_forward_pass() {
        // Seed 000 in row-vector form: boneMat = defBone * initMat_rel, then
        // boneMat *= parentWorld, comb = offset * boneMat. In column vectors
        // that is world = parentWorld * rel * delta; comb = world * offset.
        let t = 1.3f32;
        let s = Trident::skeleton();
        let delta = Affine3A::from_rotation_y((70.0f32 * t.sin()).to_radians());
        let mut world = [Affine3A::IDENTITY; 7];
        let parents = [None, Some(0), Some(1), Some(0), Some(3), Some(0), Some(5)];
        for i in 0..7 {
            let rel = match parents[i] {
                Some(p) => Trident::bind_model(p).inverse() * Trident::bind_model(i),
                None => Trident::bind_model(i),
            };
            let d = if i == 0 { Affine3A::IDENTITY } else { delta };
            world[i] = match parents[i] {
                Some(p) => world[p] * rel * d,
                None => Trident::root(t) * rel * d,
            };
        }
        let mut pose = vec![Transform::IDENTITY; 7];
        Trident::pose(&s, t, &mut pose);
        let mut models = vec![Affine3A::IDENTITY; 7];
        LocalToModelJob {
            skeleton: &s,
            locals: &pose,
            root: Trident::root(t),
            from: 0,
            to: 7,
            models: &mut models,
        }
        .run()
        .unwrap();
        for (i, (m, w)) in models.iter().zip(&world).enumerate() {
            assert!(m.abs_diff_eq(*w, 1e-5), "joint {i}");
        }
    }
}
