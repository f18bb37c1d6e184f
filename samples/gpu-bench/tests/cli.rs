//! The built bench end to end on a small character, under the validation
//! layer: every path and count gets a CSV row with a known status, the
//! chart is a PNG of the stated size, the tables are printed; bad
//! arguments and a missing chart font are errors that say why.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpu-bench"))
        .args(args)
        .env("VKSKIN_VALIDATION", "1")
        .output()
        .unwrap()
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vkskin-gpu-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

const SMALL: [&str; 10] = [
    "--paths",
    "4x3-ubo,dq-texel,4x3-compute,qt-cpu",
    "--instances",
    "1,256",
    "--frames",
    "1",
    "--vertices",
    "300",
    "--joints",
    "8",
];

#[test]
fn small_run_writes_a_row_per_case_a_chart_and_the_tables() {
    let dir = out_dir("small");
    let mut args = SMALL.to_vec();
    args.extend(["--size", "64", "--out", dir.to_str().unwrap()]);
    let out = bench(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);

    let csv = std::fs::read_to_string(dir.join("gpu-bench.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // 4 paths x 2 counts, then the animation pass's 2 rows.
    assert_eq!(rows.len(), 10, "{csv}");
    for path in ["4x3-ubo", "dq-texel", "4x3-compute", "qt-cpu"] {
        for n in ["1", "256"] {
            let row = rows
                .iter()
                .find(|r| r[0] == path && r[col("instances")] == n)
                .unwrap_or_else(|| panic!("no row for {path} x {n}:\n{csv}"));
            // This small character fits every one of these paths anywhere.
            assert_eq!(row[col("status")], "ok", "{path} x {n}: {csv}");
            assert_eq!(row[col("frames")], "1");
            assert_eq!(row[col("vertices")], rows[0][col("vertices")]);
            let gpu = row[col("gpu_ms")];
            if !gpu.is_empty() {
                let g: f64 = gpu.parse().unwrap();
                let v: f64 = row[col("verts_per_s")].parse().unwrap();
                let verts: f64 = row[col("vertices")].parse().unwrap();
                let n: f64 = n.parse().unwrap();
                assert!(g > 0.0);
                assert!(
                    (v - n * verts / (g * 1e-3)).abs() <= 1e-3 * v,
                    "{path}: {v} vs {g} ms"
                );
            }
            let upload: f64 = row[col("upload_ms")].parse().unwrap();
            assert!(upload >= 0.0);
        }
    }
    let anim: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == "animation-only").collect();
    assert_eq!(anim.len(), 2);
    for r in anim {
        let one: f64 = r[col("anim_1thread_ms")].parse().unwrap();
        let all: f64 = r[col("anim_all_threads_ms")].parse().unwrap();
        assert!(one > 0.0 && all > 0.0, "{r:?}");
    }

    let file = std::fs::File::open(dir.join("gpu-bench.png")).unwrap();
    let info = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap()
        .info()
        .clone();
    assert_eq!((info.width, info.height), (1280, 960));

    for needle in [
        "| path | 1 | 256 |",
        "| `4x3-compute` |",
        "| GPU ms @256 | / 4x3-ubo | / 4x3-cpu |",
        "| `dq-texel` | ",
        "| instances | 1 thread ms |",
        "fastest path",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing in\n{stdout}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_and_a_missing_font_say_why() {
    for (args, needle) in [
        (
            vec!["--paths", "4x3-nowhere"],
            "unknown skinning path \"4x3-nowhere\"",
        ),
        (vec!["--instances", "0"], "each count must be 1 to 100000"),
        (
            vec!["--instances", "100001"],
            "each count must be 1 to 100000",
        ),
        (vec!["--vertices", "100001"], "1 to 100000 vertices"),
        (vec!["--joints", "0"], "at least one joint"),
        (vec!["--frames", "0"], "at least one timed frame"),
        (vec!["--max-seconds", "0"], "--max-seconds 0"),
    ] {
        let out = bench(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    // The figures are kept when only the chart cannot be drawn.
    let dir = out_dir("font");
    let mut args = SMALL.to_vec();
    args[1] = "4x3-ubo";
    args.extend(["--size", "32", "--font", "/nonexistent/font.ttf", "--out"]);
    args.push(dir.to_str().unwrap());
    let out = bench(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("/nonexistent/font.ttf") && stderr.contains("fonts-dejavu-core"),
        "{stderr}"
    );
    assert!(dir.join("gpu-bench.csv").exists());
    assert!(!dir.join("gpu-bench.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--morph` on a small character: the CPU table and a GPU row per path
/// and count with a ratio, under validation.
#[test]
fn morph_run_prints_cpu_and_gpu_ratios() {
    let out = bench(&[
        "--morph",
        "--morph-targets",
        "16",
        "--vertices",
        "300",
        "--joints",
        "8",
        "--instances",
        "1,3",
        "--frames",
        "1",
        "--size",
        "32",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    assert!(
        stdout
            .contains("16 targets (100% of the vertices moved by each), 4 active ([0, 4, 8, 12])"),
        "{stdout}"
    );
    for row in [
        "| CPU stage: MorphBlocksJob + run_prepared |",
        "| reference: MorphJob + LinearBlendJob::run |",
    ] {
        assert!(stdout.contains(row), "no {row}:\n{stdout}");
    }
    for path in ["4x3-ssbo", "4x3-compute"] {
        for n in [1, 3] {
            let row = stdout
                .lines()
                .find(|l| l.starts_with(&format!("| {path} | {n} |")))
                .unwrap_or_else(|| panic!("no row for {path} x {n}:\n{stdout}"));
            let ratio: f64 = row
                .trim_end_matches(" |")
                .rsplit("| ")
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(ratio > 0.0, "{row}");
        }
    }
    let bad = bench(&["--morph", "--morph-targets", "0"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--morph-targets 0"));
}

/// `--gpu-anim --compressed MM@CM` runs the animation passes on the
/// character's clips compressed first: a row per case, and a clip store
/// smaller than the flat one of the same clips; a bad tolerance is an
/// error that says why.
#[test]
fn gpu_anim_with_compressed_clips_runs_on_a_smaller_store() {
    let store = |extra: &[&str]| {
        let dir = out_dir(&format!("gpu-anim-{}", extra.len()));
        let mut args = vec![
            "--gpu-anim",
            "--paths",
            "4x3-ssbo",
            "--instances",
            "4",
            "--frames",
            "1",
            "--vertices",
            "300",
            "--joints",
            "8",
            "--size",
            "32",
            "--out",
            dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = bench(&args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{args:?}: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert!(stdout.contains("| 4x3-ssbo | 4 |"), "no row:\n{stdout}");
        let _ = std::fs::remove_dir_all(&dir);
        let bytes: usize = stdout
            .split("clip store ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no clip store size:\n{stdout}"));
        bytes
    };
    let flat = store(&[]);
    let packed = store(&["--compressed", "1@10"]);
    println!("clip store: flat {flat} bytes, compressed at 1 mm @ 10 cm {packed} bytes");
    assert!(packed < flat, "compressed store {packed} >= flat {flat}");
    let bad = bench(&["--gpu-anim", "--compressed", "1@0"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--compressed 1@0"));
}
