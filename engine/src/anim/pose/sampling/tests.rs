use super::super::quat::reference as r;
use super::*;
use crate::anim::{RawClip, RawJointTrack, RawTrack, Skeleton};
use glam::Affine3A;
use rand::{Rng, SeedableRng};

fn skeleton(n: usize) -> Skeleton {
    let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    let names = (0..n).map(|i| format!("j{i}")).collect();
    Skeleton::new(names, &parents, vec![Transform::IDENTITY; n])
        .unwrap()
        .0
}

fn sample(clip: &Clip, t: f32, mode: PlaybackMode) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; clip.joint_count()];
    let mut ctx = SamplingContext::new(clip);
    SamplingJob {
        clip,
        context: &mut ctx,
        time: t,
        mode,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

fn rotation_clip(interp: Interpolation, keys: &[Quat], times: &[f32]) -> Clip {
    let mut track = RawJointTrack::new(0);
    track.rotation = RawTrack::new(interp, times.to_vec(), keys.to_vec());
    let raw = RawClip {
        weights: Vec::new(),
        name: "r".into(),
        duration: 0.0,
        tracks: vec![track],
    };
    Clip::build(&raw, &skeleton(1)).unwrap()
}

fn random_keys(n: usize, seed: u64) -> Vec<Quat> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.gen_range(-3.0..3.0),
                rng.gen_range(-1.5..1.5),
                rng.gen_range(-3.0..3.0),
            )
        })
        .collect()
}

/// Seed 003's SetTime, lines 391-395: `i0 = i1 - 1; i3 = i2 + 1;
/// if (i0 < 0) i0 += n; if (i3 >= n) i3 -= n;`, then
/// SquadSetup(q[i0], q[i1], q[i2], q[i3]) and Squad(q[i1], A, B, C, u),
/// evaluated with the f64 reference.
fn seed_003_squad(keys: &[Quat], i1: i64, u: f64) -> r::Q {
    let n = keys.len() as i64;
    let i2 = i1 + 1;
    let mut i0 = i1 - 1;
    let mut i3 = i2 + 1;
    if i0 < 0 {
        i0 += n;
    }
    if i3 >= n {
        i3 -= n;
    }
    let q = |i: i64| r::from_f32(keys[i as usize]);
    let (a, b, c) = r::squad_setup(q(i0), q(i1), q(i2), q(i3));
    r::squad(q(i1), a, b, c, u)
}

#[test]
fn squad_track_wraps_neighbours_as_seed_003() {
    let keys = random_keys(6, 1);
    let times = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5];
    let clip = rotation_clip(Interpolation::Squad, &keys, &times);
    for (i1, &start) in times.iter().enumerate().take(5) {
        for u in [0.1f32, 0.37, 0.5, 0.81] {
            let t = start + 0.5 * u;
            let got = sample(&clip, t, PlaybackMode::Loop)[0].rotation;
            let want = seed_003_squad(&keys, i1 as i64, u as f64);
            assert!(r::dist(got, want) < 1e-5, "interval {i1} u {u}");
        }
    }
    // The first interval really uses the last key as its predecessor:
    // changing it changes the result.
    let mut other = keys.clone();
    other[5] = Quat::from_rotation_x(1.0);
    let clip2 = rotation_clip(Interpolation::Squad, &other, &times);
    let a = sample(&clip, 0.2, PlaybackMode::Loop)[0].rotation;
    let b = sample(&clip2, 0.2, PlaybackMode::Loop)[0].rotation;
    assert!(a.dot(b).abs() < 1.0 - 1e-6);
}

