//! Load speed of the DirectX .x loader: `tiny_4anim.x` (text) and `bat.x`
//! (MSZIP-compressed binary), in MB/s of file bytes. Run with
//! `cargo bench -p vkskin --no-default-features --bench load_x`.
//!
//! The assets come from `$VKSKIN_ASSETS`, else `../../shared/assets` beside
//! the crate; when absent the bench prints a notice and measures nothing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use vkskin::assets::{x, LoadOptions};

fn assets() -> Option<PathBuf> {
    let dir = match std::env::var_os("VKSKIN_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets"),
    };
    dir.join("x").is_dir().then_some(dir)
}

fn load_x(c: &mut Criterion) {
    let Some(dir) = assets() else {
        eprintln!("NOTICE: load_x: shared assets not found (set VKSKIN_ASSETS); nothing measured");
        return;
    };
    let options = LoadOptions::default();
    let mut group = c.benchmark_group("load_x");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    for (file, kind) in [("tiny_4anim.x", "text"), ("bat.x", "compressed binary")] {
        let path = dir.join("x").join(file);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("NOTICE: load_x: {}: {e}; skipped", path.display());
                continue;
            }
        };
        // A plain figure first, printed whatever criterion's output settings.
        let runs = 5;
        let start = Instant::now();
        for _ in 0..runs {
            black_box(x::load_from_bytes(&path, &bytes, &options).expect("the asset loads"));
        }
        let secs = start.elapsed().as_secs_f64() / runs as f64;
        println!(
            "load_x: {file} ({kind}, {:.2} MB): {:.1} ms per load, {:.1} MB/s",
            bytes.len() as f64 / 1e6,
            secs * 1e3,
            bytes.len() as f64 / 1e6 / secs
        );
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(file, |b| {
            b.iter(|| {
                x::load_from_bytes(&path, black_box(&bytes), &options).expect("the asset loads")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, load_x);
criterion_main!(benches);
