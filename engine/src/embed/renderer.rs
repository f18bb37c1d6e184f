//! [`Renderer`]: vkskin's skinned characters drawn into a host's frame in
//! three calls per frame (see the module documentation of
//! [`crate::embed`] for the contract).

use std::sync::Arc;

use glam::Affine3A;

use super::frames::HostFrames;
use crate::anim::{
    AnimError, Clip, LocalToModelJob, PaletteHierarchy, PaletteReport, PlaybackMode,
    SamplingContext, SamplingJob, Skeleton, Skin, Transform, WeightSamplingJob,
};
use crate::assets::Model;
use crate::gpu::{vk, Device, GpuError, GpuResult};
use crate::materials::{ModelMaterials, TextureWarning};
use crate::skin::{
    Batch, FrameSets, FrameUniforms, GpuMaterial, PathDesc, PreparedMesh, SkinPath, SkinPathConfig,
};

/// A character added with [`Renderer::add_character`]: a model's meshes
/// uploaded for the renderer's skinning path, with its skeleton, skins and
/// clips.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CharacterId(usize);

/// An instance of a character, added with [`Renderer::add_instance`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstanceId(usize);

/// Where an instance's pose comes from at each [`Renderer::begin_frame`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pose {
    /// The skeleton's bind pose.
    Bind,
    /// Clip `clip` (an index into the character's model's `clips`) sampled
    /// at clip time `time_offset + time * speed`, where `time` is the frame
    /// time given to [`Renderer::begin_frame`], wrapped or clamped by
    /// `mode`. The instance keeps its sampling context from frame to frame.
    Clip {
        /// Index into the model's clips.
        clip: usize,
        /// Clip seconds at frame time 0.
        time_offset: f32,
        /// Play rate: 1 is real time, 0 holds, negative plays backwards.
        speed: f32,
        /// What happens past the clip's end.
        mode: PlaybackMode,
    },
    /// The joint model matrices the host last gave
    /// [`Renderer::set_joints`] (until it does, the instance keeps the
    /// joints it has: the bind pose for a new instance).
    Joints,
}

impl Pose {
    /// Clip `clip` looping in real time from its start at frame time 0.
    pub fn clip(clip: usize) -> Self {
        Pose::Clip {
            clip,
            time_offset: 0.0,
            speed: 1.0,
            mode: PlaybackMode::Loop,
        }
    }
}

/// A frame begun by [`Renderer::begin_frame`]: pass it to
/// [`Renderer::record`] (once per rendering scope) and give it back to
/// [`Renderer::end_frame`]. It is valid only until the next `begin_frame`.
#[must_use = "a begun frame is recorded with Renderer::record and closed with Renderer::end_frame"]
#[derive(Debug, PartialEq, Eq)]
pub struct Frame {
    slot: usize,
    serial: u64,
}

impl Frame {
    /// The frame-in-flight slot it was begun in.
    pub fn slot(&self) -> usize {
        self.slot
    }
}

/// One mesh of a character, prepared for the renderer's path.
struct CharacterMesh {
    prepared: PreparedMesh,
    /// Index into the character's skins.
    skin: usize,
    /// The material's base colour (white without one, or once the
    /// character's materials are loaded: the material applies it).
    tint: [f32; 4],
    /// The mesh's material index in the model (`SkinnedMesh::material`).
    material: Option<usize>,
    /// Its morph targets' run of the character's weight vector
    /// (`first_weight..first_weight + targets`); `None` without targets.
    morph: Option<std::ops::Range<usize>>,
}

struct Character {
    name: String,
    skeleton: Skeleton,
    skins: Vec<Skin>,
    clips: Vec<Clip>,
    meshes: Vec<CharacterMesh>,
    /// Morph weights where nothing animates them (the model's defaults,
    /// padded with zeros to the longest clip's weight tracks).
    weight_defaults: Vec<f32>,
    /// Live instances, in the order they were added.
    instances: Vec<usize>,
    /// Textures and factors, once [`Renderer::load_materials`] ran.
    materials: Option<ModelMaterials>,
}

