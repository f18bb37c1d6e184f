//! The object tree to a [`Model`]: frames to a skeleton, its bind pose,
//! meshes and skins, materials and clips. The conventions and choices are
//! described in the docs of [`super`].

use std::collections::{HashMap, HashSet};
use std::path::Path;

use glam::{Affine3A, Mat3, Vec3};

use super::super::{FaultKind, LoadError, LoadOptions, Model};
use super::ctx::{Ctx, JointInfo};
use super::mesh::{self, MeshData};
use super::source::Source;
use super::tree::{Node, Object};
use super::values::Reader;
use super::{anim, material};
use crate::anim::{Skeleton, Transform};

fn objects(nodes: &[Node]) -> impl Iterator<Item = &Object> {
    nodes.iter().filter_map(|n| match n {
        Node::Object(o) => Some(o),
        Node::Ref { .. } => None,
    })
}

fn frame_names<'d>(obj: &'d Object, out: &mut HashSet<&'d str>) {
    if let Some(n) = &obj.name {
        out.insert(n);
    }
    for c in obj.objects().filter(|o| o.kind == "Frame") {
        frame_names(c, out);
    }
}

struct Walk<'d> {
    top_meshes: HashMap<&'d str, &'d Object>,
    all_frames: HashSet<&'d str>,
    /// Top-level meshes some frame references: not also placed at the root.
    referenced: HashSet<&'d str>,
    meshes: Vec<(&'d Object, usize)>,
}

fn walk_frame<'d>(
    ctx: &mut Ctx<'_, 'd>,
    w: &mut Walk<'d>,
    obj: &'d Object,
    parent: Option<usize>,
    ancestors: &mut Vec<&'d str>,
) -> Result<(), LoadError> {
    let src = ctx.src;
    let joint = ctx.joints.len();
    let local = match obj.child("FrameTransformMatrix") {
        Some(m) => Reader::new(src, m).matrix(&|| "the frame matrix".into())?,
        None => Affine3A::IDENTITY,
    };
    ctx.joints.push(JointInfo {
        name: obj.name.clone().unwrap_or_else(|| format!("$frame{joint}")),
        generated: obj.name.is_none(),
        parent,
        local,
    });
    if let Some(n) = &obj.name {
        ancestors.push(n);
    }
    for child in &obj.children {
        match child {
            Node::Object(o) if o.kind == "Frame" => walk_frame(ctx, w, o, Some(joint), ancestors)?,
            Node::Object(o) if o.kind == "Mesh" => w.meshes.push((o, joint)),
            Node::Object(_) => {}
            Node::Ref { name, at } => {
                let n = name.as_deref().unwrap_or("");
                if let Some(&m) = w.top_meshes.get(n) {
                    w.meshes.push((m, joint));
                    w.referenced.insert(n);
                } else if ancestors.contains(&n) {
                    return Err(src.err(
                        *at,
                        FaultKind::Cycle,
                        format!(
                            "{} references frame {n:?}, which contains it: a cyclic hierarchy",
                            obj.label()
                        ),
                    ));
                } else if w.all_frames.contains(n) {
                    ctx.warn(format!(
                        "{} references frame {n:?}; frame instancing is not supported, the reference is ignored",
                        obj.label()
                    ));
                } else {
                    return Err(src.err(
                        *at,
                        FaultKind::MissingReference,
                        format!(
                            "{} references {:?}, which is neither a top-level Mesh nor a Frame",
                            obj.label(),
                            name.as_deref().unwrap_or("<by UUID>")
                        ),
                    ));
                }
            }
        }
    }
    if obj.name.is_some() {
        ancestors.pop();
    }
    Ok(())
}

