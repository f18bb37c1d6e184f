//! Batches: a frame's instances of one prepared mesh, and the writers that
//! fill their palettes, instance records and (CPU stage) skinned vertices
//! straight into the frame's mapped memory.

use glam::{Affine3A, Vec3, Vec4};

use super::super::encoding::CpuSkinning;
use super::super::instance::InstanceRecord;
use super::super::mesh::PreparedMesh;
use super::super::morph::MorphEntry;
use super::super::registry::Stage;
use crate::anim::{Crowd, PaletteReport, Parallelism, Strided};
use crate::gpu::{GpuError, GpuResult};

/// A batch of instances of one prepared mesh in one frame: where their
/// palettes, records and outputs are. Valid for the frame it was made in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub(super) slot: usize,
    pub(super) generation: u64,
    pub(super) palette_base: usize,
    pub(super) stride: usize,
    pub(super) first_record: u32,
    pub(super) count: u32,
    pub(super) out_base: u32,
    pub(super) vertex_count: u32,
    pub(super) stage: Stage,
}

impl Batch {
    /// Instances in the batch.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the batch has no instances (never, for a batch
    /// [`super::SkinPath::batch`] made).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The header a [`CaptureBuffer`](crate::skin::CaptureBuffer) needs to
    /// capture this batch: `(vertex_count, first)`.
    /// `first` is the batch's first instance record on every stage (the
    /// plain pipeline of the compute and CPU stages draws each instance
    /// from vertex 0 of its output region).
    pub fn capture_target(&self) -> (u32, u32) {
        (self.vertex_count, self.first_record)
    }
}

/// Fills one batch: one [`InstanceWriter`] per instance, which may be
/// handed to other threads.
pub struct BatchWriter<'a> {
    pub(super) batch: Batch,
    pub(super) prepared: &'a PreparedMesh,
    pub(super) palettes: &'a mut [[f32; 4]],
    pub(super) records: &'a mut [InstanceRecord],
    pub(super) positions: &'a mut [Vec3],
    pub(super) normals: &'a mut [Vec3],
    /// CPU stage, meshes with tangents: the skinned tangents (else empty).
    pub(super) tangents: &'a mut [Vec4],
    /// CPU stage with motion: the previous positions and normals.
    pub(super) prev_positions: &'a mut [Vec3],
    pub(super) prev_normals: &'a mut [Vec3],
    /// The path draws motion vectors ([`super::SkinPathConfig::motion`]).
    pub(super) motion: bool,
    /// The batch's morph headers, one per instance (GPU stages, meshes
    /// with targets; else empty).
    pub(super) morph_headers: &'a mut [MorphEntry],
    /// The batch's morph entries: `targets` per instance.
    pub(super) morph_entries: &'a mut [MorphEntry],
    /// The index of `morph_entries[0]` in the frame's entry buffer.
    pub(super) entries_base: u32,
    /// Morph entries each instance reserves per pose (the mesh's targets,
    /// or fewer: [`super::SkinPath::batch_active`]).
    pub(super) morph_slots: usize,
}

impl<'a> BatchWriter<'a> {
    /// The batch being filled, for recording its draw.
    pub fn batch(&self) -> Batch {
        self.batch
    }

    /// The morph entries (target, weight) the batch reserved in its
    /// frame, all instances and poses together (0 without targets and on
    /// the CPU stage).
    pub fn morph_entries_reserved(&self) -> usize {
        self.morph_entries.len()
    }

