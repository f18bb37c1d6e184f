//! `--own-shader vertex|compute`: the host draws vkskin's characters with
//! its OWN textured shader (the GLSL below, compiled here), through one of
//! vkskin's two host routes (`vkskin::embed`, "Skinning in the host's
//! shaders"):
//!
//! - vertex: the host's vertex shader includes vkskin's generated header
//!   and calls `skin_vertex()`; its pipeline layout holds vkskin's set
//!   layouts at the route's set numbers and its push range; vkskin records
//!   the draws (`Renderer::record_host`) with the host's pipeline bound;
//! - compute: the host reads the compute stage's skinned output
//!   (`Renderer::skinned_output`) as plain vertex buffers and draws it
//!   itself, one draw per instance.
//!
//! The fragment shader is the host's, with its own set 0 (a uniform buffer
//! and the model's base-colour texture through a sampler of its own). It
//! shades as vkskin's `skinned.frag` does (same light formula, same texture
//! encoded back to sRGB on a UNORM target), so its frames can be compared
//! with vkskin's own.

use vkskin::embed::{HostBatch, Renderer, HOST_SKIN_HEADER};
use vkskin::gpu::{ash, compile, vk, ShaderDesc, ShaderSources};

/// Which host route the host's own shader takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// The host's vertex shader skins (`skin_vertex()`).
    Vertex,
    /// The host draws the compute stage's skinned output.
    Compute,
}

/// The host's scene uniforms (set 0, binding 0; std140).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Scene {
    pub view_proj: [[f32; 4]; 4],
    /// Towards the light (xyz).
    pub light: [f32; 4],
    /// Linear RGB.
    pub color: [f32; 4],
    /// The material's base colour factor.
    pub factor: [f32; 4],
}

const FRAGMENT: &str = r#"#version 460
// The host's fragment shader: vkskin's skinned.frag formula, its own code.
layout(set = 0, binding = 0, std140) uniform Scene {
    mat4 view_proj;
    vec4 light;
    vec4 color;
    vec4 factor;
} scene;
layout(set = 0, binding = 1) uniform sampler2D albedo;
layout(location = 0) in vec3 v_normal;
layout(location = 1) in vec2 v_uv;
layout(location = 2) in vec4 v_tint;
layout(location = 3) in vec4 v_color;
layout(location = 0) out vec4 o_color;
#ifdef MOTION
// World-space previous and current positions (the vertex route's
// skin_vertex_previous()).
layout(location = 4) in vec3 v_prev_position;
layout(location = 5) in vec3 v_position;
#endif

// The target is UNORM: the linear sample goes back to sRGB.
vec3 to_srgb(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(vec3(0.0031308), c));
}

void main() {
#ifdef MOTION
    // A velocity view (scene.light.w == 2), as vkskin's motion view:
    // 0.5 + 0.5 * clamp(velocity * scene.color.w) per axis.
    if (scene.light.w > 1.5) {
        vec3 v = (v_position - v_prev_position) * scene.color.w;
        o_color = vec4(0.5 + 0.5 * clamp(v, -1.0, 1.0), 1.0);
        return;
    }
#endif
    vec4 t = texture(albedo, v_uv);
    t.rgb = to_srgb(t.rgb);
    vec4 base = scene.factor * t * v_color;
    vec3 c = scene.color.rgb * v_tint.rgb * base.rgb;
    float d = abs(dot(normalize(v_normal), normalize(scene.light.xyz)));
    o_color = vec4(c * (0.25 + 0.75 * d), 1.0);
}
"#;

const VERTEX_ROUTE: &str = r#"#version 460
// The host's vertex shader on the vertex route: vkskin's header (defines,
// the path's storage and encoding, skin/host/skin_vertex.glsl), then the
// host's own code.
#include "skin/gen/host_skin.glsl"
layout(set = 0, binding = 0, std140) uniform Scene {
    mat4 view_proj;
    vec4 light;
    vec4 color;
    vec4 factor;
} scene;
layout(location = 0) out vec3 v_normal;
layout(location = 1) out vec2 v_uv;
layout(location = 2) out vec4 v_tint;
layout(location = 3) out vec4 v_color;
#ifdef MOTION
// The header defines MOTION on a path built with motion vectors.
layout(location = 4) out vec3 v_prev_position;
layout(location = 5) out vec3 v_position;
#endif

