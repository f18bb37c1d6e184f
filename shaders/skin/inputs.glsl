// The skinned vertex's inputs (the base, joint and weight streams, the
// vertex colour and, with TANGENTS, the tangent), shared by vkskin's vertex shader and the host include
// (host/skin_vertex.glsl). Locations match the pipelines' vertex input.
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 3) in uvec4 in_joints0;
layout(location = 4) in vec4 in_weights0;
#if INFLUENCES > 4
layout(location = 5) in uvec4 in_joints1;
layout(location = 6) in vec4 in_weights1;
#endif
// Vertex colour (stream 7; white where the mesh has none).
layout(location = 13) in vec4 in_color;
#ifdef TANGENTS
// Meshes with tangents: the bind-pose tangent (xyz a unit direction, w the
// bitangent's sign), stream 8.
layout(location = 14) in vec4 in_tangent;
#endif
