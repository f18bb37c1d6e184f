//! The overlay: the egui side panel (playback, skinning, view, stats,
//! joints, messages), the skeleton's bone lines and joint names. It reads a
//! [`Snapshot`] of the viewer and answers with [`Action`]s, applied between
//! frames.

use std::time::Instant;

use egui::{Align2, Color32, FontId, LayerId, Pos2, RichText, Stroke};
use vkskin::assets::Model;

use crate::script::{Action, ClipRef};

/// A line in the panel's message list (errors are also on stderr).
#[derive(Clone, Debug)]
pub struct Note {
    pub text: String,
    pub error: bool,
    pub at: Instant,
}

/// Frame timing shown in the panel.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Presented frames per second (smoothed).
    pub fps: f32,
    /// CPU milliseconds of sampling, blending, local-to-model and skinning
    /// matrices (smoothed).
    pub cpu_ms: f32,
    /// GPU milliseconds of the skinning path's work (timestamps).
    pub gpu_ms: Option<f64>,
    /// Where the animation ran.
    pub anim: vkskin::skin::anim::AnimateOn,
    /// GPU milliseconds of the animation pass (GPU animation, timestamps).
    pub anim_gpu_ms: Option<f64>,
}

/// What the panel shows.
pub struct Snapshot<'a> {
    pub model: &'a Model,
    pub clip: Option<usize>,
    pub time: f32,
    pub duration: f32,
    pub playing: bool,
    pub speed: f32,
    /// Incoming clip and its weight.
    pub fade: Option<(usize, f32)>,
    pub fade_seconds: f32,
    pub path: &'static str,
    pub influences: usize,
    pub loaded_influences: usize,
    pub frames_in_flight: usize,
    pub vsync: bool,
    pub wireframe: bool,
    pub wireframe_available: bool,
    pub skeleton: bool,
    /// Whether the skinned box is drawn.
    pub bounds: bool,
    /// Whether the motion view (velocity as colour) is on.
    pub motion: bool,
    /// Where the animation was asked to run, and why the CPU runs it
    /// when the GPU was asked for and cannot serve.
    pub anim_asked: vkskin::skin::anim::AnimateOn,
    pub anim_fallback: Option<&'a str>,
    /// The skinned box's eight corners on screen (bit 0 of the index: x at
    /// max, bit 1: y, bit 2: z), empty when not drawn.
    pub bounds_on_screen: &'a [Option<Pos2>],
    pub names: bool,
    pub stats: Stats,
    pub draw_parts: usize,
    pub gpu_vertices: usize,
    pub extent: (u32, u32),
    pub swapchains: u32,
    pub device: &'a str,
    pub lossy_bones: usize,
    /// Each joint's position on screen, in points (`None` behind the eye).
    pub joints_on_screen: &'a [Option<Pos2>],
    pub notes: &'a [Note],
    pub panel: bool,
    /// The model's up axis.
    pub up: crate::args::Up,
    /// The morph weights drawn this frame (the model's weight vector).
    pub weights: &'a [f32],
    /// Which of them are set by hand.
    pub overridden: &'a [Option<f32>],
}

const BONE: Color32 = Color32::from_rgb(255, 200, 90);
const HOVER: Color32 = Color32::from_rgb(120, 220, 255);
const BOX: Color32 = Color32::from_rgb(120, 255, 140);

/// Builds the frame's UI; `hover` is the joint highlighted (kept between
/// frames for the tree). Returns the panel's width in points (0 hidden).
pub fn build(
    ctx: &egui::Context,
    s: &Snapshot<'_>,
    actions: &mut Vec<Action>,
    hover: &mut Option<usize>,
) -> f32 {
    let (width, tree_hover) = if s.panel {
        panel(ctx, s, actions)
    } else {
        (0.0, None)
    };
    overlay(ctx, s, tree_hover, hover);
    errors(ctx, s);
    width
}