#[test]
fn wide_batches_match_the_reference() {
    // Ten tracks on one timeline take the eight-lane paths where the CPU
    // has them; each is checked against the f64 formulas.
    let times: Vec<f32> = (0..7).map(|k| k as f32 * 0.25).collect();
    let keys: Vec<Vec<Quat>> = (0..10).map(|j| random_keys(7, 100 + j)).collect();
    for interp in [Interpolation::Squad, Interpolation::Linear] {
        let tracks = (0..10)
            .map(|j| {
                let mut t = RawJointTrack::new(j);
                t.rotation = RawTrack::new(interp, times.clone(), keys[j].clone());
                t
            })
            .collect();
        let raw = RawClip {
            weights: Vec::new(),
            name: "wide".into(),
            duration: 0.0,
            tracks,
        };
        let clip = Clip::build(&raw, &skeleton(10)).unwrap();
        assert_eq!(clip.timeline_count(), 1);
        for t in [0.05f32, 0.3, 0.8, 1.49] {
            let i1 = (t / 0.25) as i64;
            let u = (t - i1 as f32 * 0.25) / 0.25;
            let out = sample(&clip, t, PlaybackMode::Loop);
            for (j, k) in keys.iter().enumerate() {
                let want = match interp {
                    Interpolation::Squad => seed_003_squad(k, i1, u as f64),
                    _ => r::slerp(
                        r::from_f32(k[i1 as usize]),
                        r::from_f32(k[i1 as usize + 1]),
                        u as f64,
                    ),
                };
                assert!(
                    r::dist(out[j].rotation, want) < 1e-5,
                    "{interp:?} t {t} joint {j}"
                );
            }
        }
    }
}

#[test]
fn squad_track_clamps_neighbours_without_looping() {
    let keys = random_keys(4, 2);
    let times = [0.0, 1.0, 2.0, 3.0];
    let clip = rotation_clip(Interpolation::Squad, &keys, &times);
    let q = |i: usize| r::from_f32(keys[i]);
    for (i, (i0, i3)) in [(0usize, (0usize, 2usize)), (1, (0, 3)), (2, (1, 3))] {
        let (a, b, c) = r::squad_setup(q(i0), q(i), q(i + 1), q(i3));
        let want = r::squad(q(i), a, b, c, 0.3);
        let got = sample(&clip, i as f32 + 0.3, PlaybackMode::Clamp)[0].rotation;
        assert!(r::dist(got, want) < 1e-5, "interval {i}");
    }
}

#[test]
fn squad_track_passes_through_its_keys() {
    let keys = random_keys(5, 3);
    let times = [0.0, 0.3, 0.7, 1.0, 1.6];
    let clip = rotation_clip(Interpolation::Squad, &keys, &times);
    for mode in [PlaybackMode::Loop, PlaybackMode::Clamp] {
        for (k, &t) in times.iter().enumerate().take(4) {
            let got = sample(&clip, t, mode)[0].rotation;
            assert!(got.dot(keys[k]).abs() > 1.0 - 1e-6, "key {k} {mode:?}");
        }
    }
    let end = sample(&clip, 1.6, PlaybackMode::Clamp)[0].rotation;
    assert!(end.dot(keys[4]).abs() > 1.0 - 1e-6);
}

#[test]
fn cubic_spline_matches_gltf_by_hand() {
    // glTF 2.0 Appendix C: p(t) = (2t^3-3t^2+1) v0 + td (t^3-2t^2+t) b0
    // + (-2t^3+3t^2) v1 + td (t^3-t^2) a1. With td = 2 and t = 0.25:
    // h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875, so
    // x = 0.84375 + 2*0.140625 + 4*0.15625 = 1.75,
    // y = 2*0.84375 + 2*2*(-0.046875) = 1.5,
    // z = 3*0.84375 - 0.15625 = 2.375.
    let mut track = RawJointTrack::new(0);
    track.translation = RawTrack {
        interpolation: Interpolation::CubicSpline,
        times: vec![1.0, 3.0],
        values: vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 0.0, -1.0)],
        tangents: vec![
            [Vec3::new(9.0, 9.0, 9.0), Vec3::new(1.0, 0.0, 0.0)],
            [Vec3::new(0.0, 2.0, 0.0), Vec3::new(-7.0, 5.0, 3.0)],
        ],
    };
    // Rotation: zero tangents, halfway: (v0 + v1) / 2 normalised, with
    // v0 = identity and v1 = 180 degrees about z: (0, 0, 1, 1) / sqrt 2.
    track.rotation = RawTrack {
        interpolation: Interpolation::CubicSpline,
        times: vec![1.0, 3.0],
        values: vec![Quat::IDENTITY, Quat::from_xyzw(0.0, 0.0, 1.0, 0.0)],
        tangents: vec![[Quat::from_xyzw(0.0, 0.0, 0.0, 0.0); 2]; 2],
    };
    let raw = RawClip {
        weights: Vec::new(),
        name: "c".into(),
        duration: 3.0,
        tracks: vec![track],
    };
    let clip = Clip::build(&raw, &skeleton(1)).unwrap();
    let out = sample(&clip, 1.5, PlaybackMode::Clamp)[0];
    assert!(
        out.translation
            .abs_diff_eq(Vec3::new(1.75, 1.5, 2.375), 1e-5),
        "{out:?}"
    );
    let out = sample(&clip, 2.0, PlaybackMode::Clamp)[0];
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(out
        .rotation
        .abs_diff_eq(Quat::from_xyzw(0.0, 0.0, h, h), 1e-6));
}

