//! Animations into clips: one [`RawJointTrack`] per animated node, one
//! [`Clip`] per glTF animation.

use glam::{Quat, Vec3};
use gltf::json::accessor::Type;
use gltf::json::animation::{Interpolation as GltfInterpolation, Property};
use gltf::json::validation::Checked;

use super::super::{FaultKind, LoadError};
use super::ctx::Ctx;
use super::info::ChannelInfo;
use crate::anim::{Clip, Interpolation, RawClip, RawJointTrack, RawTrack, Skeleton};

/// Bytes a runtime clip costs per skeleton joint, roughly, for the budget.
const CLIP_BYTES_PER_JOINT: u64 = 512;

pub(super) fn clips(
    ctx: &mut Ctx<'_>,
    skeleton: &Skeleton,
    joint_of_node: &[usize],
) -> Result<(Vec<Clip>, Vec<Vec<ChannelInfo>>), LoadError> {
    let root = ctx.root;
    let mut out = Vec::with_capacity(root.animations.len());
    let mut infos = Vec::with_capacity(root.animations.len());
    for (a, anim) in root.animations.iter().enumerate() {
        let item = format!("animations[{a}]");
        ctx.charge(skeleton.len() as u64 * CLIP_BYTES_PER_JOINT, &item)?;
        let name = anim.name.clone().unwrap_or_else(|| format!("animation{a}"));
        // Track per node, in the order channels first name them.
        let mut track_of_node: Vec<Option<usize>> = vec![None; joint_of_node.len()];
        let mut tracks: Vec<RawJointTrack> = Vec::new();
        let mut duration = 0.0f32;
        let mut skipped_weights = 0;
        let mut info = Vec::new();
        for (c, ch) in anim.channels.iter().enumerate() {
            let citem = format!("{item}.channels[{c}]");
            let path = match ch.target.path {
                Checked::Valid(p) => p,
                Checked::Invalid => {
                    return Err(ctx.err(
                        &format!("{citem}.target.path"),
                        FaultKind::Invalid,
                        "invalid target path",
                    ))
                }
            };
            if path == Property::MorphTargetWeights {
                skipped_weights += 1;
                continue;
            }
            let node = ch.target.node.value();
            let Some(&joint) = joint_of_node.get(node) else {
                return Err(ctx.err(
                    &format!("{citem}.target.node"),
                    FaultKind::OutOfRange,
                    format!(
                        "nodes[{node}], but the file has {} nodes",
                        joint_of_node.len()
                    ),
                ));
            };
            let s = ch.sampler.value();
            let Some(sampler) = anim.samplers.get(s) else {
                return Err(ctx.err(
                    &format!("{citem}.sampler"),
                    FaultKind::OutOfRange,
                    format!("samplers[{s}], but {item} has {}", anim.samplers.len()),
                ));
            };
            let sitem = format!("{item}.samplers[{s}]");
            let interpolation = match sampler.interpolation {
                Checked::Valid(GltfInterpolation::Step) => Interpolation::Step,
                Checked::Valid(GltfInterpolation::Linear) => Interpolation::Linear,
                Checked::Valid(GltfInterpolation::CubicSpline) => Interpolation::CubicSpline,
                Checked::Invalid => {
                    return Err(ctx.err(
                        &format!("{sitem}.interpolation"),
                        FaultKind::Invalid,
                        "invalid interpolation",
                    ))
                }
            };
            let times = read_times(ctx, sampler.input.value(), &format!("{sitem}.input"))?;
            if let Some(&last) = times.last() {
                duration = duration.max(last);
            }
            let (comps, vtype) = match path {
                Property::Rotation => (4, Type::Vec4),
                _ => (3, Type::Vec3),
            };
            let out_acc = sampler.output.value();
            let (values, lay) = ctx.read_floats(out_acc, &format!("{sitem}.output"), &[vtype])?;
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if lay.count != times.len() * per_key {
                return Err(ctx.err(
                    &format!("accessors[{out_acc}]"),
                    FaultKind::Count,
                    format!(
                        "{} output values for {} key times ({} per key with {:?})",
                        lay.count,
                        times.len(),
                        per_key,
                        interpolation
                    ),
                ));
            }
            let slot = match track_of_node[node] {
                Some(t) => t,
                None => {
                    tracks.push(RawJointTrack::new(joint));
                    track_of_node[node] = Some(tracks.len() - 1);
                    tracks.len() - 1
                }
            };
            let track = &mut tracks[slot];
            let taken = match path {
                Property::Translation => !track.translation.is_empty(),
                Property::Rotation => !track.rotation.is_empty(),
                _ => !track.scale.is_empty(),
            };
            if taken {
                return Err(ctx.err(
                    &citem,
                    FaultKind::Invalid,
                    format!("a second channel for nodes[{node}] {path:?}"),
                ));
            }
            info.push(ChannelInfo {
                node,
                joint,
                path: match path {
                    Property::Translation => "translation",
                    Property::Rotation => "rotation",
                    _ => "scale",
                },
                keys: times.len(),
                interpolation,
                start: times.first().copied().unwrap_or(0.0),
                end: times.last().copied().unwrap_or(0.0),
            });
            let elems: Vec<&[f32]> = values.chunks_exact(comps).collect();
            match path {
                Property::Rotation => {
                    track.rotation = make_track(interpolation, times, &elems, |e| {
                        Quat::from_xyzw(e[0], e[1], e[2], e[3])
                    })
                }
                Property::Translation => {
                    track.translation = make_track(interpolation, times, &elems, Vec3::from_slice)
                }
                _ => track.scale = make_track(interpolation, times, &elems, Vec3::from_slice),
            }
        }
        if skipped_weights > 0 {
            ctx.warn(format!(
                "{item} ({name}): {skipped_weights} morph-target weight channels ignored"
            ));
        }
        let raw = RawClip {
            weights: Vec::new(),
            name,
            duration,
            tracks,
        };
        let clip = Clip::build(&raw, skeleton)
            .map_err(|e| ctx.err(&item, FaultKind::Invalid, e.to_string()))?;
        out.push(clip);
        infos.push(info);
    }
    Ok((out, infos))
}

