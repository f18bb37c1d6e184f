#ifndef VKSKIN_PUSH_GLSL
#define VKSKIN_PUSH_GLSL
// The push constants of the vertex stage (DrawPush) and the compute stage
// (ComputePush, when SKIN_STAGE_COMPUTE is defined), named `pc`. A storage
// may open the block with fields of its own: it defines PALETTE_PUSH_FIELDS
// and includes this file before its palette_vec4 (host: the storage's
// push_prefix, written in front of the struct). The push storage holds the
// palette itself in push constants: the vertex stage declares no DrawPush.
#ifndef PALETTE_PUSH_FIELDS
#define PALETTE_PUSH_FIELDS
#endif

#ifdef SKIN_STAGE_COMPUTE
// Host mirror: vkskin::skin::ComputePush.
layout(push_constant, std430) uniform ComputePush {
    PALETTE_PUSH_FIELDS
    uint palette_base;
    uint palette_stride;
    uint vertex_count;
    uint instance_count;
    // Output vertex of instance 0's vertex 0.
    uint out_base;
    // Instance record of the batch's instance 0 (morph headers).
    uint first_record;
} pc;
#elif !defined(PALETTE_IN_PUSH_CONSTANTS)
// Host mirror: vkskin::skin::DrawPush.
layout(push_constant, std430) uniform DrawPush {
    PALETTE_PUSH_FIELDS
    // First vec4 of the draw's first instance's palette (partition).
    uint palette_base;
    // Vec4s from one instance's palette to the next.
    uint palette_stride;
    // The draw's firstInstance.
    uint first_instance;
    // MOTION: vec4s from the palette to the previous one (else 0).
    uint previous_offset;
} pc;
#endif
#endif
