//! The headless look is a contract (see the crate docs): a frame the
//! viewer writes is reproduced here, pixel for pixel, with the engine API
//! alone, following the contract's words. Validation is on for both.

use std::path::Path;
use std::process::Command;

use vkskin::anim::{LocalToModelJob, PaletteHierarchy, PlaybackMode, SamplingContext, SamplingJob};
use vkskin::assets::builtin::Character;
use vkskin::glam::Affine3A;
use vkskin::gpu::{vk, Device, DeviceDesc, Instance, InstanceDesc};
use vkskin::materials::ModelMaterials;
use vkskin::render::{Camera, FramesInFlight, OffscreenTarget};
use vkskin::skin::{FrameSets, FrameUniforms, SkinPath, SkinPathConfig};

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Frame `i` of the built-in character at `fps`, `width x height`, drawn
/// as the contract says.
fn contract_frame(i: u32, fps: f32, width: u32, height: u32) -> Vec<u8> {
    let instance = Instance::new(&InstanceDesc {
        app_name: "viewer-contract".into(),
        validation: true,
        synchronization_validation: true,
        display: None,
    })
    .unwrap();
    let log = instance.messages().clone();
    let device = Device::new(&instance, &DeviceDesc::default()).unwrap();
    drop(instance);
    let pixels = {
        let model = Character::model();
        let target = OffscreenTarget::new(&device, width, height).unwrap();
        let aspect = width as f32 / height as f32;
        let b = model.animated_bounds(16).unwrap();
        let camera = Camera::framing(b.min, b.max, 0.5, 0.2, 45f32.to_radians(), aspect);
        let bones = model
            .skins
            .iter()
            .map(|s| s.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let (desc, _) = vkskin::skin::auto(&device, bones, 1);
        let cfg = SkinPathConfig::new(
            OffscreenTarget::COLOR_FORMAT,
            OffscreenTarget::DEPTH_FORMAT,
            2,
        );
        let mut path = SkinPath::new(&device, desc, cfg).unwrap();
        let meshes: Vec<_> = model
            .meshes
            .iter()
            .map(|m| {
                let h = PaletteHierarchy::new(&model.skins[m.skin], &model.skeleton).unwrap();
                path.prepare(m, &h).unwrap()
            })
            .collect();
        let materials = ModelMaterials::new(&device, &model).unwrap();
        let mut frame_sets = FrameSets::new(&device, 2).unwrap();
        let mut frames = FramesInFlight::new(&device, 2).unwrap();
        let clip = &model.clips[0];
        let mut locals = model.skeleton.bind_local().to_vec();
        SamplingJob {
            clip,
            context: &mut SamplingContext::new(clip),
            time: i as f32 / fps,
            mode: PlaybackMode::Loop,
            output: &mut locals,
        }
        .run()
        .unwrap();
        let mut joints = vec![Affine3A::IDENTITY; model.skeleton.len()];
        LocalToModelJob::full(&model.skeleton, &locals, &mut joints)
            .run()
            .unwrap();
        let palettes: Vec<Vec<Affine3A>> = model
            .skins
            .iter()
            .map(|s| {
                let mut p = vec![Affine3A::IDENTITY; s.len()];
                s.skin_matrices(&joints, &mut p).unwrap();
                p
            })
            .collect();
        let frame = frames.begin().unwrap();
        path.begin_frame(frame.index).unwrap();
        let mut batches = Vec::new();
        for m in model.meshes.iter().zip(&meshes) {
            let tint = [1.0; 4];
            let mut w = path.batch(frame.index, m.1, 1).unwrap();
            batches.push(w.batch());
            let palette = &palettes[m.0.skin];
            w.write_all(|_| (palette.as_slice(), Affine3A::IDENTITY, tint))
                .unwrap();
        }
        frame_sets
            .write(
                frame.index,
                &FrameUniforms {
                    view_proj: camera.view_proj(aspect).to_cols_array_2d(),
                    color: [1.0; 4],
                    light: [0.3, 0.5, 1.0, 1.0],
                },
            )
            .unwrap();
        let list: Vec<_> = batches.iter().zip(&meshes).collect();
        path.prepass(frame.cmd, frame.index, &list).unwrap();
        target.begin(frame.cmd, [0.06, 0.07, 0.09, 1.0]);
        // The character's materials are opaque: model order.
        for ((b, m), mesh) in list.iter().zip(&model.meshes) {
            path.record_draw_with(
                frame.cmd,
                frame.index,
                &frame_sets,
                b,
                m,
                vk::PolygonMode::FILL,
                None,
                Some(materials.for_mesh(mesh)),
            )
            .unwrap();
        }
        target.end_and_copy(frame.cmd);
        path.finish(frame.cmd, frame.index).unwrap();
        frames.submit(&frame, None, None).unwrap();
        frames.wait(&frame).unwrap();
        target.read_rgba().unwrap()
    };
    drop(device);
    let problems = log.problems();
    assert!(
        problems.is_empty(),
        "{}",
        vkskin::gpu::MessageLog::format(&problems)
    );
    pixels
}

#[test]
fn a_headless_frame_is_reproduced_by_the_engine_api_alone() {
    let out = std::env::temp_dir().join(format!("vkskin-viewer-contract-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args([
            "--headless",
            "--frames",
            "3",
            "--fps",
            "10",
            "--size",
            "200x150",
            "--out",
        ])
        .arg(&out)
        .env("VKSKIN_VALIDATION", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (w, h, viewer) = decode(&out.join("frame_0002.png"));
    assert_eq!((w, h), (200, 150));
    let ours = contract_frame(2, 10.0, 200, 150);
    let differing = viewer.iter().zip(&ours).filter(|(a, b)| a != b).count();
    assert_eq!(
        differing, 0,
        "{differing} bytes differ from the contract's frame"
    );
    // And it is a real frame, not two equal blanks.
    assert!(ours.chunks(4).any(|p| p[0] > 100));
    let _ = std::fs::remove_dir_all(&out);
}
