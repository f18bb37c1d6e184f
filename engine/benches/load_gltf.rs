//! glTF load throughput: `CesiumMan.glb` parsed from memory into a `Model`.
//! Assets from `$VKSKIN_ASSETS`, else `../shared/assets` beside the
//! repository; skipped with a notice when absent.

use std::path::{Path, PathBuf};
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use vkskin::assets::gltf::load_from_bytes;
use vkskin::assets::LoadOptions;

fn assets_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("VKSKIN_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets"),
    };
    dir.join("INDEX.md").is_file().then_some(dir)
}

fn load_gltf(c: &mut Criterion) {
    let Some(dir) = assets_dir() else {
        eprintln!("NOTICE: load_gltf skipped: shared assets not found (set VKSKIN_ASSETS)");
        return;
    };
    let options = LoadOptions::default();
    for rel in [
        "gltf/CesiumMan.glb",
        "gltf/Fox.glb",
        "gltf/RecursiveSkeletons.glb",
    ] {
        let path = dir.join(rel);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("NOTICE: {}: {e}; skipped", path.display());
                continue;
            }
        };
        let name = Path::new(rel);
        // A plain timing first, so the figure is printed whatever criterion's
        // output settings are.
        let runs = 50;
        let start = Instant::now();
        for _ in 0..runs {
            let m = load_from_bytes(name, &bytes, None, &options);
            assert!(m.is_ok());
        }
        let secs = start.elapsed().as_secs_f64() / runs as f64;
        println!(
            "load_gltf {rel}: {:.1} MB/s ({} bytes in {:.3} ms)",
            bytes.len() as f64 / secs / 1e6,
            bytes.len(),
            secs * 1e3
        );
        let mut group = c.benchmark_group("load_gltf");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(rel, |b| {
            b.iter(|| load_from_bytes(name, &bytes, None, &options))
        });
        group.finish();
    }
}

criterion_group!(benches, load_gltf);
criterion_main!(benches);
