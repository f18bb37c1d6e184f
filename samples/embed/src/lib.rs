//! The host side of `samples/embed`, as a library so tests can run it in
//! process: everything Vulkan here is the host's own (raw `ash`), except
//! what vkskin makes on the host's device for its skinned draws, through
//! `vkskin::embed::Renderer` in three calls per frame (`begin_frame`,
//! `record`, `end_frame`).
//!
//! The picture follows the viewer's headless look (clear colour, camera
//! framed on the animated bounds, light, material tints), so the same frame
//! from `viewer --headless` must match it.

pub mod own;
pub mod window;

use std::ffi::{c_void, CStr};
use std::sync::{Arc, Mutex};

use vkskin::assets::builtin::Character;
use vkskin::embed::{
    CharacterId, Device, EnabledFeatures, FrameUniforms, HostDevice, Instance, Pose, Renderer,
    SkinPathConfig,
};
use vkskin::glam::Affine3A;
use vkskin::gpu::{ash, vk, GpuError};
use vkskin::render::Camera;
use vkskin::skin::{auto, find};

/// The viewer's headless look (see samples/viewer).
pub const CLEAR: [f32; 4] = [0.06, 0.07, 0.09, 1.0];
pub const LIGHT: [f32; 4] = [0.3, 0.5, 1.0, 1.0];
const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
const FRAMES_IN_FLIGHT: usize = 2;

pub struct HostOptions {
    pub width: u32,
    pub height: u32,
    pub frames: u32,
    pub path: Option<String>,
    pub validation: bool,
}

pub struct HostFrame {
    pub rgba: Vec<u8>,
    /// The skinning path vkskin drew with.
    pub path: &'static str,
    /// vkskin's GPU time of an early frame (`Renderer::gpu_ms`), where the
    /// queue has timestamps and more frames than slots were drawn.
    pub gpu_ms: Option<f64>,
    /// Warnings and errors the host's own messenger received.
    pub problems: Vec<String>,
    /// [`Shading::Own`] through [`own::Route::Compute`]: the first batch's
    /// instance 0, read back by the host at the offsets vkskin exposed
    /// (`SkinnedOutput`) after the last frame: model-space positions and
    /// normals.
    pub skinned: Option<Readback>,
}

/// Positions and normals read back from vkskin's skinned output.
pub type Readback = (Vec<[f32; 3]>, Vec<[f32; 3]>);

/// How the host's frame shows the character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shading {
    /// vkskin draws it (`Renderer::record`), untextured: each mesh tinted by
    /// its material's colour.
    Vkskin,
    /// vkskin draws [`textured_character`] with its materials
    /// (`Renderer::load_materials`).
    VkskinTextured,
    /// The host draws [`textured_character`] with its own textured shader
    /// through one of vkskin's host routes (`samples/embed/src/own.rs`).
    Own(own::Route),
    /// vkskin's motion view ([`MOTION_SCALE`]) of [`textured_character`]
    /// on a path built with motion vectors.
    VkskinMotion,
    /// The same motion view from the host's own shader through the vertex
    /// route (`skin_vertex_previous()`).
    OwnMotion,
}

/// The motion views' `FrameUniforms::color[3]`: world units per frame at
/// which a velocity component saturates the colour, inverted.
pub const MOTION_SCALE: f32 = 8.0;

impl Shading {
    fn motion(self) -> bool {
        matches!(self, Shading::VkskinMotion | Shading::OwnMotion)
    }
}

