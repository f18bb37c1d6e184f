//! Seed 000's trident skinned on the GPU through the 4x3 uniform palette,
//! checked against the CPU reference through capture mode, and rendered.
#![cfg(feature = "gpu")]

use glam::{Affine3A, Vec3};
use vkskin::gpu::vk;
use vkskin::skin::PathKind;
use vkskin_tests::gpu::{cpu_skin, trident_skin, GpuTest, TridentRig};

#[test]
fn gpu_skinned_trident_matches_the_cpu_reference() {
    let gpu = GpuTest::new();
    for &kind in PathKind::ALL {
        let mut rig = TridentRig::new(&gpu, kind, vk::PolygonMode::FILL, true);
        for t in [0.0f32, 0.37, 1.0, 2.5] {
            let (_, skin) = trident_skin(&rig.model, Some(t));
            let (cpu_pos, cpu_nrm) = cpu_skin(&rig.model, &skin);
            let (_, captured) = rig.draw(&gpu, &skin);
            assert_eq!(captured.len(), cpu_pos.len());
            let mut moved = 0.0f32;
            for (v, c) in captured.iter().enumerate() {
                let dp = (c.position() - cpu_pos[v]).abs().max_element();
                let dn = (c.normal() - cpu_nrm[v]).abs().max_element();
                assert!(
                    dp <= 1e-5 && dn <= 1e-5,
                    "{} t={t} vertex {v}: gpu {} / {} cpu {} / {} (dp {dp:e}, dn {dn:e})",
                    kind.name(),
                    c.position(),
                    c.normal(),
                    cpu_pos[v],
                    cpu_nrm[v]
                );
                assert_eq!(c.position[3], 1.0);
                moved = moved.max((cpu_pos[v] - rig.model.meshes[0].positions[v]).length());
            }
            // Away from t = 0 the pose really differs from the bind pose,
            // so the comparison is not of two copies of the input.
            if t > 0.0 {
                assert!(moved > 0.1, "t={t}: the pose barely moved ({moved})");
            }
        }
    }
    gpu.assert_clean();
}

#[test]
fn bind_pose_palette_is_identity_and_vertices_stay_put() {
    let gpu = GpuTest::new();
    for &kind in PathKind::ALL {
        let mut rig = TridentRig::new(&gpu, kind, vk::PolygonMode::FILL, true);
        let (_, skin) = trident_skin(&rig.model, None);
        let (frame, captured) = rig.draw(&gpu, &skin);
        let palette = rig.path.read_back(frame).unwrap();
        for (j, m) in palette.iter().enumerate() {
            assert!(
                m.abs_diff_eq(Affine3A::IDENTITY, 1e-6),
                "{} palette entry {j} is not the identity: {m:?}",
                kind.name()
            );
        }
        let mesh = &rig.model.meshes[0];
        for (v, c) in captured.iter().enumerate() {
            let d = (c.position() - mesh.positions[v]).abs().max_element();
            assert!(d <= 1e-6, "vertex {v} moved by {d:e}");
            assert!((c.normal() - mesh.normals[v]).abs().max_element() <= 1e-6);
        }
    }
    gpu.assert_clean();
}

#[test]
fn palettes_are_per_frame_in_flight() {
    // Frame slots alternate, and each keeps its own palette: writing the
    // next frame's never touches the one the GPU may still read.
    let gpu = GpuTest::new();
    let mut rig = TridentRig::new(&gpu, PathKind::Palette4x3Ubo, vk::PolygonMode::FILL, true);
    let (_, a) = trident_skin(&rig.model, Some(0.37));
    let (_, b) = trident_skin(&rig.model, Some(2.5));
    let (fa, _) = rig.draw(&gpu, &a);
    let (fb, _) = rig.draw(&gpu, &b);
    assert_ne!(fa, fb);
    let pa = rig.path.read_back(fa).unwrap();
    let pb = rig.path.read_back(fb).unwrap();
    for j in 0..a.len() {
        assert!(
            pa[j].abs_diff_eq(a[j], 1e-6) && pb[j].abs_diff_eq(b[j], 1e-6),
            "joint {j}"
        );
    }
    assert!(!pa[1].abs_diff_eq(pb[1], 1e-3));
    gpu.assert_clean();
}

#[test]
fn headless_wireframe_shows_wires_at_the_projected_vertices() {
    let gpu = GpuTest::new();
    if !gpu.device.features().fill_mode_non_solid {
        eprintln!("NOTICE: no fillModeNonSolid; wireframe check skipped");
        return;
    }
    let mut rig = TridentRig::new(&gpu, PathKind::Palette4x3Ubo, vk::PolygonMode::LINE, false);
    let out = std::env::temp_dir().join(format!("vkskin-wire-{}", std::process::id()));
    for (i, t) in [0.37f32, 2.5].into_iter().enumerate() {
        let (_, skin) = trident_skin(&rig.model, Some(t));
        let (cpu_pos, _) = cpu_skin(&rig.model, &skin);
        rig.draw(&gpu, &skin);
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
    gpu.assert_clean();
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
