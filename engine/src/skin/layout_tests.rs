//! Host structs that mirror shader blocks, checked against the compiled
//! SPIR-V's explicit layout (offsets and strides), so a change on one side
//! without the other fails here rather than as garbage on screen.

use std::mem::{offset_of, size_of};

use crate::gpu::reflect::struct_layout;
use crate::gpu::{compile, ShaderDesc, ShaderSources};

use super::encoding::{Encoding, ENCODINGS};
use super::registry::Stage;
use super::storage::{Storage, STORAGES};
use super::{CaptureHeader, CapturedVertex, ComputePush, DrawPush, FrameUniforms};

/// A path's generated main file, compiled the way `SkinPath` does.
fn path_spirv(
    storage: &dyn Storage,
    encoding: &dyn Encoding,
    stage: Stage,
    capture: bool,
) -> Vec<u32> {
    path_spirv_with(storage, encoding, stage, capture, false)
}

/// [`path_spirv`], optionally the MORPH permutation.
fn path_spirv_with(
    storage: &dyn Storage,
    encoding: &dyn Encoding,
    stage: Stage,
    capture: bool,
    morph: bool,
) -> Vec<u32> {
    path_spirv_defines(storage, encoding, stage, capture, morph, &[])
}

/// [`path_spirv_with`] with `extra` defines (each set to 1).
fn path_spirv_defines(
    storage: &dyn Storage,
    encoding: &dyn Encoding,
    stage: Stage,
    capture: bool,
    morph: bool,
    extra: &[&str],
) -> Vec<u32> {
    let (file, prelude, stage_file) = match stage {
        Stage::Compute => (
            "gen/t.comp",
            "#define SKIN_STAGE_COMPUTE 1\n",
            "skin/compute.glsl",
        ),
        _ => ("gen/t.vert", "", "skin/vertex.glsl"),
    };
    let src = format!(
        "#version 460\n{prelude}#include \"{}\"\n#include \"{}\"\n#include \"{stage_file}\"\n",
        storage.shader(),
        encoding.shader()
    );
    let mut desc = ShaderDesc::new(file)
        .define("PALETTE_VEC4S", 24)
        .define("INFLUENCES", 8);
    if capture {
        desc = desc.define("SKIN_CAPTURE", 1);
    }
    if morph {
        desc = desc.define("MORPH", 1);
    }
    for name in extra {
        desc = desc.define(name, 1);
    }
    compile(&ShaderSources::embedded().with(file, src), &desc).unwrap()
}

/// The reference shader: the storage-buffer palette (the compute stage's
/// first storage), 4x3, vertex stage, capture on.
fn skin_spirv() -> Vec<u32> {
    path_spirv(compute_storage(), ENCODINGS[0], Stage::Vertex, true)
}

fn compute_storage() -> &'static dyn Storage {
    *STORAGES.iter().find(|s| s.serves_compute()).unwrap()
}

#[test]
fn every_storage_and_encoding_compiles_in_both_stages() {
    for &storage in STORAGES {
        for &encoding in ENCODINGS {
            path_spirv(storage, encoding, Stage::Vertex, false);
            path_spirv(storage, encoding, Stage::Vertex, true);
            if storage.serves_compute() {
                path_spirv(storage, encoding, Stage::Compute, false);
            }
        }
    }
}

#[test]
fn every_storage_and_encoding_compiles_with_morph_targets() {
    for &storage in STORAGES {
        for &encoding in ENCODINGS {
            path_spirv_with(storage, encoding, Stage::Vertex, true, true);
            if storage.serves_compute() {
                path_spirv_with(storage, encoding, Stage::Compute, false, true);
            }
        }
    }
}

#[test]
fn every_storage_and_encoding_compiles_with_tangents() {
    for &storage in STORAGES {
        for &encoding in ENCODINGS {
            for (morph, extra) in [
                (false, &["TANGENTS"][..]),
                (true, &["TANGENTS", "MOTION"][..]),
            ] {
                path_spirv_defines(storage, encoding, Stage::Vertex, true, morph, extra);
                if storage.serves_compute() {
                    path_spirv_defines(storage, encoding, Stage::Compute, false, morph, extra);
                }
            }
        }
    }
}

#[test]
fn morph_entries_match_the_shader_blocks() {
    let spirv = path_spirv_with(compute_storage(), ENCODINGS[0], Stage::Vertex, true, true);
    let e = struct_layout(&spirv, "MorphEntries").unwrap();
    assert_eq!(e.member("e").unwrap().offset, 0);
    assert_eq!(size_of::<super::morph::MorphEntry>(), 8);
}

#[test]
fn frame_uniforms_match_the_shader_block() {
    let l = struct_layout(&skin_spirv(), "FrameUniforms").unwrap();
    assert_eq!(l.members.len(), 3);
    assert_eq!(
        l.member("view_proj").unwrap().offset as usize,
        offset_of!(FrameUniforms, view_proj)
    );
    assert_eq!(
        l.member("color").unwrap().offset as usize,
        offset_of!(FrameUniforms, color)
    );
    assert_eq!(
        l.member("light").unwrap().offset as usize,
        offset_of!(FrameUniforms, light)
    );
    // The last member is a vec4: the block ends 16 bytes after it.
    assert_eq!(
        l.member("light").unwrap().offset as usize + 16,
        size_of::<FrameUniforms>()
    );
}

