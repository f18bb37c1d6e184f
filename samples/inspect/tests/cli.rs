//! The inspect binary end to end on the shared assets (skipped with a notice
//! when they are absent, as the other asset tests are).

use std::process::Command;

use vkskin_tests::asset;

fn inspect(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_inspect"))
        .args(args)
        // Validation in release builds too (debug builds have it anyway).
        .env("VKSKIN_VALIDATION", "1")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn prints_tree_meshes_histogram_clips_and_warnings() {
    let Some(f) = asset("gltf/quad_skin.glb") else {
        return;
    };
    let (ok, out, err) = inspect(&[f.to_str().unwrap()]);
    assert!(ok, "{err}");
    for needle in [
        "joints:",
        "skins: 1",
        "meshes: 1 (4 vertices)",
        "influences per vertex",
        "4: 4 vertices",
        "clips: 0",
        "warnings: 1",
        "more than 4 influences (up to 10)",
    ] {
        assert!(out.contains(needle), "{needle:?} missing in\n{out}");
    }
    let Some(f) = asset("gltf/InterpolationTest.glb") else {
        return;
    };
    let (ok, out, err) = inspect(&[f.to_str().unwrap()]);
    assert!(ok, "{err}");
    for needle in ["clips: 9", "keys Step", "keys CubicSpline", "keys Linear"] {
        assert!(out.contains(needle), "{needle:?} missing in\n{out}");
    }
}

#[test]
fn dumps_skinned_positions_as_json() {
    let Some(f) = asset("gltf/CesiumMan.glb") else {
        return;
    };
    let out = std::env::temp_dir().join(format!("inspect_dump_{}.json", std::process::id()));
    let (ok, _, err) = inspect(&[
        f.to_str().unwrap(),
        "--dump-skinned",
        "--clip",
        "0",
        "--time",
        "0.5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(v["path"], "cpu");
    assert_eq!(v["time"], 0.5);
    assert_eq!(v["clip"], "animation0");
    let prims = v["primitives"].as_array().unwrap();
    assert_eq!(prims.len(), 1);
    assert_eq!(prims[0]["mesh"], "Cesium_Man");
    // INDEX.md: CesiumMan has 3273 vertices.
    assert_eq!(prims[0]["positions"].as_array().unwrap().len(), 3273);
    assert_eq!(prims[0]["normals"].as_array().unwrap().len(), 3273);
    let p = &prims[0]["positions"][0];
    assert!(p
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c.as_f64().unwrap().is_finite()));
}

/// Every GPU path, skinned in capture mode under validation, agrees with
/// its reference on a real animated model: 4x3 paths with `--path cpu`
/// (linear blend skinning), the other encodings with their CPU-stage path
/// (their own CPU job); 8 influences included.
#[test]
fn gpu_paths_match_the_cpu_dump_and_unknown_paths_are_listed() {
    let Some(f) = asset("gltf/CesiumMan.glb") else {
        return;
    };
    let Some(bat) = asset("x/bat.x") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("inspect_gpu_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (f, influences) in [(f, "4"), (bat, "8")] {
        check_every_path(&dir, f.to_str().unwrap(), influences);
    }
    std::fs::remove_dir_all(&dir).ok();
    let f = asset("gltf/CesiumMan.glb").unwrap();
    let (ok, _, err) = inspect(&[
        f.to_str().unwrap(),
        "--dump-skinned",
        "--path",
        "bogus",
        "--out",
        "/dev/null",
    ]);
    assert!(!ok);
    for desc in vkskin::skin::paths() {
        assert!(err.contains(desc.name), "{} missing from: {err}", desc.name);
    }
    assert!(err.contains("known: cpu, 4x3-push"), "{err}");
}

fn check_every_path(dir: &std::path::Path, f: &str, influences: &str) {
    // `None` when the path refused the mesh (a push palette too small for
    // a triangle), with the refusal checked.
    let dump = |path: &str| -> Option<serde_json::Value> {
        let out = dir.join(format!("{path}.json"));
        let out = out.to_str().unwrap();
        let args = [
            f,
            "--dump-skinned",
            "--clip",
            "0",
            "--time",
            "0.7",
            "--max-influences",
            influences,
            "--path",
            path,
            "--out",
            out,
        ];
        let (ok, _, err) = inspect(&args);
        if !ok && path.ends_with("-push") && err.contains("bones, but") {
            eprintln!("{f}: {path} refused: {err}");
            return None;
        }
        assert!(ok, "--path {path}: {err}");
        Some(serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap())
    };
    let cpu = dump("cpu").unwrap();
    let flat = |v: &serde_json::Value, key: &str| -> Vec<f64> {
        v["primitives"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p[key].as_array().unwrap().clone())
            .flat_map(|xyz| xyz.as_array().unwrap().clone())
            .map(|c| c.as_f64().unwrap())
            .collect()
    };
    let mut references = std::collections::HashMap::new();
    references.insert("4x3", cpu);
    for desc in vkskin::skin::paths() {
        let Some(gpu) = dump(desc.name) else {
            continue;
        };
        assert_eq!(gpu["path"], desc.name);
        let enc = desc.encoding.name();
        if !references.contains_key(enc) {
            references.insert(enc, dump(&format!("{enc}-cpu")).unwrap());
        }
        let reference = &references[enc];
        for key in ["positions", "normals"] {
            let (a, b) = (flat(reference, key), flat(&gpu, key));
            assert_eq!(a.len(), b.len());
            let worst = a
                .iter()
                .zip(&b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-4,
                "{} {key}: worst difference {worst}",
                desc.name
            );
        }
    }
}

#[test]
fn load_errors_are_reported_not_panicked() {
    let dir = std::env::temp_dir().join(format!("inspect_bad_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.glb");
    std::fs::write(&bad, b"glTF\x02\0\0\0\xff\xff\0\0").unwrap();
    let (ok, _, err) = inspect(&[bad.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(!ok);
    assert!(err.contains("bad.glb: byte 8:"), "{err}");
}

#[test]
fn lists_morph_targets_sets_and_weight_channels() {
    // A triangle with two targets (dense position and normal deltas; sparse
    // positions over zeros), named, on node "blob", and a LINEAR weight
    // clip of two keys; written here, with its buffer beside it.
    let dir = std::env::temp_dir().join(format!("inspect_morph_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let floats: [f32; 26] = [
        0., 0., 0., 1., 0., 0., 0., 1., 0., // positions, 0..36
        0., 0., 1., 0., 0., 1., 0., 0., 1., // target 0 deltas, 36..72
        0., 0., 0.5, // sparse value, 72..84
        0., 1., // key times, 84..92
        0., 0., 1., // unused, 92..104
    ];
    let mut bin: Vec<u8> = floats.iter().flat_map(|x| x.to_le_bytes()).collect();
    bin.extend_from_slice(&2u16.to_le_bytes()); // sparse index, 104..106
    bin.extend_from_slice(&[0, 0]);
    for w in [0f32, 0., 1., 0.5] {
        bin.extend_from_slice(&w.to_le_bytes()); // weights, 108..124
    }
    std::fs::write(dir.join("m.bin"), &bin).unwrap();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"uri":"m.bin","byteLength":{}}}],
        "bufferViews":[{{"buffer":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":36}},
            {{"buffer":0,"byteOffset":72,"byteLength":12}},{{"buffer":0,"byteOffset":84,"byteLength":8}},
            {{"buffer":0,"byteOffset":104,"byteLength":2}},{{"buffer":0,"byteOffset":108,"byteLength":16}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}},
            {{"bufferView":1,"componentType":5126,"count":3,"type":"VEC3"}},
            {{"componentType":5126,"count":3,"type":"VEC3","sparse":{{"count":1,"indices":{{"bufferView":4,"componentType":5123}},"values":{{"bufferView":2}}}}}},
            {{"bufferView":3,"componentType":5126,"count":2,"type":"SCALAR"}},
            {{"bufferView":5,"componentType":5126,"count":4,"type":"SCALAR"}}],
        "meshes":[{{"name":"tri","extras":{{"targetNames":["up","side"]}},"primitives":[{{"attributes":{{"POSITION":0}},
            "targets":[{{"POSITION":1,"NORMAL":1}},{{"POSITION":2}}]}}]}}],
        "nodes":[{{"name":"blob","mesh":0,"weights":[0.25,0.5]}}],
        "animations":[{{"name":"pulse","channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}],
            "samplers":[{{"input":3,"output":4}}]}}]}}"#,
        bin.len()
    );
    let file = dir.join("morph.gltf");
    std::fs::write(&file, json).unwrap();
    let (ok, out, err) = inspect(&[file.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(ok, "{err}");
    for needle in [
        "morph targets: 2, weights from 0 (set \"blob\")",
        "[0] \"up\": POSITION NORMAL, dense",
        "[1] \"side\": POSITION, sparse",
        "morph weight sets: 1 (2 weights)",
        "[0] \"blob\": weights 0..2, defaults [0.25, 0.5]",
        "morph weights (set \"blob\"): first 0, count 2, 2 keys Linear, 0.000..1.000 s",
    ] {
        assert!(out.contains(needle), "{needle:?} missing in\n{out}");
    }
}

/// `builtin:morph` (the morph demo): the dump applies the clip's weights
/// at `--time` (recorded as `weights`), a vertex and a compute path agree
/// with the CPU reference, `--weights` overrides them, and a wrong count
/// is refused.
#[test]
fn dumps_morphed_vertices_with_clip_or_given_weights() {
    use vkskin::skin::Stage;
    let dir = std::env::temp_dir().join(format!("inspect_morph_dump_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dump = |path: &str, extra: &[&str]| -> serde_json::Value {
        let out = dir.join(format!("{path}-{}.json", extra.len()));
        let out = out.to_str().unwrap();
        let mut args = vec![
            "builtin:morph",
            "--dump-skinned",
            "--clip",
            "morph",
            "--time",
            "2.5",
            "--path",
            path,
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let (ok, _, err) = inspect(&args);
        assert!(ok, "--path {path} {extra:?}: {err}");
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
    };
    let flat = |v: &serde_json::Value, key: &str| -> Vec<f64> {
        v["primitives"][0][key]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|xyz| xyz.as_array().unwrap().clone())
            .map(|c| c.as_f64().unwrap())
            .collect()
    };
    let worst = |a: &[f64], b: &[f64]| {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    let cpu = dump("cpu", &[]);
    let w: Vec<f64> = cpu["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(w.len(), 4);
    assert!(w.iter().all(|&x| x > 0.1), "clip weights at 2.5 s: {w:?}");
    for stage in [Stage::Vertex, Stage::Compute] {
        let desc = vkskin::skin::paths()
            .iter()
            .find(|d| d.stage == stage && d.encoding.name() == "4x3")
            .unwrap();
        let gpu = dump(desc.name, &[]);
        for key in ["positions", "normals"] {
            let d = worst(&flat(&cpu, key), &flat(&gpu, key));
            assert!(d < 1e-4, "{} {key}: worst difference {d}", desc.name);
        }
    }
    // Zero weights by hand: the plain skinned mesh, far from the morphed.
    let zero = dump("cpu", &["--weights", "0,0,0,0"]);
    assert_eq!(zero["weights"], serde_json::json!([0.0, 0.0, 0.0, 0.0]));
    assert!(worst(&flat(&cpu, "positions"), &flat(&zero, "positions")) > 0.05);
    let tip = dump("cpu", &["--weights", "0,1,0,-0.5"]);
    assert!(worst(&flat(&tip, "positions"), &flat(&zero, "positions")) > 0.1);
    let (ok, _, err) = inspect(&[
        "builtin:morph",
        "--dump-skinned",
        "--weights",
        "1,2",
        "--out",
        "/dev/null",
    ]);
    assert!(!ok);
    assert!(err.contains("2 weights; the model has 4"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
