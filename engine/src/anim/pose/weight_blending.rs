//! Blending morph-weight vectors: [`WeightBlendingJob`], the weights'
//! counterpart of [`BlendingJob`](crate::anim::BlendingJob).

use crate::anim::AnimError;

/// One input of a [`WeightBlendingJob`]: a morph-weight vector (as
/// [`WeightSamplingJob`](crate::anim::WeightSamplingJob) writes it) and
/// its layer weight.
#[derive(Clone, Copy, Debug)]
pub struct WeightLayer<'a> {
    /// Morph weights, as many as the output.
    pub weights: &'a [f32],
    /// Finite and non-negative; 0 leaves the layer out.
    pub weight: f32,
}

impl<'a> WeightLayer<'a> {
    /// A layer of `weights` with layer weight `weight`.
    pub fn new(weights: &'a [f32], weight: f32) -> Self {
        Self { weights, weight }
    }
}

/// Blends morph-weight vectors with the rules of
/// [`BlendingJob`](crate::anim::BlendingJob).
///
/// Normal layers are averaged with their layer weights divided by their
/// sum (a cross-fade is two layers, `1 - f` and `f`). Where that sum is
/// below `threshold` (or 0), `rest` makes up the difference with weight
/// `max(threshold - sum, f32::MIN_POSITIVE)` before dividing, so no layer
/// at all gives `rest`. Additive layers are then added in order:
/// `out += w * delta`, each `delta` a clip's weights minus a reference's
/// ([`additive_weight_delta`]). Morph weights are not clamped.
///
/// Weights set by hand need no job: write the output afterwards (or pass
/// a hand-written vector as a layer).
pub struct WeightBlendingJob<'a> {
    /// Normal layers, averaged by weight.
    pub layers: &'a [WeightLayer<'a>],
    /// Additive layers of deltas, added in order on top of the blend.
    pub additive: &'a [WeightLayer<'a>],
    /// The weights without animation, usually a model's
    /// `default_morph_weights()`.
    pub rest: &'a [f32],
    /// Total layer weight below which `rest` fills in; 0 only fills in
    /// when no layer has weight.
    pub threshold: f32,
    /// The blended weights; every layer and `rest` has its length.
    pub output: &'a mut [f32],
}

impl WeightBlendingJob<'_> {
    /// Checks the lengths, layer weights and threshold without running it.
    pub fn validate(&self) -> Result<(), AnimError> {
        let n = self.output.len();
        if self.rest.len() != n {
            return Err(AnimError::LengthMismatch {
                what: "rest morph weights",
                expected: n,
                got: self.rest.len(),
            });
        }
        if !usable(self.threshold) {
            return Err(AnimError::InvalidJob(format!(
                "blend threshold {} is not a finite, non-negative number",
                self.threshold
            )));
        }
        for (what, layers) in [
            ("morph weight layer", self.layers),
            ("additive morph weight layer", self.additive),
        ] {
            for (i, l) in layers.iter().enumerate() {
                if l.weights.len() != n {
                    return Err(AnimError::LengthMismatch {
                        what,
                        expected: n,
                        got: l.weights.len(),
                    });
                }
                if !usable(l.weight) {
                    return Err(AnimError::InvalidJob(format!(
                        "{what} {i} has weight {}",
                        l.weight
                    )));
                }
            }
        }
        Ok(())
    }

    /// Validates the job, then writes `output`.
    pub fn run(self) -> Result<(), AnimError> {
        self.validate()?;
        let total: f32 = self
            .layers
            .iter()
            .map(|l| l.weight)
            .filter(|&w| w > 0.0)
            .sum();
        let out = self.output;
        if total >= self.threshold && total > 0.0 {
            // As BlendingJob's uniform paths: weights divided by their sum
            // first.
            out.fill(0.0);
            for l in self.layers.iter().filter(|l| l.weight > 0.0) {
                let w = l.weight / total;
                for (o, &x) in out.iter_mut().zip(l.weights) {
                    *o += x * w;
                }
            }
        } else {
            // As its general path: the rest fills in, then one division.
            let fill = (self.threshold - total).max(f32::MIN_POSITIVE);
            for (o, &r) in out.iter_mut().zip(self.rest) {
                *o = r * fill;
            }
            for l in self.layers.iter().filter(|l| l.weight > 0.0) {
                for (o, &x) in out.iter_mut().zip(l.weights) {
                    *o += x * l.weight;
                }
            }
            let inv = 1.0 / (total + fill);
            for o in out.iter_mut() {
                *o *= inv;
            }
        }
        for l in self.additive.iter().filter(|l| l.weight > 0.0) {
            for (o, &d) in out.iter_mut().zip(l.weights) {
                *o += d * l.weight;
            }
        }
        Ok(())
    }
}

/// The additive delta that takes `reference` to `weights`, as
/// [`WeightBlendingJob`]'s additive layers apply it: `out = weights -
/// reference` (adding it with layer weight 1 to `reference` gives
/// `weights` back). Errors when the three lengths differ.
pub fn additive_weight_delta(
    reference: &[f32],
    weights: &[f32],
    out: &mut [f32],
) -> Result<(), AnimError> {
    for (what, got) in [
        ("reference morph weights", reference.len()),
        ("morph weights", weights.len()),
    ] {
        if got != out.len() {
            return Err(AnimError::LengthMismatch {
                what,
                expected: out.len(),
                got,
            });
        }
    }
    for ((o, &w), &r) in out.iter_mut().zip(weights).zip(reference) {
        *o = w - r;
    }
    Ok(())
}

/// A layer weight or threshold the job accepts: finite and not negative.
fn usable(w: f32) -> bool {
    w.is_finite() && w >= 0.0
}

#[cfg(test)]
mod tests;
