//! The Vulkan layer: instance with validation and its messenger, device
//! selection, device and queue, memory (gpu-allocator), buffers, images,
//! descriptors, pipelines, shader compilation, command submission,
//! timestamps and the swapchain. One file per concept; every resource is an
//! RAII wrapper holding an `Arc<Device>` and freeing itself on drop, so the
//! device (and then the instance with its messenger) goes last.
//!
//! Knows nothing of skinning.

mod barrier;
mod buffer;
mod command;
mod descriptor;
mod device;
mod error;
mod image;
mod instance;
mod messenger;
mod physical_device;
mod pipeline;
mod query;
pub mod reflect;
mod retire;
mod shader;
mod surface;
mod swapchain;
mod sync;
mod texture;

pub use ash;
pub use ash::vk;
pub use barrier::{memory_barrier, pipeline_barrier, BufferBarrier, ImageBarrier};
pub use buffer::{Buffer, BufferDesc, BufferView, MemoryLocation};
pub use command::{begin, end, one_shot, submit_and_wait, CommandPool};
pub use descriptor::{
    write_buffer, write_buffer_range, write_texel_buffer, BindingDesc, DescriptorPool,
    DescriptorSetLayout,
};
pub use device::{Device, DeviceDesc, EnabledFeatures, HostDevice, FENCE_TIMEOUT_NS};
pub use error::{GpuError, GpuResult};
pub use image::{full_range, Image, ImageDesc};
pub use instance::{validation_default, Instance, InstanceDesc, VALIDATION_LAYER};
pub use messenger::{Message, MessageLog, Severity};
pub use physical_device::{list_devices, select_device, PhysicalDevice, DEVICE_ENV};
pub use pipeline::{GraphicsOptions, GraphicsPipelineDesc, Pipeline, PipelineLayout};
pub use query::TimestampQueries;
pub use raw_window_handle;
pub use shader::{compile, ShaderDesc, ShaderModule, ShaderSources, EMBEDDED_SHADERS};
pub use surface::Surface;
pub use swapchain::{Acquired, Swapchain, SwapchainDesc};
pub use sync::{Fence, Semaphore};
pub use texture::{is_srgb, write_image_sampler, Sampler, SamplerDesc, Texture, TextureLevel};
