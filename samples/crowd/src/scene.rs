//! The crowd, independent of where it is drawn: the character and its
//! grid, the parallel animator, the skinning path with its per-frame
//! batches, and the timing of each frame's CPU work.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use vkskin::anim::{
    encode_dual_quat, encode_dual_quat_scale, Crowd, CrowdInstance, DualQuat, PaletteHierarchy,
    Parallelism,
};
use vkskin::assets::builtin::Character;
use vkskin::assets::{Bounds, Model};
use vkskin::glam::{Affine3A, Mat3A, Mat4, Quat, Vec2, Vec3};
use vkskin::gpu::{vk, Device};
use vkskin::mesh::{Aabb, JointBounds};
use vkskin::render::{Camera, Projection};
use vkskin::skin::anim::AnimateOn;
use vkskin::skin::{
    auto, Batch, BlendBound, FrameSets, FrameUniforms, PreparedMesh, SkinPath, SkinPathConfig,
};

/// The most instances the sample accepts, whatever the device allows (ten
/// times the crowds it is meant for): the crowd, its placements and, on
/// push paths, the palettes live in host memory, sized by the count.
pub const MAX_INSTANCES: usize = 100_000;

/// The character every instance plays: a model, the skin the crowd
/// animates, the meshes bound to it, and its animated bounds.
#[derive(Clone)]
pub struct Cast {
    /// The model's name or file, for messages.
    pub label: String,
    pub model: Model,
    /// The skin whose meshes have the most vertices; the crowd animates it.
    pub skin: usize,
    /// The meshes bound to that skin (each drawn as one batch).
    pub meshes: Vec<usize>,
    /// The up axis the instances stand on, in the file's terms.
    pub up: sample_common::Up,
    /// Turns the model's up axis onto +Y: every instance's matrix starts
    /// with it.
    pub upright: Affine3A,
    /// The animated bounds, turned upright.
    pub bounds: Bounds,
    /// The animated bounds in the model's space.
    animated: Bounds,
    /// What was left out, for the user.
    pub notes: Vec<String>,
}

impl Cast {
    /// The built-in character, or the glTF / .x file at `file`, whose up
    /// axis is `up` in its file's terms.
    /// With `clips` (a `.vkclip` file), the file's clips replace the
    /// model's; its skeleton must be the model's (joint count, names,
    /// parents), else an `Err` naming both files.
    pub fn load(
        file: Option<&Path>,
        up: sample_common::Up,
        clips: Option<&Path>,
    ) -> Result<Self, String> {
        let (label, mut model) = match file {
            None => ("the built-in character".to_string(), Character::model()),
            Some(f) if f.to_str() == Some("builtin:morph") => (
                "the built-in morph demo".to_string(),
                vkskin::assets::builtin::MorphBlob::default().model(),
            ),
            Some(f) => (
                f.display().to_string(),
                vkskin::assets::load(f).map_err(|e| e.to_string())?,
            ),
        };
        if let Some(c) = clips {
            sample_common::clips::attach(&mut model, &label, c)?;
        }
        // The skin with the most vertices bound to it (a file's first mesh
        // may be a prop: tiny_4anim.x's is 9 vertices).
        let Some(first) = model.meshes.iter().max_by_key(|m| {
            model
                .meshes
                .iter()
                .filter(|o| o.skin == m.skin)
                .map(|o| o.vertex_count())
                .sum::<usize>()
        }) else {
            return Err(format!("{label}: no meshes to draw"));
        };
        if model.clips.is_empty() {
            return Err(format!(
                "{label}: no animation clips (the crowd plays the model's clips)"
            ));
        }
        let skin = first.skin;
        if skin >= model.skins.len() {
            return Err(format!(
                "{label}: mesh {:?} names skin {skin} of {}",
                first.name,
                model.skins.len()
            ));
        }
        let meshes: Vec<usize> = (0..model.meshes.len())
            .filter(|&k| model.meshes[k].skin == skin)
            .collect();
        let mut notes = Vec::new();
        if meshes.len() < model.meshes.len() {
            notes.push(format!(
                "{label}: the crowd animates skin {skin} (the one with the most vertices); {} of {} meshes use it and are drawn, the others are left out",
                meshes.len(),
                model.meshes.len()
            ));
        }
        if meshes.len() > 1 {
            notes.push(format!(
                "{label}: {} meshes share the crowd's skin; each is its own batch, animated into its own storage",
                meshes.len()
            ));
        }
        let bounds = model
            .animated_bounds(8)
            .map_err(|e| format!("{label}: bounds: {e}"))?;
        if bounds.is_empty() {
            return Err(format!("{label}: no finite skinned vertex to frame"));
        }
        let mut cast = Self {
            label,
            model,
            skin,
            meshes,
            up,
            upright: Affine3A::IDENTITY,
            bounds,
            animated: bounds,
            notes,
        };
        cast.stand(up);
        Ok(cast)
    }

