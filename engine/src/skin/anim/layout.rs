//! The host side of GPU animation's buffers, with no Vulkan in it: the
//! clip store (every clip's channels as descriptors over shared key times
//! and data, `shaders/anim/sample.glsl`) and a mesh's palette program (the
//! skeleton's parents and depth levels, each palette entry's joint,
//! inverse bind, place in the instance's block and dual-quaternion parent,
//! `shaders/anim/animate.comp`).

use glam::Affine3A;

use crate::anim::{Clip, FlatChannel, FlatKind, Skeleton, Skin, NO_PARENT};
use crate::gpu::{GpuError, GpuResult};
use crate::skin::mesh::MeshPart;

/// Descriptor kind of a channel that takes the clip's rest value.
const K_REST: u32 = 0;
/// Descriptor kind of a channel a matrix track already wrote.
const K_SKIP: u32 = 12;
/// Descriptor kind of a compressed clip's quantized track
/// (`shaders/anim/sample_packed.glsl`).
const K_PACKED: u32 = 13;
/// "No parent" in the program.
pub(crate) const NONE: u32 = u32::MAX;

/// Every clip of a store, laid out for `sample.glsl`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StoreLayout {
    /// Per clip: first descriptor, duration bits, 0, 0.
    pub clips: Vec<[u32; 4]>,
    /// Per clip, joint and channel (translation, rotation, scale):
    /// kind, first key time, key count, first datum. A compressed clip's
    /// quantized tracks also put here their header, spans, segment tracks
    /// and bit stream (see [`StoreLayout::lay_packed`]).
    pub descs: Vec<[u32; 4]>,
    pub times: Vec<f32>,
    pub data: Vec<[f32; 4]>,
    pub durations: Vec<f32>,
}

fn too_big(what: &'static str, needed: usize) -> GpuError {
    GpuError::Limit {
        what,
        needed: needed as u64,
        limit: u64::from(u32::MAX),
    }
}

fn index(len: usize, what: &'static str) -> GpuResult<u32> {
    u32::try_from(len).map_err(|_| too_big(what, len))
}

impl StoreLayout {
    /// Lays out `clips`, each of which must drive `joints` joints.
    pub fn build(joints: usize, clips: &[Clip]) -> GpuResult<Self> {
        let mut s = Self::default();
        for clip in clips {
            if clip.joint_count() != joints {
                return Err(GpuError::InvalidArgument(format!(
                    "GPU clip store: clip {:?} drives {} joints, the skeleton has {joints}",
                    clip.name(),
                    clip.joint_count()
                )));
            }
            let flat = clip.flatten();
            let first = index(s.descs.len(), "GPU clip store descriptors")?;
            s.clips
                .push([first, flat.duration.to_bits(), clips.len() as u32, 0]);
            s.durations.push(flat.duration);
            let time_at: Vec<u32> = flat
                .timelines
                .iter()
                .map(|t| {
                    let at = index(s.times.len(), "GPU clip store key times")?;
                    s.times.extend_from_slice(t);
                    Ok(at)
                })
                .collect::<GpuResult<_>>()?;
            // The rest pose first: every channel points at it until a track
            // claims it.
            let base = s.descs.len();
            for r in &flat.rest {
                let at = index(s.data.len(), "GPU clip store data")?;
                let (t, q, sc) = (r.translation, r.rotation, r.scale);
                s.data.push([t.x, t.y, t.z, 0.0]);
                s.data.push(q.to_array());
                s.data.push([sc.x, sc.y, sc.z, 0.0]);
                s.descs.push([K_REST, 0, 0, at]);
                s.descs.push([K_REST, 0, 0, at + 1]);
                s.descs.push([K_REST, 0, 0, at + 2]);
            }
            for t in &flat.tracks {
                let at = index(s.data.len(), "GPU clip store data")?;
                s.data.extend_from_slice(&t.data);
                let tl = t.timeline as usize;
                let keys = flat.timelines[tl].len() as u32;
                let d = [t.kind as u32, time_at[tl], keys, at];
                let j = base + 3 * t.joint as usize;
                match t.channel {
                    FlatChannel::Translation => s.descs[j] = d,
                    FlatChannel::Rotation => s.descs[j + 1] = d,
                    FlatChannel::Scale => s.descs[j + 2] = d,
                    FlatChannel::Matrix => {
                        debug_assert!(matches!(
                            t.kind,
                            FlatKind::MatrixStep | FlatKind::MatrixNearest
                        ));
                        s.descs[j] = d;
                        s.descs[j + 1] = [K_SKIP, 0, 0, 0];
                        s.descs[j + 2] = [K_SKIP, 0, 0, 0];
                    }
                }
            }
            if let Some(p) = clip.compressed() {
                s.lay_packed(base, p)?;
            }
        }
        if s.data.is_empty() {
            s.data.push([0.0; 4]);
        }
        if s.times.is_empty() {
            s.times.push(0.0);
        }
        if s.clips.is_empty() {
            return Err(GpuError::InvalidArgument("GPU clip store: no clips".into()));
        }
        Ok(s)
    }

