#version 460
// GPU animation: one workgroup per instance samples its clip (and a
// second one for a cross-fade), blends, takes the pose to model space
// over the flat hierarchy with the joints in shared memory (a barrier per
// depth level), multiplies by the inverse binds and encodes the palette
// straight into the path's palette storage. The arithmetic follows the
// CPU animation layer (anim/pose/sampling.rs, blending.rs,
// local_to_model.rs, anim/palette/convert.rs and rows.rs) operation for
// operation; skin/anim/animator.rs sets the defines:
//   WG        invocations per workgroup
//   JOINTS    skeleton joints (the shared arrays' length)
//   ENTRIES   palette entries the mesh's parts write (>= 1)
//   ENCODING  0 4x3, 1 qt, 2 dq, 3 dq-scale

#include "sample.glsl"

layout(local_size_x = WG) in;

struct AnimRecord {
    uint clip_a;
    uint clip_b;
    uint flags; // bit 0: A clamps, bit 1: B clamps, bit 2: B plays
    float weight; // of B
    float time_a;
    float speed_a;
    float time_b;
    float speed_b;
};

const uint CLAMP_A = 1u;
const uint CLAMP_B = 2u;
const uint HAS_B = 4u;
const uint NONE = 0xffffffffu;

// The skeleton and the mesh's palette program (skin/anim/layout.rs).
layout(std430, set = 0, binding = 4) readonly buffer Skel { uint skel[]; };
layout(std430, set = 0, binding = 5) readonly buffer InvBind { vec4 inv_bind[]; };
layout(std430, set = 1, binding = 0) readonly buffer Records { AnimRecord records[]; };
layout(std430, set = 1, binding = 1) writeonly buffer Palette { vec4 palette[]; };

layout(push_constant) uniform Push {
    uint palette_base;
    uint palette_stride;
    uint count;
    uint first_record;
    float now;
    uint groups_x;
} pc;

// Per joint its local then model matrix, as three rows (x, y, z, t).
shared vec4 rows[JOINTS * 3];
#if ENCODING >= 2
shared vec4 reals[ENTRIES];
shared vec4 trans[ENTRIES];
#endif

// Skel header: levels, entry levels, then the offsets of each array.
#define LEVELS skel[0]
#define ENTRY_LEVELS skel[1]
#define PARENTS skel[2]
#define LEVEL_START skel[3]
#define LEVEL_ORDER skel[4]
#define ENTRY_JOINT skel[5]
#define ENTRY_OUT skel[6]
#define ENTRY_PARENT skel[7]
#define ENTRY_LEVEL_START skel[8]
#define ENTRY_LEVEL_ORDER skel[9]

float wrap_time(float time, float duration, bool clamped) {
    if (clamped) {
        return clamp(time, 0.0, duration);
    }
    if (!(duration > 0.0)) {
        return 0.0;
    }
    // fmod as Rust's `%`: with the product inside the fma the remainder is
    // exact whenever the quotient is (and when it is one too many the
    // remainder is near the duration, where adding it back is exact).
    precise float r = fma(-duration, trunc(time / duration), time);
    if (r < 0.0) {
        r += duration;
    }
    return r;
}

// Row-form product a * b of two affine matrices.
void mul_rows(vec4 a0, vec4 a1, vec4 a2, vec4 b0, vec4 b1, vec4 b2,
              out vec4 c0, out vec4 c1, out vec4 c2) {
    c0 = b0 * a0.x + b1 * a0.y + b2 * a0.z + vec4(0.0, 0.0, 0.0, a0.w);
    c1 = b0 * a1.x + b1 * a1.y + b2 * a1.z + vec4(0.0, 0.0, 0.0, a1.w);
    c2 = b0 * a2.x + b1 * a2.y + b2 * a2.z + vec4(0.0, 0.0, 0.0, a2.w);
}

// glam's Quat::to_axes (the columns of the rotation matrix).
mat3 quat_to_mat3(vec4 q) {
    float x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
    float xx = q.x * x2, xy = q.x * y2, xz = q.x * z2;
    float yy = q.y * y2, yz = q.y * z2, zz = q.z * z2;
    float wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
    return mat3(vec3(1.0 - (yy + zz), xy + wz, xz - wy),
                vec3(xy - wz, 1.0 - (xx + zz), yz + wx),
                vec3(xz + wy, yz - wx, 1.0 - (xx + yy)));
}

#if ENCODING >= 1
bool finite3(mat3 m) {
    for (int c = 0; c < 3; ++c) {
        if (any(isnan(m[c])) || any(isinf(m[c]))) {
            return false;
        }
    }
    return true;
}

float det3(mat3 m) {
    return dot(m[2], cross(m[0], m[1]));
}

