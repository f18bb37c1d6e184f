use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use super::morph::{MorphGpu, MorphSetup};
use super::registry::{PathDesc, Stage};
use crate::anim::PaletteHierarchy;
use crate::gpu::{vk, Buffer, DescriptorPool, DescriptorSetLayout, Device, GpuError, GpuResult};
use crate::mesh::{partition_bones, Influences, MeshError, SkinnedMesh};

/// Most influences per vertex the vertex streams carry: two joints/weights
/// streams of four (the 8-influence permutation).
pub const MAX_INFLUENCES: usize = 8;

/// Weights whose sum is further than this from one are renormalised at
/// upload.
pub const WEIGHT_SUM_TOLERANCE: f32 = 1e-5;

/// Vertex stream 0: what every path reads, in the bind pose (also the
/// compute stage's `MeshBase`, 8 floats).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BaseVertex {
    /// Bind-pose position, model space (`in_position`, location 0).
    pub position: [f32; 3],
    /// Bind-pose normal (`in_normal`, location 1); +Z where the mesh has none.
    pub normal: [f32; 3],
    /// Texture coordinates (`in_uv`, location 2); zero where the mesh has
    /// none.
    pub uv: [f32; 2],
}

/// Vertex streams 1 and 2: four joint indices (palette entries) and their
/// weights; unused slots have weight zero (24 bytes, the compute stage's
/// six words).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InfluenceVertex {
    /// Palette entries of the vertex's part (locations 3 and 5).
    pub joints: [u16; 4],
    /// Their weights, in the same slots (locations 4 and 6).
    pub weights: [f32; 4],
}

/// One draw range of a prepared mesh and the palette it reads.
#[derive(Clone, Debug)]
pub struct MeshPart {
    /// Entry `k` of the part's palette is skin entry `bones[k]`.
    pub bones: Vec<u16>,
    /// The part's palette hierarchy (dual-quaternion signs).
    pub hierarchy: PaletteHierarchy,
    /// The part's first index in the prepared mesh's index buffer.
    pub first_index: u32,
    /// Indices (three per triangle) the part draws.
    pub index_count: u32,
    /// Added to each of the part's indices: its first vertex in the GPU
    /// streams.
    pub vertex_offset: i32,
    /// The part's first vec4 inside one instance's palette block.
    pub palette_offset: usize,
    /// Motion vectors: vec4s from the part's palette to the previous
    /// frame's (on the windowed storages right after the part's own,
    /// aligned, so that one window holds both; on the others the instance's
    /// whole previous block follows its current one); 0 without motion.
    pub previous_offset: usize,
}

/// A skinned mesh uploaded for one path: vertex streams (partitioned when the
/// path's window is smaller than the palette), draw ranges, bone lists and
/// what the stage needs besides. Made by [`super::SkinPath::prepare`]; its
/// buffers are destroyed when the frames that used them retire, so it may be
/// dropped or replaced while frames are in flight.
pub struct PreparedMesh {
    pub(crate) name: String,
    pub(crate) path: &'static PathDesc,
    pub(crate) base: Buffer,
    pub(crate) influences0: Buffer,
    pub(crate) influences1: Option<Buffer>,
    /// Per GPU vertex, its colour (`[f32; 4]`, linear RGBA; white where
    /// the mesh has none): stream 7.
    pub(crate) colors: Buffer,
    /// Per GPU vertex, the mesh vertex it came from (capture mode).
    pub(crate) source: Buffer,
    /// Meshes with tangents, on the GPU stages: per GPU vertex its
    /// bind-pose tangent (`[f32; 4]`, handedness in w): stream 8 of the
    /// vertex stage, set 0 binding 3 of the compute stage. `None` for a
    /// mesh without (its streams are as before) and on the CPU stage.
    pub(crate) tangents: Option<Buffer>,
    /// Whether the mesh has tangents (the TANGENTS permutation; on every
    /// stage its output has them).
    pub(crate) has_tangents: bool,
    pub(crate) indices: Buffer,
    pub(crate) parts: Vec<MeshPart>,
    /// 4 or 8: the pipeline permutation.
    pub(crate) influences: u32,
    pub(crate) gpu_vertices: u32,
    pub(crate) vertex_count: u32,
    pub(crate) index_count: u32,
    /// Skin entries (the palette the caller supplies per instance).
    pub(crate) palette_len: usize,
    pub(crate) hierarchy: PaletteHierarchy,
    /// vec4s of one instance's palette block (all parts, aligned).
    pub(crate) instance_vec4s: usize,
    /// The CPU stage's copy of the streams.
    pub(crate) cpu: Option<CpuStreams>,
    /// The compute stage's set 0 (mesh streams as storage buffers).
    pub(crate) compute_set: Option<(DescriptorPool, vk::DescriptorSet)>,
    /// Morph targets of the mesh (0: none; instances then take no
    /// weights).
    pub(crate) morph_targets: usize,
    /// The GPU stages' morph deltas and sets (meshes with targets).
    pub(crate) morph: Option<MorphGpu>,
    /// The per-joint boxes for skinned bounds (`None` when the weights are
    /// no convex combination).
    pub(crate) joint_bounds: Option<crate::mesh::JointBounds>,
}

