use super::*;

fn blend(
    layers: &[WeightLayer],
    additive: &[WeightLayer],
    rest: &[f32],
    threshold: f32,
) -> Vec<f32> {
    let mut out = vec![f32::NAN; rest.len()];
    WeightBlendingJob {
        layers,
        additive,
        rest,
        threshold,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

fn close(got: &[f32], want: &[f32]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-6, "weight {i}: {g} vs {w}");
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn cross_fade_at_a_quarter_is_the_lerp() {
    let a = [0.0, 1.0, -2.0, 4.0];
    let b = [1.0, 0.0, 2.0, 4.0];
    let rest = [9.0; 4];
    let out = blend(
        &[WeightLayer::new(&a, 0.75), WeightLayer::new(&b, 0.25)],
        &[],
        &rest,
        0.1,
    );
    // 0.75 a + 0.25 b, by hand.
    close(&out, &[0.25, 0.75, -1.0, 4.0]);
    // Weights need not sum to one: 3 and 1 are the same fade.
    let out = blend(
        &[WeightLayer::new(&a, 3.0), WeightLayer::new(&b, 1.0)],
        &[],
        &rest,
        0.1,
    );
    close(&out, &[0.25, 0.75, -1.0, 4.0]);
}

#[test]
fn the_rest_fills_in_below_the_threshold() {
    let a = [1.0, 2.0];
    let rest = [3.0, -1.0];
    // No weight at all: the rest.
    close(&blend(&[WeightLayer::new(&a, 0.0)], &[], &rest, 0.0), &rest);
    close(&blend(&[], &[], &rest, 0.5), &rest);
    // 0.05 of `a` under a threshold of 0.2: the rest weighs 0.15, so
    // (0.05 * 1 + 0.15 * 3) / 0.2 = 2.5 and (0.05 * 2 - 0.15) / 0.2 = -0.25.
    close(
        &blend(&[WeightLayer::new(&a, 0.05)], &[], &rest, 0.2),
        &[2.5, -0.25],
    );
}

#[test]
fn additive_layers_add_their_deltas() {
    let base = [0.5, 0.0, 1.0];
    let reference = [0.0, 0.0, 1.0];
    let smile = [1.0, 0.5, 0.0];
    let mut delta = [0.0; 3];
    additive_weight_delta(&reference, &smile, &mut delta).unwrap();
    assert_eq!(delta, [1.0, 0.5, -1.0]);
    let out = blend(
        &[WeightLayer::new(&base, 1.0)],
        &[WeightLayer::new(&delta, 0.5), WeightLayer::new(&delta, 0.0)],
        &[0.0; 3],
        0.1,
    );
    // 0.5 + 0.5 * 1, 0 + 0.5 * 0.5, 1 - 0.5 * 1.
    close(&out, &[1.0, 0.25, 0.5]);
    // Weight 1 on the reference gives the clip's weights back.
    let out = blend(
        &[WeightLayer::new(&reference, 1.0)],
        &[WeightLayer::new(&delta, 1.0)],
        &[0.0; 3],
        0.0,
    );
    close(&out, &smile);
    assert!(additive_weight_delta(&reference, &smile[..2], &mut delta).is_err());
}

#[test]
fn bad_jobs_are_errors() {
    let a = [1.0, 2.0];
    let rest = [0.0, 0.0];
    let mut out = [7.0; 2];
    let short = [1.0];
    type Case<'a> = (&'a [WeightLayer<'a>], &'a [WeightLayer<'a>], &'a [f32], f32);
    let cases: [Case; 6] = [
        (&[WeightLayer::new(&short, 1.0)], &[], &rest, 0.1),
        (&[], &[WeightLayer::new(&short, 1.0)], &rest, 0.1),
        (&[WeightLayer::new(&a, -1.0)], &[], &rest, 0.1),
        (&[WeightLayer::new(&a, f32::NAN)], &[], &rest, 0.1),
        (&[WeightLayer::new(&a, 1.0)], &[], &short, 0.1),
        (&[WeightLayer::new(&a, 1.0)], &[], &rest, -0.1),
    ];
    for (layers, additive, rest, threshold) in cases {
        assert!(WeightBlendingJob {
            layers,
            additive,
            rest,
            threshold,
            output: &mut out,
        }
        .run()
        .is_err());
    }
    assert_eq!(out, [7.0; 2]);
}
