use super::*;

fn tr(t: Vec3, q: Quat, s: f32) -> Transform {
    Transform {
        translation: t,
        rotation: q,
        scale: Vec3::splat(s),
    }
}

fn run(layers: &[BlendLayer], additive: &[BlendLayer], rest: &[Transform]) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; rest.len()];
    BlendingJob {
        layers,
        additive,
        rest_pose: rest,
        threshold: 0.1,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

#[test]
fn weighted_average_by_hand() {
    let a = [tr(Vec3::ZERO, Quat::IDENTITY, 1.0); 2];
    let b = [tr(
        Vec3::new(4.0, 0.0, 8.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        3.0,
    ); 2];
    let rest = [Transform::IDENTITY; 2];
    // Equal weights: translation halfway, scale 2, and the normalised
    // sum of identity and 90 degrees about z is exactly 45 degrees.
    let out = run(
        &[BlendLayer::new(&a, 1.0), BlendLayer::new(&b, 1.0)],
        &[],
        &rest,
    );
    assert!(out[0]
        .translation
        .abs_diff_eq(Vec3::new(2.0, 0.0, 4.0), 1e-6));
    assert!(out[0].scale.abs_diff_eq(Vec3::splat(2.0), 1e-6));
    assert!(out[0]
        .rotation
        .abs_diff_eq(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4), 1e-6));
    // 1:3 weights: a quarter of the way.
    let out = run(
        &[BlendLayer::new(&a, 0.5), BlendLayer::new(&b, 1.5)],
        &[],
        &rest,
    );
    assert!(out[1]
        .translation
        .abs_diff_eq(Vec3::new(3.0, 0.0, 6.0), 1e-6));
    // The other hemisphere's copy of b blends the same (three layers
    // take the general path).
    let nb = [tr(b[0].translation, -b[0].rotation, 3.0); 2];
    let z = [Transform::IDENTITY; 2];
    let out2 = run(
        &[
            BlendLayer::new(&a, 0.5),
            BlendLayer::new(&nb, 1.5),
            BlendLayer::new(&z, 0.0),
        ],
        &[],
        &rest,
    );
    assert!(out2[1].rotation.dot(out[1].rotation).abs() > 1.0 - 1e-6);
    assert!(out2[1].translation.abs_diff_eq(out[1].translation, 1e-6));
}

#[test]
fn masks_threshold_and_rest_pose() {
    let a = [tr(Vec3::X, Quat::IDENTITY, 1.0); 3];
    let b = [tr(Vec3::Y, Quat::IDENTITY, 1.0); 3];
    let rest = [tr(Vec3::Z, Quat::from_rotation_x(0.5), 2.0); 3];
    let mask = [1.0, 0.0, 0.0];
    let out = run(
        &[
            BlendLayer::masked(&a, 1.0, &mask),
            BlendLayer::masked(&b, 1.0, &[1.0, 1.0, 0.0]),
        ],
        &[],
        &rest,
    );
    assert!(out[0]
        .translation
        .abs_diff_eq(Vec3::new(0.5, 0.5, 0.0), 1e-6));
    assert!(out[1].translation.abs_diff_eq(Vec3::Y, 1e-6));
    // No layer covers joint 2: the rest pose.
    assert!(out[2].translation.abs_diff_eq(Vec3::Z, 1e-6));
    assert!(out[2].rotation.abs_diff_eq(rest[2].rotation, 1e-6));
    // Weight 0.05 under a 0.1 threshold: half rest pose.
    let out = run(&[BlendLayer::new(&a, 0.05)], &[], &rest);
    assert!(out[0]
        .translation
        .abs_diff_eq(Vec3::new(0.5, 0.0, 0.5), 1e-6));
}

#[test]
fn additive_delta_round_trips() {
    let reference = [tr(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_y(0.3),
        1.5,
    )];
    let pose = [tr(
        Vec3::new(0.0, 1.0, 5.0),
        Quat::from_rotation_x(-0.8),
        3.0,
    )];
    let delta = [additive_delta(&reference[0], &pose[0])];
    let full = run(
        &[BlendLayer::new(&reference, 1.0)],
        &[BlendLayer::new(&delta, 1.0)],
        &reference,
    );
    assert!(full[0].translation.abs_diff_eq(pose[0].translation, 1e-5));
    assert!(full[0].rotation.dot(pose[0].rotation).abs() > 1.0 - 1e-6);
    assert!(full[0].scale.abs_diff_eq(pose[0].scale, 1e-5));
    let none = run(
        &[BlendLayer::new(&reference, 1.0)],
        &[BlendLayer::new(&delta, 0.0)],
        &reference,
    );
    assert!(none[0]
        .translation
        .abs_diff_eq(reference[0].translation, 1e-6));
    assert!(none[0].rotation.abs_diff_eq(reference[0].rotation, 1e-6));
    // Half weight: half the translation delta.
    let half = run(
        &[BlendLayer::new(&reference, 1.0)],
        &[BlendLayer::new(&delta, 0.5)],
        &reference,
    );
    assert!(half[0]
        .translation
        .abs_diff_eq(Vec3::new(0.5, 1.5, 4.0), 1e-6));
}

/// `n` random transforms, rotations in either hemisphere, translations
/// scaled by `reach`.
fn random_pose(rng: &mut impl rand::Rng, n: usize, reach: f32) -> Vec<Transform> {
    (0..n)
        .map(|_| Transform {
            translation: Vec3::new(rng.gen(), rng.gen(), rng.gen()) * reach,
            rotation: Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.gen_range(-3.0..3.0),
                rng.gen_range(-1.5..1.5),
                rng.gen_range(-3.0..3.0),
            ) * if rng.gen_bool(0.5) { -1.0 } else { 1.0 },
            scale: Vec3::new(rng.gen(), rng.gen(), rng.gen()),
        })
        .collect()
}