fn panel(ctx: &egui::Context, s: &Snapshot<'_>, actions: &mut Vec<Action>) -> (f32, Option<usize>) {
    let mut tree_hover = None;
    let r = egui::SidePanel::left("viewer-panel")
        .default_width(250.0)
        .resizable(true)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading(&s.model.name);
                playback(ui, s, actions);
                ui.separator();
                if !s.weights.is_empty() {
                    morph_targets(ui, s, actions);
                    ui.separator();
                }
                skinning(ui, s, actions);
                ui.separator();
                view(ui, s, actions);
                ui.separator();
                stats(ui, s);
                ui.separator();
                tree_hover = joints(ui, s);
                notes(ui, s);
            });
        });
    (r.response.rect.width(), tree_hover)
}

fn clip_name(m: &Model, c: Option<usize>) -> String {
    c.and_then(|c| m.clips.get(c))
        .map_or("(bind pose)".into(), |c| c.name().to_owned())
}

fn playback(ui: &mut egui::Ui, s: &Snapshot<'_>, actions: &mut Vec<Action>) {
    ui.label(RichText::new("Playback").strong());
    if s.model.clips.is_empty() {
        ui.label("no clips: the bind pose");
        return;
    }
    egui::ComboBox::from_label("clip")
        .selected_text(clip_name(s.model, s.clip))
        .show_ui(ui, |ui| {
            for (i, c) in s.model.clips.iter().enumerate() {
                if ui.selectable_label(s.clip == Some(i), c.name()).clicked() {
                    actions.push(Action::Clip(ClipRef::Index(i)));
                }
            }
        });
    ui.horizontal(|ui| {
        if ui
            .button("⏮")
            .on_hover_text("previous frame (Left)")
            .clicked()
        {
            actions.push(Action::Step(-1));
        }
        let play = if s.playing { "⏸ pause" } else { "▶ play" };
        if ui.button(play).on_hover_text("Space").clicked() {
            actions.push(Action::TogglePlay);
        }
        if ui.button("⏭").on_hover_text("next frame (Right)").clicked() {
            actions.push(Action::Step(1));
        }
    });
    let mut time = s.time;
    let timeline = ui.add(
        egui::Slider::new(&mut time, 0.0..=s.duration.max(1e-3))
            .text("s")
            .max_decimals(2),
    );
    // Only the user's scrubbing counts (the widget may round what it shows).
    if timeline.changed() && (timeline.dragged() || timeline.has_focus() || timeline.clicked()) {
        actions.push(Action::Play(false));
        actions.push(Action::Seek(time));
    }
    let mut speed = s.speed;
    if ui
        .add(egui::Slider::new(&mut speed, -2.0..=4.0).text("speed"))
        .changed()
    {
        actions.push(Action::Speed(speed));
    }
    ui.horizontal(|ui| {
        let mut secs = s.fade_seconds;
        if ui
            .add(egui::Slider::new(&mut secs, 0.0..=3.0).text("s fade"))
            .changed()
        {
            actions.push(Action::FadeSeconds(secs));
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("crossfade to");
        if s.model.clips.len() < 2 {
            ui.label("(one clip only)");
        }
        for (i, c) in s.model.clips.iter().enumerate() {
            if Some(i) != s.clip && ui.small_button(c.name()).clicked() {
                actions.push(Action::Crossfade(ClipRef::Index(i), s.fade_seconds));
            }
        }
    });
    if let Some((to, w)) = s.fade {
        ui.add(egui::ProgressBar::new(w).text(format!(
            "fading to {} ({:.0}%)",
            clip_name(s.model, Some(to)),
            w * 100.0
        )));
    }
}

/// A slider per morph target, named by its set's `target_names` (else
/// "target i"): dragging one sets that weight by hand (it stays set, marked
/// `*`); "reset to clip" hands them all back.
fn morph_targets(ui: &mut egui::Ui, s: &Snapshot<'_>, actions: &mut Vec<Action>) {
    ui.horizontal(|ui| {
        ui.label(RichText::new("Morph targets").strong());
        let any = s.overridden.iter().any(Option::is_some);
        if ui
            .add_enabled(any, egui::Button::new("reset to clip"))
            .clicked()
        {
            actions.push(Action::ResetWeights);
        }
    });
    for (i, &w) in s.weights.iter().enumerate() {
        let name = s
            .model
            .morph_sets
            .iter()
            .find(|m| (m.first_weight..m.first_weight + m.defaults.len()).contains(&i))
            .and_then(|m| m.target_names.get(i - m.first_weight))
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("target {i}"));
        let set = s.overridden.get(i).is_some_and(Option::is_some);
        let mut v = w;
        let text = if set { format!("{name} *") } else { name };
        if ui
            .add(
                egui::Slider::new(&mut v, 0.0..=1.0)
                    .clamping(egui::SliderClamping::Never)
                    .text(text),
            )
            .changed()
        {
            actions.push(Action::Weight(i, v));
        }
    }
}

