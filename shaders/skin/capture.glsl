#ifndef VKSKIN_CAPTURE_GLSL
#define VKSKIN_CAPTURE_GLSL
// Capture mode (SKIN_CAPTURE, set 2): the vertex stage also writes each
// skinned model-space vertex to a storage buffer, instance i's vertex v at
// i * vertex_count + v, for tests against the CPU reference. `first` is the
// captured batch's first instance record. Host mirror:
// vkskin::skin::{CaptureHeader, CapturedVertex}.
struct CapturedVertex {
    vec4 position;
    vec4 normal;
    // MOTION: the previous frame's skinned position (else zero).
    vec4 previous;
    // TANGENTS: the skinned tangent, w its handedness (else zero).
    vec4 tangent;
};
layout(set = 2, binding = 0, std430) buffer Capture {
    uint vertex_count;
    uint first;
    uint capacity;
    uint _pad;
    CapturedVertex vertices[];
} capture;

void capture_at(uint i, vec3 p, vec3 n) {
    if (i < capture.capacity) {
        capture.vertices[i].position = vec4(p, 1.0);
        capture.vertices[i].normal = vec4(n, 0.0);
    }
}

void capture_previous_at(uint i, vec3 p) {
    if (i < capture.capacity) {
        capture.vertices[i].previous = vec4(p, 1.0);
    }
}

// Skinning pipelines: instance record `record`, mesh vertex `vertex`: the
// previous position (MOTION).
void capture_previous(uint record, uint vertex, vec3 p) {
    if (record >= capture.first && vertex < capture.vertex_count) {
        capture_previous_at((record - capture.first) * capture.vertex_count + vertex, p);
    }
}

// Skinning pipelines: instance record `record`, mesh vertex `vertex`: the
// skinned tangent (TANGENTS).
void capture_tangent(uint record, uint vertex, vec4 t) {
    if (record >= capture.first && vertex < capture.vertex_count) {
        uint i = (record - capture.first) * capture.vertex_count + vertex;
        if (i < capture.capacity) {
            capture.vertices[i].tangent = t;
        }
    }
}

// Skinning pipelines: instance record `record`, mesh vertex `vertex`.
void capture_vertex(uint record, uint vertex, vec3 p, vec3 n) {
    if (record >= capture.first && vertex < capture.vertex_count) {
        capture_at((record - capture.first) * capture.vertex_count + vertex, p, n);
    }
}
#endif
