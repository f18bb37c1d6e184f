// Encoding "qt": per bone a unit rotation quaternion and translation +
// uniform scale, two vec4 (host: vkskin::anim::QuatTranslation). Each
// influence's matrix [scale * R(q) | t] is rebuilt, then the matrices are
// blended (seed 001): vkskin::anim::QuatTranslationSkinningJob; tangents by
// the blend's linear part (TangentSkinningJob, QuatTranslation).
#include "../common.glsl"
#define VEC4S_PER_BONE 2u

// The vertex (p, n) and its tangent direction t (zero for none).
void skin_vertex_tangent(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, vec3 t, out vec3 op,
    out vec3 on, out vec3 ot) {
    mat3 m = mat3(0.0);
    vec3 tr = vec3(0.0);
    for (int s = 0; s < INFLUENCES; ++s) {
        float wt = SLOT_WEIGHT(w, s);
        if (wt == 0.0) continue;
        uint b = base + SLOT_JOINT(j, s) * VEC4S_PER_BONE;
        vec4 q = palette_vec4(b, 0u);
        vec4 ts = palette_vec4(b, 1u);
        m += quat_to_mat3(q) * (ts.w * wt);
        tr += ts.xyz * wt;
    }
    op = m * p + tr;
    on = normalize_or_zero(cofactor(m) * n);
    ot = normalize_or_zero(m * t);
}

void skin_vertex(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, out vec3 op, out vec3 on) {
    vec3 ot;
    skin_vertex_tangent(base, j, w, p, n, vec3(0.0), op, on, ot);
}
