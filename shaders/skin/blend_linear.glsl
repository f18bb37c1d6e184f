// Linear blend skinning over the fetched transforms: M = sum w_k X_k,
// as vkskin::anim::LinearBlendJob does on the CPU. Needs skin_fetch().
SkinXform skin_blend(uvec4 joints, vec4 weights) {
    SkinXform acc;
    acc.m = mat3(0.0);
    acc.t = vec3(0.0);
    for (int k = 0; k < 4; ++k) {
        SkinXform x = skin_fetch(joints[k]);
        acc.m += x.m * weights[k];
        acc.t += x.t * weights[k];
    }
    return acc;
}
