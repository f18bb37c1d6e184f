//! The command line.

use std::path::PathBuf;

use clap::Parser;
use sample_common::GpuArgs;

const AFTER_HELP: &str = "\
Keys (windowed):
  Space        play / pause            Left/Right   step one frame (1/30 s)
  Home         back to the clip start  + / -        speed up / down (x1.25)
  C / Shift+C  next / previous clip    X            crossfade to the next clip
  P / Shift+P  next / previous path    I / Shift+I  more / fewer influences
  F            frames in flight 1-2-3  V            vsync on / off
  W            wireframe               K            skeleton overlay
  N            every joint's name      R            reframe the camera
  U            up axis Y / Z           B            skinned bounds box
  M            motion view (velocity as colour)
  G            animation on the CPU / GPU (compute passes)
  Tab          panel on / off          F12 / S      screenshot (screenshot_N.png)
  Esc          quit
Mouse: drag to orbit, right-drag (or Shift+drag) to pan, wheel to zoom; hover
a joint (skeleton overlay) for its name. Drop a .gltf/.glb/.x file to open it.

--script \"F:EVENT; F:EVENT; ...\" runs EVENT when frame F begins (frames
count every pass of the redraw loop, drawn or skipped while minimised):
  resize WxH | minimise | restore | path NAME | clip NAME|next|#I |
  crossfade NAME|next|#I SECONDS | speed X | pause | play | seek SECONDS |
  step N | wireframe [on|off] | skeleton [on|off] | names [on|off] |
  bounds [on|off] | motion [on|off] | anim cpu|gpu |
  influences K|file | frames-in-flight N | vsync on|off | panel on|off |
  orbit DYAW DPITCH | zoom F | up y|z | weight I VALUE | weight reset |
  screenshot FILE | open FILE | quit
`minimise` also tells the swapchain the window has zero extent (a window
manager would; Xvfb has none), so the zero-extent path runs; `restore`
gives it back the window's size.
e.g. --frames 300 --script \"20:resize 640x360; 40:minimise; 60:restore;
80:path dq-ssbo; 100:crossfade next 0.5; 120:screenshot docs/viewer.png\"";

#[derive(Parser, Debug, Clone)]
#[command(
    name = "viewer",
    about = "Views skinned models (.gltf, .glb, .x; the built-in character by default), skinned on the GPU",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// A .gltf, .glb or .x file (default: the built-in character;
    /// `builtin:morph`: the morph-target demo, `MorphBlob`).
    pub file: Option<PathBuf>,
    /// Render offscreen and write PNG frames and a contact sheet; no display.
    #[arg(long)]
    pub headless: bool,
    /// Frames to draw, then exit (default: until closed; 60 headless). In a
    /// window every pass of the redraw loop counts, drawn or skipped while
    /// minimised.
    #[arg(long)]
    pub frames: Option<u64>,
    /// Headless: frame i shows t = i / fps seconds of the clip.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Folder for the headless frames and contact sheet.
    #[arg(long, default_value = "out/viewer")]
    pub out: PathBuf,
    /// Skinning path by name (default: `vkskin::skin::auto`'s choice).
    #[arg(long)]
    pub path: Option<String>,
    /// Clip by name (default: the model's first).
    #[arg(long)]
    pub clip: Option<String>,
    /// Image or initial window size, WIDTHxHEIGHT.
    #[arg(long, default_value = "800x600", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Scripted input for tests and screenshots (see below).
    #[arg(long)]
    pub script: Option<String>,
    /// Frames in flight in the window (1..=3).
    #[arg(long, default_value_t = 2)]
    pub frames_in_flight: usize,
    /// Influences per vertex the loader keeps (1..=8; 4 is the loader's
    /// default and the headless contract's).
    #[arg(long, default_value_t = 4)]
    pub max_influences: usize,
    /// Draw the motion view: world-space velocity as colour (x red, y
    /// green, z blue, 0.5 + 0.5 x velocity / (0.25 bounds diagonals per
    /// second), clamped; still is grey), on a path built with motion
    /// vectors. Headless: frame 0 is still, frame i's velocity is from
    /// frame i - 1's pose.
    #[arg(long)]
    pub motion_view: bool,
    /// Where the animation runs: cpu (sampling, blending and the palettes
    /// on the CPU) or gpu (the engine's compute passes write the palettes
    /// from one 32-byte record per mesh). Where GPU animation cannot serve
    /// (a windowed storage or the CPU stage, the motion view, morph
    /// targets, no clips) the CPU animates and the reason is printed.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu"])]
    pub anim: String,
    /// A clip file (`.vkclip`, written by `inspect --compress`) whose clips
    /// replace the model's; its skeleton must match the model's (joint
    /// count and names).
    #[arg(long, value_name = "FILE.vkclip")]
    pub clips: Option<PathBuf>,
    /// Start with the panel hidden (Tab shows it).
    #[arg(long)]
    pub no_panel: bool,
    /// The model's up axis: y (glTF, most .x files) or z (files authored
    /// Z-up, such as tiny_4anim.x); the camera stands that axis upright.
    #[arg(long, value_enum, default_value_t = Up::Y)]
    pub up: Up,
    // --no-vsync, --list-devices, --device, --validation.
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub use sample_common::parse_size;

impl Args {
    /// `--anim` as the engine's switch.
    pub fn anim_on(&self) -> vkskin::skin::anim::AnimateOn {
        vkskin::skin::anim::AnimateOn::from_name(&self.anim).unwrap_or_default()
    }
}

pub use sample_common::Up;