/// What the CPU stage's job reads.
pub(crate) struct CpuStreams {
    pub per_vertex: usize,
    /// Checked once here, so that no frame scans them again.
    pub joints: crate::anim::CheckedJoints,
    pub weights: Vec<f32>,
    /// Bind positions and normals, with their blocks of eight for the
    /// LBS and DQS kernels that read them (`run_prepared`).
    pub vertices: crate::anim::BindVertices,
    /// The mesh's morph targets in the CPU morph's blocks (morphed per
    /// instance by `MorphBlocksJob` into a per-thread scratch).
    pub morph: crate::anim::MorphDeltas,
    /// Bind-pose tangents (empty: the mesh has none).
    pub tangents: Vec<glam::Vec4>,
    /// Per target its tangent deltas (empty where it moves none; all empty
    /// when the mesh has no tangents).
    pub tangent_deltas: Vec<Vec<glam::Vec3>>,
}

impl PreparedMesh {
    /// The source mesh's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The path the mesh was prepared for (only a [`super::SkinPath`] of
    /// that path draws it).
    pub fn path(&self) -> &'static PathDesc {
        self.path
    }

    /// The draw ranges: one part, or one per bone partition.
    pub fn parts(&self) -> &[MeshPart] {
        &self.parts
    }

    /// Mesh vertices (before partitioning duplicated any).
    pub fn vertex_count(&self) -> u32 {
        self.vertex_count
    }

    /// Vertices in the GPU streams (partitions duplicate shared ones).
    pub fn gpu_vertex_count(&self) -> u32 {
        self.gpu_vertices
    }

    /// Indices in the GPU index buffer (all parts).
    pub fn index_count(&self) -> u32 {
        self.index_count
    }

    /// Skin entries each instance's palette must have.
    pub fn palette_len(&self) -> usize {
        self.palette_len
    }

    /// The mesh's per-joint boxes, from which
    /// [`JointBounds::skinned`](crate::mesh::JointBounds::skinned) gives a
    /// box around an instance skinned by a linear-blend encoding (`4x3`,
    /// `qt`; not shown for the dual-quaternion ones). `None` when
    /// [`JointBounds::new`](crate::mesh::JointBounds::new) refused the
    /// mesh (a negative weight, say).
    pub fn joint_bounds(&self) -> Option<&crate::mesh::JointBounds> {
        self.joint_bounds.as_ref()
    }

    /// 4 or 8 (the pipeline permutation).
    pub fn influences(&self) -> u32 {
        self.influences
    }

    /// Whether the mesh has tangents: the TANGENTS permutation, whose
    /// skinned tangents come out of every stage (vertex output, the
    /// compute and CPU stages' output region, the capture).
    pub fn has_tangents(&self) -> bool {
        self.has_tangents
    }

    /// Morph targets: the length of the weights
    /// [`super::InstanceWriter::write_morphed`] takes (0: none).
    pub fn morph_targets(&self) -> usize {
        self.morph_targets
    }
}

fn fault(mesh: &SkinnedMesh, path: &PathDesc, what: impl std::fmt::Display) -> GpuError {
    GpuError::InvalidArgument(format!(
        "mesh {:?} on path {}: {what}",
        mesh.name, path.name
    ))
}

