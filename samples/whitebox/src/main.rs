//! Placeholder until the GPU path lands: prints the CPU-skinned trident.
use vkskin::anim::{LinearBlendJob, LocalToModelJob, Transform};
use vkskin::assets::builtin::Trident;
use vkskin::glam::{Affine3A, Vec3};

fn main() {
    let model = Trident::model();
    let s = &model.skeleton;
    let mut pose = vec![Transform::IDENTITY; s.len()];
    let mut models = vec![Affine3A::IDENTITY; s.len()];
    let mut skin = vec![Affine3A::IDENTITY; s.len()];
    Trident::pose(s, 1.0, &mut pose);
    let job = LocalToModelJob {
        root: Trident::root(1.0),
        ..LocalToModelJob::full(s, &pose, &mut models)
    };
    job.run().expect("valid");
    model.skins[0]
        .skin_matrices(&models, &mut skin)
        .expect("valid");
    let mesh = &model.meshes[0];
    let mut out = vec![Vec3::ZERO; mesh.positions.len()];
    LinearBlendJob {
        skin: &skin,
        per_vertex: mesh.influences.per_vertex,
        joints: &mesh.influences.joints,
        weights: &mesh.influences.weights,
        positions: &mesh.positions,
        normals: &[],
        out_positions: &mut out,
        out_normals: &mut [],
    }
    .run()
    .expect("valid");
    for p in out {
        println!("{p}");
    }
}
