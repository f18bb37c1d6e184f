// Encoding "dq": per bone a unit dual quaternion, real and dual parts in
// two vec4 (host: vkskin::anim::DualQuat). Dual-quaternion skinning
// (Kavan et al. 2008): each influence joins the first influence's
// hemisphere, the sum is normalised by its real part, positions move by
// the blend and normals turn by its rotation:
// vkskin::anim::DualQuatSkinningJob (no scale/shear); tangents turn by
// the same rotation (TangentSkinningJob, DualQuat).
#include "../common.glsl"
#ifndef VEC4S_PER_BONE
#define VEC4S_PER_BONE 2u
#endif

// The blended, normalised dual quaternion applied to (p, n) and the
// tangent direction t (zero for none).
void dq_apply(vec4 real, vec4 dual, vec3 p, vec3 n, vec3 t, out vec3 op, out vec3 on,
    out vec3 ot) {
    float len = length(real);
    if (len < 1e-12) {
        // Weights that cancel: nothing sensible to rotate by.
        op = p;
        on = normalize_or_zero(n);
        ot = normalize_or_zero(t);
        return;
    }
    float inv = 1.0 / len;
    vec4 r = real * inv;
    vec4 d = dual * inv;
    vec3 tr = (d.xyz * r.w - r.xyz * d.w + cross(r.xyz, d.xyz)) * 2.0;
    op = quat_rotate(r, p) + tr;
    on = normalize_or_zero(quat_rotate(r, n));
    ot = normalize_or_zero(quat_rotate(r, t));
}

void dq_blend(uint base, uvec4 j[2], vec4 w[2], out vec4 real, out vec4 dual) {
    // The hemisphere reference is the first slot's bone, whatever its
    // weight, as on the CPU.
    vec4 first = palette_vec4(base + j[0].x * VEC4S_PER_BONE, 0u);
    real = vec4(0.0);
    dual = vec4(0.0);
    for (int s = 0; s < INFLUENCES; ++s) {
        float wt = SLOT_WEIGHT(w, s);
        if (wt == 0.0) continue;
        uint b = base + SLOT_JOINT(j, s) * VEC4S_PER_BONE;
        vec4 r = palette_vec4(b, 0u);
        float ws = dot(r, first) < 0.0 ? -wt : wt;
        real += r * ws;
        dual += palette_vec4(b, 1u) * ws;
    }
}

#ifndef DQ_SCALE
// The vertex (p, n) and its tangent direction t (zero for none).
void skin_vertex_tangent(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, vec3 t, out vec3 op,
    out vec3 on, out vec3 ot) {
    vec4 real, dual;
    dq_blend(base, j, w, real, dual);
    dq_apply(real, dual, p, n, t, op, on, ot);
}

void skin_vertex(uint base, uvec4 j[2], vec4 w[2], vec3 p, vec3 n, out vec3 op, out vec3 on) {
    vec3 ot;
    skin_vertex_tangent(base, j, w, p, n, vec3(0.0), op, on, ot);
}
#endif
