//! Malformed glTF and GLB input: truncations and corruptions of the real
//! asset files. Each must come back as an `Err` naming the file, the place
//! and the fault — never a panic, a hang or an unbounded allocation.

use std::path::{Path, PathBuf};

use vkskin::assets::gltf::load_from_bytes;
use vkskin::assets::{FaultKind, LoadError, LoadOptions, Model, Place};

const SKIN_01: &str = "gltf/asset-generator/Animation_Skin/Animation_Skin_01.gltf";

fn asset_bytes(rel: &str) -> Option<(PathBuf, Vec<u8>)> {
    let p = vkskin_tests::asset(rel)?;
    let b = std::fs::read(&p).unwrap();
    Some((p, b))
}

fn load(name: &Path, bytes: &[u8], dir: Option<&Path>) -> Result<Model, LoadError> {
    load_from_bytes(name, bytes, dir, &LoadOptions::default())
}

/// Loads `bytes`, expecting an error of `kind` at `place` that names `name`.
fn expect_err(name: &Path, bytes: &[u8], dir: Option<&Path>, kind: FaultKind, place: Place) {
    match load(name, bytes, dir) {
        Ok(_) => panic!("{}: loaded, expected {kind:?} at {place:?}", name.display()),
        Err(e) => {
            assert_eq!(e.file, name, "{e}");
            assert_eq!(e.kind, kind, "{e}");
            assert_eq!(e.place, place, "{e}");
            assert!(!e.message.is_empty());
            // The display form names file and place.
            let s = e.to_string();
            assert!(s.contains(&name.display().to_string()), "{s}");
        }
    }
}

fn item(s: &str) -> Place {
    Place::Item(s.to_string())
}

