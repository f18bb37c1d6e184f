//! The vkskin viewer: opens a `.gltf`, `.glb` or `.x` file (or, with none,
//! the built-in character, [`vkskin::assets::builtin::Character`]), plays
//! its clips on the CPU, skins it on the GPU through any path of the
//! registry ([`vkskin::skin::paths`]) and draws it in a window with an egui
//! panel, or headless into PNG frames and a contact sheet.
//!
//! # The headless look (a contract)
//!
//! `viewer --headless` draws exactly this, so that an embedding test can
//! reproduce a frame pixel for pixel with the engine API alone:
//!
//! - the model: [`vkskin::assets::load`] of the file (default
//!   [`vkskin::assets::LoadOptions`]), or `Character::model()`, or for the
//!   file name `builtin:morph` `MorphBlob::default().model()` (the
//!   morph-target demo);
//! - target: [`vkskin::render::OffscreenTarget`] of `--size` (default
//!   800x600), cleared to [`CLEAR`] = `[0.06, 0.07, 0.09, 1.0]`;
//! - bounds `b = model.animated_bounds(16)?`; camera
//!   `Camera::framing(b.min, b.max, 0.5, 0.2, 45f32.to_radians(), width as
//!   f32 / height as f32)`; with `--up z` (a file authored Z-up),
//!   `Camera::framing_up(.., model.file_axis(Vec3::Z))` with the same
//!   arguments (`--up y`, the default, is `framing`);
//! - uniforms `FrameUniforms { view_proj: camera.view_proj(aspect), color:
//!   [1.0; 4], light: [0.3, 0.5, 1.0, 1.0] }` with `aspect = width as f32 /
//!   height as f32`;
//! - path: `--path P`, else `vkskin::skin::auto(&device, bones, 1)`'s choice
//!   with `bones` the longest skin's length (at least 1); `SkinPathConfig::new(
//!   OffscreenTarget::COLOR_FORMAT, OffscreenTarget::DEPTH_FORMAT, 2)` (cull
//!   mode NONE, no wireframe pipelines), every mesh prepared with its skin's
//!   `PaletteHierarchy::new(skin, &skeleton)`;
//! - `--clips FILE.vkclip`: the model's clips are replaced by the clip
//!   file's (`vkskin::assets::load` of it; its skeleton must match the
//!   model's joint for joint: count, names, parents), and `--clip` names
//!   one of them;
//! - frame `i` samples the chosen clip (`--clip C`, default the model's
//!   first; the bind pose when the model has none) with a `SamplingJob` at
//!   `time = i as f32 / fps` (`--fps`, default 30), `PlaybackMode::Loop`,
//!   output starting from the skeleton's bind pose; `LocalToModelJob::full`
//!   (identity root); `Skin::skin_matrices` per skin;
//! - morph weights: `model.morph_weights(clip, time, PlaybackMode::Loop)`
//!   (the same clip and time; the model's defaults without a clip), and
//!   a mesh with targets is written with `write_all_morphed` and its slice
//!   `mesh.morph.weights(&weights)` (a model without targets, like the
//!   built-in character, has nothing to sample);
//! - materials: `vkskin::materials::ModelMaterials::new(&device, &model)`
//!   (every texture read and uploaded once; one that cannot be read is a
//!   warning and its material draws with its factor);
//! - every mesh, in model order, is one batch of one instance: model matrix
//!   identity, tint white, palette = its skin's matrices; `prepass` with
//!   every batch, then in the rendering scope `record_draw_with(..,
//!   PolygonMode::FILL, None, Some(materials.for_mesh(mesh)))` per mesh in
//!   order, first the meshes whose material does not blend, then those
//!   that do; then `finish`;
//! - `--motion-view`: the path is built with `SkinPathConfig::motion`, every
//!   mesh written with `InstanceWriter::write_motion` (previous pose: the
//!   previous frame's palettes and weights; frame 0 passes `None`, still),
//!   and the uniforms are `color: [1, 1, 1, 1 / (0.25 * b.diagonal() /
//!   fps)]`, `light: [0.3, 0.5, 1.0, 2.0]`: `skin/skinned.frag` draws
//!   world-space velocity as colour, `0.5 + 0.5 * clamp(velocity / (0.25
//!   bounds diagonals per second))` per axis (x red, y green, z blue; still
//!   is grey);
//! - `--anim gpu`: the path is built with `SkinPathConfig::gpu_animation`,
//!   `GpuClipStore::new(&device, &model.skeleton, &model.clips)`, one
//!   `GpuAnimator::new(&store, &path, &mesh, &model.skins[mesh.skin])` per
//!   prepared mesh; each mesh is written with `write_records(|_|
//!   (Affine3A::IDENTITY, [1.0; 4]))` instead of its palette, and before
//!   `prepass` each animator records `AnimRecord::play(clip, time, 0.0,
//!   PlaybackMode::Loop)` at `now = 0` (the same clip and time, sampled by
//!   the compute pass): the frame equals `--anim cpu`'s within the GPU's
//!   rounding. Where GPU animation cannot serve (a windowed storage or the
//!   CPU stage, `--motion-view`, a model with morph targets or without
//!   clips, a skeleton past the device's shared memory)
//!   the frame is `--anim cpu`'s and the reason is printed: the run does
//!   not fail. The first lines say `animation on the GPU` (or `on the
//!   CPU` with the reason); the last, `viewer: stats: ...`, repeats it
//!   with the animation pass's median GPU time where timestamps exist;
//! - no panel, no skeleton overlay, no text. Frames are written as
//!   `frame_0000.png`, `frame_0001.png`, ... and `contact_sheet.png` (see
//!   [`contact`]) in the `--out` folder.
//!
//! The windowed viewer starts from the same look (same camera, uniforms and
//! default path) and adds the panel and overlays on top.

