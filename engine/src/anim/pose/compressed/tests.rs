use glam::{Affine3A, Quat, Vec3};
use rand::{Rng, SeedableRng};

use super::decode::sample_packed_scalar;
use super::*;
use crate::anim::{
    Clip, Interpolation, PlaybackMode, RawClip, RawJointTrack, RawTrack, SamplingContext,
    SamplingJob, Skeleton, SoaPose, SoaSamplingJob, Transform,
};
use crate::assets::builtin::Character;

fn sample(clip: &Clip, t: f32) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; clip.joint_count()];
    let mut ctx = SamplingContext::new(clip);
    SamplingJob {
        clip,
        context: &mut ctx,
        time: t,
        mode: PlaybackMode::Loop,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

/// The worst error of `c` against `clip` over [`check_times`] (300
/// random times).
fn worst(clip: &Clip, c: &Clip, skel: &Skeleton, distance: f32) -> f32 {
    let times = check_times(clip, 300, 7);
    check_error(clip, c, skel, &times, distance).unwrap().worst
}

fn compress(clip: &Clip, skel: &Skeleton, tol: Tolerance) -> Clip {
    CompressionJob {
        clip,
        skeleton: skel,
        tolerance: tol,
    }
    .run()
    .unwrap()
}

fn chain(n: usize, offset: f32) -> Skeleton {
    let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    let names = (0..n).map(|i| format!("j{i}")).collect();
    let bind = (0..n)
        .map(|i| {
            Transform::from_translation_rotation(
                Vec3::Y * offset * (i.min(1)) as f32,
                Quat::IDENTITY,
            )
        })
        .collect();
    Skeleton::new(names, &parents, bind).unwrap().0
}

fn rand_quat(rng: &mut impl Rng) -> Quat {
    let axis = Vec3::new(
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
        rng.gen_range(0.1..1.0),
    );
    Quat::from_axis_angle(axis.normalize(), rng.gen_range(-2.5..2.5))
}

/// Every interpolation, shared and unshared key times, scale, steps and
/// a whole-matrix track on a chain of `n` joints.
fn synthetic(n: usize, seed: u64) -> (Skeleton, Clip) {
    let skel = chain(n, 0.12);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let times: Vec<f32> = (0..25).map(|k| k as f32 / 24.0).collect();
    let uneven: Vec<f32> = (0..9).map(|k| (k as f32 / 8.0).powf(1.3) * 1.1).collect();
    let mut tracks = Vec::new();
    for j in 0..n {
        let mut t = RawJointTrack::new(j);
        let interp = [
            Interpolation::Linear,
            Interpolation::Squad,
            Interpolation::CubicSpline,
            Interpolation::Step,
            Interpolation::Linear,
        ][j % 5];
        let ts = if j % 3 == 2 {
            uneven.clone()
        } else {
            times.clone()
        };
        let mut prev = Quat::IDENTITY;
        let qs: Vec<Quat> = ts
            .iter()
            .map(|_| {
                prev = (prev
                    * Quat::from_axis_angle(rand_quat(&mut rng).xyz().normalize_or(Vec3::X), 0.08))
                .normalize();
                prev
            })
            .collect();
        t.rotation = RawTrack::new(interp, ts.clone(), qs);
        if interp == Interpolation::CubicSpline {
            // Smooth (the same tangent in and out), as exporters write them.
            t.rotation.tangents = ts
                .iter()
                .map(|_| {
                    let m = Quat::from_vec4(rand_quat(&mut rng).xyz().extend(0.0) * 0.1);
                    [m, m]
                })
                .collect();
        }
        if j % 2 == 0 {
            let tinterp = if interp == Interpolation::Squad {
                Interpolation::Linear
            } else {
                interp
            };
            let vs: Vec<Vec3> = ts
                .iter()
                .map(|&x| Vec3::new(x.sin(), 0.12 + 0.02 * x, x.cos() * 0.3) * 0.2)
                .collect();
            t.translation = RawTrack::new(tinterp, ts.clone(), vs);
            if tinterp == Interpolation::CubicSpline {
                t.translation.tangents = ts.iter().map(|_| [Vec3::X * 0.1; 2]).collect();
            }
        }
        if j == 3 {
            t.scale = RawTrack::new(
                Interpolation::Linear,
                times.clone(),
                times.iter().map(|&x| Vec3::splat(1.0 + 0.2 * x)).collect(),
            );
        }
        if j == 6 {
            // A whole-matrix track (nearest keys) replaces the others.
            t.matrix = RawTrack::new(
                Interpolation::Nearest,
                uneven.clone(),
                uneven
                    .iter()
                    .map(|&x| {
                        Affine3A::from_rotation_translation(Quat::from_rotation_z(x), Vec3::Y * 0.1)
                    })
                    .collect(),
            );
        }
        if j == 1 {
            // A constant off the bind pose.
            t.translation = RawTrack::new(
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![Vec3::Y * 0.3; 2],
            );
        }
        tracks.push(t);
    }
    let raw = RawClip {
        name: format!("synthetic{seed}"),
        duration: 1.1,
        tracks,
        weights: Vec::new(),
    };
    let clip = Clip::build(&raw, &skel).unwrap();
    (skel, clip)
}

fn tolerances() -> [Tolerance; 2] {
    [Tolerance::OZZ_DEFAULT, Tolerance::ACL_DEFAULT]
}

#[test]
fn builtin_character_clips_stay_within_tolerance() {
    let model = Character::model();
    assert!(!model.clips.is_empty());
    // Segment tracks kept at a temporal stride (so the decoders' stride
    // arithmetic is exercised here and on the GPU's capture tests).
    let mut strided = 0;
    for tol in tolerances() {
        for clip in &model.clips {
            let c = compress(clip, &model.skeleton, tol);
            let p = c.compressed().unwrap();
            strided += p.segment_tracks.iter().filter(|s| s.shift > 0).count();
            let e = worst(clip, &c, &model.skeleton, tol.distance);
            assert!(
                e <= tol.error,
                "{}: error {e} over {} ({} Hz, {} spans, {} tracks)",
                clip.name(),
                tol.error,
                p.sample_rate(),
                p.span_count(),
                p.animated_track_count()
            );
            assert!(p.measured_error() <= tol.error);
            assert!(c.bytes() < clip.bytes(), "{} {}", c.bytes(), clip.bytes());
        }
    }
    assert!(strided > 0, "no segment track kept at a stride");
}

#[test]
fn synthetic_clips_of_every_interpolation_stay_within_tolerance() {
    for seed in 0..3 {
        let (skel, clip) = synthetic(9, seed);
        for tol in tolerances() {
            let c = compress(&clip, &skel, tol);
            let e = worst(&clip, &c, &skel, tol.distance);
            assert!(e <= tol.error, "seed {seed}: error {e} over {}", tol.error);
            assert_eq!(c.name(), clip.name());
            assert_eq!(c.duration(), clip.duration());
            assert!(c.track_infos().is_empty(), "no track list kept");
        }
    }
}

#[test]
fn a_bit_rate_forced_too_low_fails_the_checker() {
    let model = Character::model();
    let tol = Tolerance::ACL_DEFAULT;
    let clip = &model.clips[0];
    let broken = CompressionJob {
        clip,
        skeleton: &model.skeleton,
        tolerance: tol,
    }
    .run_with(Some(3))
    .unwrap();
    let e = worst(clip, &broken, &model.skeleton, tol.distance);
    assert!(
        e > tol.error,
        "forced 3-bit error {e} should exceed {}",
        tol.error
    );
    assert!(broken.compressed().unwrap().measured_error() > tol.error);
}

#[test]
fn random_seek_equals_playing_forward_and_soa_equals_transforms() {
    let (skel, clip) = synthetic(9, 5);
    let c = compress(&clip, &skel, Tolerance::OZZ_DEFAULT);
    let mut ctx = SamplingContext::new(&c);
    let mut soa = SoaPose::identity(c.joint_count());
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for k in 0..200 {
        let t = if k % 2 == 0 {
            k as f32 * 0.013
        } else {
            rng.gen_range(-2.0..3.0)
        };
        let fresh = sample(&c, t);
        let mut out = vec![Transform::IDENTITY; c.joint_count()];
        SamplingJob {
            clip: &c,
            context: &mut ctx,
            time: t,
            mode: PlaybackMode::Loop,
            output: &mut out,
        }
        .run()
        .unwrap();
        assert_eq!(out, fresh);
        SoaSamplingJob {
            clip: &c,
            context: &mut ctx,
            time: t,
            mode: PlaybackMode::Loop,
            output: &mut soa,
        }
        .run()
        .unwrap();
        assert_eq!(soa.to_vec(), fresh);
    }
}

#[test]
fn bind_pose_and_constant_channels_cost_no_samples() {
    let skel = chain(4, 0.1);
    let mut t1 = RawJointTrack::new(1);
    t1.translation = RawTrack::new(
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![Vec3::Y * 0.1; 2],
    );
    t1.rotation = RawTrack::new(
        Interpolation::Linear,
        vec![0.0, 0.5, 1.0],
        vec![Quat::IDENTITY, Quat::from_rotation_x(0.5), Quat::IDENTITY],
    );
    let mut t2 = RawJointTrack::new(2);
    t2.scale = RawTrack::new(
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![Vec3::splat(2.0); 2],
    );
    let raw = RawClip {
        name: "c".into(),
        duration: 1.0,
        tracks: vec![t1, t2],
        weights: Vec::new(),
    };
    let clip = Clip::build(&raw, &skel).unwrap();
    let c = compress(&clip, &skel, Tolerance::OZZ_DEFAULT);
    let p = c.compressed().unwrap();
    assert_eq!(p.animated_track_count(), 1, "only joint 1's rotation moves");
    assert_eq!(p.base_track_count(), 0, "no step tracks");
    // Joint 2's scale is a constant (in the rest pose alone); joint 1's
    // translation is the bind pose.
    assert_eq!(c.rest[2].scale, Vec3::splat(2.0));
    assert_eq!(c.rest[1].translation, skel.bind_local()[1].translation);
}

#[test]
fn rejects_bad_inputs() {
    let (skel, clip) = synthetic(9, 1);
    let bad = CompressionJob {
        clip: &clip,
        skeleton: &skel,
        tolerance: Tolerance::new(0.0, 0.1),
    };
    assert!(bad.run().is_err());
    let other = chain(3, 0.1);
    let bad = CompressionJob {
        clip: &clip,
        skeleton: &other,
        tolerance: Tolerance::OZZ_DEFAULT,
    };
    assert!(bad.run().is_err());
    let c = compress(&clip, &skel, Tolerance::OZZ_DEFAULT);
    let again = CompressionJob {
        clip: &c,
        skeleton: &skel,
        tolerance: Tolerance::OZZ_DEFAULT,
    };
    assert!(again.run().is_err());
}

#[test]
fn tolerance_parses_millimetres_at_centimetres() {
    assert_eq!(
        Tolerance::parse_mm_at_cm("1@10"),
        Some(Tolerance::new(0.001, 0.1))
    );
    assert_eq!(
        Tolerance::parse_mm_at_cm("0.1@3").map(|t| t.distance),
        Some(0.03)
    );
    assert_eq!(Tolerance::parse_mm_at_cm("1"), None);
    assert_eq!(Tolerance::parse_mm_at_cm("0@1"), None);
    assert_eq!(Tolerance::parse_mm_at_cm("x@1"), None);
}

#[test]
fn scalar_decoder_is_what_sampling_runs() {
    let (skel, clip) = synthetic(9, 2);
    let c = compress(&clip, &skel, Tolerance::ACL_DEFAULT);
    let p = c.compressed().unwrap();
    for k in 0..100 {
        let t = k as f32 * 0.011;
        let mut a = sample(&c, t);
        sample_packed_scalar(p, PlaybackMode::Loop.wrap(t, c.duration()), &mut a[..]);
        assert_eq!(a, sample(&c, t));
    }
}

#[test]
fn avx2_decoder_matches_the_scalar_definition_on_every_tier() {
    #[cfg(target_arch = "x86_64")]
    for tier in crate::anim::simd::testable_tiers() {
        assert!(tier >= crate::anim::simd::Tier::Avx2);
        let model = Character::model();
        let mut clips: Vec<(Skeleton, Clip)> = (0..2).map(|s| synthetic(13, s)).collect();
        clips.push((model.skeleton.clone(), model.clips[0].clone()));
        for (skel, clip) in &clips {
            for tol in [Tolerance::ACL_DEFAULT] {
                let c = compress(clip, skel, tol);
                let p = c.compressed().unwrap();
                let mut rng = rand::rngs::StdRng::seed_from_u64(11);
                for _ in 0..300 {
                    let t = rng.gen_range(0.0..c.duration().max(1e-3));
                    let mut a = vec![Transform::IDENTITY; c.joint_count()];
                    let mut b = a.clone();
                    sample_packed_scalar(p, t, &mut a[..]);
                    // SAFETY: the tier is one this CPU has; the clip was
                    // built by the job; the output holds every joint.
                    unsafe { super::decode::sample_packed_avx2(p, t, &mut b[..]) };
                    assert_eq!(a, b, "{tier:?} t {t}");
                }
            }
        }
    }
}

fn file_of(tol: Tolerance) -> ClipFile {
    let model = Character::model();
    let (skel, clip) = synthetic(9, 4);
    let mut clips: Vec<Clip> = model
        .clips
        .iter()
        .map(|c| compress(c, &model.skeleton, tol))
        .collect();
    clips.truncate(2);
    let _ = (skel, clip);
    ClipFile {
        skeleton: model.skeleton.clone(),
        clips,
    }
}

#[test]
fn clip_file_round_trips_byte_for_byte() {
    let f = file_of(Tolerance::OZZ_DEFAULT);
    let bytes = f.to_bytes().unwrap();
    let back = ClipFile::from_bytes("mem.vkclip", &bytes).unwrap();
    assert_eq!(back.to_bytes().unwrap(), bytes);
    assert_eq!(back.clips.len(), f.clips.len());
    for (a, b) in f.clips.iter().zip(&back.clips) {
        assert_eq!(a.name(), b.name());
        for k in 0..50 {
            let t = k as f32 * 0.037;
            assert_eq!(sample(a, t), sample(b, t));
        }
    }
    // Through the file system too.
    let dir = std::env::temp_dir().join(format!("vkskin-clipfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.vkclip");
    f.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(ClipFile::load(&path).unwrap().to_bytes().unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn clip_file_rejects_raw_clips_and_weights() {
    let model = Character::model();
    let f = ClipFile {
        skeleton: model.skeleton.clone(),
        clips: vec![model.clips[0].clone()],
    };
    assert!(f.to_bytes().unwrap_err().contains("not compressed"));
}

/// Re-seals a body edited in place (so a corruption gets past the
/// checksum and reaches the parser's own checks).
fn reseal(bytes: &mut [u8]) {
    let body = bytes[28..].to_vec();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &body {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    bytes[20..28].copy_from_slice(&h.to_le_bytes());
}

#[test]
fn clip_file_faults_are_errors_naming_the_file_and_fault() {
    let bytes = file_of(Tolerance::OZZ_DEFAULT).to_bytes().unwrap();
    let load = |b: &[u8]| ClipFile::from_bytes("bad.vkclip", b);
    let mut cases = 0;
    // Wrong versions (1 and 2 are earlier layouts).
    for old in [1u8, 2] {
        let mut v = bytes.clone();
        v[8] = old;
        let e = load(&v).unwrap_err();
        assert_eq!(e.fault, ClipFileFault::Version);
        assert!(
            e.to_string().contains("bad.vkclip")
                && e.to_string().contains(&format!("version {old}")),
            "{e}"
        );
        cases += 1;
    }
    // Bad magic.
    let mut v = bytes.clone();
    v[0] = b'X';
    assert_eq!(load(&v).unwrap_err().fault, ClipFileFault::Magic);
    cases += 1;
    // Truncations: every length in the header, then 40 through the body.
    for len in (0..28).chain((28..bytes.len()).step_by((bytes.len() / 40).max(1))) {
        let e = load(&bytes[..len]).unwrap_err();
        assert!(
            matches!(e.fault, ClipFileFault::Truncated | ClipFileFault::Magic),
            "length {len}: {e}"
        );
        assert!(e.to_string().contains("bad.vkclip"));
        cases += 1;
    }
    // Flipped bytes: the checksum catches each.
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for _ in 0..60 {
        let mut v = bytes.clone();
        let at = rng.gen_range(28..v.len());
        v[at] ^= 1 << rng.gen_range(0..8);
        let e = load(&v).unwrap_err();
        assert_eq!(e.fault, ClipFileFault::Checksum, "{e}");
        cases += 1;
    }
    // Resealed corruptions reach the parser: each is an error or a file
    // that samples (never a panic); counts and indices are checked.
    let mut errors = 0;
    for _ in 0..400 {
        let mut v = bytes.clone();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(28..v.len());
            v[at] = rng.gen();
        }
        reseal(&mut v);
        match load(&v) {
            Err(e) => {
                assert!(e.to_string().contains("bad.vkclip"));
                errors += 1;
            }
            Ok(f) => {
                for c in &f.clips {
                    for k in 0..20 {
                        let mut out = vec![Transform::IDENTITY; c.joint_count()];
                        let mut ctx = SamplingContext::new(c);
                        let _ = SamplingJob {
                            clip: c,
                            context: &mut ctx,
                            time: k as f32 * 0.1,
                            mode: PlaybackMode::Loop,
                            output: &mut out,
                        }
                        .run();
                    }
                }
            }
        }
        cases += 1;
    }
    assert!(
        errors >= 20,
        "{errors} of 400 resealed corruptions rejected"
    );
    // A count far beyond the file: rejected before allocating.
    let mut v = bytes.clone();
    v[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
    reseal(&mut v);
    assert_eq!(load(&v).unwrap_err().fault, ClipFileFault::Count);
    cases += 1;
    assert!(cases >= 50);
}
