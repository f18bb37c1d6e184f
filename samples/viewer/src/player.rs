//! Clip playback for one character: play head, speed, pause, and a
//! crossfade from the current clip to another over a duration.

use vkskin::anim::{
    AnimError, BlendLayer, BlendingJob, Clip, PlaybackMode, SamplingContext, SamplingJob,
    Transform, WeightSamplingJob,
};
use vkskin::assets::Model;

/// A crossfade in progress: the incoming clip plays from its start while
/// its weight rises linearly from 0 to 1.
#[derive(Clone, Debug)]
pub struct Fade {
    pub to: usize,
    pub time: f32,
    pub elapsed: f32,
    pub duration: f32,
    context: SamplingContext,
}

impl Fade {
    /// The incoming clip's weight, 0..=1.
    pub fn weight(&self) -> f32 {
        if self.duration <= 0.0 {
            1.0
        } else {
            (self.elapsed / self.duration).clamp(0.0, 1.0)
        }
    }
}

/// Plays one clip at a time (or fades between two) and poses the skeleton.
pub struct Player {
    /// `None`: the model has no clips; the bind pose.
    pub clip: Option<usize>,
    /// Clip time in seconds, kept in `[0, duration]` (looping).
    pub time: f32,
    pub speed: f32,
    pub playing: bool,
    pub fade: Option<Fade>,
    context: SamplingContext,
    locals: Vec<Transform>,
    incoming: Vec<Transform>,
    blended: Vec<Transform>,
    /// Morph weights set by hand (the panel's sliders, `weight I VALUE`),
    /// replacing the clip's until [`Player::reset_weights`].
    pub overrides: Vec<Option<f32>>,
    weights: Vec<f32>,
    incoming_weights: Vec<f32>,
}

impl Player {
    /// Starts `clip` (or the model's first clip) at time 0, playing.
    pub fn new(model: &Model, clip: Option<usize>) -> Self {
        let clip = clip.or(if model.clips.is_empty() {
            None
        } else {
            Some(0)
        });
        let bind = model.skeleton.bind_local().to_vec();
        Self {
            context: clip
                .and_then(|c| model.clips.get(c))
                .map(SamplingContext::new)
                .unwrap_or_default(),
            clip,
            time: 0.0,
            speed: 1.0,
            playing: true,
            fade: None,
            incoming: bind.clone(),
            blended: bind.clone(),
            locals: bind,
            overrides: vec![None; model.morph_weight_count()],
            weights: Vec::new(),
            incoming_weights: Vec::new(),
        }
    }

    /// Sets morph weight `i` by hand (ignored past the model's weights).
    pub fn set_weight(&mut self, i: usize, value: f32) {
        if let Some(o) = self.overrides.get_mut(i) {
            *o = Some(value);
        }
    }

    /// Hands every morph weight back to the clip.
    pub fn reset_weights(&mut self) {
        self.overrides.fill(None);
    }

    /// The morph weight vector at the play head: the model's defaults with
    /// the clip's weight tracks sampled (looping; during a fade, blended
    /// linearly with the incoming clip's by the fade's weight), then the
    /// weights set by hand. Empty for a model without targets.
    pub fn sample_weights(&mut self, model: &Model) -> Result<&[f32], AnimError> {
        let n = model.morph_weight_count();
        if n == 0 {
            self.weights.clear();
            return Ok(&self.weights);
        }
        let defaults = model.default_morph_weights();
        let sample = |clip: Option<&Clip>,
                      context: &mut SamplingContext,
                      time: f32,
                      out: &mut Vec<f32>|
         -> Result<(), AnimError> {
            out.clear();
            out.extend_from_slice(&defaults);
            let Some(clip) = clip.filter(|c| c.weight_count() <= n) else {
                return Ok(());
            };
            WeightSamplingJob {
                clip,
                context,
                time,
                mode: PlaybackMode::Loop,
                defaults: &defaults,
                output: out,
            }
            .run()
        };
        let clip = self.clip.and_then(|c| model.clips.get(c));
        sample(clip, &mut self.context, self.time, &mut self.weights)?;
        if let Some(f) = self.fade.as_mut() {
            let to = model.clips.get(f.to);
            sample(to, &mut f.context, f.time, &mut self.incoming_weights)?;
            let w = f.weight();
            for (a, b) in self.weights.iter_mut().zip(&self.incoming_weights) {
                *a += (b - *a) * w;
            }
        }
        for (w, o) in self.weights.iter_mut().zip(&self.overrides) {
            if let Some(o) = o {
                *w = *o;
            }
        }
        Ok(&self.weights)
    }

    pub fn duration(&self, model: &Model) -> f32 {
        self.clip
            .and_then(|c| model.clips.get(c))
            .map_or(0.0, Clip::duration)
    }

    /// Switches to `clip` at time 0 (no fade).
    pub fn set_clip(&mut self, model: &Model, clip: usize) {
        if let Some(c) = model.clips.get(clip) {
            self.clip = Some(clip);
            self.time = 0.0;
            self.context = SamplingContext::new(c);
            self.fade = None;
        }
    }

