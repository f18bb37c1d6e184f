//! Every glTF file of the shared assets: counts against INDEX.md, sampling
//! stays finite, the bind pose reproduces the stored mesh, influences and
//! materials come through.

mod gltf_common;

use std::collections::BTreeSet;

use gltf_common::{load, locals, skin_all};
use vkskin::assets::{LoadOptions, TextureSource};
use vkskin::glam::{Affine3A, Vec3};

/// (file, skins, joints, verts, anims), copied from the glTF table of
/// `shared/assets/INDEX.md` (computed there by the asset curator's scripts
/// from the JSON and buffers). "joints" is the total over `skins[].joints`;
/// "verts" the POSITION counts over all meshes, each mesh counted once.
const INDEX: &[(&str, usize, usize, usize, usize)] = &[
    ("gltf/RiggedSimple.glb", 1, 2, 160, 1),
    (
        "gltf/RiggedSimple_gltf_separate/RiggedSimple.gltf",
        1,
        2,
        160,
        1,
    ),
    ("gltf/RiggedFigure.glb", 1, 19, 370, 1),
    ("gltf/CesiumMan.glb", 1, 19, 3273, 1),
    ("gltf/Fox.glb", 1, 24, 1728, 3),
    ("gltf/RecursiveSkeletons.glb", 84, 840, 40, 1),
    ("gltf/SimpleSkin/SimpleSkin.gltf", 1, 2, 10, 1),
    ("gltf/InterpolationTest.glb", 0, 0, 220, 9),
    ("gltf/quad_skin.glb", 1, 10, 4, 0),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_00.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_01.gltf",
        1,
        2,
        6,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_02.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_03.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_04.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_05.gltf",
        1,
        2,
        9,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_06.gltf",
        2,
        4,
        12,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_07.gltf",
        1,
        5,
        10,
        0,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_08.gltf",
        1,
        4,
        15,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Skin/Animation_Skin_09.gltf",
        1,
        4,
        13,
        0,
    ),
    (
        "gltf/asset-generator/Animation_SkinType/Animation_SkinType_00.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_SkinType/Animation_SkinType_01.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_SkinType/Animation_SkinType_02.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_SkinType/Animation_SkinType_03.gltf",
        1,
        2,
        6,
        0,
    ),
    (
        "gltf/asset-generator/Animation_Node/Animation_Node_00.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Node/Animation_Node_01.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Node/Animation_Node_02.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Node/Animation_Node_03.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Node/Animation_Node_04.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_Node/Animation_Node_05.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_00.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_01.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_02.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_03.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_04.gltf",
        0,
        0,
        48,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_05.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_06.gltf",
        0,
        0,
        24,
        1,
    ),
    (
        "gltf/asset-generator/Animation_NodeMisc/Animation_NodeMisc_07.gltf",
        0,
        0,
        24,
        2,
    ),
];

#[test]
fn every_gltf_asset_is_listed() {
    // The table above covers every .gltf/.glb under the assets folder, so a
    // file added to shared/ without a row here fails loudly.
    let Some(dir) = vkskin_tests::assets_dir() else {
        return;
    };
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.join("gltf")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("gltf" | "glb")) {
                let rel = p
                    .strip_prefix(&dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                found.insert(rel);
            }
        }
    }
    let listed: BTreeSet<String> = INDEX.iter().map(|r| r.0.to_string()).collect();
    assert_eq!(found, listed);
}

#[test]
fn counts_match_index() {
    for &(rel, skins, joints, verts, anims) in INDEX {
        let Some((model, info)) = load(rel) else {
            return;
        };
        assert_eq!(info.file_skins, skins, "{rel}: skins");
        let j: usize = model.skins[..info.file_skins].iter().map(|s| s.len()).sum();
        assert_eq!(j, joints, "{rel}: joints");
        // Each (mesh, primitive) once, however many nodes instance it.
        let mut seen = BTreeSet::new();
        let mut v = 0;
        for (mesh, src) in model.meshes.iter().zip(&info.mesh_sources) {
            if seen.insert((src.mesh, src.primitive)) {
                v += mesh.vertex_count();
            }
        }
        assert_eq!(v, verts, "{rel}: vertices");
        assert_eq!(model.clips.len(), anims, "{rel}: clips");
        assert_eq!(model.meshes.len(), info.mesh_sources.len());
    }
}

