use super::*;
use glam::Affine3A;

#[test]
fn track_infos_list_what_plays() {
    let (skeleton, _) = Skeleton::new(
        vec!["a".into(), "b".into()],
        &[None, Some(0)],
        vec![Transform::IDENTITY; 2],
    )
    .unwrap();
    let mut a = RawJointTrack::new(0);
    a.rotation = RawTrack::new(
        Interpolation::Squad,
        vec![0.5, 1.0, 2.0],
        vec![Quat::IDENTITY, Quat::from_rotation_x(0.3), Quat::IDENTITY],
    );
    a.scale = RawTrack::new(Interpolation::Step, vec![0.0], vec![Vec3::ONE]);
    // b's matrix track replaces its translation track.
    let mut b = RawJointTrack::new(1);
    b.translation = RawTrack::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::ZERO; 2]);
    b.matrix = RawTrack::new(
        Interpolation::Nearest,
        vec![0.0, 3.0],
        vec![Affine3A::IDENTITY; 2],
    );
    let raw = RawClip {
        weights: Vec::new(),
        name: "c".into(),
        duration: 0.0,
        tracks: vec![a, b],
    };
    let clip = Clip::build(&raw, &skeleton).unwrap();
    let infos = clip.track_infos();
    assert_eq!(clip.track_count(), 3);
    assert_eq!(
        infos
            .iter()
            .map(|t| (t.joint, t.channel, t.keys))
            .collect::<Vec<_>>(),
        vec![
            (0, Channel::Rotation, 3),
            (0, Channel::Scale, 1),
            (1, Channel::Matrix, 2)
        ]
    );
    assert_eq!((infos[0].start, infos[0].end), (0.5, 2.0));
    assert_eq!(infos[0].interpolation, Interpolation::Squad);
    assert_eq!(clip.duration(), 3.0);
}

/// `bytes` grows with the keys and counts at least the key values
/// themselves (30 keys of translation, rotation and scale: 40 bytes a
/// key) and the key times.
#[test]
fn bytes_count_what_the_clip_holds() {
    let joints = 16;
    let (skeleton, _) = Skeleton::new(
        (0..joints).map(|i| format!("j{i}")).collect(),
        &(0..joints)
            .map(|i| if i == 0 { None } else { Some(i - 1) })
            .collect::<Vec<_>>(),
        vec![Transform::IDENTITY; joints],
    )
    .unwrap();
    let clip = |keys: usize, shared: bool| {
        let tracks = (0..joints)
            .map(|j| {
                let times = |c: usize| -> Vec<f32> {
                    let o = if shared {
                        0.0
                    } else {
                        (j * 3 + c) as f32 * 1e-3
                    };
                    (0..keys).map(|k| k as f32 / keys as f32 + o).collect()
                };
                let mut t = RawJointTrack::new(j);
                t.translation = RawTrack::new(Interpolation::Linear, times(0), vec![Vec3::X; keys]);
                t.rotation = RawTrack::new(
                    Interpolation::Linear,
                    times(1),
                    (0..keys).map(|k| Quat::from_rotation_y(k as f32)).collect(),
                );
                t.scale = RawTrack::new(Interpolation::Linear, times(2), vec![Vec3::ONE; keys]);
                t
            })
            .collect();
        let raw = RawClip {
            weights: Vec::new(),
            name: "memory".into(),
            duration: 1.0,
            tracks,
        };
        Clip::build(&raw, &skeleton).unwrap()
    };
    let small = clip(10, true).bytes();
    let big = clip(30, true).bytes();
    let unshared = clip(30, false).bytes();
    assert!(big > small, "{big} > {small}");
    assert!(big >= joints * 30 * 40 + 30 * 4, "{big}");
    // Unshared: a timeline per track, 3 per joint, 30 times each.
    assert!(
        unshared >= joints * 30 * 40 + 3 * joints * 30 * 4,
        "{unshared}"
    );
}