#[test]
fn palettes_are_arrays_of_vec4() {
    for &storage in STORAGES {
        let Some(block) = storage.glsl_block() else {
            continue; // texels, no block
        };
        let spirv = path_spirv(storage, ENCODINGS[2], Stage::Vertex, false);
        let l = struct_layout(&spirv, block).unwrap_or_else(|| panic!("{block}"));
        let v = l.member("v").unwrap();
        assert_eq!(
            (v.offset, v.array_stride),
            (0, Some(16)),
            "{}",
            storage.name()
        );
    }
}

/// Every storage's push prefix (the fields it opens the push block with)
/// is as long as the host writes, in both stages.
#[test]
fn push_prefixes_match_the_shader_blocks() {
    for &storage in STORAGES.iter().filter(|s| !s.in_push_constants()) {
        let prefix = storage.push_prefix_len() as u32;
        let spirv = path_spirv(storage, ENCODINGS[0], Stage::Vertex, false);
        let l = struct_layout(&spirv, "DrawPush").unwrap();
        assert_eq!(
            l.member("palette_base").unwrap().offset,
            prefix,
            "{}",
            storage.name()
        );
        if storage.serves_compute() {
            let spirv = path_spirv(storage, ENCODINGS[0], Stage::Compute, false);
            let l = struct_layout(&spirv, "ComputePush").unwrap();
            assert_eq!(
                l.member("palette_base").unwrap().offset,
                prefix,
                "{}",
                storage.name()
            );
        }
    }
}

#[test]
fn draw_push_matches_the_shader_block() {
    let l = struct_layout(&skin_spirv(), "DrawPush").unwrap();
    for (name, off) in [
        ("palette_base", offset_of!(DrawPush, palette_base)),
        ("palette_stride", offset_of!(DrawPush, palette_stride)),
        ("first_instance", offset_of!(DrawPush, first_instance)),
        ("previous_offset", offset_of!(DrawPush, previous_offset)),
    ] {
        assert_eq!(l.member(name).unwrap().offset as usize, off, "{name}");
    }
    assert_eq!(size_of::<DrawPush>(), 16);
}

#[test]
fn compute_push_matches_the_shader_block() {
    let spirv = path_spirv(compute_storage(), ENCODINGS[0], Stage::Compute, false);
    let l = struct_layout(&spirv, "ComputePush").unwrap();
    for (name, off) in [
        ("palette_base", offset_of!(ComputePush, palette_base)),
        ("palette_stride", offset_of!(ComputePush, palette_stride)),
        ("vertex_count", offset_of!(ComputePush, vertex_count)),
        ("instance_count", offset_of!(ComputePush, instance_count)),
        ("out_base", offset_of!(ComputePush, out_base)),
        ("first_record", offset_of!(ComputePush, first_record)),
    ] {
        assert_eq!(l.member(name).unwrap().offset as usize, off, "{name}");
    }
}

#[test]
fn captured_vertex_and_header_match_the_shader() {
    let spirv = skin_spirv();
    let v = struct_layout(&spirv, "CapturedVertex").unwrap();
    assert_eq!(
        v.member("position").unwrap().offset as usize,
        offset_of!(CapturedVertex, position)
    );
    assert_eq!(
        v.member("normal").unwrap().offset as usize,
        offset_of!(CapturedVertex, normal)
    );
    assert_eq!(
        v.member("previous").unwrap().offset as usize,
        offset_of!(CapturedVertex, previous)
    );
    assert_eq!(
        v.member("tangent").unwrap().offset as usize,
        offset_of!(CapturedVertex, tangent)
    );
    let block = struct_layout(&spirv, "Capture").unwrap();
    for (name, off) in [
        ("vertex_count", offset_of!(CaptureHeader, vertex_count)),
        ("first", offset_of!(CaptureHeader, first)),
        ("capacity", offset_of!(CaptureHeader, capacity)),
    ] {
        assert_eq!(block.member(name).unwrap().offset as usize, off, "{name}");
    }
    let arr = block.member("vertices").unwrap();
    assert_eq!(arr.offset as usize, size_of::<CaptureHeader>());
    assert_eq!(arr.array_stride, Some(size_of::<CapturedVertex>() as u32));
}

#[test]
fn reflection_sees_a_mismatch() {
    // The check is only worth something if a different layout reads different.
    let l = struct_layout(&skin_spirv(), "FrameUniforms").unwrap();
    assert_ne!(l.member("light").unwrap().offset, 64);
    assert!(struct_layout(&skin_spirv(), "NoSuchBlock").is_none());
}

#[test]
fn material_uniforms_match_the_shader_block() {
    let spirv = compile(
        &ShaderSources::embedded(),
        &ShaderDesc::new(super::path::SKINNED_FRAGMENT).define("MATERIAL_TARGET_UNORM", 1),
    )
    .unwrap();
    let l = struct_layout(&spirv, "MaterialUniforms").unwrap();
    assert_eq!(l.members.len(), 2);
    assert_eq!(
        l.member("base_color").unwrap().offset as usize,
        offset_of!(super::MaterialUniforms, base_color)
    );
    assert_eq!(
        l.member("alpha").unwrap().offset as usize,
        offset_of!(super::MaterialUniforms, alpha)
    );
    assert_eq!(
        l.member("alpha").unwrap().offset as usize + 16,
        size_of::<super::MaterialUniforms>()
    );
}