#[test]
fn every_file_samples_finite_at_five_times() {
    for &(rel, ..) in INDEX {
        let Some((model, _)) = load(rel) else {
            return;
        };
        let clips: Vec<Option<usize>> = if model.clips.is_empty() {
            vec![None]
        } else {
            (0..model.clips.len()).map(Some).collect()
        };
        for c in clips {
            let d = c.map_or(0.0, |c| model.clips[c].duration());
            for t in [0.0, 0.25 * d, 0.5 * d, 0.75 * d, d] {
                for (m, (p, n)) in skin_all(&model, &locals(&model, c, t)).iter().enumerate() {
                    assert!(
                        p.iter().all(|v| v.is_finite()),
                        "{rel}: mesh {m} clip {c:?} t={t}: non-finite position"
                    );
                    assert!(
                        n.iter().all(|v| v.is_finite()),
                        "{rel}: mesh {m} clip {c:?} t={t}: non-finite normal"
                    );
                }
            }
        }
    }
}

/// Files whose nodes' rest pose is the skins' bind pose: their inverse bind
/// matrices invert the joints' rest model matrices, up to the transform of
/// the nodes above the skeleton (COLLADA2GLTF's `Z_UP` node turns the bind
/// space to Y up; the spec leaves the bind space free). So in the rest pose
/// every skin matrix of a mesh is one and the same matrix `S`, and skinning
/// gives `S * stored position`. The Asset Generator's skin cases deliberately
/// are not like this (their joints sit elsewhere than the inverse bind
/// matrices say); they are checked against values worked out from the spec
/// in `gltf_asset_generator.rs` instead.
const REST_IS_BIND: &[&str] = &[
    "gltf/RiggedSimple.glb",
    "gltf/RiggedSimple_gltf_separate/RiggedSimple.gltf",
    "gltf/RiggedFigure.glb",
    "gltf/CesiumMan.glb",
    "gltf/Fox.glb",
    "gltf/RecursiveSkeletons.glb",
    "gltf/SimpleSkin/SimpleSkin.gltf",
    "gltf/quad_skin.glb",
];

