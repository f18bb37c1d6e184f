//! The per-instance record the host writes for GPU animation.

use bytemuck::{Pod, Zeroable};

use crate::anim::PlaybackMode;

/// One instance's play state, read by `shaders/anim/animate.comp`: clip A
/// at `time_a + speed_a * now` (wrapped or clamped by its mode), and
/// optionally clip B likewise, cross-faded in with `weight` (B's share; the
/// CPU's [`crate::anim::BlendingJob`] with layers A at `1 - weight` and B
/// at `weight`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct AnimRecord {
    /// Index of clip A in the store.
    pub clip_a: u32,
    /// Index of clip B (read when [`AnimRecord::HAS_B`] is set).
    pub clip_b: u32,
    /// [`AnimRecord::CLAMP_A`], [`AnimRecord::CLAMP_B`], [`AnimRecord::HAS_B`].
    pub flags: u32,
    /// B's blend weight, 0 to 1.
    pub weight: f32,
    /// Clip A seconds at `now` = 0.
    pub time_a: f32,
    /// Clip A's play rate.
    pub speed_a: f32,
    /// Clip B seconds at `now` = 0.
    pub time_b: f32,
    /// Clip B's play rate.
    pub speed_b: f32,
}

const _: () = assert!(std::mem::size_of::<AnimRecord>() == 32);

fn clamp_flag(mode: PlaybackMode, flag: u32) -> u32 {
    match mode {
        PlaybackMode::Loop => 0,
        PlaybackMode::Clamp => flag,
    }
}

impl AnimRecord {
    /// Clip A clamps instead of looping.
    pub const CLAMP_A: u32 = 1;
    /// Clip B clamps instead of looping.
    pub const CLAMP_B: u32 = 2;
    /// Clip B is blended in.
    pub const HAS_B: u32 = 4;

    /// Plays `clip` from `time` seconds at `speed`.
    pub fn play(clip: u32, time: f32, speed: f32, mode: PlaybackMode) -> Self {
        Self {
            clip_a: clip,
            flags: clamp_flag(mode, Self::CLAMP_A),
            time_a: time,
            speed_a: speed,
            ..Self::default()
        }
    }

    /// Adds clip B, cross-faded in with `weight`.
    pub fn crossfade(
        mut self,
        clip: u32,
        time: f32,
        speed: f32,
        mode: PlaybackMode,
        weight: f32,
    ) -> Self {
        self.clip_b = clip;
        self.flags = (self.flags & Self::CLAMP_A) | Self::HAS_B | clamp_flag(mode, Self::CLAMP_B);
        self.time_b = time;
        self.speed_b = speed;
        self.weight = weight;
        self
    }

    /// Whether clip B is blended in.
    pub fn has_b(&self) -> bool {
        self.flags & Self::HAS_B != 0
    }

    /// Clip A's (or B's) playback mode.
    pub fn mode(&self, b: bool) -> PlaybackMode {
        let flag = if b { Self::CLAMP_B } else { Self::CLAMP_A };
        if self.flags & flag != 0 {
            PlaybackMode::Clamp
        } else {
            PlaybackMode::Loop
        }
    }
}
