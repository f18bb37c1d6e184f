#ifndef VKSKIN_SKIN_COMMON_GLSL
#define VKSKIN_SKIN_COMMON_GLSL
// Helpers shared by the encodings; each mirrors the CPU reference's
// arithmetic (vkskin::anim::skinning) so GPU and CPU agree to rounding.

#ifndef INFLUENCES
#define INFLUENCES 4
#endif

// Columns of the cofactor matrix (det(m) * inverse(m)^T): moves normals
// right under non-uniform scale and costs no inverse.
mat3 cofactor(mat3 m) {
    return mat3(cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1]));
}

// glam's normalize_or_zero: a zero (or non-finite) vector stays zero.
vec3 normalize_or_zero(vec3 v) {
    float len2 = dot(v, v);
    return len2 > 0.0 ? v * inversesqrt(len2) : vec3(0.0);
}

// Rotates v by the unit quaternion q = (x, y, z, w).
vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 b = q.xyz;
    return v * (q.w * q.w - dot(b, b)) + b * (2.0 * dot(v, b)) + cross(b, v) * (2.0 * q.w);
}

// glam's Mat3A::from_quat for a unit quaternion (columns).
mat3 quat_to_mat3(vec4 q) {
    float x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
    float xx = q.x * x2, xy = q.x * y2, xz = q.x * z2;
    float yy = q.y * y2, yz = q.y * z2, zz = q.z * z2;
    float wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
    return mat3(
        vec3(1.0 - (yy + zz), xy + wz, xz - wy),
        vec3(xy - wz, 1.0 - (xx + zz), yz + wx),
        vec3(xz + wy, yz - wx, 1.0 - (xx + yy)));
}

// Influence slot s (0..INFLUENCES-1) of a vertex's two joint/weight vec4s.
#define SLOT_JOINT(j, s) ((s) < 4 ? (j)[0][(s)] : (j)[1][(s) - 4])
#define SLOT_WEIGHT(w, s) ((s) < 4 ? (w)[0][(s)] : (w)[1][(s) - 4])
#endif
