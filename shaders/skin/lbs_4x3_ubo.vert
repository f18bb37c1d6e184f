#version 460
// Linear blend skinning, 4x3 palette in a uniform buffer.
#include "palette_4x3_ubo.glsl"
#include "blend_linear.glsl"
#include "skin_main.glsl"
