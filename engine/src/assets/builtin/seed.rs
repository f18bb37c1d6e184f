//! The model of a seed's arrays, shared by the trident and the strip.

/// A one-mesh model from a seed's arrays: normals +Z, four influences per
/// vertex with the fourth weight implicit, one skin over the whole
/// skeleton, no clips (the seeds animate in code).
pub(super) fn seed_model(
    name: &str,
    skeleton: crate::anim::Skeleton,
    positions: Vec<glam::Vec3>,
    joint_indices: &[[u16; 4]],
    weights: &[[f32; 3]],
    indices: &[u32],
) -> crate::assets::Model {
    let mesh = crate::mesh::SkinnedMesh {
        name: name.into(),
        normals: vec![glam::Vec3::Z; positions.len()],
        positions,
        uvs: Vec::new(),
        tangents: Vec::new(),
        colors: Vec::new(),
        influences: crate::mesh::Influences::from_implicit_fourth(joint_indices, weights),
        indices: indices.to_vec(),
        skin: 0,
        material: None,
        morph: Default::default(),
    };
    crate::assets::Model {
        name: name.into(),
        source: None,
        skins: vec![crate::anim::Skin::whole_skeleton(&skeleton)],
        skeleton,
        meshes: vec![mesh],
        clips: Vec::new(),
        materials: Vec::new(),
        warnings: Vec::new(),
        morph_sets: Vec::new(),
        file_axes: glam::Mat3::IDENTITY,
    }
}
