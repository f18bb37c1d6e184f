//! clip-compare: every animation of the shared assets and the anim bench's
//! clips, stored by ozz-animation (its optimizer and runtime builder, through
//! `tools/ozz-compress`) at ozz's default tolerance (1 mm at 10 cm) and at
//! ACL's strict one (0.01 cm at 3 cm), beside vkskin's `Clip` and its
//! `CompressionJob`'s compressed clips at the same tolerances; each measured
//! against vkskin's sampling of the original clip by one metric
//! (`clip_compare::metric`), with both samplers timed in one run.
//!
//! ```text
//! clip-compare --ozz BUILD/ozz-compress [--assets DIR] [--rounds N] [--work DIR]
//!              [--table FILE.md] [--csv FILE.csv] [--chart FILE.png] [--font FILE.ttf]
//!              [--no-compressed]
//! ```
//!
//! Prints the markdown tables (also to `--table`). Build ozz-compress first
//! (tools/ozz-compress/README.md); run this one in release.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clip_compare::export::{self, Exported};
use clip_compare::interchange::{self, ClipBack};
use clip_compare::metric::{joint_errors, ErrorStats};
use clip_compare::report::{Row, SetResult};
use clip_compare::sets::{self, ClipSet};
use clip_compare::{chart, report, timing};
use vkskin::anim::{Clip, CompressionJob};

/// A tolerance: its label, the error allowed and the distance measured at
/// (meters, or the file's units).
struct Tolerance {
    label: &'static str,
    tolerance: f32,
    distance: f32,
}

const TOLERANCES: [Tolerance; 2] = [
    Tolerance {
        label: "1 mm at 10 cm",
        tolerance: 1e-3,
        distance: 0.1,
    },
    Tolerance {
        label: "0.01 cm at 3 cm",
        tolerance: 1e-4,
        distance: 0.03,
    },
];

const RAW: &str = "vkskin Clip (f32, uncompressed)";

struct Args {
    ozz: PathBuf,
    assets: PathBuf,
    rounds: usize,
    work: PathBuf,
    table: Option<PathBuf>,
    csv: Option<PathBuf>,
    chart: Option<PathBuf>,
    font: PathBuf,
    /// `--no-compressed`: leave vkskin's compressed rows out (not measured).
    no_compressed: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        ozz: PathBuf::from("/tmp/ozz-build-native/ozz-compress"),
        assets: PathBuf::from("../shared/assets"),
        rounds: 3,
        work: std::env::temp_dir().join("clip-compare"),
        table: None,
        csv: None,
        chart: None,
        font: PathBuf::from("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
        no_compressed: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |what: &str| it.next().ok_or(format!("{what} needs a value"));
        match flag.as_str() {
            "--ozz" => a.ozz = value("--ozz")?.into(),
            "--assets" => a.assets = value("--assets")?.into(),
            "--rounds" => {
                a.rounds = value("--rounds")?
                    .parse()
                    .map_err(|e| format!("--rounds: {e}"))?
            }
            "--work" => a.work = value("--work")?.into(),
            "--table" => a.table = Some(value("--table")?.into()),
            "--csv" => a.csv = Some(value("--csv")?.into()),
            "--chart" => a.chart = Some(value("--chart")?.into()),
            "--font" => a.font = value("--font")?.into(),
            "--no-compressed" => a.no_compressed = true,
            _ => {
                return Err(format!(
                    "unknown argument {flag}; usage: clip-compare --ozz BUILD/ozz-compress \
                     [--assets DIR] [--rounds N] [--work DIR] [--table MD] [--csv CSV] \
                     [--chart PNG] [--font TTF] [--no-compressed]"
                ))
            }
        }
    }
    a.rounds = a.rounds.max(1);
    Ok(a)
}

/// Runs ozz-compress on one input file at one tolerance.
/// `t` in the set's model units: `(tolerance, distance)`.
fn in_units(set: &ClipSet, t: &Tolerance) -> (f32, f32) {
    (t.tolerance / set.metres, t.distance / set.metres)
}

fn ozz(
    args: &Args,
    input: &Path,
    tag: &str,
    (tolerance, distance): (f32, f32),
) -> Result<Vec<ClipBack>, String> {
    let output = args.work.join(format!("{tag}.out"));
    let status = Command::new(&args.ozz)
        .arg(input)
        .arg(&output)
        .arg(tolerance.to_string())
        .arg(distance.to_string())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| {
            format!(
                "{}: {e} (build it: tools/ozz-compress/README.md)",
                args.ozz.display()
            )
        })?;
    if !status.success() {
        return Err(format!(
            "{} {}: {status}",
            args.ozz.display(),
            input.display()
        ));
    }
    let bytes = std::fs::read(&output).map_err(|e| format!("{}: {e}", output.display()))?;
    interchange::read_output(&output.to_string_lossy(), &bytes)
}

