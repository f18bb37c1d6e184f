//! The vertex input of the graphics pipelines: the vertex stage's mesh
//! streams, or the plain pipeline's skinned positions and normals, and the
//! instance records of both.

use super::super::instance::InstanceRecord;
use super::super::mesh::{BaseVertex, InfluenceVertex};
use crate::gpu::vk;

/// The vertex input of the vertex stage (streams 0-4) or of the plain
/// pipeline (skinned positions 0, normals 1, instances 3; with `motion`
/// previous positions 5 at location 12; the base vertices' texture
/// coordinates 6 at location 2); both read the vertex colours from stream
/// 7 at location 13. With `tangents` (meshes with tangents) both read
/// stream 8 at location 14 (vec4): the bind-pose tangents, or the
/// skinned ones of the output.
pub(super) fn vertex_input(
    vertex_stage: bool,
    influences: u32,
    capture: bool,
    motion: bool,
    tangents: bool,
) -> (
    Vec<vk::VertexInputBindingDescription>,
    Vec<vk::VertexInputAttributeDescription>,
) {
    let binding = |b: u32, stride: usize, rate| {
        vk::VertexInputBindingDescription::default()
            .binding(b)
            .stride(stride as u32)
            .input_rate(rate)
    };
    let attr = |location: u32, b: u32, format, offset: usize| {
        vk::VertexInputAttributeDescription::default()
            .location(location)
            .binding(b)
            .format(format)
            .offset(offset as u32)
    };
    let v = vk::VertexInputRate::VERTEX;
    let f3 = vk::Format::R32G32B32_SFLOAT;
    let f4 = vk::Format::R32G32B32A32_SFLOAT;
    let u4 = vk::Format::R16G16B16A16_UINT;
    let mut bindings = Vec::new();
    let mut attrs = Vec::new();
    if vertex_stage {
        use std::mem::offset_of;
        bindings.push(binding(0, std::mem::size_of::<BaseVertex>(), v));
        attrs.push(attr(0, 0, f3, offset_of!(BaseVertex, position)));
        attrs.push(attr(1, 0, f3, offset_of!(BaseVertex, normal)));
        attrs.push(attr(
            2,
            0,
            vk::Format::R32G32_SFLOAT,
            offset_of!(BaseVertex, uv),
        ));
        let iv = std::mem::size_of::<InfluenceVertex>();
        bindings.push(binding(1, iv, v));
        attrs.push(attr(3, 1, u4, offset_of!(InfluenceVertex, joints)));
        attrs.push(attr(4, 1, f4, offset_of!(InfluenceVertex, weights)));
        if influences > 4 {
            bindings.push(binding(2, iv, v));
            attrs.push(attr(5, 2, u4, offset_of!(InfluenceVertex, joints)));
            attrs.push(attr(6, 2, f4, offset_of!(InfluenceVertex, weights)));
        }
        if capture {
            bindings.push(binding(4, 4, v));
            attrs.push(attr(11, 4, vk::Format::R32_UINT, 0));
        }
    } else {
        bindings.push(binding(0, 12, v));
        bindings.push(binding(1, 12, v));
        attrs.push(attr(0, 0, f3, 0));
        attrs.push(attr(1, 1, f3, 0));
        if motion {
            bindings.push(binding(5, 12, v));
            attrs.push(attr(12, 5, f3, 0));
        }
        bindings.push(binding(6, std::mem::size_of::<BaseVertex>(), v));
        attrs.push(attr(
            2,
            6,
            vk::Format::R32G32_SFLOAT,
            std::mem::offset_of!(BaseVertex, uv),
        ));
    }
    bindings.push(binding(7, 16, v));
    attrs.push(attr(13, 7, f4, 0));
    if tangents {
        bindings.push(binding(8, 16, v));
        attrs.push(attr(14, 8, f4, 0));
    }
    bindings.push(binding(
        3,
        std::mem::size_of::<InstanceRecord>(),
        vk::VertexInputRate::INSTANCE,
    ));
    for r in 0..4u32 {
        attrs.push(attr(7 + r, 3, f4, 16 * r as usize));
    }
    (bindings, attrs)
}
