//! `AnimTicksPerSecond`, `AnimationSet`, `Animation`, `AnimationKey` and
//! `AnimationOptions` into clips.

use std::collections::HashMap;

use glam::Quat;

use super::super::{FaultKind, LoadError};
use super::ctx::Ctx;
use super::tree::{Node, Object};
use super::values::Reader;
use crate::anim::{Clip, Interpolation, RawClip, RawJointTrack, RawTrack, Skeleton, Transform};

/// D3DX's tick rate when a file names none (seed 003's 4.8 ticks per ms).
pub const DEFAULT_TICKS_PER_SECOND: u32 = 4800;

fn ticks_per_second(ctx: &Ctx<'_, '_>, obj: &Object) -> Result<f64, LoadError> {
    let mut r = Reader::new(ctx.src, obj);
    let (tps, at) = r.u32(&|| "AnimTicksPerSecond".into())?;
    if tps == 0 {
        return Err(r.err(at, FaultKind::Invalid, "0 ticks per second"));
    }
    Ok(f64::from(tps))
}

/// Every `AnimationSet` as a clip, in file order.
///
/// Ticks per second: an `AnimTicksPerSecond` inside the set; else the last
/// top-level one before the set; else the first top-level one anywhere;
/// else 4800.
pub(crate) fn clips(
    ctx: &mut Ctx<'_, '_>,
    doc: &[Node],
    names: &HashMap<String, usize>,
    skeleton: &Skeleton,
    file_local: &[Transform],
    limits: &super::limits::Limits,
) -> Result<Vec<Clip>, LoadError> {
    let top = || {
        doc.iter().filter_map(|n| match n {
            Node::Object(o) => Some(o),
            Node::Ref { .. } => None,
        })
    };
    let mut first = None;
    if let Some(o) = top().find(|o| o.kind == "AnimTicksPerSecond") {
        first = Some(ticks_per_second(ctx, o)?);
    }
    let mut current = None;
    let mut clips = Vec::new();
    let mut loose = 0usize;
    for obj in top() {
        match obj.kind.as_str() {
            "AnimTicksPerSecond" => current = Some(ticks_per_second(ctx, obj)?),
            "AnimationSet" => {
                // A runtime clip holds every joint: bound the product.
                let pairs = (clips.len() + 1).saturating_mul(skeleton.len().max(1));
                if pairs > limits.max_clip_joints {
                    return Err(ctx.src.err(
                        obj.at,
                        FaultKind::Count,
                        format!(
                            "{} animation sets over {} joints is more than the limit of {} \
                             clip-joint pairs",
                            clips.len() + 1,
                            skeleton.len(),
                            limits.max_clip_joints
                        ),
                    ));
                }
                let tps = match obj.child("AnimTicksPerSecond") {
                    Some(o) => ticks_per_second(ctx, o)?,
                    None => current
                        .or(first)
                        .unwrap_or(f64::from(DEFAULT_TICKS_PER_SECOND)),
                };
                let index = clips.len();
                clips.push(clip(ctx, obj, index, tps, names, skeleton, file_local)?);
            }
            "Animation" => loose += 1,
            _ => {}
        }
    }
    if loose > 0 {
        ctx.warn(format!(
            "{loose} Animation objects outside any AnimationSet are ignored"
        ));
    }
    Ok(clips)
}

#[allow(clippy::too_many_arguments)]
fn clip(
    ctx: &mut Ctx<'_, '_>,
    set: &Object,
    index: usize,
    tps: f64,
    names: &HashMap<String, usize>,
    skeleton: &Skeleton,
    file_local: &[Transform],
) -> Result<Clip, LoadError> {
    let src = ctx.src;
    let name = set
        .name
        .clone()
        .unwrap_or_else(|| format!("AnimationSet{index}"));
    let mut tracks: Vec<RawJointTrack> = Vec::new();
    let mut seen: HashMap<usize, u32> = HashMap::new();
    let mut spline = false;
    for anim in set.objects().filter(|o| o.kind == "Animation") {
        let mut target: Option<(usize, u32)> = None;
        for child in &anim.children {
            if let Node::Ref { name: r, at } = child {
                if target.is_some() {
                    return Err(src.err(
                        *at,
                        FaultKind::Invalid,
                        format!("{}: a second frame reference", anim.label()),
                    ));
                }
                let joint = r.as_deref().and_then(|n| names.get(n)).copied();
                match joint {
                    Some(j) => target = Some((j, *at)),
                    None => {
                        return Err(src.err(
                            *at,
                            FaultKind::MissingReference,
                            format!(
                                "{} in set {name:?} animates frame {:?}, which does not exist",
                                anim.label(),
                                r.as_deref().unwrap_or("<by UUID>")
                            ),
                        ))
                    }
                }
            }
        }
        let Some((joint, at)) = target else {
            return Err(src.err(
                anim.at,
                FaultKind::MissingReference,
                format!("{} in set {name:?} names no frame to animate", anim.label()),
            ));
        };
        if let Some(first) = seen.insert(joint, at) {
            return Err(src.err(
                at,
                FaultKind::Invalid,
                format!(
                    "set {name:?} animates frame {:?} twice (first at {})",
                    skeleton.names()[joint],
                    src.place(first).to_string().trim_end_matches(": ")
                ),
            ));
        }
        let mut track = RawJointTrack::new(joint);
        for child in anim.objects() {
            match child.kind.as_str() {
                "AnimationKey" => key(ctx, child, tps, &mut track)?,
                "AnimationOptions" => {
                    let mut r = Reader::new(src, child);
                    let (_open, _) = r.u32(&|| "openclosed".into())?;
                    let (quality, _) = r.u32(&|| "positionquality".into())?;
                    spline |= quality == 0;
                }
                _ => {}
            }
        }
        tracks.push(track);
    }
    if spline {
        ctx.warn(format!(
            "set {name:?}: AnimationOptions ask for spline positions; positions are \
             interpolated linearly (open/closed is left to the player's mode)"
        ));
    }
    hold_file_pose(&mut tracks, skeleton, file_local);
    let raw = RawClip {
        weights: Vec::new(),
        name: name.clone(),
        duration: 0.0,
        tracks,
    };
    Clip::build(&raw, skeleton).map_err(|e| {
        src.err(
            set.at,
            FaultKind::Invalid,
            format!("AnimationSet {name:?}: {e}"),
        )
    })
}

