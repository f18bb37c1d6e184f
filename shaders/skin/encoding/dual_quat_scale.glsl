// Encoding "dq-scale": two-phase dual-quaternion skinning for skeletons
// with scale. Per bone five vec4: the rigid part as a dual quaternion (real,
// dual), then the rows of its scale/shear matrix S (xyz; host:
// vkskin::anim::encode_dual_quat_scale). Positions first go through the
// linearly blended S (normals through its cofactor), then through the
// blended rigid dual quaternion: vkskin::anim::DualQuatSkinningJob with
// scale_shear. Tangents go through S itself (a direction in the surface),
// then the rotation (TangentSkinningJob, DualQuat with scale_shear).
#define VEC4S_PER_BONE 5u
#define DQ_SCALE 1
#include "dual_quat.glsl"

// The vertex (p, n) and its tangent direction t (zero for none).
void skin_vertex_tangent(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, vec3 t, out vec3 op,
    out vec3 on, out vec3 ot) {
    vec3 s0 = vec3(0.0), s1 = vec3(0.0), s2 = vec3(0.0);
    for (int s = 0; s < INFLUENCES; ++s) {
        float wt = SLOT_WEIGHT(w, s);
        if (wt == 0.0) continue;
        uint b = base + SLOT_JOINT(j, s) * VEC4S_PER_BONE;
        s0 += palette_vec4(b, 2u).xyz * wt;
        s1 += palette_vec4(b, 3u).xyz * wt;
        s2 += palette_vec4(b, 4u).xyz * wt;
    }
    mat3 sm = transpose(mat3(s0, s1, s2));
    vec4 real, dual;
    dq_blend(base, j, w, real, dual);
    dq_apply(real, dual, sm * p, cofactor(sm) * n, sm * t, op, on, ot);
}

void skin_vertex(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, out vec3 op, out vec3 on) {
    vec3 ot;
    skin_vertex_tangent(base, j, w, p, n, vec3(0.0), op, on, ot);
}
