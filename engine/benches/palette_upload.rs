//! Per-frame CPU cost of each palette encoding on each storage: one frame's
//! batch of 256 instances of a 64-joint chain (`procedural::many_joints`), every skinning matrix
//! encoded straight into the frame's mapped storage (push: the CPU block
//! pushed at draw time) and its instance record written. Reported in ns per
//! bone (criterion's elements = bones), then a summary table.
//!
//! `cargo bench -p vkskin --bench palette_upload` (needs a Vulkan device;
//! lavapipe will do: nothing is submitted, the storage is host memory).

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::builtin::procedural;
use vkskin::glam::Affine3A;
use vkskin::gpu::{vk, Device, DeviceDesc, Instance, InstanceDesc};
use vkskin::skin::{paths, SkinPath, SkinPathConfig, Stage};

const INSTANCES: usize = 256;
const JOINTS: usize = 64;

struct Rig {
    path: SkinPath,
    mesh: vkskin::skin::PreparedMesh,
}

fn main() {
    let instance = match Instance::new(&InstanceDesc {
        app_name: "palette-bench".into(),
        validation: false,
        synchronization_validation: false,
        display: None,
    }) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("palette_upload: no Vulkan ({e}); skipped");
            return;
        }
    };
    let device = Device::new(&instance, &DeviceDesc::default()).expect("device");
    // At most four bones per triangle: even the push palettes serve it.
    let model = procedural::many_joints(JOINTS).expect("chain");
    let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).expect("hierarchy");
    let palettes: Vec<Vec<Affine3A>> = (0..INSTANCES as u64)
        .map(|s| {
            let locals = procedural::random_pose(&model.skeleton, s, false);
            model.skin_matrices(&locals).expect("skin").remove(0)
        })
        .collect();
    let mut rigs: Vec<(&'static str, Rig)> = Vec::new();
    for desc in paths().iter().filter(|p| p.stage == Stage::Vertex) {
        let cfg = SkinPathConfig::new(vk::Format::R8G8B8A8_UNORM, vk::Format::UNDEFINED, 1);
        let mut path = SkinPath::new(&device, desc, cfg).expect("path");
        // Push palettes partition a 64-joint mesh; that is their cost too.
        let mesh = match path.prepare(&model.meshes[0], &hierarchy) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: {e}", desc.name);
                continue;
            }
        };
        rigs.push((desc.name, Rig { path, mesh }));
    }
    let frame = |rig: &mut Rig| {
        rig.path.begin_frame(0).expect("begin");
        let mut w = rig.path.batch(0, &rig.mesh, INSTANCES).expect("batch");
        w.write_all(|i| (palettes[i].as_slice(), Affine3A::IDENTITY, [1.0; 4]))
            .expect("write");
    };
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = c.benchmark_group("palette_upload");
    group.throughput(Throughput::Elements((INSTANCES * JOINTS) as u64));
    for (name, rig) in rigs.iter_mut() {
        group.bench_function(BenchmarkId::from_parameter(*name), |b| {
            b.iter(|| frame(rig))
        });
    }
    group.finish();
    println!("\nper-frame palette encode + write, {INSTANCES} instances x {JOINTS} joints:");
    println!("| path | parts | ns per bone | us per frame |");
    println!("|---|---|---|---|");
    for (name, rig) in rigs.iter_mut() {
        for _ in 0..3 {
            frame(rig);
        }
        let runs = 30;
        let t = Instant::now();
        for _ in 0..runs {
            frame(rig);
        }
        let per_frame = t.elapsed().as_secs_f64() / runs as f64;
        println!(
            "| {name} | {} | {:.1} | {:.0} |",
            rig.mesh.parts().len(),
            per_frame * 1e9 / (INSTANCES * JOINTS) as f64,
            per_frame * 1e6
        );
    }
}
