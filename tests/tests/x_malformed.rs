//! Malformed .x input: truncations and corruptions of the real files, and
//! small hostile files. Every one must be an `Err` naming the file, the
//! place and the fault: never a panic, a hang or a huge allocation.

mod x_common;

use vkskin::assets::x::{self, Limits};
use vkskin::assets::{FaultKind, LoadError, LoadOptions, Place};
use x_common::*;

fn load(name: &str, bytes: &[u8]) -> Result<vkskin::assets::Model, LoadError> {
    x::load_from_bytes(name, bytes, &LoadOptions::default())
}

fn err(name: &str, bytes: &[u8]) -> LoadError {
    match load(name, bytes) {
        Ok(_) => panic!("{name}: loaded, expected an error"),
        Err(e) => {
            assert_eq!(e.file.to_str(), Some(name));
            assert!(!e.message.is_empty());
            e
        }
    }
}

fn line(e: &LoadError) -> usize {
    match e.place {
        Place::Line { line, .. } => line,
        ref p => panic!("expected a line, got {p:?} ({e})"),
    }
}

fn byte(e: &LoadError) -> u64 {
    match e.place {
        Place::Byte(b) => b,
        ref p => panic!("expected a byte offset, got {p:?} ({e})"),
    }
}

#[test]
fn skinweights_vertex_index_out_of_range() {
    let Some((_, d)) = read("x/malformed_skinweights_oob.x") else {
        return;
    };
    let e = err("oob.x", &d);
    assert_eq!(e.kind, FaultKind::OutOfRange);
    let at = find(&d, b"1000000").unwrap();
    assert_eq!(line(&e), line_of(&d, at));
    assert!(
        e.to_string().starts_with("oob.x: line 244, column 5: "),
        "{e}"
    );
}

#[test]
fn tiny_truncated_anywhere() {
    let Some((_, d)) = read("x/tiny.x") else {
        return;
    };
    for k in 1..64 {
        let cut = d.len() * k / 64;
        let e = err("tiny_cut.x", &d[..cut]);
        assert!(
            matches!(e.kind, FaultKind::Truncated | FaultKind::Count),
            "cut at {cut}: {e}"
        );
        // The place is a line of the text, at or before the cut.
        assert!(line(&e) <= line_of(&d, cut), "cut at {cut}: {e}");
    }
}

#[test]
fn tiny_vertex_count_beyond_the_data() {
    let Some((_, d)) = read("x/tiny.x") else {
        return;
    };
    let bad = replace_first(&d, "Mesh {\n    4432;", "Mesh {\n    4000000000;");
    let e = err("tiny_count.x", &bad);
    assert_eq!(e.kind, FaultKind::Count);
    assert_eq!(line(&e), 48);
}

#[test]
fn tiny_non_finite_coordinate() {
    let Some((_, d)) = read("x/tiny.x") else {
        return;
    };
    let at = find(&d, b"-34.720058;").unwrap();
    for nan in ["1.#QNAN0", "-1.#IND00", "1e999", "nan"] {
        let bad = replace_first(&d, "-34.720058;", &format!("{nan};"));
        let e = err("tiny_nan.x", &bad);
        assert_eq!(e.kind, FaultKind::NonFinite, "{nan}: {e}");
        assert_eq!(line(&e), line_of(&d, at), "{nan}");
        assert_eq!(line(&e), 49, "{nan}");
    }
}

#[test]
fn tiny_face_index_out_of_range() {
    let Some((_, d)) = read("x/tiny.x") else {
        return;
    };
    let bad = replace_first(&d, "3;4430,185,3509;,", "3;4430,185,9999;,");
    let e = err("tiny_face.x", &bad);
    assert_eq!(e.kind, FaultKind::OutOfRange);
    assert_eq!(line(&e), 11320);
    // The same in the normals' face list.
    let at = find(&d, b"MeshNormals").unwrap();
    let mut bad = d.clone();
    let rel = find(&d[at..], b"3;4430,185,3509;,").unwrap() + at;
    bad.splice(rel..rel + 16, b"3;4430,185,9999;".iter().copied());
    let e = err("tiny_nface.x", &bad);
    assert_eq!(e.kind, FaultKind::OutOfRange);
    assert_eq!(line(&e), 22597);
}

