//! Morph-target helpers shared by the GPU morph and motion tests: a
//! deterministic generator, targets and weights to put on a mesh, and the
//! reference morph written with plain loops (independent of `MorphJob`).

use glam::Vec3;
use vkskin::mesh::{MorphTarget, SkinnedMesh};

/// A small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Each component uniform in [-r, r).
    pub fn vec3(&mut self, r: f32) -> Vec3 {
        Vec3::new(self.range(-r, r), self.range(-r, r), self.range(-r, r))
    }
}

/// Gives `mesh` `count` targets: kinds cycle through dense positions and
/// normals, mostly-zero positions (one vertex in ten moves), dense
/// positions only; target 1 moves normals only.
pub fn add_targets(mesh: &mut SkinnedMesh, count: usize, seed: u64) {
    let n = mesh.positions.len();
    let mut rng = Rng(seed);
    let scale = 0.03;
    mesh.morph.targets = (0..count)
        .map(|t| {
            let mut target = MorphTarget::default();
            if t == 1 {
                target.normals = (0..n).map(|_| rng.vec3(0.6)).collect();
                return target;
            }
            match t % 3 {
                0 => {
                    target.positions = (0..n).map(|_| rng.vec3(scale)).collect();
                    target.normals = (0..n).map(|_| rng.vec3(0.4)).collect();
                }
                1 => {
                    target.positions = (0..n)
                        .map(|_| {
                            if rng.unit() < 0.1 {
                                rng.vec3(scale)
                            } else {
                                Vec3::ZERO
                            }
                        })
                        .collect();
                    target.sparse = true;
                }
                _ => target.positions = (0..n).map(|_| rng.vec3(scale)).collect(),
            }
            target
        })
        .collect();
}

/// Random weights in [-1.5, 2]: about one in four exactly zero.
pub fn random_weights(count: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            if rng.unit() < 0.25 {
                0.0
            } else {
                rng.range(-1.5, 2.0)
            }
        })
        .collect()
}

/// `count` zero weights but for `active` random ones.
pub fn few_weights(count: usize, active: &[usize], seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed);
    let mut w = vec![0.0; count];
    for &i in active {
        w[i] = rng.range(-1.2, 1.8);
    }
    w
}

/// The mesh with its bind pose morphed by `weights`, computed here with
/// plain loops (independent of `MorphJob`): every target's deltas scaled
/// and summed onto the base, normals renormalised (zero stays zero).
pub fn morphed_by_hand(mesh: &SkinnedMesh, weights: &[f32]) -> SkinnedMesh {
    assert_eq!(weights.len(), mesh.morph.targets.len());
    let mut out = mesh.clone();
    out.morph = Default::default();
    for (t, target) in mesh.morph.targets.iter().enumerate() {
        let w = weights[t];
        for v in 0..mesh.positions.len() {
            if let Some(d) = target.positions.get(v) {
                out.positions[v] += *d * w;
            }
            if let Some(d) = target.normals.get(v) {
                out.normals[v] += *d * w;
            }
        }
    }
    for n in &mut out.normals {
        let len = n.length();
        *n = if len > 0.0 { *n / len } else { Vec3::ZERO };
    }
    out
}