    /// Instances in the batch.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether the batch has no instances.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Each instance's writer, in order (`par_bridge` spreads them).
    pub fn instances(&mut self) -> impl Iterator<Item = InstanceWriter<'_>> + Send + '_ {
        let stride = self.batch.stride;
        let vc = self.batch.vertex_count as usize;
        let prepared = self.prepared;
        let mut pal = &mut *self.palettes;
        let mut rec = &mut *self.records;
        let mut pos = &mut *self.positions;
        let mut nrm = &mut *self.normals;
        let mut tan = &mut *self.tangents;
        let mut ppos = &mut *self.prev_positions;
        let mut pnrm = &mut *self.prev_normals;
        let motion = self.motion;
        let mut heads = &mut *self.morph_headers;
        let mut ents = &mut *self.morph_entries;
        let targets = if heads.is_empty() {
            0
        } else {
            self.morph_slots
        };
        let reserved = if motion { 2 * targets } else { targets };
        let mut first_entry = self.entries_base;
        (0..self.batch.count).map(move |_| {
            let take = stride.min(pal.len());
            let (p, rest) = std::mem::take(&mut pal).split_at_mut(take);
            pal = rest;
            let (r, rest) = std::mem::take(&mut rec).split_at_mut(1);
            rec = rest;
            let cpu = if pos.is_empty() { 0 } else { vc };
            let (op, rest) = std::mem::take(&mut pos).split_at_mut(cpu);
            pos = rest;
            let (on, rest) = std::mem::take(&mut nrm).split_at_mut(cpu);
            nrm = rest;
            let tan_cpu = if tan.is_empty() { 0 } else { vc };
            let (ot, rest) = std::mem::take(&mut tan).split_at_mut(tan_cpu);
            tan = rest;
            let prev_cpu = if ppos.is_empty() { 0 } else { vc };
            let (pp, rest) = std::mem::take(&mut ppos).split_at_mut(prev_cpu);
            ppos = rest;
            let (pn, rest) = std::mem::take(&mut pnrm).split_at_mut(prev_cpu);
            pnrm = rest;
            let morph = if targets > 0 {
                let (h, rest) = std::mem::take(&mut heads).split_at_mut(1);
                heads = rest;
                let (e, rest) = std::mem::take(&mut ents).split_at_mut(reserved);
                ents = rest;
                let m = Some(MorphOut {
                    header: &mut h[0],
                    entries: e,
                    first_entry,
                });
                first_entry += reserved as u32;
                m
            } else {
                None
            };
            InstanceWriter {
                prepared,
                palette: p,
                record: &mut r[0],
                positions: op,
                normals: on,
                tangents: ot,
                prev_positions: pp,
                prev_normals: pn,
                motion,
                morph,
            }
        })
    }

    /// Writes every instance on this thread: `instance(i)` gives instance
    /// `i`'s skinning matrices, model-to-world matrix and tint. The reports
    /// are merged.
    pub fn write_all<'s>(
        &mut self,
        mut instance: impl FnMut(usize) -> (&'s [Affine3A], Affine3A, [f32; 4]),
    ) -> GpuResult<PaletteReport> {
        let mut report = PaletteReport::default();
        for (i, w) in self.instances().enumerate() {
            let (skin, model, tint) = instance(i);
            report.merge(&w.write(skin, &model, tint)?);
        }
        report.lossy.sort_unstable();
        report.lossy.dedup();
        Ok(report)
    }

    /// [`BatchWriter::write_all`] with morph weights: `instance(i)` gives
    /// instance `i`'s skinning matrices, its weights of the mesh's morph
    /// targets (see [`InstanceWriter::write_morphed`]), its model-to-world
    /// matrix and tint.
    pub fn write_all_morphed<'s>(
        &mut self,
        mut instance: impl FnMut(usize) -> (&'s [Affine3A], &'s [f32], Affine3A, [f32; 4]),
    ) -> GpuResult<PaletteReport> {
        let mut report = PaletteReport::default();
        for (i, w) in self.instances().enumerate() {
            let (skin, weights, model, tint) = instance(i);
            report.merge(&w.write_morphed(skin, weights, &model, tint)?);
        }
        report.lossy.sort_unstable();
        report.lossy.dedup();
        Ok(report)
    }
}

