use std::sync::Arc;

use glam::{Affine3A, Mat4};

use crate::anim::{PaletteHierarchy, PaletteReport};
use crate::gpu::{
    begin, end, submit_and_wait, vk, CommandPool, Device, Fence, GpuError, GpuResult,
};
use crate::mesh::SkinnedMesh;
use crate::skin::{
    CaptureBuffer, CapturedVertex, FrameSets, FrameUniforms, PathDesc, PreparedMesh, SkinPath,
    SkinPathConfig,
};

use super::offscreen::OffscreenTarget;

/// Skins meshes on the GPU through one path in capture mode and reads the
/// skinned positions and normals back: the GPU side of every comparison
/// with the CPU reference (tests, `inspect --path`).
///
/// Each [`SkinCapture::run`] is one submission that the call waits for; the
/// command pool, fence, capture buffer and path storage are made once and
/// reused (grown when a run needs more).
pub struct SkinCapture {
    device: Arc<Device>,
    path: SkinPath,
    frame_sets: FrameSets,
    // The draw needs a rendering scope; nothing is looked at.
    target: OffscreenTarget,
    capture: Option<CaptureBuffer>,
    pool: CommandPool,
    cmd: vk::CommandBuffer,
    fence: Fence,
}

impl SkinCapture {
    /// A capture rig for path `desc`; `capacity_limit` forces fewer bones
    /// per draw than the device allows (partitioning).
    pub fn new(
        device: &Arc<Device>,
        desc: &'static PathDesc,
        capacity_limit: Option<usize>,
    ) -> GpuResult<Self> {
        Self::with_motion(device, desc, capacity_limit, false)
    }

