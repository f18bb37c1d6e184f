#ifndef VKSKIN_MATERIAL_GLSL
#define VKSKIN_MATERIAL_GLSL
// The material, set 4 (host: vkskin::skin::GpuMaterial): binding 0 the
// base-colour texture (sRGB formats sample as linear), binding 1 its
// factors. Host mirror: vkskin::skin::MaterialUniforms.
layout(set = 4, binding = 0) uniform sampler2D base_color_texture;
layout(set = 4, binding = 1, std140) uniform MaterialUniforms {
    // Linear RGBA factor.
    vec4 base_color;
    // x: alpha cutoff; y: 0 opaque, 1 mask, 2 blend.
    vec4 alpha;
} material;

const float MATERIAL_MASK = 1.0;
const float MATERIAL_BLEND = 2.0;

// The sRGB encoding of a linear value (IEC 61966-2-1).
vec3 material_linear_to_srgb(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(vec3(0.0031308), c));
}

// Base colour factor x texture x vertex colour. The engine shades in the
// target's encoding (a UNORM target receives the values the shader
// writes): there (MATERIAL_TARGET_UNORM) the texture's linear sample is
// encoded back to sRGB, so an unlit texel lands on the target as the
// image file holds it; an sRGB target gets the linear value and the
// hardware encodes it.
vec4 material_base(vec2 uv, vec4 vertex_color) {
    vec4 t = texture(base_color_texture, uv);
#ifdef MATERIAL_TARGET_UNORM
    t.rgb = material_linear_to_srgb(t.rgb);
#endif
    return material.base_color * t * vertex_color;
}
#endif
