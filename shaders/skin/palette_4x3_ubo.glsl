// Palette path "4x3 in a uniform buffer": per bone the top three rows of the
// skinning matrix as three vec4, 48 bytes (std140: stride 16, no padding).
// Host mirror: [vkskin::anim::Affine4x3; PALETTE_CAPACITY].
#include "xform.glsl"

#ifndef PALETTE_CAPACITY
#error "PALETTE_CAPACITY (bones in the palette) must be defined"
#endif

layout(set = 1, binding = 0, std140) uniform Palette4x3 {
    vec4 rows[3 * PALETTE_CAPACITY];
} palette;

SkinXform skin_fetch(uint joint) {
    vec4 r0 = palette.rows[3u * joint + 0u];
    vec4 r1 = palette.rows[3u * joint + 1u];
    vec4 r2 = palette.rows[3u * joint + 2u];
    SkinXform x;
    // mat3() takes columns, so the rows go in transposed.
    x.m = transpose(mat3(r0.xyz, r1.xyz, r2.xyz));
    x.t = vec3(r0.w, r1.w, r2.w);
    return x;
}
