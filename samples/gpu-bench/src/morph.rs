//! `gpu-bench --morph`: what morph targets cost. The bench character gets
//! `--morph-targets` targets (positions and normals on every vertex, or
//! on `--morph-moved` per cent of them) of which `--morph-active` are
//! non-zero per instance (spread over the
//! list, weights changing from frame to frame and instance to instance).
//!
//! CPU: what the CPU stage runs, `MorphBlocksJob` into a reused scratch
//! then `LinearBlendJob::run_prepared`, against `run_prepared` alone on
//! one instance of the mesh, ns per vertex (median of `--frames` x 4 runs
//! after a warm-up); and the reference pair, `MorphJob` then
//! `LinearBlendJob::run` against `run` alone. GPU: per selected path and instance count, the same
//! frames as the main bench ([`super::Bench`]) of the character without
//! targets and of the morphing one (`BatchWriter::animate_morphed`), their
//! GPU milliseconds from the path's timestamps and the ratio. Prints a
//! Markdown table; writes nothing.

use std::time::Instant;

use glam::Vec3;
use vkskin::anim::{BindVertices, CheckedJoints, LinearBlendJob, MorphBlocksJob, MorphDeltas};
use vkskin::assets::Model;
use vkskin::mesh::{MorphJob, MorphSet, MorphTarget};

use super::{median, Args, Bench, Case, Outcome};

/// The morph benchmark's model: `model` with `count` targets on mesh 0
/// (position deltas up to 2% of the box, normal deltas up to 0.3), from a
/// fixed seed; each moves `moved` per cent of the vertices, a run of
/// consecutive ones starting at a place of its own (100: dense), the
/// others' deltas zero.
pub fn with_targets(model: &Model, count: usize, moved: usize) -> Model {
    let mut out = model.clone();
    let mesh = &mut out.meshes[0];
    let n = mesh.positions.len();
    let scale = 0.02 * bbox_diagonal(&mesh.positions);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let mut vec3 = |r: f32| Vec3::new(next() * r, next() * r, next() * r);
    let run = (n * moved.min(100)).div_ceil(100);
    mesh.morph.targets = (0..count)
        .map(|t| {
            let start = if run < n { t * 7919 % (n - run + 1) } else { 0 };
            let mut target = MorphTarget {
                positions: (0..n).map(|_| vec3(scale)).collect(),
                normals: (0..n).map(|_| vec3(0.3)).collect(),
                ..MorphTarget::default()
            };
            for v in (0..start).chain(start + run..n) {
                target.positions[v] = Vec3::ZERO;
                target.normals[v] = Vec3::ZERO;
            }
            target
        })
        .collect();
    mesh.morph.first_weight = 0;
    out.morph_sets = vec![MorphSet {
        name: mesh.name.clone(),
        target_names: (0..count).map(|i| format!("t{i}")).collect(),
        defaults: vec![0.0; count],
        first_weight: 0,
    }];
    out
}

fn bbox_diagonal(p: &[Vec3]) -> f32 {
    let (lo, hi) = p
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    (hi - lo).length()
}

/// `active` targets spread evenly over `targets`.
pub fn active_list(targets: usize, active: usize) -> Vec<usize> {
    let active = active.min(targets);
    (0..active).map(|k| k * targets / active).collect()
}

/// Every instance's weights at time `t`: zero but for `active` (those
/// below `targets`), which swing between -0.5 and 1 out of step per
/// instance. Empty for a mesh without targets.
pub fn instance_weights(n: usize, targets: usize, active: &[usize], t: f32) -> Vec<f32> {
    let mut w = vec![0.0; n * targets];
    for i in 0..n {
        for (k, &a) in active.iter().enumerate().filter(|(_, &a)| a < targets) {
            let phase = t * 3.0 + 0.7 * i as f32 + 1.3 * k as f32;
            w[i * targets + a] = 0.25 + 0.75 * phase.sin();
        }
    }
    w
}

