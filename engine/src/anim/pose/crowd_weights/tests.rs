use crate::anim::{
    AnimError, Clip, Crowd, CrowdInstance, Interpolation, Parallelism, PlaybackMode, RawClip,
    RawWeightTrack, Skeleton, Skin, Transform,
};

fn crowd(instances: Vec<CrowdInstance>) -> Crowd {
    let (skeleton, _) =
        Skeleton::new(vec!["root".into()], &[None], vec![Transform::IDENTITY]).unwrap();
    let faces = RawClip {
        name: "faces".into(),
        duration: 0.0,
        tracks: Vec::new(),
        weights: vec![RawWeightTrack {
            first: 0,
            count: 2,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 2.0],
            values: vec![0.0, 1.0, 1.0, -1.0],
            tangents: Vec::new(),
        }],
    };
    let still = RawClip {
        name: "still".into(),
        duration: 1.0,
        ..RawClip::default()
    };
    let clips = [
        Clip::build(&faces, &skeleton).unwrap(),
        Clip::build(&still, &skeleton).unwrap(),
    ];
    let skin = Skin::whole_skeleton(&skeleton);
    Crowd::new(&skeleton, &clips, &skin, instances).unwrap()
}

#[test]
fn each_instance_gets_its_clip_at_its_own_time() {
    let clamp = CrowdInstance {
        mode: PlaybackMode::Clamp,
        ..CrowdInstance::new(0, 0.0, -1.0)
    };
    let mut c = crowd(vec![
        CrowdInstance::new(0, 0.5, 1.0),
        clamp,
        CrowdInstance::new(1, 0.0, 1.0),
        // Looping: 0.5 + 3 * 1 = 3.5 wraps to 1.5.
        CrowdInstance::new(0, 0.5, 3.0),
    ]);
    assert_eq!(c.weight_count(), 2);
    let defaults = [5.0, 6.0, 7.0];
    let mut out = vec![-9.0; 4 * 3 + 2];
    for _ in 0..2 {
        c.animate_weights(1.0, &defaults, &mut out).unwrap();
        // Clip time 1.5: (0, 1) + 0.75 ((1, -1) - (0, 1)) = (0.75, -0.5).
        // Clamped -1: the first key. The still clip: the defaults.
        let want = [
            0.75, -0.5, 7.0, 0.0, 1.0, 7.0, 5.0, 6.0, 7.0, 0.75, -0.5, 7.0, -9.0, -9.0,
        ];
        for (i, (g, w)) in out.iter().zip(&want).enumerate() {
            assert!((g - w).abs() < 1e-6, "{i}: {g} vs {w}");
        }
    }
    // The joints still animate as before.
    c.animate(1.0, Parallelism::Single, |_, m| assert_eq!(m.len(), 1))
        .unwrap();
}

#[test]
fn bad_frames_are_errors_and_write_nothing() {
    let mut c = crowd(vec![CrowdInstance::new(0, 0.0, 1.0); 2]);
    let mut out = vec![3.0; 6];
    let err = c.animate_weights(0.0, &[0.0], &mut out).unwrap_err();
    assert!(err.to_string().contains("2 morph weights"), "{err}");
    assert!(matches!(
        c.animate_weights(0.0, &[0.0; 4], &mut out),
        Err(AnimError::LengthMismatch {
            expected: 8,
            got: 6,
            ..
        })
    ));
    assert!(c.animate_weights(f32::NAN, &[0.0; 3], &mut out).is_err());
    assert_eq!(out, [3.0; 6]);
    // The count covers every clip (an instance may switch to any).
    let mut still = crowd(vec![CrowdInstance::new(1, 0.0, 1.0)]);
    assert_eq!(still.weight_count(), 2);
    let mut out = [0.0; 2];
    still.animate_weights(0.0, &[0.5, 1.5], &mut out).unwrap();
    assert_eq!(out, [0.5, 1.5]);
}

#[test]
fn a_model_samples_its_weight_vector() {
    use crate::assets::Model;
    use crate::mesh::MorphSet;
    let c = crowd(Vec::new());
    let mut model = Model {
        morph_sets: vec![MorphSet {
            defaults: vec![0.25],
            first_weight: 0,
            ..MorphSet::default()
        }],
        ..Model::default()
    };
    assert_eq!(
        model.morph_weights(None, 0.0, PlaybackMode::Loop).unwrap(),
        [0.25]
    );
    // The clip animates two weights: the vector grows to them.
    let w = model
        .morph_weights(Some(&c.clips()[0]), 1.0, PlaybackMode::Loop)
        .unwrap();
    assert_eq!(w, [0.5, 0.0]);
    model.morph_sets[0].defaults = vec![0.25, 0.5, 0.125];
    let w = model
        .morph_weights(Some(&c.clips()[1]), 1.0, PlaybackMode::Loop)
        .unwrap();
    assert_eq!(w, [0.25, 0.5, 0.125]);
}
