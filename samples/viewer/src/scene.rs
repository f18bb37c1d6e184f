//! A model on the GPU, independent of where it is drawn: its skinning path
//! and prepared meshes, the pose's palettes, the frame uniforms, and the
//! recorded draws (the headless contract's, plus the windowed overlays).

use std::sync::Arc;

use vkskin::anim::{LocalToModelJob, PaletteHierarchy, PaletteReport, Transform};
use vkskin::assets::{Bounds, Model};
use vkskin::glam::{Affine3A, Mat4};
use vkskin::gpu::{vk, Device, GpuError, ShaderSources};
use vkskin::materials::ModelMaterials;
use vkskin::mesh::{normalize_influences, SkinnedMesh};
use vkskin::render::JointMarkers;
use vkskin::skin::anim::{AnimRecord, AnimateOn};
use vkskin::skin::{
    Batch, FrameSets, FrameUniforms, PathDesc, PreparedMesh, SkinPath, SkinPathConfig,
};

use crate::gpu_anim::{Fallback, GpuAnim};
use crate::{BOUNDS_SAMPLES, LIGHT};

const MARKER: [f32; 4] = [1.0, 0.45, 0.15, 1.0];

/// How a scene draws.
#[derive(Clone, Debug)]
pub struct SceneDesc {
    pub color_format: vk::Format,
    pub depth_format: vk::Format,
    pub frames_in_flight: usize,
    /// Build wireframe pipelines and joint markers (the window's extras).
    pub extras: bool,
    /// Where the animation is asked to run (the GPU where it can serve the
    /// path, else the CPU with the reason: [`Scene::anim_fallback`]).
    pub anim: AnimateOn,
}

/// The longest skin's palette (at least 1): what `skin::auto` is asked about.
pub fn palette_bones(model: &Model) -> usize {
    model
        .skins
        .iter()
        .map(|s| s.len())
        .max()
        .unwrap_or(0)
        .max(1)
}

/// A model ready to draw through one skinning path.
pub struct Scene {
    device: Arc<Device>,
    pub model: Model,
    /// The model's animated bounds (what the camera frames).
    pub bounds: Bounds,
    desc: SceneDesc,
    path: SkinPath,
    meshes: Vec<PreparedMesh>,
    hierarchies: Vec<PaletteHierarchy>,
    /// Influences per vertex the meshes were prepared with (`None`: as
    /// loaded).
    influences: Option<usize>,
    frame_sets: FrameSets,
    batches: Vec<Option<Batch>>,
    /// The model's materials (textures uploaded once, kept across path
    /// changes).
    pub materials: ModelMaterials,
    /// Model matrix of every joint for the current pose.
    pub joints: Vec<Affine3A>,
    skins: Vec<Vec<Affine3A>>,
    /// The model's morph weight vector for the next update (meshes with
    /// targets draw their slice of it through `write_morphed`).
    weights: Vec<f32>,
    markers: Option<JointMarkers>,
    /// What the encoding could not keep in the last frame's palettes.
    pub report: PaletteReport,
    /// The motion view: the path is built with motion vectors and draws
    /// world-space velocity as colour (`skin/skinned.frag`).
    motion: bool,
    /// The last frame's palettes and weights (motion view; `None` after a
    /// teleport: the next frame has zero velocity).
    previous: Option<(Vec<Vec<Affine3A>>, Vec<f32>)>,
    /// Seconds of animation between the last frame and the next (the
    /// motion view's colour scale); set by the caller.
    pub motion_dt: f32,
    /// GPU animation, when asked for and able to serve the path.
    gpu: Option<GpuAnim>,
    /// Why GPU animation was asked for and the CPU animates.
    fallback: Option<Fallback>,
}

/// The motion view's colour saturates at this many bounds diagonals per
/// second of world-space speed.
pub const MOTION_FULL_SCALE: f32 = 0.25;

fn gpu(e: GpuError) -> String {
    e.to_string()
}

