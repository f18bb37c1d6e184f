// Stage "vertex": the vertex shader skins. A path's main file includes its
// storage (palette_vec4), its encoding (skin_vertex), then this.
//
// Defines: INFLUENCES (4 or 8: a second joints/weights stream),
// SKIN_CAPTURE (see capture.glsl), MORPH (morph targets, see morph.glsl),
// MOTION (the previous pose: each instance's palette block holds the
// current palette, then the previous one, pc.previous_offset vec4s on: half
// the stride on the instanced storages, right after each partition's own
// palette in the ubo window; the push storage pushes it half its window
// on; its world-space position is out_prev_position, location 3),
// TANGENTS (a mesh with tangents: stream 8 at location 14, morphed and
// skinned beside the normal; out_tangent, location 6, in world space with
// its handedness in w).
#include "../common/frame.glsl"
#include "common.glsl"
#include "instance.glsl"

#include "inputs.glsl"

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;
layout(location = 2) out vec4 out_tint;
#ifdef MOTION
layout(location = 3) out vec3 out_prev_position;
// The current world-space position (skinned.frag's motion view).
layout(location = 5) out vec3 out_position;
#endif
layout(location = 4) out vec4 out_color;
#ifdef TANGENTS
layout(location = 6) out vec4 out_tangent;
#endif

#include "push.glsl"

#ifdef PALETTE_IN_PUSH_CONSTANTS
// One instance per draw, its palette pushed whole (MOTION: the previous
// one half the window on).
uint palette_base() {
    return 0u;
}
uint previous_offset() {
    return uint(PALETTE_VEC4S) / 2u;
}
#else
uint palette_base() {
    return pc.palette_base + (uint(gl_InstanceIndex) - pc.first_instance) * pc.palette_stride;
}
uint previous_offset() {
    return pc.previous_offset;
}
#endif

#ifdef MORPH
#include "morph.glsl"
#endif

#ifdef SKIN_CAPTURE
#include "capture.glsl"
// Partitioned meshes duplicate vertices: this is the original index.
layout(location = 11) in uint in_source;
#endif

void main() {
    uvec4 j[2];
    vec4 w[2];
    j[0] = in_joints0;
    w[0] = in_weights0;
#if INFLUENCES > 4
    j[1] = in_joints1;
    w[1] = in_weights1;
#else
    j[1] = uvec4(0u);
    w[1] = vec4(0.0);
#endif
    vec3 bp = in_position;
    vec3 bn = in_normal;
    vec3 p, n;
#ifdef TANGENTS
    vec3 bt = in_tangent.xyz;
#ifdef MORPH
    // gl_InstanceIndex is the instance record (firstInstance included);
    // gl_VertexIndex the GPU vertex (the part's vertexOffset included).
    morph_vertex_tangent(uint(gl_InstanceIndex), uint(gl_VertexIndex), bp, bn, bt);
#endif
    vec3 t;
    skin_vertex_tangent(palette_base(), j, w, bp, bn, bt, p, n, t);
    out_tangent = vec4(instance_direction(t), in_tangent.w);
#ifdef SKIN_CAPTURE
    capture_tangent(uint(gl_InstanceIndex), in_source, vec4(t, in_tangent.w));
#endif
#else
#ifdef MORPH
    morph_vertex(uint(gl_InstanceIndex), uint(gl_VertexIndex), bp, bn);
#endif
    skin_vertex(palette_base(), j, w, bp, bn, p, n);
#endif
#ifdef SKIN_CAPTURE
    capture_vertex(uint(gl_InstanceIndex), in_source, p, n);
#endif
#ifdef MOTION
    // The previous pose: same influences, previous weights and palette.
    vec3 pbp = in_position;
    vec3 pbn = in_normal;
#ifdef MORPH
    morph_vertex_previous(uint(gl_InstanceIndex), uint(gl_VertexIndex), pbp, pbn);
#endif
    vec3 pp, pn;
    skin_vertex(palette_base() + previous_offset(), j, w, pbp, pbn, pp, pn);
#ifdef SKIN_CAPTURE
    capture_previous(uint(gl_InstanceIndex), in_source, pp);
#endif
    out_prev_position = instance_point(pp);
    out_position = instance_point(p);
#endif
    out_normal = instance_normal(n);
    out_uv = in_uv;
    out_color = in_color;
    out_tint = inst_tint;
    gl_Position = frame.view_proj * vec4(instance_point(p), 1.0);
}
