//! `Mesh` objects: geometry, normals, texture coordinates, material list and
//! skin weights, read in one pass ([`MeshData::read`]) and turned into
//! engine meshes once the skeleton's bind pose is known ([`build`]).

use std::collections::HashMap;

use glam::{Affine3A, Vec2, Vec3, Vec4};

use super::super::{FaultKind, LoadError, Material};
use super::ctx::Ctx;
use super::material;
use super::tree::{Node, Object};
use super::values::Reader;
use crate::anim::Skin;
use crate::mesh::{compute_normals, normalize_influences, Influences, SkinnedMesh};

const NONE: u32 = u32::MAX;

/// One `SkinWeights` object.
pub(crate) struct BoneWeights<'d> {
    pub bone: &'d str,
    /// Where the bone name is, for messages.
    pub at: u32,
    pub vertices: Vec<u32>,
    pub weights: Vec<f32>,
    /// The offset matrix (the inverse bind), converted.
    pub offset: Affine3A,
}

/// A `Mesh` as read from the file, converted to right-handed space.
pub(crate) struct MeshData<'d> {
    pub name: String,
    /// The joint of the frame the mesh sits in.
    pub joint: usize,
    pub positions: Vec<Vec3>,
    /// Face `f` has corners `corners[face_start[f]..face_start[f + 1]]`.
    pub face_start: Vec<u32>,
    pub corners: Vec<u32>,
    /// Normal vectors and the normal index of each corner.
    pub normals: Option<(Vec<Vec3>, Vec<u32>)>,
    pub uvs: Option<Vec<Vec2>>,
    /// `MeshVertexColors`, per file vertex, linear RGBA (white where the
    /// list names no colour).
    pub colors: Option<Vec<Vec4>>,
    /// Model material index of each face.
    pub face_material: Option<Vec<usize>>,
    pub bones: Vec<BoneWeights<'d>>,
}

impl<'d> MeshData<'d> {
    pub fn read(
        ctx: &mut Ctx<'_, 'd>,
        obj: &'d Object,
        joint: usize,
        index: usize,
    ) -> Result<Self, LoadError> {
        let src = ctx.src;
        let mut r = Reader::new(src, obj);
        let nv = r.count("vertices", 3)?;
        let mut positions = Vec::with_capacity(nv);
        for i in 0..nv {
            positions.push(r.vec3_mirrored(&|| format!("vertex {i}"))?);
        }
        // A face takes at least its corner count and three indices.
        let nf = r.count("faces", 4)?;
        let (face_start, corners) = read_faces(&mut r, nf, nv, "vertex")?;

        let name = obj.name.clone().unwrap_or_else(|| {
            let frame = &ctx.joints[joint].name;
            if ctx.joints[joint].generated {
                format!("mesh{index}")
            } else {
                frame.clone()
            }
        });
        let mut data = MeshData {
            name,
            joint,
            positions,
            face_start,
            corners,
            normals: None,
            uvs: None,
            colors: None,
            face_material: None,
            bones: Vec::new(),
        };
        for child in obj.objects() {
            match child.kind.as_str() {
                "MeshNormals" if data.normals.is_none() => data.read_normals(ctx, child)?,
                "MeshTextureCoords" if data.uvs.is_none() => data.read_uvs(ctx, child)?,
                "MeshVertexColors" if data.colors.is_none() => data.read_colors(ctx, child)?,
                "MeshMaterialList" if data.face_material.is_none() => {
                    data.read_materials(ctx, child)?
                }
                "SkinWeights" => data.read_skin_weights(ctx, child)?,
                "MeshNormals" | "MeshTextureCoords" | "MeshMaterialList" | "MeshVertexColors" => {
                    ctx.warn(format!(
                        "mesh {:?}: a second {} is ignored",
                        data.name, child.kind
                    ))
                }
                // XSkinMeshHeader only repeats counts the weights give;
                // VertexDuplicationIndices, DeclData, FVFData
                // and anything else carry nothing the engine draws.
                _ => {}
            }
        }
        if data.bones.len() > usize::from(u16::MAX) {
            return Err(src.err(
                obj.at,
                FaultKind::Count,
                format!(
                    "mesh {:?} has {} SkinWeights, more than a skin can index",
                    data.name,
                    data.bones.len()
                ),
            ));
        }
        Ok(data)
    }

