//! The bench's CSV and Markdown tables.

use std::fmt::Write;

use crate::{AnimationRow, Case, Outcome, Setup};

/// The path every GPU time is compared with first: the original
/// vertex-shader 4x3 palette in a uniform buffer.
pub const VERTEX_BASELINE: &str = "4x3-ubo";
/// And second: the CPU stage (skinned on the CPU, drawn as plain vertices).
pub const CPU_BASELINE: &str = "4x3-cpu";

/// Skinned vertices per GPU second, where measured.
pub fn verts_per_s(case: &Case) -> Option<f64> {
    let m = case.measured()?;
    let g = m.gpu_ms.filter(|g| *g > 0.0)?;
    Some(case.instances as f64 * case.vertices as f64 / (g * 1e-3))
}

/// `1.23e9` as "1.23 G".
pub fn si(v: f64) -> String {
    let (scale, unit) = if v >= 1e9 {
        (1e9, "G")
    } else if v >= 1e6 {
        (1e6, "M")
    } else if v >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{:.3} {unit}", v / scale)
}

fn status(o: &Outcome) -> (&'static str, &str) {
    match o {
        Outcome::Measured(_) => ("ok", ""),
        Outcome::Limit(m) => ("limit", m),
        Outcome::Skipped(m) => ("skipped", m),
        Outcome::Error(m) => ("error", m),
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.4}"))
}

/// One row per case.
pub fn csv(setup: &Setup, cases: &[Case], animation: &[AnimationRow]) -> String {
    let mut out = String::from(
        "path,storage,encoding,stage,instances,vertices,joints,status,frames,gpu_ms,verts_per_s,anim_1thread_ms,anim_all_threads_ms,threads,upload_ms,frame_wall_ms,device,cpu,message\n",
    );
    // Per path, anim_1thread_ms stays empty: the all-threads run only (the
    // animation-only rows below have both).
    for c in cases {
        let (st, msg) = status(&c.outcome);
        let m = c.measured();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},,{},{},{},{},{},{},{}",
            c.path.name,
            c.path.storage.map_or("none", |s| s.name()),
            c.path.encoding.name(),
            c.path.stage.name(),
            c.instances,
            setup.vertices,
            setup.joints,
            st,
            m.map_or(0, |m| m.frames),
            opt(m.and_then(|m| m.gpu_ms)),
            verts_per_s(c).map_or(String::new(), |v| format!("{v:.4e}")),
            opt(m.map(|m| m.anim_all_ms)),
            setup.threads,
            opt(m.map(|m| m.upload_ms)),
            opt(m.map(|m| m.wall_ms)),
            quote(&setup.device),
            quote(&setup.cpu),
            quote(msg),
        );
    }
    // The animation pass: no path, no GPU.
    for a in animation {
        let _ = writeln!(
            out,
            "animation-only,none,none,none,{},{},{},ok,{},,,{:.4},{:.4},{},,,{},{},",
            a.instances,
            setup.vertices,
            setup.joints,
            a.frames,
            a.one_thread_ms,
            a.all_threads_ms,
            setup.threads,
            quote(&setup.device),
            quote(&setup.cpu),
        );
    }
    out
}

fn find<'a>(cases: &'a [Case], path: &str, n: usize) -> Option<&'a Case> {
    cases
        .iter()
        .find(|c| c.path.name == path && c.instances == n)
}

fn gpu(cases: &[Case], path: &str, n: usize) -> Option<f64> {
    find(cases, path, n)?.measured()?.gpu_ms
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "n/a".into(),
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.2}"))
}

