use std::sync::Arc;

use ash::vk;

use super::retire::Garbage;
use super::{Device, GpuError, GpuResult, ShaderModule};

/// A pipeline layout, destroyed on drop once the frames that may have it
/// bound have retired.
pub struct PipelineLayout {
    device: Arc<Device>,
    raw: vk::PipelineLayout,
}

impl PipelineLayout {
    /// Creates a layout of `set_layouts` (live layouts of `device`) and
    /// `push_constants`; push constants past the device's
    /// `maxPushConstantsSize` are [`GpuError::Limit`].
    pub fn new(
        device: &Arc<Device>,
        set_layouts: &[vk::DescriptorSetLayout],
        push_constants: &[vk::PushConstantRange],
    ) -> GpuResult<Arc<Self>> {
        let limit = device.limits().max_push_constants_size;
        if let Some(r) = push_constants.iter().find(|r| r.offset + r.size > limit) {
            return Err(GpuError::Limit {
                what: "push constant bytes",
                needed: u64::from(r.offset + r.size),
                limit: u64::from(limit),
            });
        }
        let info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(set_layouts)
            .push_constant_ranges(push_constants);
        // SAFETY: `device` is live (the caller's `Arc`); `info` points at the
        // caller's slices, borrowed for the call; the set layouts are live
        // layouts of `device` (the documented contract; engine callers pass
        // `DescriptorSetLayout::raw` of layouts they hold), and the push
        // constant ranges fit the device's limit (checked above).
        let raw = unsafe { device.raw().create_pipeline_layout(&info, None)? };
        Ok(Arc::new(Self {
            device: device.clone(),
            raw,
        }))
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::PipelineLayout {
        self.raw
    }
}

impl Drop for PipelineLayout {
    fn drop(&mut self) {
        // Pipelines made with it hold an Arc, so are gone; frames in flight
        // may still have it bound.
        self.device.retire(Garbage::PipelineLayout(self.raw));
    }
}

/// A graphics pipeline for dynamic rendering, with dynamic viewport and
/// scissor. Alpha blending is off (see
/// [`GraphicsOptions`]); one colour attachment per format.
#[derive(Clone)]
pub struct GraphicsPipelineDesc<'a> {
    /// The vertex shader (entry point `main`).
    pub vertex: &'a ShaderModule,
    /// The fragment shader (entry point `main`).
    pub fragment: &'a ShaderModule,
    /// Vertex buffer bindings (empty when the shader reads no vertex input).
    pub vertex_bindings: &'a [vk::VertexInputBindingDescription],
    /// Vertex attributes read from those bindings.
    pub vertex_attributes: &'a [vk::VertexInputAttributeDescription],
    /// Primitive topology (triangle list, line list...).
    pub topology: vk::PrimitiveTopology,
    /// Fill, or lines for wireframe (needs
    /// [`super::EnabledFeatures::fill_mode_non_solid`]).
    pub polygon_mode: vk::PolygonMode,
    /// Which faces are culled.
    pub cull_mode: vk::CullModeFlags,
    /// With [`crate::render::Camera`]'s Y-flipped projection, the usual
    /// counter-clockwise front faces stay counter-clockwise.
    pub front_face: vk::FrontFace,
    /// Test depth with `LESS_OR_EQUAL`.
    pub depth_test: bool,
    /// Write depth.
    pub depth_write: bool,
    /// One colour attachment per format, in order.
    pub color_formats: &'a [vk::Format],
    /// `UNDEFINED` for no depth attachment.
    pub depth_format: vk::Format,
}

/// What [`Pipeline::graphics_with`] adds to a [`GraphicsPipelineDesc`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphicsOptions {
    /// Straight-alpha blending on every colour attachment
    /// (`src * a + dst * (1 - a)`; alpha `a + dst * (1 - a)`).
    pub alpha_blend: bool,
    /// The cull mode is dynamic state (`vkCmdSetCullMode`, core in Vulkan
    /// 1.3); `GraphicsPipelineDesc::cull_mode` is then ignored.
    pub dynamic_cull_mode: bool,
}

/// A graphics or compute pipeline, destroyed on drop once the frames that
/// may use it have retired. Holds its layout alive.
pub struct Pipeline {
    device: Arc<Device>,
    raw: vk::Pipeline,
    layout: Arc<PipelineLayout>,
    bind_point: vk::PipelineBindPoint,
}

impl Pipeline {
    /// Creates a graphics pipeline from `desc` with `layout`. A non-solid
    /// polygon mode without the feature is [`GpuError::InvalidArgument`].
    pub fn graphics(
        device: &Arc<Device>,
        layout: &Arc<PipelineLayout>,
        desc: &GraphicsPipelineDesc<'_>,
    ) -> GpuResult<Self> {
        Self::graphics_with(device, layout, desc, &GraphicsOptions::default())
    }

