//! A skinning path at run time ([`SkinPath`]): its pipelines, per-frame
//! storage and recording, split by stage: `vertex` (the vertex shader
//! skins; the storage records each partition's draws), `compute` (a
//! dispatch skins into a vertex buffer first); on the CPU stage the batch
//! writer runs the CPU job into mapped memory. `output` holds the skinned
//! output of those two and its draw; `batch` holds the writers that fill a
//! frame's storage, `slots` grows a frame slot's buffers, `pipelines`
//! builds the permutations; `input` (the pipelines' vertex input) and
//! `layouts` (the compute stage's layouts) sit below this file.

mod batch;
mod compute;
mod config;
mod gpu_anim;
mod host;
mod input;
mod layouts;
mod output;
mod pipelines;
mod reserve;
mod slots;
mod vertex;

use std::cell::Cell;
use std::sync::Arc;

use glam::Vec3;

pub use batch::{Batch, BatchWriter, InstanceWriter};
pub use config::SkinPathConfig;
pub use host::{HostVertexRoute, SkinnedOutput, HOST_SKIN_HEADER, HOST_SKIN_INCLUDE};

use super::capture::CaptureBuffer;
use super::instance::DrawPush;
use super::material::{material_set_layout, GpuMaterial, MATERIAL_SET};
use super::mesh::{prepare, PreparedMesh};
use super::registry::{PathDesc, Stage};
use super::FrameSets;
use crate::anim::PaletteHierarchy;
use crate::gpu::{
    vk, BindingDesc, Buffer, BufferView, DescriptorPool, DescriptorSetLayout, Device, GpuError,
    GpuResult, Pipeline, PipelineLayout, TimestampQueries,
};
use crate::mesh::SkinnedMesh;

/// The fragment shader of skinned meshes.
pub const SKINNED_FRAGMENT: &str = "skin/skinned.frag";
/// The vertex shader of the compute and CPU stages' plain pipeline.
pub const PLAIN_VERTEX: &str = "skin/plain.vert";

#[derive(Clone, Copy, PartialEq, Eq)]
struct PipelineKey {
    influences: u32,
    polygon: vk::PolygonMode,
    /// The MORPH permutation (vertex stage, meshes with morph targets).
    morph: bool,
    /// The TANGENTS permutation (meshes with tangents, every stage).
    tangents: bool,
    /// Alpha blending on, depth writes off (blended materials).
    blend: bool,
}

/// One frame in flight's storage.
struct Slot {
    generation: u64,
    palette: Option<Buffer>,
    palette_view: Option<BufferView>,
    /// vec4s the palette buffer holds for batches (excluding the ubo window
    /// tail).
    palette_cap: usize,
    palette_used: usize,
    /// Push storage: the palettes, pushed at draw time.
    push: Vec<[f32; 4]>,
    palette_set: vk::DescriptorSet,
    records: Option<Buffer>,
    records_cap: usize,
    records_used: usize,
    out: Option<Buffer>,
    out_cap: usize,
    out_used: usize,
    /// Whether `out` holds the tangent region (after the others, 16 bytes
    /// a vertex; made when a mesh with tangents is first batched).
    out_tangents: bool,
    out_set: vk::DescriptorSet,
    /// Per instance record, its morph header `(first entry, count)` (GPU
    /// stages; written for instances of meshes with targets).
    morph_headers: Option<Buffer>,
    morph_headers_cap: usize,
    /// The active targets of the frame's instances (GPU stages).
    morph_entries: Option<Buffer>,
    morph_entries_cap: usize,
    morph_entries_used: usize,
    /// Changes whenever either morph buffer is replaced
    /// ([`super::morph::next_version`]).
    morph_version: u64,
    /// The storage's push-constant prefix for this slot's palette buffer.
    push_prefix: Vec<u8>,
    recorded: Cell<bool>,
    timer: Option<TimestampQueries>,
    timed: Cell<bool>,
    gpu_ms: Option<f64>,
}

