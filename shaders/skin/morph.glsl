#ifndef VKSKIN_MORPH_GLSL
#define VKSKIN_MORPH_GLSL
// Morph targets (MORPH, set 3 of both stages), applied to the bind-pose
// vertex before it is skinned, as the CPU reference does
// (vkskin::mesh::MorphJob): p += w * dp, n += w * dn over the instance's
// active targets in target order, then n = normalize_or_zero(n).
//
// Binding 0 (per prepared mesh): `info` = (targets, GPU vertices, 0, 0),
// then position deltas of target t, GPU vertex v at t * vertices + v and
// normal deltas at targets * vertices + t * vertices + v (vec4, w = 0).
// Binding 1 (per frame): per instance record, (first entry, entry count).
// Binding 2 (per frame): entries (target, weight bits), non-zero weights
// only. Host mirror: vkskin::skin::MorphEntry.
layout(set = 3, binding = 0, std430) readonly buffer MorphDeltas {
    uvec4 info;
    vec4 d[];
} morph_deltas;
layout(set = 3, binding = 1, std430) readonly buffer MorphHeaders {
    uvec2 h[];
} morph_headers;
layout(set = 3, binding = 2, std430) readonly buffer MorphEntries {
    uvec2 e[];
} morph_entries;

// Adds `count` entries from `first` to GPU vertex `v`.
void morph_entries_apply(uint first, uint count, uint v, inout vec3 p, inout vec3 n) {
    uint verts = morph_deltas.info.y;
    uint normals = morph_deltas.info.x * verts;
    for (uint k = 0u; k < count; ++k) {
        uvec2 e = morph_entries.e[first + k];
        float w = uintBitsToFloat(e.y);
        uint i = e.x * verts + v;
        p += morph_deltas.d[i].xyz * w;
        n += morph_deltas.d[normals + i].xyz * w;
    }
    n = normalize_or_zero(n);
}

// Morphs GPU vertex `v` of the instance whose record is `record`.
// MOTION: the header's count packs the current count (low 16 bits) and the
// previous frame's (high 16 bits), whose entries follow the instance's
// `targets` current ones.
void morph_vertex(uint record, uint v, inout vec3 p, inout vec3 n) {
    uvec2 h = morph_headers.h[record];
#ifdef MOTION
    morph_entries_apply(h.x, h.y & 0xffffu, v, p, n);
#else
    morph_entries_apply(h.x, h.y, v, p, n);
#endif
}

#ifdef MOTION
// The previous frame's weights of the same instance.
void morph_vertex_previous(uint record, uint v, inout vec3 p, inout vec3 n) {
    uvec2 h = morph_headers.h[record];
    morph_entries_apply(h.x + morph_deltas.info.x, h.y >> 16, v, p, n);
}
#endif
#endif