fn skinning(ui: &mut egui::Ui, s: &Snapshot<'_>, actions: &mut Vec<Action>) {
    ui.label(RichText::new("Skinning").strong());
    egui::ComboBox::from_label("path")
        .selected_text(s.path)
        .show_ui(ui, |ui| {
            for p in vkskin::skin::paths() {
                let r = ui
                    .selectable_label(p.name == s.path, p.name)
                    .on_hover_text(format!(
                        "{} stage; tested against {}",
                        p.stage.name(),
                        p.reference()
                    ));
                if r.clicked() {
                    actions.push(Action::Path(p.name.to_owned()));
                }
            }
        });
    let mut k = s.influences;
    if ui
        .add_enabled(
            s.loaded_influences > 1,
            egui::Slider::new(&mut k, 1..=s.loaded_influences.max(1)).text("influences"),
        )
        .changed()
    {
        actions.push(Action::Influences(Some(k)));
    }
    ui.horizontal(|ui| {
        ui.label("frames in flight");
        for n in 1..=3 {
            if ui
                .selectable_label(s.frames_in_flight == n, n.to_string())
                .clicked()
            {
                actions.push(Action::FramesInFlight(n));
            }
        }
    });
    ui.horizontal(|ui| {
        use vkskin::skin::anim::AnimateOn;
        ui.label("animation");
        for on in [AnimateOn::Cpu, AnimateOn::Gpu] {
            if ui
                .radio(s.anim_asked == on, crate::gpu_anim::label(on))
                .on_hover_text("G; --anim; GPU: the engine's compute passes write the palettes")
                .clicked()
                && s.anim_asked != on
            {
                actions.push(Action::Anim(Some(on)));
            }
        }
    });
    if let Some(why) = s.anim_fallback {
        ui.label(RichText::new(format!("animated on the CPU: {why}")).color(Color32::YELLOW));
    }
    let mut vsync = s.vsync;
    if ui.checkbox(&mut vsync, "vsync").changed() {
        actions.push(Action::Vsync(vsync));
    }
    if s.lossy_bones > 0 {
        ui.label(
            RichText::new(format!(
                "{} bone(s) carry scale this encoding drops",
                s.lossy_bones
            ))
            .color(Color32::YELLOW),
        );
    }
}