    /// A compressed clip's quantized tracks (its constants and step tracks
    /// are the clip's ordinary layout, laid out above), for
    /// `sample_packed.glsl`: per track a `K_PACKED` descriptor (the
    /// header's index, the track, its range's first datum) and its range
    /// in `data` (minimum, extent); in `descs` from the header: (spans,
    /// tracks, first segment track, 0), per span (start bits, samples a
    /// second bits, samples, first segment), per segment and track (bit
    /// rate in 5 bits and a rotation's left-out component in 2, then the
    /// three segment minima a byte each; the three extents;
    /// the absolute bit position of its first kept sample, its stride's
    /// shift), then the bit stream as words, four a
    /// descriptor. Bit positions count from word 0 of `descs`, so the
    /// whole store must stay under 2^32 bits of descriptors.
    fn lay_packed(&mut self, base: usize, p: &crate::anim::CompressedClip) -> GpuResult<()> {
        if p.tracks.is_empty() {
            return Ok(());
        }
        let nt = p.tracks.len();
        let header = self.descs.len();
        let st_first = header + 1 + p.spans.len();
        let stream = st_first + p.segment_tracks.len();
        let words = p.data.len().div_ceil(4);
        let end = stream + words.div_ceil(4) + 1;
        // Bit positions are u32s counted from the start of `descs`.
        let limit = (u32::MAX as usize) / 128;
        if end > limit {
            return Err(GpuError::Limit {
                what: "GPU clip store descriptors with compressed bit streams",
                needed: end as u64,
                limit: limit as u64,
            });
        }
        self.descs
            .push([p.spans.len() as u32, nt as u32, st_first as u32, 0]);
        for sp in &p.spans {
            self.descs.push([
                sp.start.to_bits(),
                sp.inv_step.to_bits(),
                sp.samples,
                sp.first_segment,
            ]);
        }
        let stream_bits = stream * 128;
        let intervals = p
            .spans
            .iter()
            .flat_map(|sp| (0..sp.segment_count()).map(|q| sp.segment_intervals(q)));
        for ((si, seg), n) in p.segments.iter().enumerate().zip(intervals) {
            let mut at = stream_bits + seg.data_at as usize * 8;
            for st in &p.segment_tracks[si * nt..(si + 1) * nt] {
                self.descs.push([
                    u32::from(st.bits)
                        | u32::from(st.largest) << 5
                        | u32::from(st.min[0]) << 8
                        | u32::from(st.min[1]) << 16
                        | u32::from(st.min[2]) << 24,
                    u32::from(st.extent[0])
                        | u32::from(st.extent[1]) << 8
                        | u32::from(st.extent[2]) << 16,
                    at as u32,
                    u32::from(st.shift),
                ]);
                // Its kept samples (`format::samples_kept`).
                at += 3 * st.bits as usize * ((n >> st.shift) + 1);
            }
        }
        let mut bytes = p.data.clone();
        // Whole descriptors, and a zero word past the stream's padding
        // for the two-word reads.
        bytes.resize((words.div_ceil(4) + 1) * 16, 0);
        for c in bytes.chunks_exact(16) {
            self.descs.push(std::array::from_fn(|k| {
                u32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])
            }));
        }
        debug_assert_eq!(self.descs.len(), end);
        for (i, (t, r)) in p.tracks.iter().zip(&p.ranges).enumerate() {
            let at = index(self.data.len(), "GPU clip store data")?;
            self.data.push([r[0], r[1], r[2], 0.0]);
            self.data.push([r[3], r[4], r[5], 0.0]);
            self.descs[base + 3 * t.joint as usize + t.channel as usize] =
                [K_PACKED, header as u32, i as u32, at];
        }
        Ok(())
    }

    /// Bytes the store's buffers hold on the GPU.
    pub fn bytes(&self) -> usize {
        self.clips.len() * 16 + self.descs.len() * 16 + self.times.len() * 4 + self.data.len() * 16
    }
}

