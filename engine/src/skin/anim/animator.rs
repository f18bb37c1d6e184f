//! The GPU objects of GPU animation: the clip store and, per path and
//! prepared mesh, the animator (program buffers, pipeline, per-frame
//! records and the recording of its dispatch).

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use super::encoders::encoder;
use super::layout::{ProgramLayout, StoreLayout};
use super::record::AnimRecord;
use crate::anim::{Clip, Skeleton, Skin};
use crate::gpu::{
    memory_barrier, vk, write_buffer, write_buffer_range, BindingDesc, Buffer, BufferDesc,
    DescriptorPool, DescriptorSetLayout, Device, GpuError, GpuResult, Pipeline, PipelineLayout,
    ShaderDesc, ShaderModule,
};
use crate::skin::mesh::PreparedMesh;
use crate::skin::path::{Batch, SkinPath};
use crate::skin::registry::Stage;

const STORAGE: vk::DescriptorType = vk::DescriptorType::STORAGE_BUFFER;
/// Descriptor sets made at a time for the per-frame bindings.
const SETS_PER_POOL: u32 = 16;

fn device_buffer(d: &Arc<Device>, name: &str, bytes: &[u8]) -> GpuResult<Buffer> {
    Buffer::device_local_with_data(d, name, vk::BufferUsageFlags::STORAGE_BUFFER, bytes)
}

/// Every clip a character plays, uploaded once (device-local) and shared
/// by every instance and every [`GpuAnimator`] made from it.
pub struct GpuClipStore {
    device: Arc<Device>,
    skeleton: Skeleton,
    durations: Vec<f32>,
    bytes: usize,
    clips: Buffer,
    descs: Buffer,
    times: Buffer,
    data: Buffer,
}

impl GpuClipStore {
    /// Lays out and uploads `clips` (each driving `skeleton`).
    pub fn new(device: &Arc<Device>, skeleton: &Skeleton, clips: &[Clip]) -> GpuResult<Self> {
        let s = StoreLayout::build(skeleton.len(), clips)?;
        let b = |name, bytes: &[u8]| device_buffer(device, name, bytes);
        Ok(Self {
            device: device.clone(),
            skeleton: skeleton.clone(),
            durations: s.durations.clone(),
            bytes: s.bytes(),
            clips: b("anim clips", bytemuck::cast_slice(&s.clips))?,
            descs: b("anim channel descriptors", bytemuck::cast_slice(&s.descs))?,
            times: b("anim key times", bytemuck::cast_slice(&s.times))?,
            data: b("anim key data", bytemuck::cast_slice(&s.data))?,
        })
    }

    /// Number of clips.
    pub fn clip_count(&self) -> usize {
        self.durations.len()
    }

    /// Bytes the store holds on the GPU.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The skeleton the clips drive.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }
}

/// Push constants of `animate.comp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct AnimPush {
    palette_base: u32,
    palette_stride: u32,
    count: u32,
    first_record: u32,
    now: f32,
    groups_x: u32,
}

/// One frame in flight's records and descriptor sets.
#[derive(Default)]
struct Slot {
    records: Option<Buffer>,
    cap: usize,
    used: usize,
    /// Sets for this frame's dispatches, one per [`GpuAnimator::record`]
    /// (never rewritten while the frame may use them).
    sets: Vec<vk::DescriptorSet>,
    sets_used: usize,
}

/// GPU animation of one prepared mesh on one path: each frame,
/// [`GpuAnimator::begin_frame`], then per batch [`GpuAnimator::record`]
/// outside a rendering scope, before the path's `prepass` (after every
/// batch of the frame was made, so that the palette buffer no longer
/// grows).
pub struct GpuAnimator {
    device: Arc<Device>,
    store: Arc<GpuClipStore>,
    path_name: &'static str,
    mesh_name: String,
    _program: Buffer,
    _inv_bind: Buffer,
    _set0_layout: DescriptorSetLayout,
    set1_layout: DescriptorSetLayout,
    pipeline: Pipeline,
    pools: Vec<DescriptorPool>,
    set0: vk::DescriptorSet,
    slots: Vec<Slot>,
    workgroup: u32,
    shared_bytes: u32,
    levels: usize,
}