#[test]
fn fast_two_layer_blend_matches_the_general_loop() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    let a = random_pose(&mut rng, 21, 1.0);
    let b = random_pose(&mut rng, 21, 1.0);
    let rest = vec![Transform::IDENTITY; 21];
    let fast = run(
        &[BlendLayer::new(&a, 0.3), BlendLayer::new(&b, 0.9)],
        &[],
        &rest,
    );
    // A mask of ones takes the general loop.
    let ones = vec![1.0; 21];
    let slow = run(
        &[BlendLayer::masked(&a, 0.3, &ones), BlendLayer::new(&b, 0.9)],
        &[],
        &rest,
    );
    for j in 0..21 {
        assert!(
            fast[j].translation.abs_diff_eq(slow[j].translation, 1e-6),
            "{j}"
        );
        assert!(fast[j].scale.abs_diff_eq(slow[j].scale, 1e-6), "{j}");
        assert!(fast[j].rotation.dot(slow[j].rotation) > 1.0 - 1e-6, "{j}");
    }
}

/// The kernel itself against the scalar two-layer loop, both ways
/// through the joints (which one a job takes depends on addresses).
#[test]
fn fast_two_layer_kernel_matches_the_scalar_loop_both_ways() {
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() && crate::anim::simd::avx2::TRANSFORM_PACKED {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(62);
        // No block, one (no pipeline), two (both fronts, then both
        // backs), three (one trip of the loop), more.
        for n in [5, 8, 13, 16, 24, 29, 40, 64] {
            let (a, b) = (
                random_pose(&mut rng, n, 10.0),
                random_pose(&mut rng, n, 10.0),
            );
            let (wa, wb) = (0.35, 0.65);
            let mut want = vec![Transform::IDENTITY; n];
            blend2_scalar(&a, &b, wa, wb, &mut want, 0);
            for backwards in [false, true] {
                let mut got = vec![Transform::IDENTITY; n];
                // SAFETY: features and layout checked, lengths equal.
                unsafe {
                    crate::anim::simd::avx2::blend2_either(&a, &b, wa, wb, &mut got, backwards)
                };
                for j in 0..n / 8 * 8 {
                    let (g, w) = (&got[j], &want[j]);
                    assert!(g.translation.abs_diff_eq(w.translation, 1e-5), "{j}");
                    assert!(g.scale.abs_diff_eq(w.scale, 1e-6), "{j}");
                    assert!(g.rotation.abs_diff_eq(w.rotation, 1e-6), "{j}");
                }
                // The joints past the last block of eight are not written.
                assert!(got[n / 8 * 8..].iter().all(|t| *t == Transform::IDENTITY));
            }
        }
    }
}

fn assert_close(got: &[Transform], want: &[Transform], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.translation.abs_diff_eq(w.translation, 1e-5),
            "{what} joint {j}"
        );
        assert!(g.scale.abs_diff_eq(w.scale, 1e-5), "{what} joint {j}");
        assert!(
            g.rotation.abs_diff_eq(w.rotation, 2e-6),
            "{what} joint {j}: {:?} against {:?}",
            g.rotation,
            w.rotation
        );
    }
}