#[test]
fn tiny_normal_face_count_mismatch() {
    let Some((_, d)) = read("x/tiny.x") else {
        return;
    };
    let at = find(&d, b"MeshNormals").unwrap();
    let rel = at + find(&d[at..], b"\n     6841;").unwrap();
    let mut bad = d.clone();
    bad.splice(rel..rel + 11, b"\n     6840;".iter().copied());
    let e = err("tiny_nfaces.x", &bad);
    assert_eq!(e.kind, FaultKind::Invalid);
    assert!(e.message.contains("6840"), "{e}");
}

#[test]
fn tiny_4anim_unknown_key_type() {
    let Some((_, d)) = read("x/tiny_4anim.x") else {
        return;
    };
    let from = "AnimationKey {\n   0;";
    let at = find(&d, from.as_bytes()).unwrap();
    let bad = replace_first(&d, from, "AnimationKey {\n   7;");
    let e = err("tiny_key.x", &bad);
    assert_eq!(e.kind, FaultKind::UnknownKeyType);
    assert_eq!(line(&e), line_of(&d, at) + 1);
    assert!(e.message.contains("key type 7"), "{e}");
}

#[test]
fn tiny_4anim_animation_of_a_missing_frame() {
    let Some((_, d)) = read("x/tiny_4anim.x") else {
        return;
    };
    let at = find(&d, b"{ Scene_Root }").unwrap();
    let bad = replace_first(&d, "{ Scene_Root }", "{ No_Such_Frame }");
    let e = err("tiny_ref.x", &bad);
    assert_eq!(e.kind, FaultKind::MissingReference);
    assert_eq!(line(&e), line_of(&d, at));
    assert!(e.message.contains("No_Such_Frame"), "{e}");
}

#[test]
fn tiny_4anim_keys_out_of_order() {
    let Some((_, d)) = read("x/tiny_4anim.x") else {
        return;
    };
    // Loiter's first Animation: keys at 0 and 63520; make the second 0 and
    // the first 63520.
    let bad = replace_first(
        &d,
        "0;4;1.000000,0.000000,0.000000,0.000000;;,\n   63520;",
        "63520;4;1.000000,0.000000,0.000000,0.000000;;,\n   0;",
    );
    let e = err("tiny_order.x", &bad);
    assert_eq!(e.kind, FaultKind::Invalid);
    assert!(e.message.contains("comes before"), "{e}");
}

#[test]
fn tiny_4anim_key_with_wrong_value_count() {
    let Some((_, d)) = read("x/tiny_4anim.x") else {
        return;
    };
    let bad = replace_first(
        &d,
        "0;3;1.000000,1.000000,1.000000;;,",
        "0;4;1.000000,1.000000,1.000000;;,",
    );
    let e = err("tiny_width.x", &bad);
    assert!(
        matches!(e.kind, FaultKind::Invalid | FaultKind::Count),
        "{e}"
    );
}

#[test]
fn bat_truncated_compressed() {
    let Some((_, d)) = read("x/bat.x") else {
        return;
    };
    for cut in [17, 20, 22, 25, 100, 20_000, 700_000, d.len() - 1] {
        let e = err("bat_cut.x", &d[..cut]);
        assert_eq!(e.kind, FaultKind::Truncated, "cut {cut}: {e}");
        assert!(byte(&e) <= cut as u64);
    }
}