impl GpuAnimator {
    /// Builds GPU animation of `prepared` (prepared by `path` from a mesh
    /// bound by `skin` to the store's skeleton). An `Err` when the path is
    /// not an instanced GPU path built with
    /// [`crate::skin::SkinPathConfig::gpu_animation`] (or has motion
    /// vectors), the encoding has no GPU writer, or one instance's joints
    /// do not fit the device's maxComputeSharedMemorySize.
    pub fn new(
        store: &Arc<GpuClipStore>,
        path: &SkinPath,
        prepared: &PreparedMesh,
        skin: &Skin,
    ) -> GpuResult<Self> {
        let desc = path.desc();
        let refuse = |why: &str| {
            Err(GpuError::InvalidArgument(format!(
                "GPU animation on path {}: {why}",
                desc.name
            )))
        };
        let cfg = path.config();
        let instanced = desc
            .storage
            .is_some_and(|s| desc.stage != Stage::Cpu && !s.windowed() && !s.in_push_constants());
        if !instanced {
            return refuse("needs an instanced palette storage (texel, ssbo, bda) on a GPU stage");
        }
        if !cfg.gpu_animation {
            return refuse("the path was built without SkinPathConfig::gpu_animation");
        }
        if cfg.motion {
            return refuse("motion vectors (the previous palette) are not animated on the GPU yet");
        }
        if prepared.path.name != desc.name {
            return refuse(&format!(
                "mesh {:?} was prepared for path {}",
                prepared.name, prepared.path.name
            ));
        }
        let Some((encoding, per_bone)) = encoder(desc.encoding.name()) else {
            return refuse("no GPU writer for its encoding");
        };
        let d = &store.device;
        let program = ProgramLayout::build(&store.skeleton, skin, &prepared.parts, per_bone)?;
        let limits = d.limits();
        let joints = store.skeleton.len();
        let shared = joints * 48
            + if encoding >= 2 {
                program.entries * 32
            } else {
                0
            };
        let shared_limit = limits.max_compute_shared_memory_size as usize;
        if shared > shared_limit {
            return Err(GpuError::Limit {
                what: "compute shared memory bytes of one instance's joints (maxComputeSharedMemorySize)",
                needed: shared as u64,
                limit: shared_limit as u64,
            });
        }
        let max_wg =
            limits.max_compute_work_group_size[0].min(limits.max_compute_work_group_invocations);
        let workgroup = (joints.max(1).next_power_of_two() as u32)
            .clamp(8, 128)
            .min(max_wg);
        let stages = vk::ShaderStageFlags::COMPUTE;
        let set0_layout = DescriptorSetLayout::new(
            d,
            &(0..6)
                .map(|b| BindingDesc::new(b, STORAGE, stages))
                .collect::<Vec<_>>(),
        )?;
        let set1_layout = DescriptorSetLayout::new(
            d,
            &[
                BindingDesc::new(0, STORAGE, stages),
                BindingDesc::new(1, STORAGE, stages),
            ],
        )?;
        let push = [vk::PushConstantRange::default()
            .stage_flags(stages)
            .size(std::mem::size_of::<AnimPush>() as u32)];
        let layout = PipelineLayout::new(d, &[set0_layout.raw(), set1_layout.raw()], &push)?;
        let shader = ShaderDesc::new("anim/animate.comp")
            .define("WG", workgroup)
            .define("JOINTS", joints.max(1))
            .define("ENTRIES", program.entries)
            .define("ENCODING", encoding);
        let module = ShaderModule::compile(d, &cfg.sources, &shader)?;
        let pipeline = Pipeline::compute(d, &layout, &module)?;
        let program_buf = device_buffer(d, "anim program", bytemuck::cast_slice(&program.words))?;
        let inv_bind = device_buffer(
            d,
            "anim inverse binds",
            bytemuck::cast_slice(&program.inv_bind),
        )?;
        let pool = DescriptorPool::new(d, &[&set0_layout], 1)?;
        let set0 = pool.allocate(&set0_layout, 1)?[0];
        for (b, buf) in [
            &store.clips,
            &store.descs,
            &store.times,
            &store.data,
            &program_buf,
            &inv_bind,
        ]
        .into_iter()
        .enumerate()
        {
            write_buffer(d, set0, b as u32, STORAGE, buf);
        }
        Ok(Self {
            device: d.clone(),
            store: store.clone(),
            path_name: desc.name,
            mesh_name: prepared.name.clone(),
            _program: program_buf,
            _inv_bind: inv_bind,
            _set0_layout: set0_layout,
            set1_layout,
            pipeline,
            pools: vec![pool],
            set0,
            slots: (0..cfg.frames_in_flight).map(|_| Slot::default()).collect(),
            workgroup,
            shared_bytes: shared as u32,
            levels: program.levels,
        })
    }