/// One `AnimationKey { keyType; nKeys; { time; nValues; values }... }`.
fn key(
    ctx: &Ctx<'_, '_>,
    obj: &Object,
    tps: f64,
    track: &mut RawJointTrack,
) -> Result<(), LoadError> {
    let mut r = Reader::new(ctx.src, obj);
    let (kind, kat) = r.u32(&|| "the key type".into())?;
    let (width, what) = match kind {
        0 => (4, "rotation"),
        1 => (3, "scale"),
        2 => (3, "position"),
        // Some exporters write 3 for the matrix type.
        3 | 4 => (16, "matrix"),
        other => {
            return Err(r.err(
                kat,
                FaultKind::UnknownKeyType,
                format!("unknown key type {other} (0 rotation, 1 scale, 2 position, 4 matrix)"),
            ))
        }
    };
    let filled = match kind {
        0 => !track.rotation.is_empty(),
        1 => !track.scale.is_empty(),
        2 => !track.translation.is_empty(),
        _ => !track.matrix.is_empty(),
    };
    if filled {
        return Err(r.err(kat, FaultKind::Invalid, format!("a second {what} key list")));
    }
    let n = r.count_with(&|| format!("{what} keys"), 2 + width)?;
    let mut times = Vec::with_capacity(n);
    let mut last = 0u32;
    let mut rot = Vec::new();
    let mut vec = Vec::new();
    let mut mat = Vec::new();
    for i in 0..n {
        let (t, tat) = r.u32(&|| format!("key {i}'s time"))?;
        if i > 0 && t < last {
            return Err(r.err(
                tat,
                FaultKind::Invalid,
                format!(
                    "key {i} at tick {t} comes before key {} at tick {last}",
                    i - 1
                ),
            ));
        }
        last = t;
        times.push((f64::from(t) / tps) as f32);
        let (nv, vat) = r.u32(&|| format!("key {i}'s value count"))?;
        if nv as usize != width {
            return Err(r.err(
                vat,
                FaultKind::Invalid,
                format!("key {i} has {nv} values; {what} keys have {width}"),
            ));
        }
        let w = || format!("{what} key {i}");
        match kind {
            0 => {
                let (q, qat) = r.quat(&w)?;
                if q.length_squared() < 1e-12 {
                    return Err(r.err(
                        qat,
                        FaultKind::Invalid,
                        format!("{} is a zero quaternion", w()),
                    ));
                }
                rot.push(q);
            }
            1 => vec.push(r.vec3(&w)?),
            2 => vec.push(r.vec3_mirrored(&w)?),
            _ => mat.push(r.matrix(&w)?),
        }
    }
    match kind {
        0 => track.rotation = RawTrack::new(ctx.options.x_rotation_interpolation, times, rot),
        1 => track.scale = RawTrack::new(Interpolation::Linear, times, vec),
        2 => track.translation = RawTrack::new(Interpolation::Linear, times, vec),
        _ => track.matrix = RawTrack::new(Interpolation::Nearest, times, mat),
    }
    Ok(())
}

/// A frame keeps its `FrameTransformMatrix` for whatever a set does not
/// animate (D3DX's behaviour), while the skeleton's rest pose is the bind
/// pose (see the module docs): where the two differ, the channel gets a
/// one-key track holding the file's value.
fn hold_file_pose(tracks: &mut Vec<RawJointTrack>, skeleton: &Skeleton, file_local: &[Transform]) {
    let mut index: HashMap<usize, usize> = tracks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.joint, i))
        .collect();
    for (j, (file, bind)) in file_local.iter().zip(skeleton.bind_local()).enumerate() {
        let i = match index.get(&j) {
            Some(&i) => {
                if !tracks[i].matrix.is_empty() {
                    continue;
                }
                i
            }
            None => {
                if same(file, bind) {
                    continue;
                }
                tracks.push(RawJointTrack::new(j));
                index.insert(j, tracks.len() - 1);
                tracks.len() - 1
            }
        };
        let t = &mut tracks[i];
        let tol = 1e-5 * file.translation.abs().max_element().max(1.0);
        if t.translation.is_empty() && !file.translation.abs_diff_eq(bind.translation, tol) {
            t.translation = RawTrack::new(Interpolation::Linear, vec![0.0], vec![file.translation]);
        }
        if t.rotation.is_empty() && !same_rotation(file.rotation, bind.rotation) {
            t.rotation = RawTrack::new(Interpolation::Linear, vec![0.0], vec![file.rotation]);
        }
        if t.scale.is_empty() && !file.scale.abs_diff_eq(bind.scale, 1e-5) {
            t.scale = RawTrack::new(Interpolation::Linear, vec![0.0], vec![file.scale]);
        }
    }
}

fn same_rotation(a: Quat, b: Quat) -> bool {
    a.dot(b).abs() >= 1.0 - 1e-6
}

fn same(a: &Transform, b: &Transform) -> bool {
    let tol = 1e-5 * a.translation.abs().max_element().max(1.0);
    a.translation.abs_diff_eq(b.translation, tol)
        && same_rotation(a.rotation, b.rotation)
        && a.scale.abs_diff_eq(b.scale, 1e-5)
}
