use glam::Affine3A;

use crate::gpu::{vk, DescriptorSetLayout, Device, GpuResult, PipelineLayout};

use super::GpuMesh;

/// One way of getting a palette to the vertex shader and blending it.
///
/// A path owns its palette storage, one copy per frame in flight (written
/// by the CPU only for a frame whose previous submission has finished, so
/// nothing the GPU may still read is overwritten), the descriptor set
/// layout of pipeline set 1, the vertex shader and its permutation defines,
/// and the recording of a draw. Set 0 is the frame's uniforms
/// ([`super::FrameSets`]); set 2 the capture buffer in capture mode.
///
/// Adding a path means adding one Rust file implementing this trait (plus
/// its GLSL palette include and a three-line `.vert` entry) and one
/// [`PathKind`] variant.
pub trait SkinningPath {
    /// Short, file-name safe name ("4x3-ubo").
    fn name(&self) -> &'static str;
    /// The vertex shader, a path in [`crate::gpu::ShaderSources`].
    fn vertex_shader(&self) -> &'static str;
    /// Macro defines selecting this path's permutation.
    fn defines(&self) -> Vec<(String, String)>;
    /// Layout of pipeline set 1.
    fn set_layout(&self) -> &DescriptorSetLayout;
    /// Push-constant ranges the path's shader declares.
    fn push_constant_ranges(&self) -> Vec<vk::PushConstantRange> {
        Vec::new()
    }
    /// Bones one palette holds.
    fn capacity(&self) -> usize;
    fn frames_in_flight(&self) -> usize;
    /// Encodes and writes frame `frame`'s palette from skinning matrices
    /// (`model[joint] * inverse_bind`). The caller has waited for that
    /// frame's previous submission.
    fn upload(&mut self, frame: usize, skin: &[Affine3A]) -> GpuResult<()>;
    /// Decodes frame `frame`'s palette storage back into matrices, as the
    /// GPU will read it (all `capacity` entries): for tests.
    fn read_back(&self, frame: usize) -> GpuResult<Vec<Affine3A>>;
    /// Binds frame `frame`'s palette (set 1, push constants) for `layout`.
    fn bind(&self, device: &Device, cmd: vk::CommandBuffer, layout: &PipelineLayout, frame: usize);
    /// Records the draw of `mesh` with frame `frame`'s palette; the
    /// pipeline and sets 0 and 2 are bound.
    fn record_draw(
        &self,
        device: &Device,
        cmd: vk::CommandBuffer,
        layout: &PipelineLayout,
        frame: usize,
        mesh: &GpuMesh,
    ) {
        self.bind(device, cmd, layout, frame);
        mesh.draw(device, cmd, 1);
    }
}

/// The paths there are, for samples and tests that loop over them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// 4x3 rows in a uniform buffer ([`super::Palette4x3Ubo`]).
    Palette4x3Ubo,
}

impl PathKind {
    pub const ALL: &'static [PathKind] = &[PathKind::Palette4x3Ubo];

    pub fn name(self) -> &'static str {
        match self {
            PathKind::Palette4x3Ubo => super::palette_4x3_ubo::NAME,
        }
    }

    /// The path called `name` (see [`SkinningPath::name`]).
    pub fn from_name(name: &str) -> Option<PathKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Creates the path with room for `capacity` bones per palette.
    pub fn create(
        self,
        device: &std::sync::Arc<Device>,
        capacity: usize,
        frames_in_flight: usize,
    ) -> GpuResult<Box<dyn SkinningPath>> {
        match self {
            PathKind::Palette4x3Ubo => Ok(Box::new(super::Palette4x3Ubo::new(
                device,
                capacity,
                frames_in_flight,
            )?)),
        }
    }
}
