//! The skinning paths: named combinations of a palette storage, an encoding
//! and a stage (how to add one: `ARCHITECTURE.md`, "Where to add things").
//! Adding a storage or an encoding adds its paths here without other
//! changes; samples and tests loop over [`paths`].

use std::sync::OnceLock;

use super::encoding::{Encoding, ENCODINGS};
use super::storage::{Storage, STORAGES};
use crate::gpu::{vk, Device};

/// Where the skinning arithmetic runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The vertex shader blends the palette as it draws.
    Vertex,
    /// A compute pass skins every instance into a vertex buffer first; a
    /// plain pipeline draws it (as many passes as the frame needs).
    Compute,
    /// The CPU job writes skinned vertices into the frame's mapped vertex
    /// buffer (seed 003's software fallback); the plain pipeline draws them.
    Cpu,
}

impl Stage {
    /// The stage's name, the last part of the compute and CPU paths' names.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::Compute => "compute",
            Stage::Cpu => "cpu",
        }
    }
}

/// One named path.
#[derive(Clone, Copy)]
pub struct PathDesc {
    /// "4x3-ubo", "dq-texel", "qt-compute", "dq-scale-cpu", ...
    pub name: &'static str,
    /// How bones are written and blended.
    pub encoding: &'static dyn Encoding,
    /// The palette storage the GPU reads (`None` for the CPU stage).
    pub storage: Option<&'static dyn Storage>,
    /// Where the skinning runs.
    pub stage: Stage,
}

impl std::fmt::Debug for PathDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for PathDesc {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl PathDesc {
    /// The CPU job this path is tested against.
    pub fn reference(&self) -> &'static str {
        self.encoding.reference()
    }

    /// Bones one draw can address on `device` (`None`: no limit, the CPU
    /// stage). A mesh whose palette is larger is partitioned (push, ubo) or
    /// refused.
    pub fn capacity(&self, device: &Device) -> Option<usize> {
        self.capacity_for(device.limits())
    }

    /// [`PathDesc::capacity`] on a device with `limits`.
    pub fn capacity_for(&self, limits: &vk::PhysicalDeviceLimits) -> Option<usize> {
        let s = self.storage?;
        Some((s.window_vec4s(limits) / self.encoding.vec4s_per_bone() as u64) as usize)
    }

    /// Whether meshes larger than [`PathDesc::capacity`] are split into
    /// partitions (windowed storages in the vertex stage) rather than
    /// refused.
    pub fn partitions(&self) -> bool {
        self.stage == Stage::Vertex && self.storage.is_some_and(|s| s.windowed())
    }

    /// What bounds one draw's palette on a device with `limits`, in words
    /// (the storage's device limit; "no limit" on the CPU stage).
    pub fn limit_text(&self, limits: &vk::PhysicalDeviceLimits) -> String {
        self.storage
            .map_or_else(|| "no limit".into(), |s| s.limit_text(limits))
    }

    /// What the path cannot serve, in words, on a device with `limits`.
    pub fn limitation(&self, limits: &vk::PhysicalDeviceLimits) -> String {
        let lossy = self.encoding.lossy().unwrap_or("");
        let cap = match (self.capacity_for(limits), self.partitions()) {
            (None, _) => String::new(),
            (Some(c), true) => format!("a triangle needing more than {c} bones"),
            (Some(c), false) => format!("more than {c} bones per frame"),
        };
        match (lossy.is_empty(), cap.is_empty()) {
            (true, true) => "-".into(),
            (false, true) => lossy.into(),
            (true, false) => cap,
            (false, false) => format!("{cap}; {lossy}"),
        }
    }
}

/// Every path: each encoding on each storage in the vertex stage, then each
/// encoding in the compute stage on each storage that serves it, then each
/// encoding on the CPU. This is the name table: `{encoding}-{storage}`,
/// `{encoding}-compute` (storage-buffer palettes, the first storage that
/// serves compute), `{encoding}-{storage}-compute` (any other), and
/// `{encoding}-cpu`.
pub fn paths() -> &'static [PathDesc] {
    static PATHS: OnceLock<Vec<PathDesc>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let mut v = Vec::new();
        for &e in ENCODINGS {
            for &s in STORAGES {
                v.push(PathDesc {
                    name: leak(format!("{}-{}", e.name(), s.name())),
                    encoding: e,
                    storage: Some(s),
                    stage: Stage::Vertex,
                });
            }
        }
        let compute: Vec<&'static dyn Storage> = STORAGES
            .iter()
            .copied()
            .filter(|s| s.serves_compute())
            .collect();
        for (i, &s) in compute.iter().enumerate() {
            for &e in ENCODINGS {
                let name = if i == 0 {
                    format!("{}-compute", e.name())
                } else {
                    format!("{}-{}-compute", e.name(), s.name())
                };
                v.push(PathDesc {
                    name: leak(name),
                    encoding: e,
                    storage: Some(s),
                    stage: Stage::Compute,
                });
            }
        }
        for &e in ENCODINGS {
            v.push(PathDesc {
                name: leak(format!("{}-cpu", e.name())),
                encoding: e,
                storage: None,
                stage: Stage::Cpu,
            });
        }
        v
    })
}

/// The path called `name`.
pub fn find(name: &str) -> Option<&'static PathDesc> {
    paths().iter().find(|p| p.name == name)
}

/// Every path name, comma-separated (for error messages).
pub fn names() -> String {
    paths()
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The best path for a mesh of `bones` palette entries drawn `instances`
/// times per frame on `device`, and why. 4x3 is exact for every skinning
/// matrix (scale and shear included) and the cheapest to blend; a uniform
/// buffer is the fastest read where the palette fits one window; crowds and
/// skeletons beyond the window go to a storage buffer, which needs no
/// partitioning. The reason is also logged (`log::info!`).
pub fn auto(device: &Device, bones: usize, instances: usize) -> (&'static PathDesc, String) {
    let pick = |name| find(name).unwrap_or(&paths()[0]);
    let ubo = pick("4x3-ubo");
    let cap = ubo.capacity(device).unwrap_or(0);
    if instances <= 1 && bones <= cap {
        let why = format!(
            "4x3-ubo: {bones} bones fit one uniform-buffer window of {cap}, no partitioning; 4x3 keeps any scale"
        );
        log::info!("skinning path (auto): {why}");
        return (ubo, why);
    }
    let ssbo = pick("4x3-ssbo");
    let why = if instances > 1 {
        format!("4x3-ssbo: {instances} instances share one instanced draw per mesh; 4x3 keeps any scale")
    } else {
        format!("4x3-ssbo: {bones} bones exceed the uniform-buffer window of {cap}; a storage buffer needs no partitioning")
    };
    log::info!("skinning path (auto): {why}");
    (ssbo, why)
}