    /// Fades from the current clip to `to` over `seconds`.
    pub fn crossfade(&mut self, model: &Model, to: usize, seconds: f32) {
        let Some(c) = model.clips.get(to) else {
            return;
        };
        if self.clip.is_none() {
            self.set_clip(model, to);
            return;
        }
        self.fade = Some(Fade {
            to,
            time: 0.0,
            elapsed: 0.0,
            duration: seconds.max(0.0),
            context: SamplingContext::new(c),
        });
    }

    /// Moves the play head to `time` seconds of the current clip.
    pub fn seek(&mut self, model: &Model, time: f32) {
        self.time = PlaybackMode::Loop.wrap(time, self.duration(model));
    }

    /// Advances by `dt` seconds of real time (nothing while paused).
    pub fn advance(&mut self, model: &Model, dt: f32) {
        if !self.playing {
            return;
        }
        let step = dt * self.speed;
        self.time = PlaybackMode::Loop.wrap(self.time + step, self.duration(model));
        let mut done = false;
        if let Some(f) = self.fade.as_mut() {
            let d = model.clips.get(f.to).map_or(0.0, Clip::duration);
            f.time = PlaybackMode::Loop.wrap(f.time + step, d);
            f.elapsed += dt;
            done = f.elapsed >= f.duration;
        }
        if done {
            if let Some(f) = self.fade.take() {
                self.clip = Some(f.to);
                self.time = f.time;
                self.context = f.context;
            }
        }
    }

    /// The local pose at the play head: the clip sampled (looping), blended
    /// with the incoming clip during a fade; the bind pose without clips.
    pub fn sample(&mut self, model: &Model) -> Result<&[Transform], AnimError> {
        let Some(clip) = self.clip.and_then(|c| model.clips.get(c)) else {
            self.locals.copy_from_slice(model.skeleton.bind_local());
            return Ok(&self.locals);
        };
        SamplingJob {
            clip,
            context: &mut self.context,
            time: self.time,
            mode: PlaybackMode::Loop,
            output: &mut self.locals,
        }
        .run()?;
        let Some(f) = self.fade.as_mut() else {
            return Ok(&self.locals);
        };
        let Some(to) = model.clips.get(f.to) else {
            return Ok(&self.locals);
        };
        SamplingJob {
            clip: to,
            context: &mut f.context,
            time: f.time,
            mode: PlaybackMode::Loop,
            output: &mut self.incoming,
        }
        .run()?;
        let w = f.weight();
        BlendingJob {
            layers: &[
                BlendLayer::new(&self.locals, 1.0 - w),
                BlendLayer::new(&self.incoming, w),
            ],
            additive: &[],
            rest_pose: model.skeleton.bind_local(),
            threshold: 0.0,
            output: &mut self.blended,
        }
        .run()?;
        Ok(&self.blended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vkskin::assets::builtin::Character;

    #[test]
    fn a_crossfade_ends_on_the_new_clip_and_blends_on_the_way() {
        let model = Character::model();
        let wave = model.clips.iter().position(|c| c.name() == "wave").unwrap();
        let mut p = Player::new(&model, None);
        assert_eq!(p.clip, Some(0));
        p.advance(&model, 0.3);
        let walk_only = p.sample(&model).unwrap().to_vec();
        p.crossfade(&model, wave, 0.5);
        p.advance(&model, 0.25);
        let f = p.fade.as_ref().unwrap();
        assert!((f.weight() - 0.5).abs() < 1e-6);
        let mid = p.sample(&model).unwrap().to_vec();
        assert_ne!(mid, walk_only);
        p.advance(&model, 0.3);
        assert!(p.fade.is_none());
        assert_eq!(p.clip, Some(wave));
        assert!((p.time - 0.55).abs() < 1e-5, "{}", p.time);
    }

    #[test]
    fn weights_follow_the_clip_until_set_by_hand() {
        let model = vkskin::assets::builtin::MorphBlob::default().model();
        let mut p = Player::new(&model, None);
        p.advance(&model, 1.0);
        let w = p.sample_weights(&model).unwrap().to_vec();
        assert_eq!(
            w,
            model
                .morph_weights(model.clips.first(), 1.0, PlaybackMode::Loop)
                .unwrap()
        );
        p.set_weight(1, 0.75);
        p.set_weight(9, 1.0);
        let set = p.sample_weights(&model).unwrap().to_vec();
        assert_eq!(set[1], 0.75);
        assert_eq!(set[0], w[0]);
        p.reset_weights();
        assert_eq!(p.sample_weights(&model).unwrap(), w.as_slice());
        // The built-in character has no targets.
        let c = Character::model();
        assert!(Player::new(&c, None).sample_weights(&c).unwrap().is_empty());
    }

    #[test]
    fn paused_players_hold_and_seek_wraps() {
        let model = Character::model();
        let mut p = Player::new(&model, None);
        p.playing = false;
        p.advance(&model, 1.0);
        assert_eq!(p.time, 0.0);
        let d = p.duration(&model);
        p.seek(&model, d + 0.25);
        assert!((p.time - 0.25).abs() < 1e-4);
    }
}