/// CPU cost per vertex, ns, of one instance (median of `runs` runs).
pub struct CpuFigures {
    /// The CPU stage without targets: `LinearBlendJob::run_prepared`.
    pub plain: f64,
    /// The CPU stage with targets: `MorphBlocksJob` into a reused scratch,
    /// then `run_prepared` on it.
    pub morphed: f64,
    /// The reference for comparison: `MorphJob` then `LinearBlendJob::run`
    /// (what the CPU stage did before `MorphBlocksJob`).
    pub reference: f64,
    /// `LinearBlendJob::run` alone (the reference's baseline).
    pub reference_plain: f64,
}

/// Measures [`CpuFigures`] on `model`'s mesh 0 with `active` targets.
pub fn cpu_pass(model: &Model, active: &[usize], runs: usize) -> Result<CpuFigures, String> {
    let mesh = &model.meshes[0];
    let n = mesh.vertex_count();
    let pose = model
        .pose(model.clips.first(), 0.4, vkskin::anim::PlaybackMode::Loop)
        .map_err(|e| e.to_string())?;
    let palettes = model.skin_matrices(&pose).map_err(|e| e.to_string())?;
    let palette = &palettes[mesh.skin];
    let weights = instance_weights(1, mesh.morph.len(), active, 0.3);
    let joints = CheckedJoints::new(mesh.influences.joints.clone());
    let bind = BindVertices::new(mesh.positions.clone(), mesh.normals.clone())
        .map_err(|e| e.to_string())?;
    let deltas = MorphDeltas::new(
        n,
        mesh.morph
            .targets
            .iter()
            .map(|t| (&t.positions[..], &t.normals[..])),
    )
    .map_err(|e| e.to_string())?;
    let mut scratch = BindVertices::default();
    let (mut mp, mut mn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let (mut sp, mut sn) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let mut times: [Vec<f64>; 4] = Default::default();
    let per_vertex = |s: f64| s * 1e9 / n as f64;
    for r in 0..=runs {
        let start = Instant::now();
        lbs_job(
            mesh,
            palette,
            &joints,
            bind.positions(),
            bind.normals(),
            &mut sp,
            &mut sn,
        )
        .run_prepared(&joints, &bind)
        .map_err(|e| e.to_string())?;
        let a = start.elapsed().as_secs_f64();
        let start = Instant::now();
        MorphBlocksJob {
            deltas: &deltas,
            weights: &weights,
            base: &bind,
            out: &mut scratch,
        }
        .run()
        .map_err(|e| e.to_string())?;
        lbs_job(
            mesh,
            palette,
            &joints,
            scratch.positions(),
            scratch.normals(),
            &mut sp,
            &mut sn,
        )
        .run_prepared(&joints, &scratch)
        .map_err(|e| e.to_string())?;
        let b = start.elapsed().as_secs_f64();
        let start = Instant::now();
        lbs_job(
            mesh,
            palette,
            &joints,
            &mesh.positions,
            &mesh.normals,
            &mut sp,
            &mut sn,
        )
        .run()
        .map_err(|e| e.to_string())?;
        let c = start.elapsed().as_secs_f64();
        let start = Instant::now();
        MorphJob {
            targets: &mesh.morph.targets,
            weights: &weights,
            positions: &mesh.positions,
            normals: &mesh.normals,
            tangents: &[],
            out_positions: &mut mp,
            out_normals: &mut mn,
            out_tangents: &mut [],
        }
        .run()
        .map_err(|e| e.to_string())?;
        lbs_job(mesh, palette, &joints, &mp, &mn, &mut sp, &mut sn)
            .run()
            .map_err(|e| e.to_string())?;
        let d = start.elapsed().as_secs_f64();
        if r > 0 {
            for (t, s) in times.iter_mut().zip([a, b, c, d]) {
                t.push(per_vertex(s));
            }
        }
    }
    let [plain, morphed, reference_plain, reference] = times.map(median);
    Ok(CpuFigures {
        plain,
        morphed,
        reference,
        reference_plain,
    })
}

/// The CPU stage's linear blend of `mesh` from `positions` and `normals`.
fn lbs_job<'a>(
    mesh: &'a vkskin::mesh::SkinnedMesh,
    palette: &'a [vkskin::glam::Affine3A],
    joints: &'a [u16],
    positions: &'a [Vec3],
    normals: &'a [Vec3],
    out_positions: &'a mut [Vec3],
    out_normals: &'a mut [Vec3],
) -> LinearBlendJob<'a> {
    LinearBlendJob {
        skin: palette,
        per_vertex: mesh.influences.per_vertex,
        joints,
        weights: &mesh.influences.weights,
        positions,
        normals,
        out_positions,
        out_normals,
        unit_normals: false,
    }
}

