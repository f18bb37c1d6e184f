// Encoding "4x3": per bone the top three rows of the skinning matrix, three
// vec4 (host: vkskin::anim::Affine4x3). Linear blend skinning of the
// matrices, normals by the blend's cofactor, tangents by its linear part:
// vkskin::anim::LinearBlendJob and TangentSkinningJob (Matrices).
#include "../common.glsl"
#define VEC4S_PER_BONE 3u

// The vertex (p, n) and its tangent direction t (zero for none: the
// result then is zero and the compiler drops it).
void skin_vertex_tangent(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, vec3 t, out vec3 op,
    out vec3 on, out vec3 ot) {
    vec4 r0 = vec4(0.0), r1 = vec4(0.0), r2 = vec4(0.0);
    for (int s = 0; s < INFLUENCES; ++s) {
        float wt = SLOT_WEIGHT(w, s);
        // A zero weight adds nothing: skip the fetch.
        if (wt == 0.0) continue;
        uint b = base + SLOT_JOINT(j, s) * VEC4S_PER_BONE;
        r0 += palette_vec4(b, 0u) * wt;
        r1 += palette_vec4(b, 1u) * wt;
        r2 += palette_vec4(b, 2u) * wt;
    }
    // mat3() takes columns, so the rows go in transposed.
    mat3 m = transpose(mat3(r0.xyz, r1.xyz, r2.xyz));
    op = m * p + vec3(r0.w, r1.w, r2.w);
    on = normalize_or_zero(cofactor(m) * n);
    ot = normalize_or_zero(m * t);
}

void skin_vertex(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, out vec3 op, out vec3 on) {
    vec3 ot;
    skin_vertex_tangent(base, j, w, p, n, vec3(0.0), op, on, ot);
}
