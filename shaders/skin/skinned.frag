#version 460
#include "../common/frame.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 0) out vec4 out_color;

void main() {
    vec3 c = frame.color.rgb;
    if (frame.light.w > 0.0) {
        // Two-sided: the trident is a flat sheet seen from both sides.
        float d = abs(dot(normalize(in_normal), normalize(frame.light.xyz)));
        c *= 0.25 + 0.75 * d;
    }
    out_color = vec4(c, 1.0);
}
