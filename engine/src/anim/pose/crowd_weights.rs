//! A crowd's morph weights: each instance's clip's weight tracks sampled
//! at the instance's own clip time.

use super::crowd::{clip_time, Crowd};
use crate::anim::{AnimError, WeightSamplingJob};

impl Crowd {
    /// The least morph-weight vector length the crowd's clips need (the
    /// largest [`Clip::weight_count`](crate::anim::Clip::weight_count));
    /// 0 when no clip has weight tracks.
    pub fn weight_count(&self) -> usize {
        self.clips()
            .iter()
            .map(|c| c.weight_count())
            .max()
            .unwrap_or(0)
    }

    /// Every instance's morph weights at frame time `time`, into
    /// `out[instance * defaults.len()..][..defaults.len()]`: `defaults`
    /// (a model's `default_morph_weights()`, at least
    /// [`weight_count`](Self::weight_count) long) with the runs the
    /// instance's clip animates sampled at the clip time
    /// [`animate`](Self::animate) poses its joints at (the instance's
    /// offset, speed and mode), as
    /// [`WeightSamplingJob`](crate::anim::WeightSamplingJob). Each instance
    /// keeps its weight-track cursors from frame to frame in its sampling
    /// context. Runs on the calling thread (a weight track costs about
    /// what one joint channel does); hand the weights to the encoder or
    /// the GPU from `out`, or overwrite any by hand first. Elements past
    /// `len() * defaults.len()` are not touched.
    ///
    /// Errors, before anything is written, if `time` is not finite,
    /// `defaults` is shorter than `weight_count()` or `out` shorter than
    /// `len() * defaults.len()`.
    pub fn animate_weights(
        &mut self,
        time: f32,
        defaults: &[f32],
        out: &mut [f32],
    ) -> Result<(), AnimError> {
        if !time.is_finite() {
            return Err(AnimError::InvalidJob(format!("crowd frame time {time}")));
        }
        let need = self.weight_count();
        if defaults.len() < need {
            return Err(AnimError::InvalidJob(format!(
                "the crowd's clips animate {need} morph weights, but the defaults hold {}",
                defaults.len()
            )));
        }
        let stride = defaults.len();
        let total = self.len().checked_mul(stride).ok_or_else(|| {
            AnimError::InvalidJob(format!(
                "crowd morph weights of {} instances x {stride} overflow",
                self.len()
            ))
        })?;
        if out.len() < total {
            return Err(AnimError::LengthMismatch {
                what: "crowd morph weights (instances x weights)",
                expected: total,
                got: out.len(),
            });
        }
        if stride == 0 {
            return Ok(());
        }
        let (clips, instances, contexts) = self.weight_parts();
        let parts = out[..total].chunks_exact_mut(stride);
        for ((inst, context), output) in instances.iter().zip(contexts).zip(parts) {
            let clip = &clips[inst.clip];
            WeightSamplingJob {
                clip,
                context,
                time: clip_time(inst, time, clip.duration()),
                mode: inst.mode,
                defaults,
                output,
            }
            .run()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