    /// Invocations per workgroup (one workgroup animates one instance).
    pub fn workgroup_size(&self) -> u32 {
        self.workgroup
    }

    /// Shared memory one workgroup uses, in bytes.
    pub fn shared_bytes(&self) -> u32 {
        self.shared_bytes
    }

    /// Depth levels of the skeleton (barriers per instance).
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// The store it plays from.
    pub fn store(&self) -> &Arc<GpuClipStore> {
        &self.store
    }

    fn slot(&mut self, frame: usize) -> GpuResult<&mut Slot> {
        let n = self.slots.len();
        self.slots.get_mut(frame).ok_or_else(|| {
            GpuError::InvalidArgument(format!("frame {frame} outside {n} frames in flight"))
        })
    }

    /// Starts frame `frame` (whose previous submission has finished): its
    /// records and sets are reused.
    pub fn begin_frame(&mut self, frame: usize) -> GpuResult<()> {
        let s = self.slot(frame)?;
        s.used = 0;
        s.sets_used = 0;
        Ok(())
    }

    fn check(&self, records: &[AnimRecord]) -> GpuResult<()> {
        let clips = self.store.clip_count();
        for (i, r) in records.iter().enumerate() {
            let bad = |f: String| {
                Err(GpuError::InvalidArgument(format!(
                    "GPU animation of mesh {:?} on path {}: record {i} {f}",
                    self.mesh_name, self.path_name
                )))
            };
            if r.clip_a as usize >= clips || (r.has_b() && r.clip_b as usize >= clips) {
                return bad(format!(
                    "plays clips {} and {} of {clips}",
                    r.clip_a, r.clip_b
                ));
            }
            let finite = [r.time_a, r.speed_a, r.time_b, r.speed_b]
                .iter()
                .all(|x| x.is_finite());
            if !finite || !(0.0..=1.0).contains(&r.weight) {
                return bad(format!(
                    "has times {} and {}, speeds {} and {}, weight {}",
                    r.time_a, r.time_b, r.speed_a, r.speed_b, r.weight
                ));
            }
        }
        Ok(())
    }