pub(crate) fn convert(
    src: &Source<'_>,
    doc: &[Node],
    options: &LoadOptions,
    dir: &Path,
    name: String,
    limits: &super::limits::Limits,
) -> Result<Model, LoadError> {
    let mut ctx = Ctx {
        src,
        options,
        dir,
        joints: Vec::new(),
        materials: Vec::new(),
        global_materials: HashMap::new(),
        warnings: Vec::new(),
    };

    // Top-level materials, referenced by name from material lists.
    for (i, o) in objects(doc).filter(|o| o.kind == "Material").enumerate() {
        let m = material::convert(src, o, dir, format!("material{i}"))?;
        ctx.materials.push(m);
        if let Some(n) = &o.name {
            ctx.global_materials
                .entry(n.as_str())
                .or_insert(ctx.materials.len() - 1);
        }
    }

    // Frames, depth first: parents come before their children.
    let mut w = Walk {
        top_meshes: HashMap::new(),
        all_frames: HashSet::new(),
        referenced: HashSet::new(),
        meshes: Vec::new(),
    };
    for o in objects(doc) {
        match (o.kind.as_str(), &o.name) {
            ("Mesh", Some(n)) => {
                w.top_meshes.entry(n.as_str()).or_insert(o);
            }
            ("Frame", _) => frame_names(o, &mut w.all_frames),
            _ => {}
        }
    }
    for o in objects(doc).filter(|o| o.kind == "Frame") {
        walk_frame(&mut ctx, &mut w, o, None, &mut Vec::new())?;
    }
    // Meshes outside any frame sit in a synthetic identity root.
    let loose: Vec<&Object> = objects(doc)
        .filter(|o| o.kind == "Mesh")
        .filter(|o| !o.name.as_deref().is_some_and(|n| w.referenced.contains(n)))
        .collect();
    if !loose.is_empty() {
        let root = ctx.joints.len();
        ctx.joints.push(JointInfo {
            name: super::limits::SYNTHETIC_ROOT.into(),
            generated: true,
            parent: None,
            local: Affine3A::IDENTITY,
        });
        w.meshes.extend(loose.into_iter().map(|o| (o, root)));
    }
    if ctx.joints.len() > crate::anim::MAX_JOINTS {
        return Err(src.err(
            0,
            FaultKind::Count,
            format!(
                "{} frames, more than the {} joints a skeleton holds",
                ctx.joints.len(),
                crate::anim::MAX_JOINTS
            ),
        ));
    }

    // Frame names for references: the first frame of a name wins, as in
    // D3DX's FindFrame.
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut duplicated = Vec::new();
    for (i, j) in ctx.joints.iter().enumerate().filter(|(_, j)| !j.generated) {
        match names.entry(j.name.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => duplicated.push(j.name.clone()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
            }
        }
    }
    duplicated.sort();
    duplicated.dedup();
    for d in duplicated {
        ctx.warn(format!(
            "several frames are named {d:?}; references to it resolve to the first"
        ));
    }

    // Meshes, read in full.
    let mut data = Vec::with_capacity(w.meshes.len());
    for (i, &(o, joint)) in w.meshes.iter().enumerate() {
        data.push(MeshData::read(&mut ctx, o, joint, i)?);
    }

    // Each skin weight's joint; bones naming no frame bind to the mesh's frame.
    let mut slots: Vec<Vec<Option<usize>>> = Vec::with_capacity(data.len());
    for d in &data {
        let s: Vec<Option<usize>> = d.bones.iter().map(|b| names.get(b.bone).copied()).collect();
        let missing: Vec<&mesh::BoneWeights<'_>> = d
            .bones
            .iter()
            .zip(&s)
            .filter(|(_, j)| j.is_none())
            .map(|(b, _)| b)
            .collect();
        if !missing.is_empty() {
            // Name a few, with places: finding a line is a scan of the file.
            let mut listed: Vec<String> = missing
                .iter()
                .take(8)
                .map(|b| {
                    let place = src.place(b.at).to_string();
                    format!("{:?} ({})", b.bone, place.trim_end_matches(": "))
                })
                .collect();
            if missing.len() > 8 {
                listed.push(format!("and {} more", missing.len() - 8));
            }
            let n: usize = missing
                .iter()
                .map(|b| b.weights.iter().filter(|&&w| w > 0.0).count())
                .sum();
            ctx.warn(format!(
                "mesh {:?}: SkinWeights bones {} name no frame; their {n} influences \
                 follow the mesh's frame",
                d.name,
                listed.join(", ")
            ));
        }
        slots.push(s);
    }

    let (skeleton, file_local) = skeleton(&mut ctx, &data, &slots)?;
    let bind_model = skeleton.bind_model();

    let mut model = Model {
        name,
        source: Some(src.file.to_path_buf()),
        // .x is left-handed: the loader mirrors the file's Z.
        file_axes: Mat3::from_diagonal(Vec3::new(1.0, 1.0, -1.0)),
        ..Model::default()
    };
    for (d, s) in data.iter().zip(&slots) {
        let built = mesh::build(&mut ctx, d, &bind_model, s)?;
        let skin = model.skins.len();
        model.skins.push(built.skin);
        for mut m in built.meshes {
            m.skin = skin;
            model.meshes.push(m);
        }
    }
    model.clips = anim::clips(&mut ctx, doc, &names, &skeleton, &file_local, limits)?;
    model.skeleton = skeleton;
    model.materials = std::mem::take(&mut ctx.materials);
    model.warnings = std::mem::take(&mut ctx.warnings);
    Ok(model)
}

