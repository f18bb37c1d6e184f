#ifndef VKSKIN_INSTANCE_GLSL
#define VKSKIN_INSTANCE_GLSL
// Per-instance vertex stream (binding 3, input rate instance): the
// instance's model-to-world matrix as three rows and a colour tint. Palettes
// stay in model space (precision far from the origin); only this moves the
// skinned vertex into the world. Host mirror: vkskin::skin::InstanceRecord.
layout(location = 7) in vec4 inst_row0;
layout(location = 8) in vec4 inst_row1;
layout(location = 9) in vec4 inst_row2;
layout(location = 10) in vec4 inst_tint;

vec3 instance_point(vec3 p) {
    vec4 h = vec4(p, 1.0);
    return vec3(dot(inst_row0, h), dot(inst_row1, h), dot(inst_row2, h));
}

// A direction in the surface (a tangent): the linear part, renormalised.
vec3 instance_direction(vec3 t) {
    mat3 m = transpose(mat3(inst_row0.xyz, inst_row1.xyz, inst_row2.xyz));
    return normalize_or_zero(m * t);
}

vec3 instance_normal(vec3 n) {
    mat3 m = transpose(mat3(inst_row0.xyz, inst_row1.xyz, inst_row2.xyz));
    return normalize_or_zero(cofactor(m) * n);
}
#endif
