#ifndef VKSKIN_STORAGE_GLSL
#define VKSKIN_STORAGE_GLSL
// Palette storage "ubo": palettes of many instances in one uniform buffer
// per frame in flight; each draw's dynamic offset moves a window of
// PALETTE_VEC4S vec4 (at most maxUniformBufferRange bytes) over it.
// Host: skin::storage::Uniform.
#ifndef PALETTE_VEC4S
#error "PALETTE_VEC4S must be defined"
#endif

layout(set = 1, binding = 0, std140) uniform PaletteUbo {
    vec4 v[PALETTE_VEC4S];
} palette_ubo;

vec4 palette_vec4(uint base, uint i) {
    return palette_ubo.v[base + i];
}
#endif
