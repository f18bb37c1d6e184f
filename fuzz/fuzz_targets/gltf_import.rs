//! Fuzzes the glTF/GLB import from memory: any input must give `Ok` or
//! `Err`, never a panic, a hang or an unbounded allocation.
//!
//! Seed corpus (`fuzz/corpus/gltf_import/`, not committed): the shared
//! assets' GLB files up to 64 KiB, every .gltf turned into a GLB (its
//! buffers concatenated into the BIN chunk, since the target gives no folder
//! to find external files in), and a few .gltf files with their buffers as
//! data URIs; and `morph_targets.gltf`, written by `fuzz/make_corpus.py`
//! (morph targets, their weights and weight channels). The large GLBs
//! (CesiumMan, Fox, RecursiveSkeletons) are swept
//! by `tests/tests/gltf_malformed.rs` instead.
//!
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run gltf_import corpus/gltf_import --
//! -max_total_time=300 -rss_limit_mb=2048 -timeout=10 -max_len=65536`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use vkskin::assets::gltf::load_from_bytes;
use vkskin::assets::LoadOptions;

fuzz_target!(|data: &[u8]| {
    // No base folder: external URIs are errors, so the fuzzer never reads
    // files. Eight influences exercises the wider normalisation too.
    let options = LoadOptions {
        max_influences: (data.len() % 8) + 1,
        ..LoadOptions::default()
    };
    if let Ok(model) = load_from_bytes(Path::new("fuzz.glb"), data, None, &options) {
        // What a caller does next must hold up as well.
        let weights = model.default_morph_weights();
        for mesh in &model.meshes {
            assert!(mesh.skin < model.skins.len());
            assert_eq!(mesh.influences.vertex_count(), mesh.positions.len());
            assert_eq!(mesh.normals.len(), mesh.positions.len());
            assert!(mesh
                .indices
                .iter()
                .all(|&i| (i as usize) < mesh.positions.len()));
            let skin = &model.skins[mesh.skin];
            assert!(mesh
                .influences
                .joints
                .iter()
                .all(|&j| (j as usize) < skin.len()));
            // Morph targets: one delta per vertex where present, and the
            // mesh's weights inside the model's weight vector.
            assert!(mesh.validate().is_ok());
            assert!(mesh.tangents.is_empty() || mesh.tangents.len() == mesh.positions.len());
            assert!(mesh.morph.is_empty() || mesh.morph.weights(&weights).is_some());
        }
        let mut next = 0;
        for set in &model.morph_sets {
            assert_eq!(set.first_weight, next);
            assert_eq!(set.target_names.len(), set.defaults.len());
            next += set.defaults.len();
        }
        for skin in &model.skins {
            assert!(skin.validate(&model.skeleton).is_ok());
        }
    }
});
