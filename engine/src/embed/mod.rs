//! Embedding vkskin in a host's Vulkan renderer.
//!
//! The host program owns the Vulkan instance, device, queue, command
//! buffers, render targets and their synchronisation; vkskin animates its
//! skinned characters and records their draws into the host's command
//! buffer. [`Renderer`] is the embedding API; this text is its contract.
//!
//! **Handles the host passes.** Its `ash::Entry` and `ash::Instance`
//! ([`Instance::from_host`]) and a [`HostDevice`]: physical device, device,
//! one graphics + compute queue and its family, and what it enabled of the
//! optional features ([`EnabledFeatures`]; `timestamps` when the queue
//! family has timestamps, for the GPU timer) ([`Device::from_host`]). The
//! device is Vulkan 1.3 with `dynamicRendering` and `synchronization2`
//! enabled (`maintenance4` too for the compute stage). [`Renderer::new`]
//! takes the skinning path (see [`crate::skin::auto`]) and a
//! [`SkinPathConfig`]: the colour and depth attachment formats of the
//! rendering scopes it will draw in, and the frames in flight.
//!
//! **Once, outside the frame loop.** [`Renderer::add_character`] uploads a
//! model's meshes (one submission on the host's queue, waited on) and keeps
//! its skeleton, skins and clips; [`Renderer::add_instance`] places a copy
//! of a character with a model-to-world matrix and a [`Pose`] source: the
//! bind pose, a clip played from the frame time (its offset, speed and
//! playback mode), or joint model matrices the host hands over with
//! [`Renderer::set_joints`]. Between frames the host may move
//! ([`Renderer::set_transform`]), tint, re-pose, add and remove instances;
//! changes show from the next frame.
//!
//! **Memory.** vkskin allocates its own buffers (meshes, palettes, instance
//! records, skinned vertices, uniforms, timestamp queries) and pipelines on
//! the host's device through its own gpu-allocator; it never touches the
//! host's memory. A frame slot's storage grows when a frame needs more; the
//! old buffers, like every vkskin object dropped, are destroyed only once
//! the frames that used them have retired. Dropping the vkskin [`Device`]
//! (its last `Arc`) waits for the device to idle once and frees everything
//! left (teardown, never per frame). vkskin never destroys the host's
//! instance or device.
//!
//! **Frames in flight.** `SkinPathConfig::frames_in_flight` slots (1 to 8),
//! each with its own palettes, records and uniforms. Frame slot `slot` may
//! begin only once the host has waited for that slot's previous submission
//! (its own fence); the host submits each frame before it begins the next,
//! and one frame is open at a time. The renderer keeps vkskin's frame clock
//! from these calls (a slot's `begin_frame` retires its previous frame;
//! the next `begin_frame` counts the frame before as submitted), so
//! deferred destruction needs nothing more from the host. Several renderers
//! (other formats, other paths) may share the device, each under these
//! rules.
//!
//! **Per frame: three calls, in the host's command buffer `cmd`** (begun,
//! recording):
//! 1. `let frame = renderer.begin_frame(cmd, slot, time, &uniforms)?`
//!    outside any rendering scope. On the CPU: every instance is posed
//!    (clips sampled at `time`), and its palettes (on the CPU stage, its
//!    skinned vertices) and instance record are written straight into
//!    vkskin's host-visible, coherent memory, with the
//!    slot's [`FrameUniforms`] (view-projection, colour, light): the host's
//!    submission makes them visible, no barrier. Into `cmd`: the GPU timer's
//!    reset and start (where the host declared timestamps) and, on the
//!    compute stage, the skinning dispatch with its barriers.
//! 2. `renderer.record(cmd, &frame)?` inside the host's dynamic-rendering
//!    scope (`vkCmdBeginRendering` with the attachment formats given above;
//!    viewport and scissor set by the host, since vkskin's pipelines take
//!    both as dynamic state). Once per scope that should show the
//!    characters: several passes draw the same frame.
//! 3. `renderer.end_frame(cmd, frame)?` after the last such scope: the GPU
//!    timer's end. The host then ends `cmd`, submits it and goes on.
//!
//! [`Renderer::gpu_ms`] reads a slot's GPU time (from `begin_frame`'s
//! commands to `end_frame`'s, the host's work in between included) once
//! the slot begins again; [`Renderer::report`] says what the encoding could
//! not keep of the last frame's palettes.
//!
//! **Motion vectors.** With [`SkinPathConfig::motion`] (on every path; on
//! the windowed storages, ubo and push, each draw's window then holds a
//! partition's palette and its previous one, so half the bones per draw)
//! every instance also draws its previous
//! frame's skinned position: the renderer keeps each instance's last
//! skinning matrices and morph weights (no second animation pass) and the
//! vertex shader (or, on the compute and CPU stages, the plain pipeline
//! from a third output stream) passes it to the fragment stage as
//! `layout(location = 3) out vec3 out_prev_position`, in world space
//! through the instance's current model-to-world matrix (the instance's
//! own movement is not in it). A host writing a velocity attachment
//! replaces `skin/skinned.frag` through [`SkinPathConfig::sources`] with a
//! shader that reads it beside `gl_FragCoord` (with its previous
//! view-projection in its own data). [`Renderer::teleport`] flags a time
//! jump or a cut: that instance's next frame reports zero velocity.
//!
//! **What vkskin binds and leaves bound.** In `record`: its graphics
//! pipeline, descriptor sets 0 and 1 of its pipeline layout, vertex
//! buffers 0 to 3, its `UINT32` index buffer and push constants. In
//! `begin_frame` on the compute stage: its compute pipeline, sets 0 to 2 of
//! its compute layout and push constants. The host rebinds its own state
//! after vkskin's calls. vkskin does not change viewport, scissor or any
//! other dynamic state.
//!
//! **Barriers.** The host owns its attachments: their layout transitions and
//! the barriers before and after its rendering scopes. vkskin records only,
//! in `begin_frame` on the compute stage, two global memory barriers around
//! its dispatch: earlier vertex-attribute reads before compute-shader
//! writes, and compute-shader storage writes before vertex-attribute reads.
//! Being global, they order the host's own accesses in those stages too;
//! they change no image layout and touch no host resource otherwise.
//!
//! **Submission.** vkskin never submits or waits per frame: the host
//! submits its command buffer and waits on its fences. vkskin submits (and
//! waits) only when loading: `add_character` uploads meshes on the host's
//! queue, so the host must not use the queue from another thread meanwhile.
//!
//! **Teardown.** The host waits for its frames (fences or
//! `vkDeviceWaitIdle`), drops the [`Renderer`], then the vkskin [`Device`]
//! and [`Instance`] wrappers (the device waits for idle once and frees
//! vkskin's memory), and only then destroys its own device and instance.
//!
//! **Skinning in the host's shaders.** Two host routes replace `record`
//! where the host shades with its own pipelines (details, the GLSL and the
//! barriers: `docs/embedding.md`). Per frame, after `begin_frame`,
//! [`Renderer::host_batches`] lists the batches (a mesh of a character and
//! its instances, with the mesh's permutation: influences, morph).
//! - *Vertex route* (vertex-stage paths): [`Renderer::host_vertex_route`]
//!   gives a [`HostVertexRoute`]: the GLSL header the host's vertex shader
//!   includes at [`HOST_SKIN_HEADER`] (the permutation's defines, the
//!   path's storage and encoding, then `shaders/skin/host/skin_vertex.glsl`,
//!   whose `skin_vertex()` returns the skinned, world-space and
//!   pass-through attributes), the set layouts with the set numbers the
//!   include expects (1 the palette, 3 morph targets), the vertex-stage
//!   push range from offset 0 and the vertex input. Inside the host's
//!   scope, with its pipeline for the batch's permutation and its own sets
//!   bound, [`Renderer::record_host`] binds vkskin's sets on the host's
//!   layout, its vertex and index buffers, pushes its constants and
//!   records the draws.
//! - *Compute route* (compute and CPU stages):
//!   [`Renderer::skinned_output`] gives a [`SkinnedOutput`]: the output
//!   buffer, offsets, stride and formats of positions and normals, each
//!   instance's vertex range, the mesh's static streams (UVs, colours) and
//!   index buffer, and the source stage and access of the barrier a
//!   consumer other than vertex input (a copy, an acceleration-structure
//!   build) must wait on. The host draws it with its own pipelines in any
//!   number of passes.
//!
//! [`Renderer::load_materials`] draws a character with its model's
//! materials; [`Renderer::material`] hands a host shading it itself the
//! texture and factors.
//!
//! **Below the renderer.** A host that needs more than it offers (several
//! skinning paths in one frame, wireframe or capture draws, crowds animated
//! in parallel with [`crate::skin::BatchWriter::animate`]) drives
//! [`crate::skin::SkinPath`] and [`crate::skin::FrameSets`] itself:
//! [`HostFrames::begin`] and [`HostFrames::submitted`] keep the frame clock,
//! and per frame `SkinPath::begin_frame`, `SkinPath::batch` per mesh with
//! its writer, `FrameSets::write`, `SkinPath::prepass` outside the scope,
//! `SkinPath::record_draw` per batch inside it and `SkinPath::finish`
//! after it, with the bindings and barriers above.
//!
//! `samples/embed` is a whole host in raw `ash` following this contract.

mod frames;
mod host;
mod renderer;

pub use crate::gpu::{Device, EnabledFeatures, HostDevice, Instance};
pub use crate::skin::{FrameUniforms, SkinPathConfig};
pub use crate::skin::{HostVertexRoute, SkinnedOutput, HOST_SKIN_HEADER};
pub use frames::HostFrames;
pub use host::HostBatch;
pub use renderer::{CharacterId, Frame, InstanceId, Pose, Renderer};
