use super::*;
use crate::anim::{Interpolation, RawClip, RawWeightTrack, Skeleton, Transform};

fn skeleton() -> Skeleton {
    Skeleton::new(vec!["root".into()], &[None], vec![Transform::IDENTITY])
        .unwrap()
        .0
}

fn track(
    first: usize,
    count: usize,
    interpolation: Interpolation,
    times: &[f32],
    values: &[f32],
    tangents: &[f32],
) -> RawWeightTrack {
    RawWeightTrack {
        first,
        count,
        interpolation,
        times: times.to_vec(),
        values: values.to_vec(),
        tangents: tangents.to_vec(),
    }
}

fn build(weights: Vec<RawWeightTrack>) -> Result<Clip, AnimError> {
    let raw = RawClip {
        name: "faces".into(),
        duration: 0.0,
        tracks: Vec::new(),
        weights,
    };
    Clip::build(&raw, &skeleton())
}

/// Step over weights 0..2, Linear over 3, CubicSpline over 4; 2 and 5
/// unanimated.
fn clip() -> Clip {
    build(vec![
        track(
            0,
            2,
            Interpolation::Step,
            &[0.0, 1.0, 3.0],
            &[0.0, 1.0, 0.5, -0.5, 2.0, 0.25],
            &[],
        ),
        track(3, 1, Interpolation::Linear, &[1.0, 2.0], &[0.2, 1.6], &[]),
        // Key 0: in 9, out 0.5; key 1: in -1, out 7.
        track(
            4,
            1,
            Interpolation::CubicSpline,
            &[0.0, 2.0],
            &[1.0, 3.0],
            &[9.0, 0.5, -1.0, 7.0],
        ),
    ])
    .unwrap()
}

const DEFAULTS: [f32; 6] = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0];

fn sample(clip: &Clip, time: f32, mode: PlaybackMode) -> Vec<f32> {
    let mut out = vec![f32::NAN; 6];
    WeightSamplingJob {
        clip,
        context: &mut SamplingContext::new(clip),
        time,
        mode,
        defaults: &DEFAULTS,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-5, "weight {i}: {g} vs {w} ({got:?})");
    }
}

#[test]
fn builds_counts_and_lists_the_tracks() {
    let c = clip();
    assert_eq!(c.weight_count(), 5);
    // Raised from 0 to the last weight key.
    assert_eq!(c.duration(), 3.0);
    let infos: Vec<_> = c.weight_tracks().collect();
    assert_eq!(infos.len(), 3);
    assert_eq!((infos[1].first, infos[1].count, infos[1].keys), (3, 1, 2));
    assert_eq!(infos[2].interpolation, Interpolation::CubicSpline);
    assert_eq!((infos[0].start, infos[0].end), (0.0, 3.0));
    let none = build(Vec::new()).unwrap();
    assert_eq!(none.weight_count(), 0);
    assert_eq!(none.weight_tracks().len(), 0);
}

#[test]
fn hand_computed_values() {
    let c = clip();
    // t = 0.5: Step key 0; Linear before its first key; the Hermite at
    // u = 0.25, dt = 2: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625,
    // h11 = -0.046875, so 0.84375 * 1 + 0.140625 * 2 * 0.5 + 0.15625 * 3
    // + -0.046875 * 2 * -1 = 1.546875.
    let at_half = [0.0, 1.0, 12.0, 0.2, 1.546875, 15.0];
    close(&sample(&c, 0.5, PlaybackMode::Loop), &at_half);
    close(&sample(&c, 0.5, PlaybackMode::Clamp), &at_half);
    // t = 1.25: Step key 1; Linear 0.2 + 0.25 * 1.4 = 0.55; Hermite at
    // u = 0.625: h00 = 0.31640625, h10 = 0.087890625, h01 = 0.68359375,
    // h11 = -0.146484375: 0.31640625 + 0.087890625 * 2 * 0.5
    // + 0.68359375 * 3 + -0.146484375 * 2 * -1 = 2.748046875.
    close(
        &sample(&c, 1.25, PlaybackMode::Loop),
        &[0.5, -0.5, 12.0, 0.55, 2.748_047, 15.0],
    );
    // On a key: Step takes that key.
    close(
        &sample(&c, 1.0, PlaybackMode::Loop),
        &[
            0.5,
            -0.5,
            12.0,
            0.2,
            sample(&c, 1.0, PlaybackMode::Clamp)[4],
            15.0,
        ],
    );
    // Past the ends.
    let end = [2.0, 0.25, 12.0, 1.6, 3.0, 15.0];
    close(&sample(&c, 3.5, PlaybackMode::Clamp), &end);
    close(&sample(&c, 100.0, PlaybackMode::Clamp), &end);
    close(
        &sample(&c, -7.0, PlaybackMode::Clamp),
        &[0.0, 1.0, 12.0, 0.2, 1.0, 15.0],
    );
    // Looping: 3.5 wraps to 0.5, -0.5 to 2.5 (Step key 1, Linear and
    // spline past their last keys).
    close(&sample(&c, 3.5, PlaybackMode::Loop), &at_half);
    close(
        &sample(&c, -0.5, PlaybackMode::Loop),
        &[0.5, -0.5, 12.0, 1.6, 3.0, 15.0],
    );
}

