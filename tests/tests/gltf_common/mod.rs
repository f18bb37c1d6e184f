//! Helpers shared by the glTF tests: posing a loaded model and skinning it
//! through the engine's CPU jobs.
#![allow(dead_code)]

use std::path::PathBuf;

use vkskin::anim::{
    LinearBlendJob, LocalToModelJob, PlaybackMode, SamplingContext, SamplingJob, Transform,
};
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
    let mut out = model.skeleton.bind_local().to_vec();
    if let Some(c) = clip {
        let clip = &model.clips[c];
        let mut ctx = SamplingContext::new(clip);
        SamplingJob {
            clip,
            context: &mut ctx,
            time,
            mode: PlaybackMode::Clamp,
            output: &mut out,
        }
        .run()
        .unwrap();
    }
    out
}

/// Model matrices for a pose.
pub fn models(model: &Model, locals: &[Transform]) -> Vec<Affine3A> {
    let mut m = vec![Affine3A::IDENTITY; model.skeleton.len()];
    LocalToModelJob::full(&model.skeleton, locals, &mut m)
        .run()
        .unwrap();
    m
}

/// Skinned positions and normals of every mesh for a pose.
pub fn skin_all(model: &Model, locals: &[Transform]) -> Vec<(Vec<Vec3>, Vec<Vec3>)> {
    let models = models(model, locals);
    model
        .meshes
        .iter()
        .map(|mesh| {
            let skin = &model.skins[mesh.skin];
            let mut palette = vec![Affine3A::IDENTITY; skin.len()];
            skin.skin_matrices(&models, &mut palette).unwrap();
            let n = mesh.vertex_count();
            let mut p = vec![Vec3::ZERO; n];
            let mut nr = vec![Vec3::ZERO; n];
            LinearBlendJob {
                skin: &palette,
                per_vertex: mesh.influences.per_vertex,
                joints: &mesh.influences.joints,
                weights: &mesh.influences.weights,
                positions: &mesh.positions,
                normals: &mesh.normals,
                out_positions: &mut p,
                out_normals: &mut nr,
            }
            .run()
            .unwrap();
            (p, nr)
        })
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
