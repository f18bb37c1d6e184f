#version 460
// The plain pipeline of the compute and CPU stages: vertices arrive already
// skinned (model space); only the instance matrix and camera apply.
// Streams: 0 skinned positions, 1 skinned normals (vec3, tightly packed,
// drawn with vertexOffset = the instance's first output vertex), 3 the
// instance records; MOTION: 5 the previous positions (location 12), out
// in world space as out_prev_position (location 3). Texture coordinates are not carried (nothing samples
// a texture yet).
#include "../common/frame.glsl"
#include "common.glsl"
#include "instance.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;
layout(location = 2) out vec4 out_tint;
#ifdef MOTION
layout(location = 12) in vec3 in_prev_position;
layout(location = 3) out vec3 out_prev_position;
layout(location = 4) out vec3 out_position;
#endif

#ifdef SKIN_CAPTURE
#include "capture.glsl"
#endif

void main() {
#ifdef SKIN_CAPTURE
    // gl_VertexIndex includes the draw's vertexOffset: out_base + i * vc + v.
    if (uint(gl_VertexIndex) >= capture.first) {
        capture_at(uint(gl_VertexIndex) - capture.first, in_position, in_normal);
#ifdef MOTION
        capture_previous_at(uint(gl_VertexIndex) - capture.first, in_prev_position);
#endif
    }
#endif
#ifdef MOTION
    out_prev_position = instance_point(in_prev_position);
    out_position = instance_point(in_position);
#endif
    out_normal = instance_normal(in_normal);
    out_uv = vec2(0.0);
    out_tint = inst_tint;
    gl_Position = frame.view_proj * vec4(instance_point(in_position), 1.0);
}
