//! Helpers shared by the glTF tests: posing a loaded model and skinning it
//! through the engine's CPU jobs.
#![allow(dead_code)]

use std::path::PathBuf;

use vkskin::anim::{PlaybackMode, Transform};
use vkskin::assets::gltf::GltfInfo;
use vkskin::assets::{LoadOptions, Model};
use vkskin::glam::{Affine3A, Vec3};

/// Loads a shared asset, or `None` (skipping) when the assets are absent.
pub fn load(rel: &str) -> Option<(Model, GltfInfo)> {
    let path: PathBuf = vkskin_tests::asset(rel)?;
    let r = vkskin::assets::gltf::load_with_info(&path, &LoadOptions::default());
    Some(r.unwrap_or_else(|e| panic!("{rel}: {e}")))
}

/// Local transforms of clip `clip` at `time` (clamped), or the bind pose.
pub fn locals(model: &Model, clip: Option<usize>, time: f32) -> Vec<Transform> {
    model
        .pose(clip.map(|c| &model.clips[c]), time, PlaybackMode::Clamp)
        .unwrap()
}

/// Model matrices for a pose.
pub fn models(model: &Model, locals: &[Transform]) -> Vec<Affine3A> {
    model.model_matrices(locals).unwrap()
}

/// Skinned positions and normals of every mesh for a pose.
pub fn skin_all(model: &Model, locals: &[Transform]) -> Vec<(Vec<Vec3>, Vec<Vec3>)> {
    model
        .skin_cpu(locals)
        .unwrap()
        .into_iter()
        .map(|v| (v.positions, v.normals))
        .collect()
}

/// Asserts `got` matches `want` vertex by vertex within `tol`.
pub fn assert_positions(what: &str, got: &[Vec3], want: &[[f32; 3]], tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: vertex count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w = Vec3::from_array(*w);
        assert!(
            g.abs_diff_eq(w, tol),
            "{what}: vertex {i} is {g:?}, expected {w:?}"
        );
    }
}
