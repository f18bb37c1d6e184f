use std::path::PathBuf;

use ash::vk;

/// Everything the Vulkan layer can fail with. Fallible work returns this;
/// nothing in `gpu`, `skin` or `render` panics on a Vulkan or driver error.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A Vulkan call returned an error code.
    #[error("Vulkan call failed: {0}")]
    Vulkan(#[from] vk::Result),
    /// The Vulkan loader library could not be loaded (or gave no entry
    /// points).
    #[error("could not load the Vulkan library: {0}")]
    Loading(String),
    /// Validation was asked for but the layer is not installed.
    #[error(
        "the Vulkan validation layer VK_LAYER_KHRONOS_validation is not installed \
         (on Debian/Ubuntu: apt-get install vulkan-validationlayers)"
    )]
    ValidationLayerMissing,
    /// A required instance extension is missing.
    #[error("instance extension {0} is not available")]
    MissingExtension(String),
    /// No usable device: none is Vulkan 1.3 with a graphics + compute queue
    /// and the required features (the text says which and why).
    #[error("no Vulkan 1.3 device{0}")]
    NoDevice(String),
    /// A device selector (index or name) matched no device.
    #[error("device selector {selector:?} matches no device; devices: {available}")]
    DeviceNotFound {
        /// The selector as given.
        selector: String,
        /// The devices there are, described.
        available: String,
    },
    /// The GPU memory allocator failed.
    #[error("memory allocation failed: {0}")]
    Allocation(#[from] gpu_allocator::AllocationError),
    /// GLSL failed to compile.
    #[error("{file}:{line}: shader compile error: {message}")]
    ShaderCompile {
        /// The file the error is in (an included file when it is there).
        file: String,
        /// 1-based line in `file` (an included file when the error is there);
        /// 0 when the compiler named no line.
        line: u32,
        /// The compiler's whole message.
        message: String,
    },
    /// A shader path is not in the [`super::ShaderSources`] set.
    #[error("shader source {0:?} is not in the embedded table")]
    ShaderNotFound(String),
    /// The shader compiler could not be set up or failed other than on the
    /// source.
    #[error("shader compiler: {0}")]
    ShaderCompiler(String),
    /// The caller asked for something the engine cannot do (the text says
    /// what).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A request exceeds a device (or engine) limit.
    #[error("{what}: need {needed}, the device allows {limit}")]
    Limit {
        /// What is limited, e.g. "push constant bytes".
        what: &'static str,
        /// How much was needed.
        needed: u64,
        /// How much is allowed.
        limit: u64,
    },
    /// The window system (surface, swapchain formats) failed.
    #[error("window system: {0}")]
    Window(String),
    /// The swapchain no longer matches the window (or the window has no
    /// area): recreate it, or skip the frame.
    #[error("the swapchain is out of date")]
    SwapchainOutOfDate,
    /// A fence wait exceeded [`super::FENCE_TIMEOUT_NS`] (in ms here).
    #[error("waiting for the GPU timed out after {0} ms")]
    Timeout(u64),
    /// Reading or writing a file failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// The result of fallible work in the Vulkan layer.
pub type GpuResult<T> = Result<T, GpuError>;