/// One skinning path at run time: its pipelines, its per-frame palette,
/// instance and output storage, and the recording of its work.
///
/// Per frame: [`SkinPath::begin_frame`] (after the frame's fence), one
/// [`SkinPath::batch`] per mesh drawn (filled through its writer), then in
/// the command buffer [`SkinPath::prepass`] outside the rendering scope,
/// [`SkinPath::record_draw`] per batch inside it (any number of passes), and
/// [`SkinPath::finish`] after it.
pub struct SkinPath {
    device: Arc<Device>,
    desc: &'static PathDesc,
    cfg: SkinPathConfig,
    /// Bones one draw addresses (`None`: unlimited, CPU stage).
    capacity: Option<usize>,
    /// vec4s of the declared window (windowed storages), else of the whole
    /// storage range.
    window: usize,
    align: usize,
    _frame_layout: DescriptorSetLayout,
    palette_layout: Option<DescriptorSetLayout>,
    _empty_layout: DescriptorSetLayout,
    capture_layout: Option<DescriptorSetLayout>,
    morph_layout: DescriptorSetLayout,
    material_layout: DescriptorSetLayout,
    /// What a draw without a material uses: white, opaque.
    white: GpuMaterial,
    compute_layouts: Option<layouts::ComputeLayouts>,
    graphics_layout: Arc<PipelineLayout>,
    pipelines: Vec<(PipelineKey, Pipeline)>,
    /// Compute pipelines by (influences, morph, tangents).
    compute: Vec<((u32, bool, bool), Pipeline)>,
    _pool: Option<DescriptorPool>,
    slots: Vec<Slot>,
    /// Unique in the process: the meshes it prepared with morph targets
    /// hold sets naming its slots' buffers and are drawn by it alone.
    id: u64,
}

fn stage_flags() -> vk::ShaderStageFlags {
    vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE
}

