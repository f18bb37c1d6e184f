use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat4};

use crate::gpu::{
    vk, Device, GpuResult, GraphicsPipelineDesc, Pipeline, PipelineLayout, ShaderDesc,
    ShaderModule, ShaderSources,
};

/// Host mirror of the `Marker` push-constant block in
/// `shaders/debug/marker.vert` (checked by a test).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MarkerPush {
    /// Clip-from-marker matrix (view-projection x joint x scale),
    /// column-major.
    pub mvp: [[f32; 4]; 4],
    /// Linear RGBA.
    pub color: [f32; 4],
}

/// Draws a small three-axis cross at each joint, oriented by the joint's
/// model matrix: a debug view of the skeleton, no vertex buffers.
pub struct JointMarkers {
    device: Arc<Device>,
    pipeline: Pipeline,
}

impl JointMarkers {
    /// The vertex shader, in the shader sources.
    pub const VERTEX: &'static str = "debug/marker.vert";
    /// The fragment shader, in the shader sources.
    pub const FRAGMENT: &'static str = "debug/marker.frag";

    /// Compiles the marker shaders from `sources` and builds the pipeline
    /// for the given attachment formats (depth `UNDEFINED` for none).
    pub fn new(
        device: &Arc<Device>,
        sources: &ShaderSources,
        color_format: vk::Format,
        depth_format: vk::Format,
    ) -> GpuResult<Self> {
        let vertex = ShaderModule::compile(device, sources, &ShaderDesc::new(Self::VERTEX))?;
        let fragment = ShaderModule::compile(device, sources, &ShaderDesc::new(Self::FRAGMENT))?;
        let range = vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::VERTEX)
            .offset(0)
            .size(std::mem::size_of::<MarkerPush>() as u32);
        let layout = PipelineLayout::new(device, &[], &[range])?;
        let pipeline = Pipeline::graphics(
            device,
            &layout,
            &GraphicsPipelineDesc {
                vertex: &vertex,
                fragment: &fragment,
                vertex_bindings: &[],
                vertex_attributes: &[],
                topology: vk::PrimitiveTopology::LINE_LIST,
                polygon_mode: vk::PolygonMode::FILL,
                cull_mode: vk::CullModeFlags::NONE,
                front_face: vk::FrontFace::COUNTER_CLOCKWISE,
                // Always on top: markers sit inside the mesh.
                depth_test: false,
                depth_write: false,
                color_formats: &[color_format],
                depth_format,
            },
        )?;
        Ok(Self {
            device: device.clone(),
            pipeline,
        })
    }

    /// Records one cross of half-size `size` per joint model matrix. `cmd`
    /// must be a recording command buffer of the same device, inside a
    /// rendering scope with attachments of the formats given to
    /// [`JointMarkers::new`].
    pub fn record(
        &self,
        cmd: vk::CommandBuffer,
        view_proj: Mat4,
        joints: &[Affine3A],
        size: f32,
        color: [f32; 4],
    ) {
        let d = self.device.raw();
        self.pipeline.bind(cmd);
        for m in joints {
            let push = MarkerPush {
                mvp: (view_proj * Mat4::from(*m) * Mat4::from_scale(glam::Vec3::splat(size)))
                    .to_cols_array_2d(),
                color,
            };
            // SAFETY: `d` is live while `self.device` is; `cmd` is recording
            // inside a rendering scope (the documented contract) with this
            // pipeline, alive in `self`, bound just above; the pushed bytes
            // are `size_of::<MarkerPush>()` at offset 0 for the VERTEX stage,
            // exactly the layout's one range; the draw reads no vertex
            // buffers (the shader builds the six vertices).
            unsafe {
                d.cmd_push_constants(
                    cmd,
                    self.pipeline.layout().raw(),
                    vk::ShaderStageFlags::VERTEX,
                    0,
                    bytemuck::bytes_of(&push),
                );
                d.cmd_draw(cmd, 6, 1, 0, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{compile, reflect::struct_layout};

    #[test]
    fn marker_push_matches_the_shader_block() {
        let spirv = compile(
            &ShaderSources::embedded(),
            &ShaderDesc::new(JointMarkers::VERTEX),
        )
        .unwrap();
        let l = struct_layout(&spirv, "Marker").unwrap();
        assert_eq!(
            l.member("mvp").unwrap().offset as usize,
            std::mem::offset_of!(MarkerPush, mvp)
        );
        assert_eq!(
            l.member("color").unwrap().offset as usize,
            std::mem::offset_of!(MarkerPush, color)
        );
        assert_eq!(std::mem::size_of::<MarkerPush>(), 80);
    }
}
