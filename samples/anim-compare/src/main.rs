//! `anim-compare`: draws one side-by-side run of the ozz-bench harness
//! (kept outside this repository; see `tools/ozz-bench-device.sh`:
//! ozz-animation's bench and vkskin's anim summary, alternated in one
//! session on one machine) as bar charts, ozz's bar beside vkskin's for
//! every workload, best of rounds, with the ratio ozz / vkskin (> 1: vkskin
//! faster, or smaller for the memory rows).
//!
//! ```text
//! anim-compare RUNS_DIR [--out docs/anim-vs-ozz.png] [--font FILE] [--title TEXT]
//!              [--native-vs-highest]
//! ```
//!
//! `RUNS_DIR` holds the harness's `ozz-N.txt`, `vkskin-N.txt`,
//! `ozz-native-N.txt` and `vkskin-avx2-N.txt`. One panel per pairing found:
//! ozz built with `-march=native` beside vkskin on its AVX2 tier, and ozz's
//! default (SSE2) build beside vkskin on the highest tier the CPU has.
//! `--native-vs-highest` adds a first panel, ozz built with `-march=native`
//! beside vkskin on the highest tier (the `ozz-native-N.txt` and
//! `vkskin-N.txt` rounds): the AVX-512 comparison on a CPU that has it. Each
//! row shows its first shape column (tree of 64 joints; the vertex rows
//! have only that one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use plotters::prelude::*;
use plotters::style::FontStyle;

const UNITS: [&str; 3] = ["ns/joint", "ns/vertex", "B/joint"];
const OZZ: RGBColor = RGBColor(120, 120, 120);
const VKSKIN: RGBColor = RGBColor(31, 119, 180);
const WIDTH: u32 = 1600;

/// Workload -> (unit, best value of the first shape column).
type Table = BTreeMap<String, (String, f64)>;

/// One file's rows: `| workload | unit | tree 64 | ...`.
fn parse(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            if cells.len() < 3 || !UNITS.contains(&cells[1]) {
                return None;
            }
            let v: f64 = cells[2].parse().ok().filter(|v: &f64| v.is_finite())?;
            Some((cells[0].to_string(), cells[1].to_string(), v))
        })
        .collect()
}