/// The bytes a [`GpuClipStore`](super::GpuClipStore) of `clips` (each
/// driving `joints` joints) would hold on the GPU, without a device: to
/// compare compressed and flat clips.
pub fn store_bytes(joints: usize, clips: &[Clip]) -> GpuResult<usize> {
    Ok(StoreLayout::build(joints, clips)?.bytes())
}

/// A mesh's palette program for `animate.comp`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProgramLayout {
    /// Header (levels, entry levels, the offsets of the arrays), then the
    /// arrays: parents, level starts, level order, entry joint, entry
    /// output vec4, entry parent, entry level starts, entry level order.
    pub words: Vec<u32>,
    /// Three rows per entry.
    pub inv_bind: Vec<[f32; 4]>,
    pub entries: usize,
    pub levels: usize,
}

const HEADER: usize = 10;

/// Groups `count` items by `level` into (starts, order).
fn by_level(level: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let levels = level.iter().max().map_or(0, |&l| l as usize + 1);
    let mut starts = vec![0u32; levels + 1];
    for &l in level {
        starts[l as usize + 1] += 1;
    }
    for l in 0..levels {
        starts[l + 1] += starts[l];
    }
    let mut fill = starts.clone();
    let mut order = vec![0u32; level.len()];
    for (i, &l) in level.iter().enumerate() {
        order[fill[l as usize] as usize] = i as u32;
        fill[l as usize] += 1;
    }
    (starts, order)
}

fn rows(m: &Affine3A) -> [[f32; 4]; 3] {
    crate::anim::Affine4x3::from_affine(m).rows
}