/// The whole `--morph` run on `device`: CPU figures, then every path and
/// count with and without targets; prints the tables.
pub fn run(
    args: &Args,
    device: &std::sync::Arc<vkskin::gpu::Device>,
    plain: &Model,
    descs: &[&'static vkskin::skin::PathDesc],
    device_name: &str,
) -> Result<(), String> {
    let morphing = with_targets(plain, args.morph_targets, args.morph_moved);
    let active = active_list(args.morph_targets, args.morph_active);
    let vertices = plain.meshes[0].vertex_count();
    println!(
        "gpu-bench --morph: {vertices}-vertex character, {} targets ({}% of the vertices moved by each), {} active ({active:?}), on {device_name} (CPU: {})",
        args.morph_targets,
        args.morph_moved,
        active.len(),
        super::cpu_model()
    );
    let cpu = cpu_pass(&morphing, &active, (4 * args.frames).max(20))?;
    println!();
    println!("| CPU, one instance | ns / vertex | ratio |");
    println!("|---|---:|---:|");
    println!(
        "| CPU stage: LinearBlendJob::run_prepared | {:.2} | |",
        cpu.plain
    );
    println!(
        "| CPU stage: MorphBlocksJob + run_prepared | {:.2} | {:.2} |",
        cpu.morphed,
        cpu.morphed / cpu.plain
    );
    println!(
        "| reference: LinearBlendJob::run | {:.2} | |",
        cpu.reference_plain
    );
    println!(
        "| reference: MorphJob + LinearBlendJob::run | {:.2} | {:.2} |",
        cpu.reference,
        cpu.reference / cpu.reference_plain
    );
    println!();
    let total = descs.len() * args.instances.len();
    let mut runs: Vec<Vec<Case>> = Vec::new();
    for (model, label) in [(plain, "without morph"), (&morphing, "with morph")] {
        let mut bench = Bench::new(device, model, args)?;
        bench.morph_active = active.clone();
        let mut cases = Vec::with_capacity(total);
        println!("[{label}]");
        for desc in descs {
            bench.run_path(desc, args, &mut cases, total)?;
        }
        runs.push(cases);
    }
    device.wait_idle().map_err(|e| e.to_string())?;
    println!();
    println!("| path | instances | GPU ms without | GPU ms with morph | ratio |");
    println!("|---|---:|---:|---:|---:|");
    for (a, b) in runs[0].iter().zip(&runs[1]) {
        let ms = |c: &Case| match &c.outcome {
            Outcome::Measured(m) => m.gpu_ms,
            _ => None,
        };
        let show = |c: &Case| match (&c.outcome, ms(c)) {
            (_, Some(g)) => format!("{g:.3}"),
            (Outcome::Measured(_), None) => "n/a".into(),
            (Outcome::Limit(e) | Outcome::Skipped(e) | Outcome::Error(e), _) => e.clone(),
        };
        let ratio = match (ms(a), ms(b)) {
            (Some(x), Some(y)) if x > 0.0 => format!("{:.2}", y / x),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {ratio} |",
            a.path.name,
            a.instances,
            show(a),
            show(b)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_targets_are_spread_and_weights_zero_elsewhere() {
        assert_eq!(active_list(64, 4), vec![0, 16, 32, 48]);
        assert_eq!(active_list(2, 4), vec![0, 1]);
        let w = instance_weights(3, 64, &[0, 16, 32, 48], 0.5);
        for i in 0..3 {
            let nonzero: Vec<usize> = (0..64).filter(|&t| w[i * 64 + t] != 0.0).collect();
            assert_eq!(nonzero, vec![0, 16, 32, 48]);
        }
        assert_ne!(w[0], w[64]);
        assert!(instance_weights(3, 0, &[0, 16], 0.5).is_empty());
    }
}