fn view(ui: &mut egui::Ui, s: &Snapshot<'_>, actions: &mut Vec<Action>) {
    ui.label(RichText::new("View").strong());
    let mut wire = s.wireframe;
    if ui
        .add_enabled(
            s.wireframe_available,
            egui::Checkbox::new(&mut wire, "wireframe"),
        )
        .changed()
    {
        actions.push(Action::Wireframe(Some(wire)));
    }
    let mut skel = s.skeleton;
    if ui.checkbox(&mut skel, "skeleton").changed() {
        actions.push(Action::Skeleton(Some(skel)));
    }
    let mut bounds = s.bounds;
    if ui.checkbox(&mut bounds, "skinned bounds").changed() {
        actions.push(Action::Bounds(Some(bounds)));
    }
    let mut motion = s.motion;
    if ui
        .checkbox(&mut motion, "motion view (velocity)")
        .on_hover_text("world-space velocity as colour: x red, y green, z blue; still is grey")
        .changed()
    {
        actions.push(Action::Motion(Some(motion)));
    }
    let mut names = s.names;
    if ui.checkbox(&mut names, "all joint names").changed() {
        actions.push(Action::Names(Some(names)));
    }
    ui.horizontal(|ui| {
        ui.label("up axis");
        for up in [crate::args::Up::Y, crate::args::Up::Z] {
            if ui
                .radio(s.up == up, up.name())
                .on_hover_text("U; --up")
                .clicked()
                && s.up != up
            {
                actions.push(Action::Up(Some(up)));
            }
        }
    });
    ui.horizontal(|ui| {
        if ui.button("reframe").on_hover_text("R").clicked() {
            actions.push(Action::ResetCamera);
        }
        if ui.button("screenshot").on_hover_text("F12 / S").clicked() {
            actions.push(Action::Screenshot(None));
        }
    });
}

fn stats(ui: &mut egui::Ui, s: &Snapshot<'_>) {
    ui.label(RichText::new("Stats").strong());
    egui::Grid::new("stats").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.monospace(v);
            ui.end_row();
        };
        row("fps", format!("{:.1}", s.stats.fps));
        row(
            "animation",
            match s.stats.anim_gpu_ms {
                Some(ms) => format!("{} (pass {ms:.3} ms)", crate::gpu_anim::label(s.stats.anim)),
                None => crate::gpu_anim::label(s.stats.anim).to_owned(),
            },
        );
        row("CPU anim", format!("{:.3} ms", s.stats.cpu_ms));
        row(
            "GPU skin+draw",
            s.stats
                .gpu_ms
                .map_or("-".into(), |ms| format!("{ms:.3} ms")),
        );
        row("path", s.path.to_owned());
        row("joints", s.model.skeleton.len().to_string());
        row(
            "sub-meshes",
            format!("{} ({} draws)", s.model.meshes.len(), s.draw_parts),
        );
        row(
            "vertices",
            format!("{} ({} on GPU)", s.model.vertex_count(), s.gpu_vertices),
        );
        row(
            "triangles",
            s.model
                .meshes
                .iter()
                .map(|m| m.triangle_count())
                .sum::<usize>()
                .to_string(),
        );
        row("size", format!("{}x{}", s.extent.0, s.extent.1));
        row("swapchains", s.swapchains.to_string());
        row("device", s.device.to_owned());
    });
}

fn joints(ui: &mut egui::Ui, s: &Snapshot<'_>) -> Option<usize> {
    let sk = &s.model.skeleton;
    let mut hovered = None;
    egui::CollapsingHeader::new(format!("Joints ({})", sk.len()))
        .default_open(false)
        .show(ui, |ui| {
            let mut children: Vec<Vec<usize>> = vec![Vec::new(); sk.len()];
            let mut roots = Vec::new();
            for j in 0..sk.len() {
                match sk.parent(j) {
                    Some(p) => children[p].push(j),
                    None => roots.push(j),
                }
            }
            for r in roots {
                tree(ui, s, &children, r, &mut hovered);
            }
        });
    hovered
}

fn tree(
    ui: &mut egui::Ui,
    s: &Snapshot<'_>,
    children: &[Vec<usize>],
    j: usize,
    hovered: &mut Option<usize>,
) {
    let name = s.model.skeleton.names()[j].as_str();
    let label = format!("{j}: {name}");
    if children[j].is_empty() {
        if ui.label(label).hovered() {
            *hovered = Some(j);
        }
        return;
    }
    let r = egui::CollapsingHeader::new(label)
        .id_salt(("joint", j))
        .default_open(j == 0)
        .show(ui, |ui| {
            for &c in &children[j] {
                tree(ui, s, children, c, hovered);
            }
        });
    if r.header_response.hovered() {
        *hovered = Some(j);
    }
}

