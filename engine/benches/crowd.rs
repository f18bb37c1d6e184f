//! A crowd frame on the CPU: 10,000 instances of a 64-joint character
//! (`procedural::bench_character(1000, 64)`, its looping "writhe" clip),
//! each at its own offset and speed: sample + local-to-model + skinning
//! matrices + 4x3 encode into one output buffer (the mapped palette's
//! `[[f32; 4]]` view, 3 rows per bone), on one thread and on all of them.
//!
//! `cargo bench -p vkskin --no-default-features --bench crowd` runs
//! criterion, then prints ms per frame for both and the speedup, with the
//! built-in 38-joint character (its "walk" and "wave" clips) beside it.
//! `CROWD_BENCH_SUMMARY_ONLY=1` skips criterion.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use vkskin::anim::{Affine4x3, Crowd, CrowdInstance, Parallelism, Skin};
use vkskin::assets::builtin::{procedural, Character};
use vkskin::assets::Model;
use vkskin::glam::Affine3A;

const INSTANCES: usize = 10_000;
const FRAME: f32 = 1.0 / 60.0;

fn crowd(model: &Model, skin: &Skin) -> Crowd {
    let clips = model.clips.len();
    let instances = (0..INSTANCES)
        .map(|i| {
            // Spread the play heads and rates without a random generator.
            let h = (i as f32 * 0.618_034).fract();
            CrowdInstance::new(i % clips, 10.0 * h, 0.75 + 0.5 * h)
        })
        .collect();
    match Crowd::new(&model.skeleton, &model.clips, skin, instances) {
        Ok(c) => c,
        Err(e) => panic!("bench crowd: {e}"),
    }
}

fn encode(_: usize, skin: &[Affine3A], rows: &mut [[f32; 4]]) {
    for (m, r) in skin.iter().zip(rows.chunks_exact_mut(3)) {
        r.copy_from_slice(&Affine4x3::from_affine(m).rows);
    }
}

/// A crowd, its output buffer and its clock.
struct Scene {
    crowd: Crowd,
    out: Vec<[f32; 4]>,
    stride: usize,
    time: f32,
}

impl Scene {
    fn new(model: &Model, skin: &Skin) -> Self {
        let crowd = crowd(model, skin);
        let stride = 3 * crowd.skin_len();
        Self {
            out: vec![[0.0; 4]; crowd.len() * stride],
            crowd,
            stride,
            time: 0.0,
        }
    }

    fn frame(&mut self, par: Parallelism) {
        self.time += FRAME;
        if let Err(e) = self
            .crowd
            .animate_into(self.time, par, &mut self.out, self.stride, encode)
        {
            panic!("crowd frame: {e}");
        }
        black_box(&self.out);
    }

    /// Mean ms per frame over `frames` after a few to warm up.
    fn ms_per_frame(&mut self, par: Parallelism, frames: usize) -> f64 {
        for _ in 0..5 {
            self.frame(par);
        }
        let start = Instant::now();
        for _ in 0..frames {
            self.frame(par);
        }
        start.elapsed().as_secs_f64() * 1e3 / frames as f64
    }
}

fn models() -> Vec<(String, Model, Skin)> {
    let bench = match procedural::bench_character(1000, 64) {
        Ok(m) => m,
        Err(e) => panic!("bench character: {e}"),
    };
    let bench_skin = Skin::whole_skeleton(&bench.skeleton);
    let character = Character::model();
    let character_skin = character.skins[0].clone();
    vec![
        ("bench_character 64 joints".to_string(), bench, bench_skin),
        (
            format!("Character {} joints", Character::JOINTS),
            character,
            character_skin,
        ),
    ]
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn criterion_benches(c: &mut Criterion, model: &Model, skin: &Skin) {
    let mut group = c.benchmark_group("crowd_10k_x64");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(INSTANCES as u64));
    let mut scene = Scene::new(model, skin);
    for (name, par) in [
        ("1 thread".to_string(), Parallelism::Single),
        (format!("{} threads", threads()), Parallelism::All),
    ] {
        group.bench_function(name, |b| b.iter(|| scene.frame(par)));
    }
    group.finish();
}

fn main() {
    let models = models();
    if std::env::var_os("CROWD_BENCH_SUMMARY_ONLY").is_none() {
        let mut c = Criterion::default().configure_from_args();
        criterion_benches(&mut c, &models[0].1, &models[0].2);
        c.final_summary();
    }
    let n = threads();
    println!();
    println!("crowd of {INSTANCES}: sample + local-to-model + skin matrices + 4x3 encode");
    println!(
        "{:<28} {:>12} {:>14} {:>9}",
        "model",
        "1 thread ms",
        format!("{n} threads ms"),
        "speedup"
    );
    for (name, model, skin) in &models {
        let mut scene = Scene::new(model, skin);
        let frames = 60;
        // Alternate so clock and thermal drift hit both alike.
        let (mut single, mut all) = (0.0, 0.0);
        for _ in 0..3 {
            single += scene.ms_per_frame(Parallelism::Single, frames / 3);
            all += scene.ms_per_frame(Parallelism::All, frames / 3);
        }
        let (single, all) = (single / 3.0, all / 3.0);
        println!(
            "{name:<28} {single:>12.2} {all:>14.2} {:>8.2}x",
            single / all
        );
    }
}