impl Scene {
    /// Prepares `model` on the path named `path` (default: `skin::auto`'s
    /// choice for the longest skin and one instance).
    pub fn new(
        device: &Arc<Device>,
        model: Model,
        path: Option<&str>,
        desc: SceneDesc,
    ) -> Result<Self, String> {
        let name = model.name.clone();
        let bounds = model
            .animated_bounds(BOUNDS_SAMPLES)
            .map_err(|e| format!("{name}: bounds: {e}"))?;
        let path_desc = match path {
            Some(p) => vkskin::skin::find(p).ok_or_else(|| {
                format!(
                    "unknown skinning path {p:?}; paths: {}",
                    vkskin::skin::registry::names()
                )
            })?,
            None => vkskin::skin::auto(device, palette_bones(&model), 1).0,
        };
        let hierarchies = model
            .skins
            .iter()
            .map(|s| PaletteHierarchy::new(s, &model.skeleton))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{name}: {e}"))?;
        let (path, meshes) =
            build_path(device, &desc, path_desc, &model, &hierarchies, None, false)?;
        let frame_sets = FrameSets::new(device, desc.frames_in_flight).map_err(gpu)?;
        let markers = if desc.extras {
            Some(
                JointMarkers::new(
                    device,
                    &ShaderSources::embedded(),
                    desc.color_format,
                    desc.depth_format,
                )
                .map_err(gpu)?,
            )
        } else {
            None
        };
        let materials = ModelMaterials::new(device, &model).map_err(gpu)?;
        let skins = model
            .skins
            .iter()
            .map(|s| vec![Affine3A::IDENTITY; s.len()])
            .collect();
        Ok(Self {
            device: device.clone(),
            bounds,
            desc,
            path,
            batches: vec![None; meshes.len()],
            meshes,
            hierarchies,
            influences: None,
            frame_sets,
            materials,
            joints: model.skeleton.bind_model(),
            skins,
            weights: model.default_morph_weights(),
            markers,
            report: PaletteReport::default(),
            model,
            motion: false,
            previous: None,
            motion_dt: 1.0 / 30.0,
            gpu: None,
            fallback: None,
        })
        .map(|mut s: Self| {
            s.refresh_anim();
            s
        })
    }

    /// Builds (or drops) GPU animation for the current path and meshes.
    fn refresh_anim(&mut self) {
        self.gpu = None;
        self.fallback = None;
        if self.desc.anim == AnimateOn::Gpu {
            match GpuAnim::new(
                &self.device,
                &self.model,
                &self.path,
                &self.meshes,
                self.motion,
                self.desc.frames_in_flight,
            ) {
                Ok(g) => self.gpu = Some(g),
                Err(why) => self.fallback = Some(why),
            }
        }
    }

    /// Where the animation runs now.
    pub fn anim_on(&self) -> AnimateOn {
        if self.gpu.is_some() {
            AnimateOn::Gpu
        } else {
            AnimateOn::Cpu
        }
    }

    /// Where the animation was asked to run.
    pub fn anim_asked(&self) -> AnimateOn {
        self.desc.anim
    }

    /// Why GPU animation was asked for and the CPU animates (`None`: it
    /// runs where asked).
    pub fn anim_fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// "animation on the GPU", or "animation on the CPU" with the reason
    /// when the GPU was asked for: the stats line's words.
    pub fn anim_text(&self) -> String {
        match (&self.gpu, &self.fallback) {
            (Some(_), _) => "animation on the GPU".into(),
            (None, Some(why)) => {
                format!("animation on the CPU (GPU animation cannot serve: {why})")
            }
            (None, None) => "animation on the CPU".into(),
        }
    }

    /// Asks for the animation on `on`: rebuilds the path (GPU animation
    /// writes the palette buffers as storage buffers) and the animators;
    /// where the GPU cannot serve, the CPU animates ([`Scene::anim_fallback`]).
    pub fn set_anim(&mut self, on: AnimateOn) -> Result<(), String> {
        if on == self.desc.anim {
            return Ok(());
        }
        let mut desc = self.desc.clone();
        desc.anim = on;
        let (path, meshes) = self.rebuild(&desc, self.path.desc(), self.influences, self.motion)?;
        self.path = path;
        self.meshes = meshes;
        self.batches.fill(None);
        self.desc = desc;
        self.refresh_anim();
        Ok(())
    }

    /// The record GPU animation draws the next frame with (ignored when
    /// the CPU animates).
    pub fn set_record(&mut self, record: AnimRecord) {
        if let Some(g) = &mut self.gpu {
            g.record = record;
        }
    }

    /// GPU milliseconds of the animation pass, last read (`None`: the CPU
    /// animates, or the queue has no timestamps).
    pub fn anim_gpu_ms(&self) -> Option<f64> {
        self.gpu.as_ref().and_then(|g| g.last_ms)
    }