    /// [`SkinCapture::new`] with [`SkinPathConfig::motion`] as `motion`:
    /// the captured vertices carry the previous positions too
    /// ([`CapturedVertex::previous`], filled by [`SkinCapture::run_motion`]).
    pub fn with_motion(
        device: &Arc<Device>,
        desc: &'static PathDesc,
        capacity_limit: Option<usize>,
        motion: bool,
    ) -> GpuResult<Self> {
        let mut cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            1,
        );
        cfg.capture = true;
        cfg.capacity_limit = capacity_limit;
        cfg.motion = motion;
        let path = SkinPath::new(device, desc, cfg)?;
        let frame_sets = FrameSets::new(device, 1)?;
        let target = OffscreenTarget::new(device, 8, 8)?;
        let pool = CommandPool::new(device, false)?;
        let cmd = pool
            .allocate(1)?
            .first()
            .copied()
            .ok_or_else(|| GpuError::InvalidArgument("no command buffer allocated".into()))?;
        Ok(Self {
            device: device.clone(),
            path,
            frame_sets,
            target,
            capture: None,
            pool,
            cmd,
            fence: Fence::new(device, false)?,
        })
    }

    /// The skinning path this rig captures.
    pub fn path(&self) -> &SkinPath {
        &self.path
    }

    /// Uploads `mesh` for this rig's path.
    pub fn prepare(
        &mut self,
        mesh: &SkinnedMesh,
        hierarchy: &PaletteHierarchy,
    ) -> GpuResult<PreparedMesh> {
        self.path.prepare(mesh, hierarchy)
    }

    /// Skins `mesh` with the skinning matrices `skin` (one per entry of the
    /// mesh's skin; flat hierarchy unless given) and returns one captured
    /// vertex per mesh vertex.
    pub fn run_mesh(
        &mut self,
        mesh: &SkinnedMesh,
        hierarchy: &PaletteHierarchy,
        skin: &[Affine3A],
    ) -> GpuResult<Vec<CapturedVertex>> {
        let prepared = self.prepare(mesh, hierarchy)?;
        Ok(self.run(&prepared, &[skin])?.0)
    }

    /// Draws one instance of `prepared` per palette in `palettes` (in one
    /// batch) and returns instance `i`'s vertex `v` at
    /// `i * vertex_count + v`, with the encoders' merged report.
    pub fn run(
        &mut self,
        prepared: &PreparedMesh,
        palettes: &[&[Affine3A]],
    ) -> GpuResult<(Vec<CapturedVertex>, PaletteReport)> {
        self.run_inner(prepared, palettes, Writes::Plain)
    }

    /// Motion paths ([`SkinCapture::with_motion`]): instance `i` is posed
    /// with `palettes[i]` and the morph weights `weights[i]` (empty for a
    /// mesh without targets) and, for its previous positions, with
    /// `previous[i]` (`None`: a teleport) through
    /// [`crate::skin::InstanceWriter::write_motion`].
    pub fn run_motion(
        &mut self,
        prepared: &PreparedMesh,
        palettes: &[&[Affine3A]],
        weights: &[&[f32]],
        previous: &[Option<(&[Affine3A], &[f32])>],
    ) -> GpuResult<(Vec<CapturedVertex>, PaletteReport)> {
        if weights.len() != palettes.len() || previous.len() != palettes.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{} weight vectors and {} previous poses for {} palettes",
                weights.len(),
                previous.len(),
                palettes.len()
            )));
        }
        self.run_inner(prepared, palettes, Writes::Motion(weights, previous))
    }

    /// [`SkinCapture::run`] with morph weights: instance `i` has the
    /// palette `palettes[i]` and the weights `weights[i]` of the mesh's
    /// morph targets ([`crate::skin::InstanceWriter::write_morphed`]).
    pub fn run_morphed(
        &mut self,
        prepared: &PreparedMesh,
        palettes: &[&[Affine3A]],
        weights: &[&[f32]],
    ) -> GpuResult<(Vec<CapturedVertex>, PaletteReport)> {
        if weights.len() != palettes.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{} weight vectors for {} palettes",
                weights.len(),
                palettes.len()
            )));
        }
        self.run_inner(prepared, palettes, Writes::Morphed(weights))
    }

    fn run_inner(
        &mut self,
        prepared: &PreparedMesh,
        palettes: &[&[Affine3A]],
        writes: Writes<'_>,
    ) -> GpuResult<(Vec<CapturedVertex>, PaletteReport)> {
        let n = palettes.len();
        let vc = prepared.vertex_count() as usize;
        let total = n
            .checked_mul(vc)
            .filter(|&t| t <= u32::MAX as usize)
            .ok_or(GpuError::Limit {
                what: "captured vertices",
                needed: (n as u64).saturating_mul(vc as u64),
                limit: u64::from(u32::MAX),
            })?;
        if total == 0 {
            return Ok((Vec::new(), PaletteReport::default()));
        }
        self.path.begin_frame(0)?;
        let mut writer = self.path.batch(0, prepared, n)?;
        let batch = writer.batch();
        let report = match writes {
            Writes::Morphed(w) => {
                writer.write_all_morphed(|i| (palettes[i], w[i], Affine3A::IDENTITY, [1.0; 4]))?
            }
            Writes::Plain => writer.write_all(|i| (palettes[i], Affine3A::IDENTITY, [1.0; 4]))?,
            Writes::Motion(w, prev) => {
                let mut report = PaletteReport::default();
                for (i, inst) in writer.instances().enumerate() {
                    report.merge(&inst.write_motion(
                        palettes[i],
                        w[i],
                        prev[i],
                        &Affine3A::IDENTITY,
                        [1.0; 4],
                    )?);
                }
                report.lossy.sort_unstable();
                report.lossy.dedup();
                report
            }
        };
        if self.capture.as_ref().is_none_or(|c| c.capacity() < total) {
            let layout = self.path.capture_layout().ok_or_else(|| {
                GpuError::InvalidArgument("the capture path has no capture layout".into())
            })?;
            self.capture = Some(CaptureBuffer::new(&self.device, layout, total)?);
        }
        let capture = self
            .capture
            .as_mut()
            .ok_or_else(|| GpuError::InvalidArgument("no capture buffer".into()))?;
        let (count, first) = batch.capture_target();
        capture.set_target(count, first)?;
        self.frame_sets.write(
            0,
            &FrameUniforms {
                view_proj: Mat4::IDENTITY.to_cols_array_2d(),
                color: [1.0; 4],
                light: [0.0, 0.0, 1.0, 0.0],
            },
        )?;
        let d = &self.device;
        let cmd = self.cmd;
        // SAFETY: `self.pool` is a live pool of `self.device`, owned by `self`
        // and used only through `&mut self`, so externally synchronised. Its
        // only buffer, `cmd`, is not pending: every earlier `run` waited for
        // its submission's fence before returning, or failed before
        // submitting (the exception: a run whose fence wait itself failed,
        // i.e. timed out on a hung GPU and was reported as an error).
        unsafe {
            d.raw()
                .reset_command_pool(self.pool.raw(), vk::CommandPoolResetFlags::empty())?
        };
        begin(d, cmd)?;
        let capture = &*capture;
        let recorded = (|| {
            capture.barrier_before_draw(d, cmd);
            self.path.prepass(cmd, 0, &[(&batch, prepared)])?;
            self.target.begin(cmd, [0.0; 4]);
            let drawn = self.path.record_draw(
                cmd,
                0,
                &self.frame_sets,
                &batch,
                prepared,
                vk::PolygonMode::FILL,
                Some(capture),
            );
            // Close the rendering scope even when recording failed.
            self.target.end_and_copy(cmd);
            drawn?;
            self.path.finish(cmd, 0)?;
            capture.barrier_to_host(d, cmd);
            Ok::<(), GpuError>(())
        })();
        let ended = end(d, cmd);
        recorded?;
        ended?;
        self.fence.reset()?;
        let before = d.submitted_frame();
        submit_and_wait(d, cmd, &self.fence)?;
        d.frame_completed(before);
        Ok((capture.read(total)?, report))
    }
}

/// What a capture run writes per instance.
enum Writes<'a> {
    /// Palettes only.
    Plain,
    /// Palettes and morph weights.
    Morphed(&'a [&'a [f32]]),
    /// Palettes, weights and previous poses (motion).
    Motion(&'a [&'a [f32]], &'a [Option<(&'a [Affine3A], &'a [f32])>]),
}