/// The built-in character with a texture: texture coordinates made from
/// its bind-pose positions (four checker squares across its width) and an
/// 8x8 two-colour checker PNG, sampled nearest, as its material's
/// base-colour texture.
pub fn textured_character() -> Result<vkskin::assets::Model, String> {
    use vkskin::assets::{Filter, TextureSource};
    let mut model = Character::model();
    let (mut lo, mut hi) = (vkskin::glam::Vec3::MAX, vkskin::glam::Vec3::MIN);
    for m in &model.meshes {
        for p in &m.positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
    }
    let side = (hi - lo).max_element().max(1e-6);
    for m in &mut model.meshes {
        m.uvs = m
            .positions
            .iter()
            .map(|p| {
                let q = (*p - lo) / side;
                vkskin::glam::Vec2::new(q.x + 0.37 * q.z, q.y) * 2.0
            })
            .collect();
    }
    let mut rgba = Vec::with_capacity(8 * 8 * 4);
    for y in 0..8 {
        for x in 0..8 {
            let c: [u8; 4] = if (x + y) % 2 == 0 {
                [230, 190, 60, 255]
            } else {
                [40, 90, 200, 255]
            };
            rgba.extend_from_slice(&c);
        }
    }
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, 8, 8);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| e.to_string())?;
        w.write_image_data(&rgba).map_err(|e| e.to_string())?;
    }
    for m in &mut model.materials {
        m.texture = Some(TextureSource::Embedded {
            mime: "image/png".into(),
            bytes: png_bytes.clone(),
        });
        m.sampler.mag = Filter::Nearest;
        m.sampler.min = Filter::Nearest;
        m.sampler.mipmap = None;
    }
    Ok(model)
}

/// The host's messenger state: every warning or error, as text.
type Problems = Mutex<Vec<String>>;

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    let bad = vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
        | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR;
    if severity.intersects(bad) && !data.is_null() && !user.is_null() {
        // SAFETY: the layer passes valid callback data; `user` is the
        // `Problems` the host keeps alive until the messenger is destroyed.
        let (data, problems) = unsafe { (&*data, &*(user as *const Problems)) };
        let text = if data.p_message.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated string from the layer.
            unsafe { CStr::from_ptr(data.p_message) }
                .to_string_lossy()
                .into_owned()
        };
        if let Ok(mut p) = problems.lock() {
            p.push(text);
        }
    }
    vk::FALSE
}

/// The renderer both hosts drive: the built-in character through `path`
/// (else `skin::auto`'s choice), one instance at the origin playing its
/// first clip; with the character's animated bounds (16 samples a clip),
/// which the camera frames.
pub fn character_renderer(
    device: &Arc<Device>,
    path: Option<&str>,
    cfg: SkinPathConfig,
) -> Result<(Renderer, vkskin::assets::Bounds), String> {
    character_renderer_of(device, path, cfg, &Character::model(), false).map(|(r, b, _)| (r, b))
}

/// [`character_renderer`] of `model`, drawn with its materials when
/// `materials` (`Renderer::load_materials`; a texture warning is an error
/// here).
pub fn character_renderer_of(
    device: &Arc<Device>,
    path: Option<&str>,
    cfg: SkinPathConfig,
    model: &vkskin::assets::Model,
    materials: bool,
) -> Result<(Renderer, vkskin::assets::Bounds, CharacterId), String> {
    let gpu = |e: GpuError| e.to_string();
    let desc = match path {
        Some(p) => find(p).ok_or_else(|| format!("unknown path {p:?}"))?,
        None => auto(device, model.skins[0].len(), 1).0,
    };
    let mut renderer = Renderer::new(device, desc, cfg).map_err(gpu)?;
    let character = renderer.add_character(model).map_err(gpu)?;
    if materials {
        let warnings = renderer.load_materials(character, model).map_err(gpu)?;
        if let Some(w) = warnings.first() {
            return Err(format!("{}: {w}", model.name));
        }
    }
    let pose = if model.clips.is_empty() {
        Pose::Bind
    } else {
        Pose::clip(0)
    };
    renderer
        .add_instance(character, Affine3A::IDENTITY, pose)
        .map_err(gpu)?;
    let bounds = model.animated_bounds(16).map_err(|e| e.to_string())?;
    Ok((renderer, bounds, character))
}

fn vkerr(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("{what}: {e}")
}

/// What the host owns, destroyed in reverse order by `Drop`.
struct Host {
    entry: ash::Entry,
    instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    physical: vk::PhysicalDevice,
    device: Option<ash::Device>,
    queue: vk::Queue,
    family: u32,
    /// The queue family writes timestamps (vkskin's GPU timer).
    timestamps: bool,
    pool: vk::CommandPool,
    fences: Vec<vk::Fence>,
    /// Colour image, depth image, readback buffer and their memory.
    images: Vec<(vk::Image, vk::ImageView)>,
    readback: vk::Buffer,
    /// The own-shader modes' scene buffer and the compute route's readback.
    buffers: Vec<vk::Buffer>,
    memory: Vec<vk::DeviceMemory>,
    problems: Arc<Problems>,
}

