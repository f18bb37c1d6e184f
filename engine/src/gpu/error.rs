use std::path::PathBuf;

use ash::vk;

/// Everything the Vulkan layer can fail with. Fallible work returns this;
/// nothing in `gpu`, `skin` or `render` panics on a Vulkan or driver error.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("Vulkan call failed: {0}")]
    Vulkan(#[from] vk::Result),
    #[error("could not load the Vulkan library: {0}")]
    Loading(String),
    #[error(
        "the Vulkan validation layer VK_LAYER_KHRONOS_validation is not installed \
         (on Debian/Ubuntu: apt-get install vulkan-validationlayers)"
    )]
    ValidationLayerMissing,
    #[error("instance extension {0} is not available")]
    MissingExtension(String),
    #[error("no Vulkan 1.3 device{0}")]
    NoDevice(String),
    #[error("device selector {selector:?} matches no device; devices: {available}")]
    DeviceNotFound { selector: String, available: String },
    #[error("memory allocation failed: {0}")]
    Allocation(#[from] gpu_allocator::AllocationError),
    #[error("{file}:{line}: shader compile error: {message}")]
    ShaderCompile {
        file: String,
        /// 1-based line in `file` (an included file when the error is there);
        /// 0 when the compiler named no line.
        line: u32,
        message: String,
    },
    #[error("shader source {0:?} is not in the embedded table")]
    ShaderNotFound(String),
    #[error("shader compiler: {0}")]
    ShaderCompiler(String),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("{what}: need {needed}, the device allows {limit}")]
    Limit {
        what: &'static str,
        needed: u64,
        limit: u64,
    },
    #[error("window system: {0}")]
    Window(String),
    #[error("the swapchain is out of date")]
    SwapchainOutOfDate,
    #[error("waiting for the GPU timed out after {0} ms")]
    Timeout(u64),
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
}

pub type GpuResult<T> = Result<T, GpuError>;