struct Instance {
    character: usize,
    transform: Affine3A,
    tint: [f32; 4],
    pose: Pose,
    /// The sampling context of the clip `context_clip` (clip poses).
    context: SamplingContext,
    context_clip: Option<usize>,
    locals: Vec<Transform>,
    /// Model matrix of every joint.
    joints: Vec<Affine3A>,
    /// Skinning matrices per skin of the character.
    skins: Vec<Vec<Affine3A>>,
    /// `skins` must be recomputed from `joints` (a static pose changed).
    dirty: bool,
    /// The character's morph weight vector for this instance.
    weights: Vec<f32>,
    /// `weights` were set by the host ([`Renderer::set_morph_weights`]):
    /// clips do not sample them.
    weights_set: bool,
    /// Motion paths: the skinning matrices and weights the last frame drew
    /// (the previous pose of the next frame; no second animation pass).
    prev_skins: Vec<Vec<Affine3A>>,
    prev_weights: Vec<f32>,
    /// `prev_*` hold a previous frame: false for a new instance and after
    /// [`Renderer::teleport`] (that frame reports zero velocity).
    has_prev: bool,
}

/// One batch of the open frame: instances of one mesh of one character.
struct Drawn {
    batch: Batch,
    character: usize,
    mesh: usize,
}

/// The frame between [`Renderer::begin_frame`] and [`Renderer::end_frame`].
struct Open {
    slot: usize,
    serial: u64,
}

/// vkskin's skinned characters in a host's frame: one skinning path, its
/// per-frame storage and uniforms, the characters and their instances, and
/// the frame clock, behind three calls per frame.
///
/// Outside the frame loop: [`Renderer::new`], [`Renderer::add_character`]
/// per model, [`Renderer::add_instance`] per placed copy (with its
/// [`Pose`] source). Per frame, after the host waited for the slot's
/// previous submission and began its command buffer:
///
/// 1. [`Renderer::begin_frame`] outside any rendering scope: poses every
///    instance, writes the slot's palettes, instance records and uniforms,
///    and records the prepass (GPU timer start; the compute stage's
///    skinning dispatch);
/// 2. [`Renderer::record`] inside each of the host's rendering scopes that
///    should show the characters;
/// 3. [`Renderer::end_frame`] after the last scope (GPU timer end).
///
/// Between frames the host may move, re-pose, add or remove instances;
/// changes show from the next `begin_frame`.
pub struct Renderer {
    device: Arc<Device>,
    path: SkinPath,
    sets: FrameSets,
    clock: HostFrames,
    characters: Vec<Character>,
    instances: Vec<Option<Instance>>,
    drawn: Vec<Drawn>,
    report: PaletteReport,
    open: Option<Open>,
    /// The slot of the last frame begun: the next `begin_frame` reports it
    /// submitted.
    last_slot: Option<usize>,
    serial: u64,
}

fn anim_error(what: &str) -> impl Fn(AnimError) -> GpuError + '_ {
    move |e| GpuError::InvalidArgument(format!("{what}: {e}"))
}

impl Renderer {
    /// A renderer drawing through skinning path `path` (see
    /// [`crate::skin::auto`] to choose one) with `cfg`'s attachment formats,
    /// frames in flight, cull mode and shader sources. Capture mode is not
    /// for embedding (`cfg.capture` is an error); the draws are filled
    /// polygons.
    pub fn new(
        device: &Arc<Device>,
        path: &'static PathDesc,
        cfg: SkinPathConfig,
    ) -> GpuResult<Self> {
        if cfg.capture {
            return Err(GpuError::InvalidArgument(
                "the embedding renderer draws without capture buffers (use SkinPath to capture)"
                    .into(),
            ));
        }
        let frames = cfg.frames_in_flight;
        let path = SkinPath::new(device, path, cfg)?;
        Ok(Self {
            device: device.clone(),
            path,
            sets: FrameSets::new(device, frames)?,
            clock: HostFrames::new(device, frames)?,
            characters: Vec::new(),
            instances: Vec::new(),
            drawn: Vec::new(),
            report: PaletteReport::default(),
            open: None,
            last_slot: None,
            serial: 0,
        })
    }