void main() {
    SkinnedVertex s = skin_vertex();
#ifdef MOTION
    v_prev_position = skin_vertex_previous();
    v_position = s.world_position;
#endif
    v_normal = s.world_normal;
    v_uv = s.uv;
    v_tint = s.tint;
    v_color = s.color;
    gl_Position = scene.view_proj * vec4(s.world_position, 1.0);
}
"#;

const COMPUTE_ROUTE: &str = r#"#version 460
// The host's vertex shader on the compute route: vkskin's skinned output
// (model space) as plain vertex streams, the instance's matrix pushed.
layout(set = 0, binding = 0, std140) uniform Scene {
    mat4 view_proj;
    vec4 light;
    vec4 color;
    vec4 factor;
} scene;
layout(push_constant, std430) uniform Instance {
    mat4 model;
    vec4 tint;
} inst;
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 3) in vec4 in_color;
layout(location = 0) out vec3 v_normal;
layout(location = 1) out vec2 v_uv;
layout(location = 2) out vec4 v_tint;
layout(location = 3) out vec4 v_color;

void main() {
    vec3 p = (inst.model * vec4(in_position, 1.0)).xyz;
    v_normal = normalize(transpose(inverse(mat3(inst.model))) * in_normal);
    v_uv = in_uv;
    v_tint = inst.tint;
    v_color = in_color;
    gl_Position = scene.view_proj * vec4(p, 1.0);
}
"#;

/// The compute route's push constants: the instance's model matrix and
/// tint (the host placed the instances, so it knows both).
#[repr(C)]
#[derive(Clone, Copy)]
struct InstancePush {
    model: [[f32; 4]; 4],
    tint: [f32; 4],
}

fn vkerr(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("{what}: {e}")
}

/// The host's own pipelines and objects for one route, destroyed on drop
/// (before the host's device; the host waits for its frames first).
pub struct OwnShader {
    device: ash::Device,
    route: Route,
    set0_layout: vk::DescriptorSetLayout,
    empty_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set0: vk::DescriptorSet,
    sampler: vk::Sampler,
    /// Per permutation (influences, morph) on the vertex route; one entry
    /// on the compute route.
    pipelines: Vec<((u32, bool), vk::PipelineLayout, vk::Pipeline)>,
    color_format: vk::Format,
    depth_format: vk::Format,
    /// Per instance of the compute route: model matrix and tint.
    instance: InstancePush,
    /// The path draws motion vectors: the fragment shader's velocity view.
    motion: bool,
}

impl Drop for OwnShader {
    fn drop(&mut self) {
        // SAFETY: every handle was made on `device` here; the host has
        // waited for the frames that used them.
        unsafe {
            for (_, layout, pipeline) in self.pipelines.drain(..) {
                self.device.destroy_pipeline(pipeline, None);
                self.device.destroy_pipeline_layout(layout, None);
            }
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_sampler(self.sampler, None);
            self.device
                .destroy_descriptor_set_layout(self.empty_layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set0_layout, None);
        }
    }
}

