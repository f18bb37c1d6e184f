#version 460
// The plain pipeline of the compute and CPU stages: vertices arrive already
// skinned (model space); only the instance matrix and camera apply.
// Streams: 0 skinned positions, 1 skinned normals (vec3, tightly packed,
// bound at the instance's first output vertex), 3 the
// instance records; MOTION: 5 the previous positions (location 12), out
// in world space as out_prev_position (location 3); 6 the prepared mesh's
// base vertices (texture coordinates, location 2) and 7 its vertex colours
// (location 13), static per vertex; TANGENTS: 8 the skinned tangents
// (vec4, location 14), out in world space as out_tangent (location 6).
#include "../common/frame.glsl"
#include "common.glsl"
#include "instance.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 13) in vec4 in_color;

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;
layout(location = 2) out vec4 out_tint;
layout(location = 4) out vec4 out_color;
#ifdef MOTION
layout(location = 12) in vec3 in_prev_position;
layout(location = 3) out vec3 out_prev_position;
layout(location = 5) out vec3 out_position;
#endif

#ifdef TANGENTS
layout(location = 14) in vec4 in_tangent;
layout(location = 6) out vec4 out_tangent;
#endif

#ifdef SKIN_CAPTURE
#include "capture.glsl"
#endif

void main() {
#ifdef SKIN_CAPTURE
    // Each instance is drawn from vertex 0 of its output region (the
    // streams are bound at its offset): gl_VertexIndex is the mesh vertex.
    capture_vertex(uint(gl_InstanceIndex), uint(gl_VertexIndex), in_position, in_normal);
#ifdef MOTION
    capture_previous(uint(gl_InstanceIndex), uint(gl_VertexIndex), in_prev_position);
#endif
#ifdef TANGENTS
    capture_tangent(uint(gl_InstanceIndex), uint(gl_VertexIndex), in_tangent);
#endif
#endif
#ifdef TANGENTS
    out_tangent = vec4(instance_direction(in_tangent.xyz), in_tangent.w);
#endif
#ifdef MOTION
    out_prev_position = instance_point(in_prev_position);
    out_position = instance_point(in_position);
#endif
    out_normal = instance_normal(in_normal);
    out_uv = in_uv;
    out_color = in_color;
    out_tint = inst_tint;
    gl_Position = frame.view_proj * vec4(instance_point(in_position), 1.0);
}
