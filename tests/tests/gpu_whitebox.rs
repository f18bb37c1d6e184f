//! Seed 000's trident through the path rig: bind pose, frames in flight with
//! palettes rewritten every frame, and the headless wireframe render.
#![cfg(feature = "gpu")]

use glam::Vec3;
use vkskin::anim::PaletteHierarchy;
use vkskin::assets::builtin::Trident;
use vkskin::assets::Model;
use vkskin::gpu::vk;
use vkskin::skin::find;
use vkskin_tests::gpu::{
    cpu_skin, max_differences, path_reference, trident_skin, GpuTest, PathRig,
};

fn trident_rig(
    gpu: &GpuTest,
    name: &str,
    polygon: vk::PolygonMode,
    capture: bool,
    frames: usize,
) -> (Model, PathRig) {
    let model = Trident::model();
    let rig = PathRig::new(
        gpu,
        find(name).expect("path"),
        &model,
        0,
        polygon,
        capture,
        None,
        frames,
        256,
    )
    .expect("rig");
    (model, rig)
}

#[test]
fn bind_pose_leaves_vertices_where_they_are() {
    let gpu = GpuTest::new();
    for name in [
        "4x3-ubo",
        "dq-texel",
        "qt-ssbo",
        "dq-scale-compute",
        "4x3-cpu",
    ] {
        let (model, mut rig) = trident_rig(&gpu, name, vk::PolygonMode::FILL, true, 2);
        let (_, skin) = trident_skin(&model, None);
        let (_, captured) = rig.draw(&gpu, &[&skin], false);
        let mesh = &model.meshes[0];
        for (v, c) in captured.iter().enumerate() {
            let d = (c.position() - mesh.positions[v]).abs().max_element();
            assert!(d <= 1e-6, "{name}: vertex {v} moved by {d:e}");
            assert!((c.normal() - mesh.normals[v]).abs().max_element() <= 1e-6);
        }
    }
    gpu.finish();
}

#[test]
fn palettes_rewritten_every_frame_with_two_and_three_frames_in_flight() {
    // Each frame slot keeps its own palette storage: every frame's capture
    // shows that frame's pose, never a neighbour's.
    let gpu = GpuTest::new();
    for frames in [2usize, 3] {
        for desc in vkskin::skin::paths() {
            let name = desc.name;
            let model = Trident::model();
            let Ok(mut rig) = PathRig::new(
                &gpu,
                desc,
                &model,
                0,
                vk::PolygonMode::FILL,
                true,
                None,
                frames,
                64,
            ) else {
                // A push palette too small for the trident (checked in gpu_paths).
                assert!(name.ends_with("-push"), "{name} refused the trident");
                continue;
            };
            let hierarchy = PaletteHierarchy::new(&model.skins[0], &model.skeleton).unwrap();
            let mut slots = Vec::new();
            for i in 0..(3 * frames) {
                let t = 0.1 + 0.37 * i as f32;
                let (_, skin) = trident_skin(&model, Some(t));
                let (slot, captured) = rig.draw(&gpu, &[&skin], true);
                slots.push(slot);
                let (pos, nrm) = path_reference(desc, &model.meshes[0], &hierarchy, &skin);
                let (dp, dn, _) =
                    max_differences(&captured, &pos, &nrm, &model.meshes[0].indices, &[]);
                assert!(
                    dp <= 1e-5 && dn <= 1e-5,
                    "{name} frames={frames} t={t}: {dp:e} {dn:e}"
                );
            }
            // The slots went round.
            assert_eq!(
                slots[..frames],
                (0..frames).collect::<Vec<_>>()[..],
                "{name}"
            );
            assert_eq!(slots[frames], 0);
            // Slot 0's GPU time was read when the slot came round again.
            let ms = rig.path.gpu_ms(0);
            assert!(
                ms.is_some_and(|ms| ms > 0.0 && ms < 10_000.0),
                "{name}: {ms:?}"
            );
        }
    }
    gpu.finish();
}

#[test]
fn headless_wireframe_shows_wires_at_the_projected_vertices() {
    let gpu = GpuTest::new();
    if !gpu.device.features().fill_mode_non_solid {
        eprintln!("NOTICE: no fillModeNonSolid; wireframe check skipped");
        return;
    }
    let (model, mut rig) = trident_rig(&gpu, "4x3-ubo", vk::PolygonMode::LINE, false, 2);
    let out = std::env::temp_dir().join(format!("vkskin-wire-{}", std::process::id()));
    for (i, t) in [0.37f32, 2.5].into_iter().enumerate() {
        let (_, skin) = trident_skin(&model, Some(t));
        let (cpu_pos, _) = cpu_skin(&model, &skin);
        rig.draw(&gpu, &[&skin], false);
        let e = rig.target.extent();
        let (w, h) = (e.width as i32, e.height as i32);
        let path = out.join(format!("frame{i}.png"));
        rig.target.write_png(&path).unwrap();
        let rgba = decode_png(&path, e.width, e.height);
        let lit = |x: i32, y: i32| {
            (x >= 0 && y >= 0 && x < w && y < h) && rgba[((y * w + x) * 4) as usize] > 128
        };
        // Every vertex ends wire segments: a lit pixel within 2 px of it.
        for (v, p) in cpu_pos.iter().enumerate() {
            let px = rig.camera.project_to_pixel(*p, e.width, e.height).unwrap();
            let (cx, cy) = (px.x.floor() as i32, px.y.floor() as i32);
            let near = (-2..=2).any(|dy| (-2..=2).any(|dx| lit(cx + dx, cy + dy)));
            assert!(near, "t={t}: no wire near vertex {v} at {px}");
        }
        // Wires, not a filled or blank image.
        let count = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .filter(|&(x, y)| lit(x, y))
            .count();
        assert!(
            count > 200 && count < (w * h / 8) as usize,
            "{count} lit pixels"
        );
        // The middle of a big triangle (0, 1, 14: the handle's bottom) stays dark.
        let c = (cpu_pos[0] + cpu_pos[1] + cpu_pos[14]) / 3.0;
        let _ = Vec3::ZERO;
        let pc = rig.camera.project_to_pixel(c, e.width, e.height).unwrap();
        assert!(
            !lit(pc.x as i32, pc.y as i32),
            "t={t}: triangle interior is lit"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    drop(rig);
    gpu.finish();
}

fn decode_png(path: &std::path::Path, w: u32, h: u32) -> Vec<u8> {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (w, h));
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    buf
}
