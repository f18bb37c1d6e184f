//! The host's own textured shader through vkskin's two host routes
//! (`embed --own-shader vertex|compute`): its frames equal vkskin's own
//! textured frames of the same moment, and the compute route's exposed
//! output ranges hold the CPU reference's skinned vertices. The raw-ash
//! host runs with the validation layer and synchronization validation on
//! its own messenger; its problems are read after it destroyed everything
//! (teardown included).

use embed::own::Route;
use embed::{render_with, textured_character, HostFrame, HostOptions, Shading};
use vkskin::anim::{
    LinearBlendJob, LocalToModelJob, PlaybackMode, SamplingContext, SamplingJob, Transform,
};
use vkskin::glam::{Affine3A, Vec3};
use vkskin_tests::gpu::agreeing;

const W: u32 = 240;
const H: u32 = 180;
const FRAMES: u32 = 4;

fn frame(path: &str, shading: Shading) -> HostFrame {
    let f = render_with(
        &HostOptions {
            width: W,
            height: H,
            frames: FRAMES,
            path: Some(path.to_owned()),
            validation: true,
        },
        shading,
    )
    .unwrap_or_else(|e| panic!("{path} {shading:?}: {e}"));
    assert!(
        f.problems.is_empty(),
        "{path} {shading:?}: the host's validation messenger saw:\n{}",
        f.problems.join("\n")
    );
    assert_eq!(f.path, path);
    f
}

/// Whether pixel `p` is not the clear colour.
fn is_character(p: &[u8]) -> bool {
    embed::CLEAR
        .iter()
        .take(3)
        .zip(p)
        .any(|(c, v)| ((c * 255.0).round() as u8).abs_diff(*v) > 2)
}

/// Pixels that are not the clear colour.
fn covered(rgba: &[u8]) -> usize {
    rgba.chunks_exact(4).filter(|p| is_character(p)).count()
}

/// Of the pixels the character covers in `a` or `b`: how many, and the
/// fraction whose channels all agree within one step (1/255).
fn agreeing_on_character(a: &[u8], b: &[u8]) -> (usize, f64) {
    let (mut n, mut same) = (0usize, 0usize);
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        if is_character(p) || is_character(q) {
            n += 1;
            same += usize::from(p.iter().zip(q).all(|(x, y)| x.abs_diff(*y) <= 1));
        }
    }
    (n, same as f64 / n.max(1) as f64)
}

fn own_equals_vkskin(path: &str, route: Route) {
    let reference = frame(path, Shading::VkskinTextured);
    let own = frame(path, Shading::Own(route));
    let untextured = frame(path, Shading::Vkskin);
    let n = (W * H) as usize;
    // The character fills a fair part of the frame, and the texture shows:
    // the textured frame is not the untextured one.
    assert!(
        covered(&reference.rgba) > n / 50,
        "{path}: the character covers {} of {n} pixels",
        covered(&reference.rgba)
    );
    // Most of the character's pixels change with the texture.
    let (_, textured_vs_plain) = agreeing_on_character(&reference.rgba, &untextured.rgba);
    assert!(
        textured_vs_plain < 0.5,
        "{path}: the textured character agrees with the untextured one on {:.2}% of its pixels",
        textured_vs_plain * 100.0
    );
    let same = agreeing(&own.rgba, &reference.rgba);
    let (pixels, on_character) = agreeing_on_character(&own.rgba, &reference.rgba);
    println!(
        "{path} {route:?}: {:.4}% of all pixels and {:.4}% of the character's {pixels} within 1/255",
        same * 100.0,
        on_character * 100.0
    );
    assert!(
        same >= 0.999,
        "{path} {route:?}: the host's own shader agrees with vkskin's on {:.3}% of pixels (99.9% needed)",
        same * 100.0
    );
    // The character is a small part of the frame: hold its own pixels to
    // the same bar.
    assert!(
        on_character >= 0.999,
        "{path} {route:?}: {:.3}% of the character's pixels agree (99.9% needed)",
        on_character * 100.0
    );
}

#[test]
fn vertex_route_on_4x3_ubo_equals_vkskin_shading() {
    own_equals_vkskin("4x3-ubo", Route::Vertex);
}

#[test]
fn vertex_route_on_dq_ssbo_equals_vkskin_shading() {
    own_equals_vkskin("dq-ssbo", Route::Vertex);
}

#[test]
fn compute_route_on_4x3_compute_equals_vkskin_shading() {
    own_equals_vkskin("4x3-compute", Route::Compute);
}

