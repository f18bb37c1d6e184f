//! Morph targets on the GPU stages (`shaders/skin/morph.glsl`): each
//! prepared mesh with targets uploads its deltas once, into an RGBA32F
//! texel buffer, one contiguous (position, normal) texel pair per target
//! and GPU vertex (a triple with the tangent delta where the mesh has
//! tangents and a target moves them); each frame slot holds, per instance record, a header
//! `(first entry, count)` and the entries `(target, weight)` of the
//! instance's non-zero weights, so a draw costs the active targets only.
//! The CPU stage morphs on the CPU ([`crate::mesh::MorphJob`]) instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::gpu::{
    vk, write_buffer, write_texel_buffer, BindingDesc, Buffer, BufferView, DescriptorPool,
    DescriptorSetLayout, Device, GpuError, GpuResult,
};
use crate::mesh::SkinnedMesh;

/// What preparing a mesh with morph targets needs on a GPU stage.
pub(crate) struct MorphSetup<'a> {
    /// The preparing `SkinPath`'s id: only it may draw the mesh.
    pub path_id: u64,
    /// The morph set layout (GPU stages; `None` on the CPU stage).
    pub layout: Option<&'a DescriptorSetLayout>,
    /// Frame slots (one set each).
    pub slots: usize,
    /// Most bytes of deltas (maxTexelBufferElements texels, or less).
    pub limit: u64,
    /// That limit in words.
    pub limit_text: String,
}

/// One active target of an instance: the target's index and its weight's
/// bits (`uvec2` in `morph.glsl`).
pub(crate) type MorphEntry = [u32; 2];

/// Bytes in front of the deltas: one texel, (targets, GPU vertices,
/// texels per delta) as floats.
const INFO_BYTES: u64 = 16;

/// Above the most GPU vertices (and targets) the info texel holds exactly
/// (a float's 24-bit mantissa).
const MAX_COUNT: usize = 1 << 24;

/// The morph set layout (set 3 of both stages): binding 0 the mesh's
/// deltas (a uniform texel buffer), 1 the frame's headers, 2 the frame's
/// entries.
pub(crate) fn set_layout(device: &Arc<Device>) -> GpuResult<DescriptorSetLayout> {
    let ssbo = vk::DescriptorType::STORAGE_BUFFER;
    let texel = vk::DescriptorType::UNIFORM_TEXEL_BUFFER;
    let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE;
    DescriptorSetLayout::new(
        device,
        &[
            BindingDesc::new(0, texel, stages),
            BindingDesc::new(1, ssbo, stages),
            BindingDesc::new(2, ssbo, stages),
        ],
    )
}

/// A new version number for a frame slot's header and entry buffers (unique
/// in the process, never 0), so that a mesh's set knows when it names
/// buffers that have been replaced.
pub(crate) fn next_version() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Bytes of the deltas buffer of `targets` targets over `gpu_vertices`
/// vertices (`per` vec4s each: position, normal and maybe tangent), `None`
/// on overflow.
pub(crate) fn delta_bytes(targets: usize, gpu_vertices: usize, per: usize) -> Option<u64> {
    (targets as u64)
        .checked_mul(gpu_vertices as u64)?
        .checked_mul(16 * per as u64)?
        .checked_add(INFO_BYTES)
}

/// Texels per target and vertex in `mesh`'s deltas: 3 (position, normal,
/// tangent) where the mesh has tangents and some target moves them, else 2.
pub(crate) fn texels_per_delta(mesh: &SkinnedMesh) -> usize {
    let moved = mesh.morph.targets.iter().any(|t| !t.tangents.is_empty());
    if !mesh.tangents.is_empty() && moved {
        3
    } else {
        2
    }
}

/// Checks that each of `mesh`'s targets has no deltas or one per vertex
/// (tangents included: the CPU stage's job checks them).
pub(crate) fn check_targets(mesh: &SkinnedMesh) -> Result<(), String> {
    let n = mesh.positions.len();
    for (i, target) in mesh.morph.targets.iter().enumerate() {
        for (what, len) in [
            ("position", target.positions.len()),
            ("normal", target.normals.len()),
            ("tangent", target.tangents.len()),
        ] {
            if len != 0 && len != n {
                return Err(format!(
                    "morph target {i} has {len} {what} deltas for {n} vertices"
                ));
            }
        }
    }
    Ok(())
}

/// What a prepared mesh with morph targets holds on the GPU stages.
pub(crate) struct MorphGpu {
    /// Targets (the length of the weights an instance takes).
    pub targets: usize,
    /// The `SkinPath` that prepared it (its sets name that path's slots).
    path_id: u64,
    _view: BufferView,
    _deltas: Buffer,
    _pool: DescriptorPool,
    /// One set per frame slot: the deltas and that slot's buffers.
    sets: Vec<vk::DescriptorSet>,
    /// The slot buffers' version each set names (0: none yet).
    written: Mutex<Vec<u64>>,
}

