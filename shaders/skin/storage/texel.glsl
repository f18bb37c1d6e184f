#ifndef VKSKIN_STORAGE_GLSL
#define VKSKIN_STORAGE_GLSL
// Palette storage "texel": palettes of many instances in one RGBA32F
// uniform texel buffer per frame in flight (seed 004's vertex texture),
// one texel per vec4, bounded by maxTexelBufferElements.
// Host: skin::storage::Texel.
layout(set = 1, binding = 0) uniform samplerBuffer palette_texels;

vec4 palette_vec4(uint base, uint i) {
    return texelFetch(palette_texels, int(base + i));
}
#endif
