#ifndef VKSKIN_MORPH_GLSL
#define VKSKIN_MORPH_GLSL
// Morph targets (MORPH, set 3 of both stages), applied to the bind-pose
// vertex before it is skinned, as the CPU reference does
// (vkskin::mesh::MorphJob): p += w * dp, n += w * dn over the instance's
// active targets in target order, then n = normalize_or_zero(n).
//
// Binding 0 (per prepared mesh): an RGBA32F uniform texel buffer. Texel 0
// is (targets, GPU vertices, 0, 0) as floats; target t's deltas of GPU
// vertex v are the texel pair at 1 + 2 * (t * vertices + v): the position
// delta, then the normal delta (w = 0). One target's deltas of one vertex
// are one contiguous 32-byte read, fetched as two texels (on lavapipe a
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

// Adds `count` entries from `first` to GPU vertex `v`.
void morph_entries_apply(uint first, uint count, uint v, inout vec3 p, inout vec3 n) {
    uint verts = uint(texelFetch(morph_deltas, 0).y);
    for (uint k = 0u; k < count; ++k) {
        uvec2 e = morph_entries.e[first + k];
        float w = uintBitsToFloat(e.y);
        int i = int(1u + 2u * (e.x * verts + v));
        p += texelFetch(morph_deltas, i).xyz * w;
        n += texelFetch(morph_deltas, i + 1).xyz * w;
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
    morph_entries_apply(h.x + uint(texelFetch(morph_deltas, 0).x), h.y >> 16, v, p, n);
}
#endif
#endif
