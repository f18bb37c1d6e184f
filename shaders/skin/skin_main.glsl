// The skinned vertex stage shared by every palette path. Before including
// it, a path defines skin_blend(uvec4 joints, vec4 weights) -> SkinXform.
//
// Defines: SKIN_CAPTURE (set 2: write skinned position and normal per
// vertex to a storage buffer, for tests against the CPU reference).
#include "../common/frame.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in uvec4 in_joints;
layout(location = 3) in vec4 in_weights;

layout(location = 0) out vec3 out_normal;

#ifdef SKIN_CAPTURE
// Host mirror: vkskin::skin::CapturedVertex (layout checked by a test).
struct CapturedVertex {
    vec4 position;
    vec4 normal;
};
layout(set = 2, binding = 0, std430) writeonly buffer Capture {
    CapturedVertex vertices[];
} capture;
#endif

// Columns of the cofactor matrix (det(m) * inverse(m)^T): moves normals
// right under non-uniform scale and costs no inverse.
mat3 cofactor(mat3 m) {
    return mat3(cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1]));
}

void main() {
    SkinXform x = skin_blend(in_joints, in_weights);
    vec3 p = x.m * in_position + x.t;
    vec3 n = normalize(cofactor(x.m) * in_normal);
#ifdef SKIN_CAPTURE
    if (uint(gl_VertexIndex) < uint(capture.vertices.length())) {
        capture.vertices[gl_VertexIndex].position = vec4(p, 1.0);
        capture.vertices[gl_VertexIndex].normal = vec4(n, 0.0);
    }
#endif
    out_normal = n;
    gl_Position = frame.view_proj * vec4(p, 1.0);
}