impl Drop for Host {
    fn drop(&mut self) {
        // SAFETY: every handle was made here, from these parents; the
        // device is idle (waited below) before anything goes.
        unsafe {
            if let Some(d) = self.device.take() {
                let _ = d.device_wait_idle();
                for (image, view) in self.images.drain(..) {
                    d.destroy_image_view(view, None);
                    d.destroy_image(image, None);
                }
                d.destroy_buffer(self.readback, None);
                for b in self.buffers.drain(..) {
                    d.destroy_buffer(b, None);
                }
                for m in self.memory.drain(..) {
                    d.free_memory(m, None);
                }
                for f in self.fences.drain(..) {
                    d.destroy_fence(f, None);
                }
                d.destroy_command_pool(self.pool, None);
                d.destroy_device(None);
            }
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

impl Host {
    fn new(validation: bool) -> Result<Self, String> {
        // SAFETY: loading the system Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| e.to_string())?;
        let problems: Arc<Problems> = Arc::new(Mutex::new(Vec::new()));
        let app = vk::ApplicationInfo::default()
            .application_name(c"embed-host")
            .api_version(vk::API_VERSION_1_3);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let extensions = [
            ash::ext::debug_utils::NAME.as_ptr(),
            ash::ext::validation_features::NAME.as_ptr(),
        ];
        let sync = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&sync);
        let mut info = vk::InstanceCreateInfo::default().application_info(&app);
        if validation {
            info = info
                .enabled_layer_names(&layers)
                .enabled_extension_names(&extensions)
                .push_next(&mut features);
        }
        // SAFETY: the create info points at locals alive for the call.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(vkerr("creating the instance"))?;
        let mut host = Self {
            entry,
            instance,
            debug: None,
            physical: vk::PhysicalDevice::null(),
            device: None,
            queue: vk::Queue::null(),
            family: 0,
            timestamps: false,
            pool: vk::CommandPool::null(),
            fences: Vec::new(),
            images: Vec::new(),
            readback: vk::Buffer::null(),
            buffers: Vec::new(),
            memory: Vec::new(),
            problems,
        };
        if validation {
            let loader = ash::ext::debug_utils::Instance::new(&host.entry, &host.instance);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                        | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_message))
                .user_data(Arc::as_ptr(&host.problems) as *mut c_void);
            // SAFETY: the host holds an Arc of `problems` until Drop, which
            // destroys the messenger before the Arc goes.
            let m = unsafe { loader.create_debug_utils_messenger(&info, None) }
                .map_err(vkerr("creating the messenger"))?;
            host.debug = Some((loader, m));
        }
        host.pick_device()?;
        Ok(host)
    }

    /// The first Vulkan 1.3 device with a graphics + compute queue,
    /// discrete first; a device with dynamic rendering, synchronization2
    /// and maintenance4 on, as vkskin's contract asks.
    fn pick_device(&mut self) -> Result<(), String> {
        let i = &self.instance;
        // SAFETY: queries on a live instance.
        let mut candidates = unsafe { i.enumerate_physical_devices() }
            .map_err(vkerr("listing devices"))?
            .into_iter()
            .filter_map(|p| {
                // SAFETY: `p` is one of the live instance's devices.
                let props = unsafe { i.get_physical_device_properties(p) };
                // SAFETY: as above.
                let families = unsafe { i.get_physical_device_queue_family_properties(p) };
                let family = families.iter().position(|f| {
                    f.queue_flags
                        .contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
                })?;
                let rank = match props.device_type {
                    vk::PhysicalDeviceType::DISCRETE_GPU => 0,
                    vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
                    _ => 2,
                };
                (props.api_version >= vk::API_VERSION_1_3).then_some((rank, p, family as u32))
            })
            .collect::<Vec<_>>();
        candidates.sort_by_key(|c| c.0);
        let &(_, physical, family) = candidates
            .first()
            .ok_or("no Vulkan 1.3 device with a graphics + compute queue")?;
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default()
            .dynamic_rendering(true)
            .synchronization2(true)
            .maintenance4(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut v13);
        // SAFETY: the create info points at locals alive for the call.
        let device = unsafe { i.create_device(physical, &info, None) }
            .map_err(vkerr("creating the device"))?;
        // SAFETY: family `family`, index 0 was requested.
        self.queue = unsafe { device.get_device_queue(family, 0) };
        self.physical = physical;
        self.family = family;
        // SAFETY: a query on a live instance.
        let families = unsafe { i.get_physical_device_queue_family_properties(physical) };
        self.timestamps = families
            .get(family as usize)
            .is_some_and(|f| f.timestamp_valid_bits > 0);
        let pool = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: a live device.
        self.pool = unsafe { device.create_command_pool(&pool, None) }
            .map_err(vkerr("creating the command pool"))?;
        for _ in 0..FRAMES_IN_FLIGHT {
            let info = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
            // SAFETY: a live device.
            let fence =
                unsafe { device.create_fence(&info, None) }.map_err(vkerr("creating a fence"))?;
            self.fences.push(fence);
        }
        self.device = Some(device);
        Ok(())
    }