    /// Reads slot `frame`'s animation-pass time now that its fence has
    /// passed (headless frames wait for each submission).
    pub fn collect_anim_ms(&mut self, frame: usize) -> Result<Option<f64>, String> {
        match &mut self.gpu {
            Some(g) => {
                g.collect(frame)?;
                Ok(g.last_ms)
            }
            None => Ok(None),
        }
    }

    /// Whether the motion view is on.
    pub fn motion_view(&self) -> bool {
        self.motion
    }

    /// Turns the motion view on or off: rebuilds the path with (or
    /// without) motion vectors; the first frame after has zero velocity.
    pub fn set_motion_view(&mut self, on: bool) -> Result<(), String> {
        if on == self.motion {
            return Ok(());
        }
        let (path, meshes) = self.rebuild(&self.desc, self.path.desc(), self.influences, on)?;
        self.path = path;
        self.meshes = meshes;
        self.batches.fill(None);
        self.motion = on;
        self.previous = None;
        self.refresh_anim();
        Ok(())
    }

    /// Flags a time jump (seek, clip change, path change): the next frame
    /// of the motion view has zero velocity.
    pub fn teleport(&mut self) {
        self.previous = None;
    }

    pub fn path(&self) -> &'static PathDesc {
        self.path.desc()
    }

    pub fn frames_in_flight(&self) -> usize {
        self.desc.frames_in_flight
    }

    /// Influence slots per vertex as loaded (the most any mesh has).
    pub fn loaded_influences(&self) -> usize {
        self.model
            .meshes
            .iter()
            .map(|m| m.influences.per_vertex)
            .max()
            .unwrap_or(1)
    }

    /// Influences the meshes are drawn with now.
    pub fn influences(&self) -> usize {
        self.influences.unwrap_or_else(|| self.loaded_influences())
    }

    pub fn gpu_vertices(&self) -> usize {
        self.meshes
            .iter()
            .map(|m| m.gpu_vertex_count() as usize)
            .sum()
    }

    pub fn draw_parts(&self) -> usize {
        self.meshes.iter().map(|m| m.parts().len()).sum()
    }

    /// Switches to `desc`; on failure (a mesh the path cannot serve) the
    /// current path stays and the error says why.
    pub fn set_path(&mut self, desc: &'static PathDesc) -> Result<(), String> {
        let (path, meshes) = self.rebuild(&self.desc, desc, self.influences, self.motion)?;
        // The old path and meshes retire once the frames that used them have.
        self.path = path;
        self.meshes = meshes;
        self.batches.fill(None);
        self.refresh_anim();
        Ok(())
    }

    /// Re-prepares the meshes keeping at most `k` influences per vertex
    /// (`None`: as loaded).
    pub fn set_influences(&mut self, k: Option<usize>) -> Result<(), String> {
        let k = k.map(|k| k.clamp(1, self.loaded_influences()));
        let k = k.filter(|&k| k != self.loaded_influences());
        let (path, meshes) = self.rebuild(&self.desc, self.path.desc(), k, self.motion)?;
        self.path = path;
        self.meshes = meshes;
        self.batches.fill(None);
        self.influences = k;
        self.refresh_anim();
        Ok(())
    }

    /// A new path and prepared meshes for this scene's model and device,
    /// with `desc`, `path_desc`, `influences` and `motion` in place of the
    /// current ones.
    fn rebuild(
        &self,
        desc: &SceneDesc,
        path_desc: &'static PathDesc,
        influences: Option<usize>,
        motion: bool,
    ) -> Result<(SkinPath, Vec<PreparedMesh>), String> {
        build_path(
            &self.device,
            desc,
            path_desc,
            &self.model,
            &self.hierarchies,
            influences,
            motion,
        )
    }

    /// Rebuilds the per-frame storage for `n` frames in flight. The caller
    /// has idled the device.
    pub fn set_frames_in_flight(&mut self, n: usize) -> Result<(), String> {
        let mut desc = self.desc.clone();
        desc.frames_in_flight = n;
        let (path, meshes) = self.rebuild(&desc, self.path.desc(), self.influences, self.motion)?;
        let frame_sets = FrameSets::new(&self.device, n).map_err(gpu)?;
        self.path = path;
        self.meshes = meshes;
        self.frame_sets = frame_sets;
        self.batches.fill(None);
        self.desc = desc;
        self.refresh_anim();
        Ok(())
    }

    /// Poses the skeleton with `locals`: joint model matrices and every
    /// skin's palette.
    pub fn pose(&mut self, locals: &[Transform]) -> Result<(), String> {
        let name = &self.model.name;
        LocalToModelJob::full(&self.model.skeleton, locals, &mut self.joints)
            .run()
            .map_err(|e| format!("{name}: {e}"))?;
        for (skin, out) in self.model.skins.iter().zip(&mut self.skins) {
            skin.skin_matrices(&self.joints, out)
                .map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }

    /// The box around the posed model from each mesh's joint boxes
    /// (`PreparedMesh::joint_bounds`, with the scene's morph weights): it
    /// holds every vertex a linear-blend path draws; a dual-quaternion
    /// path's blend may bulge past it. `None` when a mesh has no joint
    /// boxes.
    pub fn skinned_bounds(&self) -> Option<vkskin::mesh::Aabb> {
        let weights = &self.weights;
        let mut out = vkskin::mesh::Aabb::EMPTY;
        for (prepared, mesh) in self.meshes.iter().zip(&self.model.meshes) {
            let b = prepared
                .joint_bounds()?
                .skinned(self.skins.get(mesh.skin)?, weights)
                .ok()?;
            out.extend(b.min);
            out.extend(b.max);
        }
        (!out.is_empty()).then_some(out)
    }

    /// The morph weight vector the next [`Scene::update`] draws with (the
    /// model's defaults until set).
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// Sets the model's morph weight vector (its length is kept: missing
    /// weights are 0, extra ones ignored).
    pub fn set_weights(&mut self, weights: &[f32]) {
        let n = self.weights.len();
        self.weights.fill(0.0);
        let k = weights.len().min(n);
        self.weights[..k].copy_from_slice(&weights[..k]);
    }

    /// Writes frame `frame`'s palettes, instance records and uniforms (its
    /// previous submission has finished). Meshes with morph targets are
    /// written with their slice of [`Scene::weights`].
    pub fn update(&mut self, frame: usize, view_proj: Mat4) -> Result<(), String> {
        self.path.begin_frame(frame).map_err(gpu)?;
        if let Some(g) = &mut self.gpu {
            g.begin_frame(frame)?;
        }
        let mut report = PaletteReport::default();
        for (i, mesh) in self.meshes.iter().enumerate() {
            let skin = &self.skins[self.model.meshes[i].skin];
            // The material (factor, texture) is set 4's; the tint stays white.
            let tint = [1.0; 4];
            let mut writer = self.path.batch(frame, mesh, 1).map_err(gpu)?;
            self.batches[i] = Some(writer.batch());
            let targets = &self.model.meshes[i].morph;
            let r = if self.gpu.is_some() {
                // The palettes are the animation pass's (`prepass`).
                writer
                    .write_records(|_| (Affine3A::IDENTITY, tint))
                    .map(|()| PaletteReport::default())
            } else if self.motion {
                let w = targets.weights(&self.weights).unwrap_or(&[]);
                let previous = self.previous.as_ref().map(|(skins, weights)| {
                    (
                        skins[self.model.meshes[i].skin].as_slice(),
                        targets.weights(weights).unwrap_or(&[]),
                    )
                });
                let mut report = PaletteReport::default();
                for instance in writer.instances() {
                    let r = instance.write_motion(skin, w, previous, &Affine3A::IDENTITY, tint);
                    report.merge(&r.map_err(gpu)?);
                }
                Ok(report)
            } else if targets.is_empty() {
                writer.write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, tint))
            } else {
                let w = targets.weights(&self.weights).ok_or_else(|| {
                    format!(
                        "{}: mesh {i} reads morph weights past the model's {}",
                        self.model.name,
                        self.weights.len()
                    )
                })?;
                writer.write_all_morphed(|_| (skin.as_slice(), w, Affine3A::IDENTITY, tint))
            }
            .map_err(gpu)?;
            report.merge(&r);
        }
        self.report = report;
        let (color, light) = if self.motion {
            self.previous = Some((self.skins.clone(), self.weights.clone()));
            let speed = MOTION_FULL_SCALE * self.bounds.diagonal() * self.motion_dt;
            let scale = if speed > 0.0 { 1.0 / speed } else { 0.0 };
            ([1.0, 1.0, 1.0, scale], [LIGHT[0], LIGHT[1], LIGHT[2], 2.0])
        } else {
            ([1.0; 4], LIGHT)
        };
        self.frame_sets
            .write(
                frame,
                &FrameUniforms {
                    view_proj: view_proj.to_cols_array_2d(),
                    color,
                    light,
                },
            )
            .map_err(gpu)
    }

    fn batch_list(&self) -> Result<Vec<(&Batch, &PreparedMesh)>, String> {
        batch_list(&self.batches, &self.meshes)
    }

    /// Records what precedes the rendering scope (GPU animation, GPU
    /// timer, compute skinning).
    pub fn prepass(&mut self, cmd: vk::CommandBuffer, frame: usize) -> Result<(), String> {
        let list = batch_list(&self.batches, &self.meshes)?;
        if let Some(g) = &mut self.gpu {
            g.record(cmd, &self.path, frame, &list)?;
        }
        self.path.prepass(cmd, frame, &list).map_err(gpu)
    }

    /// Records the meshes inside a rendering scope (any number of passes).
    pub fn record(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        wireframe: bool,
    ) -> Result<(), String> {
        let polygon = if wireframe && self.wireframe_available() {
            vk::PolygonMode::LINE
        } else {
            vk::PolygonMode::FILL
        };
        // Opaque (and masked) meshes first, then the blended ones.
        let list = self.batch_list()?;
        for blended in [false, true] {
            for ((b, m), mesh) in list.iter().zip(&self.model.meshes) {
                let material = self.materials.for_mesh(mesh);
                if material.blend() != blended {
                    continue;
                }
                self.path
                    .record_draw_with(
                        cmd,
                        frame,
                        &self.frame_sets,
                        b,
                        m,
                        polygon,
                        None,
                        Some(material),
                    )
                    .map_err(gpu)?;
            }
        }
        Ok(())
    }

    pub fn wireframe_available(&self) -> bool {
        self.desc.extras && self.device.features().fill_mode_non_solid
    }

    /// Records a cross at every joint (the skeleton overlay's markers).
    pub fn record_markers(&self, cmd: vk::CommandBuffer, view_proj: Mat4) {
        if let Some(m) = &self.markers {
            let size = (self.bounds.diagonal() * 0.015).max(1e-3);
            m.record(cmd, view_proj, &self.joints, size, MARKER);
        }
    }

    /// Records the GPU timer's end.
    pub fn finish(&self, cmd: vk::CommandBuffer, frame: usize) -> Result<(), String> {
        self.path.finish(cmd, frame).map_err(gpu)
    }

    /// GPU milliseconds of the path's work in slot `frame`'s last use.
    pub fn gpu_ms(&self, frame: usize) -> Option<f64> {
        self.path.gpu_ms(frame)
    }
}