pub mod args;
pub mod contact;
mod egui_pass;
pub mod gpu_anim;
pub mod headless;
pub mod orbit;
pub mod player;
pub mod scene;
pub mod script;
mod ui;
pub mod window;

use std::path::Path;
use std::process::ExitCode;

use sample_common::{fail, report};
use vkskin::assets::builtin::{Character, CharacterDesc, MorphBlob};
use vkskin::assets::{LoadOptions, Model};

pub use args::Args;

/// The clear colour of every frame (the headless contract).
pub const CLEAR: [f32; 4] = [0.06, 0.07, 0.09, 1.0];
/// Towards the light, shaded (`w = 1`).
pub const LIGHT: [f32; 4] = [0.3, 0.5, 1.0, 1.0];
/// The framing camera's start: yaw and pitch in radians, vertical field of
/// view in degrees.
pub const YAW: f32 = 0.5;
pub const PITCH: f32 = 0.2;
pub const FOV_Y_DEGREES: f32 = 45.0;
/// Samples per clip for [`Model::animated_bounds`].
pub const BOUNDS_SAMPLES: usize = 16;

/// Runs the viewer as the command line asks; the process's exit code.
pub fn run(args: Args) -> ExitCode {
    if let Some(code) = args.gpu.list_devices("viewer") {
        return code;
    }
    let result = if headless::options(&args).headless_wanted() {
        headless::run(&args)
    } else {
        window::run(&args)
    };
    match result {
        Ok(log) => report("viewer", &log),
        Err(e) => fail("viewer", &e),
    }
}

/// [`load_model`], then with `--clips FILE.vkclip` the clip file's clips
/// in place of the model's (an `Err` naming both files when the file's
/// skeleton is not the model's: joint count, names, parents).
pub fn load_model_with_clips(
    file: Option<&Path>,
    max_influences: usize,
    clips: Option<&Path>,
) -> Result<Model, String> {
    let mut model = load_model(file, max_influences)?;
    if let Some(c) = clips {
        let label = file.map_or_else(
            || "the built-in character".to_string(),
            |f| f.display().to_string(),
        );
        sample_common::clips::attach(&mut model, &label, c)?;
    }
    Ok(model)
}

/// The model a run starts with: the file, or the built-in character
/// (`builtin:morph` as the file: the morph-target demo, `MorphBlob`).
/// `max_influences` above 4 builds the character with its wide blend zones
/// (`CharacterDesc::eight_influences`), so the extra slots are used.
pub fn load_model(file: Option<&Path>, max_influences: usize) -> Result<Model, String> {
    let k = max_influences.clamp(1, vkskin::skin::MAX_INFLUENCES);
    match file {
        Some(path) if path.to_str() == Some("builtin:morph") => Ok(MorphBlob::default().model()),
        Some(path) => vkskin::assets::load_with(
            path,
            &LoadOptions {
                max_influences: k,
                ..LoadOptions::default()
            },
        )
        .map_err(|e| e.to_string()),
        None if k == 4 => Ok(Character::model()),
        None if k > 4 => Ok(Character::model_with(&CharacterDesc {
            max_influences: k,
            ..CharacterDesc::eight_influences()
        })),
        None => Ok(Character::model_with(&CharacterDesc {
            max_influences: k,
            ..CharacterDesc::default()
        })),
    }
}