impl BatchWriter<'_> {
    /// Animates every instance of `crowd` at frame time `time` (its
    /// [`Parallelism`]) straight into this batch: each instance's palette is
    /// encoded into the frame's mapped storage (on the CPU stage, its mesh is
    /// skinned into the frame's vertex buffer), and its record gets the
    /// model-to-world matrix and tint `place(i)`. One pass over the bytes,
    /// nothing allocated once warm. `crowd` must hold as many instances as
    /// the batch, animating the skin the mesh was prepared for. The reports
    /// are merged. A mesh with morph targets is drawn at all-zero weights;
    /// [`BatchWriter::animate_morphed`] gives each instance its weights.
    pub fn animate(
        &mut self,
        crowd: &mut Crowd,
        time: f32,
        threads: Parallelism,
        place: impl Fn(usize) -> (Affine3A, [f32; 4]) + Sync,
    ) -> GpuResult<PaletteReport> {
        self.animate_inner(crowd, time, threads, None, place)
    }

    /// [`BatchWriter::animate`] with every instance's morph weights:
    /// instance `i` draws the mesh with
    /// `weights[i * stride..][..targets]`, `targets` its
    /// [`PreparedMesh::morph_targets`] (see
    /// [`InstanceWriter::write_morphed`]). With `out` filled by
    /// [`Crowd::animate_weights`] for the same `time` (`stride` its
    /// `defaults.len()`), pass `&out[mesh.morph.first_weight..]`: the
    /// crowd's morphing characters morph on every path. Errors if `weights`
    /// is too short, `stride` is less than `targets`, or a weight is not
    /// finite.
    pub fn animate_morphed(
        &mut self,
        crowd: &mut Crowd,
        time: f32,
        threads: Parallelism,
        weights: &[f32],
        stride: usize,
        place: impl Fn(usize) -> (Affine3A, [f32; 4]) + Sync,
    ) -> GpuResult<PaletteReport> {
        let m = self.prepared;
        let (n, targets) = (self.batch.len(), m.morph_targets);
        let need = n
            .saturating_sub(1)
            .saturating_mul(stride)
            .saturating_add(targets);
        if stride < targets || (n > 0 && weights.len() < need) {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} on path {}: {} crowd morph weights at a stride of {stride} \
                 for {n} instances of {targets} targets",
                m.name,
                m.path.name,
                weights.len()
            )));
        }
        self.animate_inner(crowd, time, threads, Some((weights, stride)), place)
    }

    fn animate_inner(
        &mut self,
        crowd: &mut Crowd,
        time: f32,
        threads: Parallelism,
        morph: Option<(&[f32], usize)>,
        place: impl Fn(usize) -> (Affine3A, [f32; 4]) + Sync,
    ) -> GpuResult<PaletteReport> {
        let m = self.prepared;
        if self.motion && !self.prev_positions.is_empty() {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} on path {}: animate writes no previous CPU-skinned vertices \
                 (motion vectors on the CPU stage); use InstanceWriter::write_motion",
                m.name, m.path.name
            )));
        }
        if crowd.len() != self.batch.len() {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} on path {}: a crowd of {} instances for a batch of {}",
                m.name,
                m.path.name,
                crowd.len(),
                self.batch.len()
            )));
        }
        // Without weights, the instances draw the mesh with every weight
        // zero (what `InstanceWriter::write` writes). A motion path keeps
        // room for the previous frame's entries after each instance's own.
        let reserved = if self.motion { 2 } else { 1 } * self.morph_slots;
        if morph.is_none() {
            for (i, h) in self.morph_headers.iter_mut().enumerate() {
                *h = [self.entries_base + (i * reserved) as u32, 0];
            }
        }
        let (heads, ents) = if morph.is_some() && !self.morph_headers.is_empty() {
            (1, reserved)
        } else {
            (0, 0)
        };
        let entries_base = self.entries_base;
        let stride = self.batch.stride;
        let self_motion = self.motion;
        let cpu = if self.positions.is_empty() {
            0
        } else {
            self.batch.vertex_count as usize
        };
        let cpu_tangents = if self.tangents.is_empty() { 0 } else { cpu };
        let out = (
            Strided::new(&mut *self.palettes, stride),
            Strided::new(&mut *self.records, 1),
            Strided::new(&mut *self.positions, cpu),
            (
                Strided::new(&mut *self.normals, cpu),
                Strided::new(&mut *self.tangents, cpu_tangents),
                Strided::new(&mut *self.morph_headers, heads),
                Strided::new(&mut *self.morph_entries, ents),
            ),
        );
        // Lossy bones are rare (a lock then); the largest deviation is
        // common, kept as the bits of a non-negative f32, which order as u32.
        let lossy = std::sync::Mutex::new(Vec::new());
        let deviation = std::sync::atomic::AtomicU32::new(0);
        let poisoned = || GpuError::InvalidArgument("a crowd thread panicked".into());
        crowd
            .animate_split(
                time,
                threads,
                out,
                |i, skin, (pal, rec, pos, (nrm, tan, h, e))| {
                    let beyond =
                        || GpuError::InvalidArgument(format!("instance {i} beyond the batch"));
                    let record = rec.into_slice().first_mut().ok_or_else(beyond)?;
                    let (model, tint) = place(i);
                    let morph_out = h.into_slice().first_mut().map(|header| MorphOut {
                        header,
                        entries: e.into_slice(),
                        first_entry: entries_base + (i * reserved) as u32,
                    });
                    let writer = InstanceWriter {
                        prepared: m,
                        palette: pal.into_slice(),
                        record,
                        positions: pos.into_slice(),
                        normals: nrm.into_slice(),
                        tangents: tan.into_slice(),
                        prev_positions: &mut [],
                        prev_normals: &mut [],
                        motion: self_motion,
                        morph: morph_out,
                    };
                    let report = match morph {
                        Some((w, stride)) => {
                            let w = w
                                .get(i * stride..i * stride + m.morph_targets)
                                .ok_or_else(beyond)?;
                            writer.write_morphed(skin, w, &model, tint)?
                        }
                        None => writer.write(skin, &model, tint)?,
                    };
                    if report.max_deviation > 0.0 {
                        deviation.fetch_max(
                            report.max_deviation.to_bits(),
                            std::sync::atomic::Ordering::Relaxed,
                        );
                    }
                    if !report.lossy.is_empty() {
                        lossy
                            .lock()
                            .map_err(|_| poisoned())?
                            .extend_from_slice(&report.lossy);
                    }
                    Ok::<(), CrowdFault>(())
                },
            )
            .map_err(|e| match e {
                CrowdFault::Anim(e) => GpuError::InvalidArgument(format!(
                    "mesh {:?} on path {}: {e}",
                    m.name, m.path.name
                )),
                CrowdFault::Gpu(e) => e,
            })?;
        let mut report = PaletteReport {
            lossy: lossy.into_inner().map_err(|_| poisoned())?,
            max_deviation: f32::from_bits(deviation.into_inner()),
        };
        report.lossy.sort_unstable();
        report.lossy.dedup();
        Ok(report)
    }
}