/// Each mesh with its batch of the frame.
fn batch_list<'a>(
    batches: &'a [Option<Batch>],
    meshes: &'a [PreparedMesh],
) -> Result<Vec<(&'a Batch, &'a PreparedMesh)>, String> {
    batches
        .iter()
        .zip(meshes)
        .map(|(b, m)| {
            b.as_ref()
                .map(|b| (b, m))
                .ok_or_else(|| "Scene::record before Scene::update".to_string())
        })
        .collect()
}

/// A new path and every mesh prepared for it (with at most `influences`
/// per vertex when given).
fn build_path(
    device: &Arc<Device>,
    desc: &SceneDesc,
    path_desc: &'static PathDesc,
    model: &Model,
    hierarchies: &[PaletteHierarchy],
    influences: Option<usize>,
    motion: bool,
) -> Result<(SkinPath, Vec<PreparedMesh>), String> {
    let mut cfg = SkinPathConfig::new(desc.color_format, desc.depth_format, desc.frames_in_flight);
    cfg.wireframe = desc.extras && device.features().fill_mode_non_solid;
    cfg.motion = motion;
    cfg.gpu_animation = desc.anim == AnimateOn::Gpu;
    let mut path = SkinPath::new(device, path_desc, cfg).map_err(gpu)?;
    let mut meshes = Vec::with_capacity(model.meshes.len());
    for mesh in &model.meshes {
        let hierarchy = hierarchies.get(mesh.skin).ok_or_else(|| {
            format!(
                "{}: mesh {:?} names skin {} of {}",
                model.name,
                mesh.name,
                mesh.skin,
                hierarchies.len()
            )
        })?;
        let reduced;
        let source: &SkinnedMesh = match influences {
            Some(k) if k < mesh.influences.per_vertex => {
                let (inf, _) = normalize_influences(&mesh.influences, k, 0);
                reduced = SkinnedMesh {
                    influences: inf,
                    ..mesh.clone()
                };
                &reduced
            }
            _ => mesh,
        };
        meshes.push(path.prepare(source, hierarchy).map_err(gpu)?);
    }
    Ok((path, meshes))
}