vec3 normalize_or3(vec3 v, vec3 fallback) {
    float rcp = 1.0 / length(v);
    return (!isinf(rcp) && !isnan(rcp) && rcp > 0.0) ? v * rcp : fallback;
}

// anim::polar_rotation: Newton's iteration R <- (R + R^-T) / 2.
mat3 polar_rotation(mat3 m) {
    bool flip = det3(m) < 0.0;
    mat3 r = m;
    if (flip) {
        r[0] = -m[0];
    }
    if (abs(det3(r)) < 1e-20 || !finite3(r)) {
        return mat3(1.0);
    }
    for (int it = 0; it < 20; ++it) {
        vec3 t0 = cross(r[1], r[2]);
        vec3 t1 = cross(r[2], r[0]);
        vec3 t2 = cross(r[0], r[1]);
        float inv_det = 1.0 / dot(r[2], t2);
        mat3 next = mat3(r[0] + t0 * inv_det, r[1] + t1 * inv_det, r[2] + t2 * inv_det) * 0.5;
        bool done = true;
        for (int c = 0; c < 3; ++c) {
            done = done && all(lessThan(abs(next[c] - r[c]), vec3(1e-7)));
        }
        r = next;
        if (done) {
            break;
        }
    }
    vec3 x = normalize_or3(r[0], vec3(1.0, 0.0, 0.0));
    vec3 y = normalize_or3(r[1] - x * dot(x, r[1]), vec3(0.0, 1.0, 0.0));
    return mat3(x, y, cross(x, y));
}

// glam's Quat::from_mat3a (DirectXMath's XMQuaternionRotationMatrix),
// then normalised.
vec4 quat_of(mat3 r) {
    float m00 = r[0].x, m01 = r[0].y, m02 = r[0].z;
    float m10 = r[1].x, m11 = r[1].y, m12 = r[1].z;
    float m20 = r[2].x, m21 = r[2].y, m22 = r[2].z;
    vec4 q;
    if (m22 <= 0.0) {
        float dif10 = m11 - m00;
        float omm22 = 1.0 - m22;
        if (dif10 <= 0.0) {
            float f = omm22 - dif10;
            float inv = 0.5 / sqrt(f);
            q = vec4(f * inv, (m01 + m10) * inv, (m02 + m20) * inv, (m12 - m21) * inv);
        } else {
            float f = omm22 + dif10;
            float inv = 0.5 / sqrt(f);
            q = vec4((m01 + m10) * inv, f * inv, (m12 + m21) * inv, (m20 - m02) * inv);
        }
    } else {
        float sum10 = m11 + m00;
        float opm22 = 1.0 + m22;
        if (sum10 <= 0.0) {
            float f = opm22 - sum10;
            float inv = 0.5 / sqrt(f);
            q = vec4((m02 + m20) * inv, (m12 + m21) * inv, f * inv, (m01 - m10) * inv);
        } else {
            float f = opm22 + sum10;
            float inv = 0.5 / sqrt(f);
            q = vec4((m12 - m21) * inv, (m20 - m02) * inv, (m01 - m10) * inv, f * inv);
        }
    }
    return q * (1.0 / length(q));
}
#endif

