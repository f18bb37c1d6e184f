// A compressed clip's quantized tracks (anim/pose/compressed/format.rs and
// decode.rs, laid out by skin/anim/layout.rs `lay_packed`): the span
// holding t, the interval and segment in it, the track's two samples read
// from the bit stream (kept in the descriptor buffer, four words a
// descriptor) and dequantized as `format::dequantize` does; translation
// and scale lerped, rotations rebuilt with w >= 0 and nlerped the short
// way. Included by sample.glsl after the store's buffers.
//
// A K_PACKED descriptor: (K_PACKED, header, track, first datum of the
// track's range: minimum then extent). descs[header] = (spans, tracks,
// first segment track, 0); descs[header + 1 + i] = span i (start bits,
// samples-a-second bits, samples, first segment); a segment track =
// (bit rate | left-out component << 5 | minima << 8.., extents, bit
// position of its first kept sample, its stride's shift: it keeps every
// 2^shift-th sample of the segment, format::stride_at).

const uint K_PACKED = 13u;
// format::SEGMENT: intervals per segment.
const uint PACKED_SEGMENT = 16u;

uint packed_word(uint i) {
    return descs[i >> 2u][i & 3u];
}

// `bits` bits (<= 24) at bit `pos` of the descriptor words, LSB first.
uint packed_read(uint pos, uint bits) {
    uint w = pos >> 5u;
    uint sh = pos & 31u;
    uint v = packed_word(w) >> sh;
    if (sh + bits > 32u) {
        v |= packed_word(w + 1u) << (32u - sh);
    }
    return v & ((1u << bits) - 1u);
}

vec3 packed_decode(uint pos, uvec4 st, vec3 cmin, vec3 cext) {
    uint bits = st.x & 0x1fu;
    vec3 n = vec3(0.0);
    if (bits != 0u) {
        float inv_levels = 1.0 / float((1u << bits) - 1u);
        n = vec3(float(packed_read(pos, bits)), float(packed_read(pos + bits, bits)),
                 float(packed_read(pos + 2u * bits, bits))) * inv_levels;
    }
    const float INV_255 = 1.0 / 255.0;
    vec3 smin = vec3((uvec3(st.x) >> uvec3(8u, 16u, 24u)) & 0xffu) * INV_255;
    vec3 sext = vec3((uvec3(st.y) >> uvec3(0u, 8u, 16u)) & 0xffu) * INV_255;
    return cmin + cext * (smin + sext * n);
}

// The track's two samples around t, the fraction between them and the
// rotation's left-out component.
void packed_pair(uvec4 d, float t, out vec3 a, out vec3 b, out float u, out uint largest) {
    uvec4 h = descs[d.y];
    uint sp = 0u;
    for (uint i = 1u; i < h.x; ++i) {
        if (uintBitsToFloat(descs[d.y + 1u + i].x) <= t) {
            sp = i;
        } else {
            break;
        }
    }
    uvec4 s = descs[d.y + 1u + sp];
    float x = max((t - uintBitsToFloat(s.x)) * uintBitsToFloat(s.y), 0.0);
    uint k = min(uint(x), s.z - 2u);
    u = clamp(x - float(k), 0.0, 1.0);
    uint seg = s.w + k / PACKED_SEGMENT;
    uvec4 st = descs[h.z + seg * h.y + d.z];
    uint kk = k % PACKED_SEGMENT;
    uint row = 3u * (st.x & 0x1fu);
    uint pos = st.z + (kk >> st.w) * row;
    u = (float(kk & ((1u << st.w) - 1u)) + u) * (1.0 / float(1u << st.w));
    largest = (st.x >> 5u) & 3u;
    vec3 cmin = data[d.w].xyz;
    vec3 cext = data[d.w + 1u].xyz;
    a = packed_decode(pos, st, cmin, cext);
    b = packed_decode(pos + row, st, cmin, cext);
}

vec3 sample_packed_vec3(uvec4 d, float t) {
    vec3 a, b;
    float u;
    uint largest;
    packed_pair(d, t, a, b, u, largest);
    return a * (1.0 - u) + b * u;
}

// format::quat_of, format::nlerp4, then format::place.
vec4 sample_packed_quat(uvec4 d, float t) {
    vec3 a3, b3;
    float u;
    uint largest;
    packed_pair(d, t, a3, b3, u, largest);
    vec4 a = vec4(a3, sqrt(max(1.0 - dot(a3, a3), 0.0)));
    vec4 b = vec4(b3, sqrt(max(1.0 - dot(b3, b3), 0.0)));
    if (dot(a, b) < 0.0) {
        b = -b;
    }
    vec4 r = a * (1.0 - u) + b * u;
    vec4 q = r * (1.0 / sqrt(dot(r, r)));
    if (largest == 0u) {
        return q.wxyz;
    }
    if (largest == 1u) {
        return q.xwyz;
    }
    if (largest == 2u) {
        return q.xywz;
    }
    return q;
}