impl OwnShader {
    /// The host's set 0 (its scene uniform buffer `scene`, and `texture`, a
    /// view of the character's base-colour texture, in
    /// SHADER_READ_ONLY_OPTIMAL, through the host's own nearest sampler).
    pub fn new(
        device: &ash::Device,
        route: Route,
        scene: vk::Buffer,
        texture: vk::ImageView,
        color_format: vk::Format,
        depth_format: vk::Format,
        motion: bool,
    ) -> Result<Self, String> {
        let d = device.clone();
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::FRAGMENT),
        ];
        let mut own = Self {
            device: d.clone(),
            route,
            set0_layout: vk::DescriptorSetLayout::null(),
            empty_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            set0: vk::DescriptorSet::null(),
            sampler: vk::Sampler::null(),
            pipelines: Vec::new(),
            color_format,
            depth_format,
            motion,
            instance: InstancePush {
                model: [
                    [1.0, 0.0, 0.0, 0.0],
                    [0.0, 1.0, 0.0, 0.0],
                    [0.0, 0.0, 1.0, 0.0],
                    [0.0, 0.0, 0.0, 1.0],
                ],
                tint: [1.0; 4],
            },
        };
        // SAFETY: a live device; every create info points at locals alive
        // for its call; what is made is destroyed by `Drop` (null handles
        // are ignored by the destroy calls).
        unsafe {
            own.set0_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(vkerr("creating the host's set layout"))?;
            own.empty_layout = d
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default(), None)
                .map_err(vkerr("creating an empty set layout"))?;
            let sizes = [
                vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::UNIFORM_BUFFER,
                    descriptor_count: 1,
                },
                vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                    descriptor_count: 1,
                },
            ];
            own.pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("creating the host's descriptor pool"))?;
            let layouts = [own.set0_layout];
            own.set0 = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(own.pool)
                        .set_layouts(&layouts),
                )
                .map_err(vkerr("allocating the host's set"))?[0];
            own.sampler = d
                .create_sampler(
                    &vk::SamplerCreateInfo::default()
                        .mag_filter(vk::Filter::NEAREST)
                        .min_filter(vk::Filter::NEAREST)
                        .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                        .address_mode_u(vk::SamplerAddressMode::REPEAT)
                        .address_mode_v(vk::SamplerAddressMode::REPEAT)
                        .address_mode_w(vk::SamplerAddressMode::REPEAT)
                        .min_lod(0.0)
                        .max_lod(0.0),
                    None,
                )
                .map_err(vkerr("creating the host's sampler"))?;
            let buffer = [vk::DescriptorBufferInfo {
                buffer: scene,
                offset: 0,
                range: std::mem::size_of::<Scene>() as u64,
            }];
            let image = [vk::DescriptorImageInfo {
                sampler: own.sampler,
                image_view: texture,
                image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            }];
            let writes = [
                vk::WriteDescriptorSet::default()
                    .dst_set(own.set0)
                    .dst_binding(0)
                    .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                    .buffer_info(&buffer),
                vk::WriteDescriptorSet::default()
                    .dst_set(own.set0)
                    .dst_binding(1)
                    .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                    .image_info(&image),
            ];
            d.update_descriptor_sets(&writes, &[]);
        }
        Ok(own)
    }

    /// The pipeline (and its layout) of permutation `key`, made on first
    /// use.
    fn pipeline(
        &mut self,
        renderer: &Renderer,
        key: (u32, bool),
    ) -> Result<(vk::PipelineLayout, vk::Pipeline), String> {
        let key = if self.route == Route::Compute {
            (0, false)
        } else {
            key
        };
        if let Some((_, l, p)) = self.pipelines.iter().find(|(k, _, _)| *k == key) {
            return Ok((*l, *p));
        }
        let gpu = |e: vkskin::gpu::GpuError| e.to_string();
        let (sources, vertex_file, bindings, attributes, set_layouts, push) = match self.route {
            Route::Vertex => {
                let route = renderer.host_vertex_route(key.0, key.1).map_err(gpu)?;
                // Set 0 is the host's, vkskin's sets at their numbers, the
                // numbers between empty.
                let top = route.set_layouts.iter().map(|s| s.0).max().unwrap_or(0);
                let mut sets = vec![self.empty_layout; top as usize + 1];
                sets[0] = self.set0_layout;
                for &(n, l) in &route.set_layouts {
                    sets[n as usize] = l;
                }
                let sources = route
                    .sources()
                    .with("host/skinned.vert", VERTEX_ROUTE)
                    .with("host/skinned.frag", FRAGMENT);
                if !VERTEX_ROUTE.contains(HOST_SKIN_HEADER) {
                    return Err(format!("the host's shader must include {HOST_SKIN_HEADER}"));
                }
                (
                    sources,
                    "host/skinned.vert",
                    route.vertex_bindings,
                    route.vertex_attributes,
                    sets,
                    route.push_constants.into_iter().collect::<Vec<_>>(),
                )
            }
            Route::Compute => {
                let v = vk::VertexInputRate::VERTEX;
                let binding = |b, stride| {
                    vk::VertexInputBindingDescription::default()
                        .binding(b)
                        .stride(stride)
                        .input_rate(v)
                };
                let attr = |location, b, format, offset| {
                    vk::VertexInputAttributeDescription::default()
                        .location(location)
                        .binding(b)
                        .format(format)
                        .offset(offset)
                };
                let f3 = vk::Format::R32G32B32_SFLOAT;
                // The strides and formats SkinnedOutput states (checked
                // when drawing).
                let sources = ShaderSources::default()
                    .with("host/plain.vert", COMPUTE_ROUTE)
                    .with("host/skinned.frag", FRAGMENT);
                (
                    sources,
                    "host/plain.vert",
                    vec![
                        binding(0, 12),
                        binding(1, 12),
                        binding(2, 32),
                        binding(3, 16),
                    ],
                    vec![
                        attr(0, 0, f3, 0),
                        attr(1, 1, f3, 0),
                        attr(2, 2, vk::Format::R32G32_SFLOAT, 24),
                        attr(3, 3, vk::Format::R32G32B32A32_SFLOAT, 0),
                    ],
                    vec![self.set0_layout],
                    vec![vk::PushConstantRange::default()
                        .stage_flags(vk::ShaderStageFlags::VERTEX)
                        .size(std::mem::size_of::<InstancePush>() as u32)],
                )
            }
        };
        let vs = compile(&sources, &ShaderDesc::new(vertex_file)).map_err(gpu)?;
        let mut fdesc = ShaderDesc::new("host/skinned.frag");
        if self.motion {
            fdesc = fdesc.define("MOTION", 1);
        }
        let fs = compile(&sources, &fdesc).map_err(gpu)?;
        let d = self.device.clone();
        // SAFETY: a live device; the create infos point at locals alive for
        // each call; the modules go once the pipeline is made; the layout
        // and pipeline are kept and destroyed by `Drop`.
        unsafe {
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&push),
                    None,
                )
                .map_err(vkerr("creating the host's pipeline layout"))?;
            self.pipelines.push((key, layout, vk::Pipeline::null()));
            let module = |code: &[u32]| {
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None)
            };
            let vm = module(&vs).map_err(vkerr("creating a shader module"))?;
            let fm = match module(&fs) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_shader_module(vm, None);
                    return Err(format!("creating a shader module: {e}"));
                }
            };
            let stages = [
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::VERTEX)
                    .module(vm)
                    .name(c"main"),
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::FRAGMENT)
                    .module(fm)
                    .name(c"main"),
            ];
            let input = vk::PipelineVertexInputStateCreateInfo::default()
                .vertex_binding_descriptions(&bindings)
                .vertex_attribute_descriptions(&attributes);
            let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
                .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
            let viewport = vk::PipelineViewportStateCreateInfo::default()
                .viewport_count(1)
                .scissor_count(1);
            let raster = vk::PipelineRasterizationStateCreateInfo::default()
                .polygon_mode(vk::PolygonMode::FILL)
                .cull_mode(vk::CullModeFlags::NONE)
                .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
                .line_width(1.0);
            let multisample = vk::PipelineMultisampleStateCreateInfo::default()
                .rasterization_samples(vk::SampleCountFlags::TYPE_1);
            let depth = vk::PipelineDepthStencilStateCreateInfo::default()
                .depth_test_enable(true)
                .depth_write_enable(true)
                .depth_compare_op(vk::CompareOp::LESS_OR_EQUAL);
            let attachments = [vk::PipelineColorBlendAttachmentState::default()
                .color_write_mask(vk::ColorComponentFlags::RGBA)];
            let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
            let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
            let dynamic =
                vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
            let formats = [self.color_format];
            let mut rendering = vk::PipelineRenderingCreateInfo::default()
                .color_attachment_formats(&formats)
                .depth_attachment_format(self.depth_format);
            let info = vk::GraphicsPipelineCreateInfo::default()
                .stages(&stages)
                .vertex_input_state(&input)
                .input_assembly_state(&assembly)
                .viewport_state(&viewport)
                .rasterization_state(&raster)
                .multisample_state(&multisample)
                .depth_stencil_state(&depth)
                .color_blend_state(&blend)
                .dynamic_state(&dynamic)
                .layout(layout)
                .push_next(&mut rendering);
            let made = d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None);
            d.destroy_shader_module(vm, None);
            d.destroy_shader_module(fm, None);
            let pipeline = made.map_err(|(_, e)| format!("creating the host's pipeline: {e}"))?[0];
            if let Some(last) = self.pipelines.last_mut() {
                last.2 = pipeline;
            }
            Ok((layout, pipeline))
        }
    }

    /// Records the host's own draws of every batch of `frame` inside its
    /// rendering scope (viewport and scissor set).
    pub fn record(
        &mut self,
        renderer: &Renderer,
        cmd: vk::CommandBuffer,
        frame: &vkskin::embed::Frame,
    ) -> Result<(), String> {
        let gpu = |e: vkskin::gpu::GpuError| e.to_string();
        let batches: Vec<HostBatch> = renderer.host_batches(frame).map_err(gpu)?;
        let d = self.device.clone();
        let gfx = vk::PipelineBindPoint::GRAPHICS;
        for b in &batches {
            let (layout, pipeline) = self.pipeline(renderer, (b.influences, b.morph))?;
            // SAFETY: the host's command buffer inside its rendering scope;
            // its pipeline and set 0 (written at creation, its buffer and
            // vkskin's texture alive for the frame).
            unsafe {
                d.cmd_bind_pipeline(cmd, gfx, pipeline);
                d.cmd_bind_descriptor_sets(cmd, gfx, layout, 0, &[self.set0], &[]);
            }
            match self.route {
                Route::Vertex => renderer
                    .record_host(cmd, frame, b.index, layout)
                    .map_err(gpu)?,
                Route::Compute => {
                    let out = renderer.skinned_output(frame, b.index).map_err(gpu)?;
                    if out.stride != 12
                        || out.position_format != vk::Format::R32G32B32_SFLOAT
                        || out.normal_format != vk::Format::R32G32B32_SFLOAT
                        || out.base_stride != 32
                        || out.uv_offset != 24
                    {
                        return Err(format!("the skinned output's layout changed: {out:?}"));
                    }
                    let push = bytes_of(&self.instance);
                    for i in 0..out.instances {
                        // SAFETY: as above; vkskin's buffers (output, base
                        // vertices, colours, indices) live until the frame
                        // retires; the offsets are the ones it exposed.
                        unsafe {
                            d.cmd_bind_vertex_buffers(
                                cmd,
                                0,
                                &[out.buffer, out.buffer, out.base_vertices, out.colors],
                                &[out.positions_at(i), out.normals_at(i), 0, 0],
                            );
                            d.cmd_bind_index_buffer(cmd, out.indices, 0, vk::IndexType::UINT32);
                            d.cmd_push_constants(
                                cmd,
                                layout,
                                vk::ShaderStageFlags::VERTEX,
                                0,
                                push,
                            );
                            d.cmd_draw_indexed(cmd, out.index_count, 1, 0, 0, 0);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

fn bytes_of(p: &InstancePush) -> &[u8] {
    // SAFETY: `InstancePush` is repr(C) plain floats without padding; the
    // slice covers exactly its bytes and borrows it.
    unsafe {
        std::slice::from_raw_parts(
            (p as *const InstancePush).cast::<u8>(),
            std::mem::size_of::<InstancePush>(),
        )
    }
}