/// Motion vectors through the vertex route: the host's own velocity view
/// (`skin_vertex_previous()`) equals vkskin's motion view of the same
/// frame, and the character moves (not every pixel is still-grey).
#[test]
fn vertex_route_motion_equals_vkskin_motion_view() {
    for path in ["4x3-ubo", "dq-ssbo"] {
        let reference = frame(path, Shading::VkskinMotion);
        let own = frame(path, Shading::OwnMotion);
        let moving = reference
            .rgba
            .chunks_exact(4)
            .filter(|p| is_character(p) && p.iter().take(3).any(|c| c.abs_diff(128) > 3))
            .count();
        assert!(moving > 100, "{path}: {moving} pixels show motion");
        let same = agreeing(&own.rgba, &reference.rgba);
        let (pixels, on_character) = agreeing_on_character(&own.rgba, &reference.rgba);
        println!(
            "{path} motion: {:.4}% of all pixels and {:.4}% of the character's {pixels} within 1/255 ({moving} moving)",
            same * 100.0,
            on_character * 100.0
        );
        assert!(
            same >= 0.999 && on_character >= 0.999,
            "{path}: {same} {on_character}"
        );
    }
}

/// The same route on the CPU stage's output (host-visible, `HOST` writes).
#[test]
fn compute_route_on_4x3_cpu_equals_vkskin_shading() {
    own_equals_vkskin("4x3-cpu", Route::Compute);
}

#[test]
fn compute_route_exposes_the_cpu_reference_vertices() {
    let own = frame("4x3-compute", Shading::Own(Route::Compute));
    let (positions, normals) = own.skinned.expect("the compute route's readback");
    // The CPU reference of the last frame: clip 0 at t = (FRAMES - 1) / 30
    // s, looping, through LinearBlendJob (what 4x3 encodes).
    let model = textured_character().expect("the textured character");
    let clip = &model.clips[0];
    let s = &model.skeleton;
    let mut locals = vec![Transform::IDENTITY; s.len()];
    let mut context = SamplingContext::new(clip);
    SamplingJob {
        clip,
        context: &mut context,
        time: (FRAMES - 1) as f32 / 30.0,
        mode: PlaybackMode::Loop,
        output: &mut locals,
    }
    .run()
    .expect("sampling");
    let mut joints = vec![Affine3A::IDENTITY; s.len()];
    LocalToModelJob::full(s, &locals, &mut joints)
        .run()
        .expect("local to model");
    let mesh = &model.meshes[0];
    let skin_of = &model.skins[mesh.skin];
    let mut skin = vec![Affine3A::IDENTITY; skin_of.len()];
    skin_of
        .skin_matrices(&joints, &mut skin)
        .expect("skin matrices");
    let n = mesh.positions.len();
    let mut pos = vec![Vec3::ZERO; n];
    let mut nrm = vec![Vec3::ZERO; n];
    LinearBlendJob {
        skin: &skin,
        per_vertex: mesh.influences.per_vertex,
        joints: &mesh.influences.joints,
        weights: &mesh.influences.weights,
        positions: &mesh.positions,
        normals: &mesh.normals,
        out_positions: &mut pos,
        out_normals: &mut nrm,
        unit_normals: false,
    }
    .run()
    .expect("CPU skinning");
    assert_eq!(positions.len(), n, "vertices in instance 0's exposed range");
    assert_eq!(normals.len(), n);
    let extent = vkskin_tests::diagonal(&pos);
    let (mut dp, mut dn) = (0.0f32, 0.0f32);
    for v in 0..n {
        dp = dp.max((Vec3::from(positions[v]) - pos[v]).length());
        dn = dn.max((Vec3::from(normals[v]) - nrm[v]).length());
    }
    println!("compute route readback: max position error {dp:e} (extent {extent}), normal {dn:e}");
    assert!(
        dp <= 1e-4 * extent.max(1.0),
        "position error {dp} (extent {extent})"
    );
    assert!(dn <= 1e-3, "normal error {dn}");
    // The reference moved: a pose, not the bind pose, was compared.
    let moved = pos
        .iter()
        .zip(&mesh.positions)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0f32, f32::max);
    assert!(
        moved > 1e-3 * extent,
        "the clip does not move the mesh ({moved})"
    );
}

