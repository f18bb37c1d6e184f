//! Every skinned asset in the shared folder rendered headless on every path
//! that can serve it: each render covers at least 1% of the image, and the
//! silhouettes agree across paths (intersection over union at least 0.98).
//! Paths are compared with the same encoding through its storage-buffer
//! path, and across encodings where the encodings keep the same matrices:
//! quaternion + translation with 4x3, rigid with two-phase dual
//! quaternions. A quaternion or rigid dual-quaternion path cannot serve a
//! pose with scale (its palette report says so): it is refused there, as
//! is a push palette too small for a triangle's bones.
//! Linear blending and dual quaternions are not compared with each other:
//! where joints twist they differ by design.
//!
//! `VKSKIN_GALLERY_OUT=DIR` also writes each render as a PNG.
#![cfg(feature = "gpu")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use glam::Affine3A;
use vkskin::anim::{PaletteHierarchy, PlaybackMode};
use vkskin::assets::{load, Model};
use vkskin::gpu::{vk, Device, GpuError};
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget};
use vkskin::skin::{
    paths, FrameSets, FrameUniforms, PathDesc, PreparedMesh, SkinPath, SkinPathConfig,
};
use vkskin_tests::assets_dir;
use vkskin_tests::gpu::GpuTest;

const SIZE: u32 = 128;

/// The skinned files INDEX.md lists: glTF rows with skins, .x rows with
/// bones (the deliberately malformed file aside).
fn skinned_assets(dir: &Path) -> Vec<PathBuf> {
    let index = std::fs::read_to_string(dir.join("INDEX.md")).expect("INDEX.md");
    let mut out = Vec::new();
    for line in index.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // The first `quoted` name in the cell (some add their .bin files).
        let Some(file) = cells[1].split('`').nth(1) else {
            continue;
        };
        let count = |k: usize| {
            cells
                .get(k)
                .and_then(|c| c.trim_matches('*').split_whitespace().next())
                .and_then(|c| c.parse::<usize>().ok())
                .unwrap_or(0)
        };
        let skinned = if file.starts_with("gltf/") {
            count(4) > 0
        } else {
            file.to_ascii_lowercase().ends_with(".x") && count(5) > 0
        };
        if skinned && !file.contains("malformed") {
            out.push(dir.join(file));
        }
    }
    out
}

/// Each mesh's skinning matrices at 40% of the first clip (or the bind pose).
fn palettes(model: &Model) -> Vec<Vec<Affine3A>> {
    let clip = model.clips.first();
    let t = clip.map_or(0.0, |c| 0.4 * c.duration());
    let locals = model.pose(clip, t, PlaybackMode::Clamp).unwrap();
    model.skin_matrices(&locals).unwrap()
}

struct Rig {
    path: SkinPath,
    frames: FramesInFlight,
    sets: FrameSets,
    target: OffscreenTarget,
}

impl Rig {
    fn new(device: &std::sync::Arc<Device>, desc: &'static PathDesc) -> Result<Self, GpuError> {
        let cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            1,
        );
        Ok(Self {
            path: SkinPath::new(device, desc, cfg)?,
            frames: FramesInFlight::new(device, 1)?,
            sets: FrameSets::new(device, 1)?,
            target: OffscreenTarget::new(device, SIZE, SIZE)?,
        })
    }

    /// The silhouette of `model` (every mesh) or why the path cannot serve
    /// it: a push palette too small for a triangle, or an encoding that
    /// drops the pose's scale.
    fn silhouette(&mut self, model: &Model, camera: &Camera) -> Result<Vec<u8>, String> {
        let meshes: Vec<(usize, PreparedMesh)> = model
            .meshes
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let h = PaletteHierarchy::new(&model.skins[m.skin], &model.skeleton)
                    .map_err(|e| e.to_string())?;
                self.path
                    .prepare(m, &h)
                    .map(|p| (k, p))
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()?;
        let skins = palettes(model);
        let frame = self.frames.begin().unwrap();
        self.path.begin_frame(frame.index).unwrap();
        let mut batches = Vec::new();
        let mut lossy = None;
        for (k, prepared) in &meshes {
            let mut w = self.path.batch(frame.index, prepared, 1).unwrap();
            let skin = &skins[model.meshes[*k].skin];
            let report = w
                .write_all(|_| (skin.as_slice(), Affine3A::IDENTITY, [1.0; 4]))
                .unwrap();
            batches.push(w.batch());
            if !report.is_exact() {
                lossy = Some(format!(
                    "the {} palette drops the scale of {} bone(s) (deviation {:.3})",
                    self.path.desc().encoding.name(),
                    report.lossy.len(),
                    report.max_deviation
                ));
            }
        }
        self.sets
            .write(
                frame.index,
                &FrameUniforms {
                    view_proj: camera.view_proj(1.0).to_cols_array_2d(),
                    color: [1.0; 4],
                    light: [0.0, 0.0, 1.0, 0.0],
                },
            )
            .unwrap();
        let list: Vec<_> = batches.iter().zip(meshes.iter().map(|(_, p)| p)).collect();
        self.path.prepass(frame.cmd, frame.index, &list).unwrap();
        self.target.begin(frame.cmd, [0.0, 0.0, 0.0, 1.0]);
        for (b, p) in &list {
            self.path
                .record_draw(
                    frame.cmd,
                    frame.index,
                    &self.sets,
                    b,
                    p,
                    vk::PolygonMode::FILL,
                    None,
                )
                .unwrap();
        }
        self.target.end_and_copy(frame.cmd);
        self.path.finish(frame.cmd, frame.index).unwrap();
        self.frames.submit(&frame, None, None).unwrap();
        self.frames.wait(&frame).unwrap();
        match lossy {
            Some(why) => Err(why),
            None => Ok(self.target.read_rgba().unwrap()),
        }
    }
}

