#version 460
#include "../common/frame.glsl"
#include "material.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec2 in_uv;
layout(location = 2) in vec4 in_tint;
layout(location = 4) in vec4 in_color;
layout(location = 0) out vec4 out_color;
#ifdef MOTION
// World-space previous and current positions (vertex.glsl, plain.vert).
layout(location = 3) in vec3 in_prev_position;
layout(location = 5) in vec3 in_position;
#endif

void main() {
#ifdef MOTION
    // The motion view (frame.light.w == 2): world-space velocity as colour,
    // 0.5 + 0.5 * clamp(velocity * frame.color.w) per axis (x red, y
    // green, z blue), so zero velocity is grey (0.5, 0.5, 0.5).
    if (frame.light.w > 1.5) {
        vec3 v = (in_position - in_prev_position) * frame.color.w;
        out_color = vec4(0.5 + 0.5 * clamp(v, -1.0, 1.0), 1.0);
        return;
    }
#endif
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
