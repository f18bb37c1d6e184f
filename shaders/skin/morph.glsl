#ifndef VKSKIN_MORPH_GLSL
#define VKSKIN_MORPH_GLSL
// Morph targets (MORPH, set 3 of both stages), applied to the bind-pose
// vertex before it is skinned, as the CPU reference does
// (vkskin::mesh::MorphJob): p += w * dp, n += w * dn over the instance's
// active targets in target order, then n = normalize_or_zero(n); with
// TANGENTS (a mesh with tangents) also t += w * dt, t = normalize_or_zero(t)
// (the handedness w is not morphed).
//
// Binding 0 (per prepared mesh): an RGBA32F uniform texel buffer. Texel 0
// is (targets, GPU vertices, texels per delta, 0) as floats; target t's
// deltas of GPU vertex v are the `per` texels at 1 + per * (t * vertices +
// v): the position delta, the normal delta (w = 0) and, where the mesh has
// tangents and some target moves them (per = 3), the tangent delta; else
// per = 2. One target's deltas of one vertex are one contiguous read,
// fetched as two or three texels (on lavapipe a
// texel fetch is one gather per texel where a storage-buffer read is a
// bounds-checked load per lane and component: gpu-bench --morph, see
// docs/performance.md).
// Binding 1 (per frame): per instance record, (first entry, entry count).
// Binding 2 (per frame): entries (target, weight bits), non-zero weights
// only. Host mirror: vkskin::skin::MorphEntry.
layout(set = 3, binding = 0) uniform samplerBuffer morph_deltas;
layout(set = 3, binding = 1, std430) readonly buffer MorphHeaders {
    uvec2 h[];
} morph_headers;
layout(set = 3, binding = 2, std430) readonly buffer MorphEntries {
    uvec2 e[];
} morph_entries;

// Adds `count` entries from `first` to GPU vertex `v` (and, with TANGENTS,
// to its tangent direction t).
void morph_entries_apply_tangent(uint first, uint count, uint v, inout vec3 p, inout vec3 n,
    inout vec3 t) {
    vec4 info = texelFetch(morph_deltas, 0);
    uint verts = uint(info.y);
    // Read, not assumed: a permutation without TANGENTS (a host's) may
    // draw a mesh whose deltas have three texels.
    uint per = uint(info.z);
    for (uint k = 0u; k < count; ++k) {
        uvec2 e = morph_entries.e[first + k];
        float w = uintBitsToFloat(e.y);
        int i = int(1u + per * (e.x * verts + v));
        p += texelFetch(morph_deltas, i).xyz * w;
        n += texelFetch(morph_deltas, i + 1).xyz * w;
#ifdef TANGENTS
        if (per > 2u) {
            t += texelFetch(morph_deltas, i + 2).xyz * w;
        }
#endif
    }
    n = normalize_or_zero(n);
#ifdef TANGENTS
    t = normalize_or_zero(t);
#endif
}

void morph_entries_apply(uint first, uint count, uint v, inout vec3 p, inout vec3 n) {
    vec3 t = vec3(0.0);
    morph_entries_apply_tangent(first, count, v, p, n, t);
}

// The header's current entries (MOTION: the low 16 bits of the count).
uvec2 morph_current(uint record) {
    uvec2 h = morph_headers.h[record];
#ifdef MOTION
    h.y &= 0xffffu;
#endif
    return h;
}

#ifdef TANGENTS
// morph_vertex with the vertex's tangent direction t.
void morph_vertex_tangent(uint record, uint v, inout vec3 p, inout vec3 n, inout vec3 t) {
    uvec2 h = morph_current(record);
    morph_entries_apply_tangent(h.x, h.y, v, p, n, t);
}
#endif

// Morphs GPU vertex `v` of the instance whose record is `record`.
// MOTION: the header's count packs the current count (low 16 bits) and the
// previous frame's (high 16 bits), whose entries follow the instance's
// `targets` current ones.
void morph_vertex(uint record, uint v, inout vec3 p, inout vec3 n) {
    uvec2 h = morph_current(record);
    morph_entries_apply(h.x, h.y, v, p, n);
}

#ifdef MOTION
// The previous frame's weights of the same instance.
void morph_vertex_previous(uint record, uint v, inout vec3 p, inout vec3 n) {
    uvec2 h = morph_headers.h[record];
    morph_entries_apply(h.x + uint(texelFetch(morph_deltas, 0).x), h.y >> 16, v, p, n);
}
#endif
#endif