    /// The skinning path it draws through.
    pub fn path(&self) -> &'static PathDesc {
        self.path.desc()
    }

    /// Frames in flight: the slots `begin_frame` accepts are
    /// `0..frames_in_flight()`.
    pub fn frames_in_flight(&self) -> usize {
        self.path.frames_in_flight()
    }

    /// Uploads every mesh of `model` for the renderer's path (a one-time
    /// submission on the host's queue that waits for itself: call it
    /// outside the frame loop, never while another thread uses the queue)
    /// and keeps a copy of its skeleton, skins and clips. Each mesh is
    /// tinted with its material's base colour. Meshes with morph targets
    /// are drawn morphed by each instance's weights: the model's defaults
    /// (`Model::default_morph_weights`), the weight tracks of the clip an
    /// instance plays, or what [`Renderer::set_morph_weights`] gave.
    pub fn add_character(&mut self, model: &Model) -> GpuResult<CharacterId> {
        let mut weight_defaults = model.default_morph_weights();
        let clip_weights = model.clips.iter().map(Clip::weight_count).max();
        weight_defaults.resize(weight_defaults.len().max(clip_weights.unwrap_or(0)), 0.0);
        let mut meshes = Vec::with_capacity(model.meshes.len());
        for mesh in &model.meshes {
            let skin = model.skins.get(mesh.skin).ok_or_else(|| {
                GpuError::InvalidArgument(format!(
                    "{}: mesh {:?} names skin {} of {}",
                    model.name,
                    mesh.name,
                    mesh.skin,
                    model.skins.len()
                ))
            })?;
            let hierarchy =
                PaletteHierarchy::new(skin, &model.skeleton).map_err(anim_error(&model.name))?;
            let tint = mesh
                .material
                .and_then(|m| model.materials.get(m))
                .map_or([1.0; 4], |m| m.base_color.to_array());
            let morph = if mesh.morph.is_empty() {
                None
            } else {
                let run = mesh.morph.first_weight..mesh.morph.first_weight + mesh.morph.len();
                if run.end > weight_defaults.len() {
                    return Err(GpuError::InvalidArgument(format!(
                        "{}: mesh {:?} takes morph weights {run:?}, the model's weight vector has {}",
                        model.name,
                        mesh.name,
                        weight_defaults.len()
                    )));
                }
                Some(run)
            };
            meshes.push(CharacterMesh {
                prepared: self.path.prepare(mesh, &hierarchy)?,
                skin: mesh.skin,
                tint,
                material: mesh.material,
                morph,
            });
        }
        for clip in &model.clips {
            if clip.joint_count() != model.skeleton.len() {
                return Err(GpuError::InvalidArgument(format!(
                    "{}: clip {:?} drives {} joints, the skeleton has {}",
                    model.name,
                    clip.name(),
                    clip.joint_count(),
                    model.skeleton.len()
                )));
            }
        }
        self.characters.push(Character {
            name: model.name.clone(),
            skeleton: model.skeleton.clone(),
            skins: model.skins.clone(),
            clips: model.clips.clone(),
            meshes,
            weight_defaults,
            instances: Vec::new(),
            materials: None,
        });
        Ok(CharacterId(self.characters.len() - 1))
    }

    /// Places an instance of `character` with model-to-world matrix
    /// `transform`, posed by `pose` from the next `begin_frame` on. Its
    /// tint is white (see [`Renderer::set_tint`]).
    pub fn add_instance(
        &mut self,
        character: CharacterId,
        transform: Affine3A,
        pose: Pose,
    ) -> GpuResult<InstanceId> {
        let c = self.characters.get_mut(character.0).ok_or_else(|| {
            GpuError::InvalidArgument(format!("character {} was never added", character.0))
        })?;
        check_pose(c, &pose)?;
        let joints = c.skeleton.bind_model();
        let skins = c
            .skins
            .iter()
            .map(|s| vec![Affine3A::IDENTITY; s.len()])
            .collect();
        let index = self.instances.len();
        self.instances.push(Some(Instance {
            character: character.0,
            transform,
            tint: [1.0; 4],
            pose,
            context: SamplingContext::default(),
            context_clip: None,
            locals: c.skeleton.bind_local().to_vec(),
            joints,
            skins,
            dirty: true,
            weights: c.weight_defaults.clone(),
            weights_set: false,
            prev_skins: Vec::new(),
            prev_weights: Vec::new(),
            has_prev: false,
        }));
        c.instances.push(index);
        Ok(InstanceId(index))
    }

    /// Flags a teleport of `instance` (a time jump, a clip change without
    /// crossfade, a cut): on a path with [`SkinPathConfig::motion`] its next
    /// frame's previous positions equal the current ones (zero velocity)
    /// instead of last frame's. No effect on other paths.
    pub fn teleport(&mut self, instance: InstanceId) -> GpuResult<()> {
        let i = self
            .instances
            .get_mut(instance.0)
            .and_then(Option::as_mut)
            .ok_or_else(|| no_instance(instance))?;
        i.has_prev = false;
        Ok(())
    }

    /// Removes an instance; its id is not reused.
    pub fn remove_instance(&mut self, instance: InstanceId) -> GpuResult<()> {
        let inst = self
            .instances
            .get_mut(instance.0)
            .and_then(Option::take)
            .ok_or_else(|| no_instance(instance))?;
        if let Some(c) = self.characters.get_mut(inst.character) {
            c.instances.retain(|&i| i != instance.0);
        }
        Ok(())
    }

    /// Sets an instance's model-to-world matrix.
    pub fn set_transform(&mut self, instance: InstanceId, transform: Affine3A) -> GpuResult<()> {
        self.instance_mut(instance)?.transform = transform;
        Ok(())
    }

    /// Sets an instance's tint, multiplied with each mesh's material
    /// colour (linear RGBA; white leaves the materials as they are).
    pub fn set_tint(&mut self, instance: InstanceId, tint: [f32; 4]) -> GpuResult<()> {
        self.instance_mut(instance)?.tint = tint;
        Ok(())
    }

    /// Sets where an instance's pose comes from. A new clip starts a fresh
    /// sampling context; [`Pose::Bind`] and [`Pose::Joints`] keep their
    /// matrices until changed. Morph weights return to the character's
    /// defaults, which a clip's weight tracks then animate.
    pub fn set_pose(&mut self, instance: InstanceId, pose: Pose) -> GpuResult<()> {
        let i = self
            .instances
            .get_mut(instance.0)
            .and_then(Option::as_mut)
            .ok_or_else(|| no_instance(instance))?;
        let c = &self.characters[i.character];
        check_pose(c, &pose)?;
        if pose == Pose::Bind {
            i.joints = c.skeleton.bind_model();
        }
        i.weights.copy_from_slice(&c.weight_defaults);
        i.weights_set = false;
        i.pose = pose;
        i.dirty = true;
        Ok(())
    }

    /// Poses an instance with the host's joint model matrices (one per
    /// skeleton joint, model space: what `LocalToModelJob` writes) and sets
    /// its pose source to [`Pose::Joints`]. The matrices are copied.
    pub fn set_joints(&mut self, instance: InstanceId, joints: &[Affine3A]) -> GpuResult<()> {
        let i = self
            .instances
            .get_mut(instance.0)
            .and_then(Option::as_mut)
            .ok_or_else(|| no_instance(instance))?;
        if joints.len() != i.joints.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{} joint matrices for a skeleton of {}",
                joints.len(),
                i.joints.len()
            )));
        }
        i.joints.copy_from_slice(joints);
        i.pose = Pose::Joints;
        i.dirty = true;
        Ok(())
    }

    /// Length of `character`'s morph weight vector (0 without morph
    /// targets): what [`Renderer::set_morph_weights`] takes.
    pub fn morph_weight_count(&self, character: CharacterId) -> GpuResult<usize> {
        self.characters
            .get(character.0)
            .map(|c| c.weight_defaults.len())
            .ok_or_else(|| {
                GpuError::InvalidArgument(format!("character {} was never added", character.0))
            })
    }

    /// Sets an instance's morph weights by hand: the character's whole
    /// weight vector ([`Renderer::morph_weight_count`] floats, finite, not
    /// clamped; each mesh reads its run). They hold, whatever clip the
    /// instance plays, until the next call or [`Renderer::set_pose`].
    pub fn set_morph_weights(&mut self, instance: InstanceId, weights: &[f32]) -> GpuResult<()> {
        let i = self.instance_mut(instance)?;
        if weights.len() != i.weights.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{} morph weights for a character's vector of {}",
                weights.len(),
                i.weights.len()
            )));
        }
        if let Some(k) = weights.iter().position(|w| !w.is_finite()) {
            return Err(GpuError::InvalidArgument(format!(
                "morph weight {k} is {}",
                weights[k]
            )));
        }
        i.weights.copy_from_slice(weights);
        i.weights_set = true;
        Ok(())
    }

    /// Begins frame slot `slot` (in `0..frames_in_flight()`) at frame time
    /// `time` seconds (what [`Pose::Clip`] instances sample), with the
    /// view-projection, colour and light of `uniforms`.
    ///
    /// The host has waited for the slot's previous submission (its fence)
    /// and submitted every frame it began before; `cmd` is its command
    /// buffer, recording, outside any rendering scope. On the CPU this poses
    /// every instance and writes the slot's palettes, instance records and
    /// uniforms into vkskin's host-coherent memory; into `cmd` it records
    /// the GPU timer's start and, on the compute stage, the skinning
    /// dispatch between its barriers. A frame begun before and never ended
    /// is dropped.
    pub fn begin_frame(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        time: f32,
        uniforms: &FrameUniforms,
    ) -> GpuResult<Frame> {
        if slot >= self.frames_in_flight() {
            return Err(GpuError::InvalidArgument(format!(
                "frame slot {slot} of {}",
                self.frames_in_flight()
            )));
        }
        if !time.is_finite() {
            return Err(GpuError::InvalidArgument(format!(
                "frame time {time} is not finite"
            )));
        }
        self.open = None;
        self.drawn.clear();
        self.pose_instances(time)?;
        // The frame begun before this one was submitted (the contract):
        // a one-time upload's fence may now retire it.
        if let Some(last) = self.last_slot.take() {
            self.clock.submitted(last)?;
        }
        self.clock.begin(slot)?;
        self.last_slot = Some(slot);
        self.path.begin_frame(slot)?;
        self.write_batches(slot)?;
        self.sets.write(slot, uniforms)?;
        self.path.prepass_iter(cmd, slot, self.batch_list())?;
        self.serial += 1;
        self.open = Some(Open {
            slot,
            serial: self.serial,
        });
        Ok(Frame {
            slot,
            serial: self.serial,
        })
    }

    /// Records every instance's draws into `cmd` inside the host's
    /// rendering scope (attachment formats as configured, viewport and
    /// scissor set by the host). Call it once per scope that should show
    /// the characters: every call draws the same frame.
    pub fn record(&self, cmd: vk::CommandBuffer, frame: &Frame) -> GpuResult<()> {
        self.check(frame)?;
        // Opaque and masked materials first, then the blended ones.
        for blended in [false, true] {
            for d in &self.drawn {
                let material = self.mesh_material(d.character, d.mesh);
                if material.is_some_and(GpuMaterial::blend) != blended {
                    continue;
                }
                let prepared = &self.characters[d.character].meshes[d.mesh].prepared;
                self.path.record_draw_with(
                    cmd,
                    frame.slot,
                    &self.sets,
                    &d.batch,
                    prepared,
                    vk::PolygonMode::FILL,
                    None,
                    material,
                )?;
            }
        }
        Ok(())
    }

    /// Ends the frame: records the GPU timer's end into `cmd`, after the
    /// last rendering scope with vkskin's draws. The host then ends and
    /// submits its command buffer.
    pub fn end_frame(&mut self, cmd: vk::CommandBuffer, frame: Frame) -> GpuResult<()> {
        self.check(&frame)?;
        self.path.finish(cmd, frame.slot)?;
        self.open = None;
        Ok(())
    }

    /// GPU milliseconds from `begin_frame`'s commands to `end_frame`'s in
    /// the last finished use of slot `slot` (read at that slot's next
    /// `begin_frame`; it includes whatever the host recorded in between).
    /// `None` before then or where the queue has no timestamps.
    pub fn gpu_ms(&self, slot: usize) -> Option<f64> {
        self.path.gpu_ms(slot)
    }

    /// What the path's encoding could not keep in the last frame's
    /// palettes (scale dropped by a quaternion encoding, say).
    pub fn report(&self) -> &PaletteReport {
        &self.report
    }

    /// Draws `character` with its model's materials (base-colour factor,
    /// texture, sampler, alpha mode; `model` is the one it was added from):
    /// reads and uploads the textures once (a submission on the host's
    /// queue, waited on: outside the frame loop) and returns the warnings
    /// for textures that could not be read (those materials draw with their
    /// factor). Without it a character draws untextured, each mesh tinted
    /// by its material's base colour.
    pub fn load_materials(
        &mut self,
        character: CharacterId,
        model: &Model,
    ) -> GpuResult<&[TextureWarning]> {
        let device = self.device.clone();
        let c = self.characters.get_mut(character.0).ok_or_else(|| {
            GpuError::InvalidArgument(format!("character {} was never added", character.0))
        })?;
        if model.meshes.len() != c.meshes.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{}: {} meshes, the character was added with {}",
                model.name,
                model.meshes.len(),
                c.meshes.len()
            )));
        }
        let materials = ModelMaterials::new(&device, model)?;
        for m in &mut c.meshes {
            m.tint = [1.0; 4];
        }
        Ok(c.materials.insert(materials).warnings())
    }

    /// The material mesh `mesh` of `character` draws with, once
    /// [`Renderer::load_materials`] ran (`None` before: untextured): its
    /// texture, sampler and factors, for a host shading it itself.
    pub fn material(&self, character: CharacterId, mesh: usize) -> Option<&GpuMaterial> {
        self.mesh_material(character.0, mesh)
    }

    fn mesh_material(&self, character: usize, mesh: usize) -> Option<&GpuMaterial> {
        let c = self.characters.get(character)?;
        let materials = c.materials.as_ref()?;
        let m = c.meshes.get(mesh)?;
        Some(
            m.material
                .and_then(|i| materials.get(i))
                .unwrap_or(materials.fallback()),
        )
    }

    /// The skinning path the renderer draws through, for the host routes
    /// (`super::host`).
    pub(super) fn skin_path(&self) -> &SkinPath {
        &self.path
    }

    /// Batch `index` of the open frame `frame`: its batch, mesh, character
    /// and mesh index.
    pub(super) fn drawn_batch(
        &self,
        frame: &Frame,
        index: usize,
    ) -> GpuResult<(&Batch, &PreparedMesh, CharacterId, usize)> {
        self.check(frame)?;
        let d = self.drawn.get(index).ok_or_else(|| {
            GpuError::InvalidArgument(format!("batch {index} of the frame's {}", self.drawn.len()))
        })?;
        let prepared = &self.characters[d.character].meshes[d.mesh].prepared;
        Ok((&d.batch, prepared, CharacterId(d.character), d.mesh))
    }

    /// Batches in the open frame `frame`.
    pub(super) fn drawn_len(&self, frame: &Frame) -> GpuResult<usize> {
        self.check(frame)?;
        Ok(self.drawn.len())
    }

    /// The live instances of `character`, in the order of its batches'
    /// instances.
    pub(super) fn character_instances(&self, character: CharacterId) -> Vec<InstanceId> {
        self.characters
            .get(character.0)
            .map(|c| c.instances.iter().map(|&i| InstanceId(i)).collect())
            .unwrap_or_default()
    }

    fn instance_mut(&mut self, instance: InstanceId) -> GpuResult<&mut Instance> {
        self.instances
            .get_mut(instance.0)
            .and_then(Option::as_mut)
            .ok_or_else(|| no_instance(instance))
    }

    fn check(&self, frame: &Frame) -> GpuResult<()> {
        match &self.open {
            Some(o) if o.serial == frame.serial && o.slot == frame.slot => Ok(()),
            _ => Err(GpuError::InvalidArgument(format!(
                "frame {} (slot {}) is not the renderer's open frame",
                frame.serial, frame.slot
            ))),
        }
    }

    /// Every instance's skinning matrices for frame time `time`.
    fn pose_instances(&mut self, time: f32) -> GpuResult<()> {
        for inst in self.instances.iter_mut().flatten() {
            let c = &self.characters[inst.character];
            if let Pose::Clip {
                clip,
                time_offset,
                speed,
                mode,
            } = inst.pose
            {
                let clip_ref = c.clips.get(clip).ok_or_else(|| {
                    GpuError::InvalidArgument(format!("{}: no clip {clip}", c.name))
                })?;
                if inst.context_clip != Some(clip) {
                    inst.context = SamplingContext::new(clip_ref);
                    inst.context_clip = Some(clip);
                }
                SamplingJob {
                    clip: clip_ref,
                    context: &mut inst.context,
                    time: time_offset + time * speed,
                    mode,
                    output: &mut inst.locals,
                }
                .run()
                .map_err(anim_error(&c.name))?;
                if !inst.weights_set && clip_ref.weight_count() > 0 {
                    WeightSamplingJob {
                        clip: clip_ref,
                        context: &mut inst.context,
                        time: time_offset + time * speed,
                        mode,
                        defaults: &c.weight_defaults,
                        output: &mut inst.weights,
                    }
                    .run()
                    .map_err(anim_error(&c.name))?;
                }
                LocalToModelJob::full(&c.skeleton, &inst.locals, &mut inst.joints)
                    .run()
                    .map_err(anim_error(&c.name))?;
            } else if !inst.dirty {
                continue;
            }
            for (skin, out) in c.skins.iter().zip(&mut inst.skins) {
                skin.skin_matrices(&inst.joints, out)
                    .map_err(anim_error(&c.name))?;
            }
            inst.dirty = false;
        }
        Ok(())
    }

    /// One batch per mesh of every character with instances, in the order
    /// characters were added and meshes are in their model.
    fn write_batches(&mut self, slot: usize) -> GpuResult<()> {
        let Self {
            path,
            characters,
            instances,
            drawn,
            report,
            ..
        } = self;
        let mut merged = PaletteReport::default();
        let motion = path.config().motion;
        for (ci, c) in characters.iter().enumerate() {
            if c.instances.is_empty() {
                continue;
            }
            for (mi, mesh) in c.meshes.iter().enumerate() {
                let mut writer = path.batch(slot, &mesh.prepared, c.instances.len())?;
                let batch = writer.batch();
                for (w, &ii) in writer.instances().zip(&c.instances) {
                    let inst = instances
                        .get(ii)
                        .and_then(Option::as_ref)
                        .ok_or_else(|| no_instance(InstanceId(ii)))?;
                    let skin = inst.skins.get(mesh.skin).ok_or_else(|| {
                        GpuError::InvalidArgument(format!("{}: no skin {}", c.name, mesh.skin))
                    })?;
                    let tint = std::array::from_fn(|k| mesh.tint[k] * inst.tint[k]);
                    let report = match &mesh.morph {
                        _ if motion => {
                            let weights = weights_run(&c.name, &inst.weights, &mesh.morph)?;
                            let prev = match (inst.has_prev, inst.prev_skins.get(mesh.skin)) {
                                (true, Some(p)) => Some((
                                    p.as_slice(),
                                    weights_run(&c.name, &inst.prev_weights, &mesh.morph)?,
                                )),
                                _ => None,
                            };
                            w.write_motion(skin, weights, prev, &inst.transform, tint)?
                        }
                        Some(run) => {
                            let weights = inst.weights.get(run.clone()).ok_or_else(|| {
                                GpuError::InvalidArgument(format!(
                                    "{}: morph weights {run:?} of {}",
                                    c.name,
                                    inst.weights.len()
                                ))
                            })?;
                            w.write_morphed(skin, weights, &inst.transform, tint)?
                        }
                        None => w.write(skin, &inst.transform, tint)?,
                    };
                    merged.merge(&report);
                }
                drawn.push(Drawn {
                    batch,
                    character: ci,
                    mesh: mi,
                });
            }
        }
        merged.lossy.sort_unstable();
        merged.lossy.dedup();
        *report = merged;
        if motion {
            // This frame's pose is the next frame's previous one.
            for inst in instances.iter_mut().flatten() {
                inst.prev_skins.clone_from(&inst.skins);
                inst.prev_weights.clone_from(&inst.weights);
                inst.has_prev = true;
            }
        }
        Ok(())
    }

    /// The frame's batches and their meshes (no list is collected).
    fn batch_list(&self) -> impl Iterator<Item = (&Batch, &PreparedMesh)> + Clone {
        self.drawn.iter().map(|d| {
            (
                &d.batch,
                &self.characters[d.character].meshes[d.mesh].prepared,
            )
        })
    }
}

/// A mesh's run of a character's weight vector `all` (empty for a mesh
/// without targets).
fn weights_run<'w>(
    name: &str,
    all: &'w [f32],
    run: &Option<std::ops::Range<usize>>,
) -> GpuResult<&'w [f32]> {
    let run = run.clone().unwrap_or(0..0);
    all.get(run.clone()).ok_or_else(|| {
        GpuError::InvalidArgument(format!("{name}: morph weights {run:?} of {}", all.len()))
    })
}

fn no_instance(instance: InstanceId) -> GpuError {
    GpuError::InvalidArgument(format!("instance {} does not exist", instance.0))
}

fn check_pose(c: &Character, pose: &Pose) -> GpuResult<()> {
    if let Pose::Clip {
        clip,
        time_offset,
        speed,
        ..
    } = *pose
    {
        if clip >= c.clips.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{}: clip {clip} of {}",
                c.name,
                c.clips.len()
            )));
        }
        if !(time_offset.is_finite() && speed.is_finite()) {
            return Err(GpuError::InvalidArgument(format!(
                "{}: clip time offset {time_offset} and speed {speed} must be finite",
                c.name
            )));
        }
    }
    Ok(())
}
