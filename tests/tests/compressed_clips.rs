//! Compressed clips of the shared assets' animations: at ozz's default
//! tolerance (1 mm at 10 cm) and ACL's (0.01 cm at 3 cm), sampled at key
//! times, key-interval middles and random times, every joint within the
//! tolerance of the original in model space (the points the tolerance's
//! distance along each joint axis, errors accumulated down the hierarchy);
//! then each set through a clip file and back, byte for byte.
//!
//! The checker is the one the engine's unit tests use
//! (`vkskin::anim::check_error`, written apart from the compression job's
//! own metric): every key time, the middle of every key interval and 100
//! pseudo-random times per clip, each sampled by a random seek.

use std::path::PathBuf;

use vkskin::anim::{check_error, check_times, ClipFile, CompressionJob, Tolerance};

/// The glTF assets and their model units in metres (Fox's skeleton is in
/// centimetres: docs/clip-compression.md): the tolerances are metres,
/// converted to each file's units.
const GLTF: &[(&str, f32)] = &[
    ("gltf/CesiumMan.glb", 1.0),
    ("gltf/Fox.glb", 0.01),
    ("gltf/RiggedFigure.glb", 1.0),
];

/// The .x assets have no unit; each is read in the unit its skeleton's
/// size suggests (docs/compression.md): Testwuson (2.7 units tall),
/// BCN_Epileptic (1.7) and bat (6.6 units across the wings) in metres;
/// tiny (448 units tall: 448 m in metres, 4.5 m in centimetres, 45 cm in
/// millimetres) in centimetres, the stricter of the two units that bracket
/// a human-sized tiny.
const X: &[(&str, f32)] = &[
    ("x/tiny_4anim.x", 0.01),
    ("x/tiny.x", 0.01),
    ("x/Testwuson.X", 1.0),
    ("x/BCN_Epileptic.X", 1.0),
    ("x/bat.x", 1.0),
];

#[test]
fn gltf_asset_clips_compress_within_tolerance_and_round_trip() {
    check_files(GLTF);
}

#[test]
fn x_asset_clips_compress_within_tolerance_and_round_trip() {
    check_files(X);
}

fn check_files(files: &[(&str, f32)]) {
    let Some(dir) = vkskin_tests::assets_dir() else {
        return;
    };
    let mut failures = Vec::new();
    for &(file, metres) in files {
        let path: PathBuf = dir.join(file);
        let model = vkskin::assets::load(&path).expect("load");
        for tol in [Tolerance::OZZ_DEFAULT, Tolerance::ACL_DEFAULT] {
            let t0 = std::time::Instant::now();
            let tol = Tolerance::new(tol.error / metres, tol.distance / metres);
            let mut clips = Vec::new();
            for clip in &model.clips {
                let c = CompressionJob {
                    clip,
                    skeleton: &model.skeleton,
                    tolerance: tol,
                }
                .run()
                .expect("compress");
                let times = check_times(clip, 100, 11);
                let checked =
                    check_error(clip, &c, &model.skeleton, &times, tol.distance).expect("check");
                let worst = checked.worst;
                let p = c.compressed().expect("compressed");
                eprintln!(
                    "[{:.1}s] {file} {:?} at {} units: {} -> {} bytes, {:.0} Hz, {} spans, {:.1} bits, worst {:.6} at {:.4} s (job {:.6}) over {} times",
                    t0.elapsed().as_secs_f32(),
                    clip.name(),
                    tol.error,
                    clip.bytes(),
                    c.bytes(),
                    p.sample_rate(),
                    p.span_count(),
                    p.mean_bits(),
                    worst,
                    checked.at,
                    p.measured_error(),
                    times.len()
                );
                let parts = p.bytes_by_part();
                eprintln!(
                    "    bytes: clip struct and base layout {}, headers {}, clip ranges {}, segment ranges {}, samples {}, base tracks {}",
                    c.bytes() - parts.headers - parts.clip_ranges - parts.segment_ranges - parts.samples - parts.base,
                    parts.headers,
                    parts.clip_ranges,
                    parts.segment_ranges,
                    parts.samples,
                    parts.base
                );
                if worst > tol.error {
                    failures.push(format!("{file} {} at {}: {worst}", clip.name(), tol.error));
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