impl SkinPath {
    /// Builds the path `desc` on `device`: its layouts, per-frame storage and
    /// the 4-influence pipelines. Errors when `cfg.frames_in_flight` is not
    /// 1..=8, capture is asked for without vertexPipelineStoresAndAtomics, not
    /// one bone fits the storage, the device lacks what the storage needs,
    /// or a pipeline cannot be built.
    pub fn new(
        device: &Arc<Device>,
        desc: &'static PathDesc,
        cfg: SkinPathConfig,
    ) -> GpuResult<Self> {
        if cfg.frames_in_flight == 0 || cfg.frames_in_flight > 8 {
            return Err(GpuError::InvalidArgument(format!(
                "{} frames in flight (1..=8)",
                cfg.frames_in_flight
            )));
        }
        if cfg.capture && !device.features().vertex_pipeline_stores_and_atomics {
            return Err(GpuError::InvalidArgument(
                "capture mode needs vertexPipelineStoresAndAtomics, which this device lacks".into(),
            ));
        }
        if cfg
            .output_usage
            .contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
            && !device.features().buffer_device_address
        {
            return Err(GpuError::InvalidArgument(
                "output_usage asks for SHADER_DEVICE_ADDRESS, but this device lacks bufferDeviceAddress"
                    .into(),
            ));
        }
        let limits = device.limits();
        let vpb = desc.encoding.vec4s_per_bone();
        let storage_window = desc.storage.map_or(0, |s| s.window_vec4s(limits) as usize);
        let windowed = desc.partitions();
        let align = match desc.storage {
            Some(s) if windowed => (s.offset_alignment(limits) / 16).max(1) as usize,
            _ => 1,
        };
        let mut capacity = desc.capacity_for(limits);
        if cfg.motion && windowed {
            // One window holds a partition's palette, aligned, then the
            // previous one: the bones per draw halve (or a little less).
            capacity = capacity.map(|c| {
                let mut c = c / 2;
                while c > 0 && motion_window(c, vpb, align) > storage_window {
                    c -= 1;
                }
                c
            });
        }
        if let (Some(c), Some(l)) = (capacity, cfg.capacity_limit) {
            capacity = Some(c.min(l));
        }
        if capacity == Some(0) {
            return Err(GpuError::InvalidArgument(format!(
                "path {}: not one bone ({} bytes{}) fits the storage's {} bytes",
                desc.name,
                vpb * 16,
                if cfg.motion && windowed {
                    ", twice with motion vectors"
                } else {
                    ""
                },
                storage_window * 16
            )));
        }
        let window = match capacity {
            Some(c) if windowed && cfg.motion => motion_window(c, vpb, align),
            Some(c) if windowed => c * vpb,
            _ => storage_window,
        };
        let frame_layout = DescriptorSetLayout::new(
            device,
            &[BindingDesc::new(
                0,
                vk::DescriptorType::UNIFORM_BUFFER,
                vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
            )],
        )?;
        let empty_layout = DescriptorSetLayout::new(device, &[])?;
        let palette_layout = match desc.storage.and_then(|s| s.descriptor()) {
            Some(ty) => Some(DescriptorSetLayout::new(
                device,
                &[BindingDesc::new(0, ty, stage_flags())],
            )?),
            None => None,
        };
        let capture_layout = if cfg.capture {
            Some(CaptureBuffer::set_layout(device)?)
        } else {
            None
        };
        let storage = desc.storage;
        if let Some(s) = storage {
            s.check_device(device)?;
        }
        let prefix = storage.map_or(0, |s| s.push_prefix_len());
        if prefix > super::storage::MAX_PUSH_PREFIX {
            return Err(super::storage::prefix_too_long(prefix));
        }
        let morph_layout = super::morph::set_layout(device)?;
        if limits.max_bound_descriptor_sets <= MATERIAL_SET {
            return Err(GpuError::Limit {
                what:
                    "descriptor sets bound at once (maxBoundDescriptorSets; the material is set 4)",
                needed: u64::from(MATERIAL_SET) + 1,
                limit: u64::from(limits.max_bound_descriptor_sets),
            });
        }
        let material_layout = material_set_layout(device)?;
        let white = GpuMaterial::white(device, &material_layout)?;
        // Graphics layout: set 0 frame, set 1 palette (vertex stage), set 2
        // capture, set 3 morph targets (vertex stage), set 4 the material;
        // empty where unused.
        let mut sets = vec![frame_layout.raw()];
        let set1 = match (&palette_layout, desc.stage) {
            (Some(l), Stage::Vertex) => l.raw(),
            _ => empty_layout.raw(),
        };
        sets.push(set1);
        sets.push(
            capture_layout
                .as_ref()
                .map_or(empty_layout.raw(), |l| l.raw()),
        );
        sets.push(match desc.stage {
            Stage::Vertex => morph_layout.raw(),
            _ => empty_layout.raw(),
        });
        sets.push(material_layout.raw());
        let vertex_push = |size: usize| {
            vec![vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::VERTEX)
                .size(size as u32)]
        };
        let push = match (desc.stage, storage) {
            (Stage::Vertex, Some(s)) if s.in_push_constants() => vertex_push(window * 16),
            (Stage::Vertex, _) => vertex_push(prefix + std::mem::size_of::<DrawPush>()),
            _ => Vec::new(),
        };
        let graphics_layout = PipelineLayout::new(device, &sets, &push)?;
        let compute_layouts = if desc.stage == Stage::Compute {
            let palette = palette_layout
                .as_ref()
                .map_or(empty_layout.raw(), |l| l.raw());
            Some(layouts::ComputeLayouts::new(
                device,
                palette,
                morph_layout.raw(),
                prefix,
            )?)
        } else {
            None
        };
        let out_layout = compute_layouts.as_ref().map(|c| &c.out);
        // Per slot: one palette set and (compute) one output set.
        let n = cfg.frames_in_flight;
        let mut pool_layouts: Vec<&DescriptorSetLayout> = Vec::new();
        if let Some(l) = &palette_layout {
            pool_layouts.push(l);
        }
        if let Some(l) = out_layout {
            pool_layouts.push(l);
        }
        let pool = if pool_layouts.is_empty() {
            None
        } else {
            Some(DescriptorPool::new(device, &pool_layouts, n as u32)?)
        };
        let mut slots = Vec::with_capacity(n);
        for _ in 0..n {
            let alloc = |l: Option<&DescriptorSetLayout>| -> GpuResult<vk::DescriptorSet> {
                match (&pool, l) {
                    (Some(p), Some(l)) => {
                        Ok(p.allocate(l, 1)?.first().copied().unwrap_or_default())
                    }
                    _ => Ok(vk::DescriptorSet::null()),
                }
            };
            let timer = if device.features().timestamps {
                Some(TimestampQueries::new(device, 2)?)
            } else {
                None
            };
            slots.push(Slot {
                generation: 0,
                palette: None,
                palette_view: None,
                palette_cap: 0,
                palette_used: 0,
                push: Vec::new(),
                palette_set: alloc(palette_layout.as_ref())?,
                records: None,
                records_cap: 0,
                records_used: 0,
                out: None,
                out_cap: 0,
                out_used: 0,
                out_tangents: false,
                out_set: alloc(out_layout)?,
                morph_headers: None,
                morph_headers_cap: 0,
                morph_entries: None,
                morph_entries_cap: 0,
                morph_entries_used: 0,
                morph_version: 0,
                push_prefix: Vec::new(),
                recorded: Cell::new(false),
                timer,
                timed: Cell::new(false),
                gpu_ms: None,
            });
        }
        let mut path = Self {
            device: device.clone(),
            desc,
            cfg,
            capacity,
            window,
            align,
            _frame_layout: frame_layout,
            palette_layout,
            _empty_layout: empty_layout,
            capture_layout,
            morph_layout,
            material_layout,
            white,
            compute_layouts,
            graphics_layout,
            pipelines: Vec::new(),
            compute: Vec::new(),
            _pool: pool,
            slots,
            id: super::morph::next_version(),
        };
        // Every slot gets storage from the start, so every set is written
        // before any draw can bind it.
        for s in 0..n {
            path.ensure_palette(s, 1)?;
            path.ensure_records(s, 1)?;
            path.ensure_out(s, 1, false)?;
            path.ensure_morph(s, 1, 1)?;
        }
        path.ensure_pipelines(4, false, false)?;
        Ok(path)
    }

    /// The path by name, or the error listing every name.
    pub fn by_name(device: &Arc<Device>, name: &str, cfg: SkinPathConfig) -> GpuResult<Self> {
        let desc = super::registry::find(name).ok_or_else(|| {
            GpuError::InvalidArgument(format!(
                "unknown skinning path {name:?}; paths: {}",
                super::registry::names()
            ))
        })?;
        Self::new(device, desc, cfg)
    }

    /// The path's registry entry.
    pub fn desc(&self) -> &'static PathDesc {
        self.desc
    }

    /// The path's name ("4x3-ubo", ...).
    pub fn name(&self) -> &'static str {
        self.desc.name
    }

    /// Bones one draw addresses (`None`: unlimited).
    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    /// Frames in flight, [`SkinPathConfig::frames_in_flight`].
    pub fn frames_in_flight(&self) -> usize {
        self.slots.len()
    }

    /// The configuration the path was built with.
    pub fn config(&self) -> &SkinPathConfig {
        &self.cfg
    }

    /// Uploads `mesh` for this path: checks its joints against the palette
    /// (`hierarchy` has one entry per skin entry), renormalises weights,
    /// partitions it when the palette exceeds one draw's window, uploads its
    /// morph targets' deltas (GPU stages; an error naming the limit when
    /// they exceed maxStorageBufferRange or
    /// [`SkinPathConfig::morph_bytes_limit`]), and builds the pipeline
    /// permutation it needs.
    pub fn prepare(
        &mut self,
        mesh: &SkinnedMesh,
        hierarchy: &PaletteHierarchy,
    ) -> GpuResult<PreparedMesh> {
        let cap = if self.desc.stage == Stage::Cpu {
            None
        } else {
            self.capacity
        };
        let limit = self.limit_text();
        // The deltas are one RGBA32F texel buffer (skin/morph.rs).
        let device_range = 16 * u64::from(self.device.limits().max_texel_buffer_elements);
        let morph = super::morph::MorphSetup {
            path_id: self.id,
            layout: (self.desc.stage != Stage::Cpu).then_some(&self.morph_layout),
            slots: self.slots.len(),
            limit: self
                .cfg
                .morph_bytes_limit
                .map_or(device_range, |l| l.min(device_range)),
            limit_text: match self.cfg.morph_bytes_limit {
                Some(l) if l < device_range => "morph_bytes_limit".into(),
                _ => "maxTexelBufferElements (16 bytes a texel)".into(),
            },
        };
        let prepared = prepare(
            &self.device,
            self.desc,
            cap,
            &limit,
            self.align,
            self.compute_layouts.as_ref().map(|c| &c.mesh),
            mesh,
            hierarchy,
            morph,
            self.cfg.motion,
        )?;
        self.ensure_pipelines(
            prepared.influences,
            prepared.morph.is_some(),
            prepared.has_tangents,
        )?;
        Ok(prepared)
    }

    /// What bounds one draw's palette, in words.
    fn limit_text(&self) -> String {
        let device = self.desc.limit_text(self.device.limits());
        match self.cfg.capacity_limit {
            Some(c) if Some(c) == self.capacity => format!("capacity_limit {c} bones; {device}"),
            _ => device,
        }
    }

    fn polygon_modes(&self) -> Vec<vk::PolygonMode> {
        let mut modes = vec![vk::PolygonMode::FILL];
        if self.cfg.wireframe && self.device.features().fill_mode_non_solid {
            modes.push(vk::PolygonMode::LINE);
        }
        modes
    }

    fn slot(&self, frame: usize) -> GpuResult<&Slot> {
        self.slots.get(frame).ok_or_else(|| {
            GpuError::InvalidArgument(format!(
                "frame {frame} outside {} frames in flight",
                self.slots.len()
            ))
        })
    }

    /// Starts frame `frame` (a [`crate::render::FramesInFlight`] slot whose
    /// previous submission has finished): its batches from last time are
    /// void, its storage is reused, its GPU time is read.
    pub fn begin_frame(&mut self, frame: usize) -> GpuResult<()> {
        self.slot(frame)?;
        let slot = &mut self.slots[frame];
        slot.generation += 1;
        slot.palette_used = 0;
        slot.records_used = 0;
        slot.out_used = 0;
        slot.morph_entries_used = 0;
        slot.recorded.set(false);
        if slot.timed.replace(false) {
            if let Some(t) = &slot.timer {
                let mut ticks = [0u64; 2];
                slot.gpu_ms = if t.try_read_into(&mut ticks)? {
                    t.elapsed_ns(&ticks, 0, 1).map(|ns| ns * 1e-6)
                } else {
                    None
                };
            }
        }
        Ok(())
    }

    /// GPU milliseconds of this path's work in the last finished use of
    /// slot `frame` (from [`SkinPath::prepass`] to [`SkinPath::finish`]).
    pub fn gpu_ms(&self, frame: usize) -> Option<f64> {
        self.slots.get(frame).and_then(|s| s.gpu_ms)
    }

    /// Records what comes before the rendering scope: the GPU timer's start
    /// and, in the compute stage, the skinning dispatch of every batch with
    /// the barriers around it (earlier vertex reads before the writes;
    /// compute writes before vertex-attribute reads).
    pub fn prepass(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        batches: &[(&Batch, &PreparedMesh)],
    ) -> GpuResult<()> {
        self.prepass_iter(cmd, frame, batches.iter().copied())
    }

    /// [`SkinPath::prepass`] over any re-iterable list of batches (walked
    /// twice: checked, then dispatched), so a caller need not collect one.
    pub(crate) fn prepass_iter<'b, I>(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        batches: I,
    ) -> GpuResult<()>
    where
        I: IntoIterator<Item = (&'b Batch, &'b PreparedMesh)> + Clone,
    {
        let slot = self.slot(frame)?;
        if let Some(t) = &slot.timer {
            t.reset(cmd);
            t.write(cmd, 0, vk::PipelineStageFlags2::TOP_OF_PIPE);
            slot.timed.set(true);
        }
        if self.desc.stage != Stage::Compute || batches.clone().into_iter().next().is_none() {
            return Ok(());
        }
        for (b, p) in batches.clone() {
            self.check_batch(frame, b, p)?;
        }
        self.dispatch(cmd, frame, batches)
    }

    /// Records the GPU timer's end, after the frame's draws of this path.
    pub fn finish(&self, cmd: vk::CommandBuffer, frame: usize) -> GpuResult<()> {
        let slot = self.slot(frame)?;
        if let Some(t) = &slot.timer {
            if slot.timed.get() {
                t.write(cmd, 1, vk::PipelineStageFlags2::ALL_COMMANDS);
            }
        }
        Ok(())
    }

    fn check_batch(&self, frame: usize, batch: &Batch, prepared: &PreparedMesh) -> GpuResult<()> {
        let slot = self.slot(frame)?;
        if batch.slot != frame || batch.generation != slot.generation {
            return Err(GpuError::InvalidArgument(format!(
                "a batch of frame slot {} (generation {}) recorded in slot {frame} (generation {})",
                batch.slot, batch.generation, slot.generation
            )));
        }
        if prepared.path.name != self.desc.name {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} was prepared for path {}, not {}",
                prepared.name, prepared.path.name, self.desc.name
            )));
        }
        if batch.vertex_count != prepared.vertex_count
            || (batch.stage != Stage::Cpu && batch.stride != self.instance_stride(prepared))
        {
            return Err(GpuError::InvalidArgument(format!(
                "the batch was made for another mesh than {:?}",
                prepared.name
            )));
        }
        Ok(())
    }

    /// Records the draws of `batch` (instances of `prepared`) inside a
    /// rendering scope with frame `frame`'s uniforms, untextured (white,
    /// opaque: [`SkinPath::record_draw_with`] without a material). May be
    /// called for several passes. A capture path needs `capture`, aimed
    /// with [`Batch::capture_target`].
    #[allow(clippy::too_many_arguments)]
    pub fn record_draw(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        frame_sets: &FrameSets,
        batch: &Batch,
        prepared: &PreparedMesh,
        polygon: vk::PolygonMode,
        capture: Option<&CaptureBuffer>,
    ) -> GpuResult<()> {
        self.record_draw_with(
            cmd, frame, frame_sets, batch, prepared, polygon, capture, None,
        )
    }

    /// [`SkinPath::record_draw`] with `material` (set 4: base colour
    /// factor, texture, alpha mode; `None`: white, opaque). A blended
    /// material draws with blending and without depth writes: record it
    /// after the opaque draws. A double-sided one is never culled; the
    /// others are culled by [`SkinPathConfig::cull_mode`].
    #[allow(clippy::too_many_arguments)]
    pub fn record_draw_with(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        frame_sets: &FrameSets,
        batch: &Batch,
        prepared: &PreparedMesh,
        polygon: vk::PolygonMode,
        capture: Option<&CaptureBuffer>,
        material: Option<&GpuMaterial>,
    ) -> GpuResult<()> {
        self.check_batch(frame, batch, prepared)?;
        let material = material.unwrap_or(&self.white);
        let slot = &self.slots[frame];
        slot.recorded.set(true);
        let vertex_stage = self.desc.stage == Stage::Vertex;
        let morph = vertex_stage && prepared.morph.is_some();
        let key = PipelineKey {
            influences: if vertex_stage { prepared.influences } else { 0 },
            polygon,
            morph,
            tangents: prepared.has_tangents,
            // Wireframe has no blending variant.
            blend: material.blend() && polygon == vk::PolygonMode::FILL,
        };
        let cull = if material.double_sided() {
            vk::CullModeFlags::NONE
        } else {
            self.cfg.cull_mode
        };
        let pipeline = self
            .pipelines
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, p)| p)
            .ok_or_else(|| {
                GpuError::InvalidArgument(format!(
                    "path {} has no {polygon:?} pipeline (wireframe needs SkinPathConfig::wireframe and fillModeNonSolid)",
                    self.desc.name
                ))
            })?;
        let capture_set = match (self.cfg.capture, capture) {
            (true, Some(c)) => Some(c.set()),
            (true, None) => {
                return Err(GpuError::InvalidArgument(
                    "a capture path draws only with a capture buffer".into(),
                ))
            }
            _ => None,
        };
        let morph_set = if morph {
            Some(self.morph_set(frame, prepared)?)
        } else {
            None
        };
        let layout = self.graphics_layout.raw();
        let d = self.device.raw();
        let gfx = vk::PipelineBindPoint::GRAPHICS;
        pipeline.bind(cmd);
        // SAFETY: `cmd` is recording inside a rendering scope (the caller's
        // contract); set 0 is the frame's uniform set, set 2 the capture set
        // and set 3 the mesh's morph set for this slot (written above,
        // before this bind), set 4 the material's (written when it was
        // made, its objects alive while it is), all from the set layouts
        // this pipeline layout was made with (the material's by an
        // identical layout); the pipeline's cull mode is dynamic; the index buffer is the prepared mesh's, alive while the
        // mesh is, which the frame's retirement outlasts.
        unsafe {
            d.cmd_bind_descriptor_sets(cmd, gfx, layout, 0, &[frame_sets.set(frame)], &[]);
            d.cmd_bind_descriptor_sets(cmd, gfx, layout, MATERIAL_SET, &[material.set()], &[]);
            d.cmd_set_cull_mode(cmd, cull);
            if let Some(set) = capture_set {
                d.cmd_bind_descriptor_sets(cmd, gfx, layout, 2, &[set], &[]);
            }
            if let Some(set) = morph_set {
                d.cmd_bind_descriptor_sets(cmd, gfx, layout, 3, &[set], &[]);
            }
            d.cmd_bind_index_buffer(cmd, prepared.indices.raw(), 0, vk::IndexType::UINT32);
        }
        if vertex_stage {
            self.record_vertex(cmd, slot, batch, prepared, layout)
        } else {
            self.record_output(cmd, slot, batch, prepared)
        }
    }

    /// The material set layout (set 4 of the graphics pipelines).
    pub fn material_layout(&self) -> &DescriptorSetLayout {
        &self.material_layout
    }

    /// The capture set layout (capture paths).
    pub fn capture_layout(&self) -> Option<&DescriptorSetLayout> {
        self.capture_layout.as_ref()
    }

    #[doc(hidden)]
    pub fn palette_layout(&self) -> Option<&DescriptorSetLayout> {
        self.palette_layout.as_ref()
    }

    #[doc(hidden)]
    pub fn out_layout(&self) -> Option<&DescriptorSetLayout> {
        self.compute_layouts.as_ref().map(|c| &c.out)
    }
}

/// The CPU stage's previous positions and normals of a batch (motion).
type PrevOut<'a> = (&'a mut [Vec3], &'a mut [Vec3]);

fn missing() -> GpuError {
    GpuError::InvalidArgument("skin path storage missing (internal)".into())
}

fn cast_mut<T: bytemuck::Pod>(bytes: &mut [u8]) -> GpuResult<&mut [T]> {
    let whole = bytes.len() / std::mem::size_of::<T>() * std::mem::size_of::<T>();
    bytemuck::try_cast_slice_mut(&mut bytes[..whole])
        .map_err(|e| GpuError::InvalidArgument(format!("mapped storage: {e}")))
}

/// The window one draw addresses on a windowed storage with motion and
/// `bones` bones per draw: the palette, aligned, then the previous one
/// (`PALETTE_VEC4S`; even on the push storage, whose alignment is one vec4,
/// so that the previous palette starts at exactly half of it).
fn motion_window(bones: usize, vpb: usize, align: usize) -> usize {
    (bones * vpb).div_ceil(align) * align + bones * vpb
}
