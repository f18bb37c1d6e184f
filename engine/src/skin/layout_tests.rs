//! Host structs that mirror shader blocks, checked against the compiled
//! SPIR-V's explicit layout (offsets and strides), so a change on one side
//! without the other fails here rather than as garbage on screen.

use std::mem::{offset_of, size_of};

use crate::anim::Affine4x3;
use crate::gpu::reflect::struct_layout;
use crate::gpu::{compile, ShaderDesc, ShaderSources};

use super::{CapturedVertex, FrameUniforms};

fn skin_spirv() -> Vec<u32> {
    compile(
        &ShaderSources::embedded(),
        &ShaderDesc::new("skin/lbs_4x3_ubo.vert")
            .define("PALETTE_CAPACITY", 7)
            .define("SKIN_CAPTURE", 1),
    )
    .unwrap()
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
fn palette_4x3_rows_match_affine4x3() {
    let l = struct_layout(&skin_spirv(), "Palette4x3").unwrap();
    let rows = l.member("rows").unwrap();
    assert_eq!(rows.offset, 0);
    assert_eq!(rows.array_stride, Some(16));
    assert_eq!(3 * 16, size_of::<Affine4x3>());
    assert_eq!(super::Palette4x3Ubo::BYTES_PER_BONE, 48);
}

#[test]
fn captured_vertex_matches_the_shader_struct() {
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
    let block = struct_layout(&spirv, "Capture").unwrap();
    let arr = block.member("vertices").unwrap();
    assert_eq!(arr.offset, 0);
    assert_eq!(arr.array_stride, Some(size_of::<CapturedVertex>() as u32));
}

#[test]
fn reflection_sees_a_mismatch() {
    // The check is only worth something if a different layout reads different.
    let l = struct_layout(&skin_spirv(), "FrameUniforms").unwrap();
    assert_ne!(l.member("light").unwrap().offset, 64);
    assert!(struct_layout(&skin_spirv(), "NoSuchBlock").is_none());
}
