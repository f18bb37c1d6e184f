//! `--up z` stands a model authored Z-up (tiny_4anim.x: its biped stands
//! along +Z) upright: the framing camera puts the bounds' tallest axis on
//! the screen's vertical, and the headless frame shows a figure taller
//! than wide, where `--up y` (the default) shows it lying down. Needs the
//! shared assets (skipped with a notice without them, a failure under
//! `CI=true`).

use std::process::Command;

use viewer::args::Up;
use viewer::orbit::Orbit;
use vkskin::glam::Vec3;

/// The screen-space run of the bounds' tallest axis through their centre,
/// in pixels of an 800x600 view: (horizontal, vertical).
fn tallest_axis_on_screen(up: Up) -> Option<(f32, f32)> {
    let path = vkskin_tests::asset("x/tiny_4anim.x")?;
    let model = vkskin::assets::load(&path).expect("tiny_4anim.x loads");
    let b = model.animated_bounds(16).expect("bounds");
    let size = b.max - b.min;
    let axis = if size.z >= size.x && size.z >= size.y {
        Vec3::Z
    } else if size.y >= size.x {
        Vec3::Y
    } else {
        Vec3::X
    };
    assert_eq!(axis, Vec3::Z, "tiny_4anim.x is tallest along Z: {size}");
    // The .x loader mirrors the file's Z: the file's up is the model's -Z.
    assert_eq!(model.file_axis(Vec3::Z), Vec3::NEG_Z);
    let centre = (b.min + b.max) * 0.5;
    let half = axis * (size * 0.5);
    let cam = Orbit::with_up(model.file_axis(up.vector())).camera(&b, 800.0 / 600.0);
    let a = cam.project_to_pixel(centre - half, 800, 600)?;
    let c = cam.project_to_pixel(centre + half, 800, 600)?;
    if up == Up::Z {
        // Upright, not upside down: the head above a foot on screen (y down).
        let joint = |part: &str| {
            let names = model.skeleton.names();
            let j = names.iter().position(|n| n.contains(part)).expect(part);
            model.skeleton.bind_model()[j].translation.into()
        };
        let head = cam.project_to_pixel(joint("Head"), 800, 600)?;
        let foot = cam.project_to_pixel(joint("Foot"), 800, 600)?;
        assert!(head.y < foot.y, "--up z: head at {head}, foot at {foot}");
    }
    Some(((c.x - a.x).abs(), (c.y - a.y).abs()))
}

#[test]
fn up_z_puts_the_tallest_axis_on_the_screens_vertical() {
    let Some((dx, dy)) = tallest_axis_on_screen(Up::Z) else {
        return;
    };
    assert!(
        dy > 20.0 * dx.max(1e-3),
        "--up z: tallest axis runs {dx} across, {dy} up"
    );
    let (dx, dy) = tallest_axis_on_screen(Up::Y).expect("projects");
    assert!(
        dx > dy,
        "--up y: the Z-up figure should lie on its side ({dx} across, {dy} up)"
    );
}

/// The drawn pixels' bounding box in a headless frame: (width, height).
fn drawn_extent(up: &str) -> Option<(u32, u32)> {
    let path = vkskin_tests::asset("x/tiny_4anim.x")?;
    let out = std::env::temp_dir().join(format!("vkskin-viewer-up-{up}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .arg(&path)
        .args([
            "--headless",
            "--frames",
            "1",
            "--size",
            "400x400",
            "--up",
            up,
        ])
        .arg("--out")
        .arg(&out)
        .env("VKSKIN_VALIDATION", "1")
        .status()
        .expect("running the viewer");
    assert!(status.success(), "viewer --up {up} exited with {status}");
    let ((w, h), px) = vkskin_tests::read_png(&out.join("frame_0000.png"));
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for (i, p) in px.chunks_exact(4).enumerate() {
        // Not the clear colour (15, 18, 23).
        if p[..3]
            .iter()
            .zip([15u8, 18, 23])
            .any(|(a, b)| a.abs_diff(b) > 4)
        {
            let (x, y) = (i as u32 % w, i as u32 / w);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(x1 > x0 && y1 > y0, "--up {up}: nothing drawn");
    Some((x1 - x0, y1 - y0))
}

#[test]
fn up_z_draws_tiny_standing_and_up_y_lying() {
    let Some((w, h)) = drawn_extent("z") else {
        return;
    };
    assert!(h > w, "--up z: the figure is {w} wide and {h} tall");
    let (w, h) = drawn_extent("y").expect("assets present");
    assert!(
        w > h,
        "--up y: the Z-up figure should lie ({w} wide, {h} tall)"
    );
}
