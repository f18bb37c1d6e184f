//! A crowd frame allocates nothing: a counting global allocator watches
//! every thread (the crowd's pool workers included) while frames run.
//!
//! One test in this binary, so no other test allocates alongside it. It
//! must also finish well inside a minute in a debug build on a slow
//! machine: past 60 seconds libtest's own thread prints "has been running
//! for over 60 seconds", and those allocations would count too.

use vkskin::anim::{Affine4x3, Crowd, CrowdInstance, Parallelism, Skin};
use vkskin::assets::builtin::procedural;
use vkskin_tests::alloc::{allocations, assert_counting, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn frames_allocate_nothing() {
    assert_counting();
    let model = procedural::bench_character(200, 48).unwrap();
    let skin = Skin::whole_skeleton(&model.skeleton);
    let instances = (0..200)
        .map(|i| CrowdInstance::new(0, 0.01 * i as f32, 0.8 + 0.001 * i as f32))
        .collect();
    let mut crowd = Crowd::new(&model.skeleton, &model.clips, &skin, instances).unwrap();
    let stride = 3 * crowd.skin_len();
    let mut out = vec![[0.0f32; 4]; crowd.len() * stride];
    let encode = |_: usize, skin: &[vkskin::glam::Affine3A], rows: &mut [[f32; 4]]| {
        for (m, r) in skin.iter().zip(rows.chunks_exact_mut(3)) {
            r.copy_from_slice(&Affine4x3::from_affine(m).rows);
        }
    };
    let frames = 126;

    // Single: the calling thread only, exactly nothing.
    crowd
        .animate_into(0.0, Parallelism::Single, &mut out, stride, encode)
        .unwrap();
    let before = allocations();
    for f in 0..frames {
        let t = f as f32 / 60.0;
        crowd
            .animate_into(t, Parallelism::Single, &mut out, stride, encode)
            .unwrap();
        crowd
            .animate(t, Parallelism::Single, |_, skin| {
                std::hint::black_box(skin);
            })
            .unwrap();
    }
    assert_eq!(
        allocations() - before,
        0,
        "single-threaded frames allocated"
    );

    // Threads: the first frame builds the pool (and its workers their
    // thread-locals); later frames reuse it.
    for _ in 0..3 {
        crowd
            .animate_into(0.0, Parallelism::Threads(2), &mut out, stride, encode)
            .unwrap();
    }
    let before = allocations();
    for f in 0..frames {
        let t = f as f32 / 60.0;
        crowd
            .animate_into(t, Parallelism::Threads(2), &mut out, stride, encode)
            .unwrap();
    }
    let parallel = allocations() - before;
    // The crowd itself allocates nothing; rayon hands each frame to its
    // pool through a crossbeam injector queue, which allocates one block
    // per 63 jobs injected: a small constant per many frames, independent
    // of instance and joint counts.
    assert!(
        parallel <= frames / 63 + 1,
        "{parallel} allocations in {frames} parallel frames"
    );
    eprintln!("{parallel} allocations in {frames} parallel frames (rayon's injector blocks)");
}
