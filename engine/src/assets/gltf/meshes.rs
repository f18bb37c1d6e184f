//! Mesh primitives into [`SkinnedMesh`]es: triangles, normals, tangents,
//! texture coordinates, every `JOINTS_n`/`WEIGHTS_n` set and the morph
//! targets; and each mesh's morph description ([`MeshMorph`]).

use glam::{Vec2, Vec3, Vec4};
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;

use super::super::{FaultKind, LoadError, Place};
use super::ctx::Ctx;
use crate::mesh::{compute_normals, normalize_influences, Influences, MorphTarget};

/// A primitive as read once, shared by every node that instances its mesh.
pub(super) struct Primitive {
    pub name: String,
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub uvs: Vec<Vec2>,
    /// Linear RGBA vertex colours (`COLOR_0`); empty without.
    pub colors: Vec<Vec4>,
    /// Unit tangents with their sign in `w`; empty without `TANGENT`.
    pub tangents: Vec<Vec4>,
    pub indices: Vec<u32>,
    /// Normalised influences, when the primitive has `JOINTS_0`/`WEIGHTS_0`.
    pub influences: Option<Influences>,
    /// Largest joint index with a non-zero weight, and the attribute naming it.
    pub max_joint: Option<(u32, String)>,
    pub material: Option<usize>,
    /// The morph targets (dense deltas), in the file's order.
    pub targets: Vec<MorphTarget>,
}

impl Primitive {
    /// Bytes one copy of it holds, for the allocation budget.
    pub fn footprint(&self) -> u64 {
        let v = self.positions.len() as u64;
        let k = self.influences.as_ref().map_or(1, |i| i.per_vertex) as u64;
        let deltas: u64 = self
            .targets
            .iter()
            .map(|t| (t.positions.len() + t.normals.len() + t.tangents.len()) as u64 * 12)
            .sum();
        let targets = self.targets.len() as u64 * std::mem::size_of::<MorphTarget>() as u64;
        v * (12 + 12 + 8 + k * 6)
            + self.tangents.len() as u64 * 16
            + self.colors.len() as u64 * 16
            + self.indices.len() as u64 * 4
            + deltas
            + targets
    }
}

/// What a mesh's primitives share about morph targets: how many, their
/// names (`extras.targetNames`) and the mesh's default weights.
#[derive(Clone, Debug, Default)]
pub(super) struct MeshMorph {
    /// Targets of every primitive (they must agree).
    pub count: usize,
    /// One name per target, empty strings where the file names none.
    pub names: Vec<String>,
    /// `mesh.weights`, else zeros; `count` long.
    pub defaults: Vec<f32>,
}

/// Checks mesh `m`'s morph targets across its primitives (every primitive,
/// drawn or not, must have as many) and reads its weights and target names.
pub(super) fn mesh_morph(ctx: &mut Ctx<'_>, m: usize) -> Result<MeshMorph, LoadError> {
    let root = ctx.root;
    let Some(mesh) = root.meshes.get(m) else {
        return Ok(MeshMorph::default());
    };
    let item = format!("meshes[{m}]");
    let counts: Vec<usize> = mesh
        .primitives
        .iter()
        .map(|p| p.targets.as_ref().map_or(0, |t| t.len()))
        .collect();
    let count = counts.first().copied().unwrap_or(0);
    if let Some(p) = counts.iter().position(|&c| c != count) {
        return Err(ctx.err(
            &item,
            FaultKind::Count,
            format!(
                "primitives[0] has {count} morph targets but primitives[{p}] has {}; every primitive of a mesh must have the same number",
                counts[p]
            ),
        ));
    }
    let defaults = match &mesh.weights {
        Some(w) => {
            weights_checked(ctx, &format!("{item}.weights"), w, count)?;
            w.clone()
        }
        None => {
            ctx.charge(count as u64 * 4, &item)?;
            vec![0.0; count]
        }
    };
    let names = target_names(ctx, &item, mesh.extras.as_deref(), count)?;
    Ok(MeshMorph {
        count,
        names,
        defaults,
    })
}

