#ifndef VKSKIN_FRAME_GLSL
#define VKSKIN_FRAME_GLSL
// Per-frame uniforms, set 0 (one buffer per frame in flight).
// Host mirror: vkskin::skin::FrameUniforms (layout checked by a test).
layout(set = 0, binding = 0, std140) uniform FrameUniforms {
    // Projection * view, Vulkan clip space (Y down, depth 0..1).
    mat4 view_proj;
    // Linear RGB in xyz; w unused.
    vec4 color;
    // Direction towards the light in xyz; w = 0 draws flat colour
    // (wireframe), 1 shades by the skinned normal, 2 (MOTION) the motion
    // view: world-space velocity times color.w as colour (skinned.frag).
    vec4 light;
} frame;
#endif
