#ifndef VKSKIN_STORAGE_GLSL
#define VKSKIN_STORAGE_GLSL
// Palette storage "ssbo": palettes of many instances in one std430 storage
// buffer per frame in flight, bounded by maxStorageBufferRange.
// Host: skin::storage::StorageBuffer.
layout(set = 1, binding = 0, std430) readonly buffer PaletteSsbo {
    vec4 v[];
} palette_ssbo;

vec4 palette_vec4(uint base, uint i) {
    return palette_ssbo.v[base + i];
}
#endif
