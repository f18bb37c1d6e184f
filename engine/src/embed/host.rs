//! The two host routes of [`Renderer`]: skinning inside the host's own
//! shaders (the module documentation of [`crate::embed`], "Skinning in the
//! host's shaders", and `docs/embedding.md`).

use super::renderer::{CharacterId, Frame, InstanceId, Renderer};
use crate::gpu::{vk, GpuResult};
use crate::skin::{HostVertexRoute, SkinnedOutput};

/// One batch of an open frame: the instances of one mesh of one character,
/// which the host draws with its own pipeline ([`Renderer::record_host`]
/// on a vertex-stage path, [`Renderer::skinned_output`] on the compute and
/// CPU stages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostBatch {
    /// The batch's index in the frame (what the two calls take).
    pub index: usize,
    /// The character.
    pub character: CharacterId,
    /// Its mesh (an index into the model's meshes).
    pub mesh: usize,
    /// The mesh's vertex-route permutation: influences (4 or 8) ...
    pub influences: u32,
    /// ... whether it has morph targets ...
    pub morph: bool,
    /// ... and whether it has tangents (the permutation whose
    /// `SkinnedVertex` carries them: [`Renderer::host_vertex_route_with`];
    /// a pipeline of the route without them draws the mesh too, ignoring
    /// its tangents).
    pub tangents: bool,
    /// The instances drawn, in the batch's order (instance `i` of the
    /// batch is `instances[i]`).
    pub instances: Vec<InstanceId>,
}

impl Renderer {
    /// The vertex route of the renderer's (vertex-stage) path for the
    /// permutation (`influences`, `morph`) a [`HostBatch`] names: the GLSL
    /// header, the set layouts with their numbers, the push range and the
    /// vertex input of the host's pipeline (see [`HostVertexRoute`]).
    pub fn host_vertex_route(&self, influences: u32, morph: bool) -> GpuResult<HostVertexRoute> {
        self.skin_path().host_vertex_route(influences, morph)
    }

    /// [`Renderer::host_vertex_route`] of the permutation (`influences`,
    /// `morph`, `tangents`): with `tangents` the header defines `TANGENTS`
    /// and `skin_vertex()` also gives the skinned tangent (stream 8,
    /// location 14).
    pub fn host_vertex_route_with(
        &self,
        influences: u32,
        morph: bool,
        tangents: bool,
    ) -> GpuResult<HostVertexRoute> {
        self.skin_path()
            .host_vertex_route_with(influences, morph, tangents)
    }

    /// The batches of the open frame `frame` (after
    /// [`Renderer::begin_frame`]), in drawing order.
    pub fn host_batches(&self, frame: &Frame) -> GpuResult<Vec<HostBatch>> {
        let n = self.drawn_len(frame)?;
        let mut out = Vec::with_capacity(n);
        for index in 0..n {
            let (_, prepared, character, mesh) = self.drawn_batch(frame, index)?;
            out.push(HostBatch {
                index,
                character,
                mesh,
                influences: prepared.influences(),
                morph: prepared.morph_targets() > 0,
                tangents: prepared.has_tangents(),
                instances: self.character_instances(character),
            });
        }
        Ok(out)
    }

    /// The vertex route's draws of batch `batch` inside the host's
    /// rendering scope, with the host's pipeline for the batch's
    /// permutation bound, made with pipeline layout `layout` (holding the
    /// route's set layouts at their numbers and its push range): vkskin
    /// binds its sets on `layout`, its vertex and index buffers, pushes its
    /// constants and draws; the host's sets and other state stay. Any
    /// number of passes may record the same frame.
    pub fn record_host(
        &self,
        cmd: vk::CommandBuffer,
        frame: &Frame,
        batch: usize,
        layout: vk::PipelineLayout,
    ) -> GpuResult<()> {
        let (b, prepared, _, _) = self.drawn_batch(frame, batch)?;
        self.skin_path()
            .record_host_vertex(cmd, frame.slot(), b, prepared, layout)
    }

    /// The compute route: where batch `batch`'s skinned vertices are in
    /// the open frame (compute and CPU stages; see [`SkinnedOutput`] for
    /// the layout and the barrier). On the compute stage they are written
    /// by [`Renderer::begin_frame`]'s dispatch, which ends with a barrier to
    /// vertex-attribute reads.
    pub fn skinned_output(&self, frame: &Frame, batch: usize) -> GpuResult<SkinnedOutput> {
        let (b, prepared, _, _) = self.drawn_batch(frame, batch)?;
        self.skin_path().skinned_output(frame.slot(), b, prepared)
    }
}
