//! The chart: skinned vertices per second against instances, log-log, a
//! panel per encoding and a line per storage or stage, drawn with plotters
//! into memory and written with vkskin's PNG writer.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::report::verts_per_s;
use crate::{Case, Outcome, Setup};

/// Where the palette lives or where the skinning runs: a line each.
const KINDS: [(&str, RGBColor); 8] = [
    ("push", RGBColor(148, 103, 189)),
    ("ubo", RGBColor(31, 119, 180)),
    ("texel", RGBColor(44, 160, 44)),
    ("ssbo", RGBColor(255, 127, 14)),
    ("bda", RGBColor(23, 190, 207)),
    ("compute", RGBColor(214, 39, 40)),
    ("bda-compute", RGBColor(227, 119, 194)),
    ("cpu", RGBColor(110, 110, 110)),
];

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 960;

fn err(e: impl std::fmt::Display) -> String {
    format!("chart: {e}")
}

/// Draws the chart of `cases` to `png`, with text in the TrueType `font`.
pub fn draw(png: &Path, font: &Path, setup: &Setup, cases: &[Case]) -> Result<(), String> {
    let bytes = std::fs::read(font).map_err(|e| {
        format!(
            "chart font {}: {e} (install Debian's fonts-dejavu-core, or pass --font FILE)",
            font.display()
        )
    })?;
    // plotters keeps registered fonts for the life of the program.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).map_err(|_| {
        format!(
            "chart font {}: not a TrueType/OpenType font",
            font.display()
        )
    })?;

    let mut encodings: Vec<&'static str> = Vec::new();
    for c in cases {
        if !encodings.contains(&c.path.encoding.name()) {
            encodings.push(c.path.encoding.name());
        }
    }
    let points: Vec<(f64, f64)> = cases
        .iter()
        .filter_map(|c| Some((c.instances as f64, verts_per_s(c)?)))
        .collect();
    let (x_max, y_min, y_max) = ranges(&points, cases);

    let mut rgb = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let title = format!(
            "Skinned vertices per second (GPU timestamps) on {}: {}-vertex, {}-joint character",
            setup.device, setup.vertices, setup.joints
        );
        let body = root.titled(&title, ("sans-serif", 22)).map_err(err)?;
        let columns = if encodings.len() > 1 { 2 } else { 1 };
        let rows = encodings.len().div_ceil(columns).max(1);
        let panels = body.split_evenly((rows, columns));
        for (enc, area) in encodings.iter().zip(panels.iter()) {
            let mut chart = ChartBuilder::on(area)
                .caption(format!("encoding {enc}"), ("sans-serif", 20))
                .margin(14)
                .x_label_area_size(44)
                .y_label_area_size(72)
                .build_cartesian_2d((0.7..x_max).log_scale(), (y_min..y_max).log_scale())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("instances")
                .y_desc("skinned vertices / s")
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0e}"))
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(err)?;
            for (kind, color) in KINDS {
                let Some(name) = cases
                    .iter()
                    .find(|c| c.path.encoding.name() == *enc && kind_of(c) == kind)
                    .map(|c| c.path.name)
                else {
                    continue;
                };
                let line: Vec<(f64, f64)> = cases
                    .iter()
                    .filter(|c| c.path.name == name)
                    .filter_map(|c| Some((c.instances as f64, verts_per_s(c)?)))
                    .collect();
                // Counts without a point, and why (the first reason).
                let unmeasured: Vec<&Case> = cases
                    .iter()
                    .filter(|c| c.path.name == name && verts_per_s(c).is_none())
                    .collect();
                let why = unmeasured.first().map(|c| match c.outcome {
                    Outcome::Limit(_) => "limit",
                    Outcome::Skipped(_) => "skipped",
                    Outcome::Measured(_) => "no timestamps",
                    Outcome::Error(_) => "error",
                });
                let label = match why {
                    None => name.to_string(),
                    Some(why) if line.is_empty() => format!("{name}: none ({why})"),
                    Some(why) => format!(
                        "{name} (not at {}: {why})",
                        unmeasured
                            .iter()
                            .map(|c| c.instances.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                let style = color.stroke_width(2);
                chart
                    .draw_series(LineSeries::new(line.iter().copied(), style))
                    .map_err(err)?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
                chart
                    .draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))
                    .map_err(err)?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.5))
                .label_font(("sans-serif", 14))
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    let rgba: Vec<u8> = rgb
        .chunks_exact(3)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    vkskin::render::write_png(png, WIDTH, HEIGHT, &rgba).map_err(|e| e.to_string())
}

/// The path's name after its encoding: its storage for the vertex stage,
/// else its stage (with the storage where the stage has several).
fn kind_of(c: &Case) -> &'static str {
    let name = c.path.name;
    name.get(c.path.encoding.name().len() + 1..).unwrap_or(name)
}

/// The x axis's end past the largest count, and the y axis's whole
/// decades around every measured rate, with one more decade below for the
/// legend.
fn ranges(points: &[(f64, f64)], cases: &[Case]) -> (f64, f64, f64) {
    let x_max = cases.iter().map(|c| c.instances).max().unwrap_or(1) as f64 * 1.5;
    let lo = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.1).fold(0.0, f64::max);
    if !(lo.is_finite() && hi > 0.0) {
        return (x_max, 1e5, 1e10);
    }
    let y_min = 10f64.powf(lo.log10().floor() - 1.0);
    let y_max = 10f64.powf(hi.log10().ceil()).max(y_min * 10.0);
    (x_max, y_min, y_max)
}