/// The best (smallest) value of every row over the rounds `prefix-N.txt`,
/// with the order of the first round's rows.
fn best(dir: &Path, prefix: &str) -> Result<(Vec<String>, Table), String> {
    let mut order = Vec::new();
    let mut table = Table::new();
    let mut rounds = 0;
    for n in 1..=100 {
        let path = dir.join(format!("{prefix}-{n}.txt"));
        if !path.exists() {
            break;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let rows = parse(&text);
        if rows.is_empty() {
            return Err(format!(
                "{}: no result rows (did the run fail?)",
                path.display()
            ));
        }
        rounds += 1;
        for (name, unit, v) in rows {
            let e = table.entry(name.clone()).or_insert_with(|| {
                order.push(name.clone());
                (unit, f64::INFINITY)
            });
            e.1 = e.1.min(v);
        }
    }
    if rounds == 0 {
        order.clear();
    }
    Ok((order, table))
}

struct Panel {
    title: String,
    rows: Vec<(String, String, Option<f64>, Option<f64>)>,
}

fn panel(dir: &Path, ozz: &str, vk: &str, title: &str) -> Result<Option<Panel>, String> {
    let (o_order, o) = best(dir, ozz)?;
    let (v_order, v) = best(dir, vk)?;
    if o_order.is_empty() || v_order.is_empty() {
        return Ok(None);
    }
    // vkskin's rows (the ozz-only variants are in the harness's table).
    let rows = v_order
        .into_iter()
        .map(|n| {
            let unit = v
                .get(&n)
                .or(o.get(&n))
                .map(|x| x.0.clone())
                .unwrap_or_default();
            let (a, b) = (o.get(&n).map(|x| x.1), v.get(&n).map(|x| x.1));
            (n, unit, a, b)
        })
        .collect();
    Ok(Some(Panel {
        title: title.into(),
        rows,
    }))
}

/// The ratio ozz / vkskin each row should reach (the issue "CPU animation
/// ahead of ozz-animation on every workload"): 1.5 for the palette, LBS
/// with four influences and normals and the two-layer blend; 0.5 for clip
/// memory (at most twice ozz's bytes); 1.25 for every other row.
fn target(row: &str) -> f64 {
    if row.starts_with("clip memory") {
        0.5
    } else if row.starts_with("palette")
        || row == "LBS, 4 influences, positions + normals"
        || row == "two-layer blend"
    {
        1.5
    } else {
        1.25
    }
}

fn err(e: impl std::fmt::Display) -> String {
    format!("chart: {e}")
}

fn draw(out: &Path, title: &str, panels: &[Panel]) -> Result<(), String> {
    const ROW: u32 = 44;
    let heights: Vec<u32> = panels
        .iter()
        .map(|p| p.rows.len() as u32 * ROW + 110)
        .collect();
    let height = heights.iter().sum::<u32>() + 60;
    let mut rgb = vec![0u8; (WIDTH * height * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = root.titled(title, ("sans-serif", 22)).map_err(err)?;
        let mut rest = body;
        for (p, h) in panels.iter().zip(&heights) {
            let (area, below) = rest.split_vertically(*h);
            rest = below;
            let values = p.rows.iter().flat_map(|r| [r.2, r.3]).flatten();
            let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
            let (lo, hi) = if lo.is_finite() {
                (lo, hi)
            } else {
                (1.0, 10.0)
            };
            let x0 = 10f64.powf(lo.log10().floor());
            let x1 = 10f64.powf(hi.log10().ceil() + 0.6);
            let n = p.rows.len() as f64;
            let labels: Vec<String> = p
                .rows
                .iter()
                .map(|r| format!("{} ({})", r.0, r.1))
                .collect();
            // Room for the longest label (about 7 px a character at 14 px
            // sans-serif), so none is cut at the left edge.
            let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
            let label_area = (longest as u32 * 7 + 24).clamp(300, WIDTH / 2);
            let mut chart = ChartBuilder::on(&area)
                .caption(&p.title, ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(label_area)
                .build_cartesian_2d((x0..x1).log_scale(), 0.0..n)
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(p.rows.len() * 2 + 1)
                .y_label_formatter(&|y| {
                    let i = (n - y - 0.5).round();
                    if ((n - y - 0.5) - i).abs() > 0.05 || i < 0.0 || i >= n {
                        return String::new();
                    }
                    labels[i as usize].clone()
                })
                .x_desc("ns per joint or vertex; bytes per joint for clip memory (log scale)")
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(err)?;
            for (i, r) in p.rows.iter().enumerate() {
                let top = n - i as f64;
                let bars = [(r.2, OZZ, 0.08, "ozz"), (r.3, VKSKIN, 0.48, "vkskin")];
                for (v, color, off, who) in bars {
                    let (y_hi, y_lo) = (top - off, top - off - 0.4);
                    match v {
                        Some(v) => {
                            chart
                                .draw_series([Rectangle::new(
                                    [(x0, y_lo), (v, y_hi)],
                                    color.filled(),
                                )])
                                .map_err(err)?;
                            chart
                                .draw_series([Text::new(
                                    format!("{v:.2}"),
                                    (v * 1.03, y_hi - 0.05),
                                    ("sans-serif", 13),
                                )])
                                .map_err(err)?;
                        }
                        None => {
                            chart
                                .draw_series([Text::new(
                                    format!("{who}: -"),
                                    (x0 * 1.05, y_hi - 0.05),
                                    ("sans-serif", 13),
                                )])
                                .map_err(err)?;
                        }
                    }
                }
                if let (Some(o), Some(v)) = (r.2, r.3) {
                    let ratio = o / v;
                    let want = target(&r.0);
                    let color = if ratio >= want {
                        RGBColor(20, 130, 40)
                    } else {
                        RGBColor(200, 30, 30)
                    };
                    chart
                        .draw_series([Text::new(
                            format!("ozz/vkskin {ratio:.2} (target {want:.2})"),
                            (x1 / 12.0, top - 0.3),
                            ("sans-serif", 15).into_font().color(&color),
                        )])
                        .map_err(err)?;
                }
            }
        }
        root.present().map_err(err)?;
    }
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), WIDTH, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc
        .write_header()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    w.write_image_data(&rgb)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    w.finish().map_err(|e| format!("{}: {e}", out.display()))
}

fn run() -> Result<PathBuf, String> {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut out = PathBuf::from("docs/anim-vs-ozz.png");
    let mut font = PathBuf::from("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
    let mut title =
        String::from("ozz-animation 0.16 beside vkskin, one run on one machine, best of rounds");
    let mut native_vs_highest = false;
    while let Some(a) = args.next() {
        let mut value = |what: &str| args.next().ok_or_else(|| format!("{what} needs a value"));
        match a.as_str() {
            "--out" => out = value("--out")?.into(),
            "--font" => font = value("--font")?.into(),
            "--title" => title = value("--title")?,
            "--native-vs-highest" => native_vs_highest = true,
            "-h" | "--help" => {
                return Err(
                    "usage: anim-compare RUNS_DIR [--out PNG] [--font TTF] [--title TEXT] \
                     [--native-vs-highest]"
                        .into(),
                )
            }
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => dir = Some(PathBuf::from(s)),
        }
    }
    let dir = dir.ok_or("usage: anim-compare RUNS_DIR [--out PNG] [--font TTF] [--title TEXT]")?;
    let bytes = std::fs::read(&font).map_err(|e| {
        format!(
            "font {}: {e} (install Debian's fonts-dejavu-core, or pass --font FILE)",
            font.display()
        )
    })?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| format!("font {}: not a TrueType/OpenType font", font.display()))?;
    let mut panels = Vec::new();
    let highest = (
        "ozz-native",
        "vkskin",
        "ozz built with -march=native (grey) beside vkskin's highest tier on this CPU (blue)",
    );
    for (ozz, vk, t) in native_vs_highest.then_some(highest).into_iter().chain([
        (
            "ozz-native",
            "vkskin-avx2",
            "ozz built with -march=native (grey) beside vkskin's AVX2 + FMA tier (blue)",
        ),
        (
            "ozz",
            "vkskin",
            "ozz's default build, SSE2 (grey) beside vkskin's highest tier on this CPU (blue)",
        ),
    ]) {
        if let Some(p) = panel(&dir, ozz, vk, t)? {
            panels.push(p);
        }
    }
    if panels.is_empty() {
        return Err(format!(
            "{}: no ozz-N.txt / vkskin-N.txt rounds",
            dir.display()
        ));
    }
    draw(&out, &title, &panels)?;
    Ok(out)
}

fn main() -> ExitCode {
    match run() {
        Ok(out) => {
            println!("written to {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("anim-compare: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_the_best_round_wins() {
        let dir = std::env::temp_dir().join(format!("anim-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let table = |v: f64, m: f64| {
            format!(
                "noise\n| workload | unit | tree 64 | tree 256 | chain 64 | chain 256 |\n\
                 | --- | --- | ---: | ---: | ---: | ---: |\n\
                 | palette (skin matrices + 4x3) | ns/joint | {v} | 1 | 1 | 1 |\n\
                 | clip memory | B/joint | {m} | 1 | 1 | 1 |\n\
                 | LBS, 1 influence, positions only | ns/vertex | - | - | - | - |\n"
            )
        };
        std::fs::write(dir.join("vkskin-1.txt"), table(3.5, 1600.0)).unwrap();
        std::fs::write(dir.join("vkskin-2.txt"), table(3.0, 1600.0)).unwrap();
        std::fs::write(dir.join("ozz-1.txt"), table(4.8, 816.0)).unwrap();
        let (order, best_v) = best(&dir, "vkskin").unwrap();
        assert_eq!(order, ["palette (skin matrices + 4x3)", "clip memory"]);
        assert_eq!(best_v["palette (skin matrices + 4x3)"].1, 3.0);
        let p = panel(&dir, "ozz", "vkskin", "t").unwrap().unwrap();
        assert_eq!(p.rows[0].2, Some(4.8));
        assert_eq!(p.rows[0].3, Some(3.0));
        assert_eq!(target(&p.rows[0].0), 1.5);
        assert_eq!(target(&p.rows[1].0), 0.5);
        // No rounds of a pairing: no panel; a failed round: an error.
        assert!(panel(&dir, "ozz-native", "vkskin-avx2", "t")
            .unwrap()
            .is_none());
        std::fs::write(dir.join("vkskin-3.txt"), "error: could not compile\n").unwrap();
        let e = best(&dir, "vkskin").err().unwrap();
        assert!(
            e.contains("vkskin-3.txt") && e.contains("no result rows"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
