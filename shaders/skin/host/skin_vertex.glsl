#ifndef VKSKIN_HOST_SKIN_VERTEX_GLSL
#define VKSKIN_HOST_SKIN_VERTEX_GLSL
// The vertex route: vkskin's vertex-stage skinning inside a host's own
// vertex shader (docs/embedding.md, "Skinning in the host's shaders").
//
// A host's vertex shader does not include this file directly: it includes
// the header vkskin generates for its path and permutation
// (vkskin::skin::HostVertexRoute::header, put in the sources at
// vkskin::skin::HOST_SKIN_HEADER), which defines INFLUENCES (4 or 8),
// PALETTE_VEC4S, for meshes with morph targets MORPH and for meshes with
// tangents TANGENTS (SkinnedVertex then has the tangent), then includes
// the path's storage (palette_vec4), its encoding (the per-influence
// skin_vertex) and this file:
//
//     #version 460
//     #include "skin/gen/host_skin.glsl"
//     void main() {
//         SkinnedVertex v = skin_vertex();
//         gl_Position = my_view_proj * vec4(v.world_position, 1.0);
//     }
//
// What it takes of the host's pipeline (HostVertexRoute lists it all):
// - vertex inputs at locations 0 to 4 (5 and 6 with 8 influences), 7 to 10
//   (the instance record), 13 (vertex colour) and, with TANGENTS, 14 (the
//   tangent), from bindings 0 to 3, 7 and 8: HostVertexRoute::vertex_bindings / vertex_attributes; the host's
//   own inputs, if any, use other locations and bindings;
// - descriptor set 1 (the palette, on the storages that have a
//   descriptor) and, with MORPH, set 3 (morph targets):
//   HostVertexRoute::set_layouts; sets 0, 2 and 4 upwards are the host's;
// - the vertex-stage push-constant range from offset 0
//   (HostVertexRoute::push_constants: DrawPush, or the palette itself on
//   the push storage); the host's own push constants go after it.
// vkskin binds the buffers and sets and pushes the constants when it
// records the draws (embed::Renderer::record_host). On a path built with
// motion vectors the header also defines MOTION and skin_vertex_previous()
// gives the previous frame's world position (a host's velocity output).
#include "../common.glsl"
#include "../instance.glsl"

#include "../inputs.glsl"

#include "../push.glsl"

#ifdef PALETTE_IN_PUSH_CONSTANTS
uint host_palette_base() {
    return 0u;
}
#else
// The instance's first palette vec4, as vertex.glsl's palette_base().
uint host_palette_base() {
    return pc.palette_base + (uint(gl_InstanceIndex) - pc.first_instance) * pc.palette_stride;
}
#endif

#ifdef MORPH
#include "../morph.glsl"
#endif

// One skinned vertex: model space (what the path's CPU job computes), the
// instance's world space, and the pass-through attributes.
struct SkinnedVertex {
    // Skinned, model space.
    vec3 position;
    vec3 normal;
    // Through the instance's model-to-world matrix (normal: its cofactor,
    // normalised), as vkskin's own vertex shader.
    vec3 world_position;
    vec3 world_normal;
    // The mesh's texture coordinates and vertex colour (white without).
    vec2 uv;
    vec4 color;
    // The instance's tint (material colour x instance tint).
    vec4 tint;
#ifdef TANGENTS
    // Skinned tangent, model space (xyz unit, w the bitangent's sign, as
    // the mesh has it), and through the instance's matrix (its linear
    // part, normalised).
    vec4 tangent;
    vec4 world_tangent;
#endif
};

// The vertex's joints and weights in the encodings' two-vec4 form.
void host_influences(out uvec4 j[2], out vec4 w[2]) {
    j[0] = in_joints0;
    w[0] = in_weights0;
#if INFLUENCES > 4
    j[1] = in_joints1;
    w[1] = in_weights1;
#else
    j[1] = uvec4(0u);
    w[1] = vec4(0.0);
#endif
}

// Skins the current vertex of the current instance (gl_VertexIndex,
// gl_InstanceIndex), morph targets first where MORPH is defined.
SkinnedVertex skin_vertex() {
    uvec4 j[2];
    vec4 w[2];
    host_influences(j, w);
    vec3 bp = in_position;
    vec3 bn = in_normal;
    SkinnedVertex s;
#ifdef TANGENTS
    vec3 bt = in_tangent.xyz;
#ifdef MORPH
    morph_vertex_tangent(uint(gl_InstanceIndex), uint(gl_VertexIndex), bp, bn, bt);
#endif
    vec3 t;
    skin_vertex_tangent(host_palette_base(), j, w, bp, bn, bt, s.position, s.normal, t);
    s.tangent = vec4(t, in_tangent.w);
    s.world_tangent = vec4(instance_direction(t), in_tangent.w);
#else
#ifdef MORPH
    morph_vertex(uint(gl_InstanceIndex), uint(gl_VertexIndex), bp, bn);
#endif
    skin_vertex(host_palette_base(), j, w, bp, bn, s.position, s.normal);
#endif
    s.world_position = instance_point(s.position);
    s.world_normal = instance_normal(s.normal);
    s.uv = in_uv;
    s.color = in_color;
    s.tint = inst_tint;
    return s;
}

#ifdef MOTION
// Paths built with motion vectors (the header defines MOTION): the
// previous frame's skinned position of the vertex, in world space through
// the instance's current matrix, as vkskin's own out_prev_position (same
// influences, the previous palette and morph weights; zero velocity after
// a teleport).
vec3 skin_vertex_previous() {
    uvec4 j[2];
    vec4 w[2];
    host_influences(j, w);
    vec3 bp = in_position;
    vec3 bn = in_normal;
#ifdef MORPH
    morph_vertex_previous(uint(gl_InstanceIndex), uint(gl_VertexIndex), bp, bn);
#endif
#ifdef PALETTE_IN_PUSH_CONSTANTS
    uint previous = uint(PALETTE_VEC4S) / 2u;
#else
    uint previous = pc.previous_offset;
#endif
    vec3 p, n;
    skin_vertex(host_palette_base() + previous, j, w, bp, bn, p, n);
    return instance_point(p);
}
#endif
#endif
