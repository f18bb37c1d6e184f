//! Deferred destruction: Vulkan objects dropped while a frame that used
//! them may still be executing are parked here and destroyed once that
//! frame has retired.
//!
//! The device keeps a frame clock. Whoever begins a frame (the engine's
//! `render::FramesInFlight`, or an embedding host through
//! `embed::HostFrames`) ticks it; whoever learns that a frame's GPU work has
//! finished (a fence wait) reports it. An object dropped while frame `n` is
//! the newest begun frame can only be referenced by frames up to `n`, so it
//! is freed once frame `n` is known complete. A fence signal covers every
//! earlier submission to the queue, so "frame `n` complete" implies every
//! frame submitted before it is complete too.
//!
//! Dropping an object that a command buffer still being recorded refers to
//! is therefore safe as long as that command buffer belongs to the newest
//! begun frame, which is how frames are recorded (one at a time).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use ash::vk;
use gpu_allocator::vulkan::Allocation;

/// One object waiting for its frames to retire.
pub(crate) enum Garbage {
    Buffer(vk::Buffer, Option<Allocation>),
    BufferView(vk::BufferView),
    Image(vk::Image, vk::ImageView, Option<Allocation>),
    Pipeline(vk::Pipeline),
    PipelineLayout(vk::PipelineLayout),
    DescriptorPool(vk::DescriptorPool),
    DescriptorSetLayout(vk::DescriptorSetLayout),
    QueryPool(vk::QueryPool),
    Sampler(vk::Sampler),
}

impl Garbage {
    /// Destroys the object. `free` returns allocations to the allocator.
    ///
    /// # Safety
    /// Every handle in `self` must be a live object created from `device`
    /// (which must be alive), not destroyed elsewhere, and no pending
    /// command buffer may use it. `free` must return the allocation to the
    /// allocator it came from.
    pub(crate) unsafe fn destroy(self, device: &ash::Device, free: &mut dyn FnMut(Allocation)) {
        // SAFETY: the handles are live children of the live `device`, owned
        // by `self` alone (consumed here, so each is destroyed once) and
        // unused by pending work: this function's contract. An image's view
        // is destroyed before the image, and a buffer's or image's memory is
        // freed only after the object bound to it is destroyed.
        unsafe {
            match self {
                Garbage::Buffer(b, a) => {
                    device.destroy_buffer(b, None);
                    a.map(&mut *free);
                }
                Garbage::BufferView(v) => device.destroy_buffer_view(v, None),
                Garbage::Image(i, v, a) => {
                    device.destroy_image_view(v, None);
                    device.destroy_image(i, None);
                    a.map(&mut *free);
                }
                Garbage::Pipeline(p) => device.destroy_pipeline(p, None),
                Garbage::PipelineLayout(l) => device.destroy_pipeline_layout(l, None),
                Garbage::DescriptorPool(p) => device.destroy_descriptor_pool(p, None),
                Garbage::DescriptorSetLayout(l) => device.destroy_descriptor_set_layout(l, None),
                Garbage::QueryPool(q) => device.destroy_query_pool(q, None),
                Garbage::Sampler(s) => device.destroy_sampler(s, None),
            }
        }
    }
}

/// The frame clock and the objects waiting on it.
pub(crate) struct RetireQueue {
    /// Frames begun on this device so far (the newest frame's number).
    begun: AtomicU64,
    /// Newest frame whose submission was handed to the queue.
    submitted: AtomicU64,
    /// Newest frame known to have finished on the GPU.
    completed: AtomicU64,
    /// Tests turn deferral off to show the validation layer catches an
    /// object destroyed while in use.
    enabled: AtomicBool,
    parked: Mutex<VecDeque<(u64, Garbage)>>,
}

impl Default for RetireQueue {
    fn default() -> Self {
        Self {
            begun: AtomicU64::new(0),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            enabled: AtomicBool::new(true),
            parked: Mutex::new(VecDeque::new()),
        }
    }
}

impl RetireQueue {
    pub(crate) fn begin_frame(&self) -> u64 {
        self.begun.fetch_add(1, Ordering::AcqRel) + 1
    }

    pub(crate) fn frame_submitted(&self, frame: u64) {
        self.submitted.fetch_max(frame, Ordering::AcqRel);
    }

    pub(crate) fn submitted(&self) -> u64 {
        self.submitted.load(Ordering::Acquire)
    }

    pub(crate) fn completed(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    pub(crate) fn begun(&self) -> u64 {
        self.begun.load(Ordering::Acquire)
    }

    /// Records that frame `frame` (and so every frame submitted before it)
    /// has finished.
    pub(crate) fn frame_completed(&self, frame: u64) {
        self.completed.fetch_max(frame, Ordering::AcqRel);
    }

    pub(crate) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Release);
    }

    /// Parks `g` until the newest begun frame retires, or hands it back
    /// when it can be destroyed now.
    pub(crate) fn park(&self, g: Garbage) -> Option<Garbage> {
        let tag = self.begun();
        if !self.enabled.load(Ordering::Acquire) || tag <= self.completed() {
            return Some(g);
        }
        self.lock().push_back((tag, g));
        None
    }

    /// Moves every parked object whose frame has retired (or all of them)
    /// to `out`.
    pub(crate) fn take_ready(&self, all: bool, out: &mut Vec<Garbage>) {
        let done = self.completed();
        let mut q = self.lock();
        // Tags are nearly sorted (threads may park out of order), and the
        // queue is short: a scan is enough.
        let mut i = 0;
        while i < q.len() {
            if all || q[i].0 <= done {
                if let Some((_, g)) = q.remove(i) {
                    out.push(g);
                }
            } else {
                i += 1;
            }
        }
    }

    pub(crate) fn parked(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Garbage)>> {
        self.parked.lock().unwrap_or_else(|e| e.into_inner())
    }
}