    /// Writes `records` (one per instance of `batch`, at frame time `now`)
    /// and records their animation into `cmd`: palettes written into the
    /// path's palette buffer for frame `frame`, with the barriers before
    /// (earlier reads of the buffer) and after (the vertex or compute
    /// stage's reads).
    pub fn record(
        &mut self,
        cmd: vk::CommandBuffer,
        path: &SkinPath,
        frame: usize,
        batch: &Batch,
        records: &[AnimRecord],
        now: f32,
    ) -> GpuResult<()> {
        if records.len() != batch.len() {
            return Err(GpuError::InvalidArgument(format!(
                "GPU animation of mesh {:?} on path {}: {} records for a batch of {}",
                self.mesh_name,
                self.path_name,
                records.len(),
                batch.len()
            )));
        }
        if path.desc().name != self.path_name {
            return Err(GpuError::InvalidArgument(format!(
                "GPU animation built for path {} given path {}",
                self.path_name,
                path.desc().name
            )));
        }
        if !now.is_finite() {
            return Err(GpuError::InvalidArgument(format!(
                "GPU animation at time {now}"
            )));
        }
        self.check(records)?;
        if records.is_empty() {
            return Ok(());
        }
        let d = self.device.clone();
        let limits = *d.limits();
        let palette = path.palette_buffer(frame)?;
        let range = palette
            .size()
            .min(u64::from(limits.max_storage_buffer_range));
        let end = (batch.palette_base() as u64)
            .saturating_add((batch.len() as u64).saturating_mul(batch.palette_stride() as u64))
            .saturating_mul(16);
        if end > range {
            return Err(GpuError::Limit {
                what: "palette bytes one GPU animation pass writes (maxStorageBufferRange)",
                needed: end,
                limit: range,
            });
        }
        let count = records.len();
        let max_x = limits.max_compute_work_group_count[0] as usize;
        let groups_x = count.min(max_x);
        let groups_y = count.div_ceil(groups_x);
        if groups_y > limits.max_compute_work_group_count[1] as usize {
            return Err(GpuError::Limit {
                what: "instances of one GPU animation pass (maxComputeWorkGroupCount)",
                needed: count as u64,
                limit: (max_x as u64) * u64::from(limits.max_compute_work_group_count[1]),
            });
        }
        // Records: appended to the frame's buffer, which grows by a new
        // one (an earlier dispatch of this frame keeps the old one alive
        // through its set until the frame retires).
        let set = {
            let need_set = {
                let s = self.slot(frame)?;
                s.sets_used == s.sets.len()
            };
            if need_set {
                let pool = DescriptorPool::new(&d, &[&self.set1_layout], SETS_PER_POOL)?;
                let sets = pool.allocate(&self.set1_layout, SETS_PER_POOL as usize)?;
                self.pools.push(pool);
                self.slot(frame)?.sets.extend(sets);
            }
            let s = self.slot(frame)?;
            let set = s.sets[s.sets_used];
            s.sets_used += 1;
            set
        };
        let s = self.slot(frame)?;
        let first = if s.used + count > s.cap || s.records.is_none() {
            let cap = (s.used + count).next_power_of_two().max(64);
            let buf = Buffer::new(
                &d,
                &BufferDesc::host(
                    "anim records",
                    (cap * std::mem::size_of::<AnimRecord>()) as u64,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
            )?;
            s.records = Some(buf);
            s.cap = cap;
            s.used = 0;
            0
        } else {
            s.used
        };
        let buf = s
            .records
            .as_mut()
            .ok_or_else(|| GpuError::InvalidArgument("GPU animation: no records buffer".into()))?;
        buf.write((first * std::mem::size_of::<AnimRecord>()) as u64, records)?;
        s.used = first + count;
        write_buffer(&d, set, 0, STORAGE, buf);
        write_buffer_range(&d, set, 1, STORAGE, palette, 0, range);
        let push = AnimPush {
            palette_base: batch.palette_base() as u32,
            palette_stride: batch.palette_stride() as u32,
            count: count as u32,
            first_record: first as u32,
            now,
            groups_x: groups_x as u32,
        };
        let read = vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::COMPUTE_SHADER;
        memory_barrier(
            &d,
            cmd,
            read,
            vk::AccessFlags2::NONE,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
        );
        self.pipeline.bind(cmd);
        let layout = self.pipeline.layout().raw();
        let bind = vk::PipelineBindPoint::COMPUTE;
        // SAFETY: `cmd` is recording outside a rendering scope (the
        // documented contract); both sets were allocated from this
        // pipeline's set layouts and written above or in `new` with
        // buffers that live until the frame retires (the store and
        // program through `self`, the records and the palette buffer
        // through their owners' retire queue); the push range is the
        // layout's; the group counts are within the device's limits
        // (checked above).
        unsafe {
            let raw = d.raw();
            raw.cmd_bind_descriptor_sets(cmd, bind, layout, 0, &[self.set0, set], &[]);
            raw.cmd_push_constants(
                cmd,
                layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytemuck::bytes_of(&push),
            );
            raw.cmd_dispatch(cmd, groups_x as u32, groups_y as u32, 1);
        }
        memory_barrier(
            &d,
            cmd,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
            read,
            vk::AccessFlags2::SHADER_READ | vk::AccessFlags2::UNIFORM_READ,
        );
        Ok(())
    }

    /// Records a barrier making the palettes written so far visible to the
    /// host (tests and tools that read them back after the frame's fence).
    pub fn barrier_to_host(&self, cmd: vk::CommandBuffer) {
        memory_barrier(
            &self.device,
            cmd,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
            vk::PipelineStageFlags2::HOST,
            vk::AccessFlags2::HOST_READ,
        );
    }
}
