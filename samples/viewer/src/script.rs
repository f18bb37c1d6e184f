//! What the viewer can be asked to do, from the panel, the keyboard or a
//! `--script`, and the script's parser.

use std::path::PathBuf;

/// Which clip an action names; resolved against the model when applied.
#[derive(Clone, Debug, PartialEq)]
pub enum ClipRef {
    Name(String),
    Index(usize),
    /// The clip after the current one (wrapping).
    Next,
    /// The clip before the current one (wrapping).
    Previous,
}

/// One request. The window applies them between frames, where rebuilding
/// paths, meshes or the swapchain is safe.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Play(bool),
    TogglePlay,
    Speed(f32),
    /// Multiply the speed.
    SpeedBy(f32),
    Seek(f32),
    /// Step this many frames of 1/30 s (pauses).
    Step(i32),
    Clip(ClipRef),
    Crossfade(ClipRef, f32),
    FadeSeconds(f32),
    Path(String),
    /// The path `n` places after (or before) the current one in the registry.
    PathBy(i32),
    /// `None`: as loaded.
    Influences(Option<usize>),
    InfluencesBy(i32),
    FramesInFlight(usize),
    CycleFramesInFlight,
    Vsync(bool),
    ToggleVsync,
    Wireframe(Option<bool>),
    Skeleton(Option<bool>),
    /// The skinned box (`mesh::JointBounds`) drawn as lines.
    Bounds(Option<bool>),
    /// The motion view (velocity as colour).
    Motion(Option<bool>),
    /// Where the animation runs; `None` toggles CPU / GPU.
    Anim(Option<vkskin::skin::anim::AnimateOn>),
    Names(Option<bool>),
    Panel(Option<bool>),
    ResetCamera,
    /// The model's up axis; `None` toggles it.
    Up(Option<crate::args::Up>),
    Orbit(f32, f32),
    Zoom(f32),
    /// Morph weight `i` set by hand (overriding the clip's).
    Weight(usize, f32),
    /// Every morph weight back to the clip's.
    ResetWeights,
    /// `None`: the next free `screenshot_N.png`.
    Screenshot(Option<PathBuf>),
    Open(PathBuf),
    Resize(u32, u32),
    Minimise,
    Restore,
    Quit,
}

/// A parsed `--script`: actions by frame number, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    pub events: Vec<(u64, Action)>,
}

impl Script {
    /// `"F:EVENT; F:EVENT; ..."` (see `--help`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut events = Vec::new();
        for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let (frame, event) = item
                .split_once(':')
                .ok_or_else(|| format!("script event {item:?} is not FRAME:EVENT"))?;
            let frame: u64 = frame
                .trim()
                .parse()
                .map_err(|_| format!("script event {item:?}: {frame:?} is not a frame number"))?;
            let action =
                parse_event(event.trim()).map_err(|e| format!("script event {item:?}: {e}"))?;
            events.push((frame, action));
        }
        events.sort_by_key(|(f, _)| *f);
        Ok(Self { events })
    }

    /// The actions due at frame `frame`, removed from the script.
    pub fn due(&mut self, frame: u64) -> Vec<Action> {
        let n = self.events.iter().take_while(|(f, _)| *f <= frame).count();
        self.events.drain(..n).map(|(_, a)| a).collect()
    }
}

fn on_off(arg: Option<&str>) -> Result<Option<bool>, String> {
    match arg {
        None => Ok(None),
        Some("on") => Ok(Some(true)),
        Some("off") => Ok(Some(false)),
        Some(a) => Err(format!("{a:?} is not on or off")),
    }
}

fn number<T: std::str::FromStr>(arg: Option<&str>, what: &str) -> Result<T, String> {
    let a = arg.ok_or_else(|| format!("missing {what}"))?;
    a.parse()
        .map_err(|_| format!("{a:?} is not a valid {what}"))
}

fn finite(v: f32, what: &str) -> Result<f32, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{what} {v} is not finite"))
    }
}

