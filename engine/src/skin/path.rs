use std::cell::Cell;
use std::sync::Arc;

use glam::{Affine3A, Vec3};

use super::capture::CaptureBuffer;
use super::encoding::CpuSkinning;
use super::instance::{ComputePush, DrawPush, InstanceRecord};
use super::mesh::{prepare, BaseVertex, InfluenceVertex, PreparedMesh};
use super::registry::{PathDesc, Stage};
use super::FrameSets;
use crate::anim::{Crowd, PaletteHierarchy, PaletteReport, Parallelism, Strided};
use crate::gpu::{
    memory_barrier, vk, write_buffer, write_buffer_range, write_texel_buffer, BindingDesc, Buffer,
    BufferDesc, BufferView, DescriptorPool, DescriptorSetLayout, Device, GpuError, GpuResult,
    GraphicsPipelineDesc, Pipeline, PipelineLayout, ShaderDesc, ShaderModule, ShaderSources,
    TimestampQueries,
};
use crate::mesh::SkinnedMesh;

/// The fragment shader of skinned meshes.
pub const SKINNED_FRAGMENT: &str = "skin/skinned.frag";
/// The vertex shader of the compute and CPU stages' plain pipeline.
pub const PLAIN_VERTEX: &str = "skin/plain.vert";

/// How a [`SkinPath`] draws.
#[derive(Clone, Debug)]
pub struct SkinPathConfig {
    pub frames_in_flight: usize,
    pub color_format: vk::Format,
    /// `UNDEFINED` for no depth.
    pub depth_format: vk::Format,
    pub cull_mode: vk::CullModeFlags,
    /// Also build wireframe (`PolygonMode::LINE`) pipelines, where the
    /// device has fillModeNonSolid.
    pub wireframe: bool,
    /// Build the capture permutation (every draw needs a [`CaptureBuffer`]).
    pub capture: bool,
    /// Fewer bones per draw than the device allows (tests force
    /// partitioning with it).
    pub capacity_limit: Option<usize>,
    pub sources: ShaderSources,
}

impl SkinPathConfig {
    pub fn new(
        color_format: vk::Format,
        depth_format: vk::Format,
        frames_in_flight: usize,
    ) -> Self {
        Self {
            frames_in_flight,
            color_format,
            depth_format,
            cull_mode: vk::CullModeFlags::NONE,
            wireframe: false,
            capture: false,
            capacity_limit: None,
            sources: ShaderSources::embedded(),
        }
    }
}

/// A batch of instances of one prepared mesh in one frame: where their
/// palettes, records and outputs are. Valid for the frame it was made in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    slot: usize,
    generation: u64,
    palette_base: usize,
    stride: usize,
    first_record: u32,
    count: u32,
    out_base: u32,
    vertex_count: u32,
    stage: Stage,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The header a [`CaptureBuffer`] needs to capture this batch:
    /// `(vertex_count, first)`.
    pub fn capture_target(&self) -> (u32, u32) {
        match self.stage {
            Stage::Vertex => (self.vertex_count, self.first_record),
            _ => (self.vertex_count, self.out_base),
        }
    }
}

/// Fills one batch: one [`InstanceWriter`] per instance, which may be
/// handed to other threads.
pub struct BatchWriter<'a> {
    batch: Batch,
    prepared: &'a PreparedMesh,
    palettes: &'a mut [[f32; 4]],
    records: &'a mut [InstanceRecord],
    positions: &'a mut [Vec3],
    normals: &'a mut [Vec3],
}

impl<'a> BatchWriter<'a> {
    pub fn batch(&self) -> Batch {
        self.batch
    }

    pub fn len(&self) -> usize {
        self.batch.len()
    }

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
            InstanceWriter {
                prepared,
                palette: p,
                record: &mut r[0],
                positions: op,
                normals: on,
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
}

impl BatchWriter<'_> {
    /// Animates every instance of `crowd` at frame time `time` (its
    /// [`Parallelism`]) straight into this batch: each instance's palette is
    /// encoded into the frame's mapped storage (on the CPU stage, its mesh is
    /// skinned into the frame's vertex buffer), and its record gets the
    /// model-to-world matrix and tint `place(i)`. One pass over the bytes,
    /// nothing allocated once warm. `crowd` must hold as many instances as
    /// the batch, animating the skin the mesh was prepared for. The reports
    /// are merged.
    pub fn animate(
        &mut self,
        crowd: &mut Crowd,
        time: f32,
        threads: Parallelism,
        place: impl Fn(usize) -> (Affine3A, [f32; 4]) + Sync,
    ) -> GpuResult<PaletteReport> {
        let m = self.prepared;
        if crowd.len() != self.batch.len() {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} on path {}: a crowd of {} instances for a batch of {}",
                m.name,
                m.path.name,
                crowd.len(),
                self.batch.len()
            )));
        }
        let stride = self.batch.stride;
        let cpu = if self.positions.is_empty() {
            0
        } else {
            self.batch.vertex_count as usize
        };
        let out = (
            Strided::new(&mut *self.palettes, stride),
            Strided::new(&mut *self.records, 1),
            Strided::new(&mut *self.positions, cpu),
            Strided::new(&mut *self.normals, cpu),
        );
        // Lossy bones are rare (a lock then); the largest deviation is
        // common, kept as the bits of a non-negative f32, which order as u32.
        let lossy = std::sync::Mutex::new(Vec::new());
        let deviation = std::sync::atomic::AtomicU32::new(0);
        let poisoned = || GpuError::InvalidArgument("a crowd thread panicked".into());
        crowd
            .animate_split(time, threads, out, |i, skin, (pal, rec, pos, nrm)| {
                let record = rec.into_slice().first_mut().ok_or_else(|| {
                    GpuError::InvalidArgument(format!("instance {i} beyond the batch"))
                })?;
                let (model, tint) = place(i);
                let report = InstanceWriter {
                    prepared: m,
                    palette: pal.into_slice(),
                    record,
                    positions: pos.into_slice(),
                    normals: nrm.into_slice(),
                }
                .write(skin, &model, tint)?;
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
            })
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
}

