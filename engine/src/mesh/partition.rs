use std::collections::HashMap;

use thiserror::Error;

use super::Influences;

/// Faults in mesh data handed to the mesh operations.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MeshError {
    /// One triangle alone uses more distinct bones than a partition may
    /// hold.
    #[error("triangle {triangle} needs {bones} bones, more than the palette capacity {capacity}")]
    TriangleNeedsTooManyBones {
        /// The triangle's index (position in the index list / 3).
        triangle: usize,
        /// Distinct bones it uses.
        bones: usize,
        /// The palette capacity asked for.
        capacity: usize,
    },
    /// A vertex index is not below the vertex count.
    #[error("index {index} at position {at} is outside the {vertices} vertices")]
    IndexOutOfRange {
        /// Position of the index in the index list.
        at: usize,
        /// The index.
        index: u32,
        /// The vertex count.
        vertices: usize,
    },
    /// Streams that do not fit together (the text says how).
    #[error("{0}")]
    Invalid(String),
}

/// One sub-mesh of a bone partitioning: its triangles use at most the
/// capacity's number of distinct bones, and its influences index its own
/// small palette.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BonePartition {
    /// Local palette: local bone `k` is the mesh's joint `bones[k]`
    /// (ascending), so the sub-mesh's palette is `palette[bones[k]]`.
    pub bones: Vec<u16>,
    /// The original index of each sub-mesh vertex (shared vertices are
    /// duplicated into every sub-mesh that uses them).
    pub vertices: Vec<u32>,
    /// Triangle list in sub-mesh vertex indices.
    pub indices: Vec<u32>,
    /// The original index of each sub-mesh triangle.
    pub triangles: Vec<u32>,
    /// Influences of the sub-mesh vertices, joint indices remapped to the
    /// local palette. Slots of weight zero point at local bone 0.
    pub influences: Influences,
}

