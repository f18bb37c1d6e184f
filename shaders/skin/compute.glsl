// Stage "compute": pre-skinning. A path's main file includes its storage
// (palette_vec4), its encoding (skin_vertex), then this. Each invocation
// skins one vertex of one instance into the output streams, which a plain
// (non-skinning) pipeline then draws, as many times as the frame needs.
//
// Set 0: the mesh (bind-pose vertices, influences); set 1: the palette
// storage (or none: a storage may reach it through push constants); set 2:
// the output positions and normals (tightly packed vec3, the plain
// pipeline's vertex streams 0 and 1; MOTION: binding 2, the previous
// positions, from the second half of each instance's palette block and
// the previous morph weights; TANGENTS: binding 3, the skinned tangents,
// vec4 with the handedness in w, from set 0 binding 3's bind-pose ones);
// set 3 (MORPH): morph targets.
#include "common.glsl"

layout(local_size_x = 64) in;

// vkskin::skin::BaseVertex: position, normal, uv (8 floats).
layout(set = 0, binding = 0, std430) readonly buffer MeshBase {
    float v[];
} mesh_base;
// vkskin::skin::InfluenceVertex: 4 x u16 joints, 4 x f32 weights (6 words).
layout(set = 0, binding = 1, std430) readonly buffer MeshInfluences0 {
    uint v[];
} mesh_inf0;
layout(set = 0, binding = 2, std430) readonly buffer MeshInfluences1 {
    uint v[];
} mesh_inf1;
#ifdef TANGENTS
// Meshes with tangents: one vec4 per vertex (xyz, handedness w).
layout(set = 0, binding = 3, std430) readonly buffer MeshTangents {
    vec4 v[];
} mesh_tan;
#endif

layout(set = 2, binding = 0, std430) writeonly buffer OutPositions {
    float v[];
} out_pos;
layout(set = 2, binding = 1, std430) writeonly buffer OutNormals {
    float v[];
} out_nrm;
#ifdef MOTION
layout(set = 2, binding = 2, std430) writeonly buffer OutPrevPositions {
    float v[];
} out_prev;
#endif
#ifdef TANGENTS
layout(set = 2, binding = 3, std430) writeonly buffer OutTangents {
    vec4 v[];
} out_tan;
#endif

#include "push.glsl"

#ifdef MORPH
#include "morph.glsl"
#endif

void read_influences(uint v, bool second, out uvec4 j, out vec4 w) {
    uint o = v * 6u;
    uint a = second ? mesh_inf1.v[o] : mesh_inf0.v[o];
    uint b = second ? mesh_inf1.v[o + 1u] : mesh_inf0.v[o + 1u];
    j = uvec4(a & 0xffffu, a >> 16, b & 0xffffu, b >> 16);
    for (uint k = 0u; k < 4u; ++k) {
        w[k] = uintBitsToFloat(second ? mesh_inf1.v[o + 2u + k] : mesh_inf0.v[o + 2u + k]);
    }
}

void main() {
    uint v = gl_GlobalInvocationID.x;
    uint inst = gl_GlobalInvocationID.y;
    if (v >= pc.vertex_count || inst >= pc.instance_count) {
        return;
    }
    uint o = v * 8u;
    vec3 p = vec3(mesh_base.v[o], mesh_base.v[o + 1u], mesh_base.v[o + 2u]);
    vec3 n = vec3(mesh_base.v[o + 3u], mesh_base.v[o + 4u], mesh_base.v[o + 5u]);
#ifdef MOTION
    vec3 pbp = p;
    vec3 pbn = n;
#endif
#ifdef TANGENTS
    vec4 bt = mesh_tan.v[v];
    vec3 t = bt.xyz;
#ifdef MORPH
    morph_vertex_tangent(pc.first_record + inst, v, p, n, t);
#endif
#else
#ifdef MORPH
    morph_vertex(pc.first_record + inst, v, p, n);
#endif
#endif
    uvec4 j[2];
    vec4 w[2];
    read_influences(v, false, j[0], w[0]);
#if INFLUENCES > 4
    read_influences(v, true, j[1], w[1]);
#else
    j[1] = uvec4(0u);
    w[1] = vec4(0.0);
#endif
    vec3 sp, sn;
#ifdef TANGENTS
    vec3 st;
    skin_vertex_tangent(pc.palette_base + inst * pc.palette_stride, j, w, p, n, t, sp, sn, st);
    out_tan.v[pc.out_base + inst * pc.vertex_count + v] = vec4(st, bt.w);
#else
    skin_vertex(pc.palette_base + inst * pc.palette_stride, j, w, p, n, sp, sn);
#endif
    uint dst = (pc.out_base + inst * pc.vertex_count + v) * 3u;
    out_pos.v[dst] = sp.x;
    out_pos.v[dst + 1u] = sp.y;
    out_pos.v[dst + 2u] = sp.z;
    out_nrm.v[dst] = sn.x;
    out_nrm.v[dst + 1u] = sn.y;
    out_nrm.v[dst + 2u] = sn.z;
#ifdef MOTION
#ifdef MORPH
    morph_vertex_previous(pc.first_record + inst, v, pbp, pbn);
#endif
    vec3 pp, pn;
    skin_vertex(pc.palette_base + inst * pc.palette_stride + pc.palette_stride / 2u, j, w, pbp, pbn,
        pp, pn);
    out_prev.v[dst] = pp.x;
    out_prev.v[dst + 1u] = pp.y;
    out_prev.v[dst + 2u] = pp.z;
#endif
}