/// Checks `mesh` and returns its influences padded to `slots` per vertex
/// (4 or 8), weights renormalised where their sum strays from one.
fn checked_influences(
    mesh: &SkinnedMesh,
    path: &PathDesc,
    palette_len: usize,
) -> GpuResult<(Influences, u32)> {
    let n = mesh.positions.len();
    let inf = &mesh.influences;
    let k = inf.per_vertex;
    if n == 0 || mesh.indices.is_empty() || !mesh.indices.len().is_multiple_of(3) {
        return Err(fault(
            mesh,
            path,
            format!(
                "{n} vertices and {} indices: no whole triangle list",
                mesh.indices.len()
            ),
        ));
    }
    if n > (i32::MAX / 2) as usize {
        return Err(fault(
            mesh,
            path,
            format!("{n} vertices, more than a draw's vertex offset reaches"),
        ));
    }
    if k == 0 || k > MAX_INFLUENCES {
        return Err(fault(
            mesh,
            path,
            format!("{k} influences per vertex; the streams carry 1..={MAX_INFLUENCES}"),
        ));
    }
    if inf.joints.len() != n * k || inf.weights.len() != n * k {
        return Err(fault(
            mesh,
            path,
            format!("influence arrays do not match {n} vertices x {k}"),
        ));
    }
    if !mesh.normals.is_empty() && mesh.normals.len() != n {
        return Err(fault(
            mesh,
            path,
            format!("{} normals for {n} vertices", mesh.normals.len()),
        ));
    }
    if let Some(&i) = mesh.indices.iter().find(|&&i| i as usize >= n) {
        return Err(fault(mesh, path, format!("index {i} outside {n} vertices")));
    }
    // Every slot, weighted or not, must name a palette entry: the
    // dual-quaternion shaders read slot 0's bone whatever its weight.
    if let Some(&j) = inf.joints.iter().find(|&&j| j as usize >= palette_len) {
        return Err(fault(
            mesh,
            path,
            format!("an influence names joint {j}, but the palette has {palette_len} entries"),
        ));
    }
    let slots = if k <= 4 { 4 } else { 8 };
    let mut out = Influences::new(slots, vec![0; n * slots], vec![0.0; n * slots]);
    for v in 0..n {
        let (js, ws) = inf.vertex(v);
        let sum: f32 = ws.iter().sum();
        let scale = if sum > 0.0 && (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
            1.0 / sum
        } else {
            1.0
        };
        for s in 0..k {
            out.joints[v * slots + s] = js[s];
            out.weights[v * slots + s] = if ws[s].is_finite() {
                ws[s] * scale
            } else {
                0.0
            };
        }
    }
    Ok((out, slots as u32))
}