/// vkskin's compressed clips of a set at one tolerance: `CompressionJob`
/// per clip, sampled through the same `SamplingJob` as the original.
fn compress(set: &ClipSet, t: &Tolerance) -> Result<Vec<Clip>, String> {
    let (tolerance, distance) = in_units(set, t);
    set.clips
        .iter()
        .map(|(clip, _)| {
            CompressionJob {
                clip,
                skeleton: &set.skeleton,
                tolerance: vkskin::anim::Tolerance::new(tolerance, distance),
            }
            .run()
            .map_err(|e| format!("{}: compressing '{}': {e}", set.name, clip.name()))
        })
        .collect()
}

fn measure(args: &Args, set: &ClipSet, index: usize) -> Result<SetResult, String> {
    let parents: Vec<Option<usize>> = (0..set.skeleton.len())
        .map(|j| set.skeleton.parent(j))
        .collect();
    let exported: Vec<Exported> = set
        .clips
        .iter()
        .enumerate()
        .map(|(i, (clip, exact))| {
            let keys = export::key_times(clip, exact.as_deref());
            export::export(clip, &keys, 1000 * index as u64 + i as u64)
        })
        .collect::<Result<_, _>>()?;
    let outs: Vec<_> = exported.iter().map(|e| e.out.clone()).collect();
    let input = args.work.join(format!("set{index}.in"));
    std::fs::write(
        &input,
        interchange::write_input(&export::skeleton_out(&set.skeleton), &outs),
    )
    .map_err(|e| format!("{}: {e}", input.display()))?;

    let compressed: Vec<Vec<Clip>> = if args.no_compressed {
        Vec::new()
    } else {
        TOLERANCES
            .iter()
            .map(|t| compress(set, t))
            .collect::<Result<_, _>>()?
    };
    let mut packed_times: Vec<Vec<(f64, f64)>> =
        vec![vec![(f64::INFINITY, f64::INFINITY); set.clips.len()]; TOLERANCES.len()];
    // Rounds alternate ozz (each tolerance) and vkskin; timings keep the
    // fastest round, poses come from the first.
    let mut ozz_back: Vec<Option<Vec<ClipBack>>> = vec![None; TOLERANCES.len()];
    let mut raw_times: Vec<(f64, f64)> = vec![(f64::INFINITY, f64::INFINITY); set.clips.len()];
    for round in 0..args.rounds {
        for (ti, t) in TOLERANCES.iter().enumerate() {
            let back = ozz(args, &input, &format!("set{index}-{ti}"), in_units(set, t))?;
            if back.len() != set.clips.len() {
                return Err(format!(
                    "ozz-compress returned {} clips for {}",
                    back.len(),
                    set.clips.len()
                ));
            }
            match &mut ozz_back[ti] {
                None => ozz_back[ti] = Some(back),
                Some(kept) => {
                    for (k, b) in kept.iter_mut().zip(back) {
                        k.ns_cached = k.ns_cached.min(b.ns_cached);
                        k.ns_seek = k.ns_seek.min(b.ns_seek);
                    }
                }
            }
        }
        for ((clip, _), (e, best)) in set.clips.iter().zip(exported.iter().zip(&mut raw_times)) {
            let (c, s) = timing::sample_clip(clip, e.out.duration, e.out.step, &e.out.seeks);
            *best = (best.0.min(c), best.1.min(s));
        }
        for (clips, times) in compressed.iter().zip(&mut packed_times) {
            for ((clip, e), best) in clips.iter().zip(&exported).zip(times.iter_mut()) {
                let (c, s) = timing::sample_clip(clip, e.out.duration, e.out.step, &e.out.seeks);
                *best = (best.0.min(c), best.1.min(s));
            }
        }
        eprintln!("{}: round {} of {}", set.name, round + 1, args.rounds);
    }

    let debug = std::env::var_os("CLIP_COMPARE_DEBUG").is_some();
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut rows = Vec::new();
    for (t, back) in TOLERANCES.iter().zip(ozz_back) {
        let back = back.ok_or("no ozz run")?;
        let mut errors = Vec::new();
        for (e, b) in exported.iter().zip(&back) {
            if b.poses.len() != e.reference.len() {
                return Err(format!(
                    "ozz-compress returned {} poses for {}",
                    b.poses.len(),
                    e.reference.len()
                ));
            }
            let mut worst = (0.0f32, 0usize, 0.0f32);
            let mut worst_poses = None;
            for ((r, p), time) in e.reference.iter().zip(&b.poses).zip(&e.out.evaluations) {
                if p.len() != r.len() {
                    return Err(format!(
                        "ozz-compress returned {} joints for {}",
                        p.len(),
                        r.len()
                    ));
                }
                let mut je = joint_errors(&parents, r, p, in_units(set, t).1);
                // In metres.
                je.iter_mut().for_each(|e| *e *= set.metres);
                for (j, &v) in je.iter().enumerate() {
                    if v > worst.0 {
                        worst = (v, j, *time);
                        worst_poses = Some((r, p));
                    }
                }
                errors.extend(je);
            }
            if debug {
                eprintln!(
                    "{} / {} at {}: worst {:.6} at joint {} ({}), t = {}",
                    set.name,
                    e.out.name,
                    t.label,
                    worst.0,
                    worst.1,
                    set.skeleton.names()[worst.1],
                    worst.2
                );
                // With CLIP_COMPARE_CHAIN: the worst joint's chain to the root.
                if let (Some((r, p)), Some(_)) =
                    (worst_poses, std::env::var_os("CLIP_COMPARE_CHAIN"))
                {
                    let mut j = Some(worst.1);
                    while let Some(k) = j {
                        eprintln!("  joint {k}: vkskin {:?}\n      ozz {:?}", r[k], p[k]);
                        j = set.skeleton.parent(k);
                    }
                }
            }
        }
        let stats = ErrorStats::of(errors);
        let pending = Row::pending(
            &format!("vkskin compressed, {}", t.label),
            "not measured in this run (--no-compressed)",
        );
        rows.push(Row {
            method: format!("ozz, {}", t.label),
            bytes: Some(back.iter().map(|b| b.bytes).sum()),
            worst: Some(stats.worst),
            p99: Some(stats.p99),
            ns_cached: Some(mean(back.iter().map(|b| b.ns_cached).collect())),
            ns_seek: Some(mean(back.iter().map(|b| b.ns_seek).collect())),
            note: String::new(),
        });
        if args.no_compressed {
            rows.push(pending);
        }
    }
    for ((t, clips), times) in TOLERANCES.iter().zip(&compressed).zip(&packed_times) {
        let mut errors = Vec::new();
        for (clip, e) in clips.iter().zip(&exported) {
            let mut sampler = export::Sampler::new(clip);
            for (r, &time) in e.reference.iter().zip(&e.out.evaluations) {
                let je = joint_errors(&parents, r, &sampler.pose(time)?, in_units(set, t).1);
                errors.extend(je.into_iter().map(|e| e * set.metres));
            }
        }
        let stats = ErrorStats::of(errors);
        let at = rows
            .iter()
            .position(|r: &Row| r.method == format!("ozz, {}", t.label))
            .map_or(rows.len(), |i| i + 1);
        rows.insert(
            at,
            Row {
                method: format!("vkskin compressed, {}", t.label),
                bytes: Some(clips.iter().map(|c| c.bytes() as u64).sum()),
                worst: Some(stats.worst),
                p99: Some(stats.p99),
                ns_cached: Some(mean(times.iter().map(|t| t.0).collect())),
                ns_seek: Some(mean(times.iter().map(|t| t.1).collect())),
                note: String::new(),
            },
        );
    }
    rows.push(Row {
        method: RAW.into(),
        bytes: Some(set.clips.iter().map(|(c, _)| c.bytes() as u64).sum()),
        worst: None,
        p99: None,
        ns_cached: Some(mean(raw_times.iter().map(|t| t.0).collect())),
        ns_seek: Some(mean(raw_times.iter().map(|t| t.1).collect())),
        note: String::new(),
    });
    Ok(SetResult {
        name: set.name.clone(),
        joints: set.skeleton.len(),
        clips: set
            .clips
            .iter()
            .map(|(c, _)| (c.name().to_string(), c.duration()))
            .collect(),
        rows,
    })
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn run() -> Result<(), String> {
    let args = args()?;
    std::fs::create_dir_all(&args.work).map_err(|e| format!("{}: {e}", args.work.display()))?;
    let load_before = loadavg();
    let mut sets = sets::asset_sets(&args.assets)?;
    sets.extend(sets::bench_sets()?);
    if let Ok(only) = std::env::var("CLIP_COMPARE_ONLY") {
        sets.retain(|s| s.name.contains(only.as_str()));
    }
    let results = sets
        .iter()
        .enumerate()
        .map(|(i, s)| measure(&args, s, i))
        .collect::<Result<Vec<_>, _>>()?;
    let load_after = loadavg();
    let mut text = format!(
        "CPU: {} ({} threads); load average (1, 5, 15 min) {} before, {} after; \
         best of {} rounds of the fastest of 41 runs.\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_before,
        load_after,
        args.rounds
    );
    text.push_str(&report::markdown(&results));
    print!("{text}");
    if let Some(p) = &args.table {
        std::fs::write(p, &text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &args.csv {
        std::fs::write(p, report::csv(&results)).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &args.chart {
        let names: Vec<String> = results.iter().map(|r| r.name.clone()).collect();
        let title = format!(
            "ozz-animation 0.16 vs vkskin clips, {}, load {}",
            cpu_model(),
            load_before
        );
        chart::draw(p, &title, &args.font, &names, &chart::panels(&results))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("clip-compare: {e}");
            ExitCode::FAILURE
        }
    }
}