    /// Stands the instances on the file's axis `up`: the upright turn and
    /// the turned bounds.
    pub fn stand(&mut self, up: sample_common::Up) {
        let upright = Affine3A::from_quat(Quat::from_rotation_arc(
            self.model.file_axis(up.vector()),
            Vec3::Y,
        ));
        let bounds = self.animated;
        let (lo, hi) = (0..8).fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), c| {
                let corner = Vec3::select(
                    vkskin::glam::BVec3::new(c & 1 != 0, c & 2 != 0, c & 4 != 0),
                    bounds.max,
                    bounds.min,
                );
                let p = upright.transform_point3(corner);
                (lo.min(p), hi.max(p))
            },
        );
        self.up = up;
        self.upright = upright;
        self.bounds = Bounds { min: lo, max: hi };
    }

    /// Vertices one instance draws.
    pub fn vertex_count(&self) -> usize {
        self.meshes
            .iter()
            .map(|&k| self.model.meshes[k].vertex_count())
            .sum()
    }
}

/// What the crowd is asked for on the command line.
#[derive(Clone, Debug)]
pub struct CrowdOptions {
    pub instances: usize,
    /// A registry name; `None` asks `skin::auto`.
    pub path: Option<String>,
    pub threads: Parallelism,
    /// Seeds each instance's phase, speed, turn and tint.
    pub seed: u64,
    /// Skip the instances whose skinned box is outside the view.
    pub cull: bool,
    /// The camera moved towards the grid's centre by this factor (1: the
    /// whole grid in view).
    pub zoom: f32,
    /// Where the crowd is animated.
    pub anim: AnimateOn,
    /// Animate the morph weights (each instance's clip's weight tracks);
    /// false keeps every instance at the model's default weights.
    pub morph: bool,
}

/// The CPU side of one frame, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameTimes {
    /// Sampling, local-to-model and skinning matrices of every instance:
    /// a twin of the crowd (same instances, same time) animated into a
    /// sink that keeps nothing.
    pub anim_ms: f64,
    /// Writing the frame's storage: the batches filled by animating the
    /// crowd into them, less the twin's animation alone (once per mesh
    /// drawn). On the CPU stage this includes the CPU skinning.
    pub upload_ms: f64,
}

/// The crowd on one skinning path.
pub struct CrowdScene {
    crowd: Crowd,
    /// The same crowd, animated alone for the animation figure: its
    /// sampling cursors move exactly as the drawn crowd's do, so neither
    /// run finds the other's keys already looked up.
    twin: Crowd,
    path: SkinPath,
    why: String,
    meshes: Vec<PreparedMesh>,
    /// Per mesh drawn, the colour the instance tints multiply.
    colors: Vec<[f32; 4]>,
    batches: Vec<Batch>,
    /// Per instance: model-to-world matrix and tint.
    placements: Vec<(Affine3A, [f32; 4])>,
    /// The generator as the placements began (`restand` draws them again).
    place_rng: SplitMix64,
    frame_sets: FrameSets,
    /// The grid's box, which the camera frames.
    grid_min: Vec3,
    grid_max: Vec3,
    threads: Parallelism,
    warned_lossy: bool,
    /// Per mesh drawn, its joint boxes; `None` when culling is off (asked,
    /// or the path's encoding is one the boxes are not shown to hold).
    cull: Option<Vec<JointBounds>>,
    /// Which box the path's blend needs, with what its dual-quaternion
    /// bound reads per instance.
    cull_blend: CullBlend,
    /// Culling: every instance's skinning matrices (one palette each) and
    /// the instances in view.
    matrices: Vec<Affine3A>,
    visible: Vec<usize>,
    /// Morph targets: the model's default weights (padded to what the
    /// clips animate), every instance's weight vector this frame
    /// (`Crowd::animate_weights`, `defaults.len()` each; empty when no
    /// mesh drawn has targets), and per mesh drawn its first weight.
    defaults: Vec<f32>,
    weights: Vec<f32>,
    first_weight: Vec<usize>,
    /// `CrowdOptions::morph`.
    morph: bool,
    zoom: f32,
    /// `--anim gpu`: the animators and the frame's records.
    gpu: Option<crate::gpu_anim::GpuCrowd>,
}