    fn face_count(&self) -> usize {
        self.face_start.len() - 1
    }

    fn read_normals(&mut self, ctx: &mut Ctx<'_, 'd>, obj: &Object) -> Result<(), LoadError> {
        let mut r = Reader::new(ctx.src, obj);
        let nn = r.count("normals", 3)?;
        let mut normals = Vec::with_capacity(nn);
        for i in 0..nn {
            normals.push(r.vec3_mirrored(&|| format!("normal {i}"))?);
        }
        let at = r.here();
        let nf = r.count("normal faces", 4)?;
        if nf != self.face_count() {
            return Err(r.err(
                at,
                FaultKind::Invalid,
                format!(
                    "{nf} normal faces for a mesh of {} faces",
                    self.face_count()
                ),
            ));
        }
        let (starts, idx) = read_faces(&mut r, nf, nn, "normal")?;
        for f in 0..nf {
            let (a, b) = (
                starts[f + 1] - starts[f],
                self.face_start[f + 1] - self.face_start[f],
            );
            if a != b {
                return Err(r.err(
                    obj.at,
                    FaultKind::Invalid,
                    format!("normal face {f} has {a} corners, its face has {b}"),
                ));
            }
        }
        self.normals = Some((normals, idx));
        Ok(())
    }

    fn read_uvs(&mut self, ctx: &mut Ctx<'_, 'd>, obj: &Object) -> Result<(), LoadError> {
        let mut r = Reader::new(ctx.src, obj);
        let at = r.here();
        let n = r.count("texture coordinates", 2)?;
        if n != self.positions.len() {
            return Err(r.err(
                at,
                FaultKind::Invalid,
                format!(
                    "{n} texture coordinates for {} vertices",
                    self.positions.len()
                ),
            ));
        }
        let mut uvs = Vec::with_capacity(n);
        for i in 0..n {
            uvs.push(r.vec2(&|| format!("texture coordinate {i}"))?);
        }
        self.uvs = Some(uvs);
        Ok(())
    }

    /// `MeshVertexColors { nVertexColors; IndexedColor { index; ColorRGBA }
    /// ... }`: colours of the vertices it names, in Direct3D's gamma-encoded
    /// (sRGB) space, stored linear; vertices it leaves out are white.
    fn read_colors(&mut self, ctx: &mut Ctx<'_, 'd>, obj: &Object) -> Result<(), LoadError> {
        let mut r = Reader::new(ctx.src, obj);
        let n = r.count("vertex colours", 5)?;
        let nv = self.positions.len();
        let mut colors = vec![Vec4::ONE; nv];
        for i in 0..n {
            let (v, at) = r.u32(&|| format!("vertex colour {i}'s vertex"))?;
            let Some(slot) = colors.get_mut(v as usize) else {
                return Err(r.err(
                    at,
                    FaultKind::OutOfRange,
                    format!("vertex colour {i} names vertex {v} of {nv}"),
                ));
            };
            let mut c = [0f32; 4];
            for (k, o) in c.iter_mut().enumerate() {
                *o = r.f32(&|| format!("vertex colour {i} component {k}"))?;
            }
            let linear = |x: f32| {
                let x = x.clamp(0.0, 1.0);
                if x <= 0.04045 {
                    x / 12.92
                } else {
                    ((x + 0.055) / 1.055).powf(2.4)
                }
            };
            *slot = Vec4::new(
                linear(c[0]),
                linear(c[1]),
                linear(c[2]),
                c[3].clamp(0.0, 1.0),
            );
        }
        self.colors = Some(colors);
        Ok(())
    }