impl ProgramLayout {
    /// The program of a mesh whose `parts` index `skin` (bound to
    /// `skeleton`), `per_bone` vec4s a palette entry.
    pub fn build(
        skeleton: &Skeleton,
        skin: &Skin,
        parts: &[MeshPart],
        per_bone: usize,
    ) -> GpuResult<Self> {
        let bad = |f: String| GpuError::InvalidArgument(format!("GPU animation: {f}"));
        skin.validate(skeleton).map_err(|e| bad(e.to_string()))?;
        let n = skeleton.len();
        // Depth of every joint (parents come first in the flat arrays).
        let mut depth = vec![0u32; n];
        let parents: Vec<u32> = (0..n)
            .map(|j| match skeleton.parent(j) {
                Some(p) if p < j => {
                    depth[j] = depth[p] + 1;
                    Ok(p as u32)
                }
                Some(p) => Err(bad(format!("joint {j} has parent {p}, which comes later"))),
                None => Ok(NONE),
            })
            .collect::<GpuResult<_>>()?;
        let (level_start, level_order) = by_level(&depth);
        let mut entry_joint = Vec::new();
        let mut entry_out = Vec::new();
        let mut entry_parent = Vec::new();
        let mut entry_depth = Vec::new();
        let mut inv_bind = Vec::new();
        for part in parts {
            let base = entry_joint.len();
            let h = &part.hierarchy;
            if h.parent.len() != part.bones.len() || h.order.len() != part.bones.len() {
                return Err(bad(
                    "a part's palette hierarchy does not match its bones".into()
                ));
            }
            let mut d = vec![u32::MAX; part.bones.len()];
            for &k in &h.order {
                let k = k as usize;
                let p = h.parent[k];
                d[k] = if p == NO_PARENT {
                    0
                } else {
                    match d.get(p as usize) {
                        Some(&pd) if pd != u32::MAX => pd + 1,
                        _ => {
                            return Err(bad(format!(
                                "palette entry {k} follows entry {p}, which comes later"
                            )))
                        }
                    }
                };
            }
            for (k, &b) in part.bones.iter().enumerate() {
                let b = b as usize;
                let joint = *skin
                    .joints
                    .get(b)
                    .ok_or_else(|| bad(format!("a part names skin entry {b} of {}", skin.len())))?;
                entry_joint.push(u32::from(joint));
                entry_out.push(index(part.palette_offset + k * per_bone, "palette vec4s")?);
                let p = h.parent[k];
                entry_parent.push(if p == NO_PARENT {
                    NONE
                } else {
                    (base + p as usize) as u32
                });
                entry_depth.push(d[k]);
                inv_bind.extend(rows(&skin.inverse_bind[b]));
            }
        }
        let entries = entry_joint.len();
        if entries == 0 {
            return Err(bad("the mesh has no palette entries".into()));
        }
        let (entry_start, entry_order) = by_level(&entry_depth);
        let mut words = vec![0u32; HEADER];
        words[0] = (level_start.len() - 1) as u32;
        words[1] = (entry_start.len() - 1) as u32;
        let arrays: [&[u32]; 8] = [
            &parents,
            &level_start,
            &level_order,
            &entry_joint,
            &entry_out,
            &entry_parent,
            &entry_start,
            &entry_order,
        ];
        for (i, a) in arrays.iter().enumerate() {
            words[2 + i] = index(words.len(), "GPU animation program words")?;
            words.extend_from_slice(a);
        }
        Ok(Self {
            words,
            inv_bind,
            entries,
            levels: level_start.len() - 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::PaletteHierarchy;
    use crate::assets::builtin::Character;

    #[test]
    fn levels_group_joints_by_depth_parents_first() {
        let model = Character::model();
        let s = &model.skeleton;
        let skin = &model.skins[0];
        let h = PaletteHierarchy::new(skin, s).unwrap();
        let part = MeshPart {
            bones: (0..skin.len() as u16).collect(),
            hierarchy: h,
            first_index: 0,
            index_count: 0,
            vertex_offset: 0,
            palette_offset: 0,
            previous_offset: 0,
        };
        let p = ProgramLayout::build(s, skin, &[part], 3).unwrap();
        let w = &p.words;
        let (levels, parents, starts, order) =
            (w[0] as usize, w[2] as usize, w[3] as usize, w[4] as usize);
        let mut level_of = vec![usize::MAX; s.len()];
        for l in 0..levels {
            for k in w[starts + l]..w[starts + l + 1] {
                level_of[w[order + k as usize] as usize] = l;
            }
        }
        for j in 0..s.len() {
            match s.parent(j) {
                None => assert_eq!(level_of[j], 0),
                Some(pj) => {
                    assert_eq!(w[parents + j] as usize, pj);
                    assert_eq!(level_of[j], level_of[pj] + 1);
                }
            }
        }
        let store = StoreLayout::build(s.len(), &model.clips).unwrap();
        assert_eq!(store.descs.len(), 3 * s.len() * model.clips.len());
    }
}
