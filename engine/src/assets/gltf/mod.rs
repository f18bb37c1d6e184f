//! glTF 2.0 loader: `.gltf` with external buffers, `.glb`, data URIs.
//!
//! The `gltf` crate parses the JSON (`gltf::json::Root`); everything else —
//! the GLB container, buffers, accessors — is read here, so that every size
//! and offset is checked against the bytes actually present before anything
//! is allocated, and every fault names its place (`accessors[3]`,
//! `meshes[0].primitives[1].attributes.JOINTS_1`, or a byte offset for GLB
//! container faults). The crate's own validation is not used: it panics on
//! some out-of-range indices and rejects files for things never read here.
//!
//! # What the model holds
//!
//! * **Skeleton**: every node of the document is a joint (whatever the
//!   scenes say), so node animation of unskinned meshes works, joints not in
//!   any scene keep working, and non-joint nodes inside a joint hierarchy keep
//!   their place. Nodes are sorted parent-first by
//!   [`Skeleton::new`](crate::anim::Skeleton::new); [`GltfInfo::node_joints`]
//!   maps node index to joint index. A joint's bind
//!   pose is the node's TRS (or its matrix, decomposed). Cycles and nodes
//!   with two parents are errors.
//! * **Skins**: `Model::skins[..GltfInfo::file_skins]` are the file's skins in
//!   order, joints mapped to skeleton joints, inverse bind matrices as
//!   `Affine3A` (identity when absent; a non-affine or non-finite one is an
//!   error). After them come one-joint rigid skins, one per node that has a
//!   mesh but no skin, binding it to its node (inverse bind identity).
//! * **Meshes**, in *file order*: nodes in index order, and for each node with
//!   a mesh, its primitives in order — one [`SkinnedMesh`] per (node,
//!   primitive), so a mesh used by several nodes (and skins) appears once per
//!   node ([`GltfInfo::mesh_sources`] says where each came from). A skinned
//!   node's own transform is ignored, as the spec says; positions and normals
//!   stay in the mesh's space (the skin's bind space). Strips and fans become
//!   triangle lists; points and lines are skipped with a warning; absent
//!   indices mean `0..n`; absent normals are computed; `TANGENT` (VEC4) is
//!   kept with `xyz` normalised and `w` reduced to its sign. A primitive of
//!   a skinned node without `JOINTS_0` is bound rigidly to its node, with a
//!   warning.
//! * **Morph targets**: each primitive's `targets` (`POSITION`, `NORMAL`,
//!   `TANGENT` deltas, VEC3, one per vertex, finite) become
//!   `SkinnedMesh::morph` as dense deltas (`sparse` records how the file
//!   stored them; an absent attribute leaves its list empty). Every
//!   primitive of a mesh must have as many targets. Each node instancing a
//!   mesh with targets gets a [`MorphSet`] (named by the node, else the
//!   mesh), runs of the model's weight vector in node order; its meshes'
//!   `morph.first_weight` points at it. Defaults: `node.weights`, else
//!   `mesh.weights`, else zeros (lengths checked, values not clamped);
//!   names from `mesh.extras.targetNames` (a list of the wrong length or
//!   shape is ignored with a warning). [`GltfInfo::morph_set_of_node`] maps
//!   nodes to sets.
//! * **Influences**: every `JOINTS_n`/`WEIGHTS_n` pair (u8/u16 joints; float
//!   or normalised u8/u16 weights) fills `4 * sets` slots per vertex, then
//!   [`normalize_influences`](crate::mesh::normalize_influences) keeps
//!   `LoadOptions::max_influences`; truncation goes into `Model::warnings`. A
//!   non-zero weight on a joint index outside the skin is an error; joint
//!   indices under zero weights are ignored.
//! * **Clips**: one per animation (named by the file, else `animation{i}`),
//!   translation/rotation/scale channels as tracks of the target node's joint,
//!   STEP/LINEAR/CUBICSPLINE kept (cubic tangents from the `[in, value, out]`
//!   triplets). Duration: the last key time of any channel, counted from 0.
//!   A `weights` channel becomes a [`RawWeightTrack`](crate::anim::RawWeightTrack)
//!   over its node's morph set (output: `keys * count` floats or normalised
//!   integers, `keys * 3 * count` for CUBICSPLINE as in-tangents, values,
//!   out-tangents per key); one on a node without a morph set is skipped
//!   with a warning. Two channels on the same node and path in one
//!   animation are an error (the spec forbids it).
//! * **Materials**: index-aligned with the file's; base colour factor and
//!   texture (`Embedded` for GLB buffer views and data URIs, `File` resolved
//!   against the model's folder for other URIs).
//!
//! # Bounds
//!
//! Accessors are checked against their buffer view and buffer; buffers
//! against the BIN chunk, the decoded data URI or the external file's size,
//! before reading. Output that can outgrow the input (a mesh instanced by many
//! nodes, clips times joints, accessors without a buffer view) is charged to
//! a budget of 64 MiB plus 32 times the input size; exceeding it is an error.