    /// `MeshMaterialList { nMaterials; nFaceIndexes; faceIndexes; Material
    /// objects or references }`. One face index for many faces applies to
    /// all (some exporters write that).
    fn read_materials(&mut self, ctx: &mut Ctx<'_, 'd>, obj: &'d Object) -> Result<(), LoadError> {
        let src = ctx.src;
        let mut r = Reader::new(src, obj);
        let (n_materials, _) = r.u32(&|| "the number of materials".into())?;
        let at = r.here();
        let n = r.count("face material indices", 1)?;
        let faces = self.face_count();
        if n != faces && !(n == 1 && faces > 0) {
            return Err(r.err(
                at,
                FaultKind::Invalid,
                format!("{n} face material indices for {faces} faces"),
            ));
        }
        let mut slots = Vec::with_capacity(n);
        for i in 0..n {
            let (m, at) = r.u32(&|| format!("face {i}'s material"))?;
            if m >= n_materials {
                return Err(r.err(
                    at,
                    FaultKind::OutOfRange,
                    format!("face {i} uses material {m}, but the list has {n_materials}"),
                ));
            }
            slots.push((m, at));
        }
        // The list's materials, in order, as model material indices.
        let mut listed = Vec::new();
        for child in &obj.children {
            match child {
                Node::Object(o) if o.kind == "Material" => {
                    let fallback = format!("{}:{}", self.name, listed.len());
                    let m: Material = material::convert(src, o, ctx.dir, fallback)?;
                    ctx.materials.push(m);
                    listed.push(ctx.materials.len() - 1);
                }
                Node::Ref { name, at } => {
                    let found = name.as_deref().and_then(|n| ctx.global_materials.get(n));
                    match found {
                        Some(&i) => listed.push(i),
                        None => {
                            return Err(src.err(
                                *at,
                                FaultKind::MissingReference,
                                format!(
                                    "{}: the reference {{ {} }} names no top-level Material",
                                    obj.label(),
                                    name.as_deref().unwrap_or("<by UUID>")
                                ),
                            ))
                        }
                    }
                }
                _ => {}
            }
        }
        let mut face_material = Vec::with_capacity(faces);
        for f in 0..faces {
            let (m, at) = slots[if n == 1 { 0 } else { f }];
            let Some(&model_index) = listed.get(m as usize) else {
                return Err(r.err(
                    at,
                    FaultKind::OutOfRange,
                    format!(
                        "face {f} uses material {m}, but only {} Material objects follow",
                        listed.len()
                    ),
                ));
            };
            face_material.push(model_index);
        }
        self.face_material = Some(face_material);
        Ok(())
    }

    /// `SkinWeights { "bone"; nWeights; vertexIndices; weights; offset }`.
    fn read_skin_weights(
        &mut self,
        ctx: &mut Ctx<'_, 'd>,
        obj: &'d Object,
    ) -> Result<(), LoadError> {
        let mut r = Reader::new(ctx.src, obj);
        let (bone, at) = r.string(&|| "the bone name".into())?;
        let n = r.count("weights", 2)?;
        let mut vertices = Vec::with_capacity(n);
        for i in 0..n {
            let (v, vat) = r.u32(&|| format!("vertex index {i}"))?;
            if v as usize >= self.positions.len() {
                return Err(r.err(
                    vat,
                    FaultKind::OutOfRange,
                    format!(
                        "bone {bone:?}: vertex index {i} is {v}, but the mesh has {} vertices",
                        self.positions.len()
                    ),
                ));
            }
            vertices.push(v);
        }
        let mut weights = Vec::with_capacity(n);
        for i in 0..n {
            weights.push(r.f32(&|| format!("bone {bone:?}: weight {i}"))?);
        }
        let offset = r.matrix(&|| format!("bone {bone:?}: the offset matrix"))?;
        self.bones.push(BoneWeights {
            bone,
            at,
            vertices,
            weights,
            offset,
        });
        Ok(())
    }
}

/// `n` faces of `count; index, index, ...`, every index below `bound`.
fn read_faces(
    r: &mut Reader<'_, '_>,
    n: usize,
    bound: usize,
    what: &str,
) -> Result<(Vec<u32>, Vec<u32>), LoadError> {
    let mut starts = Vec::with_capacity(n + 1);
    let mut corners = Vec::with_capacity(3 * n);
    starts.push(0u32);
    for f in 0..n {
        let at = r.here();
        let c = r.count_with(&|| format!("corners of face {f}"), 1)?;
        if c < 3 {
            return Err(r.err(
                at,
                FaultKind::Invalid,
                format!("face {f} has {c} corners; a face needs at least 3"),
            ));
        }
        for k in 0..c {
            let (i, iat) = r.u32(&|| format!("face {f} corner {k}"))?;
            if i as usize >= bound {
                return Err(r.err(
                    iat,
                    FaultKind::OutOfRange,
                    format!("face {f} corner {k} is {what} {i}, but there are {bound}"),
                ));
            }
            corners.push(i);
        }
        starts.push(corners.len() as u32);
    }
    Ok((starts, corners))
}