    fn device(&self) -> Result<&ash::Device, String> {
        self.device.as_ref().ok_or_else(|| "no device".to_string())
    }

    fn memory(
        &mut self,
        req: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, String> {
        // SAFETY: a query on a live instance.
        let props = unsafe {
            self.instance
                .get_physical_device_memory_properties(self.physical)
        };
        let index = (0..props.memory_type_count)
            .find(|&t| {
                req.memory_type_bits & (1 << t) != 0
                    && props.memory_types[t as usize]
                        .property_flags
                        .contains(flags)
            })
            .ok_or("no suitable memory type")?;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index);
        // SAFETY: a live device.
        let m = unsafe { self.device()?.allocate_memory(&info, None) }
            .map_err(vkerr("allocating memory"))?;
        self.memory.push(m);
        Ok(m)
    }

    /// The host's own render target: colour and depth images, and a
    /// host-visible buffer to read the colour back.
    fn make_target(&mut self, width: u32, height: u32) -> Result<(), String> {
        for (format, usage, aspect) in [
            (
                COLOR_FORMAT,
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
                vk::ImageAspectFlags::COLOR,
            ),
            (
                DEPTH_FORMAT,
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                vk::ImageAspectFlags::DEPTH,
            ),
        ] {
            let info = vk::ImageCreateInfo::default()
                .image_type(vk::ImageType::TYPE_2D)
                .format(format)
                .extent(vk::Extent3D {
                    width,
                    height,
                    depth: 1,
                })
                .mip_levels(1)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(vk::ImageTiling::OPTIMAL)
                .usage(usage);
            let d = self.device()?.clone();
            // SAFETY: a live device; the image is bound and viewed below.
            let image =
                unsafe { d.create_image(&info, None) }.map_err(vkerr("creating an image"))?;
            // SAFETY: the image was just made on `d`.
            let req = unsafe { d.get_image_memory_requirements(image) };
            let mem = self.memory(req, vk::MemoryPropertyFlags::DEVICE_LOCAL)?;
            // SAFETY: fresh memory of a type the image accepts, bound once.
            unsafe { d.bind_image_memory(image, mem, 0) }.map_err(vkerr("binding an image"))?;
            let view = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format)
                .subresource_range(range(aspect));
            // SAFETY: a view of the bound image, in its format.
            let view =
                unsafe { d.create_image_view(&view, None) }.map_err(vkerr("creating a view"))?;
            self.images.push((image, view));
        }
        let d = self.device()?.clone();
        let info = vk::BufferCreateInfo::default()
            .size(u64::from(width) * u64::from(height) * 4)
            .usage(vk::BufferUsageFlags::TRANSFER_DST);
        // SAFETY: a live device.
        self.readback =
            unsafe { d.create_buffer(&info, None) }.map_err(vkerr("creating a buffer"))?;
        // SAFETY: the buffer was just made on `d`.
        let req = unsafe { d.get_buffer_memory_requirements(self.readback) };
        let mem = self.memory(
            req,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )?;
        // SAFETY: fresh memory of a type the buffer accepts, bound once.
        unsafe { d.bind_buffer_memory(self.readback, mem, 0) }.map_err(vkerr("binding a buffer"))
    }
}