/// A GLB from JSON text and a binary chunk (both padded to 4 bytes).
fn glb(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut j = json.as_bytes().to_vec();
    while j.len() & 3 != 0 {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while b.len() & 3 != 0 {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}

/// Animation_Skin_01 as (JSON text with its buffer moved into the GLB BIN
/// chunk, the .bin bytes), for byte-level corruption of its data.
fn skin01_parts() -> Option<(String, Vec<u8>)> {
    let (p, text) = asset_bytes(SKIN_01)?;
    let text = String::from_utf8(text).unwrap();
    let bin = std::fs::read(p.with_extension("bin")).unwrap();
    let json = text.replacen("\"uri\": \"Animation_Skin_01.bin\",", "", 1);
    assert_ne!(json, text);
    Some((json, bin))
}

fn put_f32(bin: &mut [u8], at: usize, v: f32) {
    bin[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Edits Animation_Skin_01's JSON (it must change) and loads it from its folder.
fn edited_skin01(from: &str, to: &str, kind: FaultKind, place: Place) {
    let Some((p, text)) = asset_bytes(SKIN_01) else {
        return;
    };
    let text = String::from_utf8(text).unwrap();
    let edited = text.replacen(from, to, 1);
    assert_ne!(edited, text, "pattern {from:?} not found");
    expect_err(&p, edited.as_bytes(), p.parent(), kind, place);
}

#[test]
fn glb_truncated_in_header_json_and_bin() {
    let Some((p, b)) = asset_bytes("gltf/CesiumMan.glb") else {
        return;
    };
    // Inside the 12-byte header: the whole file is too short.
    expect_err(&p, &b[..11], None, FaultKind::Truncated, Place::Byte(11));
    // Any cut after the header leaves the header's length (490956) larger
    // than the file: byte 8 names the length field.
    for cut in [12, 19, 100, 28_000, 200_000, b.len() - 1] {
        expect_err(&p, &b[..cut], None, FaultKind::Truncated, Place::Byte(8));
    }
}

#[test]
fn glb_truncated_with_length_fixed_up() {
    // Cut inside the BIN chunk and patch the header length to match: the
    // BIN chunk header (at 20 + 28356) now claims more than is left.
    let Some((p, b)) = asset_bytes("gltf/CesiumMan.glb") else {
        return;
    };
    let mut cut = b[..300_000].to_vec();
    cut[8..12].copy_from_slice(&300_000u32.to_le_bytes());
    expect_err(
        &p,
        &cut,
        None,
        FaultKind::Truncated,
        Place::Byte(20 + 28_356),
    );
    // Cut inside the JSON chunk the same way.
    let mut cut = b[..5_000].to_vec();
    cut[8..12].copy_from_slice(&5_000u32.to_le_bytes());
    expect_err(&p, &cut, None, FaultKind::Truncated, Place::Byte(12));
}

#[test]
fn glb_bad_version_and_chunk_type() {
    let Some((p, b)) = asset_bytes("gltf/Fox.glb") else {
        return;
    };
    let mut v1 = b.clone();
    v1[4] = 1;
    expect_err(&p, &v1, None, FaultKind::Unsupported, Place::Byte(4));
    let mut bad_chunk = b.clone();
    bad_chunk[16..20].copy_from_slice(b"XXXX");
    expect_err(&p, &bad_chunk, None, FaultKind::Invalid, Place::Byte(12));
}

#[test]
fn glb_chunk_length_beyond_file() {
    let Some((p, mut b)) = asset_bytes("gltf/RiggedFigure.glb") else {
        return;
    };
    b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    expect_err(&p, &b, None, FaultKind::Truncated, Place::Byte(12));
}

#[test]
fn glb_bin_chunk_shorter_than_buffer() {
    let Some((json, bin)) = skin01_parts() else {
        return;
    };
    let name = Path::new("skin01.glb");
    // The buffer says 524 bytes; give the BIN chunk only 400.
    expect_err(
        name,
        &glb(&json, &bin[..400]),
        None,
        FaultKind::Truncated,
        item("buffers[0]"),
    );
    // The untouched conversion loads.
    load(name, &glb(&json, &bin), None).unwrap();
}

#[test]
fn json_truncated_names_line_and_column() {
    let Some((p, b)) = asset_bytes(SKIN_01) else {
        return;
    };
    let e = load(&p, &b[..b.len() / 2], p.parent()).unwrap_err();
    assert_eq!(e.kind, FaultKind::Truncated, "{e}");
    assert!(
        matches!(e.place, Place::Line { line, .. } if line > 1),
        "{e}"
    );
    // An array where the root object should be: a type fault, still placed.
    let mut broken = b.clone();
    broken[0] = b'[';
    let e = load(&p, &broken, p.parent()).unwrap_err();
    assert_eq!(e.kind, FaultKind::Invalid, "{e}");
    assert!(matches!(e.place, Place::Line { line: 2, .. }), "{e}");
}

#[test]
fn accessor_count_beyond_its_data() {
    // POSITION accessor 0 claims 600 million elements in a 72-byte view:
    // refused before any allocation.
    edited_skin01(
        "\"count\": 6,",
        "\"count\": 600000000,",
        FaultKind::OutOfRange,
        item("accessors[0]"),
    );
}

#[test]
fn accessor_offset_beyond_its_view() {
    edited_skin01(
        "\"bufferView\": 0,",
        "\"bufferView\": 0, \"byteOffset\": 64,",
        FaultKind::OutOfRange,
        item("accessors[0]"),
    );
}

#[test]
fn buffer_view_beyond_its_buffer() {
    edited_skin01(
        "\"byteLength\": 72,",
        "\"byteLength\": 7200,",
        FaultKind::OutOfRange,
        item("bufferViews[0]"),
    );
}

#[test]
fn external_buffer_shorter_than_byte_length() {
    edited_skin01(
        "\"byteLength\": 524",
        "\"byteLength\": 5240",
        FaultKind::Truncated,
        item("buffers[0]"),
    );
}

#[test]
fn external_buffer_missing() {
    edited_skin01(
        "\"uri\": \"Animation_Skin_01.bin\"",
        "\"uri\": \"no_such_file.bin\"",
        FaultKind::MissingReference,
        item("buffers[0]"),
    );
    // Loaded from bytes with no folder to look in.
    let Some((p, b)) = asset_bytes(SKIN_01) else {
        return;
    };
    expect_err(
        &p,
        &b,
        None,
        FaultKind::MissingReference,
        item("buffers[0]"),
    );
}

#[test]
fn data_uri_with_bad_base64() {
    edited_skin01(
        "\"uri\": \"Animation_Skin_01.bin\"",
        "\"uri\": \"data:application/octet-stream;base64,AAAA*AAA\"",
        FaultKind::Syntax,
        item("buffers[0]"),
    );
}

#[test]
fn position_accessor_index_out_of_range() {
    // (gltf-json's own validation would panic here; the loader never calls it.)
    edited_skin01(
        "\"POSITION\": 0,",
        "\"POSITION\": 99,",
        FaultKind::OutOfRange,
        item("meshes[0].primitives[0].attributes.POSITION"),
    );
}

#[test]
fn cyclic_hierarchy() {
    // joint1 (node 2) becomes the parent of joint0 (node 1), its own parent.
    edited_skin01(
        "\"name\": \"joint1\"",
        "\"children\": [1], \"name\": \"joint1\"",
        FaultKind::Cycle,
        item("nodes[1]"),
    );
}

#[test]
fn node_with_two_parents() {
    // Node 0 claims joint1 (node 2); node 1, its real parent, is named.
    edited_skin01(
        "\"name\": \"plane\"",
        "\"children\": [2], \"name\": \"plane\"",
        FaultKind::Invalid,
        item("nodes[1].children[0]"),
    );
}

#[test]
fn animation_output_count_mismatch() {
    let Some((p, text)) = asset_bytes(SKIN_01) else {
        return;
    };
    let text = String::from_utf8(text).unwrap();
    // Accessor 7 (the sampler output) is the last "count": 3.
    let at = text.rfind("\"count\": 3,").unwrap();
    let edited = format!("{}\"count\": 2,{}", &text[..at], &text[at + 11..]);
    expect_err(
        &p,
        edited.as_bytes(),
        p.parent(),
        FaultKind::Count,
        item("accessors[7]"),
    );
}

#[test]
fn sparse_accessor_without_data_is_bounded() {
    // Accessor 0 becomes sparse-only with 2 billion elements: the allocation
    // budget refuses it instead of allocating 24 GB of zeros.
    let Some((p, text)) = asset_bytes(SKIN_01) else {
        return;
    };
    let text = String::from_utf8(text).unwrap();
    let edited = text
        .replacen(
            "\"bufferView\": 0,",
            "\"sparse\": {\"count\": 0, \"indices\": {\"bufferView\": 2, \"componentType\": 5125}, \"values\": {\"bufferView\": 0}},",
            1,
        )
        .replacen("\"count\": 6,", "\"count\": 2000000000,", 1);
    expect_err(
        &p,
        edited.as_bytes(),
        p.parent(),
        FaultKind::Count,
        item("accessors[0]"),
    );
}

#[test]
fn non_finite_positions() {
    let Some((json, mut bin)) = skin01_parts() else {
        return;
    };
    put_f32(&mut bin, 4, f32::NAN);
    expect_err(
        Path::new("nan.glb"),
        &glb(&json, &bin),
        None,
        FaultKind::NonFinite,
        item("accessors[0]"),
    );
    let Some((json, mut bin)) = skin01_parts() else {
        return;
    };
    // Animation input times start at byte 464.
    put_f32(&mut bin, 468, f32::INFINITY);
    expect_err(
        Path::new("inf.glb"),
        &glb(&json, &bin),
        None,
        FaultKind::NonFinite,
        item("accessors[6]"),
    );
}

#[test]
fn key_times_out_of_order() {
    let Some((json, mut bin)) = skin01_parts() else {
        return;
    };
    put_f32(&mut bin, 468, 5.0); // times 0, 5, 2
    expect_err(
        Path::new("times.glb"),
        &glb(&json, &bin),
        None,
        FaultKind::Invalid,
        item("accessors[6]"),
    );
}

#[test]
fn joint_index_outside_the_skin() {
    let Some((json, mut bin)) = skin01_parts() else {
        return;
    };
    // JOINTS_0 (u16 VEC4) starts at byte 288; vertex 0 slot 0 has weight 1.
    bin[288..290].copy_from_slice(&7u16.to_le_bytes());
    expect_err(
        Path::new("joint.glb"),
        &glb(&json, &bin),
        None,
        FaultKind::OutOfRange,
        item("meshes[0].primitives[0].attributes.JOINTS_0"),
    );
}

#[test]
fn vertex_index_outside_the_mesh() {
    let Some((json, mut bin)) = skin01_parts() else {
        return;
    };
    // Indices (u32) start at byte 144.
    bin[144..148].copy_from_slice(&99u32.to_le_bytes());
    expect_err(
        Path::new("index.glb"),
        &glb(&json, &bin),
        None,
        FaultKind::OutOfRange,
        item("accessors[2]"),
    );
}

#[test]
fn inverse_bind_matrix_not_affine() {
    let Some((json, mut bin)) = skin01_parts() else {
        return;
    };
    // The IBMs start at byte 336; element 3 of the first (column-major) is
    // its bottom-left entry, which must be 0.
    put_f32(&mut bin, 336 + 12, 1.0);
    expect_err(
        Path::new("ibm.glb"),
        &glb(&json, &bin),
        None,
        FaultKind::Invalid,
        item("accessors[5]"),
    );
}

/// Animation_Skin_01's JSON with every `(from, to)` edit applied once
/// (each must change it).
fn skin01_edited(edits: &[(&str, &str)]) -> Option<(PathBuf, String)> {
    let (p, text) = asset_bytes(SKIN_01)?;
    let mut text = String::from_utf8(text).unwrap();
    for (from, to) in edits {
        let edited = text.replacen(from, to, 1);
        assert_ne!(edited, text, "pattern {from:?} not found");
        text = edited;
    }
    Some((p, text))
}

#[test]
fn morph_targets_on_a_real_asset() {
    // The colours accessor (1: VEC3, 6 elements) as a target's position
    // deltas loads, and the deltas are the colours of the .bin (bytes
    // 72..144).
    let target = (
        r#""indices": 2,"#,
        r#""targets": [{"POSITION": 1}], "indices": 2,"#,
    );
    let Some((p, text)) = skin01_edited(&[target]) else {
        return;
    };
    let m = load(&p, text.as_bytes(), p.parent()).unwrap();
    let bin = std::fs::read(p.with_extension("bin")).unwrap();
    let colours: Vec<f32> = bin[72..144]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let deltas: Vec<f32> = m.meshes[0].morph.targets[0]
        .positions
        .iter()
        .flat_map(|d| d.to_array())
        .collect();
    assert_eq!(deltas, colours);
    assert_eq!(m.morph_sets.len(), 1);
    assert_eq!(m.morph_sets[0].name, "plane");
    // The indices (SCALAR) as deltas.
    edited_skin01(
        "\"indices\": 2,",
        "\"targets\": [{\"NORMAL\": 2}], \"indices\": 2,",
        FaultKind::Invalid,
        item("meshes[0].primitives[0].targets[0].NORMAL"),
    );
    // Two mesh weights for one target.
    let Some((p, text)) = skin01_edited(&[
        target,
        (
            "\"primitives\": [",
            "\"weights\": [0, 1], \"primitives\": [",
        ),
    ]) else {
        return;
    };
    expect_err(
        &p,
        text.as_bytes(),
        p.parent(),
        FaultKind::Count,
        item("meshes[0].weights"),
    );
    // The rotation channel retargeted at node 0's weights: its VEC4 output
    // is not weights.
    let retarget = (
        "\"node\": 2,\n            \"path\": \"rotation\"",
        "\"node\": 0, \"path\": \"weights\"",
    );
    let Some((p, text)) = skin01_edited(&[target, retarget]) else {
        return;
    };
    expect_err(
        &p,
        text.as_bytes(),
        p.parent(),
        FaultKind::Invalid,
        item("animations[0].channels[0]"),
    );
}

/// A small deterministic generator for the corruption sweep.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[test]
fn corruption_sweep_never_panics() {
    // Every GLB: 40 truncations and 120 single-byte corruptions (biased to
    // the JSON chunk and the start of the binary data, where the structure
    // is). Each load returns, Ok or Err; none may panic.
    let files = [
        "gltf/RiggedSimple.glb",
        "gltf/RiggedFigure.glb",
        "gltf/CesiumMan.glb",
        "gltf/Fox.glb",
        "gltf/RecursiveSkeletons.glb",
        "gltf/InterpolationTest.glb",
        "gltf/quad_skin.glb",
    ];
    let mut rng = Lcg(0x5EED);
    let mut errors = 0;
    let mut total = 0;
    for rel in files {
        let Some((p, b)) = asset_bytes(rel) else {
            return;
        };
        let json_end = 20 + u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as usize;
        for i in 0..40 {
            let cut = (b.len() * i / 40).max(1);
            total += 1;
            errors += load(&p, &b[..cut], None).is_err() as usize;
        }
        for i in 0..120 {
            let mut c = b.clone();
            let span = if i % 3 == 0 { c.len() } else { json_end + 256 };
            let at = (rng.next() as usize) % span.min(c.len());
            c[at] = match i % 4 {
                0 => rng.next() as u8,
                1 => b'9',
                2 => 0xFF,
                _ => b'"',
            };
            total += 1;
            errors += load(&p, &c, None).is_err() as usize;
        }
    }
    eprintln!("{errors} of {total} corrupted loads were errors, the rest loaded");
    assert!(errors > total / 3);
}
