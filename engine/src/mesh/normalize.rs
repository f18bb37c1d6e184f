use glam::Vec3;

use super::Influences;

/// What [`normalize_influences`] changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NormalizeReport {
    /// Vertices that had more non-zero influences than were kept.
    pub truncated_vertices: usize,
    /// Largest number of non-zero influences on any vertex before truncation.
    pub max_found: usize,
    /// Zero, negative or non-finite weights dropped.
    pub dropped_weights: usize,
    /// Vertices with no usable weight, bound rigidly to the stated joint.
    pub rigid_vertices: usize,
}

/// Normalises influences to at most `max_k` per vertex: drops zero, negative
/// and non-finite weights, keeps the `max_k` largest (ties: lower slot first),
/// renormalises them to sum to one, and binds vertices left with no weight
/// rigidly to `rigid_joint`. The result has `per_vertex = min(max_k, most
/// kept on any vertex)` slots, at least one.
pub fn normalize_influences(
    input: &Influences,
    max_k: usize,
    rigid_joint: u16,
) -> (Influences, NormalizeReport) {
    let max_k = max_k.max(1);
    let n = input.vertex_count();
    let mut report = NormalizeReport::default();
    let mut kept: Vec<(u16, f32)> = Vec::with_capacity(input.per_vertex.max(1));
    // First pass: how many slots the output needs.
    let mut out_k = 1;
    for v in 0..n {
        let (js, ws) = input.vertex(v);
        let live = js
            .iter()
            .zip(ws)
            .filter(|(_, &w)| w.is_finite() && w > 0.0)
            .count();
        out_k = out_k.max(live.min(max_k));
    }
    let mut out = Influences {
        per_vertex: out_k,
        joints: Vec::with_capacity(n * out_k),
        weights: Vec::with_capacity(n * out_k),
    };
    for v in 0..n {
        let (js, ws) = input.vertex(v);
        kept.clear();
        for (&j, &w) in js.iter().zip(ws) {
            if w.is_finite() && w > 0.0 {
                kept.push((j, w));
            } else if w != 0.0 {
                report.dropped_weights += 1;
            }
        }
        report.max_found = report.max_found.max(kept.len());
        if kept.len() > max_k {
            report.truncated_vertices += 1;
            // Stable sort keeps the earlier slot first among equal weights.
            kept.sort_by(|a, b| b.1.total_cmp(&a.1));
            kept.truncate(max_k);
        }
        let sum: f32 = kept.iter().map(|k| k.1).sum();
        if kept.is_empty() || sum.is_nan() || sum <= 0.0 {
            report.rigid_vertices += 1;
            kept.clear();
            kept.push((rigid_joint, 1.0));
        }
        let sum: f32 = kept.iter().map(|k| k.1).sum();
        for slot in 0..out_k {
            match kept.get(slot) {
                Some(&(j, w)) => {
                    out.joints.push(j);
                    out.weights.push(w / sum);
                }
                None => {
                    out.joints.push(kept[0].0);
                    out.weights.push(0.0);
                }
            }
        }
    }
    (out, report)
}

/// Smooth vertex normals: the area-weighted sum of the faces around each
/// vertex, normalised (faces are counter-clockwise from the front). Vertices
/// on no triangle, or only on degenerate ones, get +Z.
pub fn compute_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for tri in indices.chunks_exact(3) {
        let [a, b, c] = [tri[0] as usize, tri[1] as usize, tri[2] as usize];
        if a >= positions.len() || b >= positions.len() || c >= positions.len() {
            continue;
        }
        let n = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        normals[a] += n;
        normals[b] += n;
        normals[c] += n;
    }
    for n in &mut normals {
        *n = n.try_normalize().unwrap_or(Vec3::Z);
    }
    normals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_largest_and_renormalises() {
        let inf = Influences::new(
            6,
            vec![0, 1, 2, 3, 4, 5],
            vec![0.05, 0.3, f32::NAN, 0.2, 0.25, 0.1],
        );
        let (out, rep) = normalize_influences(&inf, 4, 0);
        assert_eq!(out.per_vertex, 4);
        assert_eq!(out.joints, vec![1, 4, 3, 5]);
        let s: f32 = out.weights.iter().sum();
        assert!((s - 1.0).abs() < 1e-6);
        assert!((out.weights[0] - 0.3 / 0.85).abs() < 1e-6);
        assert_eq!(rep.truncated_vertices, 1);
        assert_eq!(rep.max_found, 5);
        assert_eq!(rep.dropped_weights, 1);
    }

    #[test]
    fn zero_weight_vertex_binds_rigidly() {
        let inf = Influences::new(2, vec![3, 4, 1, 2], vec![0.0, 0.0, 0.5, 0.5]);
        let (out, rep) = normalize_influences(&inf, 4, 7);
        assert_eq!(out.per_vertex, 2);
        assert_eq!(&out.joints[..2], &[7, 7]);
        assert_eq!(&out.weights[..2], &[1.0, 0.0]);
        assert_eq!(rep.rigid_vertices, 1);
    }
}