/// What [`build`] makes of one file mesh: a skin and one engine mesh per
/// material it uses.
pub(crate) struct Built {
    pub skin: Skin,
    pub meshes: Vec<SkinnedMesh>,
}

/// Turns file mesh data into engine meshes.
///
/// * Vertices: one per distinct (position, normal) pair over the face
///   corners; file vertex `i` stays vertex `i`, and splits for a second
///   normal are appended, so skin weights follow them.
/// * Faces: fans `(0, i+1, i)`: triangulated and, after the Z mirror,
///   reversed so front faces stay counter-clockwise.
/// * Skinned meshes keep their positions (mesh space is the model space
///   their offset matrices map from; D3DX ignores the mesh's own frame for
///   skinned meshes). Unskinned meshes are moved into model space by their
///   frame's bind matrix and bound to that frame by a one-joint skin.
pub(crate) fn build(
    ctx: &mut Ctx<'_, '_>,
    data: &MeshData<'_>,
    bind_model: &[Affine3A],
    slot_joints: &[Option<usize>],
) -> Result<Built, LoadError> {
    let nv = data.positions.len();
    // Vertices: file vertex i stays i; a second normal on a position splits it.
    let mut origin: Vec<u32> = (0..nv as u32).collect();
    let mut normal_of: Vec<u32> = vec![NONE; nv];
    let mut corner_vertex: Vec<u32> = Vec::with_capacity(data.corners.len());
    let mut splits: HashMap<(u32, u32), u32> = HashMap::new();
    for (c, &p) in data.corners.iter().enumerate() {
        let n = data.normals.as_ref().map_or(NONE, |(_, idx)| idx[c]);
        let v = if normal_of[p as usize] == NONE || normal_of[p as usize] == n {
            normal_of[p as usize] = n;
            p
        } else {
            *splits.entry((p, n)).or_insert_with(|| {
                origin.push(p);
                normal_of.push(n);
                (origin.len() - 1) as u32
            })
        };
        corner_vertex.push(v);
    }
    let mut positions: Vec<Vec3> = origin.iter().map(|&p| data.positions[p as usize]).collect();

    // Triangles, reversed fans; their material.
    let tri_count: usize = data
        .face_start
        .windows(2)
        .map(|w| (w[1] - w[0]) as usize - 2)
        .sum();
    let mut indices = Vec::with_capacity(tri_count * 3);
    let mut tri_material = Vec::with_capacity(tri_count);
    for f in 0..data.face_start.len() - 1 {
        let (s, e) = (data.face_start[f] as usize, data.face_start[f + 1] as usize);
        let face = &corner_vertex[s..e];
        for i in 1..face.len() - 1 {
            indices.extend_from_slice(&[face[0], face[i + 1], face[i]]);
            tri_material.push(data.face_material.as_ref().map(|m| m[f]));
        }
    }

    let skinned = !data.bones.is_empty();
    let skin;
    let influences;
    if skinned {
        let (s, inf) = skin_influences(ctx, data, &origin, bind_model, slot_joints)?;
        skin = s;
        influences = inf;
    } else {
        let frame = &bind_model[data.joint];
        let det = frame.matrix3.determinant();
        let inverse = frame.inverse();
        let ok = det.abs() > 1e-12 && inverse.is_finite();
        if ok {
            for p in &mut positions {
                *p = frame.transform_point3(*p);
            }
            if det < 0.0 {
                // A mirroring frame flips the triangles' orientation.
                for t in indices.chunks_exact_mut(3) {
                    t.swap(1, 2);
                }
            }
        } else {
            ctx.warn(format!(
                "mesh {:?}: its frame's bind matrix cannot be inverted, so it stays in frame space",
                data.name
            ));
        }
        skin = Skin {
            name: format!(
                "{}{}",
                super::limits::RIGID_SKIN_PREFIX,
                ctx.joints[data.joint].name
            ),
            joints: vec![data.joint as u16],
            inverse_bind: vec![if ok { inverse } else { Affine3A::IDENTITY }],
        };
        influences = Influences::rigid(positions.len(), 0);
    }

    // Normals: the file's, else smooth normals of the triangles.
    let mut normals = vec![Vec3::ZERO; positions.len()];
    let mut need_computed = data.normals.is_none();
    if let Some((file_normals, _)) = &data.normals {
        let to_model = if skinned {
            None
        } else {
            let m = bind_model[data.joint].matrix3;
            let inv_t = m.inverse().transpose();
            inv_t.is_finite().then_some(inv_t)
        };
        for (o, &n) in normals.iter_mut().zip(&normal_of) {
            let v = file_normals.get(n as usize).copied().unwrap_or(Vec3::ZERO);
            let v = match &to_model {
                Some(m) => Vec3::from(*m * glam::Vec3A::from(v)),
                None => v,
            };
            match v.try_normalize() {
                Some(u) => *o = u,
                None => need_computed = true,
            }
        }
    }
    if need_computed {
        let computed = compute_normals(&positions, &indices);
        for (o, c) in normals.iter_mut().zip(computed) {
            if *o == Vec3::ZERO {
                *o = c;
            }
        }
    }
    let uvs: Vec<Vec2> = match &data.uvs {
        Some(uv) => origin.iter().map(|&p| uv[p as usize]).collect(),
        None => Vec::new(),
    };
    let colors: Vec<Vec4> = match &data.colors {
        Some(c) => origin.iter().map(|&p| c[p as usize]).collect(),
        None => Vec::new(),
    };

    let mut materials: Vec<Option<usize>> = tri_material.clone();
    materials.sort_unstable();
    materials.dedup();
    let whole = SkinnedMesh {
        name: data.name.clone(),
        positions,
        normals,
        uvs,
        tangents: Vec::new(),
        colors,
        influences,
        indices,
        skin: 0,
        material: materials.first().copied().flatten(),
        morph: Default::default(),
    };
    let meshes = if materials.len() <= 1 {
        vec![whole]
    } else {
        split_by_material(&whole, &tri_material, &materials)
    };
    Ok(Built { skin, meshes })
}