fn mask(rgba: &[u8]) -> Vec<bool> {
    rgba.chunks_exact(4).map(|p| p[..3] != [0, 0, 0]).collect()
}

fn iou(a: &[bool], b: &[bool]) -> f64 {
    let inter = a.iter().zip(b).filter(|(x, y)| **x && **y).count();
    let union = a.iter().zip(b).filter(|(x, y)| **x || **y).count();
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

#[test]
fn every_skinned_asset_on_every_path_that_serves_it_has_one_silhouette() {
    let Some(dir) = assets_dir() else { return };
    let files = skinned_assets(&dir);
    assert!(
        files.len() >= 30,
        "INDEX.md lists {} skinned files",
        files.len()
    );
    let models: Vec<(String, Model, Camera)> = files
        .iter()
        .map(|f| {
            let model = load(f).unwrap_or_else(|e| panic!("{e}"));
            let b = model.animated_bounds(8).unwrap();
            let camera = Camera::framing(b.min, b.max, 0.5, 0.2, 45f32.to_radians(), 1.0);
            let name = f.strip_prefix(&dir).unwrap().display().to_string();
            (name, model, camera)
        })
        .collect();
    let out_dir = std::env::var_os("VKSKIN_GALLERY_OUT").map(PathBuf::from);
    let gpu = GpuTest::new();
    // masks[asset][path]
    let mut masks: Vec<BTreeMap<&'static str, Vec<bool>>> = vec![BTreeMap::new(); models.len()];
    let mut refused = Vec::new();
    for desc in paths() {
        let mut rig = Rig::new(&gpu.device, desc).unwrap();
        for (i, (name, model, camera)) in models.iter().enumerate() {
            match rig.silhouette(model, camera) {
                Ok(rgba) => {
                    if let Some(d) = &out_dir {
                        let file = format!("{}-{}.png", name.replace(['/', '.'], "_"), desc.name);
                        std::fs::create_dir_all(d).unwrap();
                        vkskin::render::write_png(&d.join(file), SIZE, SIZE, &rgba).unwrap();
                    }
                    let m = mask(&rgba);
                    let cover = m.iter().filter(|&&x| x).count() as f64 / m.len() as f64;
                    assert!(cover >= 0.01, "{name} on {}: covers {cover:.4}", desc.name);
                    masks[i].insert(desc.name, m);
                }
                Err(why) => {
                    // Only a push palette too small for a triangle, or an
                    // encoding without scale, may refuse.
                    assert!(
                        desc.name.ends_with("-push") || why.contains("drops the scale"),
                        "{name} on {}: {why}",
                        desc.name
                    );
                    refused.push(format!("{name} on {}: {why}", desc.name));
                }
            }
        }
        rig.frames.wait_all().unwrap();
    }
    let mut worst = (f64::INFINITY, String::new());
    let mut compared = 0;
    for (i, (name, _, _)) in models.iter().enumerate() {
        let m = &masks[i];
        let mut pairs: Vec<(&str, String)> = Vec::new();
        for desc in paths() {
            let own = format!("{}-ssbo", desc.encoding.name());
            if desc.name != own {
                pairs.push((desc.name, own));
            }
        }
        // Across encodings that keep the same matrices (lossy ones refused).
        pairs.push(("qt-ssbo", "4x3-ssbo".into()));
        pairs.push(("dq-ssbo", "dq-scale-ssbo".into()));
        for (a, b) in pairs {
            let (Some(ma), Some(mb)) = (m.get(a), m.get(b.as_str())) else {
                continue;
            };
            let v = iou(ma, mb);
            compared += 1;
            if v < worst.0 {
                worst = (v, format!("{name}: {a} vs {b}"));
            }
            assert!(v >= 0.98, "{name}: {a} vs {b}: IoU {v:.4}");
        }
    }
    assert!(compared > 500, "only {compared} pairs compared");
    eprintln!(
        "{} assets x {} paths; {} refusals:\n  {}\n{compared} silhouette pairs compared, lowest IoU {:.4} ({})",
        models.len(),
        paths().len(),
        refused.len(),
        refused.join("\n  "),
        worst.0,
        worst.1
    );
    gpu.finish();
}