impl CrowdScene {
    /// Makes the path, uploads the meshes, checks that `instances` fit the
    /// path's storage on this device (an `Err` naming the limit before
    /// anything crowd-sized is allocated), then builds the crowd.
    pub fn new(
        device: &Arc<Device>,
        cast: &Cast,
        options: &CrowdOptions,
        color_format: vk::Format,
        depth_format: vk::Format,
        frames_in_flight: usize,
    ) -> Result<Self, String> {
        let n = options.instances;
        if n == 0 || n > MAX_INSTANCES {
            return Err(format!(
                "--instances {n}: this sample draws 1 to {MAX_INSTANCES} instances"
            ));
        }
        let model = &cast.model;
        let skin = &model.skins[cast.skin];
        let mut cfg = SkinPathConfig::new(color_format, depth_format, frames_in_flight);
        cfg.gpu_animation = options.anim == AnimateOn::Gpu;
        let (path, why) = match &options.path {
            // The error lists every registry name.
            Some(name) => (SkinPath::by_name(device, name, cfg), "--path".to_string()),
            None => {
                let (desc, why) = auto(device, skin.len(), n);
                (SkinPath::new(device, desc, cfg), format!("auto: {why}"))
            }
        };
        let mut path = path.map_err(|e| e.to_string())?;
        let hierarchy = PaletteHierarchy::new(skin, &model.skeleton)
            .map_err(|e| format!("{}: skin {}: {e}", cast.label, cast.skin))?;
        let mut meshes = Vec::with_capacity(cast.meshes.len());
        let mut colors = Vec::with_capacity(cast.meshes.len());
        for &k in &cast.meshes {
            let mesh = &model.meshes[k];
            meshes.push(
                path.prepare(mesh, &hierarchy)
                    .map_err(|e| format!("{}: {e}", cast.label))?,
            );
            // One mesh: the instance's tint is its colour (a crowd of one
            // material colour reads as a blur). Several: each keeps its
            // material's colour, tinted.
            let color = mesh
                .material
                .and_then(|m| model.materials.get(m))
                .filter(|_| cast.meshes.len() > 1)
                .map_or([1.0; 4], |m| m.base_color.to_array());
            colors.push(color);
        }
        // The first frame's storage, reserved now: a count beyond the
        // device's limits for this path fails here, naming the limit.
        let name = path.name();
        for m in &meshes {
            path.batch(0, m, n)
                .map_err(|e| format!("{n} instances of {} on path {name}: {e}", cast.label))?;
        }
        let mut rng = SplitMix64(options.seed);
        let clips = &model.clips;
        let instances: Vec<CrowdInstance> = (0..n)
            .map(|i| {
                let clip = i % clips.len();
                let phase = rng.unit() * clips[clip].duration();
                let speed = 0.75 + 0.5 * rng.unit();
                CrowdInstance::new(clip, phase, speed)
            })
            .collect();
        let twin = Crowd::new(&model.skeleton, clips, skin, instances.clone())
            .map_err(|e| format!("{}: crowd: {e}", cast.label))?;
        let crowd = Crowd::new(&model.skeleton, clips, skin, instances)
            .map_err(|e| format!("{}: crowd: {e}", cast.label))?;
        // Culling: the linear-blend boxes hold what the 4x3 paths draw
        // (every matrix kept), the dual-quaternion boxes
        // (`JointBounds::skinned_dual_quat`) what the dq and dq-scale paths
        // draw; the qt encoding may drop a scale, so its paths draw all.
        let gpu = match options.anim {
            AnimateOn::Gpu => Some(crate::gpu_anim::GpuCrowd::new(
                device, &crowd, &path, &meshes,
            )?),
            AnimateOn::Cpu => None,
        };
        let cull = if !options.cull {
            None
        } else if gpu.is_some() {
            println!("crowd: culling off: --anim gpu keeps the matrices on the GPU");
            None
        } else if CullBlend::of(path.desc().encoding.blend_bound(), &hierarchy).is_none() {
            println!(
                "crowd: culling off: the skinned boxes are shown for linear blends of whole matrices (4x3 paths) and for dual quaternions (dq, dq-scale), not {}",
                path.desc().encoding.name()
            );
            None
        } else {
            let bounds = meshes
                .iter()
                .map(|m| m.joint_bounds().cloned())
                .collect::<Option<Vec<_>>>();
            if bounds.is_none() {
                println!("crowd: culling off: a mesh has no joint boxes (a negative weight?)");
            }
            bounds
        };
        let mut defaults = if meshes.iter().any(|m| m.morph_targets() > 0) {
            model.default_morph_weights()
        } else {
            Vec::new()
        };
        if !defaults.is_empty() && defaults.len() < crowd.weight_count() {
            defaults.resize(crowd.weight_count(), 0.0);
        }
        if !defaults.is_empty() && gpu.is_some() {
            println!(
                "crowd: the GPU animation passes sample no weight tracks: morph targets are drawn at weight 0 (--anim cpu animates them)"
            );
        }
        let cull_blend = CullBlend::of(path.desc().encoding.blend_bound(), &hierarchy)
            .unwrap_or(CullBlend::Linear);
        let place_rng = rng.clone();
        let grid = Grid::new(n, &cast.bounds, cast.upright);
        let placements = (0..n).map(|i| grid.place(i, &mut rng)).collect();
        let (grid_min, grid_max) = grid.bounds();
        Ok(Self {
            crowd,
            twin,
            path,
            why,
            meshes,
            colors,
            batches: Vec::with_capacity(cast.meshes.len()),
            placements,
            place_rng,
            frame_sets: FrameSets::new(device, frames_in_flight).map_err(|e| e.to_string())?,
            grid_min,
            grid_max,
            threads: options.threads,
            warned_lossy: false,
            cull,
            cull_blend,
            matrices: Vec::new(),
            visible: Vec::new(),
            defaults,
            weights: Vec::new(),
            first_weight: cast
                .meshes
                .iter()
                .map(|&k| model.meshes[k].morph.first_weight)
                .collect(),
            morph: options.morph,
            zoom: options.zoom,
            gpu,
        })
    }