/// Prepares `mesh` for `path` with `capacity` bones per draw (`None`:
/// unlimited).
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare(
    device: &Arc<Device>,
    path: &'static PathDesc,
    capacity: Option<usize>,
    limit: &str,
    part_align_vec4s: usize,
    compute_layout: Option<&DescriptorSetLayout>,
    mesh: &SkinnedMesh,
    hierarchy: &PaletteHierarchy,
    morph: MorphSetup<'_>,
    motion: bool,
) -> GpuResult<PreparedMesh> {
    let palette_len = hierarchy.parent.len();
    if palette_len == 0 || hierarchy.order.len() != palette_len {
        return Err(fault(
            mesh,
            path,
            format!(
                "palette hierarchy of {} entries (order {})",
                palette_len,
                hierarchy.order.len()
            ),
        ));
    }
    let (inf, slots) = checked_influences(mesh, path, palette_len)?;
    let n = mesh.positions.len();
    let vpb = path.encoding.vec4s_per_bone();
    let whole = || {
        vec![crate::mesh::BonePartition {
            bones: (0..palette_len as u16).collect(),
            vertices: (0..n as u32).collect(),
            indices: mesh.indices.clone(),
            triangles: Vec::new(),
            influences: inf.clone(),
        }]
    };
    let partitions = match capacity {
        Some(cap) if palette_len > cap => {
            if !path.partitions() {
                return Err(fault(
                    mesh,
                    path,
                    format!(
                        "{palette_len} bones, but a draw of this path addresses {cap} ({limit})"
                    ),
                ));
            }
            partition_bones(&mesh.indices, &inf, cap).map_err(|e| match e {
                MeshError::TriangleNeedsTooManyBones {
                    triangle, bones, ..
                } => fault(
                    mesh,
                    path,
                    format!(
                        "triangle {triangle} needs {bones} bones, but {cap} fit one draw's palette \
                         ({limit} at {} bytes per bone)",
                        vpb * 16
                    ),
                ),
                e => fault(mesh, path, e),
            })?
        }
        _ => whole(),
    };
    let mut base = Vec::new();
    let mut inf0 = Vec::new();
    let mut inf1 = Vec::new();
    let mut source = Vec::new();
    let mut colors: Vec<[f32; 4]> = Vec::new();
    let has_tangents = !mesh.tangents.is_empty();
    if has_tangents && mesh.tangents.len() != n {
        return Err(fault(
            mesh,
            path,
            format!("{} tangents for {n} vertices", mesh.tangents.len()),
        ));
    }
    if let Some(v) = mesh.tangents.iter().position(|t| !t.is_finite()) {
        return Err(fault(mesh, path, format!("tangent {v} is not finite")));
    }
    let mut tangents: Vec<[f32; 4]> = Vec::new();
    let mut indices = Vec::new();
    let mut parts = Vec::with_capacity(partitions.len());
    let mut palette_offset = 0;
    let align = part_align_vec4s.max(1);
    let windowed = path.partitions();
    for p in &partitions {
        let first_index = indices.len() as u32;
        let vertex_offset = base.len() as i32;
        indices.extend_from_slice(&p.indices);
        for (local, &v) in p.vertices.iter().enumerate() {
            let v = v as usize;
            base.push(BaseVertex {
                position: mesh.positions[v].to_array(),
                normal: mesh
                    .normals
                    .get(v)
                    .map_or([0.0, 0.0, 1.0], |n| n.to_array()),
                uv: mesh.uvs.get(v).map_or([0.0; 2], |t| t.to_array()),
            });
            source.push(v as u32);
            if let Some(t) = mesh.tangents.get(v) {
                tangents.push(t.to_array());
            }
            colors.push(mesh.colors.get(v).map_or([1.0; 4], |c| c.to_array()));
            let (js, ws) = p.influences.vertex(local);
            let mut a = InfluenceVertex::default();
            let mut b = InfluenceVertex::default();
            for s in 0..slots as usize {
                if s < 4 {
                    a.joints[s] = js[s];
                    a.weights[s] = ws[s];
                } else {
                    b.joints[s - 4] = js[s];
                    b.weights[s - 4] = ws[s];
                }
            }
            inf0.push(a);
            if slots > 4 {
                inf1.push(b);
            }
        }
        parts.push(MeshPart {
            hierarchy: if partitions.len() == 1 {
                hierarchy.clone()
            } else {
                hierarchy.restrict(&p.bones)
            },
            bones: p.bones.clone(),
            first_index,
            index_count: p.indices.len() as u32,
            vertex_offset,
            palette_offset,
            previous_offset: 0,
        });
        let aligned = (p.bones.len() * vpb).div_ceil(align) * align;
        palette_offset += aligned;
        if motion && windowed {
            // The previous palette right after the part's own.
            if let Some(part) = parts.last_mut() {
                part.previous_offset = aligned;
            }
            palette_offset += aligned;
        }
    }
    if motion && !windowed && path.stage != Stage::Cpu {
        // The instance's previous block after its current one.
        for part in &mut parts {
            part.previous_offset = palette_offset;
        }
    }
    let storage_usage = if path.stage == Stage::Compute {
        vk::BufferUsageFlags::STORAGE_BUFFER
    } else {
        vk::BufferUsageFlags::empty()
    };
    let vb = vk::BufferUsageFlags::VERTEX_BUFFER | storage_usage;
    let upload = |name: &str, usage, bytes: &[u8]| {
        Buffer::device_local_with_data(device, name, usage, bytes)
    };
    let base_buf = upload("mesh base vertices", vb, bytemuck::cast_slice(&base))?;
    let inf0_buf = upload("mesh influences 0-3", vb, bytemuck::cast_slice(&inf0))?;
    let inf1_buf = if slots > 4 {
        Some(upload(
            "mesh influences 4-7",
            vb,
            bytemuck::cast_slice(&inf1),
        )?)
    } else {
        None
    };
    if !mesh.colors.is_empty() && mesh.colors.len() != n {
        return Err(fault(
            mesh,
            path,
            format!("{} vertex colours for {n} vertices", mesh.colors.len()),
        ));
    }
    let colors_buf = upload(
        "mesh vertex colours",
        vk::BufferUsageFlags::VERTEX_BUFFER,
        bytemuck::cast_slice(&colors),
    )?;
    // The CPU stage skins tangents from its own copy.
    let tangents_buf = if has_tangents && path.stage != Stage::Cpu {
        Some(upload(
            "mesh tangents",
            vb,
            bytemuck::cast_slice(&tangents),
        )?)
    } else {
        None
    };
    let source_buf = upload(
        "mesh source vertices",
        vk::BufferUsageFlags::VERTEX_BUFFER,
        bytemuck::cast_slice(&source),
    )?;
    let index_buf = upload(
        "mesh indices",
        vk::BufferUsageFlags::INDEX_BUFFER,
        bytemuck::cast_slice(&indices),
    )?;
    let morph_targets = mesh.morph.targets.len();
    super::morph::check_targets(mesh).map_err(|e| fault(mesh, path, e))?;
    let morph_gpu = match (morph.layout, morph_targets) {
        (Some(layout), 1..) => Some(MorphGpu::new(
            device,
            mesh,
            &source,
            layout,
            &morph,
            |what| fault(mesh, path, what),
        )?),
        _ => None,
    };
    let compute_set = match compute_layout {
        Some(layout) => {
            let pool = DescriptorPool::new(device, &[layout], 1)?;
            let set = pool
                .allocate(layout, 1)?
                .first()
                .copied()
                .ok_or_else(|| fault(mesh, path, "no descriptor set allocated"))?;
            let ty = vk::DescriptorType::STORAGE_BUFFER;
            crate::gpu::write_buffer(device, set, 0, ty, &base_buf);
            crate::gpu::write_buffer(device, set, 1, ty, &inf0_buf);
            crate::gpu::write_buffer(device, set, 2, ty, inf1_buf.as_ref().unwrap_or(&inf0_buf));
            // Read only by the TANGENTS permutation; else any buffer.
            let tan = tangents_buf.as_ref().unwrap_or(&base_buf);
            crate::gpu::write_buffer(device, set, 3, ty, tan);
            Some((pool, set))
        }
        None => None,
    };
    let cpu = if path.stage == Stage::Cpu {
        let normals = if mesh.normals.is_empty() {
            vec![glam::Vec3::Z; n]
        } else {
            mesh.normals.clone()
        };
        let vertices = crate::anim::BindVertices::new(mesh.positions.clone(), normals)
            .map_err(|e| fault(mesh, path, e))?;
        let targets = mesh.morph.targets.iter();
        let morph =
            crate::anim::MorphDeltas::new(n, targets.map(|t| (&t.positions[..], &t.normals[..])))
                .map_err(|e| fault(mesh, path, e))?;
        let tangent_deltas = if has_tangents {
            mesh.morph
                .targets
                .iter()
                .map(|t| t.tangents.clone())
                .collect()
        } else {
            Vec::new()
        };
        Some(CpuStreams {
            per_vertex: inf.per_vertex,
            joints: crate::anim::CheckedJoints::new(inf.joints.clone()),
            weights: inf.weights.clone(),
            vertices,
            morph,
            tangents: mesh.tangents.clone(),
            tangent_deltas,
        })
    } else {
        None
    };
    Ok(PreparedMesh {
        name: mesh.name.clone(),
        path,
        base: base_buf,
        influences0: inf0_buf,
        influences1: inf1_buf,
        colors: colors_buf,
        source: source_buf,
        tangents: tangents_buf,
        has_tangents,
        indices: index_buf,
        gpu_vertices: base.len() as u32,
        vertex_count: n as u32,
        index_count: indices.len() as u32,
        parts,
        influences: slots,
        palette_len,
        hierarchy: hierarchy.clone(),
        instance_vec4s: palette_offset,
        cpu,
        compute_set,
        morph_targets,
        morph: morph_gpu,
        joint_bounds: crate::mesh::JointBounds::new(mesh, palette_len).ok(),
    })
}