#[test]
fn linear_step_and_nearest_by_hand() {
    let mut track = RawJointTrack::new(0);
    track.translation = RawTrack::new(
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![Vec3::ZERO, Vec3::new(2.0, 4.0, 6.0)],
    );
    // 0 to 90 degrees about z: halfway is 45 degrees.
    track.rotation = RawTrack::new(
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![
            Quat::IDENTITY,
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        ],
    );
    track.scale = RawTrack::new(
        Interpolation::Step,
        vec![0.0, 0.5, 1.0],
        vec![Vec3::ONE, Vec3::splat(2.0), Vec3::splat(3.0)],
    );
    let mut t2 = RawJointTrack::new(1);
    let m = |x: f32| Affine3A::from_translation(Vec3::new(x, 0.0, 0.0));
    t2.matrix = RawTrack::new(Interpolation::Nearest, vec![0.0, 1.0], vec![m(1.0), m(2.0)]);
    let raw = RawClip {
        weights: Vec::new(),
        name: "l".into(),
        duration: 1.0,
        tracks: vec![track, t2],
    };
    let clip = Clip::build(&raw, &skeleton(2)).unwrap();
    let out = sample(&clip, 0.25, PlaybackMode::Clamp);
    assert!(out[0]
        .translation
        .abs_diff_eq(Vec3::new(0.5, 1.0, 1.5), 1e-6));
    assert_eq!(out[0].scale, Vec3::ONE);
    assert_eq!(out[1].translation.x, 1.0);
    let out = sample(&clip, 0.5, PlaybackMode::Clamp);
    let s = (22.5f32).to_radians();
    assert!(out[0]
        .rotation
        .abs_diff_eq(Quat::from_xyzw(0.0, 0.0, s.sin(), s.cos()), 1e-6));
    assert_eq!(out[0].scale, Vec3::splat(2.0));
    // Exactly half way the seed keeps the earlier matrix key.
    assert_eq!(out[1].translation.x, 1.0);
    let out = sample(&clip, 0.51, PlaybackMode::Clamp);
    assert_eq!(out[1].translation.x, 2.0);
    let out = sample(&clip, 5.0, PlaybackMode::Clamp);
    assert!(out[0]
        .translation
        .abs_diff_eq(Vec3::new(2.0, 4.0, 6.0), 1e-6));
    assert_eq!(out[0].scale, Vec3::splat(3.0));
}

fn big_clip(joints: usize, shared: bool) -> Clip {
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let tracks = (0..joints)
        .map(|j| {
            let mut t = RawJointTrack::new(j);
            let times = |rng: &mut rand::rngs::StdRng| -> Vec<f32> {
                if shared {
                    (0..30).map(|k| k as f32 / 29.0).collect()
                } else {
                    let mut v: Vec<f32> = (0..30)
                        .map(|k| (k as f32 + rng.gen_range(-0.3..0.3)) / 29.0)
                        .collect();
                    v[0] = 0.0;
                    v[29] = 1.0;
                    v
                }
            };
            let tt = times(&mut rng);
            t.translation = RawTrack::new(
                Interpolation::Linear,
                tt.clone(),
                tt.iter()
                    .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
                    .collect(),
            );
            let tr = times(&mut rng);
            t.rotation = RawTrack::new(
                if j % 2 == 0 {
                    Interpolation::Squad
                } else {
                    Interpolation::Linear
                },
                tr.clone(),
                random_keys(30, j as u64),
            );
            let ts = times(&mut rng);
            t.scale = RawTrack::new(
                Interpolation::Linear,
                ts.clone(),
                ts.iter()
                    .map(|_| Vec3::splat(rng.gen_range(0.5..2.0)))
                    .collect(),
            );
            t
        })
        .collect();
    let raw = RawClip {
        weights: Vec::new(),
        name: "big".into(),
        duration: 1.0,
        tracks,
    };
    Clip::build(&raw, &skeleton(joints)).unwrap()
}

