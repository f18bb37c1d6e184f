//! The DirectX .x loader over every .x file in the shared assets: counts
//! against `INDEX.md`, the bind pose against the stored vertices, sampling,
//! and the files' own hand-read values.

use std::path::{Path, PathBuf};

use glam::{Quat, Vec3};
use vkskin::anim::{Interpolation, PlaybackMode, SamplingContext, SamplingJob, Transform};
use vkskin::assets::x::{self, RIGID_SKIN_PREFIX};
use vkskin::assets::{FaultKind, LoadOptions, Model, Place, TextureSource};
use vkskin::mesh::SkinnedMesh;

/// From `shared/assets/INDEX.md`, DirectX table: file, joints (number of
/// `SkinWeights` bones), verts (sum of `Mesh.nVertices`), anims
/// (`AnimationSet`s), max influences per vertex.
const INDEX: &[(&str, usize, usize, usize, usize)] = &[
    ("tiny.x", 35, 4432, 1, 2),
    ("tiny_4anim.x", 35, 4893, 4, 3),
    ("bat.x", 34, 35313, 1, 6),
    ("Testwuson.X", 37, 3205, 3, 4),
    ("BCN_Epileptic.X", 54, 3014, 1, 3),
    ("anim_test.x", 4, 1720, 1, 4),
    ("test_cube_text.x", 1, 24, 0, 1),
    ("test_cube_binary.x", 1, 24, 0, 1),
    ("test_cube_compressed.x", 1, 24, 0, 1),
    ("fromtruespace_bin32.x", 0, 4132, 0, 0),
    ("kwxport_test_cubewithvcolors.x", 0, 24, 0, 0),
];

fn x_dir() -> Option<PathBuf> {
    vkskin_tests::asset("x")
}