impl Host {
    /// A host-visible, coherent buffer of `size` bytes for `usage`, with its
    /// memory.
    fn host_buffer(
        &mut self,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<(vk::Buffer, vk::DeviceMemory), String> {
        let d = self.device()?.clone();
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: a live device; the buffer is destroyed by Drop.
        let buffer = unsafe { d.create_buffer(&info, None) }.map_err(vkerr("creating a buffer"))?;
        self.buffers.push(buffer);
        // SAFETY: the buffer was just made on `d`.
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let mem = self.memory(
            req,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )?;
        // SAFETY: fresh memory of a type the buffer accepts, bound once.
        unsafe { d.bind_buffer_memory(buffer, mem, 0) }.map_err(vkerr("binding a buffer"))?;
        Ok((buffer, mem))
    }

    /// The own shader's scene uniforms, written once.
    fn scene_buffer(&mut self, scene: &own::Scene) -> Result<vk::Buffer, String> {
        let size = std::mem::size_of::<own::Scene>();
        let (buffer, mem) = self.host_buffer(size as u64, vk::BufferUsageFlags::UNIFORM_BUFFER)?;
        let d = self.device()?;
        // SAFETY: host-visible coherent memory of `size` bytes, unused by
        // the GPU yet; `Scene` is repr(C) floats, copied whole.
        unsafe {
            let p = d
                .map_memory(mem, 0, size as u64, vk::MemoryMapFlags::empty())
                .map_err(vkerr("mapping"))?;
            std::ptr::copy_nonoverlapping(
                (scene as *const own::Scene).cast::<u8>(),
                p.cast(),
                size,
            );
            d.unmap_memory(mem);
        }
        Ok(buffer)
    }
}

/// Floats `count` x 3 from `bytes`.
fn vec3s(bytes: &[u8]) -> Vec<[f32; 3]> {
    bytes
        .chunks_exact(12)
        .map(|c| {
            std::array::from_fn(|k| {
                f32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])
            })
        })
        .collect()
}

fn range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

fn image_barrier(
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
    (src_stage, src_access, old): (vk::PipelineStageFlags2, vk::AccessFlags2, vk::ImageLayout),
    (dst_stage, dst_access, new): (vk::PipelineStageFlags2, vk::AccessFlags2, vk::ImageLayout),
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
        .old_layout(old)
        .new_layout(new)
        .image(image)
        .subresource_range(range(aspect))
}

/// Renders `opts.frames` frames of the built-in character (frame i at
/// t = i / 30 s of its first clip) into the host's own image, two frames in
/// flight, and returns the last one.
pub fn render(opts: &HostOptions) -> Result<HostFrame, String> {
    render_with(opts, Shading::Vkskin)
}

