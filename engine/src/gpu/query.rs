use std::sync::Arc;

use ash::vk;

use super::retire::Garbage;
use super::{Device, GpuError, GpuResult};

/// A pool of GPU timestamps, destroyed on drop once the frames that may use
/// it have retired. Reset it in the command buffer before writing
/// ([`TimestampQueries::reset`]).
pub struct TimestampQueries {
    device: Arc<Device>,
    raw: vk::QueryPool,
    count: u32,
    period_ns: f64,
}

impl TimestampQueries {
    /// A pool of `count` timestamps. A queue without timestamp support is
    /// [`GpuError::InvalidArgument`].
    pub fn new(device: &Arc<Device>, count: u32) -> GpuResult<Self> {
        if !device.features().timestamps {
            return Err(GpuError::InvalidArgument(
                "the queue family has no timestamp support".into(),
            ));
        }
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(count);
        // SAFETY: `device` is live (the caller's `Arc`); `info` is a local
        // alive for the call.
        let raw = unsafe { device.raw().create_query_pool(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
            count,
            period_ns: f64::from(device.limits().timestamp_period),
        })
    }

    /// Records a reset of every query of the pool into `cmd`, a recording
    /// command buffer of the same device, outside a rendering scope.
    pub fn reset(&self, cmd: vk::CommandBuffer) {
        // SAFETY: `self.raw` is a live pool of `self.device` (kept alive by
        // the `Arc`); the range `0..self.count` is the whole pool; `cmd` is
        // recording outside a rendering scope, per the documented contract.
        unsafe {
            self.device
                .raw()
                .cmd_reset_query_pool(cmd, self.raw, 0, self.count)
        };
    }

    /// Writes timestamp `index` once every earlier command reached `stage`.
    /// `cmd` must be a recording command buffer of the same device in which
    /// the pool was reset, and `index` less than the pool's count.
    pub fn write(&self, cmd: vk::CommandBuffer, index: u32, stage: vk::PipelineStageFlags2) {
        // SAFETY: `self.raw` is a live pool of `self.device` (kept alive by
        // the `Arc`); `cmd` is recording and reset the pool, and `index` is
        // inside it, per the documented contract.
        unsafe {
            self.device
                .raw()
                .cmd_write_timestamp2(cmd, stage, self.raw, index)
        };
    }

    /// The raw ticks of every query, waiting for them to be available
    /// (call after the submission's fence).
    pub fn read_ticks(&self) -> GpuResult<Vec<u64>> {
        let mut out = vec![0u64; self.count as usize];
        // SAFETY: `self.raw` is a live pool of `self.device`; `out` has
        // `self.count` u64 slots, exactly the queries `0..count` asked for
        // with TYPE_64 (ash derives the count and stride from the slice).
        unsafe {
            self.device.raw().get_query_pool_results(
                self.raw,
                0,
                &mut out,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )?
        };
        Ok(out)
    }

    /// Fills `out` with the first `out.len()` raw ticks when they are all
    /// available and returns whether they were (never waits: a frame that
    /// was never submitted reads `false`). Allocates nothing.
    pub fn try_read_into(&self, out: &mut [u64]) -> GpuResult<bool> {
        if out.len() > self.count as usize {
            return Err(GpuError::InvalidArgument(format!(
                "{} timestamps asked of a pool of {}",
                out.len(),
                self.count
            )));
        }
        // SAFETY: `self.raw` is a live pool of `self.device`; `out` has at
        // most `self.count` u64 slots (checked above), so the queries
        // `0..out.len()` lie inside the pool and fill `out` with TYPE_64.
        match unsafe {
            self.device.raw().get_query_pool_results(
                self.raw,
                0,
                out,
                vk::QueryResultFlags::TYPE_64,
            )
        } {
            Ok(()) => Ok(true),
            Err(vk::Result::NOT_READY) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Nanoseconds between queries `a` and `b`.
    pub fn elapsed_ns(&self, ticks: &[u64], a: usize, b: usize) -> Option<f64> {
        let (ta, tb) = (*ticks.get(a)?, *ticks.get(b)?);
        Some(tb.wrapping_sub(ta) as f64 * self.period_ns)
    }
}

impl Drop for TimestampQueries {
    fn drop(&mut self) {
        self.device.retire(Garbage::QueryPool(self.raw));
    }
}
