//! The vertex route's GLSL and layouts on every vertex-stage path: for each
//! permutation (4 and 8 influences, morph, tangents), a host vertex shader that
//! includes the generated header and calls `skin_vertex()` (and, on paths
//! built with motion vectors, `skin_vertex_previous()`) compiles, and a
//! pipeline layout made of the route's set layouts (at their numbers) and
//! push range is accepted by the device; the route refuses the compute and
//! CPU stages and the skinned output refuses the vertex stage. Under
//! validation with synchronization validation, the log checked after
//! teardown. (The pixels: samples/embed/tests/own_shader.rs.)
#![cfg(feature = "gpu")]

use std::sync::Arc;

use vkskin::gpu::{compile, vk, DescriptorSetLayout, PipelineLayout, ShaderDesc};
use vkskin::skin::{paths, SkinPath, SkinPathConfig, Stage, HOST_SKIN_HEADER};
use vkskin_tests::gpu::GpuTest;

const HOST_VERTEX: &str = r#"#version 460
#include "skin/gen/host_skin.glsl"
layout(set = 0, binding = 0, std140) uniform HostCamera { mat4 view_proj; } cam;
layout(location = 0) out vec3 v_normal;
layout(location = 1) out vec2 v_uv;
#ifdef MOTION
layout(location = 2) out vec3 v_prev;
#endif
#ifdef TANGENTS
layout(location = 3) out vec4 v_tangent;
#endif
void main() {
#ifdef MOTION
    v_prev = skin_vertex_previous();
#endif
    SkinnedVertex s = skin_vertex();
#ifdef TANGENTS
    v_tangent = s.world_tangent + s.tangent * 0.0;
#endif
    v_normal = s.world_normal + s.normal * 0.0;
    v_uv = s.uv + s.color.xy * 0.0 + s.tint.xy * 0.0;
    gl_Position = cam.view_proj * vec4(s.world_position + s.position * 0.0, 1.0);
}
"#;

#[test]
fn vertex_route_compiles_and_lays_out_on_every_vertex_path() {
    let gpu = GpuTest::new();
    assert!(HOST_VERTEX.contains(HOST_SKIN_HEADER));
    let plain = SkinPathConfig::new(vk::Format::R8G8B8A8_UNORM, vk::Format::D32_SFLOAT, 2);
    let mut motion_cfg = plain.clone();
    motion_cfg.motion = true;
    let empty = DescriptorSetLayout::new(&gpu.device, &[]).unwrap();
    let mut checked = 0;
    for (desc, motion) in paths().iter().flat_map(|d| [(d, false), (d, true)]) {
        let cfg = if motion { &motion_cfg } else { &plain };
        let path = match SkinPath::new(&gpu.device, desc, cfg.clone()) {
            Ok(p) => p,
            Err(e) => {
                println!("{}: skipped on this device ({e})", desc.name);
                continue;
            }
        };
        if desc.stage != Stage::Vertex {
            assert!(path.host_vertex_route(4, false).is_err(), "{}", desc.name);
            continue;
        }
        assert!(path.host_vertex_route(5, false).is_err(), "{}", desc.name);
        // (influences, morph, tangents)
        let perms: &[(u32, bool, bool)] = if motion {
            &[(4, false, false), (8, true, true)]
        } else {
            &[
                (4, false, false),
                (8, false, true),
                (4, true, false),
                (8, true, true),
            ]
        };
        for &(influences, morph, tangents) in perms {
            let route = path
                .host_vertex_route_with(influences, morph, tangents)
                .unwrap();
            let label = format!(
                "{} {influences} influences, morph {morph}, tangents {tangents}, motion {motion}",
                desc.name
            );
            assert_eq!(route.tangents, tangents, "{label}");
            assert_eq!(
                route.header.contains("#define TANGENTS"),
                tangents,
                "{label}"
            );
            assert_eq!(
                route
                    .vertex_attributes
                    .iter()
                    .any(|a| a.location == 14 && a.binding == 8),
                tangents,
                "{label}"
            );
            assert_eq!(route.header.contains("#define MOTION"), motion, "{label}");
            assert!(route.header.contains(desc.encoding.shader()), "{label}");
            assert!(route
                .header
                .contains(&format!("#define INFLUENCES {influences}")));
            assert_eq!(route.header.contains("#define MORPH"), morph, "{label}");
            let sources = route.sources().with("host/test.vert", HOST_VERTEX);
            compile(&sources, &ShaderDesc::new("host/test.vert"))
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            // The host's layout: its set 0, vkskin's sets at their numbers.
            let top = route.set_layouts.iter().map(|s| s.0).max().unwrap_or(0);
            let mut sets = vec![empty.raw(); top as usize + 1];
            for &(n, l) in &route.set_layouts {
                assert!(n == 1 || n == 3, "{label}: set {n}");
                sets[n as usize] = l;
            }
            assert_eq!(
                route.set_layouts.iter().any(|s| s.0 == 1),
                desc.storage.and_then(|s| s.descriptor()).is_some(),
                "{label}"
            );
            let push: Vec<_> = route.push_constants.into_iter().collect();
            let _layout: Arc<PipelineLayout> =
                PipelineLayout::new(&gpu.device, &sets, &push).unwrap();
            assert!(route.vertex_attributes.iter().any(|a| a.location == 13));
            assert_eq!(
                route.vertex_attributes.iter().any(|a| a.location == 5),
                influences > 4,
                "{label}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 6 * 8, "only {checked} permutations checked");
    drop(empty);
    gpu.finish();
}