fn notes(ui: &mut egui::Ui, s: &Snapshot<'_>) {
    if s.notes.is_empty() {
        return;
    }
    ui.separator();
    for n in s.notes.iter().rev().take(6) {
        let color = if n.error {
            Color32::from_rgb(255, 110, 100)
        } else {
            Color32::LIGHT_GRAY
        };
        ui.label(RichText::new(&n.text).color(color).small());
    }
}

/// Bone lines and joint names over the scene (the markers are drawn by the
/// engine's `JointMarkers`).
fn overlay(
    ctx: &egui::Context,
    s: &Snapshot<'_>,
    tree_hover: Option<usize>,
    hover: &mut Option<usize>,
) {
    let painter = ctx.layer_painter(LayerId::background());
    let sk = &s.model.skeleton;
    let pts = s.joints_on_screen;
    *hover = tree_hover;
    if s.skeleton {
        for j in 0..sk.len() {
            let Some(parent) = sk.parent(j) else {
                continue;
            };
            if let (Some(Some(a)), Some(Some(b))) = (pts.get(j), pts.get(parent)) {
                painter.line_segment([*b, *a], Stroke::new(1.5, BONE));
            }
        }
        if hover.is_none() && !ctx.is_pointer_over_area() {
            if let Some(m) = ctx.pointer_hover_pos() {
                *hover = pts
                    .iter()
                    .enumerate()
                    .filter_map(|(j, p)| p.map(|p| (j, p.distance(m))))
                    .filter(|(_, d)| *d < 10.0)
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|(j, _)| j);
            }
        }
    }
    // The skinned box: its 12 edges join corners one bit apart.
    if let [_, _, _, _, _, _, _, _] = s.bounds_on_screen {
        for a in 0..8usize {
            for bit in [1, 2, 4] {
                let b = a | bit;
                if b == a {
                    continue;
                }
                if let (Some(p), Some(q)) = (s.bounds_on_screen[a], s.bounds_on_screen[b]) {
                    painter.line_segment([p, q], Stroke::new(1.5, BOX));
                }
            }
        }
    }
    let font = FontId::proportional(12.0);
    if s.names {
        for (j, p) in pts.iter().enumerate() {
            if let Some(p) = p {
                painter.text(
                    *p + egui::vec2(4.0, -4.0),
                    Align2::LEFT_BOTTOM,
                    &sk.names()[j],
                    font.clone(),
                    Color32::WHITE,
                );
            }
        }
    }
    if let Some(Some(p)) = hover.and_then(|j| pts.get(j)) {
        let j = hover.unwrap_or_default();
        painter.circle_stroke(*p, 6.0, Stroke::new(2.0, HOVER));
        let text = format!("{j}: {}", sk.names()[j]);
        let galley = painter.layout_no_wrap(text, font, HOVER);
        let rect = Align2::LEFT_BOTTOM
            .anchor_size(*p + egui::vec2(8.0, -8.0), galley.size())
            .expand(3.0);
        painter.rect_filled(rect, 3.0, Color32::from_black_alpha(190));
        painter.galley(rect.min + egui::vec2(3.0, 3.0), galley, HOVER);
    }
}

/// The latest error (under 10 s old) in a window of its own, so it is
/// seen with the panel hidden too.
fn errors(ctx: &egui::Context, s: &Snapshot<'_>) {
    let Some(n) = s
        .notes
        .iter()
        .rev()
        .find(|n| n.error && n.at.elapsed().as_secs_f32() < 10.0)
    else {
        return;
    };
    egui::Window::new("Error")
        .anchor(Align2::CENTER_TOP, egui::vec2(0.0, 8.0))
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            ui.set_max_width(360.0);
            ui.label(RichText::new(&n.text).color(Color32::from_rgb(255, 130, 120)));
        });
}
