//! A crowd frame drawn through a path allocates nothing once warm: the
//! crowd animated straight into the frame's mapped storage (or, on the CPU
//! stage, skinned into its vertex buffer), the frame recorded and
//! submitted. A counting global allocator sees every Rust allocation (the
//! driver's and the validation layer's C++ heaps are not Rust's, so they
//! are not counted). One test in this binary, so nothing else allocates
//! alongside it.
#![cfg(feature = "gpu")]

use glam::{Affine3A, Vec3};
use vkskin::anim::{Crowd, CrowdInstance, Parallelism};
use vkskin::assets::builtin::procedural;
use vkskin::gpu::vk;
use vkskin::skin::find;
use vkskin_tests::alloc::{allocations, assert_counting, Counting};
use vkskin_tests::gpu::{GpuTest, PathRig};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn crowd_frames_through_a_path_allocate_nothing() {
    assert_counting();
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
        "4x3-bda",
        "4x3-compute",
        "dq-compute",
        "dq-bda-compute",
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
        let before = allocations();
        for f in 4..40 {
            frame(f, &mut rig, &mut crowd);
        }
        let allocated = allocations() - before;
        assert_eq!(
            allocated, 0,
            "{name}: 36 crowd frames allocated {allocated} times"
        );
        rig.wait_all();
    }
    gpu.finish();
}
