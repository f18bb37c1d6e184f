//! Results and their markdown tables.

use std::fmt::Write;

/// One way of storing a clip set, measured.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was measured ("ozz, 1 mm at 10 cm", "vkskin Clip", ...).
    pub method: String,
    /// `None`: not measured (the text says why, in `note`).
    pub bytes: Option<u64>,
    /// Worst and 99th-percentile error, meters (file units); `None` for the
    /// reference itself.
    pub worst: Option<f32>,
    pub p99: Option<f32>,
    /// Mean over the set's clips of each clip's ns per joint.
    pub ns_cached: Option<f64>,
    pub ns_seek: Option<f64>,
    pub note: String,
}

impl Row {
    pub fn pending(method: &str, note: &str) -> Self {
        Self {
            method: method.into(),
            bytes: None,
            worst: None,
            p99: None,
            ns_cached: None,
            ns_seek: None,
            note: note.into(),
        }
    }
}

/// One clip set's rows.
#[derive(Clone, Debug)]
pub struct SetResult {
    pub name: String,
    pub joints: usize,
    pub clips: Vec<(String, f32)>,
    pub rows: Vec<Row>,
}

impl SetResult {
    pub fn seconds(&self) -> f32 {
        self.clips.iter().map(|c| c.1).sum()
    }
    /// Bytes per joint per second of animation of a row.
    pub fn per_joint_second(&self, row: &Row) -> Option<f64> {
        let s = self.seconds() as f64;
        row.bytes
            .filter(|_| s > 0.0)
            .map(|b| b as f64 / (self.joints as f64 * s))
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".into(), f)
}

/// The markdown tables: one per set, then one line per set for the
/// default tolerance's bytes side by side.
pub fn markdown(sets: &[SetResult]) -> String {
    let mut s = String::new();
    for set in sets {
        let clips: Vec<String> = set
            .clips
            .iter()
            .map(|(n, d)| format!("{} ({d:.2} s)", if n.is_empty() { "unnamed" } else { n }))
            .collect();
        let _ = writeln!(
            s,
            "\n#### {}: {} joints, {} clip{} ({:.2} s): {}\n",
            set.name,
            set.joints,
            set.clips.len(),
            if set.clips.len() == 1 { "" } else { "s" },
            set.seconds(),
            clips.join(", ")
        );
        let _ = writeln!(
            s,
            "| clips stored as | bytes | B/joint | B/joint/s | worst error (mm) | p99 error (mm) | ns/joint cached | ns/joint random seek |"
        );
        let _ = writeln!(
            s,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for r in &set.rows {
            if r.bytes.is_none() {
                let _ = writeln!(s, "| {} | {} | | | | | | |", r.method, r.note);
                continue;
            }
            let mm = |e: Option<f32>| match e {
                Some(e) => format!("{:.4}", e * 1000.0),
                None => "0 (reference)".into(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                r.method,
                opt(r.bytes, |b| b.to_string()),
                opt(r.bytes, |b| format!("{:.0}", b as f64 / set.joints as f64)),
                opt(set.per_joint_second(r), |b| format!("{b:.0}")),
                mm(r.worst),
                mm(r.p99),
                opt(r.ns_cached, |v| format!("{v:.2}")),
                opt(r.ns_seek, |v| format!("{v:.2}")),
            );
        }
    }
    s
}

/// CSV of every row, for other tools.
pub fn csv(sets: &[SetResult]) -> String {
    let mut s = String::from(
        "set,joints,seconds,method,bytes,bytes_per_joint_second,worst_m,p99_m,ns_cached,ns_seek\n",
    );
    for set in sets {
        for r in &set.rows {
            let f = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v}"));
            let _ = writeln!(
                s,
                "\"{}\",{},{},\"{}\",{},{},{},{},{},{}",
                set.name,
                set.joints,
                set.seconds(),
                r.method,
                f(r.bytes.map(|b| b as f64)),
                f(set.per_joint_second(r)),
                f(r.worst.map(f64::from)),
                f(r.p99.map(f64::from)),
                f(r.ns_cached),
                f(r.ns_seek),
            );
        }
    }
    s
}