/// Key times: scalars, finite, non-negative, non-decreasing, at least one.
fn read_times(ctx: &mut Ctx<'_>, acc: usize, from: &str) -> Result<Vec<f32>, LoadError> {
    let (t, _) = ctx.read_floats(acc, from, &[Type::Scalar])?;
    let item = format!("accessors[{acc}]");
    if t.is_empty() {
        return Err(ctx.err(&item, FaultKind::Count, "an animation input with no keys"));
    }
    for (k, w) in t.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(ctx.err(
                &item,
                FaultKind::Invalid,
                format!(
                    "key {} at {} s comes before key {k} at {} s",
                    k + 1,
                    w[1],
                    w[0]
                ),
            ));
        }
    }
    if t[0] < 0.0 {
        return Err(ctx.err(
            &item,
            FaultKind::Invalid,
            format!("negative key time {}", t[0]),
        ));
    }
    Ok(t)
}

/// glTF stores cubic-spline keys as `[in-tangent, value, out-tangent]`.
fn make_track<T: Copy>(
    interpolation: Interpolation,
    times: Vec<f32>,
    elems: &[&[f32]],
    make: impl Fn(&[f32]) -> T,
) -> RawTrack<T> {
    if interpolation == Interpolation::CubicSpline {
        let mut values = Vec::with_capacity(times.len());
        let mut tangents = Vec::with_capacity(times.len());
        for key in elems.chunks_exact(3) {
            tangents.push([make(key[0]), make(key[2])]);
            values.push(make(key[1]));
        }
        RawTrack {
            interpolation,
            times,
            values,
            tangents,
        }
    } else {
        RawTrack::new(
            interpolation,
            times,
            elems.iter().map(|e| make(e)).collect(),
        )
    }
}