/// What stops a crowd frame written into a batch.
enum CrowdFault {
    Anim(crate::anim::AnimError),
    Gpu(GpuError),
}

impl From<crate::anim::AnimError> for CrowdFault {
    fn from(e: crate::anim::AnimError) -> Self {
        Self::Anim(e)
    }
}

impl From<GpuError> for CrowdFault {
    fn from(e: GpuError) -> Self {
        Self::Gpu(e)
    }
}

/// One instance's slice of a batch.
pub struct InstanceWriter<'a> {
    prepared: &'a PreparedMesh,
    palette: &'a mut [[f32; 4]],
    record: &'a mut InstanceRecord,
    positions: &'a mut [Vec3],
    normals: &'a mut [Vec3],
    /// CPU stage, meshes with tangents: its skinned tangents (else empty).
    tangents: &'a mut [Vec4],
    /// CPU stage with motion: its previous positions and normals.
    prev_positions: &'a mut [Vec3],
    prev_normals: &'a mut [Vec3],
    /// The path draws motion vectors: the palette block holds the current
    /// palette, then the previous one.
    motion: bool,
    /// Its morph header and entries (GPU stages, meshes with targets;
    /// `None` where the header was written beforehand).
    morph: Option<MorphOut<'a>>,
}

/// One instance's morph header and its reserved entries.
struct MorphOut<'a> {
    header: &'a mut MorphEntry,
    entries: &'a mut [MorphEntry],
    /// The index of `entries[0]` in the frame's entry buffer.
    first_entry: u32,
}