#[test]
fn cached_cursors_agree_with_fresh_search() {
    for shared in [true, false] {
        let clip = big_clip(8, shared);
        assert_eq!(clip.timeline_count() == 1, shared);
        let mut ctx = SamplingContext::new(&clip);
        let mut out = vec![Transform::IDENTITY; 8];
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        let mut t = 0.0f32;
        for step in 0..400 {
            t = if step % 50 == 49 {
                rng.gen_range(-3.0..3.0)
            } else {
                t + 1.0 / 60.0
            };
            SamplingJob {
                clip: &clip,
                context: &mut ctx,
                time: t,
                mode: PlaybackMode::Loop,
                output: &mut out,
            }
            .run()
            .unwrap();
            assert_eq!(out, sample(&clip, t, PlaybackMode::Loop), "t {t}");
        }
    }
}

/// The AVX2 solo sampler against the scalar loop on a clip of
/// unshared key times (every track solo; 21 joints: ten linear and
/// eleven SQUAD rotations, so whole and part groups of eight), looping
/// and not: translations and scales bit for bit, linear rotations
/// within 2e-7 and SQUAD ones within 1e-6 (the polynomials in FMA
/// form).
#[cfg(target_arch = "x86_64")]
#[test]
fn solo_avx2_matches_scalar() {
    if !crate::anim::simd::avx2_fma() {
        eprintln!("no AVX2: the solo kernel is not used on this CPU");
        return;
    }
    let n = 21;
    let clip = big_clip(n, false);
    assert_eq!(clip.solo_quat.linear, 10);
    assert_eq!(clip.solo_vec3.joints.len(), 2 * n);
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    // Both ends (the first and last intervals take clamped SQUAD spans
    // when not looping) and between.
    let mut ts: Vec<f32> = vec![-0.5, 0.0, 0.01, 0.99, 1.0, 1.5];
    ts.extend((0..60).map(|_| rng.gen_range(0.0..1.0f32)));
    for (t, looping) in ts.into_iter().flat_map(|t| [(t, true), (t, false)]) {
        let mut ctx = SamplingContext::new(&clip);
        let (iv, fr) = (&mut ctx.interval, &mut ctx.fraction);
        locate_all(&clip.timelines, t, &mut ctx.cursors, iv, fr);
        let mut want = vec![Transform::IDENTITY; n];
        let mut got = want.clone();
        sample_solo_scalar(&clip, iv, fr, looping, &mut want[..]);
        // SAFETY: AVX2 checked; a whole clip and one transform a joint.
        unsafe {
            sample_solo_avx2(&clip, iv, fr, &mut got[..]);
            sample_solo_squad_avx2(&clip, iv, fr, looping, &mut got[..]);
        }
        for j in 0..n {
            assert_eq!(got[j].translation, want[j].translation, "t {t} joint {j}");
            assert_eq!(got[j].scale, want[j].scale, "t {t} joint {j}");
            let (g, w) = (Vec4::from(got[j].rotation), Vec4::from(want[j].rotation));
            if j % 2 == 0 {
                // SQUAD: two sine polynomials and an arccosine in
                // FMA form against the scalar ones.
                assert!(
                    (g - w).abs().max_element() < 1e-6,
                    "squad t {t} looping {looping} joint {j} {g} {w}"
                );
                assert_ne!(g, Vec4::from(Quat::IDENTITY), "t {t} joint {j}");
            } else {
                assert!(
                    (g - w).abs().max_element() < 2e-7,
                    "t {t} joint {j} {g} {w}"
                );
                assert_ne!(g, Vec4::from(Quat::IDENTITY), "t {t} joint {j}");
            }
        }
    }
}