/// The SoA job gives the AoS job's results on every path: the two-layer
/// cross-fade, several unmasked layers, masks, the rest pose's fill-in
/// and additive layers; and the lanes past the pose stay identity.
#[test]
fn soa_job_matches_the_aos_job() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(63);
    for n in [1usize, 7, 8, 9, 16, 23, 64, 70] {
        let poses: Vec<Vec<Transform>> = (0..4).map(|_| random_pose(&mut rng, n, 5.0)).collect();
        let rest = random_pose(&mut rng, n, 1.0);
        let mask: Vec<f32> = (0..n)
            .map(|_| if rng.gen_bool(0.3) { 0.0 } else { rng.gen() })
            .collect();
        let soa: Vec<SoaPose> = poses.iter().map(|p| SoaPose::from_transforms(p)).collect();
        let soa_rest = SoaPose::from_transforms(&rest);
        let delta = random_pose(&mut rng, n, 0.5);
        let soa_delta = SoaPose::from_transforms(&delta);
        // (weights, mask on layer 0, additive weight, threshold)
        let cases: [(&[f32], bool, Option<f32>, f32); 7] = [
            (&[0.3, 0.7], false, None, 0.1),
            (&[2.0, 0.5], false, None, 0.1),
            (&[0.2, 0.3, 0.1, 0.4], false, None, 0.1),
            (&[1.0], false, None, 0.1),
            (&[0.3, 0.7], true, None, 0.1),
            (&[0.02, 0.03], false, None, 0.5),
            (&[0.3, 0.7], false, Some(0.6), 0.1),
        ];
        for (case, (weights, masked, add, threshold)) in cases.iter().enumerate() {
            let layers: Vec<BlendLayer> = weights
                .iter()
                .enumerate()
                .map(|(i, &w)| match (i, masked) {
                    (0, true) => BlendLayer::masked(&poses[i], w, &mask),
                    _ => BlendLayer::new(&poses[i], w),
                })
                .collect();
            let soa_layers: Vec<SoaBlendLayer> = weights
                .iter()
                .enumerate()
                .map(|(i, &w)| match (i, masked) {
                    (0, true) => SoaBlendLayer::masked(&soa[i], w, &mask),
                    _ => SoaBlendLayer::new(&soa[i], w),
                })
                .collect();
            let additive: Vec<BlendLayer> =
                add.iter().map(|&w| BlendLayer::new(&delta, w)).collect();
            let soa_additive: Vec<SoaBlendLayer> = add
                .iter()
                .map(|&w| SoaBlendLayer::new(&soa_delta, w))
                .collect();
            let mut want = vec![Transform::IDENTITY; n];
            BlendingJob {
                layers: &layers,
                additive: &additive,
                rest_pose: &rest,
                threshold: *threshold,
                output: &mut want,
            }
            .run()
            .unwrap();
            let mut got = SoaPose::identity(n);
            // Garbage in the output's spare lanes is put right.
            if let Some(last) = got.blocks_mut().last_mut() {
                last.translation[0] = [9.0; 8];
            }
            SoaBlendingJob {
                layers: &soa_layers,
                additive: &soa_additive,
                rest_pose: &soa_rest,
                threshold: *threshold,
                output: &mut got,
            }
            .run()
            .unwrap();
            assert_close(&got.to_vec(), &want, &format!("n {n} case {case}"));
            let last = got.blocks().last().unwrap();
            for lane in n % 8..if n % 8 == 0 { 0 } else { 8 } {
                assert_eq!(last.get(lane), Transform::IDENTITY, "n {n} case {case}");
            }
        }
    }
}

/// The SoA kernels against the scalar loop they stand for, one to
/// four layers, zero-length sums falling back to the first rotation.
#[test]
fn soa_kernels_match_the_scalar_loop() {
    #[cfg(target_arch = "x86_64")]
    if crate::anim::simd::avx2_fma() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(64);
        for n in [8usize, 16, 24, 40, 64] {
            let mut poses: Vec<Vec<Transform>> =
                (0..4).map(|_| random_pose(&mut rng, n, 10.0)).collect();
            // Joint 3: a sum of squared length below 1e-20 takes the
            // first layer's rotation as it is.
            poses[0][3].rotation = Quat::from_xyzw(1e-12, 0.0, 0.0, 0.0);
            for p in &mut poses[1..] {
                p[3].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
            }
            let soa: Vec<SoaPose> = poses.iter().map(|p| SoaPose::from_transforms(p)).collect();
            for w in [
                &[0.5f32, 0.5][..],
                &[0.2, 0.8],
                &[0.1, 0.6, 0.3],
                &[0.25; 4],
            ] {
                let layers: Vec<SoaBlendLayer> = (0..w.len())
                    .map(|i| SoaBlendLayer::new(&soa[i], w[i]))
                    .collect();
                let mut want = SoaPose::identity(n);
                blend_uniform_scalar(&layers, w, &mut want);
                let mut got = SoaPose::identity(n);
                let blocks: Vec<&[crate::anim::SoaTransforms8]> =
                    layers.iter().map(|l| l.pose.blocks()).collect();
                // SAFETY: AVX2 and FMA checked; poses as long as the output.
                unsafe { crate::anim::simd::avx2::blend_soa(&blocks, w, got.blocks_mut()) };
                assert_close(&got.to_vec(), &want.to_vec(), &format!("general {w:?}"));
                assert_eq!(got.get(3).unwrap().rotation, poses[0][3].rotation);
                if let [wa, wb] = w {
                    let mut got2 = SoaPose::identity(n);
                    // SAFETY: as above.
                    unsafe {
                        crate::anim::simd::avx2::blend_soa2(
                            blocks[0],
                            blocks[1],
                            *wa,
                            *wb,
                            got2.blocks_mut(),
                        )
                    };
                    assert_close(&got2.to_vec(), &want.to_vec(), &format!("two {w:?}"));
                    assert_eq!(got2.get(3).unwrap().rotation, poses[0][3].rotation);
                }
            }
        }
    }
}

