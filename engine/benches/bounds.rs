//! Skinned bounds per instance: `JointBounds::skinned` for the 64-joint
//! bench character (`procedural::bench_character(1000, 64)`) at 64 poses
//! of its "writhe" clip, and the built-in 38-joint character beside it.
//!
//! `cargo bench -p vkskin --no-default-features --bench bounds` runs
//! criterion, then prints ns per instance. `BOUNDS_BENCH_SUMMARY_ONLY=1`
//! skips criterion.

use std::hint::black_box;
use std::time::Instant;

use criterion::Criterion;
use vkskin::anim::PlaybackMode;
use vkskin::assets::builtin::{procedural, Character};
use vkskin::assets::Model;
use vkskin::glam::Affine3A;
use vkskin::mesh::JointBounds;

const POSES: usize = 64;

/// The mesh's joint bounds and `POSES` palettes over its first clip.
fn setup(model: &Model) -> (JointBounds, Vec<Vec<Affine3A>>) {
    let mesh = &model.meshes[0];
    let bounds = JointBounds::new(mesh, model.skins[mesh.skin].len()).expect("joint bounds");
    let clip = &model.clips[0];
    let palettes = (0..POSES)
        .map(|i| {
            let t = clip.duration() * i as f32 / POSES as f32;
            let locals = model.pose(Some(clip), t, PlaybackMode::Loop).expect("pose");
            model.skin_matrices(&locals).expect("skin")[mesh.skin].clone()
        })
        .collect();
    (bounds, palettes)
}

fn run(bounds: &JointBounds, palettes: &[Vec<Affine3A>]) -> f32 {
    let mut acc = 0.0;
    for p in palettes {
        let b = bounds.skinned(black_box(p), &[]).expect("bounds");
        acc += b.max.x - b.min.x;
    }
    acc
}

/// This thread's CPU time in ns (`/proc/thread-self/schedstat`, Linux),
/// which a machine shared with other work does not inflate the way it
/// does the wall clock; `None` elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Best of 20 runs of `reps` passes over the poses: ns per instance, by
/// the wall clock and by the thread's CPU time.
fn ns_per_instance(bounds: &JointBounds, palettes: &[Vec<Affine3A>]) -> (f64, Option<f64>) {
    let reps = 2000;
    let per = (reps * palettes.len()) as f64;
    let (mut wall, mut cpu) = (f64::INFINITY, None::<f64>);
    for _ in 0..20 {
        let c0 = thread_cpu_ns();
        let t = Instant::now();
        for _ in 0..reps {
            black_box(run(bounds, palettes));
        }
        wall = wall.min(t.elapsed().as_nanos() as f64 / per);
        if let (Some(a), Some(b)) = (c0, thread_cpu_ns()) {
            let ns = b.saturating_sub(a) as f64 / per;
            cpu = Some(cpu.map_or(ns, |c| c.min(ns)));
        }
    }
    (wall, cpu)
}

fn main() {
    let bench = procedural::bench_character(1000, 64).expect("bench character");
    let builtin = Character::model();
    let cases = [
        ("64 joints", setup(&bench)),
        ("builtin 38 joints", setup(&builtin)),
    ];
    if std::env::var_os("BOUNDS_BENCH_SUMMARY_ONLY").is_none() {
        let mut c = Criterion::default().configure_from_args();
        for (name, (b, p)) in &cases {
            c.bench_function(
                &format!("skinned bounds, {name}, {POSES} instances"),
                |bch| bch.iter(|| run(b, p)),
            );
        }
        c.final_summary();
    }
    for (name, (b, p)) in &cases {
        let (wall, cpu) = ns_per_instance(b, p);
        let cpu = cpu.map_or(String::new(), |c| format!(", {c:.1} ns of CPU time"));
        println!(
            "skinned bounds, {name} ({} with vertices): {wall:.1} ns per instance (wall){cpu}",
            b.joint_count(),
        );
    }
}
