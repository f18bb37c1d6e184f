// The GPU clip store (skin/anim/layout.rs) and sampling with the CPU
// SamplingJob's semantics (anim/pose/sampling.rs, timelines.rs, quat.rs):
// every channel of every joint of every clip has a descriptor
// (kind, first key time, key count, first datum); kind 0 is the clip's
// rest value, the data laid out as anim::FlatKind says; a compressed
// clip's quantized tracks are kind K_PACKED, sampled by sample_packed.glsl.

layout(std430, set = 0, binding = 0) readonly buffer Clips { uvec4 clips[]; }; // first descriptor, duration bits
layout(std430, set = 0, binding = 1) readonly buffer Descs { uvec4 descs[]; };
layout(std430, set = 0, binding = 2) readonly buffer Times { float times[]; };
layout(std430, set = 0, binding = 3) readonly buffer Data { vec4 data[]; };

const uint K_REST = 0u;
const uint K_V3_STEP = 1u;
const uint K_V3_NEAREST = 2u;
const uint K_V3_LINEAR = 3u;
const uint K_V3_CUBIC = 4u;
const uint K_Q_STEP = 5u;
const uint K_Q_NEAREST = 6u;
const uint K_Q_LINEAR = 7u;
const uint K_Q_SQUAD = 8u;
const uint K_Q_CUBIC = 9u;
const uint K_M_STEP = 10u;
const uint K_M_NEAREST = 11u;
const uint K_SKIP = 12u; // a matrix track on the joint wrote this channel

#include "sample_packed.glsl"

// anim::simd::lanes::ACOS_COEFFS and MIN_SLERP_ANGLE.
const float ACOS_C[8] = float[8](-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
                                 -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050);
const float MIN_SLERP_ANGLE = 1e-4;

float clip_duration(uint clip) {
    return uintBitsToFloat(clips[clip].y);
}

vec4 sin4(vec4 x) {
    vec4 x2 = x * x;
    vec4 p = vec4(-1.0 / 39916800.0);
    p = p * x2 + vec4(1.0 / 362880.0);
    p = p * x2 + vec4(-1.0 / 5040.0);
    p = p * x2 + vec4(1.0 / 120.0);
    p = p * x2 + vec4(-1.0 / 6.0);
    p = p * x2 + vec4(1.0);
    return x * p;
}

float acos01(float x) {
    float p = ACOS_C[0];
    for (int i = 1; i < 8; ++i) {
        p = p * x + ACOS_C[i];
    }
    return sqrt(max(1.0 - x, 0.0)) * p;
}

// The key interval holding `t` and the fraction through it
// (timelines.rs `locate_one`).
uint locate(uint at, uint n, float t, out float u) {
    if (t <= times[at]) {
        u = 0.0;
        return 0u;
    }
    if (t >= times[at + n - 1u]) {
        u = 1.0;
        return n - 2u;
    }
    uint base = 0u;
    uint len = n;
    while (len > 1u) {
        uint half_len = len / 2u;
        if (times[at + base + half_len] <= t) {
            base += half_len;
        }
        len -= half_len;
    }
    uint i = base + (times[at + base] <= t ? 1u : 0u) - 1u;
    float k0 = times[at + i];
    float k1 = times[at + i + 1u];
    u = clamp((t - k0) / (k1 - k0), 0.0, 1.0);
    return i;
}

// Step: the next key only at the interval's end; nearest: past half way.
uint pick_key(uint kind_step, uint kind, uint i, float u) {
    bool next = kind == kind_step ? u >= 1.0 : u > 0.5;
    return next ? i + 1u : i;
}

vec3 sample_vec3(uvec4 d, float t) {
    if (d.x == K_REST) {
        return data[d.w].xyz;
    }
    if (d.x == K_PACKED) {
        return sample_packed_vec3(d, t);
    }
    float u;
    uint i = locate(d.y, d.z, t, u);
    if (d.x == K_V3_LINEAR) {
        return data[d.w + i].xyz * (1.0 - u) + data[d.w + i + 1u].xyz * u;
    }
    if (d.x == K_V3_CUBIC) {
        uint c = d.w + i * 4u;
        return ((data[c + 3u].xyz * u + data[c + 2u].xyz) * u + data[c + 1u].xyz) * u + data[c].xyz;
    }
    return data[d.w + pick_key(K_V3_STEP, d.x, i, u)].xyz;
}

// sampling.rs `squad_span`.
vec4 squad(uint s, float u) {
    vec4 q1 = data[s], c = data[s + 1u], a = data[s + 2u], b = data[s + 3u], an = data[s + 4u];
    vec4 w = sin4(vec4((1.0 - u) * an.x, u * an.x, (1.0 - u) * an.z, u * an.z))
        * vec4(an.y, an.y, an.w, an.w);
    vec4 p = q1 * w.x + c * w.y;
    vec4 r = a * w.z + b * w.w;
    float h = 2.0 * u * (1.0 - u);
    float dp = dot(p, r);
    if (dp < 0.0) {
        r = -r;
    }
    float theta = max(acos01(min(abs(dp), 1.0)), MIN_SLERP_ANGLE);
    vec4 sn = sin4(vec4((1.0 - h) * theta, h * theta, theta, 0.0));
    float inv = 1.0 / sn.z;
    return p * (sn.x * inv) + r * (sn.y * inv);
}

vec4 sample_quat(uvec4 d, float t, bool looping) {
    if (d.x == K_REST) {
        return data[d.w];
    }
    if (d.x == K_PACKED) {
        return sample_packed_quat(d, t);
    }
    uint n = d.z;
    float u;
    uint i = locate(d.y, n, t, u);
    if (d.x == K_Q_LINEAR) {
        vec4 an = data[d.w + n + i];
        vec4 s = sin4(vec4((1.0 - u) * an.x, u * an.x, 0.0, 0.0)) * an.y;
        return data[d.w + i] * s.x + data[d.w + i + 1u] * s.y;
    }
    if (d.x == K_Q_SQUAD) {
        uint last = n - 2u;
        uint s = d.w + i * 5u;
        if (!looping && (i == 0u || i == last)) {
            s = d.w + (n - 1u) * 5u + (i == 0u ? 0u : 5u);
        }
        return squad(s, u);
    }
    if (d.x == K_Q_CUBIC) {
        uint c = d.w + i * 4u;
        vec4 v = ((data[c + 3u] * u + data[c + 2u]) * u + data[c + 1u]) * u + data[c];
        float rcp = 1.0 / length(v);
        return (!isinf(rcp) && !isnan(rcp) && rcp > 0.0) ? v * rcp : vec4(0.0, 0.0, 0.0, 1.0);
    }
    return data[d.w + pick_key(K_Q_STEP, d.x, i, u)];
}

// Joint `j` of `clip` at clip time `t` (already wrapped).
void sample_joint(uint clip, uint j, float t, bool looping, out vec3 tr, out vec4 rot, out vec3 sc) {
    uint base = clips[clip].x + j * 3u;
    uvec4 dt = descs[base];
    if (dt.x == K_M_STEP || dt.x == K_M_NEAREST) {
        float u;
        uint i = locate(dt.y, dt.z, t, u);
        uint k = dt.w + pick_key(K_M_STEP, dt.x, i, u) * 3u;
        tr = data[k].xyz;
        rot = data[k + 1u];
        sc = data[k + 2u].xyz;
        return;
    }
    tr = sample_vec3(dt, t);
    rot = sample_quat(descs[base + 1u], t, looping);
    sc = sample_vec3(descs[base + 2u], t);
}