/// A clip of `n` joints whose rotation tracks take `interp(j)`
/// (`None`: no tracks at all, the joint keeps its bind pose).
fn mixed_clip(n: usize, interp: impl Fn(usize) -> Option<Interpolation>) -> Clip {
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let times: Vec<f32> = (0..12).map(|k| k as f32 / 11.0).collect();
    let tracks = (0..n)
        .filter_map(|j| {
            let ip = interp(j)?;
            let mut t = RawJointTrack::new(j);
            t.translation = RawTrack::new(
                Interpolation::Linear,
                times.clone(),
                times
                    .iter()
                    .map(|_| Vec3::new(rng.gen(), rng.gen(), rng.gen()))
                    .collect(),
            );
            t.rotation = RawTrack::new(ip, times.clone(), random_keys(12, 100 + j as u64));
            t.scale = RawTrack::new(
                Interpolation::Step,
                times.clone(),
                times
                    .iter()
                    .map(|_| Vec3::splat(rng.gen_range(0.5..2.0)))
                    .collect(),
            );
            Some(t)
        })
        .collect();
    let raw = RawClip {
        weights: Vec::new(),
        name: "mixed".into(),
        duration: 1.0,
        tracks,
    };
    let names = (0..n).map(|i| format!("j{i}")).collect();
    let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    let bind: Vec<Transform> = (0..n)
        .map(|i| {
            Transform::from_translation_rotation(
                Vec3::X * i as f32,
                Quat::from_rotation_z(0.1 * i as f32),
            )
        })
        .collect();
    let (sk, _) = Skeleton::new(names, &parents, bind).unwrap();
    Clip::build(&raw, &sk).unwrap()
}