impl MorphGpu {
    /// Uploads the deltas of `mesh`'s targets for the GPU vertices whose
    /// mesh vertices are `source`, after checking their size against
    /// `setup.limit` bytes, and allocates one set of `layout` per frame
    /// slot. `fault` makes the error naming the mesh and path.
    pub(crate) fn new(
        device: &Arc<Device>,
        mesh: &SkinnedMesh,
        source: &[u32],
        layout: &DescriptorSetLayout,
        setup: &MorphSetup<'_>,
        fault: impl Fn(String) -> GpuError,
    ) -> GpuResult<Self> {
        let (slots, limit, limit_text) = (setup.slots, setup.limit, &setup.limit_text);
        let targets = &mesh.morph.targets;
        let t = targets.len();
        let verts = source.len();
        let per = texels_per_delta(mesh);
        let bytes = delta_bytes(t, verts, per);
        if verts >= MAX_COUNT || t >= MAX_COUNT {
            return Err(fault(format!(
                "{t} morph targets over {verts} GPU vertices: the deltas' texel buffer \
                 holds up to {} of each",
                MAX_COUNT - 1
            )));
        }
        if bytes.is_none_or(|b| b > limit) {
            return Err(fault(format!(
                "{t} morph targets over {verts} GPU vertices need {} bytes of deltas, \
                 more than {limit_text} ({limit} bytes)",
                bytes.map_or_else(|| "more than 2^64".into(), |b| b.to_string())
            )));
        }
        // Texel 0: the counts as floats (exact: both below 2^24) and the
        // texels per delta; then per target and GPU vertex a (position,
        // normal[, tangent]) run, zero where the target lacks the attribute.
        let mut data: Vec<[f32; 4]> = vec![[0.0; 4]; 1 + per * t * verts];
        data[0] = [t as f32, verts as f32, per as f32, 0.0];
        for (i, target) in targets.iter().enumerate() {
            let run = &mut data[1 + per * i * verts..1 + per * (i + 1) * verts];
            let attrs = [&target.positions, &target.normals, &target.tangents];
            for (k, attr) in attrs.into_iter().take(per).enumerate() {
                if attr.is_empty() {
                    continue;
                }
                for (v, &s) in source.iter().enumerate() {
                    run[per * v + k] = attr[s as usize].extend(0.0).to_array();
                }
            }
        }
        let deltas = Buffer::device_local_with_data(
            device,
            "mesh morph deltas",
            vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
            bytemuck::cast_slice(&data),
        )?;
        let view = BufferView::new(
            device,
            &deltas,
            vk::Format::R32G32B32A32_SFLOAT,
            0,
            deltas.size(),
        )?;
        let pool = DescriptorPool::new(device, &[layout], slots as u32)?;
        let sets = pool.allocate(layout, slots)?;
        for &set in &sets {
            let ty = vk::DescriptorType::UNIFORM_TEXEL_BUFFER;
            write_texel_buffer(device, set, 0, ty, &view);
        }
        Ok(Self {
            targets: t,
            path_id: setup.path_id,
            _view: view,
            _deltas: deltas,
            _pool: pool,
            sets,
            written: Mutex::new(vec![0; slots]),
        })
    }

    /// The id of the `SkinPath` that prepared the mesh.
    pub(crate) fn path_id(&self) -> u64 {
        self.path_id
    }

    /// Frame slot `slot`'s set, pointed at the slot's `headers` and
    /// `entries` first if it names older buffers (`version` is theirs);
    /// an error from another path than the one that prepared the mesh
    /// (`path_id`).
    /// Called while recording the slot's frame, after its batches (the
    /// buffers no longer change) and before any of its commands that bind
    /// the set: the set's last use was the slot's previous submission,
    /// which has finished (the contract of `SkinPath::begin_frame`).
    pub(crate) fn set_for(
        &self,
        device: &Device,
        path_id: u64,
        slot: usize,
        version: u64,
        headers: &Buffer,
        entries: &Buffer,
    ) -> GpuResult<vk::DescriptorSet> {
        if path_id != self.path_id {
            return Err(GpuError::InvalidArgument(
                "a mesh with morph targets is drawn only by the SkinPath that prepared it".into(),
            ));
        }
        let set = *self.sets.get(slot).ok_or_else(|| {
            GpuError::InvalidArgument(format!(
                "frame slot {slot}: the mesh was prepared for {} frames in flight",
                self.sets.len()
            ))
        })?;
        let mut written = self
            .written
            .lock()
            .map_err(|_| GpuError::InvalidArgument("morph set lock poisoned".into()))?;
        if written[slot] != version {
            let ty = vk::DescriptorType::STORAGE_BUFFER;
            write_buffer(device, set, 1, ty, headers);
            write_buffer(device, set, 2, ty, entries);
            written[slot] = version;
        }
        Ok(set)
    }
}

/// Writes the non-zero weights of `weights` into `entries` (target order)
/// and returns how many: what an instance's header counts.
pub(crate) fn compact(weights: &[f32], entries: &mut [MorphEntry]) -> u32 {
    let mut count = 0;
    for ((i, w), e) in crate::mesh::active_targets(weights).zip(entries.iter_mut()) {
        *e = [i as u32, w.to_bits()];
        count += 1;
    }
    count
}
