//! Morph-target weight tracks: what a clip animates besides its joints.
//!
//! A model's morph weights are one flat vector (see
//! `assets::Model::morph_sets`); a weight track animates a run of it,
//! `count` weights from `first`, every key holding all `count` values.
//! [`build_weight_tracks`] validates a clip's raw tracks into
//! [`WeightTracks`], which the clip keeps and [`WeightTracks::sample`]
//! evaluates (the weight-sampling job and `Playback::sample_weights` call
//! it with the key cursors of a `SamplingContext`).

use super::interpolation::Interpolation;
use super::timelines::{locate_one, KeysAt};

/// One editable weight track: keys of `count` weights each.
///
/// `values` holds `times.len() * count` floats, key-major (key `k`'s
/// weights at `k * count ..`). For [`Interpolation::CubicSpline`],
/// `tangents` holds `times.len() * 2 * count` floats, per key its
/// in-tangents then its out-tangents (glTF's layout without the values in
/// between); it is empty otherwise. Weights are not clamped.
#[derive(Clone, Debug, PartialEq)]
pub struct RawWeightTrack {
    /// Index of the first weight it animates in the model's weight vector.
    pub first: usize,
    /// Weights per key.
    pub count: usize,
    /// How it moves between keys (Step, Linear or CubicSpline).
    pub interpolation: Interpolation,
    /// Key times in seconds, non-decreasing.
    pub times: Vec<f32>,
    /// `times.len() * count` weights, key-major.
    pub values: Vec<f32>,
    /// CubicSpline: `times.len() * 2 * count` tangents; else empty.
    pub tangents: Vec<f32>,
}

/// What a clip's weight track was built from, for tools that list tracks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightTrackInfo {
    /// Index of the first weight it animates.
    pub first: usize,
    /// Number of weights it animates (`first..first + count`).
    pub count: usize,
    /// Number of keys.
    pub keys: usize,
    /// How it moves between its keys.
    pub interpolation: Interpolation,
    /// Seconds of the first key.
    pub start: f32,
    /// Seconds of the last key.
    pub end: f32,
}

/// One weight track as built for sampling.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WeightTrack {
    pub first: usize,
    pub count: usize,
    pub interpolation: Interpolation,
    /// Key times (at least one key).
    pub times: Vec<f32>,
    /// One key: its `count` values. Step, Nearest, Linear: every key's
    /// values, key-major. CubicSpline: per interval `i` and weight `c` the
    /// power-basis coefficients `c0 + c1 u + c2 u^2 + c3 u^3` at
    /// `(i * count + c) * 4 ..`.
    pub data: Vec<f32>,
}

/// A clip's weight tracks, validated (see [`build_weight_tracks`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WeightTracks {
    pub tracks: Vec<WeightTrack>,
    /// The least weight-vector length the tracks need: the largest
    /// `first + count`, 0 without tracks.
    pub count: usize,
    /// The last key time of every track, 0 without tracks.
    pub end: f32,
}

/// Validates `raw` into the sampling form: per track at least one weight
/// and one key, key times finite and non-decreasing, `times * count`
/// finite values, tangents only (and exactly `times * 2 * count` finite
/// ones) for a cubic spline, Step, Linear, CubicSpline or Nearest (the
/// joint tracks' rule: the nearer key, the earlier at half way); SQUAD is
/// refused (rotations only). The runs `first..first + count` of different
/// tracks must not overlap. The error names the track and its fault.
pub(crate) fn build_weight_tracks(raw: &[RawWeightTrack]) -> Result<WeightTracks, String> {
    let mut out = WeightTracks::default();
    for (index, r) in raw.iter().enumerate() {
        let last = r.first.checked_add(r.count);
        let name = match last {
            Some(last) => format!("weight track {index} (weights {}..{last})", r.first),
            None => format!("weight track {index}"),
        };
        let track = build_one(r).map_err(|f| format!("{name}: {f}"))?;
        let last = last.ok_or_else(|| format!("{name}: first weight {} overflows", r.first))?;
        out.end = out.end.max(track.times[track.times.len() - 1]);
        out.count = out.count.max(last);
        out.tracks.push(track);
    }
    // Overlapping runs: sorted by first weight, each must end before the
    // next begins.
    let mut runs: Vec<(usize, usize, usize)> = raw
        .iter()
        .enumerate()
        .map(|(i, r)| (r.first, r.first + r.count, i))
        .collect();
    runs.sort_unstable();
    for w in runs.windows(2) {
        let ((a0, a1, a), (b0, _, b)) = (w[0], w[1]);
        if b0 < a1 {
            return Err(format!(
                "weight tracks {a} (weights {a0}..{a1}) and {b} (from weight {b0}) overlap"
            ));
        }
    }
    Ok(out)
}

