//! Helpers of the GPU animation tests: clips with every interpolation for
//! any skeleton, random instance records, and the CPU animation layer's
//! palette for a record (the reference the GPU must equal).

use glam::{Affine3A, Quat, Vec3, Vec4};
use vkskin::anim::{
    BlendLayer, BlendingJob, Clip, Interpolation, LocalToModelJob, PaletteReport, PlaybackMode,
    RawClip, RawJointTrack, RawTrack, SamplingContext, SamplingJob, Skeleton, Skin, Transform,
};
use vkskin::skin::anim::AnimRecord;
use vkskin::skin::{MeshPart, PathDesc};

use crate::morph::Rng;

fn unit_quat(rng: &mut Rng) -> Quat {
    let v = Vec4::new(
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    );
    Quat::from_vec4(v.normalize_or(Vec4::W))
}

/// `n` key times from 0 to below `end`, at least half a step apart (so
/// that a time's last bits move a sampled value by little).
fn times(rng: &mut Rng, n: usize, end: f32) -> Vec<f32> {
    let step = end / n as f32;
    (0..n)
        .map(|k| match k {
            0 => 0.0,
            _ => k as f32 * step + rng.range(0.0, 0.5 * step),
        })
        .collect()
}

/// Three clips for `skeleton` with STEP, LINEAR, SQUAD, CUBICSPLINE and
/// matrix (step and nearest) tracks, some sharing their key times, some
/// alone, some of a single key, around the bind pose.
pub fn varied_clips(skeleton: &Skeleton, seed: u64) -> Vec<Clip> {
    let mut rng = Rng(seed);
    let n = skeleton.len();
    (0..3)
        .map(|c| {
            let duration = 1.0 + c as f32 * 0.7;
            let shared = times(&mut rng, 9, duration);
            let mut tracks = Vec::new();
            for j in 0..n {
                let bind = skeleton.bind_local()[j];
                let mut t = RawJointTrack::new(j);
                let pick = (j * 7 + c * 3) % 11;
                let keys = |rng: &mut Rng, k: usize| -> Vec<f32> {
                    if k.is_multiple_of(3) {
                        shared.clone()
                    } else {
                        times(rng, 2 + (k % 6), duration)
                    }
                };
                if pick == 10 {
                    // Whole-matrix keys.
                    let kt = keys(&mut rng, j + 1);
                    let values = kt
                        .iter()
                        .map(|_| {
                            Affine3A::from_scale_rotation_translation(
                                Vec3::splat(rng.range(0.9, 1.1)),
                                bind.rotation * Quat::from_rotation_z(rng.range(-0.6, 0.6)),
                                bind.translation * rng.range(0.9, 1.1),
                            )
                        })
                        .collect();
                    let interp = if j % 2 == 0 {
                        Interpolation::Step
                    } else {
                        Interpolation::Nearest
                    };
                    t.matrix = RawTrack::new(interp, kt, values);
                    tracks.push(t);
                    continue;
                }
                let interp_v = [
                    Interpolation::Step,
                    Interpolation::Linear,
                    Interpolation::CubicSpline,
                    Interpolation::Nearest,
                ][pick % 4];
                let interp_q = [
                    Interpolation::Step,
                    Interpolation::Linear,
                    Interpolation::Squad,
                    Interpolation::CubicSpline,
                    Interpolation::Nearest,
                ][(pick + j) % 5];
                // Translation (one key on some joints: folded into rest).
                let kt = if pick == 4 {
                    vec![0.3]
                } else {
                    keys(&mut rng, pick)
                };
                let values: Vec<Vec3> = kt
                    .iter()
                    .map(|_| {
                        // Within a tenth of the bone's length.
                        let r = 0.1 * bind.translation.length().max(0.01);
                        bind.translation
                            + Vec3::new(rng.range(-r, r), rng.range(-r, r), rng.range(-r, r))
                    })
                    .collect();
                let mut tr = RawTrack::new(interp_v, kt.clone(), values);
                if interp_v == Interpolation::CubicSpline {
                    tr.tangents = kt
                        .iter()
                        .map(|_| {
                            let mut v = || {
                                Vec3::new(
                                    rng.range(-0.05, 0.05),
                                    rng.range(-0.05, 0.05),
                                    rng.range(-0.05, 0.05),
                                )
                            };
                            [v(), v()]
                        })
                        .collect();
                }
                t.translation = tr;
                // Rotation.
                let kq = keys(&mut rng, pick + 1);
                let values: Vec<Quat> = kq
                    .iter()
                    .map(|_| {
                        // Within a radian of the bind pose (a joint whirling
                        // through whole turns between keys would make the
                        // test measure f32 rounding times angular speed
                        // down 200 levels, not the GPU's sampling).
                        let axis = unit_quat(&mut rng).xyz().normalize_or(Vec3::Y);
                        let q = bind.rotation * Quat::from_axis_angle(axis, rng.range(-0.6, 0.6));
                        // Some keys the other way round: hemisphere checks
                        // (not on splines, which would pass near the zero
                        // quaternion between q and -q, where normalising
                        // turns the last bit of any sum into a visible turn).
                        if interp_q != Interpolation::CubicSpline && rng.range(0.0, 1.0) < 0.3 {
                            -q
                        } else {
                            q
                        }
                    })
                    .collect();
                let mut rq = RawTrack::new(interp_q, kq.clone(), values);
                if interp_q == Interpolation::CubicSpline {
                    // Catmull-Rom tangents from the neighbouring keys (as an
                    // exporter's smooth curve would have), slightly
                    // different on either side of a key.
                    let n = kq.len();
                    let v: Vec<Vec4> = rq.values.iter().map(|&q| Vec4::from(q)).collect();
                    rq.tangents = (0..n)
                        .map(|k| {
                            let (a, b) = (k.saturating_sub(1), (k + 1).min(n - 1));
                            let dt = (kq[b] - kq[a]).max(1e-3);
                            let m = (v[b] - v[a]) / dt;
                            let m = Quat::from_vec4(m);
                            [m, Quat::from_vec4(Vec4::from(m) * rng.range(0.8, 1.2))]
                        })
                        .collect();
                }
                t.rotation = rq;
                // Scale on some joints.
                if pick % 3 == 1 {
                    let ks = keys(&mut rng, pick + 2);
                    let values = ks
                        .iter()
                        .map(|_| {
                            Vec3::new(
                                rng.range(0.9, 1.1),
                                rng.range(0.9, 1.1),
                                rng.range(0.9, 1.1),
                            )
                        })
                        .collect();
                    let interp = if j % 2 == 0 {
                        Interpolation::Linear
                    } else {
                        Interpolation::Step
                    };
                    t.scale = RawTrack::new(interp, ks, values);
                }
                tracks.push(t);
            }
            Clip::build(
                &RawClip {
                    name: format!("varied{c}"),
                    duration,
                    tracks,
                    weights: Vec::new(),
                },
                skeleton,
            )
            .expect("varied clip")
        })
        .collect()
}