/// One mesh per material, each with only the vertices its triangles use.
/// One pass over the triangles, grouped by material, with one remap table
/// whose entries are stamped by group: linear in triangles plus vertices
/// however many materials there are.
fn split_by_material(
    whole: &SkinnedMesh,
    tri_material: &[Option<usize>],
    materials: &[Option<usize>],
) -> Vec<SkinnedMesh> {
    let k = whole.influences.per_vertex;
    let group_of: HashMap<Option<usize>, usize> =
        materials.iter().enumerate().map(|(g, &m)| (m, g)).collect();
    let mut order: Vec<(usize, usize)> = tri_material
        .iter()
        .enumerate()
        .map(|(t, m)| (group_of.get(m).copied().unwrap_or(0), t))
        .collect();
    order.sort_unstable();
    let mut remap = vec![NONE; whole.positions.len()];
    let mut stamp = vec![usize::MAX; whole.positions.len()];
    let mut out: Vec<SkinnedMesh> = materials
        .iter()
        .map(|&m| SkinnedMesh {
            name: match m {
                Some(i) => format!("{}[material {i}]", whole.name),
                None => format!("{}[no material]", whole.name),
            },
            skin: whole.skin,
            material: m,
            influences: Influences::new(k, Vec::new(), Vec::new()),
            ..SkinnedMesh::default()
        })
        .collect();
    for (g, t) in order {
        let part = &mut out[g];
        for &v in &whole.indices[3 * t..3 * t + 3] {
            let v = v as usize;
            if stamp[v] != g {
                stamp[v] = g;
                remap[v] = part.positions.len() as u32;
                part.positions.push(whole.positions[v]);
                part.normals.push(whole.normals[v]);
                if !whole.uvs.is_empty() {
                    part.uvs.push(whole.uvs[v]);
                }
                if !whole.colors.is_empty() {
                    part.colors.push(whole.colors[v]);
                }
                let (j, w) = whole.influences.vertex(v);
                part.influences.joints.extend_from_slice(j);
                part.influences.weights.extend_from_slice(w);
            }
            part.indices.push(remap[v]);
        }
    }
    out
}