impl InstanceWriter<'_> {
    /// Encodes the palette of skinning matrices `skin` (one per skin entry,
    /// `model[joint] * inverse_bind`) straight into the frame's storage (or,
    /// in the CPU stage, skins the mesh into the frame's vertex buffer) and
    /// writes the instance record. Bones the encoding could not keep are in
    /// the report, numbered as skin entries.
    pub fn write(
        self,
        skin: &[Affine3A],
        model: &Affine3A,
        tint: [f32; 4],
    ) -> GpuResult<PaletteReport> {
        let m = self.prepared;
        if skin.len() != m.palette_len {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} on path {}: a palette of {} matrices, the mesh's skin has {}",
                m.name,
                m.path.name,
                skin.len(),
                m.palette_len
            )));
        }
        let anim = |e: crate::anim::AnimError| {
            GpuError::InvalidArgument(format!("mesh {:?} on path {}: {e}", m.name, m.path.name))
        };
        *self.record = InstanceRecord::new(model, tint);
        let mut report = PaletteReport::default();
        match &m.cpu {
            Some(cpu) => {
                report = m
                    .path
                    .encoding
                    .skin_cpu(
                        skin,
                        &m.hierarchy,
                        CpuSkinning {
                            per_vertex: cpu.per_vertex,
                            joints: &cpu.joints,
                            weights: &cpu.weights,
                            vertices: &cpu.vertices,
                            out_positions: self.positions,
                            out_normals: self.normals,
                        },
                    )
                    .map_err(anim)?;
            }
            None => {
                for part in &m.parts {
                    let out = self.palette.get_mut(part.palette_offset..).ok_or_else(|| {
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
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct PipelineKey {
    influences: u32,
    polygon: vk::PolygonMode,
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
    out_set: vk::DescriptorSet,
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
    /// vec4s of the declared window (push and ubo), else of the whole
    /// storage range.
    window: usize,
    align: usize,
    _frame_layout: DescriptorSetLayout,
    palette_layout: Option<DescriptorSetLayout>,
    _empty_layout: DescriptorSetLayout,
    capture_layout: Option<DescriptorSetLayout>,
    mesh_layout: Option<DescriptorSetLayout>,
    out_layout: Option<DescriptorSetLayout>,
    graphics_layout: Arc<PipelineLayout>,
    compute_layout: Option<Arc<PipelineLayout>>,
    pipelines: Vec<(PipelineKey, Pipeline)>,
    compute: Vec<(u32, Pipeline)>,
    _pool: Option<DescriptorPool>,
    slots: Vec<Slot>,
}

fn stage_flags() -> vk::ShaderStageFlags {
    vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE
}

impl SkinPath {
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
        let limits = device.limits();
        let vpb = desc.encoding.vec4s_per_bone();
        let storage_window = desc.storage.map_or(0, |s| s.window_vec4s(limits) as usize);
        let mut capacity = desc.capacity_for(limits);
        if let (Some(c), Some(l)) = (capacity, cfg.capacity_limit) {
            capacity = Some(c.min(l));
        }
        if capacity == Some(0) {
            return Err(GpuError::InvalidArgument(format!(
                "path {}: not one bone ({} bytes) fits the storage's {} bytes",
                desc.name,
                vpb * 16,
                storage_window * 16
            )));
        }
        let windowed = desc.partitions();
        let window = match capacity {
            Some(c) if windowed => c * vpb,
            _ => storage_window,
        };
        let align = match desc.storage {
            Some(s) if windowed => (s.offset_alignment(limits) / 16).max(1) as usize,
            _ => 1,
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
        let ssbo = vk::DescriptorType::STORAGE_BUFFER;
        let cs = vk::ShaderStageFlags::COMPUTE;
        let (mesh_layout, out_layout) = if desc.stage == Stage::Compute {
            (
                Some(DescriptorSetLayout::new(
                    device,
                    &[
                        BindingDesc::new(0, ssbo, cs),
                        BindingDesc::new(1, ssbo, cs),
                        BindingDesc::new(2, ssbo, cs),
                    ],
                )?),
                Some(DescriptorSetLayout::new(
                    device,
                    &[BindingDesc::new(0, ssbo, cs), BindingDesc::new(1, ssbo, cs)],
                )?),
            )
        } else {
            (None, None)
        };
        // Graphics layout: set 0 frame, set 1 palette (vertex stage), set 2
        // capture.
        let mut sets = vec![frame_layout.raw()];
        let set1 = match (&palette_layout, desc.stage) {
            (Some(l), Stage::Vertex) => l.raw(),
            _ => empty_layout.raw(),
        };
        sets.push(set1);
        if let Some(l) = &capture_layout {
            sets.push(l.raw());
        }
        let push = match (desc.stage, desc.storage.map(|s| s.name())) {
            (Stage::Vertex, Some("push")) => vec![vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::VERTEX)
                .size((window * 16) as u32)],
            (Stage::Vertex, _) => vec![vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::VERTEX)
                .size(std::mem::size_of::<DrawPush>() as u32)],
            _ => Vec::new(),
        };
        let graphics_layout = PipelineLayout::new(device, &sets, &push)?;
        let compute_layout = match (&mesh_layout, &palette_layout, &out_layout) {
            (Some(m), Some(p), Some(o)) => Some(PipelineLayout::new(
                device,
                &[m.raw(), p.raw(), o.raw()],
                &[vk::PushConstantRange::default()
                    .stage_flags(cs)
                    .size(std::mem::size_of::<ComputePush>() as u32)],
            )?),
            _ => None,
        };
        // Per slot: one palette set and (compute) one output set.
        let n = cfg.frames_in_flight;
        let mut pool_layouts: Vec<&DescriptorSetLayout> = Vec::new();
        if let Some(l) = &palette_layout {
            pool_layouts.push(l);
        }
        if let Some(l) = &out_layout {
            pool_layouts.push(l);
        }
        let pool = if pool_layouts.is_empty() {
            None
        } else {
            Some(DescriptorPool::new(device, &pool_layouts, n as u32)?)
        };
        let mut slots = Vec::with_capacity(n);
        for _ in 0..n {
            let alloc = |l: &Option<DescriptorSetLayout>| -> GpuResult<vk::DescriptorSet> {
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
                palette_set: alloc(&palette_layout)?,
                records: None,
                records_cap: 0,
                records_used: 0,
                out: None,
                out_cap: 0,
                out_used: 0,
                out_set: alloc(&out_layout)?,
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
            mesh_layout,
            out_layout,
            graphics_layout,
            compute_layout,
            pipelines: Vec::new(),
            compute: Vec::new(),
            _pool: pool,
            slots,
        };
        // Every slot gets storage from the start, so every set is written
        // before any draw can bind it.
        for s in 0..n {
            path.ensure_palette(s, 1)?;
            path.ensure_records(s, 1)?;
            path.ensure_out(s, 1)?;
        }
        path.ensure_pipelines(4)?;
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

    pub fn desc(&self) -> &'static PathDesc {
        self.desc
    }

    pub fn name(&self) -> &'static str {
        self.desc.name
    }

    /// Bones one draw addresses (`None`: unlimited).
    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    pub fn frames_in_flight(&self) -> usize {
        self.slots.len()
    }

    pub fn config(&self) -> &SkinPathConfig {
        &self.cfg
    }

    /// Uploads `mesh` for this path: checks its joints against the palette
    /// (`hierarchy` has one entry per skin entry), renormalises weights,
    /// partitions it when the palette exceeds one draw's window, and builds
    /// the pipeline permutation it needs.
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
        let prepared = prepare(
            &self.device,
            self.desc,
            cap,
            &limit,
            self.align,
            self.mesh_layout.as_ref(),
            mesh,
            hierarchy,
        )?;
        self.ensure_pipelines(prepared.influences)?;
        Ok(prepared)
    }

    /// What bounds one draw's palette, in words.
    fn limit_text(&self) -> String {
        let l = self.device.limits();
        let device = match self.desc.storage.map(|s| s.name()) {
            Some("push") => format!("maxPushConstantsSize {} bytes", l.max_push_constants_size),
            Some("ubo") => format!("maxUniformBufferRange {} bytes", l.max_uniform_buffer_range),
            Some("texel") => format!("maxTexelBufferElements {}", l.max_texel_buffer_elements),
            Some(_) => format!("maxStorageBufferRange {} bytes", l.max_storage_buffer_range),
            None => "no limit".into(),
        };
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

    fn ensure_pipelines(&mut self, influences: u32) -> GpuResult<()> {
        let key_influences = if self.desc.stage == Stage::Vertex {
            influences
        } else {
            0
        };
        for polygon in self.polygon_modes() {
            let key = PipelineKey {
                influences: key_influences,
                polygon,
            };
            if self.pipelines.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let p = self.build_graphics(key)?;
            self.pipelines.push((key, p));
        }
        if self.desc.stage == Stage::Compute && !self.compute.iter().any(|(k, _)| *k == influences)
        {
            let p = self.build_compute(influences)?;
            self.compute.push((influences, p));
        }
        Ok(())
    }

    fn main_source(&self, stage_file: &str) -> String {
        let mut s = String::from("#version 460\n");
        if let Some(st) = self.desc.storage {
            s += &format!("#include \"{}\"\n", st.shader());
        }
        s += &format!(
            "#include \"{}\"\n#include \"{stage_file}\"\n",
            self.desc.encoding.shader()
        );
        s
    }

    fn defines(&self, influences: u32) -> Vec<(String, String)> {
        vec![
            ("INFLUENCES".into(), influences.to_string()),
            ("PALETTE_VEC4S".into(), self.window.max(1).to_string()),
        ]
    }

    fn build_graphics(&self, key: PipelineKey) -> GpuResult<Pipeline> {
        let d = &self.device;
        let vertex_stage = self.desc.stage == Stage::Vertex;
        let (file, sources) = if vertex_stage {
            let file = format!("skin/gen/{}.vert", self.desc.name);
            let src = self.main_source("skin/vertex.glsl");
            (file.clone(), self.cfg.sources.clone().with(&file, src))
        } else {
            (PLAIN_VERTEX.to_owned(), self.cfg.sources.clone())
        };
        let mut vdesc = ShaderDesc::new(&file);
        if vertex_stage {
            vdesc = vdesc.defines(&self.defines(key.influences));
        }
        if self.cfg.capture {
            vdesc = vdesc.define("SKIN_CAPTURE", 1);
        }
        let vertex = ShaderModule::compile(d, &sources, &vdesc)?;
        let fragment = ShaderModule::compile(d, &sources, &ShaderDesc::new(SKINNED_FRAGMENT))?;
        let (bindings, attributes) = vertex_input(vertex_stage, key.influences, self.cfg.capture);
        let depth = self.cfg.depth_format != vk::Format::UNDEFINED;
        Pipeline::graphics(
            d,
            &self.graphics_layout,
            &GraphicsPipelineDesc {
                vertex: &vertex,
                fragment: &fragment,
                vertex_bindings: &bindings,
                vertex_attributes: &attributes,
                topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                polygon_mode: key.polygon,
                cull_mode: self.cfg.cull_mode,
                front_face: vk::FrontFace::COUNTER_CLOCKWISE,
                depth_test: depth,
                depth_write: depth,
                color_formats: &[self.cfg.color_format],
                depth_format: self.cfg.depth_format,
            },
        )
    }

    fn build_compute(&self, influences: u32) -> GpuResult<Pipeline> {
        let layout = self.compute_layout.as_ref().ok_or_else(|| {
            GpuError::InvalidArgument(format!("path {} has no compute layout", self.desc.name))
        })?;
        let file = format!("skin/gen/{}.comp", self.desc.name);
        let sources = self
            .cfg
            .sources
            .clone()
            .with(&file, self.main_source("skin/compute.glsl"));
        let desc = ShaderDesc::new(&file).defines(&self.defines(influences));
        let module = ShaderModule::compile(&self.device, &sources, &desc)?;
        Pipeline::compute(&self.device, layout, &module)
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

    /// Reserves `count` instances of `prepared` in frame `frame` and returns
    /// the writer that fills them. Errors name the limit when the frame's
    /// storage cannot hold them.
    pub fn batch<'a>(
        &'a mut self,
        frame: usize,
        prepared: &'a PreparedMesh,
        count: usize,
    ) -> GpuResult<BatchWriter<'a>> {
        let slot = self.slot(frame)?;
        if prepared.path.name != self.desc.name {
            return Err(GpuError::InvalidArgument(format!(
                "mesh {:?} was prepared for path {}, not {}",
                prepared.name, prepared.path.name, self.desc.name
            )));
        }
        if slot.recorded.get() {
            return Err(GpuError::InvalidArgument(
                "a batch after this frame's recording began".into(),
            ));
        }
        if count == 0 {
            return Err(GpuError::InvalidArgument(
                "a batch of zero instances".into(),
            ));
        }
        let vc = prepared.vertex_count as usize;
        let stage = self.desc.stage;
        let stride = if stage == Stage::Cpu {
            0
        } else {
            prepared.instance_vec4s
        };
        let palette_base = slot.palette_used.div_ceil(self.align) * self.align;
        let palette_end = count
            .checked_mul(stride)
            .and_then(|b| b.checked_add(palette_base))
            .ok_or(GpuError::Limit {
                what: "palette vec4s in one frame",
                needed: u64::MAX,
                limit: self.window as u64,
            })?;
        if stage != Stage::Cpu && !self.desc.partitions() && palette_end > self.window {
            return Err(GpuError::Limit {
                what: "palette vec4s in one frame (instances x bones x vec4 per bone)",
                needed: palette_end as u64,
                limit: self.window as u64,
            });
        }
        let first_record = slot.records_used;
        let records_end = first_record + count;
        let out_base = slot.out_used;
        let out_end = if stage == Stage::Vertex {
            out_base
        } else {
            count
                .checked_mul(vc)
                .and_then(|n| n.checked_add(out_base))
                .filter(|&n| n <= i32::MAX as usize)
                .ok_or(GpuError::Limit {
                    what: "skinned output vertices in one frame",
                    needed: (count as u64).saturating_mul(vc as u64),
                    limit: i32::MAX as u64,
                })?
        };
        if stage == Stage::Compute {
            let limit = u64::from(self.device.limits().max_storage_buffer_range);
            let bytes = out_end as u64 * 12;
            if bytes > limit {
                return Err(GpuError::Limit {
                    what: "skinned positions bytes in one frame (maxStorageBufferRange)",
                    needed: bytes,
                    limit,
                });
            }
        }
        self.ensure_palette(frame, palette_end)?;
        self.ensure_records(frame, records_end)?;
        self.ensure_out(frame, out_end)?;
        let is_push = self.is_push();
        let slot = &mut self.slots[frame];
        slot.palette_used = palette_end;
        slot.records_used = records_end;
        slot.out_used = out_end;
        let batch = Batch {
            slot: frame,
            generation: slot.generation,
            palette_base,
            stride,
            first_record: first_record as u32,
            count: count as u32,
            out_base: out_base as u32,
            vertex_count: vc as u32,
            stage,
        };
        let palettes: &mut [[f32; 4]] = if stage == Stage::Cpu {
            &mut []
        } else if is_push {
            &mut slot.push[palette_base..palette_end]
        } else {
            let buf = slot.palette.as_mut().ok_or_else(missing)?;
            &mut cast_mut::<[f32; 4]>(buf.mapped_mut()?)?[palette_base..palette_end]
        };
        let records = &mut cast_mut::<InstanceRecord>(
            slot.records.as_mut().ok_or_else(missing)?.mapped_mut()?,
        )?[first_record..records_end];
        let (positions, normals): (&mut [Vec3], &mut [Vec3]) = if stage == Stage::Cpu {
            let cap = slot.out_cap;
            let all = cast_mut::<Vec3>(slot.out.as_mut().ok_or_else(missing)?.mapped_mut()?)?;
            let (p, n) = all.split_at_mut(cap);
            (&mut p[out_base..out_end], &mut n[out_base..out_end])
        } else {
            (&mut [], &mut [])
        };
        Ok(BatchWriter {
            batch,
            prepared,
            palettes,
            records,
            positions,
            normals,
        })
    }

    fn is_push(&self) -> bool {
        self.desc.stage == Stage::Vertex && self.desc.storage.map(|s| s.name()) == Some("push")
    }

    fn ensure_palette(&mut self, frame: usize, need: usize) -> GpuResult<()> {
        if self.desc.stage == Stage::Cpu {
            return Ok(());
        }
        let is_push = self.is_push();
        let window = self.window;
        let storage = self.desc.storage.ok_or_else(missing)?;
        let d = self.device.clone();
        let slot = &mut self.slots[frame];
        if need <= slot.palette_cap {
            return Ok(());
        }
        let mut cap = need.next_power_of_two().max(256);
        if !self.desc.partitions() {
            // The whole buffer is the descriptor's range: growth stops at
            // the storage's device limit (`batch` kept `need` within it).
            cap = cap.min(window.max(need));
        }
        if is_push {
            slot.push.resize(cap, [0.0; 4]);
            slot.palette_cap = cap;
            return Ok(());
        }
        // Dynamic uniform windows may start at the last batch: room for a
        // whole window past the end.
        let ubo = storage.descriptor() == Some(vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC);
        let total = if ubo { cap + window } else { cap };
        let bytes = (total * 16) as u64;
        let mut buf = Buffer::new(
            &d,
            &BufferDesc::host("palette storage", bytes, storage.usage()),
        )?;
        // Batches already written this frame move along.
        if let Some(old) = &mut slot.palette {
            let used = slot.palette_used * 16;
            let src = old.mapped_mut()?;
            buf.write_bytes(0, &src[..used])?;
        }
        let ty = storage.descriptor().ok_or_else(missing)?;
        match ty {
            vk::DescriptorType::UNIFORM_TEXEL_BUFFER => {
                let view = BufferView::new(&d, &buf, vk::Format::R32G32B32A32_SFLOAT, 0, bytes)?;
                write_texel_buffer(&d, slot.palette_set, 0, ty, &view);
                slot.palette_view = Some(view);
            }
            vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC => {
                write_buffer_range(&d, slot.palette_set, 0, ty, &buf, 0, (window * 16) as u64);
            }
            _ => write_buffer(&d, slot.palette_set, 0, ty, &buf),
        }
        slot.palette = Some(buf);
        slot.palette_cap = cap;
        Ok(())
    }

    fn ensure_records(&mut self, frame: usize, need: usize) -> GpuResult<()> {
        let d = self.device.clone();
        let slot = &mut self.slots[frame];
        if need <= slot.records_cap {
            return Ok(());
        }
        let cap = need.next_power_of_two().max(16);
        let size = (cap * std::mem::size_of::<InstanceRecord>()) as u64;
        let mut buf = Buffer::new(
            &d,
            &BufferDesc::host(
                "instance records",
                size,
                vk::BufferUsageFlags::VERTEX_BUFFER,
            ),
        )?;
        if let Some(old) = &mut slot.records {
            let used = slot.records_used * std::mem::size_of::<InstanceRecord>();
            let src = old.mapped_mut()?;
            buf.write_bytes(0, &src[..used])?;
        }
        slot.records = Some(buf);
        slot.records_cap = cap;
        Ok(())
    }

    fn ensure_out(&mut self, frame: usize, need: usize) -> GpuResult<()> {
        let stage = self.desc.stage;
        if stage == Stage::Vertex {
            return Ok(());
        }
        let d = self.device.clone();
        let slot = &mut self.slots[frame];
        if need <= slot.out_cap && slot.out.is_some() {
            return Ok(());
        }
        // A multiple of 64 vertices: the normals region then starts on a
        // 256-byte boundary (any storage offset alignment).
        let cap = need.next_power_of_two().max(64).div_ceil(64) * 64;
        let size = (cap * 24) as u64;
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER;
        let mut buf = if stage == Stage::Compute {
            Buffer::new(
                &d,
                &BufferDesc::device_local(
                    "skinned vertices",
                    size,
                    usage | vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
            )?
        } else {
            Buffer::new(&d, &BufferDesc::host("skinned vertices", size, usage))?
        };
        if stage == Stage::Cpu {
            if let Some(old) = &mut slot.out {
                // Positions then normals, each region moved to its new place.
                let used = slot.out_used * 12;
                let old_cap = slot.out_cap * 12;
                let src = old.mapped_mut()?;
                buf.write_bytes(0, &src[..used])?;
                buf.write_bytes((cap * 12) as u64, &src[old_cap..old_cap + used])?;
            }
        } else {
            let ty = vk::DescriptorType::STORAGE_BUFFER;
            let half = (cap * 12) as u64;
            // The rounded-up capacity may pass maxStorageBufferRange; the
            // vertices written (`batch` checked them) stay within it.
            let range = half.min(u64::from(d.limits().max_storage_buffer_range));
            write_buffer_range(&d, slot.out_set, 0, ty, &buf, 0, range);
            write_buffer_range(&d, slot.out_set, 1, ty, &buf, half, range);
        }
        slot.out = Some(buf);
        slot.out_cap = cap;
        Ok(())
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
        let slot = self.slot(frame)?;
        let d = &self.device;
        if let Some(t) = &slot.timer {
            t.reset(cmd);
            t.write(cmd, 0, vk::PipelineStageFlags2::TOP_OF_PIPE);
            slot.timed.set(true);
        }
        if self.desc.stage != Stage::Compute || batches.is_empty() {
            return Ok(());
        }
        for (b, p) in batches {
            self.check_batch(frame, b, p)?;
        }
        memory_barrier(
            d,
            cmd,
            vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
            vk::AccessFlags2::NONE,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
        );
        let layout = self.compute_layout.as_ref().ok_or_else(missing)?;
        let raw = d.raw();
        for (b, p) in batches {
            let pipeline = self
                .compute
                .iter()
                .find(|(k, _)| *k == p.influences)
                .map(|(_, p)| p)
                .ok_or_else(missing)?;
            pipeline.bind(cmd);
            let mesh_set = p.compute_set.as_ref().ok_or_else(missing)?.1;
            let sets = [mesh_set, slot.palette_set, slot.out_set];
            let push = ComputePush {
                palette_base: b.palette_base as u32,
                palette_stride: b.stride as u32,
                vertex_count: b.vertex_count,
                instance_count: b.count,
                out_base: b.out_base,
            };
            // SAFETY: `cmd` is recording outside a rendering scope; the sets
            // match the compute layout and their buffers are live.
            unsafe {
                raw.cmd_bind_descriptor_sets(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    layout.raw(),
                    0,
                    &sets,
                    &[],
                );
                raw.cmd_push_constants(
                    cmd,
                    layout.raw(),
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    bytemuck::bytes_of(&push),
                );
                raw.cmd_dispatch(cmd, b.vertex_count.div_ceil(64), b.count, 1);
            }
        }
        memory_barrier(
            d,
            cmd,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
            vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
            vk::AccessFlags2::VERTEX_ATTRIBUTE_READ,
        );
        Ok(())
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
            || (batch.stage != Stage::Cpu && batch.stride != prepared.instance_vec4s)
        {
            return Err(GpuError::InvalidArgument(format!(
                "the batch was made for another mesh than {:?}",
                prepared.name
            )));
        }
        Ok(())
    }

    /// Records the draws of `batch` (instances of `prepared`) inside a
    /// rendering scope with frame `frame`'s uniforms. May be called for
    /// several passes. A capture path needs `capture`, aimed with
    /// [`Batch::capture_target`].
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
        self.check_batch(frame, batch, prepared)?;
        let slot = &self.slots[frame];
        slot.recorded.set(true);
        let vertex_stage = self.desc.stage == Stage::Vertex;
        let key = PipelineKey {
            influences: if vertex_stage { prepared.influences } else { 0 },
            polygon,
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
        let layout = self.graphics_layout.raw();
        let d = self.device.raw();
        let gfx = vk::PipelineBindPoint::GRAPHICS;
        let records = slot.records.as_ref().ok_or_else(missing)?;
        pipeline.bind(cmd);
        // SAFETY (all blocks below): `cmd` is recording inside a rendering
        // scope; sets, buffers and push ranges match the pipeline layout,
        // and every buffer is live until the frame retires.
        unsafe { d.cmd_bind_descriptor_sets(cmd, gfx, layout, 0, &[frame_sets.set(frame)], &[]) };
        match (self.cfg.capture, capture) {
            (true, Some(c)) => unsafe {
                d.cmd_bind_descriptor_sets(cmd, gfx, layout, 2, &[c.set()], &[])
            },
            (true, None) => {
                return Err(GpuError::InvalidArgument(
                    "a capture path draws only with a capture buffer".into(),
                ))
            }
            _ => {}
        }
        unsafe { d.cmd_bind_index_buffer(cmd, prepared.indices.raw(), 0, vk::IndexType::UINT32) };
        if !vertex_stage {
            let out = slot.out.as_ref().ok_or_else(missing)?;
            let half = (slot.out_cap * 12) as u64;
            unsafe {
                d.cmd_bind_vertex_buffers(cmd, 0, &[out.raw(), out.raw()], &[0, half]);
                d.cmd_bind_vertex_buffers(cmd, 3, &[records.raw()], &[0]);
            }
            for i in 0..batch.count {
                let offset = (batch.out_base + i * batch.vertex_count) as i32;
                unsafe {
                    d.cmd_draw_indexed(
                        cmd,
                        prepared.index_count,
                        1,
                        0,
                        offset,
                        batch.first_record + i,
                    )
                };
            }
            return Ok(());
        }
        let inf1 = prepared
            .influences1
            .as_ref()
            .unwrap_or(&prepared.influences0);
        unsafe {
            d.cmd_bind_vertex_buffers(
                cmd,
                0,
                &[
                    prepared.base.raw(),
                    prepared.influences0.raw(),
                    inf1.raw(),
                    records.raw(),
                ],
                &[0, 0, 0, 0],
            );
            if self.cfg.capture {
                d.cmd_bind_vertex_buffers(cmd, 4, &[prepared.source.raw()], &[0]);
            }
        }
        let vs = vk::ShaderStageFlags::VERTEX;
        let storage = self.desc.storage.map(|s| s.name());
        let vpb = self.desc.encoding.vec4s_per_bone();
        for part in &prepared.parts {
            let part_len = part.bones.len() * vpb;
            match storage {
                Some("push") => {
                    for i in 0..batch.count as usize {
                        let start = batch.palette_base + i * batch.stride + part.palette_offset;
                        let bytes: &[u8] =
                            bytemuck::cast_slice(&slot.push[start..start + part_len]);
                        unsafe {
                            d.cmd_push_constants(cmd, layout, vs, 0, bytes);
                            d.cmd_draw_indexed(
                                cmd,
                                part.index_count,
                                1,
                                part.first_index,
                                part.vertex_offset,
                                batch.first_record + i as u32,
                            );
                        }
                    }
                }
                Some("ubo") => {
                    // Runs of instances whose palettes fit one window.
                    let per_run = (self.window - part_len)
                        .checked_div(batch.stride)
                        .map_or(batch.count as usize, |q| q + 1);
                    let mut i = 0usize;
                    while i < batch.count as usize {
                        let n = per_run.min(batch.count as usize - i);
                        let start = batch.palette_base + i * batch.stride + part.palette_offset;
                        let push = DrawPush {
                            palette_base: 0,
                            palette_stride: batch.stride as u32,
                            first_instance: batch.first_record + i as u32,
                            _pad: 0,
                        };
                        unsafe {
                            d.cmd_bind_descriptor_sets(
                                cmd,
                                gfx,
                                layout,
                                1,
                                &[slot.palette_set],
                                &[(start * 16) as u32],
                            );
                            d.cmd_push_constants(cmd, layout, vs, 0, bytemuck::bytes_of(&push));
                            d.cmd_draw_indexed(
                                cmd,
                                part.index_count,
                                n as u32,
                                part.first_index,
                                part.vertex_offset,
                                push.first_instance,
                            );
                        }
                        i += n;
                    }
                }
                _ => {
                    let push = DrawPush {
                        palette_base: (batch.palette_base + part.palette_offset) as u32,
                        palette_stride: batch.stride as u32,
                        first_instance: batch.first_record,
                        _pad: 0,
                    };
                    unsafe {
                        d.cmd_bind_descriptor_sets(cmd, gfx, layout, 1, &[slot.palette_set], &[]);
                        d.cmd_push_constants(cmd, layout, vs, 0, bytemuck::bytes_of(&push));
                        d.cmd_draw_indexed(
                            cmd,
                            part.index_count,
                            batch.count,
                            part.first_index,
                            part.vertex_offset,
                            batch.first_record,
                        );
                    }
                }
            }
        }
        Ok(())
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
        self.out_layout.as_ref()
    }
}

fn missing() -> GpuError {
    GpuError::InvalidArgument("skin path storage missing (internal)".into())
}

fn cast_mut<T: bytemuck::Pod>(bytes: &mut [u8]) -> GpuResult<&mut [T]> {
    let whole = bytes.len() / std::mem::size_of::<T>() * std::mem::size_of::<T>();
    bytemuck::try_cast_slice_mut(&mut bytes[..whole])
        .map_err(|e| GpuError::InvalidArgument(format!("mapped storage: {e}")))
}

/// The vertex input of the vertex stage (streams 0-4) or of the plain
/// pipeline (skinned positions 0, normals 1, instances 3).
fn vertex_input(
    vertex_stage: bool,
    influences: u32,
    capture: bool,
) -> (
    Vec<vk::VertexInputBindingDescription>,
    Vec<vk::VertexInputAttributeDescription>,
) {
    let binding = |b: u32, stride: usize, rate| {
        vk::VertexInputBindingDescription::default()
            .binding(b)
            .stride(stride as u32)
            .input_rate(rate)
    };
    let attr = |location: u32, b: u32, format, offset: usize| {
        vk::VertexInputAttributeDescription::default()
            .location(location)
            .binding(b)
            .format(format)
            .offset(offset as u32)
    };
    let v = vk::VertexInputRate::VERTEX;
    let f3 = vk::Format::R32G32B32_SFLOAT;
    let f4 = vk::Format::R32G32B32A32_SFLOAT;
    let u4 = vk::Format::R16G16B16A16_UINT;
    let mut bindings = Vec::new();
    let mut attrs = Vec::new();
    if vertex_stage {
        use std::mem::offset_of;
        bindings.push(binding(0, std::mem::size_of::<BaseVertex>(), v));
        attrs.push(attr(0, 0, f3, offset_of!(BaseVertex, position)));
        attrs.push(attr(1, 0, f3, offset_of!(BaseVertex, normal)));
        attrs.push(attr(
            2,
            0,
            vk::Format::R32G32_SFLOAT,
            offset_of!(BaseVertex, uv),
        ));
        let iv = std::mem::size_of::<InfluenceVertex>();
        bindings.push(binding(1, iv, v));
        attrs.push(attr(3, 1, u4, offset_of!(InfluenceVertex, joints)));
        attrs.push(attr(4, 1, f4, offset_of!(InfluenceVertex, weights)));
        if influences > 4 {
            bindings.push(binding(2, iv, v));
            attrs.push(attr(5, 2, u4, offset_of!(InfluenceVertex, joints)));
            attrs.push(attr(6, 2, f4, offset_of!(InfluenceVertex, weights)));
        }
        if capture {
            bindings.push(binding(4, 4, v));
            attrs.push(attr(11, 4, vk::Format::R32_UINT, 0));
        }
    } else {
        bindings.push(binding(0, 12, v));
        bindings.push(binding(1, 12, v));
        attrs.push(attr(0, 0, f3, 0));
        attrs.push(attr(1, 1, f3, 0));
    }
    bindings.push(binding(
        3,
        std::mem::size_of::<InstanceRecord>(),
        vk::VertexInputRate::INSTANCE,
    ));
    for r in 0..4u32 {
        attrs.push(attr(7 + r, 3, f4, 16 * r as usize));
    }
    (bindings, attrs)
}