    /// [`Pipeline::graphics`] with blending or a dynamic cull mode.
    pub fn graphics_with(
        device: &Arc<Device>,
        layout: &Arc<PipelineLayout>,
        desc: &GraphicsPipelineDesc<'_>,
        options: &GraphicsOptions,
    ) -> GpuResult<Self> {
        if desc.polygon_mode != vk::PolygonMode::FILL && !device.features().fill_mode_non_solid {
            return Err(GpuError::InvalidArgument(
                "non-solid polygon mode without the fillModeNonSolid feature".into(),
            ));
        }
        let stages = [
            desc.vertex.stage_info(vk::ShaderStageFlags::VERTEX),
            desc.fragment.stage_info(vk::ShaderStageFlags::FRAGMENT),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(desc.vertex_bindings)
            .vertex_attribute_descriptions(desc.vertex_attributes);
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(desc.polygon_mode)
            .cull_mode(desc.cull_mode)
            .front_face(desc.front_face)
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let depth = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(desc.depth_test)
            .depth_write_enable(desc.depth_write)
            .depth_compare_op(vk::CompareOp::LESS_OR_EQUAL);
        let attachments: Vec<_> = desc
            .color_formats
            .iter()
            .map(|_| {
                let a = vk::PipelineColorBlendAttachmentState::default()
                    .color_write_mask(vk::ColorComponentFlags::RGBA);
                if options.alpha_blend {
                    a.blend_enable(true)
                        .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
                        .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                        .color_blend_op(vk::BlendOp::ADD)
                        .src_alpha_blend_factor(vk::BlendFactor::ONE)
                        .dst_alpha_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                        .alpha_blend_op(vk::BlendOp::ADD)
                } else {
                    a
                }
            })
            .collect();
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
        let dynamic_states = [
            vk::DynamicState::VIEWPORT,
            vk::DynamicState::SCISSOR,
            vk::DynamicState::CULL_MODE,
        ];
        let n_dynamic = if options.dynamic_cull_mode { 3 } else { 2 };
        let dynamic = vk::PipelineDynamicStateCreateInfo::default()
            .dynamic_states(&dynamic_states[..n_dynamic]);
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(desc.color_formats)
            .depth_attachment_format(desc.depth_format);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(layout.raw())
            .push_next(&mut rendering);
        // SAFETY: `device` is live (the caller's `Arc`); every pointer in
        // `info` refers to locals (`stages`, `vertex_input`, ..., `rendering`)
        // or to `desc`'s borrowed slices, all alive for the call; the shader
        // modules and `layout` are live objects of `device`, borrowed for the
        // call; the pipeline uses dynamic rendering (enabled on every
        // engine device) and needs no render pass.
        let raw = unsafe {
            device
                .raw()
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, e)| e)?;
        Ok(Self {
            device: device.clone(),
            raw: raw[0],
            layout: layout.clone(),
            bind_point: vk::PipelineBindPoint::GRAPHICS,
        })
    }

    /// Creates a compute pipeline running `shader` with `layout`.
    pub fn compute(
        device: &Arc<Device>,
        layout: &Arc<PipelineLayout>,
        shader: &ShaderModule,
    ) -> GpuResult<Self> {
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(shader.stage_info(vk::ShaderStageFlags::COMPUTE))
            .layout(layout.raw());
        // SAFETY: `device` is live (the caller's `Arc`); `shader` and
        // `layout` are live objects of it, borrowed for the call; `info` is a
        // local whose entry name is a static C string.
        let raw = unsafe {
            device
                .raw()
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, e)| e)?;
        Ok(Self {
            device: device.clone(),
            raw: raw[0],
            layout: layout.clone(),
            bind_point: vk::PipelineBindPoint::COMPUTE,
        })
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::Pipeline {
        self.raw
    }

    /// The layout the pipeline was created with.
    pub fn layout(&self) -> &Arc<PipelineLayout> {
        &self.layout
    }

    /// Binds the pipeline at its bind point (graphics or compute) in `cmd`,
    /// a command buffer of the same device in the recording state.
    pub fn bind(&self, cmd: vk::CommandBuffer) {
        // SAFETY: `self.raw` is a live pipeline of `self.device` (kept alive
        // by the `Arc`; destruction waits for the frames using it to
        // retire); `cmd` is a recording command buffer of the same device,
        // per the documented contract.
        unsafe {
            self.device
                .raw()
                .cmd_bind_pipeline(cmd, self.bind_point, self.raw)
        };
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // Destroyed once the frames that may use it have retired.
        self.device.retire(Garbage::Pipeline(self.raw));
    }
}