impl InstanceWriter<'_> {
    /// Encodes the palette of skinning matrices `skin` (one per skin entry,
    /// `model[joint] * inverse_bind`) straight into the frame's storage (or,
    /// in the CPU stage, skins the mesh into the frame's vertex buffer) and
    /// writes the instance record. Bones the encoding could not keep are in
    /// the report, numbered as skin entries. A mesh with morph targets is
    /// drawn with every weight zero (its base shape, normals renormalised);
    /// [`InstanceWriter::write_morphed`] sets them.
    pub fn write(
        self,
        skin: &[Affine3A],
        model: &Affine3A,
        tint: [f32; 4],
    ) -> GpuResult<PaletteReport> {
        self.write_inner(skin, None, None, model, tint)
    }

    /// [`InstanceWriter::write`] with this instance's weights of the mesh's
    /// morph targets (`weights.len()` equals
    /// [`PreparedMesh::morph_targets`]; a mesh's slice of a model's weight
    /// vector is [`crate::mesh::MorphTargets::weights`]): the bind-pose
    /// vertices become `base + sum(w_i * delta_i)`, normals renormalised
    /// ([`crate::mesh::MorphJob`]'s rule), then are skinned. Weights are not
    /// clamped; only non-zero ones cost anything on the GPU. Errors on a
    /// wrong length or a non-finite weight.
    pub fn write_morphed(
        self,
        skin: &[Affine3A],
        weights: &[f32],
        model: &Affine3A,
        tint: [f32; 4],
    ) -> GpuResult<PaletteReport> {
        check_weights(self.prepared, weights)?;
        self.write_inner(skin, Some(weights), None, model, tint)
    }

    /// [`InstanceWriter::write_morphed`] with the previous frame's pose as
    /// well, on a path with [`super::SkinPathConfig::motion`]: `skin` and
    /// `weights` (empty for a mesh without targets) pose the instance now,
    /// `previous` (its skinning matrices and weights last frame, kept by
    /// the caller; no second animation pass) poses its previous position
    /// output. `None` flags a teleport (a time jump, a clip change without
    /// crossfade): the previous output equals the current one, zero
    /// velocity. Errors on a path without motion, on wrong lengths or
    /// non-finite weights.
    pub fn write_motion(
        self,
        skin: &[Affine3A],
        weights: &[f32],
        previous: Option<(&[Affine3A], &[f32])>,
        model: &Affine3A,
        tint: [f32; 4],
    ) -> GpuResult<PaletteReport> {
        let m = self.prepared;
        if !self.motion {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} on path {}: write_motion on a path built without \
                 SkinPathConfig::motion",
                m.name, m.path.name
            )));
        }
        for w in std::iter::once(weights).chain(previous.map(|p| p.1)) {
            check_weights(m, w)?;
        }
        let weights = (m.morph_targets > 0).then_some(weights);
        let previous = previous.map(|(s, w)| (s, (m.morph_targets > 0).then_some(w)));
        self.write_inner(skin, weights, previous, model, tint)
    }

    fn write_inner(
        self,
        skin: &[Affine3A],
        weights: Option<&[f32]>,
        previous: Option<(&[Affine3A], Option<&[f32]>)>,
        model: &Affine3A,
        tint: [f32; 4],
    ) -> GpuResult<PaletteReport> {
        let m = self.prepared;
        for palette in std::iter::once(skin).chain(previous.map(|p| p.0)) {
            if palette.len() != m.palette_len {
                return Err(GpuError::InvalidArgument(format!(
                    "mesh {:?} on path {}: a palette of {} matrices, the mesh's skin has {}",
                    m.name,
                    m.path.name,
                    palette.len(),
                    m.palette_len
                )));
            }
        }
        *self.record = InstanceRecord::new(model, tint);
        // Without a previous pose (a teleport, or a writer that keeps
        // none) the previous output is the current one: zero motion.
        let (prev_skin, prev_weights) = previous.unwrap_or((skin, weights));
        if let Some(out) = self.morph {
            // The instance's reserved entries, per pose (the current then,
            // with motion, the previous).
            let slots = out.entries.len() / if self.motion { 2 } else { 1 };
            let prev_checked = if self.motion { prev_weights } else { None };
            for w in [weights, prev_checked].into_iter().flatten() {
                let active = crate::mesh::active_targets(w).count();
                if active > slots {
                    return Err(GpuError::Limit {
                        what: "non-zero morph weights of an instance (the entries SkinPath::batch_active reserved)",
                        needed: active as u64,
                        limit: slots as u64,
                    });
                }
            }
            let (now, before) = out.entries.split_at_mut(slots);
            let count = match weights {
                Some(w) => super::super::morph::compact(w, now),
                None => 0,
            };
            // With motion the previous entries follow the current ones and
            // the header's count packs both (morph.glsl, MOTION).
            let prev_count = match (self.motion, prev_weights) {
                (true, Some(w)) => super::super::morph::compact(w, before),
                _ => 0,
            };
            *out.header = [out.first_entry, count | (prev_count << 16)];
        }
        let mut report = pose(
            m,
            skin,
            weights,
            (&mut *self.palette, false),
            self.positions,
            self.normals,
        )?;
        if let Some(cpu) = m.cpu.as_ref().filter(|_| !self.tangents.is_empty()) {
            cpu_tangents(m, cpu, skin, weights, self.tangents)?;
        }
        if self.motion {
            let prev = pose(
                m,
                prev_skin,
                prev_weights,
                (&mut *self.palette, true),
                self.prev_positions,
                self.prev_normals,
            )?;
            report.merge(&prev);
            report.lossy.sort_unstable();
            report.lossy.dedup();
        }
        Ok(report)
    }
}