/// Splits a triangle list into sub-meshes whose distinct bones fit a
/// palette of `capacity`, as Direct3D's `ConvertToIndexedBlendedMesh` did
/// for hardware with few constant registers (seed 000 and 003's palette of
/// 28): triangles are taken in order and each goes into the first sub-mesh
/// its bones still fit in, else a new one. A bone counts when some vertex of
/// the triangle gives it a non-zero weight. Errors when one triangle alone
/// needs more than `capacity` bones, or indices are out of range.
pub fn partition_bones(
    indices: &[u32],
    influences: &Influences,
    capacity: usize,
) -> Result<Vec<BonePartition>, MeshError> {
    let k = influences.per_vertex;
    let vertex_count = influences.vertex_count();
    if k == 0
        || influences.joints.len() != vertex_count * k
        || influences.weights.len() != influences.joints.len()
    {
        return Err(MeshError::Invalid(format!(
            "influences with {} slots per vertex, {} joints and {} weights",
            k,
            influences.joints.len(),
            influences.weights.len()
        )));
    }
    if !indices.len().is_multiple_of(3) {
        return Err(MeshError::Invalid(format!(
            "{} indices is not a whole number of triangles",
            indices.len()
        )));
    }
    if capacity == 0 {
        return Err(MeshError::Invalid("palette capacity 0".into()));
    }
    if let Some((at, &index)) = indices
        .iter()
        .enumerate()
        .find(|(_, &i)| i as usize >= vertex_count)
    {
        return Err(MeshError::IndexOutOfRange {
            at,
            index,
            vertices: vertex_count,
        });
    }
    // Bone sets, kept sorted, and the triangles of each partition.
    let mut sets: Vec<Vec<u16>> = Vec::new();
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut bones: Vec<u16> = Vec::with_capacity(3 * k);
    for (tri, corners) in indices.chunks_exact(3).enumerate() {
        bones.clear();
        for &v in corners {
            let (js, ws) = influences.vertex(v as usize);
            for (&j, &w) in js.iter().zip(ws) {
                if w != 0.0 {
                    bones.push(j);
                }
            }
        }
        bones.sort_unstable();
        bones.dedup();
        if bones.len() > capacity {
            return Err(MeshError::TriangleNeedsTooManyBones {
                triangle: tri,
                bones: bones.len(),
                capacity,
            });
        }
        let fits = |set: &Vec<u16>| {
            let extra = bones
                .iter()
                .filter(|b| set.binary_search(b).is_err())
                .count();
            set.len() + extra <= capacity
        };
        let p = match sets.iter().position(fits) {
            Some(p) => p,
            None => {
                sets.push(Vec::new());
                members.push(Vec::new());
                sets.len() - 1
            }
        };
        for &b in &bones {
            if let Err(at) = sets[p].binary_search(&b) {
                sets[p].insert(at, b);
            }
        }
        members[p].push(tri as u32);
    }
    let mut out = Vec::with_capacity(sets.len());
    for (set, tris) in sets.into_iter().zip(members) {
        let mut part = BonePartition {
            influences: Influences {
                per_vertex: k,
                joints: Vec::new(),
                weights: Vec::new(),
            },
            ..BonePartition::default()
        };
        let mut local: HashMap<u32, u32> = HashMap::new();
        for &tri in &tris {
            for &v in &indices[tri as usize * 3..tri as usize * 3 + 3] {
                let next = part.vertices.len() as u32;
                let l = *local.entry(v).or_insert_with(|| {
                    part.vertices.push(v);
                    let (js, ws) = influences.vertex(v as usize);
                    for (&j, &w) in js.iter().zip(ws) {
                        let lj = if w != 0.0 {
                            set.binary_search(&j).unwrap_or(0) as u16
                        } else {
                            0
                        };
                        part.influences.joints.push(lj);
                        part.influences.weights.push(w);
                    }
                    next
                });
                part.indices.push(l);
            }
        }
        part.bones = set;
        part.triangles = tris;
        out.push(part);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::LinearBlendJob;
    use glam::{Affine3A, Quat, Vec3};
    use rand::{Rng, SeedableRng};

    /// A grid of `w x h` quads whose vertices take two or three influences
    /// from joints laid out along x, so neighbouring triangles share bones.
    fn grid(
        w: usize,
        h: usize,
        joints: u16,
        rng: &mut impl Rng,
    ) -> (Vec<Vec3>, Vec<u32>, Influences) {
        let mut pos = Vec::new();
        let mut inf = Influences::new(3, Vec::new(), Vec::new());
        for y in 0..=h {
            for x in 0..=w {
                pos.push(Vec3::new(x as f32, y as f32, 0.0));
                let base = ((x * joints as usize) / (w + 1)) as u16;
                let js = [base, (base + 1).min(joints - 1), rng.gen_range(0..joints)];
                let mut ws = [rng.gen_range(0.1..1.0), rng.gen_range(0.0..1.0), 0.0];
                if rng.gen_bool(0.1) {
                    ws[2] = 0.2;
                }
                let s: f32 = ws.iter().sum();
                inf.joints.extend_from_slice(&js);
                inf.weights.extend(ws.iter().map(|w| w / s));
            }
        }
        let mut idx = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let a = (y * (w + 1) + x) as u32;
                let b = a + 1;
                let c = a + (w + 1) as u32;
                idx.extend_from_slice(&[a, b, c, b, c + 1, c]);
            }
        }
        (pos, idx, inf)
    }

    #[test]
    fn partitions_cover_each_triangle_once_and_skin_alike() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(31);
        let joints = 24u16;
        let (pos, idx, inf) = grid(30, 6, joints, &mut rng);
        let capacity = 9;
        let parts = partition_bones(&idx, &inf, capacity).unwrap();
        assert!(parts.len() > 1);
        let tri_count = idx.len() / 3;
        let mut seen = vec![0; tri_count];
        for p in &parts {
            assert!(p.bones.len() <= capacity);
            assert_eq!(p.indices.len(), p.triangles.len() * 3);
            for (t, &orig) in p.triangles.iter().enumerate() {
                seen[orig as usize] += 1;
                for c in 0..3 {
                    let local = p.indices[t * 3 + c] as usize;
                    assert_eq!(p.vertices[local], idx[orig as usize * 3 + c]);
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        // Skinning each partition with its slice of the palette gives the
        // whole mesh's positions.
        let palette: Vec<Affine3A> = (0..joints)
            .map(|j| {
                Affine3A::from_scale_rotation_translation(
                    Vec3::splat(1.0 + j as f32 * 0.01),
                    Quat::from_rotation_z(j as f32 * 0.2),
                    Vec3::new(0.0, j as f32, 1.0),
                )
            })
            .collect();
        let mut whole = vec![Vec3::ZERO; pos.len()];
        LinearBlendJob {
            skin: &palette,
            per_vertex: 3,
            joints: &inf.joints,
            weights: &inf.weights,
            positions: &pos,
            normals: &[],
            out_positions: &mut whole,
            out_normals: &mut [],
            unit_normals: false,
        }
        .run()
        .unwrap();
        for p in &parts {
            let sub_palette: Vec<Affine3A> = p.bones.iter().map(|&b| palette[b as usize]).collect();
            let sub_pos: Vec<Vec3> = p.vertices.iter().map(|&v| pos[v as usize]).collect();
            let mut out = vec![Vec3::ZERO; sub_pos.len()];
            LinearBlendJob {
                skin: &sub_palette,
                per_vertex: 3,
                joints: &p.influences.joints,
                weights: &p.influences.weights,
                positions: &sub_pos,
                normals: &[],
                out_positions: &mut out,
                out_normals: &mut [],
                unit_normals: false,
            }
            .run()
            .unwrap();
            // Same arithmetic, but the fast paths group vertices in eights,
            // so a vertex may be summed in another order: float tolerance.
            for (l, &v) in p.vertices.iter().enumerate() {
                let w = whole[v as usize];
                assert!(
                    out[l].abs_diff_eq(w, 1e-5 * w.length().max(1.0)),
                    "{} {w}",
                    out[l]
                );
            }
        }
    }

    #[test]
    fn a_triangle_over_capacity_is_an_error() {
        // Three vertices with four different bones each: 12 bones.
        let inf = Influences::new(4, (0..12).collect(), vec![0.25; 12]);
        let e = partition_bones(&[0, 1, 2], &inf, 8);
        assert_eq!(
            e,
            Err(MeshError::TriangleNeedsTooManyBones {
                triangle: 0,
                bones: 12,
                capacity: 8
            })
        );
        assert!(partition_bones(&[0, 1, 2], &inf, 12).is_ok());
        assert!(matches!(
            partition_bones(&[0, 1, 5], &inf, 12),
            Err(MeshError::IndexOutOfRange { index: 5, .. })
        ));
        assert!(partition_bones(&[0, 1], &inf, 12).is_err());
    }
}
