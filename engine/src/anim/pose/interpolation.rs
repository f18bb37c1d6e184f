//! How a track moves between its keys: shared by joint and weight tracks.

/// How a track moves between its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Interpolation {
    /// Hold each key's value until the next key.
    Step,
    /// Lerp; shortest-path slerp for rotations (glTF's LINEAR). The slerp
    /// weights come from precomputed key angles and a sine polynomial, so it
    /// costs little more than an nlerp and has none of its speed error.
    Linear,
    /// Rotations only: spherical quadrangle interpolation with Direct3D's
    /// `D3DXQuaternionSquadSetup` control points (seed 003).
    Squad,
    /// glTF cubic Hermite spline with per-key in and out tangents, scaled by
    /// the key interval; rotations normalised after evaluation.
    CubicSpline,
    /// The nearer of the two surrounding keys, the earlier one at exactly
    /// half way (seed 003's rule for matrix keys).
    Nearest,
}