/// `count` distinct records over `clips` clips: times before, inside and
/// past the clips, speeds forwards, backwards and held, both loop modes,
/// half of them cross-fading into another clip (weights 0 and 1 among
/// them).
pub fn random_records(count: usize, clips: usize, seed: u64) -> Vec<AnimRecord> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|i| {
            let mode = |k: usize| {
                if k.is_multiple_of(2) {
                    PlaybackMode::Loop
                } else {
                    PlaybackMode::Clamp
                }
            };
            let speed = |rng: &mut Rng, i: usize| match i % 5 {
                0 => 0.0,
                1 => -0.7,
                _ => rng.range(0.3, 1.8),
            };
            let r = AnimRecord::play(
                (i % clips) as u32,
                rng.range(-3.0, 6.0),
                speed(&mut rng, i),
                mode(i / 2),
            );
            if i % 2 == 1 {
                let w = match i % 13 {
                    1 => 0.0,
                    3 => 1.0,
                    _ => rng.range(0.0, 1.0),
                };
                r.crossfade(
                    ((i / 3 + 1) % clips) as u32,
                    rng.range(-2.0, 5.0),
                    speed(&mut rng, i + 2),
                    mode(i / 3),
                    w,
                )
            } else {
                r
            }
        })
        .collect()
}