fn load(dir: &Path, name: &str) -> Model {
    x::load(&dir.join(name), &LoadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Joints of the skins that come from `SkinWeights` (not the one-joint
/// skins of unskinned meshes).
fn bone_count(m: &Model) -> usize {
    m.skins
        .iter()
        .filter(|s| !s.name.starts_with(RIGID_SKIN_PREFIX))
        .map(|s| s.len())
        .sum()
}

/// Skins every mesh with the skeleton posed by `locals`.
fn skinned_positions(m: &Model, locals: &[Transform]) -> Vec<Vec<Vec3>> {
    m.skin_cpu(locals)
        .unwrap()
        .into_iter()
        .map(|v| v.positions)
        .collect()
}

fn diagonal(meshes: &[SkinnedMesh]) -> f32 {
    vkskin_tests::diagonal(meshes.iter().flat_map(|m| &m.positions))
}

#[test]
fn every_file_matches_the_index() {
    let Some(dir) = x_dir() else { return };
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("x"))
        {
            continue;
        }
        if name == "malformed_skinweights_oob.x" {
            continue;
        }
        let &(_, joints, verts, anims, infl) = INDEX
            .iter()
            .find(|r| r.0 == name)
            .unwrap_or_else(|| panic!("{name} is not in INDEX.md's table"));
        let m = load(&dir, &name);
        assert_eq!(bone_count(&m), joints, "{name}: joints");
        assert_eq!(m.vertex_count(), verts, "{name}: vertices");
        assert_eq!(m.clips.len(), anims, "{name}: animation sets");
        let opts8 = LoadOptions {
            max_influences: 8,
            ..LoadOptions::default()
        };
        let m8 = x::load(&path, &opts8).unwrap();
        if joints > 0 {
            let most = m8
                .meshes
                .iter()
                .filter(|me| !m8.skins[me.skin].name.starts_with(RIGID_SKIN_PREFIX))
                .map(|me| {
                    (0..me.vertex_count())
                        .map(|v| {
                            me.influences
                                .vertex(v)
                                .1
                                .iter()
                                .filter(|&&w| w > 0.0)
                                .count()
                        })
                        .max()
                        .unwrap_or(0)
                })
                .max()
                .unwrap();
            assert_eq!(most, infl, "{name}: most influences on a vertex");
        }
        for mesh in &m.meshes {
            assert_eq!(mesh.normals.len(), mesh.vertex_count(), "{name}");
            assert!(mesh.indices.len() % 3 == 0);
            assert!(mesh
                .indices
                .iter()
                .all(|&i| (i as usize) < mesh.vertex_count()));
            for v in 0..mesh.vertex_count() {
                let (_, w) = mesh.influences.vertex(v);
                let s: f32 = w.iter().sum();
                assert!(
                    (s - 1.0).abs() < 1e-5,
                    "{name}: vertex {v} weights sum to {s}"
                );
            }
            assert!(mesh.normals.iter().all(|n| (n.length() - 1.0).abs() < 1e-4));
            m.skins[mesh.skin].validate(&m.skeleton).unwrap();
        }
        seen.push(name);
    }
    assert_eq!(seen.len(), INDEX.len(), "files seen: {seen:?}");
}

#[test]
fn bind_pose_reproduces_the_stored_vertices() {
    let Some(dir) = x_dir() else { return };
    for &(name, ..) in INDEX {
        let m = load(&dir, name);
        let diag = diagonal(&m.meshes);
        let posed = skinned_positions(&m, m.skeleton.bind_local());
        let mut worst = 0f32;
        for (mesh, out) in m.meshes.iter().zip(&posed) {
            for (a, b) in mesh.positions.iter().zip(out) {
                worst = worst.max((*a - *b).length());
            }
        }
        assert!(
            worst <= 1e-4 * diag,
            "{name}: bind pose is {worst} away from the stored vertices (diagonal {diag})"
        );
    }
}

#[test]
fn skinned_files_sample_to_finite_positions() {
    let Some(dir) = x_dir() else { return };
    for &(name, joints, ..) in INDEX {
        if joints == 0 {
            continue;
        }
        let m = load(&dir, name);
        let mut locals = vec![Transform::IDENTITY; m.skeleton.len()];
        for clip in &m.clips {
            let mut ctx = SamplingContext::new(clip);
            for k in 0..5 {
                let t = clip.duration() * k as f32 / 4.0;
                SamplingJob {
                    clip,
                    context: &mut ctx,
                    time: t,
                    mode: PlaybackMode::Clamp,
                    output: &mut locals,
                }
                .run()
                .unwrap();
                for (mi, out) in skinned_positions(&m, &locals).iter().enumerate() {
                    assert!(
                        out.iter().all(|p| p.is_finite()),
                        "{name}: clip {:?} at {t} s, mesh {mi}",
                        clip.name()
                    );
                }
            }
        }
    }
}

/// Samples `clip` at `t` (clamped) into local transforms.
fn sample(m: &Model, clip: &str, t: f32) -> Vec<Transform> {
    m.pose(Some(m.clip(clip).unwrap()), t, PlaybackMode::Clamp)
        .unwrap()
}

#[test]
fn tiny_loads_and_animates() {
    let Some(dir) = x_dir() else { return };
    let m = load(&dir, "tiny.x");
    let mesh = &m.meshes[0];
    // Hand-read from tiny.x line 49: -34.720058;-12.484819;48.088928; Z mirrored.
    let first = [-34.720058f64, -12.484819, -48.088928].map(|v| v as f32);
    assert!(mesh.positions[0].abs_diff_eq(Vec3::from_array(first), 1e-5));
    // Line 11326 (MeshNormals' first normal): -0.989571;-0.011953;-0.143551.
    assert!(mesh.normals[0].abs_diff_eq(Vec3::new(-0.989571, -0.011953, 0.143551), 1e-4));
    // MeshTextureCoords' first entry: 0.551713;0.158481.
    assert!((mesh.uvs[0] - glam::Vec2::new(0.551713, 0.158481)).length() < 1e-6);
    assert_eq!(mesh.triangle_count(), 6841);
    // No AnimTicksPerSecond: 4800 ticks per second; the last key is at 4960.
    assert_eq!(m.clips.len(), 1);
    assert!((m.clips[0].duration() - 4960.0 / 4800.0).abs() < 1e-6);
    let tex = m.materials[mesh.material.unwrap()].texture.clone();
    assert_eq!(tex, Some(TextureSource::File(dir.join("Tiny_skin.dds"))));
    // The clip moves the mesh: at the middle it differs from the bind pose.
    let name = m.clips[0].name().to_string();
    let posed = skinned_positions(&m, &sample(&m, &name, 0.5));
    let moved = posed[0]
        .iter()
        .zip(&mesh.positions)
        .map(|(a, b)| (*a - *b).length())
        .fold(0f32, f32::max);
    assert!(moved > 1.0, "tiny moves by only {moved}");
}

#[test]
fn tiny_4anim_has_four_clips_with_squad_rotations() {
    let Some(dir) = x_dir() else { return };
    let m = load(&dir, "tiny_4anim.x");
    let names: Vec<&str> = m.clips.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["Loiter", "Walk", "Jog", "Wave"]);
    // Loiter's last key: tick 63520 at 4800 ticks per second.
    assert!((m.clips[0].duration() - 63520.0 / 4800.0).abs() < 1e-5);
    // One skinned mesh, one 9-vertex helper bound rigidly to its frame.
    let rigid: Vec<_> = m
        .meshes
        .iter()
        .filter(|me| m.skins[me.skin].name.starts_with(RIGID_SKIN_PREFIX))
        .collect();
    assert_eq!(rigid.len(), 1);
    assert_eq!(rigid[0].vertex_count(), 9);
    // Rotation keys follow the option: SQUAD by default, slerp on request,
    // and the two differ between keys.
    let lin = x::load(
        &dir.join("tiny_4anim.x"),
        &LoadOptions {
            x_rotation_interpolation: Interpolation::Linear,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let a = sample(&m, "Walk", 0.31);
    let b = sample(&lin, "Walk", 0.31);
    let differ = a
        .iter()
        .zip(&b)
        .any(|(x, y)| x.rotation.dot(y.rotation).abs() < 1.0 - 1e-7);
    assert!(differ, "SQUAD and slerp sample the same");
    for (x, y) in a.iter().zip(&b) {
        assert!(
            x.rotation.dot(y.rotation).abs() > 0.99,
            "SQUAD strays from slerp"
        );
    }
}

#[test]
fn bat_is_compressed_with_six_influences() {
    let Some(dir) = x_dir() else { return };
    let m = load(&dir, "bat.x");
    assert_eq!(m.meshes[0].influences.per_vertex, 4);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("more than 4 influences") && w.contains("up to 6")),
        "{:?}",
        m.warnings
    );
    let m8 = x::load(
        &dir.join("bat.x"),
        &LoadOptions {
            max_influences: 8,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(m8.meshes[0].influences.per_vertex, 6);
    assert!(!m8.warnings.iter().any(|w| w.contains("influences (up to")));
    // The missing Bat_Albedo.jpg is still named.
    let tex = m8.materials[0].texture.clone();
    assert_eq!(tex, Some(TextureSource::File(dir.join("Bat_Albedo.jpg"))));
    // It animates: the wings move.
    let posed = skinned_positions(&m8, &sample(&m8, "Anim-1", 0.5));
    let moved = posed[0]
        .iter()
        .zip(&m8.meshes[0].positions)
        .map(|(a, b)| (*a - *b).length())
        .fold(0f32, f32::max);
    assert!(
        moved > 1e-3 * diagonal(&m8.meshes),
        "bat moves by only {moved}"
    );
}

#[test]
fn cube_text_binary_and_compressed_load_to_identical_data() {
    let Some(dir) = x_dir() else { return };
    let t = load(&dir, "test_cube_text.x");
    let b = load(&dir, "test_cube_binary.x");
    let c = load(&dir, "test_cube_compressed.x");
    for other in [&b, &c] {
        assert_eq!(t.skeleton, other.skeleton);
        assert_eq!(t.skins, other.skins);
        assert_eq!(t.meshes, other.meshes);
        assert_eq!(t.clips, other.clips);
        // The text file prints colours with six decimals (0.639216), the
        // binary ones hold the float itself (163/255 = 0.6392157).
        assert_eq!(t.materials.len(), other.materials.len());
        for (x, y) in t.materials.iter().zip(&other.materials) {
            assert_eq!(x.name, y.name);
            assert_eq!(x.texture, y.texture);
            assert!(x.base_color.abs_diff_eq(y.base_color, 1e-6));
        }
    }
    assert_eq!(b.materials, c.materials);
    // Hand-read: the frame "Root" swaps Y and Z; the cube has 12 triangles.
    assert_eq!(t.skeleton.names(), ["Root", "Cube"]);
    assert_eq!(t.meshes[0].triangle_count(), 12);
    assert_eq!(t.materials[0].name, "Material");
    assert!((t.materials[0].base_color.x - 0.639216).abs() < 1e-6);
}

#[test]
fn testwuson_bind_set_matches_the_bind_pose() {
    // The Wuson_Bind set keys every joint at its bind pose, and Testwuson's
    // frames are its bind pose: it checks the rotation-key convention
    // (w first, conjugated, mirrored) against the frame matrices.
    let Some(dir) = x_dir() else { return };
    let m = load(&dir, "Testwuson.X");
    let pose = sample(&m, "Wuson_Bind", 0.0);
    let mut checked = 0;
    for (i, (p, b)) in pose.iter().zip(m.skeleton.bind_local()).enumerate() {
        let name = &m.skeleton.names()[i];
        assert!(
            p.rotation.dot(b.rotation).abs() > 1.0 - 1e-5,
            "{name}: rotation {:?} vs bind {:?}",
            p.rotation,
            b.rotation
        );
        assert!(p.translation.abs_diff_eq(b.translation, 1e-3), "{name}");
        checked += 1;
    }
    assert!(checked >= 37);
    // Per-set ticks: 4800 ticks per second; Wuson_Run's last key is at 4640.
    assert!((m.clip("Wuson_Run").unwrap().duration() - 4640.0 / 4800.0).abs() < 1e-5);
}

#[test]
fn anim_test_tolerates_bones_without_frames() {
    let Some(dir) = x_dir() else { return };
    let m = load(&dir, "anim_test.x");
    for bone in ["joint3", "joint4"] {
        assert!(
            m.warnings
                .iter()
                .any(|w| w.contains(&format!("{bone:?}")) && w.contains("name no frame")),
            "{:?}",
            m.warnings
        );
    }
    // AnimTicksPerSecond 24; keys 1..=24.
    assert!((m.clips[0].duration() - 1.0).abs() < 1e-6);
    // The skin keeps one entry per SkinWeights: joint1, joint2, then the two
    // missing bones bound to the mesh's frame pCylinder1.
    let skin = &m.skins[0];
    let names: Vec<&str> = skin
        .joints
        .iter()
        .map(|&j| m.skeleton.names()[j as usize].as_str())
        .collect();
    assert_eq!(names, ["joint1", "joint2", "pCylinder1", "pCylinder1"]);
}

#[test]
fn winding_agrees_with_the_files_normals() {
    // After the Z mirror and the reversed winding, each triangle's
    // counter-clockwise normal points the way of its vertices' normals.
    // (Not the test cubes: their +-X faces store normals pointing inwards.)
    let Some(dir) = x_dir() else { return };
    for name in [
        "tiny.x",
        "tiny_4anim.x",
        "bat.x",
        "Testwuson.X",
        "BCN_Epileptic.X",
        "fromtruespace_bin32.x",
    ] {
        let m = load(&dir, name);
        let (mut agree, mut total) = (0usize, 0usize);
        for mesh in &m.meshes {
            for t in mesh.indices.chunks_exact(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| mesh.positions[i as usize]);
                let n = (b - a).cross(c - a);
                if n.length() < 1e-9 {
                    continue;
                }
                let avg: Vec3 = t.iter().map(|&i| mesh.normals[i as usize]).sum();
                total += 1;
                agree += (n.dot(avg) > 0.0) as usize;
            }
        }
        assert!(
            agree as f64 > 0.95 * total as f64,
            "{name}: {agree} of {total} triangles face their normals"
        );
    }
}

#[test]
fn malformed_skinweights_is_rejected_with_its_line() {
    let Some(dir) = x_dir() else { return };
    let path = dir.join("malformed_skinweights_oob.x");
    let e = x::load(&path, &LoadOptions::default()).unwrap_err();
    assert_eq!(e.kind, FaultKind::OutOfRange);
    assert_eq!(e.file, path);
    // The 1000000 is on line 244 (hand-read), indented by 4 spaces.
    assert_eq!(
        e.place,
        Place::Line {
            line: 244,
            column: 5
        }
    );
    assert!(e.message.contains("1000000"), "{e}");
}

#[test]
fn rotation_keys_convert_like_matrices() {
    // A rotation key and a matrix key for the same rotation (90 degrees
    // about Y in .x's left-handed, row-vector terms, D3DXMatrixRotationY)
    // sample to the same transform.
    let text = "xof 0303txt 0032\n\
        Frame A { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; } }\n\
        AnimationSet q { Animation { { A } AnimationKey { 0; 1; 0;4;0.7071068,0,-0.7071068,0;;; } } }\n\
        AnimationSet m { Animation { { A } AnimationKey { 4; 1; 0;16;0,0,-1,0, 0,1,0,0, 1,0,0,0, 0,0,0,1;;; } } }\n";
    let m = x::load_from_bytes("rot.x", text.as_bytes(), &LoadOptions::default()).unwrap();
    let q = sample(&m, "q", 0.0)[0];
    let mm = sample(&m, "m", 0.0)[0];
    assert!(
        q.rotation.dot(mm.rotation).abs() > 1.0 - 1e-6,
        "{:?} vs {:?}",
        q.rotation,
        mm.rotation
    );
    // In the engine's right-handed space, the mirrored 90 degrees about Y
    // is -90 degrees about Y.
    let expect = Quat::from_rotation_y(-std::f32::consts::FRAC_PI_2);
    assert!(
        q.rotation.dot(expect).abs() > 1.0 - 1e-6,
        "{:?}",
        q.rotation
    );
}