/// Sampling into a SoaPose gives the same transforms, bit for bit, as
/// sampling into a slice: whole blocks of linear rotations (row
/// stores), scattered ones (lane stores), SQUAD, step, solo tracks
/// (unshared key times), joints with no tracks; the spare lanes stay
/// identity.
#[test]
fn soa_sampling_matches_transforms() {
    let mut clips: Vec<(String, Clip)> = Vec::new();
    for n in [1usize, 8, 13, 21, 64] {
        for shared in [true, false] {
            clips.push((format!("big {n} {shared}"), big_clip(n, shared)));
        }
        clips.push((
            format!("linear {n}"),
            mixed_clip(n, |_| Some(Interpolation::Linear)),
        ));
        clips.push((
            format!("mixed {n}"),
            mixed_clip(n, |j| match j % 5 {
                0 => Some(Interpolation::Linear),
                1 => Some(Interpolation::Squad),
                2 => Some(Interpolation::Step),
                3 => None,
                _ => Some(Interpolation::Linear),
            }),
        ));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(18);
    for (name, clip) in &clips {
        let n = clip.joint_count();
        let mut ctx = SamplingContext::new(clip);
        let mut soa = SoaPose::identity(n);
        if let Some(b) = soa.blocks_mut().last_mut() {
            b.rotation[0] = [5.0; 8];
        }
        for k in 0..25 {
            let t = if k < 3 {
                k as f32 * 0.5
            } else {
                rng.gen_range(-0.5..1.5)
            };
            for mode in [PlaybackMode::Loop, PlaybackMode::Clamp] {
                let want = sample(clip, t, mode);
                SoaSamplingJob {
                    clip,
                    context: &mut ctx,
                    time: t,
                    mode,
                    output: &mut soa,
                }
                .run()
                .unwrap();
                assert_eq!(soa.to_vec(), want, "{name} t {t} {mode:?}");
                let last = soa.blocks().last().unwrap();
                for lane in n % 8..if n % 8 == 0 { 0 } else { 8 } {
                    assert_eq!(last.get(lane), Transform::IDENTITY, "{name} lane {lane}");
                }
            }
        }
    }
    // Its checks are the slice job's.
    let clip = &clips[0].1;
    let mut ctx = SamplingContext::new(clip);
    let mut wrong = SoaPose::identity(clip.joint_count() + 1);
    let job = |output: &mut SoaPose, time: f32, ctx: &mut SamplingContext| {
        SoaSamplingJob {
            clip,
            context: ctx,
            time,
            mode: PlaybackMode::Loop,
            output,
        }
        .run()
    };
    assert!(job(&mut wrong, 0.0, &mut ctx).is_err());
    let mut right = SoaPose::identity(clip.joint_count());
    assert!(job(&mut right, f32::NAN, &mut ctx).is_err());
    assert!(job(&mut right, 0.25, &mut ctx).is_ok());
}

#[test]
fn loop_wraps_like_fmod() {
    let clip = big_clip(3, true);
    let a = sample(&clip, 0.3, PlaybackMode::Loop);
    for t in [1.3f32, 5.3, -0.7] {
        let b = sample(&clip, t, PlaybackMode::Loop);
        for (x, y) in a.iter().zip(&b) {
            assert!(x.translation.abs_diff_eq(y.translation, 1e-4), "{t}");
            assert!(x.rotation.dot(y.rotation).abs() > 1.0 - 1e-5, "{t}");
        }
    }
}

#[test]
fn untracked_channels_keep_the_bind_pose_and_single_keys_hold() {
    let bind = Transform {
        translation: Vec3::new(1.0, 2.0, 3.0),
        rotation: Quat::from_rotation_y(0.4),
        scale: Vec3::splat(2.0),
    };
    let (s, _) = Skeleton::new(vec!["a".into()], &[None], vec![bind]).unwrap();
    let mut t = RawJointTrack::new(0);
    t.translation = RawTrack::new(Interpolation::Linear, vec![0.5], vec![Vec3::X]);
    let raw = RawClip {
        weights: Vec::new(),
        name: "k".into(),
        duration: 1.0,
        tracks: vec![t],
    };
    let clip = Clip::build(&raw, &s).unwrap();
    assert_eq!(clip.track_count(), 1);
    let out = sample(&clip, 0.7, PlaybackMode::Loop)[0];
    assert_eq!(out.translation, Vec3::X);
    assert_eq!(out.rotation, bind.rotation);
    assert_eq!(out.scale, bind.scale);
}

#[test]
fn bad_jobs_are_errors() {
    let clip = big_clip(2, true);
    let mut ctx = SamplingContext::new(&clip);
    let mut out = vec![Transform::IDENTITY; 3];
    let job = SamplingJob {
        clip: &clip,
        context: &mut ctx,
        time: 0.0,
        mode: PlaybackMode::Loop,
        output: &mut out,
    };
    assert!(job.run().is_err());
    let mut out = vec![Transform::IDENTITY; 2];
    let job = SamplingJob {
        clip: &clip,
        context: &mut ctx,
        time: f32::NAN,
        mode: PlaybackMode::Loop,
        output: &mut out,
    };
    assert!(job.run().is_err());
}

#[test]
fn playback_rate_and_start() {
    let clip = big_clip(2, true);
    let mut p = Playback::new(&clip, PlaybackMode::Loop);
    p.rate = 2.0;
    p.start = 0.25;
    p.advance(0.5);
    assert!((p.clip_time(&clip) - 0.25).abs() < 1e-6);
    let mut out = vec![Transform::IDENTITY; 2];
    p.sample(&clip, &mut out).unwrap();
    assert_eq!(out, sample(&clip, 0.25, PlaybackMode::Loop));
    let mut soa = SoaPose::identity(2);
    p.sample_soa(&clip, &mut soa).unwrap();
    assert_eq!(soa.to_vec(), out);
    p.rate = -1.0;
    p.advance(0.5);
    assert!((p.clip_time(&clip) - 0.75).abs() < 1e-6);
    p.sample_soa(&clip, &mut soa).unwrap();
    assert_eq!(soa.to_vec(), sample(&clip, 0.75, PlaybackMode::Loop));
    assert!(p.sample_soa(&clip, &mut SoaPose::identity(3)).is_err());
}