    /// "CPU" or "GPU": where the crowd is animated.
    pub fn anim_name(&self) -> &'static str {
        if self.gpu.is_some() {
            "GPU"
        } else {
            "CPU"
        }
    }

    pub fn path_name(&self) -> &'static str {
        self.path.name()
    }

    /// Why this path (`--path`, or auto's reason).
    pub fn path_reason(&self) -> &str {
        &self.why
    }

    pub fn instances(&self) -> usize {
        self.crowd.len()
    }

    /// Instances drawn in the last frame (all of them without culling).
    pub fn drawn(&self) -> usize {
        if self.cull.is_some() {
            self.visible.len()
        } else {
            self.crowd.len()
        }
    }

    /// Whether the crowd culls instances outside the view.
    pub fn culling(&self) -> bool {
        self.cull.is_some()
    }

    /// Lays the grid out again for `cast`'s up axis (the same turns and
    /// tints, the instances stood on the new axis).
    pub fn restand(&mut self, cast: &Cast) {
        let n = self.placements.len();
        let grid = Grid::new(n, &cast.bounds, cast.upright);
        let mut rng = self.place_rng.clone();
        self.placements = (0..n).map(|i| grid.place(i, &mut rng)).collect();
        (self.grid_min, self.grid_max) = grid.bounds();
    }

    /// The camera that sees the whole grid at an angle for `aspect`:
    /// `Camera::framing` (which centres the box and fits it whole), then
    /// re-aimed and moved in until the grid's projected corners fill the
    /// view with a small margin, since a wide, flat grid seen from above
    /// leaves the framed box's upper part empty.
    pub fn camera(&self, aspect: f32) -> Camera {
        const FOV_Y: f32 = 0.70;
        let mut camera = Camera::framing(self.grid_min, self.grid_max, 0.3, 0.55, FOV_Y, aspect);
        let (lo, hi) = (self.grid_min, self.grid_max);
        let corners: Vec<Vec3> = (0..8)
            .map(|c| {
                Vec3::new(
                    if c & 1 == 0 { lo.x } else { hi.x },
                    if c & 2 == 0 { lo.y } else { hi.y },
                    if c & 4 == 0 { lo.z } else { hi.z },
                )
            })
            .collect();
        let tan = (FOV_Y * 0.5).tan();
        let reach = (hi - lo).length() * 0.5;
        // Perspective bends the straight-line updates; a few rounds settle.
        for _ in 0..6 {
            let vp = camera.view_proj(aspect);
            let (mut min, mut max) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
            for &c in &corners {
                let p = vp * c.extend(1.0);
                if p.w <= 1e-4 {
                    return camera;
                }
                let ndc = Vec2::new(p.x, p.y) / p.w;
                min = min.min(ndc);
                max = max.max(ndc);
            }
            let offset = camera.eye - camera.target;
            let distance = offset.length();
            let forward = -offset / distance;
            let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
            let up = right.cross(forward);
            // NDC y points down the screen (see `Camera`).
            let centre = (min + max) * 0.5;
            let shift = right * centre.x * distance * tan * aspect - up * centre.y * distance * tan;
            let scale = ((max - min) * 0.5).max_element() / 0.94;
            camera.target += shift;
            camera.eye = camera.target + offset * scale;
            let d = distance * scale;
            camera.projection = Projection::Perspective {
                fov_y: FOV_Y,
                near: (d - 1.5 * reach).max(d * 1e-3),
                far: d + 1.5 * reach,
            };
        }
        if self.zoom != 1.0 && self.zoom > 0.0 {
            camera.eye = camera.target + (camera.eye - camera.target) / self.zoom;
        }
        camera
    }

    /// Animates the crowd at `t` seconds into frame slot `frame` (whose
    /// previous submission has finished) and writes its uniforms.
    pub fn update(&mut self, frame: usize, t: f32, aspect: f32) -> Result<FrameTimes, String> {
        let err = |e: vkskin::gpu::GpuError| e.to_string();
        self.path.begin_frame(frame).map_err(err)?;
        if self.gpu.is_some() {
            return self.update_gpu(frame, t, aspect);
        }
        let start = Instant::now();
        self.twin
            .animate(t, self.threads, |_, _| {})
            .map_err(|e| format!("crowd: {e}"))?;
        let anim = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        if !self.defaults.is_empty() {
            self.weights
                .resize(self.crowd.len() * self.defaults.len(), 0.0);
            if self.morph {
                self.crowd
                    .animate_weights(t, &self.defaults, &mut self.weights)
                    .map_err(|e| format!("crowd: morph weights: {e}"))?;
            } else {
                for w in self.weights.chunks_exact_mut(self.defaults.len()) {
                    w.copy_from_slice(&self.defaults);
                }
            }
        }
        self.batches.clear();
        let n = self.crowd.len();
        let camera = self.camera(aspect);
        if self.cull.is_some() {
            self.fill_culled(frame, t, camera.view_proj(aspect))?;
        }
        for ((mesh, color), &first) in self.meshes.iter().zip(&self.colors).zip(&self.first_weight)
        {
            if self.cull.is_some() {
                break;
            }
            let mut w = self.path.batch(frame, mesh, n).map_err(err)?;
            self.batches.push(w.batch());
            let placements = &self.placements;
            let place = |i: usize| {
                let (m, tint) = placements[i];
                (m, mul(tint, *color))
            };
            let report = if mesh.morph_targets() > 0 {
                // Each instance's run of the model's weight vector.
                let weights = self.weights.get(first..).unwrap_or(&[]);
                w.animate_morphed(
                    &mut self.crowd,
                    t,
                    self.threads,
                    weights,
                    self.defaults.len(),
                    place,
                )
            } else {
                w.animate(&mut self.crowd, t, self.threads, place)
            }
            .map_err(err)?;
            if !report.lossy.is_empty() && !self.warned_lossy {
                self.warned_lossy = true;
                eprintln!(
                    "crowd: path {} dropped the scale of {} bone(s) (deviation up to {:.3}); pick a 4x3 or dq-scale path to keep it",
                    self.path.name(),
                    report.lossy.len(),
                    report.max_deviation
                );
            }
        }
        let fill = start.elapsed().as_secs_f64() * 1e3;
        self.frame_sets
            .write(
                frame,
                &FrameUniforms {
                    view_proj: camera.view_proj(aspect).to_cols_array_2d(),
                    color: [1.0; 4],
                    light: [0.35, 0.85, 0.45, 1.0],
                },
            )
            .map_err(err)?;
        Ok(FrameTimes {
            anim_ms: anim,
            upload_ms: (fill - anim * self.meshes.len() as f64).max(0.0),
        })
    }

    /// `--anim gpu`: the frame's records and instance records; the
    /// palettes are left to the animation passes ([`CrowdScene::prepass`]).
    /// The animation figure is the records' writing.
    fn update_gpu(&mut self, frame: usize, t: f32, aspect: f32) -> Result<FrameTimes, String> {
        let err = |e: vkskin::gpu::GpuError| e.to_string();
        let start = Instant::now();
        if let Some(g) = &mut self.gpu {
            g.update(frame, &self.crowd, t)?;
        }
        let anim = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        self.batches.clear();
        let n = self.crowd.len();
        for (mesh, color) in self.meshes.iter().zip(&self.colors) {
            let mut w = self.path.batch(frame, mesh, n).map_err(err)?;
            self.batches.push(w.batch());
            let placements = &self.placements;
            w.write_records(|i| {
                let (m, tint) = placements[i];
                (m, mul(tint, *color))
            })
            .map_err(err)?;
        }
        let upload = start.elapsed().as_secs_f64() * 1e3;
        let camera = self.camera(aspect);
        self.frame_sets
            .write(
                frame,
                &FrameUniforms {
                    view_proj: camera.view_proj(aspect).to_cols_array_2d(),
                    color: [1.0; 4],
                    light: [0.35, 0.85, 0.45, 1.0],
                },
            )
            .map_err(err)?;
        Ok(FrameTimes {
            anim_ms: anim,
            upload_ms: upload,
        })
    }

    /// The culled frame: animates every instance into `matrices`, keeps
    /// those whose world box (the placement applied to the union of its
    /// meshes' skinned boxes) meets the view of `view_proj`, and writes
    /// only those into the batches, in instance order.
    fn fill_culled(&mut self, frame: usize, t: f32, view_proj: Mat4) -> Result<(), String> {
        let Some(bounds) = &self.cull else {
            return Ok(());
        };
        let n = self.crowd.len();
        let stride = self.meshes.first().map_or(0, |m| m.palette_len());
        if stride == 0 {
            return Err("crowd: a mesh with an empty palette".into());
        }
        self.matrices.resize(n * stride, Affine3A::IDENTITY);
        self.crowd
            .animate_into(
                t,
                self.threads,
                &mut self.matrices,
                stride,
                |_, skin, out| out.copy_from_slice(skin),
            )
            .map_err(|e| format!("crowd: {e}"))?;
        self.visible.clear();
        let wn = self.defaults.len();
        for i in 0..n {
            let skin = &self.matrices[i * stride..(i + 1) * stride];
            let weights = self.weights.get(i * wn..(i + 1) * wn).unwrap_or(&[]);
            let seen = match self.cull_blend.instance_box(bounds, skin, weights)? {
                Some(b) => in_view(&b.transformed(&self.placements[i].0), &view_proj),
                // No bound claimed for this pose: drawn.
                None => true,
            };
            if seen {
                self.visible.push(i);
            }
        }
        if self.visible.is_empty() {
            return Ok(());
        }
        let err = |e: vkskin::gpu::GpuError| e.to_string();
        for ((mesh, color), &first) in self.meshes.iter().zip(&self.colors).zip(&self.first_weight)
        {
            let mut w = self
                .path
                .batch(frame, mesh, self.visible.len())
                .map_err(err)?;
            self.batches.push(w.batch());
            for (writer, &i) in w.instances().zip(&self.visible) {
                let (m, tint) = self.placements[i];
                let skin = &self.matrices[i * stride..(i + 1) * stride];
                if mesh.morph_targets() > 0 {
                    let at = i * wn + first;
                    let weights = self
                        .weights
                        .get(at..at + mesh.morph_targets())
                        .ok_or("crowd: morph weights shorter than the mesh's targets")?;
                    writer.write_morphed(skin, weights, &m, mul(tint, *color))
                } else {
                    writer.write(skin, &m, mul(tint, *color))
                }
                .map_err(err)?;
            }
        }
        Ok(())
    }

    /// Records what precedes the rendering scope (GPU animation, GPU
    /// timer, compute skinning).
    pub fn prepass(&mut self, cmd: vk::CommandBuffer, frame: usize) -> Result<(), String> {
        if let Some(g) = &mut self.gpu {
            g.record(cmd, &self.path, frame, &self.batches)?;
        }
        let batches: Vec<(&Batch, &PreparedMesh)> =
            self.batches.iter().zip(self.meshes.iter()).collect();
        self.path
            .prepass(cmd, frame, &batches)
            .map_err(|e| e.to_string())
    }

    /// Records the draws inside the rendering scope.
    pub fn record(&self, cmd: vk::CommandBuffer, frame: usize) -> Result<(), String> {
        for (batch, mesh) in self.batches.iter().zip(&self.meshes) {
            self.path
                .record_draw(
                    cmd,
                    frame,
                    &self.frame_sets,
                    batch,
                    mesh,
                    vk::PolygonMode::FILL,
                    None,
                )
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Records what follows the rendering scope (the GPU timer's end).
    pub fn finish(&self, cmd: vk::CommandBuffer, frame: usize) -> Result<(), String> {
        self.path.finish(cmd, frame).map_err(|e| e.to_string())
    }

    /// GPU milliseconds of the last finished use of slot `frame`, read as
    /// the slot is begun (see [`CrowdScene::update`]).
    pub fn gpu_ms(&self, frame: usize) -> Option<f64> {
        self.path.gpu_ms(frame)
    }

    /// Reads slot `frame`'s GPU time now that its fence has passed (headless
    /// frames wait for each submission), instead of at its next use.
    pub fn collect_gpu_ms(&mut self, frame: usize) -> Result<Option<f64>, String> {
        self.path.begin_frame(frame).map_err(|e| e.to_string())?;
        self.batches.clear();
        Ok(self.path.gpu_ms(frame))
    }
}

/// The blend a culled path draws with, and so the box that holds an
/// instance: the linear-blend box (4x3), or the dual-quaternion one (dq,
/// dq-scale), which reads the palette as the path encodes it.
enum CullBlend {
    Linear,
    DualQuat {
        hierarchy: PaletteHierarchy,
        /// dq-scale: the scale/shear matrices kept.
        scaled: bool,
        /// Per instance scratch: the encoded palette, its scale/shear
        /// matrices, the matrices it stands for and its rotations.
        dq: Vec<DualQuat>,
        scale_shear: Vec<Mat3A>,
        held: Vec<Affine3A>,
        rotations: Vec<Quat>,
    },
}

impl CullBlend {
    /// The blend of an encoding, by its `Encoding::blend_bound` (`None`:
    /// no box is shown to hold it).
    fn of(bound: Option<BlendBound>, hierarchy: &PaletteHierarchy) -> Option<Self> {
        let dq = |scaled| Self::DualQuat {
            hierarchy: hierarchy.clone(),
            scaled,
            dq: Vec::new(),
            scale_shear: Vec::new(),
            held: Vec::new(),
            rotations: Vec::new(),
        };
        match bound? {
            BlendBound::Linear => Some(Self::Linear),
            BlendBound::DualQuat => Some(dq(false)),
            BlendBound::DualQuatScale => Some(dq(true)),
        }
    }

    /// The box around one instance's meshes (`bounds`) skinned by `skin`
    /// with morph `weights`; `None` when the dual-quaternion bound claims
    /// none for the pose (the instance is then drawn).
    fn instance_box(
        &mut self,
        bounds: &[JointBounds],
        skin: &[Affine3A],
        weights: &[f32],
    ) -> Result<Option<Aabb>, String> {
        let fail = |e: &dyn std::fmt::Display| format!("crowd: bounds: {e}");
        let mut b = Aabb::EMPTY;
        match self {
            Self::Linear => {
                for jb in bounds {
                    let m = jb.skinned(skin, weights).map_err(|e| fail(&e))?;
                    b.extend(m.min);
                    b.extend(m.max);
                }
            }
            Self::DualQuat {
                hierarchy,
                scaled,
                dq,
                scale_shear,
                held,
                rotations,
            } => {
                // The palette as the path encodes it (signs along the
                // hierarchy; dq drops a scale, dq-scale keeps it apart).
                dq.resize(skin.len(), DualQuat::IDENTITY);
                if *scaled {
                    scale_shear.resize(skin.len(), Mat3A::IDENTITY);
                    encode_dual_quat_scale(skin, hierarchy, dq, scale_shear)
                        .map_err(|e| fail(&e))?;
                } else {
                    scale_shear.clear();
                    encode_dual_quat(skin, hierarchy, dq).map_err(|e| fail(&e))?;
                }
                held.clear();
                rotations.clear();
                for (j, d) in dq.iter().enumerate() {
                    let m = Affine3A::from_rotation_translation(d.real(), d.translation());
                    held.push(match scale_shear.get(j) {
                        Some(s) => Affine3A {
                            matrix3: m.matrix3 * *s,
                            ..m
                        },
                        None => m,
                    });
                    rotations.push(d.real());
                }
                for jb in bounds {
                    let Some(m) = jb
                        .skinned_dual_quat(held, rotations, scale_shear, weights)
                        .map_err(|e| fail(&e))?
                    else {
                        return Ok(None);
                    };
                    b.extend(m.min);
                    b.extend(m.max);
                }
            }
        }
        Ok(Some(b))
    }
}

/// Whether the world box `b` may be seen through `view_proj` (Vulkan
/// clip space: `-w <= x, y <= w`, `0 <= z <= w`): false only when all
/// eight corners lie outside one of those planes, so a box in view is
/// never dropped (a box beside the view near a corner may be kept).
fn in_view(b: &Aabb, view_proj: &Mat4) -> bool {
    if b.is_empty() {
        return false;
    }
    let mut outside = [true; 6];
    for c in 0..8 {
        let p = Vec3::new(
            if c & 1 == 0 { b.min.x } else { b.max.x },
            if c & 2 == 0 { b.min.y } else { b.max.y },
            if c & 4 == 0 { b.min.z } else { b.max.z },
        );
        let q = *view_proj * p.extend(1.0);
        let tests = [
            q.x < -q.w,
            q.x > q.w,
            q.y < -q.w,
            q.y > q.w,
            q.z < 0.0,
            q.z > q.w,
        ];
        for (o, t) in outside.iter_mut().zip(tests) {
            *o &= t;
        }
    }
    !outside.iter().any(|&o| o)
}

fn mul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3]]
}

