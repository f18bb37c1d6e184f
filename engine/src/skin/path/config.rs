//! [`SkinPathConfig`]: how a [`super::SkinPath`] draws (formats, frames in
//! flight, culling and the optional outputs: capture, motion, GPU
//! animation).

use crate::gpu::{vk, ShaderSources};
/// How a [`super::SkinPath`] draws.
#[derive(Clone, Debug)]
pub struct SkinPathConfig {
    /// Frames the caller keeps in flight, 1 to 8: one set of per-frame
    /// storage each.
    pub frames_in_flight: usize,
    /// The colour attachment format the graphics pipelines are built for.
    pub color_format: vk::Format,
    /// `UNDEFINED` for no depth.
    pub depth_format: vk::Format,
    /// Faces culled (`NONE` by default; front faces are counter-clockwise).
    pub cull_mode: vk::CullModeFlags,
    /// Also build wireframe (`PolygonMode::LINE`) pipelines, where the
    /// device has fillModeNonSolid.
    pub wireframe: bool,
    /// Build the capture permutation (every draw needs a [`CaptureBuffer`]).
    pub capture: bool,
    /// Fewer bones per draw than the device allows (tests force
    /// partitioning with it).
    pub capacity_limit: Option<usize>,
    /// Fewer bytes of morph deltas per mesh than the device's
    /// maxTexelBufferElements texels of 16 bytes (tests force the refusal
    /// with it).
    pub morph_bytes_limit: Option<u64>,
    /// Motion vectors (the `MOTION` permutation): every instance also
    /// keeps its previous palette (and morph weights) beside the current
    /// one and each path skins the previous pose too: the vertex stage
    /// outputs it as `out_prev_position` (location 3, world space through
    /// the instance record), the compute and CPU stages write it into a
    /// third region of their output buffer (the plain pipeline's stream 5,
    /// location 12). Filled by [`InstanceWriter::write_motion`]; the other
    /// writers report zero motion (previous = current). On the windowed
    /// storages (ubo, push) each draw's window holds a partition's palette
    /// then its previous one, so the bones per draw halve (meshes
    /// partition at half the window).
    pub motion: bool,
    /// The palette buffers are also storage buffers, so that GPU
    /// animation (`skin::anim::GpuAnimator`) can write them.
    pub gpu_animation: bool,
    /// Extra usage flags for the compute and CPU stages' skinned-output
    /// buffer (see `SkinPath::skinned_output`), on top of vertex buffer,
    /// storage buffer (compute) and transfer source. A host that builds
    /// ray-tracing acceleration structures from the skinned vertices asks
    /// for `SHADER_DEVICE_ADDRESS | ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR`
    /// here, having enabled `bufferDeviceAddress` and
    /// `VK_KHR_acceleration_structure` on the device it gave vkskin.
    /// `SHADER_DEVICE_ADDRESS` on a device without `bufferDeviceAddress`
    /// is an `Err` from `SkinPath::new`. Empty by default.
    pub output_usage: vk::BufferUsageFlags,
    /// Where the GLSL comes from (the embedded `shaders/` by default).
    pub sources: ShaderSources,
}

impl SkinPathConfig {
    /// A config for these formats (`depth_format` `UNDEFINED` for no depth)
    /// and frames in flight; the rest default: no culling, no wireframe, no
    /// capture, no capacity limit, the embedded shaders.
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
            morph_bytes_limit: None,
            motion: false,
            gpu_animation: false,
            output_usage: vk::BufferUsageFlags::empty(),
            sources: ShaderSources::embedded(),
        }
    }
}