#[test]
fn soa_bad_input_is_an_error() {
    let a = SoaPose::identity(2);
    let short = SoaPose::identity(1);
    let mut out = SoaPose::identity(2);
    let good = SoaBlendLayer::new(&a, 1.0);
    for (i, bad) in [
        SoaBlendLayer::new(&short, 1.0),
        SoaBlendLayer::new(&a, f32::NAN),
        SoaBlendLayer::new(&a, -1.0),
        SoaBlendLayer::masked(&a, 1.0, &[1.0]),
        SoaBlendLayer::masked(&a, 1.0, &[1.0, f32::INFINITY]),
    ]
    .into_iter()
    .enumerate()
    {
        for layers in [[good, bad], [bad, good]] {
            let r = SoaBlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: &a,
                threshold: 0.1,
                output: &mut out,
            }
            .run();
            assert!(r.is_err(), "case {i}");
        }
    }
    for (rest, threshold) in [(&short, 0.1), (&a, f32::NAN), (&a, -1.0)] {
        let r = SoaBlendingJob {
            layers: &[good, good],
            additive: &[],
            rest_pose: rest,
            threshold,
            output: &mut out,
        }
        .run();
        assert!(r.is_err(), "{} {threshold}", rest.len());
    }
}

#[test]
fn blend_direction_avoids_4k_aliasing() {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::anim::simd::avx2::store_runs_into_loads as backwards;
        let a = 0x10_0630;
        // Output 480 bytes above an input (modulo 4 KiB): forward stores
        // meet that input's loads ten joints on, so go backwards.
        assert!(backwards(a + 480, &[a, a + 0x2000 + 3000]));
        assert!(backwards(a + 4096 * 3 + 480, &[a]));
        // Far apart either way, or the output below: forwards.
        assert!(!backwards(a + 2048, &[a]));
        assert!(!backwards(a - 480, &[a]));
        // Near both ways: forwards.
        assert!(!backwards(a + 480, &[a, a + 960]));
    }
}

#[test]
fn bad_input_is_an_error() {
    let a = [Transform::IDENTITY; 2];
    let rest = [Transform::IDENTITY; 2];
    let mut out = [Transform::IDENTITY; 2];
    let mut run = |layers: &[BlendLayer], rest_pose: &[Transform], threshold: f32| {
        BlendingJob {
            layers,
            additive: &[],
            rest_pose,
            threshold,
            output: &mut out,
        }
        .run()
    };
    for layers in [
        [BlendLayer::new(&a[..1], 1.0)],
        [BlendLayer::new(&a, f32::NAN)],
        [BlendLayer::new(&a, -1.0)],
        [BlendLayer::masked(&a, 1.0, &[1.0])],
        [BlendLayer::masked(&a, 1.0, &[1.0, f32::INFINITY])],
    ] {
        assert!(run(&layers, &rest, 0.1).is_err());
    }
    // The two-layer cross-fade checks its input as well, whichever
    // layer or field is at fault.
    let good = BlendLayer::new(&a, 2.0);
    for (i, bad) in [
        BlendLayer::new(&a[..1], 1.0),
        BlendLayer::new(&a, f32::NAN),
        BlendLayer::new(&a, f32::INFINITY),
        BlendLayer::new(&a, -1.0),
        BlendLayer::masked(&a, 1.0, &[1.0]),
    ]
    .into_iter()
    .enumerate()
    {
        for layers in [[good, bad], [bad, good]] {
            assert!(run(&layers, &rest, 0.1).is_err(), "case {i}");
        }
    }
    for (rest_pose, threshold) in [(&rest[..1], 0.1), (&rest[..], f32::NAN), (&rest[..], -1.0)] {
        assert!(
            run(&[good, good], rest_pose, threshold).is_err(),
            "{} {threshold}",
            rest_pose.len()
        );
    }
}