/// [`render`] with the character shown as `shading` says.
pub fn render_with(opts: &HostOptions, shading: Shading) -> Result<HostFrame, String> {
    let (w, h) = (opts.width, opts.height);
    if w == 0 || h == 0 || opts.frames == 0 {
        return Err("size and frame count must be positive".into());
    }
    let mut host = Host::new(opts.validation)?;
    host.make_target(w, h)?;
    let gpu = |e: GpuError| e.to_string();
    // vkskin on the host's handles (the contract: vkskin::embed).
    let d = host.device()?.clone();
    // SAFETY: the host's instance and device outlive every vkskin object:
    // they are dropped at the end of this function, after `vk_device`.
    let vk_instance = unsafe { Instance::from_host(host.entry.clone(), host.instance.clone()) };
    // SAFETY: the device is Vulkan 1.3 with dynamic rendering,
    // synchronization2 and maintenance4 enabled (`pick_device`), the
    // timestamp flag is the queue family's, and no other thread uses the
    // queue; the device outlives `vk_device` as above.
    let vk_device = unsafe {
        Device::from_host(
            &vk_instance,
            HostDevice {
                physical_device: host.physical,
                device: d.clone(),
                queue: host.queue,
                queue_family: host.family,
                features: EnabledFeatures {
                    maintenance4: true,
                    timestamps: host.timestamps,
                    ..EnabledFeatures::default()
                },
            },
        )
    }
    .map_err(gpu)?;
    let rgba;
    let path_name;
    let gpu_ms;
    let mut skinned = None;
    {
        // Once, outside the frame loop: the renderer, the character and
        // its one instance, playing the first clip from frame time 0.
        let mut cfg = SkinPathConfig::new(COLOR_FORMAT, DEPTH_FORMAT, FRAMES_IN_FLIGHT);
        cfg.motion = shading.motion();
        let (mut renderer, bounds, character) = if shading == Shading::Vkskin {
            character_renderer_of(
                &vk_device,
                opts.path.as_deref(),
                cfg,
                &Character::model(),
                false,
            )?
        } else {
            let model = textured_character()?;
            character_renderer_of(&vk_device, opts.path.as_deref(), cfg, &model, true)?
        };
        path_name = renderer.path().name;
        let aspect = w as f32 / h as f32;
        let camera = Camera::framing(bounds.min, bounds.max, 0.5, 0.2, 45f32.to_radians(), aspect);
        let mut uniforms = FrameUniforms {
            view_proj: camera.view_proj(aspect).to_cols_array_2d(),
            color: [1.0; 4],
            light: LIGHT,
        };
        if shading.motion() {
            // skinned.frag's motion view: velocity times color[3].
            uniforms.color[3] = MOTION_SCALE;
            uniforms.light[3] = 2.0;
        }
        // The host's own shader: its scene buffer and pipelines.
        let mut own = match shading {
            Shading::Own(_) | Shading::OwnMotion => {
                let route = match shading {
                    Shading::Own(r) => r,
                    _ => own::Route::Vertex,
                };
                let material = renderer
                    .material(character, 0)
                    .ok_or("the character has no materials")?;
                let scene = own::Scene {
                    view_proj: uniforms.view_proj,
                    light: uniforms.light,
                    color: uniforms.color,
                    factor: material.uniforms().base_color,
                };
                let buffer = host.scene_buffer(&scene)?;
                Some(own::OwnShader::new(
                    &d,
                    route,
                    buffer,
                    material.texture().view(),
                    COLOR_FORMAT,
                    DEPTH_FORMAT,
                    shading.motion(),
                )?)
            }
            _ => None,
        };
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(host.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(FRAMES_IN_FLIGHT as u32);
        // SAFETY: the host's pool; freed with it.
        let cmds = unsafe { d.allocate_command_buffers(&alloc) }.map_err(vkerr("allocating"))?;
        let (color, color_view) = host.images[0];
        let (depth, depth_view) = host.images[1];
        let mut skinned_copy: Option<(vk::DeviceMemory, u64)> = None;
        // Three vkskin calls per frame: `begin_frame`, `record`, `end_frame`.
        for i in 0..opts.frames {
            let slot = i as usize % FRAMES_IN_FLIGHT;
            let fence = host.fences[slot];
            let cmd = cmds[slot];
            // The host waits for its slot (vkskin never waits per frame).
            // SAFETY: the host's fence.
            unsafe { d.wait_for_fences(&[fence], true, u64::MAX) }.map_err(vkerr("waiting"))?;
            // SAFETY: the fence has signalled and no submission waits on it.
            unsafe { d.reset_fences(&[fence]) }.map_err(vkerr("resetting a fence"))?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            // SAFETY: the slot's fence has signalled: the buffer is free.
            unsafe { d.begin_command_buffer(cmd, &begin) }.map_err(vkerr("begin"))?;
            // vkskin call 1 of 3, outside the rendering scope: poses the
            // character at t = i / 30 s, writes the slot's palettes and
            // uniforms, records its prepass.
            let frame = renderer
                .begin_frame(cmd, slot, i as f32 / 30.0, &uniforms)
                .map_err(gpu)?;
            let barriers = [
                image_barrier(
                    color,
                    vk::ImageAspectFlags::COLOR,
                    (
                        vk::PipelineStageFlags2::TRANSFER,
                        vk::AccessFlags2::TRANSFER_READ,
                        vk::ImageLayout::UNDEFINED,
                    ),
                    (
                        vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                        vk::AccessFlags2::COLOR_ATTACHMENT_WRITE,
                        vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                    ),
                ),
                image_barrier(
                    depth,
                    vk::ImageAspectFlags::DEPTH,
                    (
                        vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
                        vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE,
                        vk::ImageLayout::UNDEFINED,
                    ),
                    (
                        vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS
                            | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS,
                        vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE
                            | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ,
                        vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
                    ),
                ),
            ];
            // SAFETY: recording into the host's command buffer, its images.
            unsafe {
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().image_memory_barriers(&barriers),
                );
            }
            let area = vk::Rect2D {
                offset: vk::Offset2D::default(),
                extent: vk::Extent2D {
                    width: w,
                    height: h,
                },
            };
            let color_att = [vk::RenderingAttachmentInfo::default()
                .image_view(color_view)
                .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .clear_value(vk::ClearValue {
                    color: vk::ClearColorValue { float32: CLEAR },
                })];
            let depth_att = vk::RenderingAttachmentInfo::default()
                .image_view(depth_view)
                .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .clear_value(vk::ClearValue {
                    depth_stencil: vk::ClearDepthStencilValue {
                        depth: 1.0,
                        stencil: 0,
                    },
                });
            let rendering = vk::RenderingInfo::default()
                .render_area(area)
                .layer_count(1)
                .color_attachments(&color_att)
                .depth_attachment(&depth_att);
            // SAFETY: the host's command buffer, outside any scope; the
            // attachments are in the layouts the barriers above made.
            unsafe {
                d.cmd_begin_rendering(cmd, &rendering);
                d.cmd_set_viewport(
                    cmd,
                    0,
                    &[vk::Viewport {
                        x: 0.0,
                        y: 0.0,
                        width: w as f32,
                        height: h as f32,
                        min_depth: 0.0,
                        max_depth: 1.0,
                    }],
                );
                d.cmd_set_scissor(cmd, 0, &[area]);
            }
            // vkskin call 2 of 3, inside the host's rendering scope (or the
            // host's own shader through a host route).
            match own.as_mut() {
                None => renderer.record(cmd, &frame).map_err(gpu)?,
                Some(o) => o.record(&renderer, cmd, &frame)?,
            }
            let to_copy = [image_barrier(
                color,
                vk::ImageAspectFlags::COLOR,
                (
                    vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
                    vk::AccessFlags2::COLOR_ATTACHMENT_WRITE,
                    vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                ),
                (
                    vk::PipelineStageFlags2::TRANSFER,
                    vk::AccessFlags2::TRANSFER_READ,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                ),
            )];
            let region = vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    base_array_layer: 0,
                    layer_count: 1,
                })
                .image_extent(vk::Extent3D {
                    width: w,
                    height: h,
                    depth: 1,
                });
            let to_host = [vk::BufferMemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::TRANSFER)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ)
                .buffer(host.readback)
                .size(vk::WHOLE_SIZE)];
            // SAFETY: the host's command buffer inside its scope, then its
            // colour image (now TRANSFER_SRC) copied to its readback buffer.
            unsafe {
                d.cmd_end_rendering(cmd);
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().image_memory_barriers(&to_copy),
                );
                d.cmd_copy_image_to_buffer(
                    cmd,
                    color,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    host.readback,
                    &[region],
                );
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().buffer_memory_barriers(&to_host),
                );
            }
            // The compute route's output read back at the offsets vkskin
            // exposed, after the barrier it names (last frame only).
            if shading == Shading::Own(own::Route::Compute) && i + 1 == opts.frames {
                let out = renderer.skinned_output(&frame, 0).map_err(gpu)?;
                let bytes = u64::from(out.vertex_count) * out.stride;
                let (buffer, mem) =
                    host.host_buffer(2 * bytes, vk::BufferUsageFlags::TRANSFER_DST)?;
                skinned_copy = Some((mem, bytes));
                let before = [vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(out.src_stage)
                    .src_access_mask(out.src_access)
                    .dst_stage_mask(vk::PipelineStageFlags2::TRANSFER)
                    .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)
                    .buffer(out.buffer)
                    .size(vk::WHOLE_SIZE)];
                let regions = [
                    vk::BufferCopy {
                        src_offset: out.positions_at(0),
                        dst_offset: 0,
                        size: bytes,
                    },
                    vk::BufferCopy {
                        src_offset: out.normals_at(0),
                        dst_offset: bytes,
                        size: bytes,
                    },
                ];
                let after = [vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(vk::PipelineStageFlags2::TRANSFER)
                    .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                    .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                    .dst_access_mask(vk::AccessFlags2::HOST_READ)
                    .buffer(buffer)
                    .size(vk::WHOLE_SIZE)];
                // SAFETY: the host's command buffer outside any scope;
                // vkskin's output buffer (alive until the frame retires)
                // copied at the ranges it exposed into the host's buffer.
                unsafe {
                    d.cmd_pipeline_barrier2(
                        cmd,
                        &vk::DependencyInfo::default().buffer_memory_barriers(&before),
                    );
                    d.cmd_copy_buffer(cmd, out.buffer, buffer, &regions);
                    d.cmd_pipeline_barrier2(
                        cmd,
                        &vk::DependencyInfo::default().buffer_memory_barriers(&after),
                    );
                }
            }
            // vkskin call 3 of 3, after the scope: the GPU timer's end.
            renderer.end_frame(cmd, frame).map_err(gpu)?;
            // SAFETY: the host's command buffer, recording.
            unsafe { d.end_command_buffer(cmd) }.map_err(vkerr("end"))?;
            let cmd_info = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            let submit = [vk::SubmitInfo2::default().command_buffer_infos(&cmd_info)];
            // SAFETY: the host's queue, command buffer and fence.
            unsafe { d.queue_submit2(host.queue, &submit, fence) }.map_err(vkerr("submit"))?;
        }
        // The last frame's pixels.
        let last = host.fences[(opts.frames as usize - 1) % FRAMES_IN_FLIGHT];
        // SAFETY: the host's fence.
        unsafe { d.wait_for_fences(&[last], true, u64::MAX) }.map_err(vkerr("waiting"))?;
        let size = (u64::from(w) * u64::from(h) * 4) as usize;
        let mem = host.memory[2];
        // SAFETY: host-visible coherent memory of the readback buffer; the
        // copy finished (fence) and a HOST barrier made it visible.
        rgba = unsafe {
            let p = d
                .map_memory(mem, 0, size as u64, vk::MemoryMapFlags::empty())
                .map_err(vkerr("mapping"))?;
            let v = std::slice::from_raw_parts(p as *const u8, size).to_vec();
            d.unmap_memory(mem);
            v
        };
        if let Some((mem, bytes)) = skinned_copy {
            // SAFETY: host-visible coherent memory of 2 x `bytes`; the copy
            // finished (the last fence, waited above) and a HOST barrier
            // made it visible.
            let all = unsafe {
                let p = d
                    .map_memory(mem, 0, 2 * bytes, vk::MemoryMapFlags::empty())
                    .map_err(vkerr("mapping"))?;
                let v = std::slice::from_raw_parts(p as *const u8, 2 * bytes as usize).to_vec();
                d.unmap_memory(mem);
                v
            };
            let (p, n) = all.split_at(bytes as usize);
            skinned = Some((vec3s(p), vec3s(n)));
        }
        // The GPU time vkskin read last: a slot's time is read when the
        // slot begins again.
        gpu_ms = (0..FRAMES_IN_FLIGHT).find_map(|s| renderer.gpu_ms(s));
        // Every frame done before vkskin's objects go.
        // SAFETY: the host's fences.
        unsafe { d.wait_for_fences(&host.fences, true, u64::MAX) }.map_err(vkerr("waiting"))?;
        drop(own);
        drop(renderer);
    }
    // vkskin's device waits for idle and frees its memory; the host's
    // device and instance stay until `host` drops.
    drop(vk_device);
    drop(vk_instance);
    // Teardown messages count too: read after the host destroyed it all.
    let log = host.problems.clone();
    drop(host);
    let problems = log.lock().map(|p| p.clone()).unwrap_or_default();
    Ok(HostFrame {
        rgba,
        path: path_name,
        gpu_ms,
        problems,
        skinned,
    })
}