/// Instances on a square-ish grid in the XZ plane, centred on the origin,
/// a little more than the character's animated footprint apart (turned
/// neighbours' boxes may touch at the corners).
struct Grid {
    columns: usize,
    rows: usize,
    spacing: f32,
    /// The character's box centre in its own space (the grid point gets it).
    center: Vec3,
    /// Its horizontal radius about that centre, and its height span.
    radius: f32,
    y: (f32, f32),
    /// The character's model space turned upright (`Cast::upright`).
    upright: Affine3A,
}

impl Grid {
    fn new(n: usize, b: &Bounds, upright: Affine3A) -> Self {
        let columns = (n as f64).sqrt().ceil().max(1.0) as usize;
        let rows = n.div_ceil(columns).max(1);
        let half = (b.max - b.min) * 0.5;
        let radius = (half.x * half.x + half.z * half.z).sqrt().max(1e-3);
        Self {
            columns,
            rows,
            spacing: 1.15 * 2.0 * half.x.max(half.z).max(1e-3),
            center: b.center(),
            radius,
            y: (b.min.y, b.max.y),
            upright,
        }
    }

    /// Instance `i`'s matrix (a turn about its own vertical axis of up to
    /// 25 degrees either way, then its grid point) and pastel tint.
    fn place(&self, i: usize, rng: &mut SplitMix64) -> (Affine3A, [f32; 4]) {
        let col = (i % self.columns) as f32 - (self.columns - 1) as f32 * 0.5;
        let row = (i / self.columns) as f32 - (self.rows - 1) as f32 * 0.5;
        let at = Vec3::new(col * self.spacing, 0.0, row * self.spacing);
        let turn = (rng.unit() - 0.5) * 50f32.to_radians();
        let pivot = Vec3::new(self.center.x, 0.0, self.center.z);
        let m = Affine3A::from_translation(at)
            * Affine3A::from_quat(Quat::from_rotation_y(turn))
            * Affine3A::from_translation(-pivot)
            * self.upright;
        let tint = pastel(rng.unit());
        (m, tint)
    }

    /// The box every instance stays in.
    fn bounds(&self) -> (Vec3, Vec3) {
        let hx = (self.columns - 1) as f32 * 0.5 * self.spacing + self.radius;
        let hz = (self.rows - 1) as f32 * 0.5 * self.spacing + self.radius;
        (Vec3::new(-hx, self.y.0, -hz), Vec3::new(hx, self.y.1, hz))
    }
}

/// A light colour of hue `h` (0..1), linear RGB.
fn pastel(h: f32) -> [f32; 4] {
    let channel = |offset: f32| {
        let x = (h + offset).rem_euclid(1.0) * 6.0;
        let v = (x - 3.0).abs() - 1.0;
        0.45 + 0.55 * v.clamp(0.0, 1.0)
    };
    [channel(0.0), channel(2.0 / 3.0), channel(1.0 / 3.0), 1.0]
}

/// A small fixed-seed generator (SplitMix64), so that every run with the
/// same seed draws the same crowd.
#[derive(Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}
