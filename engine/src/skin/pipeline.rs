use std::sync::Arc;

use crate::gpu::{
    vk, Device, GpuError, GpuResult, GraphicsPipelineDesc, Pipeline, PipelineLayout, ShaderDesc,
    ShaderModule, ShaderSources,
};

use super::{CaptureBuffer, FrameSets, GpuMesh, SkinningPath};

/// The fragment shader of skinned meshes.
pub const SKINNED_FRAGMENT: &str = "skin/skinned.frag";

/// How a skinned pipeline draws.
#[derive(Clone, Copy, Debug)]
pub struct SkinPipelineDesc {
    pub color_format: vk::Format,
    /// `UNDEFINED` for no depth.
    pub depth_format: vk::Format,
    /// `LINE` for wireframe (needs fillModeNonSolid).
    pub polygon_mode: vk::PolygonMode,
    pub cull_mode: vk::CullModeFlags,
    /// Build the `SKIN_CAPTURE` permutation (set 2 = [`CaptureBuffer`]).
    pub capture: bool,
}

/// A graphics pipeline for one skinning path: set 0 frame uniforms, set 1
/// the path's palette, set 2 the capture buffer in capture mode.
pub struct SkinPipeline {
    device: Arc<Device>,
    pipeline: Pipeline,
    capture: bool,
}

impl SkinPipeline {
    pub fn new(
        device: &Arc<Device>,
        sources: &ShaderSources,
        path: &dyn SkinningPath,
        frame: &FrameSets,
        desc: &SkinPipelineDesc,
    ) -> GpuResult<Self> {
        if desc.capture && !device.features().vertex_pipeline_stores_and_atomics {
            return Err(GpuError::InvalidArgument(
                "capture mode needs vertexPipelineStoresAndAtomics, which this device lacks".into(),
            ));
        }
        let mut vdesc = ShaderDesc::new(path.vertex_shader()).defines(&path.defines());
        if desc.capture {
            vdesc = vdesc.define("SKIN_CAPTURE", 1);
        }
        let vertex = ShaderModule::compile(device, sources, &vdesc)?;
        let fragment = ShaderModule::compile(device, sources, &ShaderDesc::new(SKINNED_FRAGMENT))?;
        // The capture layout is only needed while the pipeline layout is made.
        let capture_layout = if desc.capture {
            Some(CaptureBuffer::set_layout(device)?)
        } else {
            None
        };
        let mut sets = vec![frame.layout().raw(), path.set_layout().raw()];
        if let Some(l) = &capture_layout {
            sets.push(l.raw());
        }
        let layout = PipelineLayout::new(device, &sets, &path.push_constant_ranges())?;
        let bindings = GpuMesh::vertex_bindings();
        let attributes = GpuMesh::vertex_attributes();
        let depth = desc.depth_format != vk::Format::UNDEFINED;
        let pipeline = Pipeline::graphics(
            device,
            &layout,
            &GraphicsPipelineDesc {
                vertex: &vertex,
                fragment: &fragment,
                vertex_bindings: &bindings,
                vertex_attributes: &attributes,
                topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                polygon_mode: desc.polygon_mode,
                cull_mode: desc.cull_mode,
                front_face: vk::FrontFace::COUNTER_CLOCKWISE,
                depth_test: depth,
                depth_write: depth,
                color_formats: &[desc.color_format],
                depth_format: desc.depth_format,
            },
        )?;
        Ok(Self {
            device: device.clone(),
            pipeline,
            capture: desc.capture,
        })
    }

    pub fn layout(&self) -> &Arc<PipelineLayout> {
        self.pipeline.layout()
    }

    pub fn is_capture(&self) -> bool {
        self.capture
    }

    /// Records the draw of `mesh` through `path` with frame `frame`'s
    /// uniforms and palette, inside a rendering scope. A capture pipeline
    /// needs `capture`.
    pub fn record(
        &self,
        cmd: vk::CommandBuffer,
        frame_sets: &FrameSets,
        frame: usize,
        path: &dyn SkinningPath,
        mesh: &GpuMesh,
        capture: Option<&CaptureBuffer>,
    ) -> GpuResult<()> {
        if mesh.joints_used() > path.capacity() {
            return Err(GpuError::Limit {
                what: "palette bones for this mesh",
                needed: mesh.joints_used() as u64,
                limit: path.capacity() as u64,
            });
        }
        let d = &self.device;
        let layout = self.pipeline.layout();
        self.pipeline.bind(cmd);
        let sets = [frame_sets.set(frame)];
        // SAFETY: `cmd` is recording; set 0 is the frame layout.
        unsafe {
            d.raw().cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                layout.raw(),
                0,
                &sets,
                &[],
            )
        };
        match (self.capture, capture) {
            (true, Some(c)) => {
                if (c.buffer().size() as usize)
                    < mesh.vertex_count() as usize * std::mem::size_of::<super::CapturedVertex>()
                {
                    return Err(GpuError::InvalidArgument(
                        "the capture buffer is smaller than the mesh".into(),
                    ));
                }
                // SAFETY: as above, set 2 is the capture layout.
                unsafe {
                    d.raw().cmd_bind_descriptor_sets(
                        cmd,
                        vk::PipelineBindPoint::GRAPHICS,
                        layout.raw(),
                        2,
                        &[c.set()],
                        &[],
                    )
                };
            }
            (true, None) => {
                return Err(GpuError::InvalidArgument(
                    "a capture pipeline draws only with a capture buffer".into(),
                ))
            }
            _ => {}
        }
        path.record_draw(d, cmd, layout, frame, mesh);
        Ok(())
    }
}