fn build_one(r: &RawWeightTrack) -> Result<WeightTrack, String> {
    let (keys, count) = (r.times.len(), r.count);
    if count == 0 {
        return Err("animates no weights (count 0)".into());
    }
    if keys == 0 {
        return Err("has no keys".into());
    }
    if r.interpolation == Interpolation::Squad {
        return Err("SQUAD applies to rotations only".into());
    }
    let values = keys
        .checked_mul(count)
        .ok_or_else(|| format!("{keys} keys of {count} weights overflow"))?;
    if r.values.len() != values {
        return Err(format!(
            "{keys} keys of {count} weights need {values} values, got {}",
            r.values.len()
        ));
    }
    let cubic = r.interpolation == Interpolation::CubicSpline;
    let tangents = if cubic { values * 2 } else { 0 };
    if r.tangents.len() != tangents {
        return Err(if cubic {
            format!(
                "cubic spline with {keys} keys of {count} weights needs {tangents} tangents, got {}",
                r.tangents.len()
            )
        } else {
            "tangents given for a track that is not a cubic spline".into()
        });
    }
    for (i, t) in r.times.iter().enumerate() {
        if !t.is_finite() {
            return Err(format!("key {i} has time {t}"));
        }
        if i > 0 && *t < r.times[i - 1] {
            return Err(format!(
                "key {i} at {t} s comes before key {} at {} s",
                i - 1,
                r.times[i - 1]
            ));
        }
    }
    if let Some(i) = r.values.iter().position(|v| !v.is_finite()) {
        return Err(format!("key {} has a non-finite weight", i / count));
    }
    if let Some(i) = r.tangents.iter().position(|v| !v.is_finite()) {
        return Err(format!("key {} has a non-finite tangent", i / (2 * count)));
    }
    let data = if cubic && keys > 1 {
        cubic_coefficients(r)
    } else {
        r.values[..if keys == 1 { count } else { values }].to_vec()
    };
    Ok(WeightTrack {
        first: r.first,
        count,
        interpolation: r.interpolation,
        times: r.times.clone(),
        data,
    })
}

/// glTF's Hermite per interval and weight, in power-basis form: with
/// value `p0`, out-tangent `b0` of key `i`, value `p1`, in-tangent `a1` of
/// key `i + 1` and the interval `dt`,
/// `(2u^3 - 3u^2 + 1) p0 + (u^3 - 2u^2 + u) dt b0 + (-2u^3 + 3u^2) p1 + (u^3 - u^2) dt a1`.
fn cubic_coefficients(r: &RawWeightTrack) -> Vec<f32> {
    let (keys, n) = (r.times.len(), r.count);
    let mut data = Vec::with_capacity((keys - 1) * n * 4);
    for i in 0..keys - 1 {
        let dt = r.times[i + 1] - r.times[i];
        for c in 0..n {
            let p0 = r.values[i * n + c];
            let p1 = r.values[(i + 1) * n + c];
            // Per key: `n` in-tangents, then `n` out-tangents.
            let m0 = r.tangents[i * 2 * n + n + c] * dt;
            let m1 = r.tangents[(i + 1) * 2 * n + c] * dt;
            data.extend_from_slice(&[
                p0,
                m0,
                -3.0 * p0 - 2.0 * m0 + 3.0 * p1 - m1,
                2.0 * p0 + m0 - 2.0 * p1 + m1,
            ]);
        }
    }
    data
}

impl WeightTracks {
    /// Number of tracks (one key cursor each).
    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    /// Per track, what it was built from.
    pub fn infos(&self) -> impl ExactSizeIterator<Item = WeightTrackInfo> + '_ {
        self.tracks.iter().map(|t| WeightTrackInfo {
            first: t.first,
            count: t.count,
            keys: t.times.len(),
            interpolation: t.interpolation,
            start: t.times[0],
            end: t.times[t.times.len() - 1],
        })
    }

    /// Overwrites each track's run of `output` (at least [`Self::count`]
    /// long) with the track at clip time `t` (already wrapped or clamped).
    /// Before the first key a track holds its first value, after the last
    /// its last. `cursors`: one key hint per track (any values; a hint
    /// that is wrong costs a binary search).
    pub fn sample(&self, t: f32, cursors: &mut [u32], output: &mut [f32]) {
        for (track, cursor) in self.tracks.iter().zip(cursors) {
            let out = &mut output[track.first..track.first + track.count];
            let n = track.times.len();
            if n == 1 {
                out.copy_from_slice(&track.data);
                continue;
            }
            let keys = KeysAt {
                at: 0,
                len: n as u32,
                stride: 1,
            };
            // locate_one gives (0, 0) at or before the first key and
            // (n - 2, 1) at or after the last, so every rule below returns
            // the end keys there.
            let (i, u) = locate_one::<false>(&track.times, keys, t, cursor);
            let (i, c) = (i as usize, track.count);
            match track.interpolation {
                Interpolation::CubicSpline => {
                    let coeffs = &track.data[i * c * 4..(i + 1) * c * 4];
                    for (o, k) in out.iter_mut().zip(coeffs.chunks_exact(4)) {
                        *o = ((k[3] * u + k[2]) * u + k[1]) * u + k[0];
                    }
                }
                Interpolation::Linear | Interpolation::Squad => {
                    let k0 = &track.data[i * c..(i + 1) * c];
                    let k1 = &track.data[(i + 1) * c..(i + 2) * c];
                    for ((o, &a), &b) in out.iter_mut().zip(k0).zip(k1) {
                        // Exact at both ends, unlike a + (b - a) u.
                        *o = a * (1.0 - u) + b * u;
                    }
                }
                Interpolation::Step | Interpolation::Nearest => {
                    let next = if track.interpolation == Interpolation::Step {
                        u >= 1.0
                    } else {
                        u > 0.5
                    };
                    let k = if next { i + 1 } else { i };
                    out.copy_from_slice(&track.data[k * c..(k + 1) * c]);
                }
            }
        }
    }
}
