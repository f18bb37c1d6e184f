//! The .x encodings (text, 32/64-bit binary, compressed text and binary)
//! and the loader's conversions on small hand-written files whose expected
//! values are worked out by hand in the comments.

mod x_common;

use glam::{Vec2, Vec3, Vec4};
use vkskin::anim::{PlaybackMode, Transform};
use vkskin::assets::x::{self, RIGID_SKIN_PREFIX, SYNTHETIC_ROOT};
use vkskin::assets::{LoadOptions, Model, TextureSource};
use x_common::*;

fn load(name: &str, text: &str) -> Model {
    x::load_from_bytes(name, text.as_bytes(), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn same_data(a: &Model, b: &Model) {
    assert_eq!(a.skeleton, b.skeleton);
    assert_eq!(a.skins, b.skins);
    assert_eq!(a.meshes, b.meshes);
    assert_eq!(a.clips, b.clips);
    assert_eq!(a.materials, b.materials);
}

fn sample(m: &Model, clip: &str, t: f32) -> Vec<Transform> {
    m.pose(Some(m.clip(clip).unwrap()), t, PlaybackMode::Clamp)
        .unwrap()
}

#[test]
fn binary_64_bit_floats_load_like_32() {
    let Some((_, d)) = read("x/test_cube_binary.x") else {
        return;
    };
    let opts = LoadOptions::default();
    let b32 = x::load_from_bytes("/m/cube.x", &d, &opts).unwrap();
    let wide = to_f64(&d);
    assert_eq!(&wide[..16], b"xof 0303bin 0064");
    let b64 = x::load_from_bytes("/m/cube.x", &wide, &opts).unwrap();
    same_data(&b32, &b64);
    // And compressed.
    let z64 = x::load_from_bytes("/m/cube.x", &mszip_stored(&wide, b"bzip"), &opts).unwrap();
    same_data(&b32, &z64);
}

#[test]
fn compressed_text_loads_like_text() {
    let Some((_, d)) = read("x/test_cube_text.x") else {
        return;
    };
    let opts = LoadOptions::default();
    let t = x::load_from_bytes("/m/cube.x", &d, &opts).unwrap();
    let z = mszip_stored(&d, b"tzip");
    assert_eq!(&z[8..12], b"tzip");
    let tz = x::load_from_bytes("/m/cube.x", &z, &opts).unwrap();
    same_data(&t, &tz);
    // Bigger than one 32 KiB block: anim_test.x.
    let Some((_, d)) = read("x/anim_test.x") else {
        return;
    };
    let a = x::load_from_bytes("/m/a.x", &d, &opts).unwrap();
    let az = x::load_from_bytes("/m/a.x", &mszip_stored(&d, b"tzip"), &opts).unwrap();
    same_data(&a, &az);
}

#[test]
fn ngons_and_per_corner_normals() {
    // A quad and a triangle sharing the edge 1-2. The quad's corners use
    // normal 0, the triangle's normal 1, so vertices 1 and 2 split into new
    // vertices 5 and 6.
    let m = load(
        "/m/ngon.x",
        "xof 0303txt 0032
        Frame F {
          Mesh M {
            5;
            0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;, 2;0;0;;
            2;
            4;0,1,2,3;,
            3;1,4,2;;
            MeshNormals { 2; 0;0;1;, 0;0;-1;; 2; 4;0,0,0,0;, 3;1,1,1;; }
            MeshTextureCoords { 5; 0;0;, 0.25;0;, 0.5;0;, 0.75;0;, 1;0;; }
            MeshVertexColors { 2; 1; 1;0.5;0;1;;, 4; 0;0;0.04045;0.25;;; }
            SkinWeights { \"F\"; 2; 1, 4; 1.0, 0.5; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
          }
        }",
    );
    let mesh = &m.meshes[0];
    assert_eq!(mesh.vertex_count(), 7);
    // Fans reversed: quad (0,1,2,3) -> (0,2,1), (0,3,2); triangle (1,4,2)
    // with 1 -> 5 and 2 -> 6 -> (5,6,4).
    assert_eq!(mesh.indices, [0, 2, 1, 0, 3, 2, 5, 6, 4]);
    assert_eq!(mesh.positions[5], mesh.positions[1]);
    assert_eq!(mesh.positions[6], mesh.positions[2]);
    assert_eq!(mesh.uvs[5], Vec2::new(0.25, 0.0));
    assert_eq!(mesh.uvs[6], Vec2::new(0.5, 0.0));
    // Vertex colours, sRGB in the file, linear here, following the split
    // (file vertex 1 is vertices 1 and 5); unnamed vertices white.
    // 0.5 -> ((0.5 + 0.055) / 1.055)^2.4 = 0.21404; 0.04045 -> 0.04045 / 12.92.
    let srgb_half = ((0.5f32 + 0.055) / 1.055).powf(2.4);
    for v in [1, 5] {
        assert!(
            mesh.colors[v].abs_diff_eq(Vec4::new(1.0, srgb_half, 0.0, 1.0), 1e-6),
            "vertex {v}: {}",
            mesh.colors[v]
        );
    }
    assert!(mesh.colors[4].abs_diff_eq(Vec4::new(0.0, 0.0, 0.04045 / 12.92, 0.25), 1e-7));
    assert_eq!(mesh.colors[0], Vec4::ONE);
    // Normals mirrored in Z.
    assert_eq!(mesh.normals[0], Vec3::new(0.0, 0.0, -1.0));
    assert_eq!(mesh.normals[5], Vec3::new(0.0, 0.0, 1.0));
    // Skin weights follow the split: file vertex 1 is vertices 1 and 5.
    let skin = &m.skins[mesh.skin];
    assert_eq!(skin.joints, [0]);
    for v in [1, 5, 4] {
        let (j, w) = mesh.influences.vertex(v);
        assert_eq!((j[0], w[0]), (0, 1.0), "vertex {v}");
    }
    // Vertices with no weight follow the mesh's frame, which is also the
    // bone: the same skin slot.
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("4 vertices have no skin weight")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn frames_references_rigid_meshes_and_materials() {
    let m = load(
        "/models/scene.x",
        "xof 0303txt 0032
        Material Red { 1;0;0;1;; 0; 0;0;0;; 0;0;0;; TextureFilename { \"C:\\\\tex\\\\red.png\"; } }
        Mesh Loose { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }
        Mesh Shared { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }
        Frame Parent {
          FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 10,20,30,1;; }
          Frame Child {
            FrameTransformMatrix { 0,0,-1,0, 0,1,0,0, 1,0,0,0, 0,0,0,1;; }
            { Shared }
            Mesh Two {
              4; 0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;;
              2; 3;0,1,2;, 3;0,2,3;;
              MeshMaterialList { 2; 2; 0, 1;; { Red } Material Blue { 0;0;1;1;; 0; 0;0;0;; 0;0;0;; } }
            }
          }
        }",
    );
    assert_eq!(m.skeleton.names(), ["Parent", "Child", SYNTHETIC_ROOT]);
    let names: Vec<&str> = m.meshes.iter().map(|me| me.name.as_str()).collect();
    assert_eq!(
        names,
        ["Shared", "Two[material 0]", "Two[material 1]", "Loose"]
    );
    // Shared's vertex (1,0,0), by hand: row vector times Child (90 degrees
    // about Y: row 0 is (0,0,-1)) times Parent (+ (10,20,30)) = (10,20,29);
    // mirrored: (10,20,-29).
    assert!(m.meshes[0].positions[1].abs_diff_eq(Vec3::new(10.0, 20.0, -29.0), 1e-5));
    let skin = &m.skins[m.meshes[0].skin];
    assert_eq!(skin.name, format!("{RIGID_SKIN_PREFIX}Child"));
    assert_eq!(skin.joints, [1]);
    // The loose mesh stays put under the synthetic root.
    assert_eq!(m.meshes[3].positions[1], Vec3::new(1.0, 0.0, 0.0));
    assert_eq!(m.skins[m.meshes[3].skin].joints, [2]);
    // One engine mesh per material, each with only its own vertices.
    assert_eq!(m.meshes[1].material, Some(0));
    assert_eq!(m.meshes[2].material, Some(1));
    assert_eq!(m.meshes[1].vertex_count(), 3);
    assert_eq!(m.meshes[2].vertex_count(), 3);
    assert_eq!(m.meshes[1].skin, m.meshes[2].skin);
    assert_eq!(m.materials[0].name, "Red");
    assert_eq!(
        m.materials[0].texture,
        Some(TextureSource::File("/models/red.png".into()))
    );
    assert_eq!(m.materials[1].name, "Blue");
    assert_eq!(
        m.materials[1].base_color,
        glam::Vec4::new(0.0, 0.0, 1.0, 1.0)
    );
}

#[test]
fn ticks_per_second_global_later_and_per_set() {
    let key = "Animation { { A } AnimationKey { 2; 2; 0;3;0,0,0;;, 20;3;1,0,0;;; } }";
    let m = load(
        "/m/tps.x",
        &format!(
            "xof 0303txt 0032
            AnimTicksPerSecond {{ 10; }}
            Frame A {{ }}
            AnimationSet s1 {{ {key} }}
            AnimTicksPerSecond {{ 40; }}
            AnimationSet s2 {{ {key} }}
            AnimationSet s3 {{ AnimTicksPerSecond {{ 5; }} {key} }}"
        ),
    );
    let d: Vec<f32> = m.clips.iter().map(|c| c.duration()).collect();
    assert_eq!(d, [2.0, 0.5, 4.0]);
    // Only after the set: still the file's rate.
    let m = load(
        "/m/tps2.x",
        &format!("xof 0303txt 0032\nFrame A {{ }}\nAnimationSet s {{ {key} }}\nAnimTicksPerSecond {{ 20; }}"),
    );
    assert_eq!(m.clips[0].duration(), 1.0);
    // None: 4800.
    let m = load(
        "/m/tps3.x",
        &format!("xof 0303txt 0032\nFrame A {{ }}\nAnimationSet {{ {key} }}"),
    );
    assert_eq!(m.clips[0].duration(), 20.0 / 4800.0);
    assert_eq!(m.clips[0].name(), "AnimationSet0");
}

#[test]
fn matrix_keys_pick_the_nearest_key() {
    // Key type 3 (written by some exporters) is a matrix key like 4.
    let m = load(
        "/m/mat.x",
        "xof 0303txt 0032
        AnimTicksPerSecond { 1; }
        Frame A { }
        AnimationSet s { Animation { { A } AnimationKey { 3; 2;
          0;16;1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;;,
          10;16;1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,7,1;;; } } }",
    );
    assert_eq!(sample(&m, "s", 4.9)[0].translation, Vec3::ZERO);
    assert!(sample(&m, "s", 5.1)[0]
        .translation
        .abs_diff_eq(Vec3::new(0.0, 0.0, -7.0), 1e-6));
}

#[test]
fn unanimated_frames_keep_their_stored_matrix() {
    // B's frame matrix lifts it by 1, but its skin offset is the identity,
    // so the bind pose has B at the origin. A set that animates only A
    // shows B where D3DX would: at its FrameTransformMatrix.
    let m = load(
        "/m/hold.x",
        "xof 0303txt 0032
        Frame A {
          Frame B { FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1;; } }
          Mesh M { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;
            SkinWeights { \"B\"; 3; 0,1,2; 1,1,1; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; } }
        }
        AnimationSet s { Animation { { A } AnimationKey { 2; 1; 0;3;5,0,0;;; } } }",
    );
    assert_eq!(m.skeleton.names(), ["A", "B"]);
    assert_eq!(m.skeleton.bind_local()[1].translation, Vec3::ZERO);
    let pose = sample(&m, "s", 0.0);
    assert_eq!(pose[0].translation, Vec3::new(5.0, 0.0, 0.0));
    assert_eq!(pose[1].translation, Vec3::new(0.0, 1.0, 0.0));
}

#[test]
fn influences_are_truncated_to_the_option() {
    // Vertex 0 has five bones with weights 0.1..0.5 (vertices 1 and 2 have
    // five of weight 1).
    let mut f = String::from("xof 0303txt 0032\nFrame R {\n");
    for b in 0..5 {
        f.push_str(&format!("Frame B{b} {{ }}\n"));
    }
    f.push_str("Mesh M { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;;\n");
    for b in 0..5 {
        f.push_str(&format!(
            "SkinWeights {{ \"B{b}\"; 3; 0,1,2; {w},1,1; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }}\n",
            w = 0.1 * (b + 1) as f32
        ));
    }
    f.push_str("} }\n");
    let m4 = load("/m/k.x", &f);
    let mesh = &m4.meshes[0];
    assert_eq!(mesh.influences.per_vertex, 4);
    let (j, w) = mesh.influences.vertex(0);
    // The four largest (0.5, 0.4, 0.3, 0.2 on slots 4, 3, 2, 1), renormalised.
    assert_eq!(j, [4, 3, 2, 1]);
    assert!((w[0] - 0.5 / 1.4).abs() < 1e-6);
    assert!(
        m4.warnings
            .iter()
            .any(|w| w.contains("3 vertices have more than 4 influences (up to 5)")),
        "{:?}",
        m4.warnings
    );
    let m8 = x::load_from_bytes(
        "/m/k.x",
        f.as_bytes(),
        &LoadOptions {
            max_influences: 8,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(m8.meshes[0].influences.per_vertex, 5);
    assert!(m8.warnings.is_empty(), "{:?}", m8.warnings);
}

#[test]
fn notes_for_tolerated_oddities() {
    let m = load(
        "/m/odd.x",
        "xof 0302txt 0064
        Frame A { Frame B { } }
        Frame X { Frame A { } }
        Frame C { }
        Frame D { { C } }
        Animation loose { { A } }
        AnimationSet s { Animation { { A } AnimationOptions { 1; 0; } AnimationKey { 1; 1; 0;3;1,1,1;;; } } }",
    );
    let all = m.warnings.join("\n");
    assert!(all.contains("several frames are named \"A\""), "{all}");
    assert!(all.contains("frame instancing is not supported"), "{all}");
    assert!(all.contains("outside any AnimationSet"), "{all}");
    assert!(all.contains("spline positions"), "{all}");
    // Scale keys are not mirrored.
    assert_eq!(m.clips[0].name(), "s");
    assert_eq!(sample(&m, "s", 0.0)[0].scale, Vec3::ONE);
}

#[test]
fn the_generic_loader_picks_x_by_extension() {
    let Some(p) = vkskin_tests::asset("x/Testwuson.X") else {
        return;
    };
    let m = vkskin::assets::load(&p).unwrap();
    assert_eq!(m.clips.len(), 3);
}

#[test]
fn zero_scale_frames_load_with_a_warning() {
    // Exporters hide parts by scaling a frame to zero.
    let m = load(
        "/m/zero.x",
        "xof 0303txt 0032
        Frame Hidden { FrameTransformMatrix { 0,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,1;; }
          Mesh { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; } }",
    );
    assert!(
        m.warnings.iter().any(|w| w.contains("singular")),
        "{:?}",
        m.warnings
    );
    let b = m.skeleton.bind_local()[0];
    assert_eq!(b.scale, Vec3::new(0.0, 1.0, 1.0));
    assert_eq!(b.translation, Vec3::new(1.0, 2.0, -3.0));
    assert!(m.meshes[0].positions.iter().all(|p| p.is_finite()));
}