/// The skin of a skinned mesh (one slot per `SkinWeights`, plus a slot for
/// the mesh's own frame when some vertices need it) and its influences.
///
/// `slot_joints[k]` is the joint of `SkinWeights` `k`, or the mesh's frame
/// when the bone names no frame: those influences then stay put relative to
/// the mesh's frame, with an inverse bind making them the identity in the
/// bind pose (assimp-based viewers treat a bone with no node the same way).
fn skin_influences(
    ctx: &mut Ctx<'_, '_>,
    data: &MeshData<'_>,
    origin: &[u32],
    bind_model: &[Affine3A],
    slot_joints: &[Option<usize>],
) -> Result<(Skin, Influences), LoadError> {
    let nv = data.positions.len();
    let mut joints: Vec<u16> = Vec::with_capacity(data.bones.len() + 1);
    let mut inverse_bind = Vec::with_capacity(data.bones.len() + 1);
    let frame_inverse = {
        let inv = bind_model[data.joint].inverse();
        if inv.is_finite() {
            inv
        } else {
            Affine3A::IDENTITY
        }
    };
    for (b, &j) in data.bones.iter().zip(slot_joints) {
        match j {
            Some(j) => {
                joints.push(j as u16);
                inverse_bind.push(b.offset);
            }
            None => {
                joints.push(data.joint as u16);
                inverse_bind.push(frame_inverse);
            }
        }
    }

    // Per file vertex: (slot, weight) lists in CSR form, positive weights only.
    let mut count = vec![0u32; nv + 1];
    let mut dropped = 0usize;
    for b in &data.bones {
        for (&v, &w) in b.vertices.iter().zip(&b.weights) {
            if w > 0.0 {
                count[v as usize + 1] += 1;
            } else if w < 0.0 {
                dropped += 1;
            }
        }
    }
    for i in 0..nv {
        count[i + 1] += count[i];
    }
    let mut fill = count.clone();
    let mut entries = vec![(0u16, 0f32); count[nv] as usize];
    for (slot, b) in data.bones.iter().enumerate() {
        for (&v, &w) in b.vertices.iter().zip(&b.weights) {
            if w > 0.0 {
                let at = &mut fill[v as usize];
                entries[*at as usize] = (slot as u16, w);
                *at += 1;
            }
        }
    }

    let max_k = ctx.options.max_influences;
    let most = (0..nv)
        .map(|v| (count[v + 1] - count[v]) as usize)
        .max()
        .unwrap_or(0);
    let k = most.clamp(1, max_k);
    let needs_frame_slot = origin
        .iter()
        .any(|&p| count[p as usize + 1] == count[p as usize]);
    let frame_slot = if needs_frame_slot {
        match joints.iter().position(|&j| j as usize == data.joint) {
            Some(s) if inverse_bind[s] == frame_inverse => s,
            _ => {
                joints.push(data.joint as u16);
                inverse_bind.push(frame_inverse);
                joints.len() - 1
            }
        }
    } else {
        0
    };
    let mut inf = Influences::new(k, Vec::with_capacity(origin.len() * k), Vec::new());
    inf.weights.reserve(origin.len() * k);
    let mut truncated = 0usize;
    let mut list: Vec<(u16, f32)> = Vec::with_capacity(most);
    for &p in origin {
        let p = p as usize;
        list.clear();
        list.extend_from_slice(&entries[count[p] as usize..count[p + 1] as usize]);
        if list.len() > k {
            truncated += 1;
            list.sort_by(|a, b| b.1.total_cmp(&a.1));
            list.truncate(k);
        }
        for s in 0..k {
            let (j, w) = list.get(s).copied().unwrap_or((frame_slot as u16, 0.0));
            inf.joints.push(j);
            inf.weights.push(w);
        }
    }
    let (inf, report) = normalize_influences(&inf, max_k, frame_slot as u16);
    if truncated > 0 {
        ctx.warn(format!(
            "mesh {:?}: {truncated} vertices have more than {max_k} influences (up to {most}); \
             the {max_k} largest were kept and renormalised",
            data.name
        ));
    }
    if dropped > 0 {
        ctx.warn(format!(
            "mesh {:?}: {dropped} negative skin weights were dropped",
            data.name
        ));
    }
    if report.rigid_vertices > 0 {
        ctx.warn(format!(
            "mesh {:?}: {} vertices have no skin weight and follow the mesh's frame",
            data.name, report.rigid_vertices
        ));
    }
    Ok((
        Skin {
            name: data.name.clone(),
            joints,
            inverse_bind,
        },
        inf,
    ))
}
