//! Sampling a clip's morph-weight tracks: [`WeightSamplingJob`] and
//! [`Playback::sample_weights`].

use super::sampling::{Playback, PlaybackMode, SamplingContext};
use crate::anim::{AnimError, Clip};

/// Samples a clip's morph-weight tracks at one time into a model's weight
/// vector.
///
/// `output` is first set to `defaults`, then every run a weight track
/// animates is overwritten with the track at `mode.wrap(time, duration)`
/// (the clip time [`SamplingJob`](crate::anim::SamplingJob) samples the
/// joints at): Step holds the earlier key, Linear lerps, CubicSpline is
/// glTF's Hermite with the out-tangent of the earlier key and the
/// in-tangent of the later, each times the interval; before the first key
/// a track holds its first value, after the last its last. Weights are not
/// clamped. Weights no track animates keep their defaults.
///
/// Setting weights by hand needs no job: write the slice (after sampling,
/// to override what a clip says, or instead of it).
pub struct WeightSamplingJob<'a> {
    /// The clip to sample.
    pub clip: &'a Clip,
    /// Key cursors for this instance (the weight tracks have their own,
    /// next to the joints'); resized to `clip` if needed.
    pub context: &'a mut SamplingContext,
    /// Seconds from the clip's start, before wrapping or clamping.
    pub time: f32,
    /// Loop or clamp past the clip's ends.
    pub mode: PlaybackMode,
    /// The weights where no track animates them (a model's
    /// `default_morph_weights()`); as long as `output`.
    pub defaults: &'a [f32],
    /// The weight vector: at least [`Clip::weight_count`] long.
    pub output: &'a mut [f32],
}

impl WeightSamplingJob<'_> {
    /// Checks the lengths and the time without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        validate_job(self.clip, self.time, self.defaults, self.output)
    }

    /// Validates the job, then writes `output`.
    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        sample(
            self.clip,
            self.context,
            self.time,
            self.mode,
            self.defaults,
            self.output,
        );
        Ok(())
    }
}

fn validate_job(clip: &Clip, time: f32, defaults: &[f32], output: &[f32]) -> Result<(), AnimError> {
    if defaults.len() != output.len() {
        return Err(AnimError::LengthMismatch {
            what: "default morph weights",
            expected: output.len(),
            got: defaults.len(),
        });
    }
    if output.len() < clip.weight_count() {
        return Err(AnimError::InvalidJob(format!(
            "clip {:?} animates {} morph weights, but the output holds {}",
            clip.name(),
            clip.weight_count(),
            output.len()
        )));
    }
    if !time.is_finite() {
        return Err(AnimError::InvalidJob(format!("sampling time {time}")));
    }
    Ok(())
}

/// The sampling itself, on a validated job.
fn sample(
    clip: &Clip,
    context: &mut SamplingContext,
    time: f32,
    mode: PlaybackMode,
    defaults: &[f32],
    output: &mut [f32],
) {
    output.copy_from_slice(defaults);
    let t = mode.wrap(time, clip.duration());
    clip.weights.sample(t, context.fit_weights(clip), output);
}

impl Playback {
    /// Samples `clip`'s morph weights at the play head (the time
    /// [`sample`](Self::sample) uses), as [`WeightSamplingJob`]: `output`
    /// gets `defaults` with the animated runs overwritten. Errors as the
    /// job does. To set weights by hand, write `output` afterwards.
    pub fn sample_weights(
        &mut self,
        clip: &Clip,
        defaults: &[f32],
        output: &mut [f32],
    ) -> Result<(), AnimError> {
        let time = self.head(clip);
        validate_job(clip, time, defaults, output)?;
        sample(clip, &mut self.context, time, self.mode, defaults, output);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