#[test]
fn bind_pose_reproduces_stored_positions() {
    for &rel in REST_IS_BIND {
        let Some((model, info)) = load(rel) else {
            return;
        };
        let rest = model.skeleton.bind_local();
        let models = gltf_common::models(&model, rest);
        let skinned = skin_all(&model, rest);
        for ((mesh, src), (p, _)) in model.meshes.iter().zip(&info.mesh_sources).zip(&skinned) {
            assert!(src.skinned, "{rel}: {} should be skinned", mesh.name);
            let skin = &model.skins[mesh.skin];
            let mut palette = vec![Affine3A::IDENTITY; skin.len()];
            skin.skin_matrices(&models, &mut palette).unwrap();
            let s = palette[0];
            for (k, m) in palette.iter().enumerate() {
                assert!(
                    m.abs_diff_eq(s, 1e-4),
                    "{rel}: skin matrix {k} differs from skin matrix 0 in the rest pose"
                );
            }
            let want: Vec<Vec3> = mesh
                .positions
                .iter()
                .map(|&v| s.transform_point3(v))
                .collect();
            let (lo, hi) = want
                .iter()
                .fold((Vec3::MAX, Vec3::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
            let tol = 1e-4 * (hi - lo).length();
            let worst = p
                .iter()
                .zip(&want)
                .map(|(a, b)| a.distance(*b))
                .fold(0.0f32, f32::max);
            assert!(
                worst <= tol,
                "{rel}: {} off by {worst} in the bind pose (tolerance {tol})",
                mesh.name
            );
        }
    }
}

#[test]
fn gltf_and_glb_variants_agree() {
    let (Some((a, _)), Some((b, _))) = (
        load("gltf/RiggedSimple.glb"),
        load("gltf/RiggedSimple_gltf_separate/RiggedSimple.gltf"),
    ) else {
        return;
    };
    assert_eq!(a.meshes, b.meshes);
    assert_eq!(a.skins, b.skins);
    assert_eq!(a.skeleton, b.skeleton);
    assert_eq!(a.clips, b.clips);
}

#[test]
fn more_than_four_influences_are_reduced_or_kept() {
    // INDEX.md: quad_skin.glb has up to 10 non-zero influences in 12 slots.
    let Some(path) = vkskin_tests::asset("gltf/quad_skin.glb") else {
        return;
    };
    for (k, expect_k) in [(4, 4), (8, 8)] {
        let opts = LoadOptions {
            max_influences: k,
            ..LoadOptions::default()
        };
        let m = vkskin::assets::gltf::load(&path, &opts).unwrap();
        let mesh = &m.meshes[0];
        assert_eq!(mesh.influences.per_vertex, expect_k);
        for v in 0..mesh.vertex_count() {
            let (_, w) = mesh.influences.vertex(v);
            let s: f32 = w.iter().sum();
            assert!((s - 1.0).abs() < 1e-5, "vertex {v} weights sum to {s}");
            assert!(w.windows(2).all(|p| p[0] >= p[1]), "largest first: {w:?}");
        }
        assert!(
            m.warnings
                .iter()
                .any(|w| w.contains("up to 10") && w.contains(&format!("more than {k}"))),
            "{:?}",
            m.warnings
        );
    }
    // Twelve slots kept untruncated: no warning.
    let opts = LoadOptions {
        max_influences: 12,
        ..LoadOptions::default()
    };
    let m = vkskin::assets::gltf::load(&path, &opts).unwrap();
    assert_eq!(m.meshes[0].influences.per_vertex, 10);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

#[test]
fn materials_and_textures() {
    let Some((cesium, _)) = load("gltf/CesiumMan.glb") else {
        return;
    };
    // CesiumMan's texture is a JPEG inside the GLB's binary chunk.
    match &cesium.materials[0].texture {
        Some(TextureSource::Embedded { mime, bytes }) => {
            assert_eq!(mime, "image/jpeg");
            assert_eq!(&bytes[..3], &[0xFF, 0xD8, 0xFF]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(cesium.meshes[0].material, Some(0));
    let Some((fox, _)) = load("gltf/Fox.glb") else {
        return;
    };
    match &fox.materials[0].texture {
        Some(TextureSource::Embedded { mime, bytes }) => {
            assert_eq!(mime, "image/png");
            assert_eq!(&bytes[..4], b"\x89PNG");
        }
        other => panic!("{other:?}"),
    }
    // RiggedSimple: baseColorFactor [0.279635, 0.64, 0.210944, 1] in its JSON.
    let Some((simple, _)) = load("gltf/RiggedSimple.glb") else {
        return;
    };
    let c = simple.materials[0].base_color;
    assert!((c.x - 0.279_635).abs() < 1e-5 && (c.y - 0.64).abs() < 1e-6 && c.w == 1.0);
    // The Asset Generator cubes reference Textures/BaseColor_Cube.png.
    let Some((node, _)) = load("gltf/asset-generator/Animation_Node/Animation_Node_00.gltf") else {
        return;
    };
    match &node.materials[0].texture {
        Some(TextureSource::File(p)) => {
            assert!(p.ends_with("Textures/BaseColor_Cube.png"), "{p:?}");
            assert!(p.is_file());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_mesh_reused_by_many_skins() {
    // RecursiveSkeletons: one mesh instanced by 84 skinned nodes (INDEX.md).
    let Some((model, info)) = load("gltf/RecursiveSkeletons.glb") else {
        return;
    };
    assert_eq!(model.meshes.len(), 84);
    let skins: BTreeSet<usize> = model.meshes.iter().map(|m| m.skin).collect();
    assert_eq!(skins.len(), 84);
    assert!(info.mesh_sources.iter().all(|s| s.mesh == 0 && s.skinned));
    // Every instance carries the same vertices.
    assert!(model
        .meshes
        .iter()
        .all(|m| m.positions == model.meshes[0].positions));
}