thread_local! {
    /// The CPU stage's morphed bind vertices, reused per thread.
    static MORPHED: std::cell::RefCell<crate::anim::BindVertices> =
        std::cell::RefCell::new(crate::anim::BindVertices::default());
}

/// Poses `m` with `skin` and morph `weights` (`None`: all zero): encodes
/// the palette into the instance's block `palette.0` (GPU stages; with
/// `palette.1` into each part's previous palette, `MeshPart::
/// previous_offset` on) or skins the mesh into `positions` and `normals`
/// (CPU stage).
fn pose(
    m: &PreparedMesh,
    skin: &[Affine3A],
    weights: Option<&[f32]>,
    (palette, previous): (&mut [[f32; 4]], bool),
    positions: &mut [Vec3],
    normals: &mut [Vec3],
) -> GpuResult<PaletteReport> {
    let anim = |e: crate::anim::AnimError| {
        GpuError::InvalidArgument(format!("mesh {:?} on path {}: {e}", m.name, m.path.name))
    };
    let mut report = PaletteReport::default();
    match &m.cpu {
        Some(cpu) => {
            // Morphed bind vertices, only where some weight is active (all
            // zero draws the bind streams, as the GPU stages' empty list),
            // into this thread's scratch (no allocation once warm).
            let active = weights.filter(|w| w.iter().any(|&x| x != 0.0));
            let mut skin_with = |vertices: &crate::anim::BindVertices| {
                m.path.encoding.skin_cpu(
                    skin,
                    &m.hierarchy,
                    CpuSkinning {
                        per_vertex: cpu.per_vertex,
                        joints: &cpu.joints,
                        weights: &cpu.weights,
                        vertices,
                        out_positions: positions,
                        out_normals: normals,
                    },
                )
            };
            report = match active {
                Some(w) if !cpu.morph.is_empty() => MORPHED.with(|scratch| {
                    let mut scratch = scratch.borrow_mut();
                    crate::anim::MorphBlocksJob {
                        deltas: &cpu.morph,
                        weights: w,
                        base: &cpu.vertices,
                        out: &mut scratch,
                    }
                    .run()?;
                    skin_with(&scratch)
                }),
                _ => skin_with(&cpu.vertices),
            }
            .map_err(anim)?;
        }
        None => {
            for part in &m.parts {
                let at = part.palette_offset + if previous { part.previous_offset } else { 0 };
                let out = palette.get_mut(at..).ok_or_else(|| {
                    anim(crate::anim::AnimError::InvalidJob("palette block".into()))
                })?;
                m.path
                    .encoding
                    .encode(skin, &part.bones, &part.hierarchy, out, &mut report)
                    .map_err(anim)?;
            }
            if m.parts.len() > 1 && !report.lossy.is_empty() {
                report.lossy.sort_unstable();
                report.lossy.dedup();
            }
        }
    }
    Ok(report)
}