#[test]
fn bat_corrupt_deflate_and_sizes() {
    let Some((_, d)) = read("x/bat.x") else {
        return;
    };
    // A corrupt deflate stream in the second block.
    let mut bad = d.clone();
    for b in &mut bad[20_300..20_340] {
        *b ^= 0x5a;
    }
    let e = err("bat_flip.x", &bad);
    assert!(
        matches!(e.kind, FaultKind::Invalid | FaultKind::Truncated),
        "{e}"
    );
    // The declared size disagrees with the blocks.
    let mut bad = d.clone();
    bad[16..20].copy_from_slice(&(3_466_575u32 + 1000).to_le_bytes());
    let e = err("bat_size.x", &bad);
    assert_eq!(byte(&e), d.len() as u64);
    // A block without its signature.
    let mut bad = d.clone();
    bad[24] = b'X';
    let e = err("bat_ck.x", &bad);
    assert_eq!(e.kind, FaultKind::Invalid);
    assert_eq!(byte(&e), 24);
    // Over the decompression limit: refused before anything is inflated.
    let e = x::load_from_bytes_with_limits(
        "bat_big.x",
        &d,
        &LoadOptions::default(),
        &Limits {
            max_decompressed: 1 << 20,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, FaultKind::Count);
}

#[test]
fn cube_binary_truncated_at_every_byte() {
    let Some((_, d)) = read("x/test_cube_binary.x") else {
        return;
    };
    // The format has no end marker: a cut right after a top-level object
    // (or a template) leaves a valid, shorter file. Every other cut is an
    // error.
    let mut boundaries = vec![16];
    let mut depth = 0i32;
    for t in bin_tokens(&d, 4) {
        match t.id {
            10 => depth += 1,
            11 => {
                depth -= 1;
                if depth == 0 {
                    boundaries.push(t.payload.end);
                }
            }
            _ => {}
        }
    }
    assert_eq!(boundaries.last(), Some(&d.len()));
    for cut in 0..d.len() {
        match load("cube_cut.x", &d[..cut]) {
            Ok(_) => assert!(boundaries.contains(&cut), "cut {cut} loads"),
            Err(e) => assert!(
                matches!(e.kind, FaultKind::Truncated | FaultKind::Count),
                "cut {cut}: {e}"
            ),
        }
    }
}

#[test]
fn cube_binary_list_count_beyond_the_file() {
    let Some((_, d)) = read("x/test_cube_binary.x") else {
        return;
    };
    let toks = bin_tokens(&d, 4);
    // The first float list (the Material's): claim 2^31 floats.
    let t = toks.iter().find(|t| t.id == 7).unwrap();
    let mut bad = d.clone();
    bad[t.at + 2..t.at + 6].copy_from_slice(&0x8000_0000u32.to_le_bytes());
    let e = err("cube_count.x", &bad);
    assert_eq!(e.kind, FaultKind::Count);
    assert_eq!(byte(&e), t.at as u64);
}

#[test]
fn cube_binary_unknown_token_and_bad_skin_index() {
    let Some((_, d)) = read("x/test_cube_binary.x") else {
        return;
    };
    let toks = bin_tokens(&d, 4);
    let brace = toks.iter().rev().find(|t| t.id == 11).unwrap();
    let mut bad = d.clone();
    bad[brace.at..brace.at + 2].copy_from_slice(&99u16.to_le_bytes());
    let e = err("cube_tok.x", &bad);
    assert_eq!(e.kind, FaultKind::Syntax);
    assert_eq!(byte(&e), brace.at as u64);
    // SkinWeights' integer list: nWeights then the vertex indices.
    // The data object (the last NAME "SkinWeights"; the first is its template).
    let sw = toks
        .iter()
        .rposition(|t| t.id == 1 && &d[t.payload.clone()] == b"SkinWeights")
        .unwrap();
    let ints = toks[sw..].iter().find(|t| t.id == 6).unwrap();
    let third = ints.payload.start + 4 * 3;
    let mut bad = d.clone();
    bad[third..third + 4].copy_from_slice(&24u32.to_le_bytes());
    let e = err("cube_oob.x", &bad);
    assert_eq!(e.kind, FaultKind::OutOfRange);
    assert_eq!(byte(&e), third as u64);
}

#[test]
fn cube_compressed_errors_name_decompressed_offsets() {
    let Some((_, d)) = read("x/test_cube_binary.x") else {
        return;
    };
    let toks = bin_tokens(&d, 4);
    let brace = toks.iter().rev().find(|t| t.id == 11).unwrap();
    let mut bad = d.clone();
    bad[brace.at..brace.at + 2].copy_from_slice(&99u16.to_le_bytes());
    let e = err("cube_z.x", &mszip_stored(&bad, b"bzip"));
    assert_eq!(byte(&e), brace.at as u64);
    assert!(e.message.contains("decompressed"), "{e}");
}

#[test]
fn cube_text_material_index_and_reference() {
    let Some((_, d)) = read("x/test_cube_text.x") else {
        return;
    };
    let bad = replace_first(&d, "    1;\n    12;\n    0,", "    1;\n    12;\n    5,");
    let e = err("cube_mat.x", &bad);
    assert_eq!(e.kind, FaultKind::OutOfRange);
    let bad = replace_first(&d, "{ Material }", "{ Missing }");
    let e = err("cube_ref.x", &bad);
    assert_eq!(e.kind, FaultKind::MissingReference);
    let bad = replace_first(&d, "    1;\n    12;", "    1;\n    11;");
    let e = err("cube_nmat.x", &bad);
    assert_eq!(e.kind, FaultKind::Invalid);
}

#[test]
fn cube_text_projective_matrix_and_zero_tick_rate() {
    let Some((_, d)) = read("x/test_cube_text.x") else {
        return;
    };
    let bad = replace_first(
        &d,
        "0.000000,0.000000,1.000000,0.000000,0.000000,0.000000,0.000000,1.000000;;",
        "0.000000,0.000000,1.000000,0.500000,0.000000,0.000000,0.000000,1.000000;;",
    );
    let e = err("cube_proj.x", &bad);
    assert_eq!(e.kind, FaultKind::Invalid);
    assert!(e.message.contains("not affine"), "{e}");
    let mut bad = replace_first(
        &d,
        "AnimTicksPerSecond {\n 24;",
        "AnimTicksPerSecond {\n 0;",
    );
    bad.extend_from_slice(
        b"AnimationSet s { Animation { { Cube } AnimationKey { 2; 1; 0;3;0,0,0;;; } } }\n",
    );
    let e = err("cube_tps.x", &bad);
    assert_eq!(e.kind, FaultKind::Invalid);
}

#[test]
fn headers() {
    for (bytes, kind) in [
        (&b""[..], FaultKind::Truncated),
        (b"xof 0303", FaultKind::Truncated),
        (b"PK\x03\x04 not a model at all", FaultKind::Unsupported),
        (b"xof 0303abcd0032\n", FaultKind::Unsupported),
        (b"xof 0303txt 0016\n", FaultKind::Unsupported),
        (b"xof 0x03txt 0032\n", FaultKind::Invalid),
        (b"xof 0203txt 0032\n", FaultKind::Unsupported),
    ] {
        let e = err("h.x", bytes);
        assert_eq!(e.kind, kind, "{:?}: {e}", String::from_utf8_lossy(bytes));
        assert_eq!(e.place, Place::Byte(0));
    }
}

#[test]
fn nesting_depth_is_limited() {
    let mut s = String::from("xof 0303txt 0032\n");
    for _ in 0..100_000 {
        s.push_str("Frame {");
    }
    let e = err("deep.x", s.as_bytes());
    assert_eq!(e.kind, FaultKind::Invalid);
    assert!(e.message.contains("nested"), "{e}");
    // Templates too.
    let s = format!("xof 0303txt 0032\ntemplate T {{{}", "{".repeat(100_000));
    assert!(load("deept.x", s.as_bytes()).is_err());
}

#[test]
fn clip_joint_pairs_are_limited() {
    // 200 frames and 200 animation sets: 40 000 runtime joint channels from
    // a few kilobytes. Over the limit it is an error, not an allocation.
    let mut s = String::from("xof 0303txt 0032\n");
    for i in 0..200 {
        s.push_str(&format!("Frame F{i} {{ }}\n"));
    }
    for _ in 0..200 {
        s.push_str("AnimationSet { Animation { { F0 } AnimationKey { 2; 1; 0;3;0,0,0;;; } } }\n");
    }
    let limits = Limits {
        max_clip_joints: 10_000,
        ..Limits::default()
    };
    let e =
        x::load_from_bytes_with_limits("pairs.x", s.as_bytes(), &LoadOptions::default(), &limits)
            .unwrap_err();
    assert_eq!(e.kind, FaultKind::Count);
    assert_eq!(
        e.place,
        Place::Line {
            line: 252,
            column: 1
        }
    );
    assert_eq!(load("pairs.x", s.as_bytes()).unwrap().clips.len(), 200);
}

#[test]
fn cyclic_and_missing_frame_references() {
    let s = "xof 0303txt 0032\nFrame A { Frame B { { A } } }\n";
    let e = err("cycle.x", s.as_bytes());
    assert_eq!(e.kind, FaultKind::Cycle);
    assert_eq!(
        e.place,
        Place::Line {
            line: 2,
            column: 21
        }
    );
    let s = "xof 0303txt 0032\nFrame A { { B } }\n";
    assert_eq!(
        err("missing.x", s.as_bytes()).kind,
        FaultKind::MissingReference
    );
    let s = "xof 0303txt 0032\nFrame A { }\nAnimationSet s { Animation { AnimationKey { 2; 1; 0;3;0,0,0;;; } } }\n";
    assert_eq!(
        err("noref.x", s.as_bytes()).kind,
        FaultKind::MissingReference
    );
}

#[test]
fn unterminated_tokens_and_strays() {
    for (s, kind) in [
        ("Frame A { FrameTransformMatrix { 1,0,0", FaultKind::Truncated),
        ("Mesh { 1; 0;0;0;; 0;; MeshMaterialList { 1; 0;; Material { 1;1;1;1;; 0; 0;0;0;; 0;0;0;; TextureFilename { \"a.png", FaultKind::Truncated),
        ("Frame A <1234-5678", FaultKind::Truncated),
        ("} Frame A { }", FaultKind::Syntax),
        ("1.5", FaultKind::Syntax),
        ("Frame A { 1.2.3 }", FaultKind::Syntax),
        ("Frame A B C { }", FaultKind::Syntax),
    ] {
        let f = format!("xof 0303txt 0032\n{s}");
        let e = err("t.x", f.as_bytes());
        assert_eq!(e.kind, kind, "{s}: {e}");
    }
}

#[test]
fn options_out_of_range_are_errors() {
    let f = b"xof 0303txt 0032\n";
    for k in [0, 9] {
        let e = x::load_from_bytes(
            "o.x",
            f,
            &LoadOptions {
                max_influences: k,
                ..LoadOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, FaultKind::Invalid);
    }
}

/// Deterministic corruption of the small real files: random byte changes,
/// insertions and deletions. Whatever comes out, nothing panics.
#[test]
fn random_corruptions_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for f in [
        "x/test_cube_text.x",
        "x/test_cube_binary.x",
        "x/test_cube_compressed.x",
        "x/kwxport_test_cubewithvcolors.x",
    ] {
        let Some((_, d)) = read(f) else { return };
        let mut errors = 0;
        for _ in 0..1500 {
            let mut b = d.clone();
            for _ in 0..1 + rnd() % 4 {
                let at = 16 + (rnd() as usize) % (b.len() - 16);
                match rnd() % 3 {
                    0 => b[at] = rnd() as u8,
                    1 => b.insert(at, rnd() as u8),
                    _ => {
                        b.remove(at);
                    }
                }
            }
            errors += load("r.x", &b).is_err() as usize;
        }
        assert!(errors > 0, "{f}: no corruption was noticed");
    }
}

#[test]
fn vertex_colours_naming_a_missing_vertex_or_cut_short() {
    let mesh = |colors: &str| {
        format!("xof 0303txt 0032\nMesh M {{ 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; {colors} }}\n")
    };
    let e = err(
        "colours.x",
        mesh("MeshVertexColors { 1; 7; 1;1;1;1;;; }").as_bytes(),
    );
    assert_eq!(e.kind, FaultKind::OutOfRange, "{e}");
    assert!(e.to_string().contains("names vertex 7 of 3"), "{e}");
    // More colours announced than values follow.
    let e = err(
        "colours2.x",
        mesh("MeshVertexColors { 9; 0; 1;1;1;1;;; }").as_bytes(),
    );
    assert_eq!(e.kind, FaultKind::Count, "{e}");
}