fn sample(clip: &Clip, time: f32, mode: PlaybackMode, out: &mut [Transform]) {
    SamplingJob {
        clip,
        context: &mut SamplingContext::new(clip),
        time,
        mode,
        output: out,
    }
    .run()
    .expect("sampling");
}

/// The CPU animation layer's skinning matrices for `rec` at frame time
/// `now`: sampling (both clips), the cross-fade blend, local-to-model and
/// the skin's inverse binds.
pub fn cpu_skin(
    skeleton: &Skeleton,
    clips: &[Clip],
    skin: &Skin,
    rec: &AnimRecord,
    now: f32,
) -> Vec<Affine3A> {
    let n = skeleton.len();
    let mut a = vec![Transform::IDENTITY; n];
    let ta = rec.time_a + rec.speed_a * now;
    sample(&clips[rec.clip_a as usize], ta, rec.mode(false), &mut a);
    let locals = if rec.has_b() {
        let mut b = vec![Transform::IDENTITY; n];
        let tb = rec.time_b + rec.speed_b * now;
        sample(&clips[rec.clip_b as usize], tb, rec.mode(true), &mut b);
        let mut out = vec![Transform::IDENTITY; n];
        BlendingJob {
            layers: &[
                BlendLayer::new(&a, 1.0 - rec.weight),
                BlendLayer::new(&b, rec.weight),
            ],
            additive: &[],
            rest_pose: skeleton.bind_local(),
            threshold: 0.1,
            output: &mut out,
        }
        .run()
        .expect("blending");
        out
    } else {
        a
    };
    let mut models = vec![Affine3A::IDENTITY; n];
    LocalToModelJob::full(skeleton, &locals, &mut models)
        .run()
        .expect("local to model");
    let mut out = vec![Affine3A::IDENTITY; skin.len()];
    skin.skin_matrices(&models, &mut out).expect("skin");
    out
}

/// `skin` encoded by `desc`'s encoding into one instance's palette block
/// of `block` vec4s laid out as `parts` say.
pub fn cpu_block(
    desc: &PathDesc,
    parts: &[MeshPart],
    skin: &[Affine3A],
    block: usize,
) -> Vec<[f32; 4]> {
    let mut out = vec![[0.0f32; 4]; block];
    let mut report = PaletteReport::default();
    for p in parts {
        desc.encoding
            .encode(
                skin,
                &p.bones,
                &p.hierarchy,
                &mut out[p.palette_offset..],
                &mut report,
            )
            .expect("encode");
    }
    out
}

/// The largest distance of a bind-pose joint from the origin (at least 1):
/// the scale of translation tolerances.
pub fn bind_extent(skeleton: &Skeleton) -> f32 {
    let mut models = vec![Affine3A::IDENTITY; skeleton.len()];
    LocalToModelJob::full(skeleton, skeleton.bind_local(), &mut models)
        .run()
        .expect("bind pose");
    models
        .iter()
        .map(|m| Vec3::from(m.translation).length())
        .fold(1.0f32, f32::max)
}

/// Per vec4 of an entry of `per_bone` rows, which components are
/// translations (scaled by the extent): 4x3 the w column, qt row 1's xyz,
/// dq and dq-scale the dual part.
pub fn is_translation(per_bone: usize, encoding: &str, row: usize, comp: usize) -> bool {
    match (encoding, per_bone) {
        ("4x3", _) => comp == 3,
        ("qt", _) => row == 1 && comp < 3,
        ("dq", _) | ("dq-scale", _) => row == 1,
        _ => false,
    }
}