fn clip_ref(arg: Option<&str>) -> Result<ClipRef, String> {
    match arg {
        None => Err("missing clip (a name, next or #INDEX)".into()),
        Some("next") => Ok(ClipRef::Next),
        Some("previous") => Ok(ClipRef::Previous),
        Some(a) if a.starts_with('#') => Ok(ClipRef::Index(number(Some(&a[1..]), "clip index")?)),
        Some(a) => Ok(ClipRef::Name(a.to_owned())),
    }
}

fn parse_event(event: &str) -> Result<Action, String> {
    let words: Vec<&str> = event.split_whitespace().collect();
    let verb = *words.first().ok_or("empty event")?;
    let arg = words.get(1).copied();
    let arg2 = words.get(2).copied();
    let most = match verb {
        "minimise" | "minimize" | "restore" | "pause" | "play" | "quit" => 0,
        "crossfade" | "orbit" | "weight" => 2,
        _ => 1,
    };
    if words.len() > most + 1 {
        return Err("too many words".into());
    }
    let action = match verb {
        "resize" => {
            let (w, h) = crate::args::parse_size(arg.ok_or("missing WxH")?)?;
            Action::Resize(w, h)
        }
        "minimise" | "minimize" => Action::Minimise,
        "restore" => Action::Restore,
        "path" => Action::Path(arg.ok_or("missing path name")?.to_owned()),
        "clip" => Action::Clip(clip_ref(arg)?),
        "crossfade" => {
            let to = clip_ref(arg)?;
            let s: f32 = finite(number(arg2, "crossfade seconds")?, "crossfade seconds")?;
            if s < 0.0 {
                return Err(format!("crossfade of {s} s"));
            }
            Action::Crossfade(to, s)
        }
        "speed" => Action::Speed(finite(number(arg, "speed")?, "speed")?),
        "pause" => Action::Play(false),
        "play" => Action::Play(true),
        "seek" => Action::Seek(finite(number(arg, "time in seconds")?, "time")?),
        "step" => Action::Step(number(arg, "frame count")?),
        "wireframe" => Action::Wireframe(on_off(arg)?),
        "skeleton" => Action::Skeleton(on_off(arg)?),
        "names" => Action::Names(on_off(arg)?),
        "bounds" => Action::Bounds(on_off(arg)?),
        "motion" => Action::Motion(on_off(arg)?),
        "anim" => Action::Anim(match arg {
            None => None,
            Some(a) => Some(
                vkskin::skin::anim::AnimateOn::from_name(a)
                    .ok_or_else(|| format!("anim needs cpu or gpu, not {a:?}"))?,
            ),
        }),
        "panel" => Action::Panel(on_off(arg)?),
        "influences" => match arg {
            Some("file") => Action::Influences(None),
            _ => Action::Influences(Some(number(arg, "influence count")?)),
        },
        "frames-in-flight" => Action::FramesInFlight(number(arg, "frames in flight")?),
        "vsync" => Action::Vsync(on_off(arg)?.ok_or("vsync needs on or off")?),
        "orbit" => Action::Orbit(
            finite(number(arg, "yaw")?, "yaw")?,
            finite(number(arg2, "pitch")?, "pitch")?,
        ),
        "up" => Action::Up(Some(match arg {
            Some("y") | Some("Y") => crate::args::Up::Y,
            Some("z") | Some("Z") => crate::args::Up::Z,
            other => return Err(format!("up needs y or z, not {other:?}")),
        })),
        "zoom" => {
            let f: f32 = finite(number(arg, "zoom factor")?, "zoom")?;
            if f <= 0.0 {
                return Err(format!("zoom factor {f}"));
            }
            Action::Zoom(f)
        }
        "weight" if arg == Some("reset") && arg2.is_none() => Action::ResetWeights,
        "weight" => Action::Weight(
            number(arg, "morph weight index (or reset)")?,
            finite(number(arg2, "morph weight value")?, "morph weight")?,
        ),
        "screenshot" => Action::Screenshot(arg.map(PathBuf::from)),
        "open" => Action::Open(PathBuf::from(arg.ok_or("missing file")?)),
        "quit" => Action::Quit,
        other => return Err(format!("unknown event {other:?}")),
    };
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_script_parses_in_frame_order() {
        let mut s = Script::parse(
            "80:path dq-ssbo; 20:resize 640x360; 40:minimise; 60:restore; \
             100:crossfade next 0.5; 120:screenshot docs/viewer.png; 140:wireframe",
        )
        .unwrap();
        assert_eq!(s.events.len(), 7);
        assert_eq!(s.events[0], (20, Action::Resize(640, 360)));
        assert!(s.due(19).is_empty());
        assert_eq!(s.due(45), vec![Action::Resize(640, 360), Action::Minimise]);
        assert_eq!(
            s.due(80),
            vec![Action::Restore, Action::Path("dq-ssbo".into())]
        );
        assert_eq!(s.due(100), vec![Action::Crossfade(ClipRef::Next, 0.5)]);
        assert_eq!(
            s.due(1000),
            vec![
                Action::Screenshot(Some("docs/viewer.png".into())),
                Action::Wireframe(None)
            ]
        );
    }

    #[test]
    fn bounds_toggles_or_sets() {
        let mut s = Script::parse("3:bounds; 4:bounds on; 5:bounds off").unwrap();
        assert_eq!(s.due(3), vec![Action::Bounds(None)]);
        assert_eq!(s.due(4), vec![Action::Bounds(Some(true))]);
        assert_eq!(s.due(5), vec![Action::Bounds(Some(false))]);
        let mut s = Script::parse("3:motion; 4:motion on; 5:motion off").unwrap();
        assert_eq!(s.due(3), vec![Action::Motion(None)]);
        assert_eq!(s.due(4), vec![Action::Motion(Some(true))]);
        assert_eq!(s.due(5), vec![Action::Motion(Some(false))]);
    }

    #[test]
    fn weight_sets_one_morph_weight_or_resets() {
        let mut s = Script::parse("3:weight 2 0.5; 4:weight reset; 5:weight 0 -1").unwrap();
        assert_eq!(s.due(3), vec![Action::Weight(2, 0.5)]);
        assert_eq!(s.due(4), vec![Action::ResetWeights]);
        assert_eq!(s.due(5), vec![Action::Weight(0, -1.0)]);
        for (bad, why) in [
            ("5:weight", "morph weight index"),
            ("5:weight 1", "morph weight value"),
            ("5:weight 1 inf", "not finite"),
            ("5:weight x 1", "morph weight index"),
        ] {
            let e = Script::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn anim_sets_or_toggles_where_the_animation_runs() {
        use vkskin::skin::anim::AnimateOn;
        let mut s = Script::parse("3:anim gpu; 4:anim cpu; 5:anim").unwrap();
        assert_eq!(s.due(3), vec![Action::Anim(Some(AnimateOn::Gpu))]);
        assert_eq!(s.due(4), vec![Action::Anim(Some(AnimateOn::Cpu))]);
        assert_eq!(s.due(5), vec![Action::Anim(None)]);
        let e = Script::parse("5:anim tpu").unwrap_err();
        assert!(e.contains("cpu or gpu"), "{e}");
    }

    #[test]
    fn up_takes_y_or_z() {
        let mut s = Script::parse("3:up z; 4:up Y").unwrap();
        assert_eq!(s.due(3), vec![Action::Up(Some(crate::args::Up::Z))]);
        assert_eq!(s.due(4), vec![Action::Up(Some(crate::args::Up::Y))]);
    }

    #[test]
    fn bad_events_are_errors_that_quote_them() {
        for (bad, why) in [
            ("x:quit", "frame number"),
            ("5 quit", "FRAME:EVENT"),
            ("5:jump", "unknown event"),
            ("5:crossfade wave", "crossfade seconds"),
            ("5:crossfade wave -1", "crossfade of"),
            ("5:wireframe maybe", "on or off"),
            ("5:resize 10", "WIDTHxHEIGHT"),
            ("5:speed nan", "not finite"),
            ("5:pause now", "too many"),
            ("5:up x", "up needs y or z"),
            ("5:up", "up needs y or z"),
        ] {
            let e = Script::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
