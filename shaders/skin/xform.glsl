#ifndef VKSKIN_XFORM_GLSL
#define VKSKIN_XFORM_GLSL
// One skinning transform as the palette paths hand it to the blend:
// p' = m * p + t. Paths that store matrices convert to this.
struct SkinXform {
    mat3 m;
    vec3 t;
};
#endif
