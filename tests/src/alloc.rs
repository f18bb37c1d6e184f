//! A counting global allocator for the "allocates nothing" tests: a test
//! binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and reads
//! [`allocations`] around the work it watches. It sees every Rust
//! allocation on every thread (not C or C++ heaps such as a driver's). Keep
//! one test per such binary, so nothing else allocates alongside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Forwards to the system allocator, counting allocations and
/// reallocations.
pub struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// Allocations (and reallocations) so far in this process.
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::SeqCst)
}

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Panics unless [`Counting`] is this binary's global allocator: one boxed
/// value must move the count (else a zero count would prove nothing).
pub fn assert_counting() {
    let before = allocations();
    let boxed = std::hint::black_box(Box::new([0u8; 64]));
    drop(boxed);
    assert!(
        allocations() > before,
        "the counting allocator is not installed: #[global_allocator] static GLOBAL: Counting = Counting;"
    );
}