thread_local! {
    /// The CPU stage's morphed bind tangents, reused per thread.
    static MORPHED_TANGENTS: std::cell::RefCell<Vec<Vec4>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The CPU stage's tangents of `m` posed by `skin` and morph `weights`
/// (`None`: all zero) into `out`: `mesh::MorphJob`'s tangent rule (the
/// active targets' deltas added to `xyz` in target order, renormalised,
/// `w` kept), then the encoding's tangent job.
fn cpu_tangents(
    m: &PreparedMesh,
    cpu: &super::super::mesh::CpuStreams,
    skin: &[Affine3A],
    weights: Option<&[f32]>,
    out: &mut [Vec4],
) -> GpuResult<()> {
    let anim = |e: crate::anim::AnimError| {
        GpuError::InvalidArgument(format!("mesh {:?} on path {}: {e}", m.name, m.path.name))
    };
    let moving = weights.filter(|w| {
        crate::mesh::active_targets(w)
            .any(|(i, _)| cpu.tangent_deltas.get(i).is_some_and(|d| !d.is_empty()))
    });
    let run = |tangents: &[Vec4], out: &mut [Vec4]| {
        m.path
            .encoding
            .skin_tangents_cpu(
                skin,
                &m.hierarchy,
                super::super::encoding::CpuTangents {
                    per_vertex: cpu.per_vertex,
                    joints: &cpu.joints,
                    weights: &cpu.weights,
                    tangents,
                    out_tangents: out,
                },
            )
            .map_err(anim)
    };
    match moving {
        // The renormalisation before skinning changes nothing after it (a
        // linear map, then normalised): unmoved tangents go in as they are.
        None => run(&cpu.tangents, out),
        Some(w) => MORPHED_TANGENTS.with(|scratch| {
            let mut t = scratch.borrow_mut();
            t.clear();
            t.extend_from_slice(&cpu.tangents);
            for (i, wi) in crate::mesh::active_targets(w) {
                let Some(d) = cpu.tangent_deltas.get(i).filter(|d| !d.is_empty()) else {
                    continue;
                };
                for (t, d) in t.iter_mut().zip(d) {
                    *t += (*d * wi).extend(0.0);
                }
            }
            for t in t.iter_mut() {
                *t = t.truncate().normalize_or_zero().extend(t.w);
            }
            run(&t, out)
        }),
    }
}

/// Errors unless `weights` has one finite weight per morph target of `m`.
fn check_weights(m: &PreparedMesh, weights: &[f32]) -> GpuResult<()> {
    if weights.len() != m.morph_targets {
        return Err(GpuError::InvalidArgument(format!(
            "mesh {:?} on path {}: {} morph weights, the mesh has {} targets",
            m.name,
            m.path.name,
            weights.len(),
            m.morph_targets
        )));
    }
    if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
        return Err(GpuError::InvalidArgument(format!(
            "mesh {:?} on path {}: morph target {i} has weight {}",
            m.name, m.path.name, weights[i]
        )));
    }
    Ok(())
}