/// The routes' bookkeeping on vkskin's own device (validation and
/// synchronization validation, checked after teardown): two instances in
/// one batch, their exposed ranges one mesh apart, the stated barrier
/// source and index count; each route refused on the other
/// stages; a batch index past the frame's is an error.
#[test]
fn routes_list_batches_and_ranges_and_refuse_the_wrong_stage() {
    use vkskin::embed::{Pose, Renderer, SkinPathConfig};
    use vkskin::gpu::{one_shot, vk};
    use vkskin::render::OffscreenTarget;
    use vkskin::skin::find;
    use vkskin_tests::gpu::GpuTest;

    let gpu = GpuTest::new();
    let model = textured_character().unwrap();
    let cfg = SkinPathConfig::new(
        OffscreenTarget::COLOR_FORMAT,
        OffscreenTarget::DEPTH_FORMAT,
        2,
    );
    let u = vkskin::embed::FrameUniforms {
        view_proj: vkskin::glam::Mat4::IDENTITY.to_cols_array_2d(),
        color: [1.0; 4],
        light: [0.3, 0.5, 1.0, 1.0],
    };
    {
        let mut r = Renderer::new(&gpu.device, find("4x3-compute").unwrap(), cfg.clone()).unwrap();
        let c = r.add_character(&model).unwrap();
        let a = r
            .add_instance(c, Affine3A::IDENTITY, Pose::clip(0))
            .unwrap();
        let b = r.add_instance(c, Affine3A::IDENTITY, Pose::Bind).unwrap();
        assert!(r.host_vertex_route(4, false).is_err());
        let ranges = std::cell::RefCell::new(None);
        one_shot(&gpu.device, |cmd| {
            let frame = r.begin_frame(cmd, 0, 0.25, &u)?;
            let batches = r.host_batches(&frame)?;
            assert_eq!(batches.len(), model.meshes.len());
            assert_eq!(batches[0].instances, vec![a, b]);
            assert_eq!(batches[0].character, c);
            let out = r.skinned_output(&frame, 0)?;
            assert!(r.skinned_output(&frame, batches.len()).is_err());
            assert!(r
                .record_host(cmd, &frame, 0, vk::PipelineLayout::null())
                .is_err());
            *ranges.borrow_mut() = Some(out);
            r.end_frame(cmd, frame)
        })
        .unwrap();
        let out = ranges.into_inner().unwrap();
        assert_eq!(out.instances, 2);
        assert_eq!(out.vertex_count as usize, model.meshes[0].positions.len());
        assert_eq!(
            out.positions_at(1) - out.positions_at(0),
            u64::from(out.vertex_count) * 12
        );
        assert_eq!(
            out.normals_at(0) - out.positions_at(0),
            out.normals_offset - out.positions_offset
        );
        assert!(out.normals_offset >= out.positions_offset + 2 * u64::from(out.vertex_count) * 12);
        assert_eq!(out.src_stage, vk::PipelineStageFlags2::COMPUTE_SHADER);
        assert_eq!(out.src_access, vk::AccessFlags2::SHADER_STORAGE_WRITE);
        assert_eq!(out.index_count as usize, model.meshes[0].indices.len());
        assert!(out.buffer_address.is_none(), "no address unless asked for");
    }
    if gpu.device.features().buffer_device_address {
        // A host that feeds an acceleration-structure build asks for the
        // output's device address.
        let mut cfg = cfg.clone();
        cfg.output_usage = vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let mut r = Renderer::new(&gpu.device, find("4x3-compute").unwrap(), cfg).unwrap();
        let c = r.add_character(&model).unwrap();
        r.add_instance(c, Affine3A::IDENTITY, Pose::Bind).unwrap();
        let address = std::cell::Cell::new(None);
        one_shot(&gpu.device, |cmd| {
            let frame = r.begin_frame(cmd, 0, 0.0, &u)?;
            address.set(r.skinned_output(&frame, 0)?.buffer_address);
            r.end_frame(cmd, frame)
        })
        .unwrap();
        let address = address.get().expect("an address where one was asked for");
        assert_ne!(address, 0);
    } else {
        println!("this device lacks bufferDeviceAddress: output_usage address check skipped");
    }
    {
        let mut r = Renderer::new(&gpu.device, find("4x3-ubo").unwrap(), cfg).unwrap();
        let c = r.add_character(&model).unwrap();
        r.add_instance(c, Affine3A::IDENTITY, Pose::Bind).unwrap();
        let route = r.host_vertex_route(4, false).unwrap();
        assert_eq!(route.set_layouts.len(), 1);
        assert_eq!(route.set_layouts[0].0, 1);
        one_shot(&gpu.device, |cmd| {
            let frame = r.begin_frame(cmd, 0, 0.0, &u)?;
            assert!(r.skinned_output(&frame, 0).is_err());
            r.end_frame(cmd, frame)
        })
        .unwrap();
    }
    gpu.finish();
}
