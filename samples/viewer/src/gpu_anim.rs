//! `--anim gpu`: the model animated by the engine's compute passes
//! ([`vkskin::skin::anim`]). The clips go to the GPU once
//! ([`GpuClipStore`]), each mesh gets a [`GpuAnimator`], and each frame the
//! host writes one 32-byte [`AnimRecord`] (the play head, and the incoming
//! clip with its weight during a crossfade) instead of the palettes. The
//! animation pass is timed with its own timestamps where the queue has
//! them.
//!
//! Where GPU animation cannot serve what is drawn (a windowed storage or
//! the CPU stage, the motion view, morph targets, a model without clips,
//! a skeleton past the device's shared memory), [`GpuAnim::new`] says why
//! and the scene animates on the CPU: [`Fallback`].

use std::sync::Arc;

use vkskin::assets::Model;
use vkskin::gpu::{vk, Device, TimestampQueries};
use vkskin::skin::anim::{AnimRecord, AnimateOn, GpuAnimator, GpuClipStore};
use vkskin::skin::{Batch, PreparedMesh, SkinPath};

/// Why GPU animation was asked for and the CPU animates instead.
pub type Fallback = String;

/// Whether GPU animation can serve `model` drawn on `path` (with or
/// without the motion view), before anything is built: `Err` says why not.
pub fn servable(model: &Model, path: &SkinPath, motion: bool) -> Result<(), Fallback> {
    let desc = path.desc();
    let instanced = desc.stage != vkskin::skin::Stage::Cpu
        && desc
            .storage
            .is_some_and(|s| !s.windowed() && !s.in_push_constants());
    if !instanced {
        return Err(format!(
            "path {} is not an instanced storage (texel, ssbo, bda) on a GPU stage",
            desc.name
        ));
    }
    if motion {
        return Err(
            "the motion view needs the previous palette, which the GPU pass does not write".into(),
        );
    }
    if model.clips.is_empty() {
        return Err(format!("{} has no clips (the bind pose)", model.name));
    }
    if model.meshes.iter().any(|m| !m.morph.is_empty()) {
        return Err(format!(
            "{} has morph targets, whose weights the CPU writes",
            model.name
        ));
    }
    Ok(())
}

/// Timestamps of one frame slot: written by the last use of the slot?
struct Timer {
    queries: TimestampQueries,
    pending: bool,
}

/// The GPU side of the viewer's animation: an animator per mesh, the
/// frame's record, the animation pass's timestamps per frame slot.
pub struct GpuAnim {
    _store: Arc<GpuClipStore>,
    animators: Vec<GpuAnimator>,
    /// What the next frame plays.
    pub record: AnimRecord,
    timers: Vec<Timer>,
    /// The animation pass's GPU milliseconds, last read.
    pub last_ms: Option<f64>,
}

impl GpuAnim {
    /// Uploads `model`'s clips and builds an animator for each mesh of
    /// `path` (built with `SkinPathConfig::gpu_animation`); `Err` says why
    /// the CPU must animate instead.
    pub fn new(
        device: &Arc<Device>,
        model: &Model,
        path: &SkinPath,
        meshes: &[PreparedMesh],
        motion: bool,
        frames_in_flight: usize,
    ) -> Result<Self, Fallback> {
        servable(model, path, motion)?;
        let store = Arc::new(
            GpuClipStore::new(device, &model.skeleton, &model.clips)
                .map_err(|e| format!("clip store: {e}"))?,
        );
        let animators = meshes
            .iter()
            .zip(&model.meshes)
            .map(|(prepared, mesh)| {
                let skin = model.skins.get(mesh.skin).ok_or_else(|| {
                    format!(
                        "mesh {:?} names skin {} of {}",
                        mesh.name,
                        mesh.skin,
                        model.skins.len()
                    )
                })?;
                GpuAnimator::new(&store, path, prepared, skin).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let timers = (0..frames_in_flight)
            .map_while(|_| TimestampQueries::new(device, 2).ok())
            .map(|queries| Timer {
                queries,
                pending: false,
            })
            .collect();
        Ok(Self {
            _store: store,
            animators,
            record: AnimRecord::default(),
            timers,
            last_ms: None,
        })
    }

    /// Starts frame slot `frame` (its previous submission has finished):
    /// reads the animation pass's time of its last use.
    pub fn begin_frame(&mut self, frame: usize) -> Result<(), String> {
        for a in &mut self.animators {
            a.begin_frame(frame).map_err(|e| e.to_string())?;
        }
        self.collect(frame)
    }

    /// Reads slot `frame`'s timestamps if its last use wrote them (call
    /// once its fence has passed).
    pub fn collect(&mut self, frame: usize) -> Result<(), String> {
        let Some(t) = self.timers.get_mut(frame).filter(|t| t.pending) else {
            return Ok(());
        };
        let mut ticks = [0u64; 2];
        if t.queries
            .try_read_into(&mut ticks)
            .map_err(|e| e.to_string())?
        {
            t.pending = false;
            self.last_ms = t.queries.elapsed_ns(&ticks, 0, 1).map(|ns| ns * 1e-6);
        }
        Ok(())
    }

    /// Records every mesh's animation pass (before the path's prepass),
    /// between two timestamps where the queue has them.
    pub fn record(
        &mut self,
        cmd: vk::CommandBuffer,
        path: &SkinPath,
        frame: usize,
        batches: &[(&Batch, &PreparedMesh)],
    ) -> Result<(), String> {
        if let Some(t) = self.timers.get(frame) {
            t.queries.reset(cmd);
            t.queries
                .write(cmd, 0, vk::PipelineStageFlags2::ALL_COMMANDS);
        }
        let records = [self.record];
        for (a, (b, _)) in self.animators.iter_mut().zip(batches) {
            a.record(cmd, path, frame, b, &records, 0.0)
                .map_err(|e| e.to_string())?;
        }
        if let Some(t) = self.timers.get_mut(frame) {
            t.queries
                .write(cmd, 1, vk::PipelineStageFlags2::COMPUTE_SHADER);
            t.pending = true;
        }
        Ok(())
    }
}

/// "CPU" or "GPU".
pub fn label(on: AnimateOn) -> &'static str {
    match on {
        AnimateOn::Cpu => "CPU",
        AnimateOn::Gpu => "GPU",
    }
}