/// Checks a `weights` array (of a mesh or node): `count` finite values.
pub(super) fn weights_checked(
    ctx: &Ctx<'_>,
    item: &str,
    w: &[f32],
    count: usize,
) -> Result<(), LoadError> {
    if w.len() != count {
        return Err(ctx.err(
            item,
            FaultKind::Count,
            format!(
                "{} weights, but the mesh has {count} morph targets",
                w.len()
            ),
        ));
    }
    if let Some(i) = w.iter().position(|x| !x.is_finite()) {
        return Err(ctx.err(
            item,
            FaultKind::NonFinite,
            format!("weight {i} is {}", w[i]),
        ));
    }
    Ok(())
}

/// `extras.targetNames` of a mesh: `count` strings, or `count` empty ones
/// (with a warning when the file's list is not usable).
fn target_names(
    ctx: &mut Ctx<'_>,
    item: &str,
    extras: Option<&gltf::json::extras::RawValue>,
    count: usize,
) -> Result<Vec<String>, LoadError> {
    let unnamed = |ctx: &mut Ctx<'_>| -> Result<Vec<String>, LoadError> {
        ctx.charge(count as u64 * std::mem::size_of::<String>() as u64, item)?;
        Ok(vec![String::new(); count])
    };
    let Some(raw) = extras else {
        return unnamed(ctx);
    };
    #[derive(serde::Deserialize)]
    struct Extras {
        #[serde(rename = "targetNames")]
        target_names: Option<serde_json::Value>,
    }
    let names = match serde_json::from_str::<Extras>(raw.get()) {
        Ok(Extras {
            target_names: Some(v),
        }) => v,
        // Extras of another shape (not an object, say) are the
        // application's business; no names.
        _ => return unnamed(ctx),
    };
    let list: Option<Vec<String>> = names.as_array().and_then(|a| {
        a.iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
    });
    match list {
        Some(list) if list.len() == count => Ok(list),
        Some(list) => {
            ctx.warn(format!(
                "{item}.extras.targetNames: {} names for {count} morph targets; names ignored",
                list.len()
            ));
            unnamed(ctx)
        }
        None => {
            ctx.warn(format!(
                "{item}.extras.targetNames: not an array of strings; names ignored"
            ));
            unnamed(ctx)
        }
    }
}

