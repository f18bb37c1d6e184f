#ifndef VKSKIN_STORAGE_GLSL
#define VKSKIN_STORAGE_GLSL
// Palette storage "push": one instance's palette (or one partition of it)
// in push constants, pushed before each draw. Host: skin::storage::Push.
// PALETTE_VEC4S = maxPushConstantsSize / 16 rounded down to whole bones.
#ifndef PALETTE_VEC4S
#error "PALETTE_VEC4S must be defined"
#endif
#define PALETTE_IN_PUSH_CONSTANTS 1

layout(push_constant, std430) uniform PalettePush {
    vec4 v[PALETTE_VEC4S];
} palette_push;

vec4 palette_vec4(uint base, uint i) {
    return palette_push.v[base + i];
}
#endif
