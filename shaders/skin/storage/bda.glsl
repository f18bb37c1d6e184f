#ifndef VKSKIN_STORAGE_GLSL
#define VKSKIN_STORAGE_GLSL
// Palette storage "bda": palettes of many instances in one storage buffer
// per frame in flight, reached through its 64-bit device address, which
// opens the stage's push constants (GL_EXT_buffer_reference; Vulkan 1.2's
// bufferDeviceAddress). Host: skin::storage::BufferAddress.
#extension GL_EXT_buffer_reference : require

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer PaletteVec4s {
    vec4 v[];
};

#define PALETTE_PUSH_FIELDS PaletteVec4s palette;
#include "../push.glsl"

vec4 palette_vec4(uint base, uint i) {
    return pc.palette.v[base + i];
}
#endif
