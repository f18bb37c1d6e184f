#version 460
// A joint marker: three axis-aligned line segments through the joint
// origin (a line-list "cross" of 6 vertices), no vertex buffer.
layout(push_constant, std430) uniform Marker {
    // Projection * view * joint model matrix * marker size.
    mat4 mvp;
    vec4 color;
} marker;

layout(location = 0) out vec4 out_color;

const vec3 ENDS[6] = vec3[](
    vec3(-1, 0, 0), vec3(1, 0, 0),
    vec3(0, -1, 0), vec3(0, 1, 0),
    vec3(0, 0, -1), vec3(0, 0, 1)
);

void main() {
    out_color = marker.color;
    gl_Position = marker.mvp * vec4(ENDS[gl_VertexIndex % 6], 1.0);
}
