//! Skinned bounds per instance: `JointBounds::skinned` (linear blends)
//! and `JointBounds::skinned_dual_quat` (dual quaternions, with and
//! without scale) for the 64-joint bench character
//! (`procedural::bench_character(1000, 64)`) at 64 poses of its "writhe"
//! clip, and the built-in 38-joint character beside it.
//!
//! `cargo bench -p vkskin --no-default-features --bench bounds` runs
//! criterion, then prints ns per instance. `BOUNDS_BENCH_SUMMARY_ONLY=1`
//! skips criterion.

use std::hint::black_box;
use std::time::Instant;

use criterion::Criterion;
use vkskin::anim::{encode_dual_quat_scale, DualQuat, PaletteHierarchy, PlaybackMode};
use vkskin::assets::builtin::{procedural, Character};
use vkskin::assets::Model;
use vkskin::glam::{Affine3A, Mat3A, Quat};
use vkskin::mesh::JointBounds;

const POSES: usize = 64;

/// One pose: the skinning matrices, and the `dq-scale` encoding's
/// rotations and scale/shear matrices with the matrices they stand for.
struct Pose {
    skin: Vec<Affine3A>,
    held: Vec<Affine3A>,
    rotations: Vec<Quat>,
    scale_shear: Vec<Mat3A>,
}

/// Which bound a run takes.
#[derive(Clone, Copy)]
enum Kind {
    Linear,
    DualQuat,
    DualQuatScale,
}

/// The mesh's joint bounds and `POSES` poses over its first clip.
fn setup(model: &Model) -> (JointBounds, Vec<Pose>) {
    let mesh = &model.meshes[0];
    let bounds = JointBounds::new(mesh, model.skins[mesh.skin].len()).expect("joint bounds");
    let hierarchy =
        PaletteHierarchy::new(&model.skins[mesh.skin], &model.skeleton).expect("hierarchy");
    let clip = &model.clips[0];
    let poses = (0..POSES)
        .map(|i| {
            let t = clip.duration() * i as f32 / POSES as f32;
            let locals = model.pose(Some(clip), t, PlaybackMode::Loop).expect("pose");
            let skin = model.skin_matrices(&locals).expect("skin")[mesh.skin].clone();
            let mut dq = vec![DualQuat::IDENTITY; skin.len()];
            let mut scale_shear = vec![Mat3A::IDENTITY; skin.len()];
            encode_dual_quat_scale(&skin, &hierarchy, &mut dq, &mut scale_shear).expect("dq");
            let held = dq
                .iter()
                .zip(&scale_shear)
                .map(|(d, s)| {
                    let m = Affine3A::from_rotation_translation(d.real(), d.translation());
                    Affine3A {
                        matrix3: m.matrix3 * *s,
                        ..m
                    }
                })
                .collect();
            Pose {
                skin,
                held,
                rotations: dq.iter().map(DualQuat::real).collect(),
                scale_shear,
            }
        })
        .collect();
    (bounds, poses)
}

fn run(bounds: &JointBounds, poses: &[Pose], kind: Kind) -> f32 {
    let mut acc = 0.0;
    for p in poses {
        let b = match kind {
            Kind::Linear => bounds.skinned(black_box(&p.skin), &[]).expect("bounds"),
            Kind::DualQuat => bounds
                .skinned_dual_quat(black_box(&p.held), &p.rotations, &[], &[])
                .expect("bounds")
                .expect("bounded"),
            Kind::DualQuatScale => bounds
                .skinned_dual_quat(black_box(&p.held), &p.rotations, &p.scale_shear, &[])
                .expect("bounds")
                .expect("bounded"),
        };
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
fn ns_per_instance(bounds: &JointBounds, palettes: &[Pose], kind: Kind) -> (f64, Option<f64>) {
    let reps = 2000;
    let per = (reps * palettes.len()) as f64;
    let (mut wall, mut cpu) = (f64::INFINITY, None::<f64>);
    for _ in 0..20 {
        let c0 = thread_cpu_ns();
        let t = Instant::now();
        for _ in 0..reps {
            black_box(run(bounds, palettes, kind));
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
                |bch| bch.iter(|| run(b, p, Kind::Linear)),
            );
        }
        c.final_summary();
    }
    for (name, (b, p)) in &cases {
        for (kind, what) in [
            (Kind::Linear, "linear"),
            (Kind::DualQuat, "dq"),
            (Kind::DualQuatScale, "dq-scale"),
        ] {
            let (wall, cpu) = ns_per_instance(b, p, kind);
            let cpu = cpu.map_or(String::new(), |c| format!(", {c:.1} ns of CPU time"));
            println!(
                "skinned bounds ({what}), {name} ({} with vertices, {} sharing pairs): {wall:.1} ns per instance (wall){cpu}",
                b.joint_count(),
                b.sharing_pairs(),
            );
        }
    }
}