/// `m` as translation, rotation and scale; `false` when `m` is singular,
/// where the rotation cannot be found: then the scale is the length of each
/// axis and the rotation the identity.
fn decompose(m: &Affine3A) -> (Transform, bool) {
    let t = Transform::from_affine(m);
    if t.is_finite() {
        return (t, true);
    }
    let scale = glam::Vec3::new(
        m.matrix3.x_axis.length(),
        m.matrix3.y_axis.length(),
        m.matrix3.z_axis.length(),
    );
    (
        Transform {
            translation: m.translation.into(),
            rotation: glam::Quat::IDENTITY,
            scale,
        },
        false,
    )
}

/// The skeleton, in the bind pose, and each frame's own transform as stored.
///
/// A .x file's `FrameTransformMatrix` holds a pose, not necessarily the one
/// its meshes were skinned in (tiny.x's differs by up to 196 units). The bind
/// pose is the one the `SkinWeights` offset matrices invert, so a bone's
/// bind-pose model matrix is the inverse of its offset (the first mesh's,
/// when several skin it); a frame no skin uses keeps its stored transform
/// relative to its parent's bind pose.
fn skeleton(
    ctx: &mut Ctx<'_, '_>,
    data: &[MeshData<'_>],
    slots: &[Vec<Option<usize>>],
) -> Result<(Skeleton, Vec<Transform>), LoadError> {
    let n = ctx.joints.len();
    let mut bind_of: Vec<Option<Affine3A>> = vec![None; n];
    let mut disagree = HashSet::new();
    for (d, s) in data.iter().zip(slots) {
        for (b, j) in d.bones.iter().zip(s) {
            let Some(j) = *j else { continue };
            let inv = b.offset.inverse();
            if !(inv.is_finite() && b.offset.matrix3.determinant().abs() > 1e-20) {
                ctx.warn(format!(
                    "mesh {:?}: bone {:?}'s offset matrix cannot be inverted; \
                     its bind pose comes from the frame matrices",
                    d.name, b.bone
                ));
                continue;
            }
            match bind_of[j] {
                None => bind_of[j] = Some(inv),
                Some(first) => {
                    let scale = first.translation.abs().max_element().max(1.0);
                    if !first.abs_diff_eq(inv, 1e-3 * scale) {
                        disagree.insert(j);
                    }
                }
            }
        }
    }
    for j in disagree {
        let name = ctx.joints[j].name.clone();
        ctx.warn(format!(
            "meshes disagree on bone {name:?}'s bind pose; the skeleton uses the first"
        ));
    }
    let mut model: Vec<Affine3A> = Vec::with_capacity(n);
    let mut bind_local = Vec::with_capacity(n);
    let mut file_local = Vec::with_capacity(n);
    let mut degenerate = Vec::new();
    for (info, bind) in ctx.joints.iter().zip(&bind_of) {
        let parent = info.parent.map(|p| model[p]);
        let m = match (*bind, parent) {
            (Some(b), _) => b,
            (None, Some(p)) => p * info.local,
            (None, None) => info.local,
        };
        let local = match parent {
            None => m,
            Some(p) => {
                let inv = p.inverse();
                if inv.is_finite() {
                    inv * m
                } else {
                    info.local
                }
            }
        };
        let (t, ok) = decompose(&local);
        let (f, file_ok) = decompose(&info.local);
        if !(ok && file_ok) {
            degenerate.push(info.name.clone());
        }
        bind_local.push(t);
        file_local.push(f);
        model.push(m);
    }
    if !degenerate.is_empty() {
        let n = degenerate.len();
        degenerate.truncate(8);
        ctx.warn(format!(
            "{n} frames have a singular transform (a zero scale), kept without rotation: {}",
            degenerate.join(", ")
        ));
    }
    let names = ctx.joints.iter().map(|j| j.name.clone()).collect();
    let parents: Vec<Option<usize>> = ctx.joints.iter().map(|j| j.parent).collect();
    let (skeleton, remap) = Skeleton::new(names, &parents, bind_local).map_err(|e| {
        ctx.src
            .err(0, FaultKind::Invalid, format!("the frame hierarchy: {e}"))
    })?;
    // Frames are numbered depth first, so the order is already valid.
    if remap.iter().enumerate().any(|(i, &r)| i != r) {
        return Err(ctx.src.err(
            0,
            FaultKind::Invalid,
            "the frame hierarchy could not keep its order",
        ));
    }
    Ok((skeleton, file_local))
}