/// The printed report: per path and count, GPU ms and skinned vertices
/// per second; ratios at 256 and 1,024 instances; CPU animation; the
/// 60 fps check at the largest count.
pub fn markdown(
    setup: &Setup,
    cases: &[Case],
    animation: &[AnimationRow],
    counts: &[usize],
) -> String {
    let mut out = String::new();
    let mut notes: Vec<String> = Vec::new();
    let mut note = |text: &str| -> usize {
        match notes.iter().position(|n| n == text) {
            Some(i) => i + 1,
            None => {
                notes.push(text.to_string());
                notes.len()
            }
        }
    };
    let mut paths: Vec<&'static str> = Vec::new();
    for c in cases {
        if !paths.contains(&c.path.name) {
            paths.push(c.path.name);
        }
    }
    let _ = writeln!(
        out,
        "Device: {} (CPU: {}, {} threads). Character: {} vertices, {} joints, 4 influences. Target {}x{} with depth. Medians of up to {} timed frames per case.\n",
        setup.device, setup.cpu, setup.threads, setup.vertices, setup.joints, setup.size, setup.size, setup.frames
    );
    let _ = writeln!(
        out,
        "GPU ms per frame (timestamps around the path's prepass and draws) and skinned vertices per second (for the `*-cpu` paths the GPU only draws what the CPU skinned; their skinning is in the upload figures below):\n"
    );
    let _ = write!(out, "| path |");
    for n in counts {
        let _ = write!(out, " {n} |");
    }
    let _ = write!(out, "\n|---|");
    for _ in counts {
        let _ = write!(out, "---|");
    }
    out.push('\n');
    for p in &paths {
        let _ = write!(out, "| `{p}` |");
        for &n in counts {
            let cell = match find(cases, p, n).map(|c| (c, &c.outcome)) {
                None => "-".to_string(),
                Some((c, Outcome::Measured(m))) => match m.gpu_ms {
                    Some(g) => format!("{g:.2} ms, {}/s", verts_per_s(c).map_or("n/a".into(), si)),
                    None => "no timestamps".into(),
                },
                Some((_, Outcome::Limit(m))) => format!("limit [{}]", note(m)),
                Some((_, Outcome::Skipped(m))) => format!("skipped [{}]", note(m)),
                Some((_, Outcome::Error(m))) => format!("error [{}]", note(m)),
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    if !notes.is_empty() {
        out.push('\n');
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(out, "[{}] {n}  ", i + 1);
        }
    }
    // Ratios at 256 and 1,024 (those of them that were run).
    let at: Vec<usize> = [256, 1024]
        .into_iter()
        .filter(|n| counts.contains(n))
        .collect();
    if !at.is_empty() {
        let _ = writeln!(
            out,
            "\nGPU time against `{VERTEX_BASELINE}` (vertex shader, 4x3 palette) and `{CPU_BASELINE}` (CPU stage); the last column compares upload + GPU, where the CPU stage's upload is its CPU skinning:\n"
        );
        let _ = write!(out, "| path |");
        for n in &at {
            let _ = write!(
                out,
                " GPU ms @{n} | / {VERTEX_BASELINE} | / {CPU_BASELINE} | upload + GPU / {CPU_BASELINE}'s @{n} |"
            );
        }
        let _ = write!(out, "\n|---|");
        for _ in &at {
            let _ = write!(out, "---|---|---|---|");
        }
        out.push('\n');
        for p in &paths {
            let _ = write!(out, "| `{p}` |");
            for &n in &at {
                let g = gpu(cases, p, n);
                let total = |path: &str| {
                    let m = find(cases, path, n)?.measured()?;
                    Some(m.upload_ms + m.gpu_ms?)
                };
                let _ = write!(
                    out,
                    " {} | {} | {} | {} |",
                    ms(g),
                    ratio(g, gpu(cases, VERTEX_BASELINE, n)),
                    ratio(g, gpu(cases, CPU_BASELINE, n)),
                    ratio(total(p), total(CPU_BASELINE))
                );
            }
            out.push('\n');
        }
    }
    let _ = writeln!(
        out,
        "\nCPU animation alone (sample + local-to-model + skinning matrices into a sink that keeps nothing; medians of {} frames), and upload (animating into the path's mapped storage, less animating alone; median over the measured paths, min-max):\n",
        animation.first().map_or(0, |a| a.frames)
    );
    let _ = writeln!(
        out,
        "| instances | 1 thread ms | {} threads ms | speedup | upload ms |\n|---|---|---|---|---|",
        setup.threads
    );
    for &n in counts {
        let upload = {
            let u: Vec<f64> = cases
                .iter()
                .filter(|c| c.instances == n)
                .filter_map(Case::measured)
                .map(|m| m.upload_ms)
                .collect();
            if u.is_empty() {
                "n/a".to_string()
            } else {
                let lo = u.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = u.iter().copied().fold(0.0, f64::max);
                format!("{:.2} ({lo:.2}-{hi:.2})", crate::median(u))
            }
        };
        match animation.iter().find(|a| a.instances == n) {
            Some(a) => {
                let _ = writeln!(
                    out,
                    "| {n} | {:.2} | {:.2} | {:.2}x | {upload} |",
                    a.one_thread_ms,
                    a.all_threads_ms,
                    a.one_thread_ms / a.all_threads_ms
                );
            }
            None => {
                let _ = writeln!(out, "| {n} | n/a | n/a | n/a | {upload} |");
            }
        }
    }
    if let Some(&top) = counts.iter().max() {
        let best = cases
            .iter()
            .filter(|c| c.instances == top)
            .filter_map(|c| {
                let m = c.measured()?;
                Some((c.path.name, m.anim_all_ms, m.upload_ms, m.gpu_ms?))
            })
            .min_by(|a, b| (a.1 + a.2 + a.3).total_cmp(&(b.1 + b.2 + b.3)));
        match best {
            Some((p, a, u, g)) => {
                let total = a + u + g;
                let _ = writeln!(
                    out,
                    "\n{top} instances, fastest path `{p}`: animation {a:.2} + upload {u:.2} + GPU {g:.2} = {total:.2} ms a frame ({:.1} fps; 60 fps needs 16.7 ms).",
                    1e3 / total
                );
            }
            None => {
                let _ = writeln!(out, "\n{top} instances: no path was measured.");
            }
        }
    }
    out
}