#[test]
fn single_keys_and_nearest_hold_values() {
    let c = build(vec![
        track(1, 2, Interpolation::Linear, &[0.7], &[-3.0, 4.0], &[]),
        track(0, 1, Interpolation::Nearest, &[0.0, 1.0], &[5.0, 6.0], &[]),
    ])
    .unwrap();
    let mut out = [0.0; 3];
    let mut ctx = SamplingContext::new(&c);
    for (t, first) in [(0.25, 5.0), (0.5, 5.0), (0.75, 6.0)] {
        WeightSamplingJob {
            clip: &c,
            context: &mut ctx,
            time: t,
            mode: PlaybackMode::Clamp,
            defaults: &[9.0; 3],
            output: &mut out,
        }
        .run()
        .unwrap();
        assert_eq!(out, [first, -3.0, 4.0], "t = {t}");
    }
}

/// A long linear track with repeated key times, sampled forward with one
/// context, backwards, and at random with one context and with fresh
/// ones: every way gives the same bits, and the values the keys say.
#[test]
fn cursors_give_the_same_result_however_the_clip_is_played() {
    use rand::{Rng, SeedableRng};
    let times: Vec<f32> = (0..40)
        .map(|k| if k == 20 { 9.5 } else { k as f32 * 0.5 })
        .collect();
    let values: Vec<f32> = (0..80).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
    let c = build(vec![track(
        0,
        2,
        Interpolation::Linear,
        &times,
        &values,
        &[],
    )])
    .unwrap();
    let run = |ctx: &mut SamplingContext, t: f32| {
        let mut out = [0.0f32; 2];
        WeightSamplingJob {
            clip: &c,
            context: ctx,
            time: t,
            mode: PlaybackMode::Loop,
            defaults: &[0.0; 2],
            output: &mut out,
        }
        .run()
        .unwrap();
        out
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(40);
    let mut forward = SamplingContext::new(&c);
    let mut jumping = SamplingContext::new(&c);
    let ts: Vec<f32> = (0..2000).map(|i| i as f32 * 0.013).collect();
    for &t in &ts {
        let want = run(&mut SamplingContext::new(&c), t);
        assert_eq!(
            run(&mut forward, t).map(f32::to_bits),
            want.map(f32::to_bits)
        );
        let r = rng.gen_range(-30.0..30.0f32);
        let rand_want = run(&mut SamplingContext::new(&c), r);
        assert_eq!(
            run(&mut jumping, r).map(f32::to_bits),
            rand_want.map(f32::to_bits)
        );
        // The value by hand: the key interval by a linear search.
        let lt = PlaybackMode::Loop.wrap(t, c.duration());
        let i = times.iter().rposition(|&k| k <= lt).unwrap().min(38);
        let u = ((lt - times[i]) / (times[i + 1] - times[i])).clamp(0.0, 1.0);
        for w in 0..2 {
            let v = values[i * 2 + w] * (1.0 - u) + values[(i + 1) * 2 + w] * u;
            assert!((want[w] - v).abs() < 1e-5, "t {t}: {want:?} vs {v}");
        }
    }
    for &t in ts.iter().rev() {
        let want = run(&mut SamplingContext::new(&c), t);
        assert_eq!(
            run(&mut forward, t).map(f32::to_bits),
            want.map(f32::to_bits)
        );
    }
}

#[test]
fn playback_samples_at_its_head_and_contexts_follow_the_clip() {
    let c = clip();
    let mut p = Playback::new(&c, PlaybackMode::Loop);
    p.advance(3.5);
    let mut out = [0.0; 6];
    p.sample_weights(&c, &DEFAULTS, &mut out).unwrap();
    close(&out, &sample(&c, 0.5, PlaybackMode::Loop));
    // A context made for a clip without weight tracks resizes itself.
    let empty = build(Vec::new()).unwrap();
    let mut ctx = SamplingContext::new(&empty);
    WeightSamplingJob {
        clip: &c,
        context: &mut ctx,
        time: 1.25,
        mode: PlaybackMode::Loop,
        defaults: &DEFAULTS,
        output: &mut out,
    }
    .run()
    .unwrap();
    close(&out, &sample(&c, 1.25, PlaybackMode::Loop));
}

#[test]
fn bad_jobs_are_errors() {
    let c = clip();
    let mut ctx = SamplingContext::new(&c);
    let mut short = [0.0; 4];
    let e = WeightSamplingJob {
        clip: &c,
        context: &mut ctx,
        time: 0.0,
        mode: PlaybackMode::Loop,
        defaults: &[0.0; 4],
        output: &mut short,
    }
    .run()
    .unwrap_err();
    assert!(e.to_string().contains("5 morph weights"), "{e}");
    let mut out = [0.0; 6];
    for (defaults, time) in [(&[0.0f32; 5][..], 0.0), (&DEFAULTS[..], f32::NAN)] {
        assert!(WeightSamplingJob {
            clip: &c,
            context: &mut ctx,
            time,
            mode: PlaybackMode::Loop,
            defaults,
            output: &mut out,
        }
        .run()
        .is_err());
    }
    // Nothing was written.
    assert_eq!(out, [0.0; 6]);
}

#[test]
fn bad_tracks_are_errors_naming_clip_and_track() {
    use Interpolation::*;
    let good = track(0, 1, Linear, &[0.0, 1.0], &[0.0, 1.0], &[]);
    let cases = [
        ("count 0", track(2, 0, Linear, &[0.0], &[], &[])),
        ("no keys", track(2, 1, Linear, &[], &[], &[])),
        (
            "need 4 values",
            track(2, 2, Linear, &[0.0, 1.0], &[0.0; 3], &[]),
        ),
        (
            "not a cubic",
            track(2, 1, Linear, &[0.0, 1.0], &[0.0; 2], &[0.0; 4]),
        ),
        (
            "needs 8 tangents",
            track(2, 2, CubicSpline, &[0.0, 1.0], &[0.0; 4], &[0.0; 4]),
        ),
        (
            "comes before",
            track(2, 1, Step, &[1.0, 0.5], &[0.0; 2], &[]),
        ),
        (
            "has time NaN",
            track(2, 1, Step, &[0.0, f32::NAN], &[0.0; 2], &[]),
        ),
        (
            "non-finite weight",
            track(2, 1, Linear, &[0.0, 1.0], &[0.0, f32::INFINITY], &[]),
        ),
        (
            "non-finite tangent",
            track(2, 1, CubicSpline, &[0.0], &[0.0], &[0.0, f32::NAN]),
        ),
        (
            "rotations only",
            track(2, 1, Squad, &[0.0, 1.0], &[0.0; 2], &[]),
        ),
        ("overlap", track(0, 3, Step, &[0.0], &[0.0; 3], &[])),
    ];
    for (want, bad) in cases {
        let e = build(vec![good.clone(), bad]).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, AnimError::InvalidClip { .. }), "{text}");
        assert!(text.contains("faces"), "{text}");
        assert!(text.contains(want), "{want}: {text}");
        assert!(text.contains("weight track"), "{text}");
        if want != "overlap" {
            assert!(text.contains("weight track 1"), "{text}");
        }
    }
    // Adjacent runs are fine.
    let next = track(1, 2, Step, &[0.0], &[0.0; 2], &[]);
    assert_eq!(build(vec![good, next]).unwrap().weight_count(), 3);
}
