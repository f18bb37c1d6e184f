//! Compressed clips: [`CompressionJob`] turns a [`Clip`](crate::anim::Clip)
//! into one whose animated channels are uniform samples quantized within
//! a [`Tolerance`] (`format` holds the data and the arithmetic shared by
//! the encoder and the decoder, `decode` the sampler, `job` the
//! compression with `spans` (resampling, jumps, rates) and `channels` (one
//! channel's arithmetic), `metric` the model-space error, `file` the clip
//! file). A compressed
//! clip is a `Clip`: every job that samples clips samples it.

pub(crate) mod channels;
pub(crate) mod check;
pub(crate) mod decode;
pub(crate) mod file;
pub(crate) mod format;
pub(crate) mod job;
pub(crate) mod metric;
pub(crate) mod spans;

pub use check::{bytes_breakdown, check_error, check_times, pose_error, CheckedError};
pub use file::{ClipFile, ClipFileError, ClipFileFault};
pub use format::{CompressedBytes, CompressedClip, Tolerance};
pub use job::CompressionJob;
pub use metric::{measure_error, measure_errors};

#[cfg(test)]
mod tests;