void main() {
    uint inst = gl_WorkGroupID.y * pc.groups_x + gl_WorkGroupID.x;
    if (inst >= pc.count) {
        return; // the whole workgroup: no barrier is left waiting
    }
    uint tid = gl_LocalInvocationID.x;
    AnimRecord rec = records[pc.first_record + inst];
    bool has_b = (rec.flags & HAS_B) != 0u;
    precise float raw_a = rec.time_a + rec.speed_a * pc.now;
    precise float raw_b = rec.time_b + rec.speed_b * pc.now;
    float ta = wrap_time(raw_a, clip_duration(rec.clip_a), (rec.flags & CLAMP_A) != 0u);
    float tb = wrap_time(raw_b, clip_duration(rec.clip_b), (rec.flags & CLAMP_B) != 0u);
    float wa = 1.0 - rec.weight;
    float wb = rec.weight;
    float total = wa + wb;
    wa = wa / total;
    wb = wb / total;

    // Sample and blend: each invocation owns joints tid, tid + WG, ...
    for (uint j = tid; j < JOINTS; j += WG) {
        vec3 t, s;
        vec4 q;
        sample_joint(rec.clip_a, j, ta, (rec.flags & CLAMP_A) == 0u, t, q, s);
        if (has_b) {
            vec3 t2, s2;
            vec4 q2;
            sample_joint(rec.clip_b, j, tb, (rec.flags & CLAMP_B) == 0u, t2, q2, s2);
            float wbq = dot(q, q2) < 0.0 ? -wb : wb;
            vec4 bq = q * wa + q2 * wbq;
            t = t * wa + t2 * wb;
            s = s * wa + s2 * wb;
            float len2 = dot(bq, bq);
            q = len2 > 1e-20 ? bq * (1.0 / sqrt(len2)) : q;
        }
        mat3 m = quat_to_mat3(q);
        vec3 c0 = m[0] * s.x, c1 = m[1] * s.y, c2 = m[2] * s.z;
        rows[j * 3 + 0] = vec4(c0.x, c1.x, c2.x, t.x);
        rows[j * 3 + 1] = vec4(c0.y, c1.y, c2.y, t.y);
        rows[j * 3 + 2] = vec4(c0.z, c1.z, c2.z, t.z);
    }
    memoryBarrierShared();
    barrier();

    // Local to model, a depth level at a time (level 0: the roots, whose
    // model matrix is their local one).
    uint levels = LEVELS;
    for (uint l = 1u; l < levels; ++l) {
        uint first = skel[LEVEL_START + l];
        uint end = skel[LEVEL_START + l + 1u];
        for (uint k = first + tid; k < end; k += WG) {
            uint j = skel[LEVEL_ORDER + k];
            uint p = skel[PARENTS + j];
            vec4 c0, c1, c2;
            mul_rows(rows[p * 3], rows[p * 3 + 1], rows[p * 3 + 2],
                     rows[j * 3], rows[j * 3 + 1], rows[j * 3 + 2], c0, c1, c2);
            rows[j * 3] = c0;
            rows[j * 3 + 1] = c1;
            rows[j * 3 + 2] = c2;
        }
        memoryBarrierShared();
        barrier();
    }

    // Skinning matrices, encoded.
    uint block = pc.palette_base + inst * pc.palette_stride;
    for (uint e = tid; e < ENTRIES; e += WG) {
        uint j = skel[ENTRY_JOINT + e];
        uint at = block + skel[ENTRY_OUT + e];
        vec4 r0, r1, r2;
        mul_rows(rows[j * 3], rows[j * 3 + 1], rows[j * 3 + 2],
                 inv_bind[e * 3], inv_bind[e * 3 + 1], inv_bind[e * 3 + 2], r0, r1, r2);
#if ENCODING == 0
        palette[at] = r0;
        palette[at + 1u] = r1;
        palette[at + 2u] = r2;
#else
        mat3 m = mat3(vec3(r0.x, r1.x, r2.x), vec3(r0.y, r1.y, r2.y), vec3(r0.z, r1.z, r2.z));
        vec3 t = vec3(r0.w, r1.w, r2.w);
        mat3 r = polar_rotation(m);
        mat3 s = transpose(r) * m;
        vec4 q = quat_of(r);
#if ENCODING == 1
        float uniform_scale = (s[0].x + s[1].y + s[2].z) / 3.0;
        palette[at] = q;
        palette[at + 1u] = vec4(t, uniform_scale);
#else
        reals[e] = q;
        trans[e] = vec4(t, 0.0);
#if ENCODING == 3
        palette[at + 2u] = vec4(s[0].x, s[1].x, s[2].x, 0.0);
        palette[at + 3u] = vec4(s[0].y, s[1].y, s[2].y, 0.0);
        palette[at + 4u] = vec4(s[0].z, s[1].z, s[2].z, 0.0);
#endif
#endif
#endif
    }

#if ENCODING >= 2
    // The dual-quaternion hemisphere rule (anim/palette/rows.rs): each
    // real part in its palette parent's hemisphere, roots in the
    // identity's; a level of the palette hierarchy at a time.
    memoryBarrierShared();
    barrier();
    uint entry_levels = ENTRY_LEVELS;
    for (uint l = 0u; l < entry_levels; ++l) {
        uint first = skel[ENTRY_LEVEL_START + l];
        uint end = skel[ENTRY_LEVEL_START + l + 1u];
        for (uint k = first + tid; k < end; k += WG) {
            uint e = skel[ENTRY_LEVEL_ORDER + k];
            uint p = skel[ENTRY_PARENT + e];
            vec4 reference = p == NONE ? vec4(0.0, 0.0, 0.0, 1.0) : reals[p];
            if (dot(reals[e], reference) < 0.0) {
                reals[e] = -reals[e];
            }
        }
        memoryBarrierShared();
        barrier();
    }
    for (uint e = tid; e < ENTRIES; e += WG) {
        uint at = block + skel[ENTRY_OUT + e];
        vec4 q = reals[e];
        vec3 t = trans[e].xyz;
        vec4 dual = vec4(t.x * q.w + t.y * q.z - t.z * q.y,
                         -t.x * q.z + t.y * q.w + t.z * q.x,
                         t.x * q.y - t.y * q.x + t.z * q.w,
                         -(t.x * q.x) - t.y * q.y - t.z * q.z) * 0.5;
        palette[at] = q;
        palette[at + 1u] = dual;
    }
#endif
}
