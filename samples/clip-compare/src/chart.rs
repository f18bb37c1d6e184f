//! The PNG chart of one run: per clip set, bytes per joint per second of
//! animation and sampling ns per joint, each row's bars from `SetResult`s.

use std::path::Path;

use plotters::prelude::*;

use crate::report::SetResult;

const WIDTH: u32 = 1400;
const COLORS: [RGBColor; 8] = [
    RGBColor(230, 120, 30),
    RGBColor(250, 180, 100),
    RGBColor(40, 100, 190),
    RGBColor(120, 170, 230),
    RGBColor(30, 150, 70),
    RGBColor(130, 200, 140),
    RGBColor(120, 60, 160),
    RGBColor(190, 150, 220),
];

/// One bar series: its legend and a value per set (`None`: not measured).
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// One panel: a title, the x axis's text, its series.
pub struct Panel {
    pub title: String,
    pub x_desc: String,
    pub series: Vec<Series>,
}

/// ozz in oranges, vkskin compressed in blues (purples at the strict
/// tolerance's speed), vkskin's raw clips in greens; the lighter shade for
/// the strict tolerance's bytes and for random seeks.
fn color_for(label: &str, index: usize) -> RGBColor {
    let strict = label.contains("0.01 cm");
    let seek = label.ends_with("random seek");
    let i = if label.starts_with("ozz") {
        usize::from(strict || seek)
    } else if label.starts_with("vkskin compressed") {
        match (strict, label.ends_with("cached") || seek) {
            (false, false) => 2,
            (true, false) => 3,
            (false, true) => 2 + usize::from(seek),
            (true, true) => 6 + usize::from(seek),
        }
    } else if label.starts_with("vkskin") {
        4 + usize::from(seek)
    } else {
        index
    };
    COLORS[i % COLORS.len()]
}

fn err(e: impl std::fmt::Display) -> String {
    format!("chart: {e}")
}

/// The two panels of a run: storage, then sampling speed.
pub fn panels(sets: &[SetResult]) -> Vec<Panel> {
    let find =
        |set: &SetResult, method: &str| set.rows.iter().find(|r| r.method == method).cloned();
    let methods: Vec<String> = sets
        .first()
        .map(|s| s.rows.iter().map(|r| r.method.clone()).collect())
        .unwrap_or_default();
    let storage = methods
        .iter()
        .map(|m| Series {
            label: m.clone(),
            values: sets
                .iter()
                .map(|s| find(s, m).and_then(|r| s.per_joint_second(&r)))
                .collect(),
        })
        .collect();
    // Sampling: every method with timings, cached and seek.
    let mut speed = Vec::new();
    for m in &methods {
        for (what, pick) in [
            (
                "cached",
                (|r: &crate::report::Row| r.ns_cached) as fn(&crate::report::Row) -> Option<f64>,
            ),
            ("random seek", |r: &crate::report::Row| r.ns_seek),
        ] {
            let values: Vec<Option<f64>> = sets
                .iter()
                .map(|s| find(s, m).and_then(|r| pick(&r)))
                .collect();
            // One timing per storage kind: ozz's tolerances sample alike,
            // so only the first ozz row's speed is drawn.
            if values.iter().any(Option::is_some)
                && !speed.iter().any(|s: &Series| {
                    s.label.starts_with("ozz") && m.starts_with("ozz") && s.label.ends_with(what)
                })
            {
                speed.push(Series {
                    label: format!("{m}, {what}"),
                    values,
                });
            }
        }
    }
    vec![
        Panel {
            title: "Clip storage: bytes per joint per second of animation (log scale)".into(),
            x_desc:
                "bytes / (joint x second); errors and exact figures in docs/clip-compression.md"
                    .into(),
            series: storage,
        },
        Panel {
            title: "Sampling the stored clips: ns per joint, fastest of 41 runs (log scale)".into(),
            x_desc: "ns per joint".into(),
            series: speed,
        },
    ]
}

/// Draws the panels for the sets into a PNG.
pub fn draw(
    out: &Path,
    title: &str,
    font: &Path,
    sets: &[String],
    panels: &[Panel],
) -> Result<(), String> {
    let bytes = std::fs::read(font).map_err(|e| {
        format!(
            "font {}: {e} (install Debian's fonts-dejavu-core, or pass --font FILE)",
            font.display()
        )
    })?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        Box::leak(bytes.into_boxed_slice()),
    )
    .map_err(|_| format!("font {}: not a TrueType/OpenType font", font.display()))?;
    const BAR: u32 = 13;
    let heights: Vec<u32> = panels
        .iter()
        .map(|p| {
            sets.len() as u32 * (BAR * p.series.len() as u32 + 12)
                + 130
                + 18 * p.series.len() as u32
        })
        .collect();
    let height = heights.iter().sum::<u32>() + 50;
    let mut rgb = vec![0u8; (WIDTH * height * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut rest = root.titled(title, ("sans-serif", 20)).map_err(err)?;
        for (p, h) in panels.iter().zip(&heights) {
            let (area, below) = rest.split_vertically(*h);
            rest = below;
            let values = p
                .series
                .iter()
                .flat_map(|s| s.values.iter().flatten().copied());
            let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
            let (lo, hi) = if lo.is_finite() && lo > 0.0 {
                (lo, hi)
            } else {
                (1.0, 10.0)
            };
            let x0 = 10f64.powf(lo.log10().floor());
            let x1 = 10f64.powf(hi.log10().ceil() + 0.3);
            let n = sets.len() as f64;
            let mut chart = ChartBuilder::on(&area)
                .caption(&p.title, ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(36)
                .y_label_area_size(170)
                .build_cartesian_2d((x0..x1).log_scale(), 0.0..n)
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(sets.len() * 2 + 1)
                .y_label_formatter(&|y| {
                    let i = (n - y - 0.5).round();
                    if ((n - y - 0.5) - i).abs() > 0.05 || i < 0.0 || i >= n {
                        return String::new();
                    }
                    sets[i as usize].clone()
                })
                .x_desc(p.x_desc.as_str())
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14))
                .draw()
                .map_err(err)?;
            let k = p.series.len() as f64;
            for (si, s) in p.series.iter().enumerate() {
                let color = color_for(&s.label, si);
                for (i, v) in s.values.iter().enumerate() {
                    let top = n - i as f64 - 0.08 - 0.84 * si as f64 / k;
                    let bottom = top - 0.84 / k;
                    if let Some(v) = v {
                        chart
                            .draw_series([Rectangle::new(
                                [(x0, bottom), (*v, top)],
                                color.filled(),
                            )])
                            .map_err(err)?;
                        chart
                            .draw_series([Text::new(
                                format!("{v:.1}"),
                                (*v * 1.02, top - 0.01),
                                ("sans-serif", 11),
                            )])
                            .map_err(err)?;
                    }
                }
                let label = if s.values.iter().all(Option::is_none) {
                    format!("{} (not measured)", s.label)
                } else {
                    s.label.clone()
                };
                chart
                    .draw_series([Rectangle::new([(x0, 0.0), (x0, 0.0)], color.filled())])
                    .map_err(err)?
                    .label(label)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                    });
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(err)?;
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
