#version 460
#include "../common/frame.glsl"
#include "material.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec2 in_uv;
layout(location = 2) in vec4 in_tint;
layout(location = 4) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    vec4 base = material_base(in_uv, in_color);
    if (material.alpha.y == MATERIAL_MASK && base.a < material.alpha.x) {
        discard;
    }
    vec3 c = frame.color.rgb * in_tint.rgb * base.rgb;
    if (frame.light.w > 0.0) {
        // Two-sided: thin sheets (the trident) are seen from both sides.
        vec3 n = normalize(in_normal);
        float d = abs(dot(n, normalize(frame.light.xyz)));
        c *= 0.25 + 0.75 * d;
    }
    float a = material.alpha.y == MATERIAL_BLEND ? base.a * in_tint.a : 1.0;
    out_color = vec4(c, a);
}
