//! Nodes into the skeleton, glTF skins into [`Skin`]s.

use glam::{Affine3A, Mat4, Quat, Vec3};
use gltf::json::accessor::Type;

use super::super::FaultKind;
use super::ctx::Ctx;
use crate::anim::{AnimError, Skeleton, Skin, Transform, MAX_JOINTS};

use super::super::LoadError;

/// Every node of the document as a joint, sorted parent-first.
/// Returns the skeleton and `joint_of_node[node]`.
pub(super) fn skeleton(ctx: &mut Ctx<'_>) -> Result<(Skeleton, Vec<usize>), LoadError> {
    let nodes = &ctx.root.nodes;
    let n = nodes.len();
    if n > MAX_JOINTS {
        return Err(ctx.err(
            "nodes",
            FaultKind::Count,
            format!("{n} nodes; a skeleton holds at most {MAX_JOINTS}"),
        ));
    }
    let mut parents: Vec<Option<usize>> = vec![None; n];
    for (i, node) in nodes.iter().enumerate() {
        for (k, c) in node.children.iter().flatten().enumerate() {
            let c = c.value();
            let item = format!("nodes[{i}].children[{k}]");
            if c >= n {
                return Err(ctx.err(
                    &item,
                    FaultKind::OutOfRange,
                    format!("child nodes[{c}], but the file has {n} nodes"),
                ));
            }
            if let Some(p) = parents[c] {
                return Err(ctx.err(
                    &item,
                    FaultKind::Invalid,
                    if p == i {
                        format!("nodes[{c}] is listed twice as a child")
                    } else {
                        format!("nodes[{c}] is already a child of nodes[{p}]")
                    },
                ));
            }
            parents[c] = Some(i);
        }
    }
    let mut names = Vec::with_capacity(n);
    let mut bind = Vec::with_capacity(n);
    for (i, node) in nodes.iter().enumerate() {
        names.push(node.name.clone().unwrap_or_else(|| format!("node{i}")));
        bind.push(node_transform(ctx, i)?);
    }
    Skeleton::new(names, &parents, bind).map_err(|e| match e {
        AnimError::Cycle { joint, name } => ctx.err(
            &format!("nodes[{joint}]"),
            FaultKind::Cycle,
            format!("the node hierarchy has a cycle through nodes[{joint}] ({name:?})"),
        ),
        other => ctx.err("nodes", FaultKind::Invalid, other.to_string()),
    })
}

/// Checks a column-major 4x4 matrix is finite with a (0, 0, 0, 1) bottom row.
pub(super) fn affine_from_cols(m: &[f32; 16]) -> Result<Affine3A, String> {
    if let Some(v) = m.iter().find(|v| !v.is_finite()) {
        return Err(format!("matrix holds {v}"));
    }
    let bottom = [m[3], m[7], m[11], m[15]];
    let tol = 1e-5;
    if bottom[0].abs() > tol
        || bottom[1].abs() > tol
        || bottom[2].abs() > tol
        || (bottom[3] - 1.0).abs() > tol
    {
        return Err(format!(
            "matrix is not affine: its bottom row is {bottom:?}, not [0, 0, 0, 1]"
        ));
    }
    Ok(Affine3A::from_mat4(Mat4::from_cols_array(m)))
}

/// The node's local transform: its matrix decomposed, or its TRS.
fn node_transform(ctx: &Ctx<'_>, i: usize) -> Result<Transform, LoadError> {
    let item = format!("nodes[{i}]");
    let Some(node) = ctx.root.nodes.get(i) else {
        return Ok(Transform::IDENTITY);
    };
    if let Some(m) = &node.matrix {
        let a = affine_from_cols(m).map_err(|f| ctx.err(&item, FaultKind::Invalid, f))?;
        let t = Transform::from_affine(&a);
        if !t.is_finite() {
            return Err(ctx.err(
                &item,
                FaultKind::Invalid,
                "matrix cannot be decomposed into translation, rotation and scale",
            ));
        }
        return Ok(t);
    }
    let translation = Vec3::from(node.translation.unwrap_or([0.0; 3]));
    let scale = Vec3::from(node.scale.unwrap_or([1.0; 3]));
    let r = node.rotation.map_or([0.0, 0.0, 0.0, 1.0], |q| q.0);
    let rotation = Quat::from_array(r);
    if !translation.is_finite() || !scale.is_finite() || !rotation.is_finite() {
        return Err(ctx.err(
            &item,
            FaultKind::NonFinite,
            "translation, rotation or scale is not finite",
        ));
    }
    if rotation.length_squared() < 1e-12 {
        return Err(ctx.err(&item, FaultKind::Invalid, "rotation is a zero quaternion"));
    }
    Ok(Transform {
        translation,
        rotation: rotation.normalize(),
        scale,
    })
}

/// One [`Skin`] per glTF skin, joints mapped to skeleton joints; identity
/// inverse bind matrices when the file gives none.
pub(super) fn skins(ctx: &mut Ctx<'_>, joint_of_node: &[usize]) -> Result<Vec<Skin>, LoadError> {
    let mut out = Vec::with_capacity(ctx.root.skins.len());
    for s in 0..ctx.root.skins.len() {
        let item = format!("skins[{s}]");
        let (name, joints, ibm) = {
            let skin = &ctx.root.skins[s];
            (
                skin.name.clone().unwrap_or_else(|| format!("skin{s}")),
                skin.joints.iter().map(|j| j.value()).collect::<Vec<_>>(),
                skin.inverse_bind_matrices.map(|a| a.value()),
            )
        };
        if joints.is_empty() {
            return Err(ctx.err(&item, FaultKind::Invalid, "skin without joints"));
        }
        if joints.len() > u16::MAX as usize + 1 {
            return Err(ctx.err(
                &item,
                FaultKind::Count,
                format!("{} joints; a skin holds at most 65536", joints.len()),
            ));
        }
        let mut mapped = Vec::with_capacity(joints.len());
        for (k, &j) in joints.iter().enumerate() {
            let Some(&joint) = joint_of_node.get(j) else {
                return Err(ctx.err(
                    &format!("{item}.joints[{k}]"),
                    FaultKind::OutOfRange,
                    format!("nodes[{j}], but the file has {} nodes", joint_of_node.len()),
                ));
            };
            mapped.push(joint as u16);
        }
        let inverse_bind = match ibm {
            None => vec![Affine3A::IDENTITY; joints.len()],
            Some(a) => {
                let from = format!("{item}.inverseBindMatrices");
                let (m, lay) = ctx.read_floats(a, &from, &[Type::Mat4])?;
                if lay.count < joints.len() {
                    return Err(ctx.err(
                        &format!("accessors[{a}]"),
                        FaultKind::Count,
                        format!(
                            "{} inverse bind matrices for the {} joints of {item}",
                            lay.count,
                            joints.len()
                        ),
                    ));
                }
                let mut v = Vec::with_capacity(joints.len());
                for (e, cols) in m.chunks_exact(16).take(joints.len()).enumerate() {
                    let mut arr = [0.0f32; 16];
                    arr.copy_from_slice(cols);
                    v.push(affine_from_cols(&arr).map_err(|f| {
                        ctx.err(
                            &format!("accessors[{a}]"),
                            FaultKind::Invalid,
                            format!("inverse bind matrix {e}: {f}"),
                        )
                    })?);
                }
                v
            }
        };
        out.push(Skin {
            name,
            joints: mapped,
            inverse_bind,
        });
    }
    Ok(out)
}
