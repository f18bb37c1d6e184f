//! Drawing: targets (offscreen with readback, window swapchain), a look-at
//! camera with explicit Vulkan clip-space conventions, frames in flight and
//! joint markers.

mod camera;
mod capture;
mod frames;
mod markers;
mod offscreen;
mod png;
mod scope;
mod window;

pub use camera::{Camera, Projection};
pub use capture::SkinCapture;
pub use frames::{Frame, FramesInFlight, DEFAULT_FRAMES_IN_FLIGHT};
pub use markers::{JointMarkers, MarkerPush};
pub use offscreen::OffscreenTarget;
pub use png::write_png;
pub use window::{TargetImage, WindowTarget};
