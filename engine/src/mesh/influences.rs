/// Joint influences with a fixed number of slots per vertex: vertex `v` owns
/// `joints[v*k..v*k+k]` and `weights[v*k..v*k+k]` (`k = per_vertex`). Joint
/// indices refer to the mesh's skin (palette index), not the skeleton.
/// Unused slots have weight zero.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Influences {
    /// Slots per vertex (`k`).
    pub per_vertex: usize,
    /// Joint (skin palette) index of each slot, `k` per vertex.
    pub joints: Vec<u16>,
    /// Weight of each slot, `k` per vertex.
    pub weights: Vec<f32>,
}

impl Influences {
    /// Influences from their parts, taken as they are (not checked).
    pub fn new(per_vertex: usize, joints: Vec<u16>, weights: Vec<f32>) -> Self {
        Self {
            per_vertex,
            joints,
            weights,
        }
    }

    /// Every vertex bound to one joint with weight one.
    pub fn rigid(vertex_count: usize, joint: u16) -> Self {
        Self {
            per_vertex: 1,
            joints: vec![joint; vertex_count],
            weights: vec![1.0; vertex_count],
        }
    }

    /// The seeds' form: four joints and three weights per vertex, the fourth
    /// weight implied as `1 - w0 - w1 - w2`.
    pub fn from_implicit_fourth(joints: &[[u16; 4]], weights: &[[f32; 3]]) -> Self {
        let mut out = Self {
            per_vertex: 4,
            joints: Vec::with_capacity(joints.len() * 4),
            weights: Vec::with_capacity(joints.len() * 4),
        };
        for (j, w) in joints.iter().zip(weights) {
            out.joints.extend_from_slice(j);
            out.weights
                .extend_from_slice(&[w[0], w[1], w[2], 1.0 - w[0] - w[1] - w[2]]);
        }
        out
    }

    /// Whole vertices that both `joints` and `weights` cover (ragged data
    /// from a bad file never makes [`Influences::vertex`] read past them).
    pub fn vertex_count(&self) -> usize {
        self.joints
            .len()
            .min(self.weights.len())
            .checked_div(self.per_vertex)
            .unwrap_or(0)
    }

    /// The joints and weights of vertex `v` (`per_vertex` each). Panics when
    /// `v`'s slots run past `joints` or `weights` (`v` not below
    /// [`Influences::vertex_count`] while `per_vertex > 0`).
    pub fn vertex(&self, v: usize) -> (&[u16], &[f32]) {
        let k = self.per_vertex;
        (
            &self.joints[v * k..v * k + k],
            &self.weights[v * k..v * k + k],
        )
    }
}
