#version 460
#include "../common/frame.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec2 in_uv;
layout(location = 2) in vec4 in_tint;
layout(location = 0) out vec4 out_color;

void main() {
    vec3 c = frame.color.rgb * in_tint.rgb;
    if (frame.light.w > 0.0) {
        // Two-sided: thin sheets (the trident) are seen from both sides.
        vec3 n = normalize(in_normal);
        float d = abs(dot(n, normalize(frame.light.xyz)));
        c *= 0.25 + 0.75 * d;
    }
    out_color = vec4(c, 1.0);
}