/// Reads primitive `p` of mesh `m`. `None` when it is skipped (points,
/// lines, no vertices), with a warning.
pub(super) fn read_primitive(
    ctx: &mut Ctx<'_>,
    m: usize,
    p: usize,
) -> Result<Option<Primitive>, LoadError> {
    let root = ctx.root;
    let Some(mesh) = root.meshes.get(m) else {
        return Ok(None);
    };
    let Some(prim) = mesh.primitives.get(p) else {
        return Ok(None);
    };
    let item = format!("meshes[{m}].primitives[{p}]");
    let base = mesh.name.clone().unwrap_or_else(|| format!("mesh{m}"));
    let name = if mesh.primitives.len() > 1 {
        format!("{base}[{p}]")
    } else {
        base
    };
    let mode = match prim.mode {
        Checked::Valid(mode) => mode,
        Checked::Invalid => {
            return Err(ctx.err(&format!("{item}.mode"), FaultKind::Invalid, "invalid mode"))
        }
    };
    if matches!(
        mode,
        Mode::Points | Mode::Lines | Mode::LineLoop | Mode::LineStrip
    ) {
        ctx.warn(format!(
            "{item} ({name}): points and lines are not drawn; skipped"
        ));
        return Ok(None);
    }
    let attr = |s: Semantic| prim.attributes.get(&Checked::Valid(s)).map(|a| a.value());
    let Some(pos) = attr(Semantic::Positions) else {
        return Err(ctx.err(&item, FaultKind::MissingReference, "no POSITION attribute"));
    };
    let from = |a: &str| format!("{item}.attributes.{a}");
    let (raw, lay) = ctx.read_floats(pos, &from("POSITION"), &[Type::Vec3])?;
    let n = lay.count;
    if n == 0 {
        ctx.warn(format!("{item} ({name}): no vertices; skipped"));
        return Ok(None);
    }
    let positions: Vec<Vec3> = raw.chunks_exact(3).map(Vec3::from_slice).collect();
    let same_count = |ctx: &Ctx<'_>, what: &str, count: usize| {
        if count == n {
            Ok(())
        } else {
            Err(ctx.err(
                &from(what),
                FaultKind::Count,
                format!("{count} elements, but POSITION has {n}"),
            ))
        }
    };
    let normals = match attr(Semantic::Normals) {
        Some(a) => {
            let (raw, lay) = ctx.read_floats(a, &from("NORMAL"), &[Type::Vec3])?;
            same_count(ctx, "NORMAL", lay.count)?;
            Some(
                raw.chunks_exact(3)
                    .map(|c| Vec3::from_slice(c).try_normalize().unwrap_or(Vec3::Z))
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let tangents = match attr(Semantic::Tangents) {
        Some(a) => {
            let (raw, lay) = ctx.read_floats(a, &from("TANGENT"), &[Type::Vec4])?;
            same_count(ctx, "TANGENT", lay.count)?;
            raw.chunks_exact(4)
                .map(|c| {
                    let xyz = Vec3::from_slice(c).try_normalize().unwrap_or(Vec3::X);
                    // The spec's w is +1 or -1; keep only its sign.
                    xyz.extend(if c[3] < 0.0 { -1.0 } else { 1.0 })
                })
                .collect()
        }
        None => Vec::new(),
    };
    // The set the material's base-colour texture reads (its texCoord).
    let named = prim
        .material
        .and_then(|m| root.materials.get(m.value()))
        .and_then(|m| m.pbr_metallic_roughness.base_color_texture.as_ref())
        .map_or(0, |t| t.tex_coord);
    let set = if named > 0 && attr(Semantic::TexCoords(named)).is_none() {
        ctx.warn(format!(
            "{item} ({name}): its material reads TEXCOORD_{named}, which it lacks; TEXCOORD_0 used"
        ));
        0
    } else {
        named
    };
    let uvs = match attr(Semantic::TexCoords(set)) {
        Some(a) => {
            let what = format!("TEXCOORD_{set}");
            let (raw, lay) = ctx.read_floats(a, &from(&what), &[Type::Vec2])?;
            same_count(ctx, &what, lay.count)?;
            raw.chunks_exact(2).map(Vec2::from_slice).collect()
        }
        None => Vec::new(),
    };
    let colors = match attr(Semantic::Colors(0)) {
        Some(a) => {
            let (raw, lay) = ctx.read_floats(a, &from("COLOR_0"), &[Type::Vec3, Type::Vec4])?;
            same_count(ctx, "COLOR_0", lay.count)?;
            let k = lay.comps.max(1);
            raw.chunks_exact(k)
                .map(|c| Vec4::new(c[0], c[1], c[2], if k == 4 { c[3] } else { 1.0 }))
                .collect()
        }
        None => Vec::new(),
    };
    let corners = match prim.indices {
        Some(a) => {
            let a = a.value();
            let (ix, _) = ctx.read_uints(
                a,
                &format!("{item}.indices"),
                &[Type::Scalar],
                &[ComponentType::U8, ComponentType::U16, ComponentType::U32],
            )?;
            if let Some(&bad) = ix.iter().find(|&&i| i as usize >= n) {
                return Err(ctx.err(
                    &format!("accessors[{a}]"),
                    FaultKind::OutOfRange,
                    format!("index {bad}, but {item} has {n} vertices"),
                ));
            }
            ix
        }
        None => {
            ctx.charge(n as u64 * 4, &item)?;
            (0..n as u32).collect()
        }
    };
    let indices = triangulate(ctx, &item, mode, corners)?;
    let normals = normals.unwrap_or_else(|| compute_normals(&positions, &indices));
    let material = match prim.material {
        Some(mat) if mat.value() >= root.materials.len() => {
            return Err(ctx.err(
                &format!("{item}.material"),
                FaultKind::OutOfRange,
                format!(
                    "materials[{}], but the file has {}",
                    mat.value(),
                    root.materials.len()
                ),
            ))
        }
        other => other.map(|m| m.value()),
    };
    let (influences, max_joint) = read_influences(ctx, &item, &name, prim, n)?;
    let targets = read_targets(ctx, &item, prim, n)?;
    Ok(Some(Primitive {
        name,
        positions,
        normals,
        uvs,
        colors,
        tangents,
        indices,
        influences,
        max_joint,
        material,
        targets,
    }))
}

/// The primitive's morph targets: per target, its `POSITION`, `NORMAL` and
/// `TANGENT` deltas (VEC3, one per vertex, finite), dense.
fn read_targets(
    ctx: &mut Ctx<'_>,
    item: &str,
    prim: &gltf::json::mesh::Primitive,
    n: usize,
) -> Result<Vec<MorphTarget>, LoadError> {
    let Some(targets) = prim.targets.as_ref() else {
        return Ok(Vec::new());
    };
    ctx.charge(
        targets.len() as u64 * std::mem::size_of::<MorphTarget>() as u64,
        item,
    )?;
    let mut out = Vec::with_capacity(targets.len());
    for (t, target) in targets.iter().enumerate() {
        let mut read = MorphTarget::default();
        for (attr, acc) in [
            ("POSITION", target.positions),
            ("NORMAL", target.normals),
            ("TANGENT", target.tangents),
        ] {
            let Some(acc) = acc.map(|a| a.value()) else {
                continue;
            };
            let from = format!("{item}.targets[{t}].{attr}");
            let deltas = read_deltas(ctx, acc, &from, n)?;
            read.sparse |= ctx
                .root
                .accessors
                .get(acc)
                .is_some_and(|a| a.sparse.is_some());
            match attr {
                "POSITION" => read.positions = deltas,
                "NORMAL" => read.normals = deltas,
                _ => read.tangents = deltas,
            }
        }
        out.push(read);
    }
    Ok(out)
}

/// One target attribute: accessor `acc` as `n` finite VEC3 deltas. Its type
/// and count are checked before anything is read; faults name `from`.
fn read_deltas(
    ctx: &mut Ctx<'_>,
    acc: usize,
    from: &str,
    n: usize,
) -> Result<Vec<Vec3>, LoadError> {
    let lay = ctx.layout(acc, from)?;
    if lay.kind != Type::Vec3 {
        return Err(ctx.err(
            from,
            FaultKind::Invalid,
            format!(
                "accessors[{acc}] is {}, but morph target deltas are VEC3",
                super::accessor::type_name(lay.kind)
            ),
        ));
    }
    if lay.count != n {
        return Err(ctx.err(
            from,
            FaultKind::Count,
            format!(
                "accessors[{acc}] has {} elements, but POSITION has {n}",
                lay.count
            ),
        ));
    }
    let (raw, _) = ctx.read_floats(acc, from, &[Type::Vec3]).map_err(|mut e| {
        // A non-finite delta is named at the target, the accessor in words.
        if e.kind == FaultKind::NonFinite {
            e.message = format!("accessors[{acc}]: {}", e.message);
            e.place = Place::Item(from.to_string());
        }
        e
    })?;
    Ok(raw.chunks_exact(3).map(Vec3::from_slice).collect())
}

/// Triangle lists from lists, strips and fans (the spec's vertex orders,
/// which keep the winding).
fn triangulate(ctx: &Ctx<'_>, item: &str, mode: Mode, c: Vec<u32>) -> Result<Vec<u32>, LoadError> {
    match mode {
        Mode::TriangleStrip => {
            let mut out = Vec::with_capacity(c.len().saturating_sub(2) * 3);
            for i in 0..c.len().saturating_sub(2) {
                if i % 2 == 0 {
                    out.extend_from_slice(&[c[i], c[i + 1], c[i + 2]]);
                } else {
                    out.extend_from_slice(&[c[i], c[i + 2], c[i + 1]]);
                }
            }
            Ok(out)
        }
        Mode::TriangleFan => {
            let mut out = Vec::with_capacity(c.len().saturating_sub(2) * 3);
            for i in 0..c.len().saturating_sub(2) {
                out.extend_from_slice(&[c[i + 1], c[i + 2], c[0]]);
            }
            Ok(out)
        }
        _ => {
            if !c.len().is_multiple_of(3) {
                return Err(ctx.err(
                    item,
                    FaultKind::Count,
                    format!("{} triangle corners is not a multiple of 3", c.len()),
                ));
            }
            Ok(c)
        }
    }
}

/// Normalised influences (none without `JOINTS_0`) and the largest live joint
/// index with the attribute that holds it.
type ReadInfluences = (Option<Influences>, Option<(u32, String)>);

/// Every `JOINTS_n`/`WEIGHTS_n` pair into `4 * sets` slots per vertex, then
/// normalised to `max_influences` (warnings record what was cut).
fn read_influences(
    ctx: &mut Ctx<'_>,
    item: &str,
    name: &str,
    prim: &gltf::json::mesh::Primitive,
    n: usize,
) -> Result<ReadInfluences, LoadError> {
    let mut sets: Vec<(u32, usize, usize)> = Vec::new();
    for (key, acc) in &prim.attributes {
        match key {
            Checked::Valid(Semantic::Joints(s)) => {
                match prim.attributes.get(&Checked::Valid(Semantic::Weights(*s))) {
                    Some(w) => sets.push((*s, acc.value(), w.value())),
                    None => ctx.warn(format!("{item}: JOINTS_{s} without WEIGHTS_{s} ignored")),
                }
            }
            Checked::Valid(Semantic::Weights(s))
                if !prim
                    .attributes
                    .contains_key(&Checked::Valid(Semantic::Joints(*s))) =>
            {
                ctx.warn(format!("{item}: WEIGHTS_{s} without JOINTS_{s} ignored"));
            }
            _ => {}
        }
    }
    if sets.is_empty() {
        return Ok((None, None));
    }
    sets.sort_unstable_by_key(|s| s.0);
    let k = 4 * sets.len();
    let total = (n as u64).saturating_mul(k as u64);
    ctx.charge(total * 6, item)?;
    let mut joints = vec![0u16; n * k];
    let mut weights = vec![0f32; n * k];
    let mut max_joint: Option<(u32, String)> = None;
    for (si, &(s, ja, wa)) in sets.iter().enumerate() {
        let jname = format!("{item}.attributes.JOINTS_{s}");
        let wname = format!("{item}.attributes.WEIGHTS_{s}");
        let (j, jl) = ctx.read_uints(
            ja,
            &jname,
            &[Type::Vec4],
            &[ComponentType::U8, ComponentType::U16],
        )?;
        let (w, wl) = ctx.read_floats(wa, &wname, &[Type::Vec4])?;
        for (what, count) in [(&jname, jl.count), (&wname, wl.count)] {
            if count != n {
                return Err(ctx.err(
                    what,
                    FaultKind::Count,
                    format!("{count} elements, but POSITION has {n}"),
                ));
            }
        }
        if wl.ctype != ComponentType::F32 && !wl.normalized {
            ctx.warn(format!(
                "{wname}: integer weights not marked normalized; read as normalized"
            ));
        }
        let scale = match (wl.ctype, wl.normalized) {
            (ComponentType::U8, false) => 1.0 / 255.0,
            (ComponentType::U16, false) => 1.0 / 65535.0,
            _ => 1.0,
        };
        for v in 0..n {
            for c in 0..4 {
                let (jv, wv) = (j[v * 4 + c], w[v * 4 + c] * scale);
                let slot = v * k + si * 4 + c;
                if wv != 0.0 {
                    weights[slot] = wv;
                    // Joints under zero weights are often junk; only live
                    // ones must name a joint of the skin.
                    joints[slot] = jv.min(u16::MAX as u32) as u16;
                    if max_joint.as_ref().is_none_or(|(m, _)| jv > *m) {
                        max_joint = Some((jv, jname.clone()));
                    }
                }
            }
        }
    }
    let raw = Influences::new(k, joints, weights);
    let (inf, report) = normalize_influences(&raw, ctx.options.max_influences, 0);
    if report.truncated_vertices > 0 {
        ctx.warn(format!(
            "{item} ({name}): {} vertices had more than {} influences (up to {}); the {} largest were kept and renormalised",
            report.truncated_vertices, ctx.options.max_influences, report.max_found, ctx.options.max_influences
        ));
    }
    if report.dropped_weights > 0 {
        ctx.warn(format!(
            "{item} ({name}): {} negative or non-finite weights dropped",
            report.dropped_weights
        ));
    }
    if report.rigid_vertices > 0 {
        ctx.warn(format!(
            "{item} ({name}): {} vertices had no weight and were bound to the skin's first joint",
            report.rigid_vertices
        ));
    }
    Ok((Some(inf), max_joint))
}
