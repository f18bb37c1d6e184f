//! A crowd frame drawn through a path allocates nothing once warm: the
//! crowd animated straight into the frame's mapped storage (or, on the CPU
//! stage, skinned into its vertex buffer), the frame recorded and
//! submitted. A counting global allocator sees every Rust allocation (the
//! driver's and the validation layer's C++ heaps are not Rust's, so they
//! are not counted). One test in this binary, so nothing else allocates
//! alongside it.
#![cfg(feature = "gpu")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Affine3A, Vec3};
use vkskin::anim::{Crowd, CrowdInstance, Parallelism};
use vkskin::assets::builtin::procedural;
use vkskin::gpu::vk;
use vkskin::skin::find;
use vkskin_tests::gpu::{GpuTest, PathRig};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

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

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn crowd_frames_through_a_path_allocate_nothing() {
    let gpu = GpuTest::new();
    let model = procedural::bench_character(300, 32).unwrap();
    let skin = &model.skins[0];
    let instances: Vec<CrowdInstance> = (0..40)
        .map(|i| CrowdInstance::new(0, 0.05 * i as f32, 0.9 + 0.01 * i as f32))
        .collect();
    for name in [
        "4x3-ssbo",
        "qt-texel",
        "dq-ssbo",
        "dq-scale-texel",
        "4x3-compute",
        "dq-compute",
        "4x3-cpu",
        "qt-cpu",
        "dq-cpu",
        "dq-scale-cpu",
    ] {
        let mut rig = PathRig::new(
            &gpu,
            find(name).unwrap(),
            &model,
            0,
            vk::PolygonMode::FILL,
            false,
            None,
            2,
            32,
        )
        .unwrap();
        let mut crowd = Crowd::new(&model.skeleton, &model.clips, skin, instances.clone()).unwrap();
        let n = instances.len();
        let place = |i: usize| (Affine3A::from_translation(Vec3::X * i as f32), [1.0; 4]);
        let frame = |f: usize, rig: &mut PathRig, crowd: &mut Crowd| {
            rig.submit_with(&gpu, n, true, |w| {
                w.animate(crowd, f as f32 / 60.0, Parallelism::Single, place)
                    .unwrap();
            });
        };
        // Warm: storage grown, pipelines built, thread-locals made.
        for f in 0..4 {
            frame(f, &mut rig, &mut crowd);
        }
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        for f in 4..40 {
            frame(f, &mut rig, &mut crowd);
        }
        let allocated = ALLOCATIONS.load(Ordering::SeqCst) - before;
        assert_eq!(
            allocated, 0,
            "{name}: 36 crowd frames allocated {allocated} times"
        );
        rig.wait_all();
    }
    gpu.finish();
}