mod accessor;
mod animations;
mod container;
mod ctx;
mod info;
mod materials;
mod meshes;
mod nodes;

use std::path::Path;

use super::{FaultKind, LoadError, LoadOptions, Model, Place};
use crate::anim::{Clip, RawClip, Skin};
use crate::mesh::{Influences, MorphSet, MorphTargets, SkinnedMesh};
use ctx::Ctx;
pub use info::{ChannelInfo, GltfInfo, MeshSource};

/// Fixed part of the allocation budget.
const BUDGET_BASE: u64 = 64 << 20;
/// Budget per input byte.
const BUDGET_PER_BYTE: u64 = 32;

/// Loads a `.gltf` or `.glb` file (told apart by content, not extension).
pub fn load(path: &Path, options: &LoadOptions) -> Result<Model, LoadError> {
    load_with_info(path, options).map(|(m, _)| m)
}

/// [`load`], plus the node/skin/mesh mapping.
pub fn load_with_info(path: &Path, options: &LoadOptions) -> Result<(Model, GltfInfo), LoadError> {
    let bytes = std::fs::read(path)
        .map_err(|e| LoadError::new(path, Place::Unknown, FaultKind::Io, e.to_string()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    load_from_bytes_with_info(path, &bytes, Some(dir), options)
}

/// Loads a glTF or GLB held in memory. `name` is used in errors and as the
/// model's source; external URIs resolve against `base_dir` (none: they are
/// errors, except images, which stay relative paths).
pub fn load_from_bytes(
    name: &Path,
    bytes: &[u8],
    base_dir: Option<&Path>,
    options: &LoadOptions,
) -> Result<Model, LoadError> {
    load_from_bytes_with_info(name, bytes, base_dir, options).map(|(m, _)| m)
}

/// [`load_from_bytes`], plus the node/skin/mesh mapping.
pub fn load_from_bytes_with_info(
    name: &Path,
    bytes: &[u8],
    base_dir: Option<&Path>,
    options: &LoadOptions,
) -> Result<(Model, GltfInfo), LoadError> {
    let c = container::split(name, bytes)?;
    let root = container::parse_json(name, &c)?;
    let buffers = container::load_buffers(name, &root, c.bin, base_dir)?;
    let input = bytes.len() as u64 + buffers.external_bytes;
    let mut ctx = Ctx {
        file: name,
        root: &root,
        buffers,
        budget: BUDGET_BASE.saturating_add(input.saturating_mul(BUDGET_PER_BYTE)),
        warnings: c.warnings,
        options,
    };
    build(&mut ctx, base_dir).map(|(m, i, _)| (m, i))
}

/// [`load_from_bytes_with_info`], plus the clips as read, before
/// [`Clip::build`] (for the loader's tests).
#[cfg(test)]
pub(crate) fn load_raw_clips(name: &Path, bytes: &[u8]) -> Result<Vec<RawClip>, LoadError> {
    let c = container::split(name, bytes)?;
    let root = container::parse_json(name, &c)?;
    let buffers = container::load_buffers(name, &root, c.bin, None)?;
    let options = LoadOptions::default();
    let mut ctx = Ctx {
        file: name,
        root: &root,
        buffers,
        budget: BUDGET_BASE,
        warnings: c.warnings,
        options: &options,
    };
    build(&mut ctx, None).map(|(_, _, raw)| raw)
}

/// The model, what the file says beyond it, and the clips as read.
fn build(
    ctx: &mut Ctx<'_>,
    base_dir: Option<&Path>,
) -> Result<(Model, GltfInfo, Vec<RawClip>), LoadError> {
    let root = ctx.root;
    let (skeleton, node_joints) = nodes::skeleton(ctx)?;
    let mut skins = nodes::skins(ctx, &node_joints)?;
    let file_skins = skins.len();
    let materials = materials::materials(ctx, base_dir)?;

    // Each primitive is read once, then copied for every node using it.
    let mut cache: Vec<Option<Vec<Option<meshes::Primitive>>>> = Vec::new();
    cache.resize_with(root.meshes.len(), || None);
    let mut morph_cache: Vec<Option<meshes::MeshMorph>> = vec![None; root.meshes.len()];
    let mut meshes_out = Vec::new();
    let mut sources = Vec::new();
    // One run of the weight vector per node instancing a mesh with targets.
    let mut morph_sets: Vec<MorphSet> = Vec::new();
    let mut set_of_node: Vec<Option<usize>> = vec![None; root.nodes.len()];
    let mut weight_count = 0usize;
    for (n, node) in root.nodes.iter().enumerate() {
        let Some(m) = node.mesh.map(|m| m.value()) else {
            continue;
        };
        if m >= root.meshes.len() {
            return Err(ctx.err(
                &format!("nodes[{n}].mesh"),
                FaultKind::OutOfRange,
                format!("meshes[{m}], but the file has {}", root.meshes.len()),
            ));
        }
        let skin = match node.skin.map(|s| s.value()) {
            Some(s) if s >= file_skins => {
                return Err(ctx.err(
                    &format!("nodes[{n}].skin"),
                    FaultKind::OutOfRange,
                    format!("skins[{s}], but the file has {file_skins}"),
                ))
            }
            s => s,
        };
        if morph_cache[m].is_none() {
            morph_cache[m] = Some(meshes::mesh_morph(ctx, m)?);
        }
        let first_weight = match morph_cache[m].as_ref() {
            Some(mm) if mm.count > 0 => {
                let item = format!("nodes[{n}]");
                if let Some(w) = &node.weights {
                    meshes::weights_checked(ctx, &format!("{item}.weights"), w, mm.count)?;
                }
                // The set's copies of the weights and names.
                let names_bytes: usize = mm.names.iter().map(|s| s.len()).sum();
                ctx.charge(
                    (mm.count * (4 + std::mem::size_of::<String>()) + names_bytes) as u64,
                    &item,
                )?;
                let defaults = node.weights.clone().unwrap_or_else(|| mm.defaults.clone());
                let name = node
                    .name
                    .clone()
                    .or_else(|| root.meshes[m].name.clone())
                    .unwrap_or_else(|| format!("mesh{m}"));
                let first = weight_count;
                set_of_node[n] = Some(morph_sets.len());
                morph_sets.push(MorphSet {
                    name,
                    target_names: mm.names.clone(),
                    defaults,
                    first_weight: first,
                });
                weight_count += mm.count;
                first
            }
            _ => {
                if let Some(w) = &node.weights {
                    meshes::weights_checked(ctx, &format!("nodes[{n}].weights"), w, 0)?;
                }
                0
            }
        };
        if cache[m].is_none() {
            let count = root.meshes[m].primitives.len();
            let mut prims = Vec::with_capacity(count);
            for p in 0..count {
                prims.push(meshes::read_primitive(ctx, m, p)?);
            }
            cache[m] = Some(prims);
        }
        let mut rigid: Option<usize> = None;
        let count = cache[m].as_ref().map_or(0, |p| p.len());
        for p in 0..count {
            let Some(Some(prim)) = cache[m].as_ref().and_then(|v| v.get(p)) else {
                continue;
            };
            let item = format!("meshes[{m}].primitives[{p}]");
            ctx.charge(prim.footprint(), &format!("nodes[{n}]"))?;
            let bound = match (skin, &prim.influences) {
                (Some(s), Some(inf)) => {
                    let len = skins[s].joints.len();
                    if let Some((j, attr)) = &prim.max_joint {
                        if *j as usize >= len {
                            return Err(ctx.err(
                                attr,
                                FaultKind::OutOfRange,
                                format!(
                                    "joint index {j}, but skins[{s}] (used by nodes[{n}]) has {len} joints"
                                ),
                            ));
                        }
                    }
                    Some((s, inf.clone()))
                }
                (Some(s), None) => {
                    ctx.warnings.push(format!(
                        "{item}: nodes[{n}] has skins[{s}] but the primitive has no JOINTS_0/WEIGHTS_0; bound rigidly to its node"
                    ));
                    None
                }
                _ => None,
            };
            let (skin_index, influences, skinned) = match bound {
                Some((s, inf)) => (s, inf, true),
                None => {
                    let r = *rigid.get_or_insert_with(|| {
                        skins.push(Skin {
                            name: format!("rigid:{}", skeleton.names()[node_joints[n]]),
                            joints: vec![node_joints[n] as u16],
                            inverse_bind: vec![glam::Affine3A::IDENTITY],
                        });
                        skins.len() - 1
                    });
                    (r, Influences::rigid(prim.positions.len(), 0), false)
                }
            };
            meshes_out.push(SkinnedMesh {
                name: prim.name.clone(),
                positions: prim.positions.clone(),
                normals: prim.normals.clone(),
                uvs: prim.uvs.clone(),
                colors: prim.colors.clone(),
                tangents: prim.tangents.clone(),
                influences,
                indices: prim.indices.clone(),
                skin: skin_index,
                material: prim.material,
                morph: MorphTargets {
                    targets: prim.targets.clone(),
                    first_weight,
                },
            });
            sources.push(MeshSource {
                node: n,
                mesh: m,
                primitive: p,
                skinned,
            });
        }
    }
    let weight_runs: Vec<Option<(usize, usize)>> = set_of_node
        .iter()
        .map(|s| s.map(|s| (morph_sets[s].first_weight, morph_sets[s].defaults.len())))
        .collect();
    let (raw_clips, clip_channels) =
        animations::raw_clips(ctx, &skeleton, &node_joints, &weight_runs)?;
    let mut clips = Vec::with_capacity(raw_clips.len());
    for (a, raw) in raw_clips.iter().enumerate() {
        clips.push(Clip::build(raw, &skeleton).map_err(|e| {
            ctx.err(
                &format!("animations[{a}]"),
                FaultKind::Invalid,
                e.to_string(),
            )
        })?);
    }
    let name = ctx
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let model = Model {
        name,
        source: Some(ctx.file.to_path_buf()),
        skeleton,
        skins,
        meshes: meshes_out,
        clips,
        materials,
        warnings: std::mem::take(&mut ctx.warnings),
        morph_sets,
        file_axes: glam::Mat3::IDENTITY,
    };
    Ok((
        model,
        GltfInfo {
            node_joints,
            file_skins,
            mesh_sources: sources,
            clip_channels,
            morph_set_of_node: set_of_node,
        },
        raw_clips,
    ))
}
