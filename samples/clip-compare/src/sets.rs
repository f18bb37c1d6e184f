//! The clip sets compared: every animation of the shared assets, one set
//! per file, and the anim bench's clips (engine/benches/anim.rs's
//! `skeleton` and `clip`, rebuilt the same way: same shapes, bind pose,
//! keys, seeds and random generator).

use std::path::Path;

use rand::{Rng, SeedableRng};
use vkskin::anim::{Clip, Interpolation, RawClip, RawJointTrack, RawTrack, Skeleton, Transform};
use vkskin::glam::{EulerRot, Quat, Vec3};

/// Clips of one skeleton, compared together.
pub struct ClipSet {
    pub name: String,
    pub skeleton: Skeleton,
    /// Each clip with its exact key times where known (see `export::key_times`).
    pub clips: Vec<(Clip, Option<Vec<f32>>)>,
    /// Metres per model unit: tolerances are converted to model units and
    /// errors back to metres with it (the same reading of each file's
    /// units as tests/tests/compressed_clips.rs).
    pub metres: f32,
}

/// Metres per unit of the asset files that are not in metres: Fox's
/// skeleton is in centimetres; the .x files have no unit and tiny (448
/// units tall) is read in centimetres (docs/clip-compression.md).
const UNITS: [(&str, f32); 3] = [
    ("gltf/Fox.glb", 0.01),
    ("x/tiny_4anim.x", 0.01),
    ("x/tiny.x", 0.01),
];

/// The shared assets' animated files, relative to the assets folder.
pub const ASSET_FILES: [&str; 8] = [
    "gltf/CesiumMan.glb",
    "gltf/Fox.glb",
    "gltf/RiggedFigure.glb",
    "x/tiny_4anim.x",
    "x/Testwuson.X",
    "x/BCN_Epileptic.X",
    "x/bat.x",
    "x/tiny.x",
];

/// One set per asset file, all of its clips.
pub fn asset_sets(assets: &Path) -> Result<Vec<ClipSet>, String> {
    ASSET_FILES
        .iter()
        .map(|f| {
            let path = assets.join(f);
            let model =
                vkskin::assets::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if model.clips.is_empty() {
                return Err(format!("{}: no clips", path.display()));
            }
            let name = Path::new(f)
                .file_name()
                .map_or_else(|| f.to_string(), |n| n.to_string_lossy().into_owned());
            Ok(ClipSet {
                name,
                skeleton: model.skeleton,
                clips: model.clips.into_iter().map(|c| (c, None)).collect(),
                metres: UNITS.iter().find(|u| u.0 == *f).map_or(1.0, |u| u.1),
            })
        })
        .collect()
}

const KEYS: usize = 30;

#[derive(Clone, Copy)]
enum Shape {
    Tree,
    Chain,
}

/// anim.rs `skeleton`.
fn skeleton(shape: Shape, n: usize) -> Result<Skeleton, String> {
    let parents: Vec<Option<usize>> = (0..n)
        .map(|i| match (shape, i) {
            (_, 0) => None,
            (Shape::Tree, i) => Some((i - 1) / 2),
            (Shape::Chain, i) => Some(i - 1),
        })
        .collect();
    let names = (0..n).map(|i| format!("joint{i}")).collect();
    let bind = (0..n)
        .map(|i| {
            Transform::from_translation_rotation(
                Vec3::new(0.0, 0.1, 0.0),
                Quat::from_rotation_z(0.01 * i as f32),
            )
        })
        .collect();
    Skeleton::new(names, &parents, bind)
        .map(|(s, _)| s)
        .map_err(|e| format!("bench skeleton: {e}"))
}

/// anim.rs `clip`, returning the union of its key times too.
fn clip(
    skeleton: &Skeleton,
    name: &str,
    rotation: Interpolation,
    shared_times: bool,
    seed: u64,
) -> Result<(Clip, Option<Vec<f32>>), String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let times = |rng: &mut rand::rngs::StdRng| -> Vec<f32> {
        (0..KEYS)
            .map(|k| {
                let base = k as f32 / (KEYS - 1) as f32;
                if shared_times || k == 0 || k == KEYS - 1 {
                    base
                } else {
                    base + rng.gen_range(-0.3..0.3) / (KEYS - 1) as f32
                }
            })
            .collect()
    };
    let mut all = Vec::new();
    let tracks = (0..skeleton.len())
        .map(|j| {
            let mut t = RawJointTrack::new(j);
            let tt = times(&mut rng);
            all.extend_from_slice(&tt);
            t.translation = RawTrack::new(
                Interpolation::Linear,
                tt,
                (0..KEYS)
                    .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
                    .collect(),
            );
            let tr = times(&mut rng);
            all.extend_from_slice(&tr);
            let mut q = Quat::IDENTITY;
            t.rotation = RawTrack::new(
                rotation,
                tr,
                (0..KEYS)
                    .map(|_| {
                        q = (Quat::from_euler(
                            EulerRot::XYZ,
                            rng.gen_range(-0.3..0.3),
                            rng.gen_range(-0.3..0.3),
                            rng.gen_range(-0.3..0.3),
                        ) * q)
                            .normalize();
                        q
                    })
                    .collect(),
            );
            let ts = times(&mut rng);
            all.extend_from_slice(&ts);
            t.scale = RawTrack::new(
                Interpolation::Linear,
                ts,
                (0..KEYS)
                    .map(|_| Vec3::splat(rng.gen_range(0.9..1.1)))
                    .collect(),
            );
            t
        })
        .collect();
    let raw = RawClip {
        name: name.into(),
        duration: 1.0,
        tracks,
        weights: Vec::new(),
    };
    let c = Clip::build(&raw, skeleton).map_err(|e| format!("bench clip: {e}"))?;
    Ok((c, Some(all)))
}

/// The bench clips (seed 7, as the sampling rows use): on the 64-joint
/// tree, LINEAR and SQUAD with shared key times and LINEAR with unshared
/// ones; on the 64-joint chain, LINEAR with shared key times.
pub fn bench_sets() -> Result<Vec<ClipSet>, String> {
    let tree = skeleton(Shape::Tree, 64)?;
    let tree_clips = vec![
        clip(&tree, "LINEAR", Interpolation::Linear, true, 7)?,
        clip(&tree, "SQUAD", Interpolation::Squad, true, 7)?,
        clip(
            &tree,
            "LINEAR, unshared key times",
            Interpolation::Linear,
            false,
            7,
        )?,
    ];
    let chain = skeleton(Shape::Chain, 64)?;
    let chain_clips = vec![clip(&chain, "LINEAR", Interpolation::Linear, true, 7)?];
    Ok(vec![
        ClipSet {
            name: "bench tree 64".into(),
            skeleton: tree,
            clips: tree_clips,
            metres: 1.0,
        },
        ClipSet {
            name: "bench chain 64".into(),
            skeleton: chain,
            clips: chain_clips,
            metres: 1.0,
        },
    ])
}
