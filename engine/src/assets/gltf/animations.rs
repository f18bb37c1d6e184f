//! Animations into raw clips: one [`RawJointTrack`] per animated node and
//! one [`RawWeightTrack`] per morph-weight channel, one [`RawClip`] per
//! glTF animation (built into [`Clip`](crate::anim::Clip)s by the caller).

use glam::{Quat, Vec3};
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::animation::{Interpolation as GltfInterpolation, Property};
use gltf::json::validation::Checked;

use super::super::{FaultKind, LoadError, Place};
use super::ctx::Ctx;
use super::info::ChannelInfo;
use crate::anim::{Interpolation, RawClip, RawJointTrack, RawTrack, RawWeightTrack, Skeleton};

/// Bytes a runtime clip costs per skeleton joint, roughly, for the budget.
const CLIP_BYTES_PER_JOINT: u64 = 512;

/// Every animation as a [`RawClip`], with the channels read into it.
/// `weight_runs[node]` is the run `(first, count)` of the model's morph
/// weights that node's `weights` channels animate (`None`: the node has no
/// morph targets, and such channels are skipped with a warning).
pub(super) fn raw_clips(
    ctx: &mut Ctx<'_>,
    skeleton: &Skeleton,
    joint_of_node: &[usize],
    weight_runs: &[Option<(usize, usize)>],
) -> Result<(Vec<RawClip>, Vec<Vec<ChannelInfo>>), LoadError> {
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
        let mut weight_tracks: Vec<RawWeightTrack> = Vec::new();
        let mut weights_of_node: Vec<bool> = vec![false; joint_of_node.len()];
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
            let weight_run = if path == Property::MorphTargetWeights {
                let Some(run) = weight_runs.get(node).copied().flatten() else {
                    ctx.warn(format!(
                        "{citem} ({name}): a morph-target weight channel on nodes[{node}], which instances no mesh with morph targets; skipped"
                    ));
                    continue;
                };
                if weights_of_node[node] {
                    return Err(ctx.err(
                        &citem,
                        FaultKind::Invalid,
                        format!("a second channel for nodes[{node}] weights"),
                    ));
                }
                Some(run)
            } else {
                None
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
            if let Some((first, count)) = weight_run {
                let track = weight_track(
                    ctx,
                    &citem,
                    sampler.output.value(),
                    interpolation,
                    times,
                    (first, count),
                )?;
                weights_of_node[node] = true;
                info.push(ChannelInfo {
                    node,
                    joint,
                    path: "weights",
                    weights: Some(first..first + count),
                    keys: track.times.len(),
                    interpolation,
                    start: track.times.first().copied().unwrap_or(0.0),
                    end: track.times.last().copied().unwrap_or(0.0),
                });
                weight_tracks.push(track);
                continue;
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
                weights: None,
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
        out.push(RawClip {
            weights: weight_tracks,
            name,
            duration,
            tracks,
        });
        infos.push(info);
    }
    Ok((out, infos))
}

/// A `weights` channel's sampler output (accessor `acc`) as a weight track
/// over the run `(first, count)`: `keys * count` weights (STEP, LINEAR) or
/// `keys * 3 * count` (CUBICSPLINE: per key `count` in-tangents, `count`
/// values, `count` out-tangents). Floats, or normalised integers. Faults
/// name the channel `citem`.
fn weight_track(
    ctx: &mut Ctx<'_>,
    citem: &str,
    acc: usize,
    interpolation: Interpolation,
    times: Vec<f32>,
    (first, count): (usize, usize),
) -> Result<RawWeightTrack, LoadError> {
    let from = format!("{citem} output");
    let lay = ctx.layout(acc, &from)?;
    if lay.kind != Type::Scalar {
        return Err(ctx.err(
            citem,
            FaultKind::Invalid,
            format!(
                "output accessors[{acc}] is {}, but morph weights are SCALAR",
                super::accessor::type_name(lay.kind)
            ),
        ));
    }
    if lay.ctype != ComponentType::F32 && !lay.normalized {
        return Err(ctx.err(
            citem,
            FaultKind::Invalid,
            format!(
                "output accessors[{acc}] is {} but not normalized; morph weights are FLOAT or normalized integers",
                super::accessor::ctype_name(lay.ctype)
            ),
        ));
    }
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let keys = times.len();
    let want = keys.checked_mul(per_key).and_then(|x| x.checked_mul(count));
    if want != Some(lay.count) {
        return Err(ctx.err(
            citem,
            FaultKind::Count,
            format!(
                "output accessors[{acc}] has {} values, but {keys} keys of {count} weights need {} ({per_key} per key and weight with {interpolation:?})",
                lay.count,
                keys as u128 * per_key as u128 * count as u128
            ),
        ));
    }
    let (raw, _) = ctx
        .read_floats(acc, &from, &[Type::Scalar])
        .map_err(|mut e| {
            if e.kind == FaultKind::NonFinite {
                e.message = format!("output accessors[{acc}]: {}", e.message);
                e.place = Place::Item(citem.to_string());
            }
            e
        })?;
    if per_key == 1 {
        return Ok(RawWeightTrack {
            first,
            count,
            interpolation,
            times,
            values: raw,
            tangents: Vec::new(),
        });
    }
    // The values and tangents together are as large as what was read.
    ctx.charge(raw.len() as u64 * 4, citem)?;
    let mut values = Vec::with_capacity(keys * count);
    let mut tangents = Vec::with_capacity(keys * 2 * count);
    for key in raw.chunks_exact(3 * count.max(1)).take(keys) {
        tangents.extend_from_slice(&key[..count]);
        tangents.extend_from_slice(&key[2 * count..]);
        values.extend_from_slice(&key[count..2 * count]);
    }
    Ok(RawWeightTrack {
        first,
        count,
        interpolation,
        times,
        values,
        tangents,
    })
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::load_raw_clips;
    use crate::anim::{Interpolation, RawWeightTrack};

    /// A GLB of `json` and `bin` (both padded to four bytes).
    fn glb(json: &str, bin: &[u8]) -> Vec<u8> {
        let mut j = json.as_bytes().to_vec();
        while !j.len().is_multiple_of(4) {
            j.push(b' ');
        }
        let mut b = bin.to_vec();
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
        let total = 12 + 8 + j.len() + 8 + b.len();
        let mut out = b"glTF".to_vec();
        for x in [2, total as u32, j.len() as u32] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&j);
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&b);
        out
    }

    /// One triangle with two targets on node 0; a STEP, a CUBICSPLINE and
    /// a normalised-SHORT weight clip.
    fn fixture() -> Vec<u8> {
        let mut bin = Vec::new();
        let mut views = Vec::new();
        let mut put = |bytes: Vec<u8>| {
            views.push(format!(
                r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#,
                bin.len(),
                bytes.len()
            ));
            bin.extend_from_slice(&bytes);
        };
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        put(f(&[0., 0., 0., 1., 0., 0., 0., 1., 0.])); // 0 positions
        put(f(&[1.; 9])); // 1 target 0
        put(f(&[2.; 9])); // 2 target 1
        put(f(&[0., 1.])); // 3 STEP times
        put(f(&[0.5, 1., -1., 2.])); // 4 STEP weights
        put(f(&[0., 2.])); // 5 CUBICSPLINE times
        put(f(&[
            10., 11., 0.25, 0.5, 12., 13., // key 0: in, value, out
            14., 15., 1., -2., 16., 17., // key 1
        ])); // 6
        put(f(&[0., 1.])); // 7 SHORT times
        put([32767i16, -32768, 0, 16384]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect()); // 8
        let acc = |v: usize, ty: &str, n: usize| {
            format!(r#"{{"bufferView":{v},"componentType":5126,"count":{n},"type":"{ty}"}}"#)
        };
        let accessors = [
            acc(0, "VEC3", 3),
            acc(1, "VEC3", 3),
            acc(2, "VEC3", 3),
            acc(3, "SCALAR", 2),
            acc(4, "SCALAR", 4),
            acc(5, "SCALAR", 2),
            acc(6, "SCALAR", 12),
            acc(7, "SCALAR", 2),
            r#"{"bufferView":8,"componentType":5122,"normalized":true,"count":4,"type":"SCALAR"}"#
                .to_string(),
        ];
        let json = format!(
            r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"byteLength":{}}}],"bufferViews":[{}],"accessors":[{}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"targets":[{{"POSITION":1}},{{"POSITION":2}}]}}]}}],
            "nodes":[{{"mesh":0}}],
            "animations":[
              {{"channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],"samplers":[{{"input":3,"output":4,"interpolation":"STEP"}}]}},
              {{"channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],"samplers":[{{"input":5,"output":6,"interpolation":"CUBICSPLINE"}}]}},
              {{"channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],"samplers":[{{"input":7,"output":8}}]}}]}}"#,
            bin.len(),
            views.join(","),
            accessors.join(",")
        );
        glb(&json, &bin)
    }

    #[test]
    fn weight_channels_into_raw_tracks() {
        let raw = load_raw_clips(Path::new("w.glb"), &fixture()).unwrap();
        assert_eq!(raw.len(), 3);
        assert_eq!(
            raw[0].weights,
            vec![RawWeightTrack {
                first: 0,
                count: 2,
                interpolation: Interpolation::Step,
                times: vec![0., 1.],
                values: vec![0.5, 1., -1., 2.],
                tangents: vec![],
            }]
        );
        // Per key: the values between the in- and out-tangents; the
        // tangents as [in..., out...].
        assert_eq!(
            raw[1].weights,
            vec![RawWeightTrack {
                first: 0,
                count: 2,
                interpolation: Interpolation::CubicSpline,
                times: vec![0., 2.],
                values: vec![0.25, 0.5, 1., -2.],
                tangents: vec![10., 11., 12., 13., 14., 15., 16., 17.],
            }]
        );
        assert_eq!(raw[1].duration, 2.0);
        // Normalised SHORT: c / 32767, at least -1.
        let t = &raw[2].weights[0];
        assert_eq!(t.interpolation, Interpolation::Linear);
        assert_eq!(t.values, vec![1., -1., 0., 16384. / 32767.]);
        assert!(raw.iter().all(|c| c.tracks.is_empty()));
    }
}
