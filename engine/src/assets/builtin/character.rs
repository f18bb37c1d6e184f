use std::f32::consts::{FRAC_PI_2, PI, TAU};

use glam::{Quat, Vec2, Vec3, Vec4};

use super::tube::{self, MeshBuilder, TubeStyle};
use crate::anim::{
    Clip, Interpolation, RawClip, RawJointTrack, RawTrack, Skeleton, Skin, Transform,
};
use crate::assets::{Material, Model};
use crate::mesh::{compute_normals, SkinnedMesh};

/// The engine's demo character: a stylised humanoid with a tail, 1.77 m
/// tall, facing +Z with its left side on +X, made of smooth skinned tubes
/// (torso and head, arms, thumbs and two fingers, legs, feet, tail), with a
/// SQUAD-keyed `"walk"` and a linear `"wave"` to crossfade between.
///
/// Joints (38, parents first): `pelvis`, `spine1`..`spine3`, `neck`,
/// `head`; per side (`l_` on +X, `r_`) `clavicle`, `upperarm`, `forearm`,
/// `hand`, `thumb1`, `thumb2`, `index1`, `index2`, `middle1`, `middle2`;
/// per side `thigh`, `shin`, `foot`, `toe`; `tail1`..`tail4`. Each joint's
/// local +Y points along its bone.
pub struct Character;

/// How finely [`Character::model_with`] cuts the character's surface and
/// how widely it blends joints.
#[derive(Clone, Debug, PartialEq)]
pub struct CharacterDesc {
    /// Vertices around each tube.
    pub radial: usize,
    /// Body rings per metre along each tube (short tubes get at least four
    /// per bone).
    pub rings_per_metre: f32,
    /// Rings on each rounded end cap.
    pub cap_rings: usize,
    /// Influences kept per vertex (1..=8); the mesh has exactly this many
    /// slots, unused ones of weight zero.
    pub max_influences: usize,
    /// Metres over which a bone's weight fades out past its ends. Wider
    /// zones overlap more bones: 0.3 gives torso and tail vertices five or
    /// six non-zero weights.
    pub blend: f32,
}

impl Default for CharacterDesc {
    /// About 6,300 vertices, four influences.
    fn default() -> Self {
        Self {
            radial: 16,
            rings_per_metre: 40.0,
            cap_rings: 3,
            max_influences: 4,
            blend: 0.05,
        }
    }
}

impl CharacterDesc {
    /// About 16,000 vertices, four influences.
    pub fn detailed() -> Self {
        Self {
            radial: 24,
            rings_per_metre: 80.0,
            cap_rings: 5,
            ..Self::default()
        }
    }

    /// The default surface with eight influence slots and blend zones wide
    /// enough that many vertices use five or six of them.
    pub fn eight_influences() -> Self {
        Self {
            max_influences: 8,
            blend: 0.3,
            ..Self::default()
        }
    }
}

/// A joint of the rig in the bind pose, in model space.
struct JointDef {
    name: String,
    parent: Option<usize>,
    position: Vec3,
    /// Where the bone points: the child or the tip.
    aim: Vec3,
}

/// A tube: centre-line points, half-widths, and the joint owning the
/// segment from each point to the next.
struct TubeDef {
    points: Vec<Vec3>,
    radii: Vec<Vec2>,
    owners: Vec<u16>,
    /// Direction of the first half-width.
    side: Vec3,
}

impl TubeDef {
    fn new(side: Vec3) -> Self {
        Self {
            points: Vec::new(),
            radii: Vec::new(),
            owners: Vec::new(),
            side,
        }
    }

    fn point(mut self, at: Vec3, radius: (f32, f32), owner: usize) -> Self {
        self.points.push(at);
        self.radii.push(Vec2::new(radius.0, radius.1));
        self.owners.push(owner as u16);
        self
    }
}

/// The rig and the tubes around it.
struct Rig {
    joints: Vec<JointDef>,
    tubes: Vec<TubeDef>,
}

impl Rig {
    fn add(&mut self, name: String, parent: Option<usize>, position: Vec3, aim: Vec3) -> usize {
        self.joints.push(JointDef {
            name,
            parent,
            position,
            aim,
        });
        self.joints.len() - 1
    }

    fn build() -> Self {
        let mut rig = Rig {
            joints: Vec::new(),
            tubes: Vec::new(),
        };
        let v = Vec3::new;
        let spine = [
            v(0.0, 0.95, 0.0),
            v(0.0, 1.05, -0.01),
            v(0.0, 1.18, -0.015),
            v(0.0, 1.31, -0.01),
            v(0.0, 1.48, 0.0),
            v(0.0, 1.57, 0.01),
        ];
        let head_top = v(0.0, 1.69, 0.01);
        let mut parent = None;
        for (i, name) in ["pelvis", "spine1", "spine2", "spine3", "neck", "head"]
            .into_iter()
            .enumerate()
        {
            let aim = spine.get(i + 1).copied().unwrap_or(head_top);
            parent = Some(rig.add(name.into(), parent, spine[i], aim));
        }
        let [pelvis, spine1, spine2, spine3, neck, head] = [0, 1, 2, 3, 4, 5];
        rig.tubes.push(
            TubeDef::new(Vec3::X)
                .point(v(0.0, 0.84, 0.0), (0.12, 0.09), pelvis)
                .point(v(0.0, 0.97, 0.0), (0.135, 0.095), pelvis)
                .point(spine[1], (0.125, 0.09), spine1)
                .point(spine[2], (0.13, 0.09), spine2)
                .point(spine[3], (0.15, 0.10), spine3)
                .point(v(0.0, 1.42, -0.005), (0.15, 0.095), spine3)
                .point(spine[4], (0.05, 0.05), neck)
                .point(spine[5], (0.065, 0.07), head)
                .point(v(0.0, 1.63, 0.015), (0.09, 0.10), head)
                .point(head_top, (0.075, 0.085), head),
        );

        for (prefix, x) in [("l_", 1.0f32), ("r_", -1.0)] {
            let name = |n: &str| format!("{prefix}{n}");
            // A-pose: arms 55 degrees below the horizontal.
            let down = 55f32.to_radians();
            let arm = v(x * down.cos(), -down.sin(), 0.0);
            let clavicle_at = v(x * 0.03, 1.42, 0.02);
            let shoulder = v(x * 0.18, 1.42, -0.01);
            let elbow = shoulder + arm * 0.28;
            let wrist = elbow + arm * 0.25;
            let knuckles = wrist + arm * 0.085;
            let clavicle = rig.add(name("clavicle"), Some(spine3), clavicle_at, shoulder);
            let upperarm = rig.add(name("upperarm"), Some(clavicle), shoulder, elbow);
            let forearm = rig.add(name("forearm"), Some(upperarm), elbow, wrist);
            let hand = rig.add(name("hand"), Some(forearm), wrist, knuckles);
            // The palm's width runs front to back (Z), the thumb in front.
            rig.tubes.push(
                TubeDef::new(Vec3::Z)
                    .point(
                        clavicle_at + v(x * 0.01, -0.01, 0.0),
                        (0.045, 0.045),
                        clavicle,
                    )
                    .point(shoulder, (0.055, 0.05), upperarm)
                    .point(elbow, (0.04, 0.037), forearm)
                    .point(wrist, (0.035, 0.025), hand)
                    .point(knuckles, (0.045, 0.018), hand),
            );
            let thumb_dir = (arm + Vec3::Z * 0.9).normalize();
            let fingers = [
                (
                    "thumb",
                    wrist + arm * 0.025 + Vec3::Z * 0.035,
                    thumb_dir,
                    0.04,
                    0.035,
                ),
                ("index", knuckles + Vec3::Z * 0.022, arm, 0.045, 0.04),
                ("middle", knuckles - Vec3::Z * 0.012, arm, 0.05, 0.04),
            ];
            for (finger, base, dir, first, second) in fingers {
                let mid = base + dir * first;
                let tip = mid + dir * second;
                let j1 = rig.add(name(&format!("{finger}1")), Some(hand), base, mid);
                let j2 = rig.add(name(&format!("{finger}2")), Some(j1), mid, tip);
                rig.tubes.push(
                    TubeDef::new(Vec3::Z)
                        .point(base - dir * 0.025, (0.013, 0.011), hand)
                        .point(base, (0.013, 0.011), j1)
                        .point(mid, (0.011, 0.01), j2)
                        .point(tip, (0.01, 0.009), j2),
                );
            }
        }

        for (prefix, x) in [("l_", 1.0f32), ("r_", -1.0)] {
            let name = |n: &str| format!("{prefix}{n}");
            let hip = v(x * 0.095, 0.91, 0.0);
            let knee = v(x * 0.10, 0.50, 0.015);
            let ankle = v(x * 0.10, 0.09, -0.01);
            let ball = v(x * 0.10, 0.025, 0.12);
            let toe_tip = v(x * 0.10, 0.025, 0.19);
            let thigh = rig.add(name("thigh"), Some(pelvis), hip, knee);
            let shin = rig.add(name("shin"), Some(thigh), knee, ankle);
            let foot = rig.add(name("foot"), Some(shin), ankle, ball);
            let toe = rig.add(name("toe"), Some(foot), ball, toe_tip);
            rig.tubes.push(
                TubeDef::new(Vec3::X)
                    .point(hip + v(0.0, 0.07, 0.0), (0.08, 0.08), pelvis)
                    .point(hip, (0.08, 0.08), thigh)
                    .point(knee, (0.05, 0.05), shin)
                    .point(ankle, (0.037, 0.037), foot)
                    .point(ankle - v(0.0, 0.03, 0.0), (0.035, 0.035), foot),
            );
            // The foot is a tube of its own from heel to toe, its top
            // hiding the leg's ankle cap.
            rig.tubes.push(
                TubeDef::new(Vec3::X)
                    .point(v(x * 0.10, 0.045, -0.05), (0.04, 0.035), foot)
                    .point(ball, (0.042, 0.022), toe)
                    .point(toe_tip, (0.035, 0.018), toe),
            );
        }

        let tail = [
            v(0.0, 0.93, -0.11),
            v(0.0, 0.86, -0.25),
            v(0.0, 0.82, -0.40),
            v(0.0, 0.83, -0.54),
        ];
        let tail_tip = v(0.0, 0.88, -0.66);
        let mut tube = TubeDef::new(Vec3::X).point(v(0.0, 0.95, -0.04), (0.045, 0.045), pelvis);
        let mut parent = pelvis;
        for (i, &at) in tail.iter().enumerate() {
            let aim = tail.get(i + 1).copied().unwrap_or(tail_tip);
            parent = rig.add(format!("tail{}", i + 1), Some(parent), at, aim);
            let r = 0.04 - 0.007 * i as f32;
            tube = tube.point(at, (r, r), parent);
        }
        rig.tubes.push(tube.point(tail_tip, (0.008, 0.008), parent));
        rig
    }

    /// Bind-pose model rotations: each joint's +Y along its bone.
    fn bind_rotations(&self) -> Vec<Quat> {
        self.joints
            .iter()
            .map(|j| Quat::from_rotation_arc(Vec3::Y, (j.aim - j.position).normalize_or(Vec3::Y)))
            .collect()
    }

    fn skeleton(&self) -> Skeleton {
        let rotations = self.bind_rotations();
        let bind_local = self
            .joints
            .iter()
            .zip(&rotations)
            .map(|(j, &r)| match j.parent {
                Some(p) => {
                    let inv = rotations[p].inverse();
                    Transform::from_translation_rotation(
                        inv * (j.position - self.joints[p].position),
                        (inv * r).normalize(),
                    )
                }
                None => Transform::from_translation_rotation(j.position, r),
            })
            .collect();
        let names = self.joints.iter().map(|j| j.name.clone()).collect();
        let parents: Vec<Option<usize>> = self.joints.iter().map(|j| j.parent).collect();
        match Skeleton::new(names, &parents, bind_local) {
            Ok((s, _)) => s,
            Err(e) => unreachable!("the built-in character's rig is a valid tree: {e}"),
        }
    }
}

impl Character {
    /// Number of joints in the rig.
    pub const JOINTS: usize = 38;

    /// The character at its default detail ([`CharacterDesc::default`]).
    pub fn model() -> Model {
        Self::model_with(&CharacterDesc::default())
    }

    /// The character cut and weighted as `desc` says; the rig and clips are
    /// the same at every detail.
    pub fn model_with(desc: &CharacterDesc) -> Model {
        Self::build(desc).0
    }

    /// The model, and per vertex the point inside its tube that its normal
    /// points away from (for tests).
    fn build(desc: &CharacterDesc) -> (Model, Vec<Vec3>) {
        let rig = Rig::build();
        let skeleton = rig.skeleton();
        let style = TubeStyle {
            radial: desc.radial.max(3),
            cap_rings: desc.cap_rings,
            fillet: 0.06,
            follow_profile: true,
        };
        let mut mesh = MeshBuilder::default();
        let mut lists = Vec::new();
        for t in &rig.tubes {
            let length: f32 = t.points.windows(2).map(|w| w[0].distance(w[1])).sum();
            let bones = t.owners.len() - 1;
            let rings = ((length * desc.rings_per_metre).ceil() as usize).max(4 * bones) + 1;
            let span = mesh.tube(&t.points, &t.radii, t.side, rings, &style);
            let spans = tube::owner_spans(&span.nodes, &t.owners);
            lists.extend(
                mesh.arc[span.first..span.end]
                    .iter()
                    .map(|&s| tube::window_weights(s, &spans, desc.blend)),
            );
        }
        let normals = compute_normals(&mesh.positions, &mesh.indices);
        let mesh_out = SkinnedMesh {
            name: "character".into(),
            positions: mesh.positions,
            normals,
            uvs: Vec::new(),
            tangents: Vec::new(),
            colors: Vec::new(),
            influences: tube::influences(&lists, desc.max_influences),
            indices: mesh.indices,
            skin: 0,
            material: Some(0),
            morph: Default::default(),
        };
        let clips = vec![walk(&rig, &skeleton), wave(&rig, &skeleton)];
        let model = Model {
            name: "character".into(),
            source: None,
            skins: vec![Skin::whole_skeleton(&skeleton)],
            skeleton,
            meshes: vec![mesh_out],
            clips,
            materials: vec![Material {
                name: "clay".into(),
                // Linear RGB of a warm terracotta.
                base_color: Vec4::new(0.72, 0.33, 0.17, 1.0),
                texture: None,
                ..Material::default()
            }],
            warnings: Vec::new(),
            morph_sets: Vec::new(),
            file_axes: glam::Mat3::IDENTITY,
        };
        (model, mesh.centres)
    }
}

/// Builds a clip from a pose function: `pose(t)` gives, per animated joint
/// (the pelvis first), its rotation in model axes about its pivot (see
/// [`tube::model_axes`]), and the pelvis translation. `keys` intervals; the
/// closing key repeats the first so the loop closes.
fn keyed_clip(
    name: &str,
    rig: &Rig,
    skeleton: &Skeleton,
    duration: f32,
    keys: usize,
    rotations: Interpolation,
    pose: impl Fn(f32) -> (Vec<(usize, Quat)>, Vec3),
) -> Clip {
    let times: Vec<f32> = (0..=keys)
        .map(|k| {
            if k == keys {
                duration
            } else {
                duration * k as f32 / keys as f32
            }
        })
        .collect();
    let bind_model = rig.bind_rotations();
    let mut tracks: Vec<RawJointTrack> = Vec::new();
    for (k, &t) in times.iter().enumerate() {
        // The closing key is the first key again, exactly.
        let (deltas, pelvis) = pose(if k == keys { 0.0 } else { t });
        if tracks.is_empty() {
            tracks = deltas
                .iter()
                .map(|&(j, _)| {
                    let mut track = RawJointTrack::new(j);
                    track.rotation = RawTrack::new(rotations, times.clone(), Vec::new());
                    track
                })
                .collect();
            tracks[0].translation = RawTrack::new(Interpolation::Linear, times.clone(), Vec::new());
        }
        for (track, &(j, delta)) in tracks.iter_mut().zip(&deltas) {
            let bind = skeleton.bind_local()[j].rotation;
            track
                .rotation
                .values
                .push(tube::model_axes(bind, bind_model[j], delta));
        }
        tracks[0].translation.values.push(pelvis);
    }
    let raw = RawClip {
        weights: Vec::new(),
        name: name.into(),
        duration,
        tracks,
    };
    match Clip::build(&raw, skeleton) {
        Ok(clip) => clip,
        Err(e) => unreachable!("the built-in character's {name:?} clip is valid: {e}"),
    }
}

fn joint(rig: &Rig, name: &str) -> usize {
    rig.joints
        .iter()
        .position(|j| j.name == name)
        .unwrap_or_else(|| unreachable!("the rig has a joint {name:?}"))
}

fn rx(deg: f32) -> Quat {
    Quat::from_rotation_x(deg.to_radians())
}
fn ry(deg: f32) -> Quat {
    Quat::from_rotation_y(deg.to_radians())
}
fn rz(deg: f32) -> Quat {
    Quat::from_rotation_z(deg.to_radians())
}

/// Walk in place, 2.4 s: two 1.2 s strides, the head looking left and right
/// once. Rotations are SQUAD-keyed at 20 Hz; the pelvis bobs twice a stride (linear keys). Forward swing of
/// a limb is a negative turn about X, its bend a positive one.
///
/// The loop starts with the left leg furthest forward, where every
/// rotation is at rest: SQUAD's looping neighbours (seed 003's) make the
/// first key its own predecessor through the closing key, which would
/// otherwise slow the motion for a key interval either side of the seam.
fn walk(rig: &Rig, skeleton: &Skeleton) -> Clip {
    const DURATION: f32 = 2.4;
    const STRIDE: f32 = 1.2;
    let j = |n: &str| joint(rig, n);
    let pelvis = j("pelvis");
    let spine = [j("spine1"), j("spine2"), j("spine3")];
    let (neck, head) = (j("neck"), j("head"));
    let sides = [("l_", 1.0f32, 0.0f32), ("r_", -1.0, PI)];
    let tail: Vec<usize> = (1..=4).map(|i| j(&format!("tail{i}"))).collect();
    let pose = move |t: f32| {
        let phase = TAU * t / STRIDE + FRAC_PI_2;
        let look = (TAU * t / DURATION).cos();
        let mut out = vec![(pelvis, ry(-6.0 * phase.sin()))];
        for &s in &spine {
            out.push((s, ry(3.0 * phase.sin()) * rx(2.0)));
        }
        out.push((neck, ry(-1.5 * phase.sin()) * rx(-2.0)));
        out.push((head, ry(14.0 * look) * rx(-2.0)));
        for &(p, side, offset) in &sides {
            let j = |n: &str| joint(rig, &format!("{p}{n}"));
            let ph = phase + offset;
            // Degrees the leg is ahead of straight down.
            let swing = 25.0 * ph.sin();
            let knee = 5.0 + 55.0 * ph.cos().max(0.0).powi(2);
            let arm = -0.8 * swing;
            out.push((j("clavicle"), rz(side * 2.0 * (2.0 * ph).cos())));
            out.push((j("upperarm"), rx(-arm) * rz(-side * 15.0)));
            out.push((j("forearm"), rx(-(20.0 + 0.5 * arm.max(0.0)))));
            out.push((j("hand"), rx(5.0 * ph.sin())));
            out.push((j("thigh"), rx(-swing)));
            out.push((j("shin"), rx(knee)));
            out.push((j("foot"), rx(0.8 * (swing - knee) + 10.0)));
            out.push((j("toe"), rx(-25.0 * (-ph.sin()).max(0.0).powi(2))));
        }
        for (k, &tj) in tail.iter().enumerate() {
            out.push((tj, ry((4.0 + 3.0 * k as f32) * phase.sin()) * rx(3.0)));
        }
        let bob = Vec3::new(0.012 * phase.cos(), 0.95 + 0.02 * (2.0 * phase).cos(), 0.0);
        (out, bob)
    };
    keyed_clip(
        "walk",
        rig,
        skeleton,
        DURATION,
        48,
        Interpolation::Squad,
        pose,
    )
}

/// Standing idle, 3 s, the right arm raised and waving three times; one
/// breath per loop, the tail swaying. Linear keys at 10 Hz.
fn wave(rig: &Rig, skeleton: &Skeleton) -> Clip {
    const DURATION: f32 = 3.0;
    let j = |n: &str| joint(rig, n);
    let pelvis = j("pelvis");
    let spine = [j("spine1"), j("spine2"), j("spine3")];
    let (neck, head) = (j("neck"), j("head"));
    let (r_upper, r_fore, r_hand) = (j("r_upperarm"), j("r_forearm"), j("r_hand"));
    let (l_upper, l_fore) = (j("l_upperarm"), j("l_forearm"));
    let r_fingers = [j("r_index1"), j("r_middle1"), j("r_thumb1")];
    let legs = [
        (j("l_thigh"), j("l_shin"), j("l_foot")),
        (j("r_thigh"), j("r_shin"), j("r_foot")),
    ];
    let tail: Vec<usize> = (1..=4).map(|i| j(&format!("tail{i}"))).collect();
    let pose = move |t: f32| {
        let breath = (TAU * t / DURATION).sin();
        let wave = (TAU * t).sin();
        let mut out = vec![(pelvis, ry(-3.0) * rz(1.5 * breath))];
        for &s in &spine {
            out.push((s, rx(-1.5 * breath) * rz(-0.5 * breath)));
        }
        out.push((neck, rz(3.0)));
        out.push((head, ry(-15.0) * rz(6.0) * rx(3.0 * breath)));
        // The right arm (on -X) goes up and out: a negative turn about Z.
        out.push((r_upper, rx(-10.0) * rz(-125.0 - 3.0 * breath)));
        out.push((r_fore, rz(15.0 + 30.0 * wave)));
        out.push((r_hand, rz(15.0 * (TAU * t - 0.8).sin())));
        for &f in &r_fingers {
            out.push((f, rx(-10.0)));
        }
        out.push((l_upper, rz(-12.0 - 2.0 * breath) * rx(3.0 * breath)));
        out.push((l_fore, rx(-15.0)));
        for &(thigh, shin, foot) in &legs {
            out.push((thigh, rx(-4.0)));
            out.push((shin, rx(8.0)));
            out.push((foot, rx(-4.0)));
        }
        for (k, &tj) in tail.iter().enumerate() {
            out.push((
                tj,
                ry(15.0 * (TAU * t / 1.5 - 0.6 * k as f32).sin()) * rx(5.0),
            ));
        }
        let bob = Vec3::new(0.01 * breath, 0.945 + 0.004 * breath, 0.0);
        (out, bob)
    };
    keyed_clip(
        "wave",
        rig,
        skeleton,
        DURATION,
        30,
        Interpolation::Linear,
        pose,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Channel, PlaybackMode};
    use crate::assets::builtin::tube::checks;

    #[test]
    fn rig_has_the_named_limbs_in_parent_order() {
        let model = Character::model();
        let s = &model.skeleton;
        assert_eq!(s.len(), Character::JOINTS);
        assert!(s.len() >= 30);
        checks::parents_come_first(&model);
        let index = s.name_index().unwrap();
        let parent_of = |c: &str| s.parent(index[c]).map(|p| s.names()[p].as_str());
        for side in ["l_", "r_"] {
            let chain = [
                "spine3", "clavicle", "upperarm", "forearm", "hand", "index1", "index2",
            ];
            for w in chain.windows(2) {
                let name = |n: &str| {
                    if n == "spine3" {
                        n.into()
                    } else {
                        format!("{side}{n}")
                    }
                };
                assert_eq!(parent_of(&name(w[1])), Some(name(w[0]).as_str()));
            }
            for (c, p) in [
                ("thumb2", "thumb1"),
                ("thumb1", "hand"),
                ("middle2", "middle1"),
            ] {
                assert_eq!(
                    parent_of(&format!("{side}{c}")),
                    Some(format!("{side}{p}").as_str())
                );
            }
            for (c, p) in [
                ("thigh", "pelvis"),
                ("shin", "thigh"),
                ("foot", "shin"),
                ("toe", "foot"),
            ] {
                let p = if p == "pelvis" {
                    p.into()
                } else {
                    format!("{side}{p}")
                };
                assert_eq!(parent_of(&format!("{side}{c}")), Some(p.as_str()));
            }
        }
        for (c, p) in [
            ("spine1", "pelvis"),
            ("neck", "spine3"),
            ("head", "neck"),
            ("tail1", "pelvis"),
        ] {
            assert_eq!(parent_of(c), Some(p));
        }
        assert_eq!(s.parent(0), None);
        // Left is +X, the head on top, the toes in front.
        let bind = s.bind_model();
        assert!(bind[index["l_hand"]].translation.x > 0.3);
        assert!(bind[index["r_hand"]].translation.x < -0.3);
        assert!(bind[index["head"]].translation.y > 1.5);
        assert!(bind[index["l_toe"]].translation.z > 0.1);
    }

    #[test]
    fn mesh_is_a_valid_closed_surface() {
        let (model, centres) = Character::build(&CharacterDesc::default());
        assert_eq!(model.meshes.len(), 1);
        let mesh = &model.meshes[0];
        mesh.validate().unwrap();
        let n = mesh.vertex_count();
        assert!((2_000..10_000).contains(&n), "{n} vertices");
        assert_eq!(mesh.influences.per_vertex, 4);
        checks::weights_are_normalised(&model);
        checks::normals_point_out(mesh, &centres);
        // Closed: every edge is shared by exactly two triangles.
        let mut edges = std::collections::HashMap::new();
        for tri in mesh.indices.chunks_exact(3) {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&c| c == 2));
        // Blended across joints: some vertices have several live weights,
        // every joint drives some vertex.
        let live = |v: usize| {
            mesh.influences
                .vertex(v)
                .1
                .iter()
                .filter(|&&w| w > 0.0)
                .count()
        };
        assert!((0..n).any(|v| live(v) >= 3));
        let mut used = vec![false; model.skeleton.len()];
        for (j, w) in mesh.influences.joints.iter().zip(&mesh.influences.weights) {
            if *w > 0.0 {
                used[*j as usize] = true;
            }
        }
        assert!(used.iter().all(|&u| u), "{used:?}");
        assert_eq!(mesh.material, Some(0));
        assert!(model.materials[0].base_color.truncate().min_element() > 0.1);
    }

    #[test]
    fn bind_pose_skins_to_the_stored_mesh() {
        checks::bind_pose_is_rest(&Character::model());
    }

    #[test]
    fn detail_and_eight_influences() {
        let model = Character::model_with(&CharacterDesc::detailed());
        let n = model.vertex_count();
        assert!(n > 10_000, "{n} vertices");
        assert!(n > Character::model().vertex_count());
        checks::weights_are_normalised(&model);

        let (model, centres) = Character::build(&CharacterDesc::eight_influences());
        let mesh = &model.meshes[0];
        mesh.validate().unwrap();
        assert_eq!(mesh.influences.per_vertex, 8);
        checks::weights_are_normalised(&model);
        checks::normals_point_out(mesh, &centres);
        checks::bind_pose_is_rest(&model);
        let wide = (0..mesh.vertex_count())
            .filter(|&v| {
                mesh.influences
                    .vertex(v)
                    .1
                    .iter()
                    .filter(|&&w| w > 0.0)
                    .count()
                    >= 5
            })
            .count();
        assert!(wide > 100, "{wide} vertices with five or more weights");
    }

    #[test]
    fn clips_are_named_looping_and_finite() {
        let model = Character::model();
        let names: Vec<&str> = model.clips.iter().map(|c| c.name()).collect();
        assert_eq!(names, ["walk", "wave"]);
        let walk = model.clip("walk").unwrap();
        let wave = model.clip("wave").unwrap();
        assert_eq!(walk.duration(), 2.4);
        assert_eq!(wave.duration(), 3.0);
        let infos = walk.track_infos();
        let rotations: Vec<_> = infos
            .iter()
            .filter(|i| i.channel == Channel::Rotation)
            .collect();
        assert!(rotations.len() >= 20, "{} rotation tracks", rotations.len());
        assert!(rotations
            .iter()
            .all(|i| i.interpolation == Interpolation::Squad));
        assert!(infos
            .iter()
            .any(|i| i.channel == Channel::Translation && i.joint == 0));
        assert!(wave
            .track_infos()
            .iter()
            .all(|i| i.interpolation == Interpolation::Linear));
        for clip in [walk, wave] {
            for t in [0.0, 0.05, 0.37, 1.0, 1.9, 2.4, 2.99] {
                let pose = model.pose(Some(clip), t, PlaybackMode::Loop).unwrap();
                assert!(pose.iter().all(|p| p.is_finite()));
                for out in model.skin_cpu(&pose).unwrap() {
                    assert!(out.positions.iter().all(|p| p.is_finite()));
                }
            }
            // The loop closes: the end samples the start.
            let a = model.pose(Some(clip), 0.0, PlaybackMode::Clamp).unwrap();
            let b = model
                .pose(Some(clip), clip.duration(), PlaybackMode::Clamp)
                .unwrap();
            for (a, b) in a.iter().zip(&b) {
                assert!(
                    a.rotation.abs_diff_eq(b.rotation, 1e-5)
                        || a.rotation.abs_diff_eq(-b.rotation, 1e-5)
                );
                assert!(a.translation.abs_diff_eq(b.translation, 1e-5));
            }
        }
    }

    #[test]
    fn walk_swings_arms_against_legs() {
        let model = Character::model();
        let walk = model.clip("walk").unwrap();
        let s = &model.skeleton;
        let index = s.name_index().unwrap();
        let pose = model.pose(Some(walk), 0.15, PlaybackMode::Loop).unwrap();
        let turned = pose
            .iter()
            .zip(s.bind_local())
            .filter(|(p, b)| p.rotation.angle_between(b.rotation) > 5f32.to_radians())
            .count();
        assert!(turned >= 10, "{turned} joints turned");
        // Across the loop's seam every joint turns as it does at the same
        // point of the next stride, mid-clip, where SQUAD has its true
        // neighbours.
        let at = |t: f32| model.pose(Some(walk), t, PlaybackMode::Loop).unwrap();
        let turn =
            |a: &[Transform], b: &[Transform], j: usize| a[j].rotation.angle_between(b[j].rotation);
        let (before, seam, after) = (at(walk.duration() - 0.03), at(0.0), at(0.03));
        let (mid_before, mid, mid_after) = (at(1.17), at(1.2), at(1.23));
        for j in 0..s.len() {
            for (a, b) in [
                (turn(&seam, &before, j), turn(&mid, &mid_before, j)),
                (turn(&seam, &after, j), turn(&mid, &mid_after, j)),
            ] {
                assert!(
                    (a - b).abs() < 0.005,
                    "{}: {a} rad at the seam, {b} mid-clip",
                    s.names()[j]
                );
            }
        }
        // At the start the left leg is ahead and the left arm behind.
        let pose = model.pose(Some(walk), 0.0, PlaybackMode::Loop).unwrap();
        let m = model.model_matrices(&pose).unwrap();
        let z = |n: &str| m[index[n]].translation.z;
        assert!(z("l_toe") > z("r_toe") + 0.2);
        assert!(z("l_hand") < z("r_hand") - 0.1);
        // Half a stride later, the other way round.
        let pose = model.pose(Some(walk), 0.6, PlaybackMode::Loop).unwrap();
        let m = model.model_matrices(&pose).unwrap();
        let z = |n: &str| m[index[n]].translation.z;
        assert!(z("l_toe") < z("r_toe") - 0.2);
        assert!(z("l_hand") > z("r_hand") + 0.1);
        // The pelvis bobs.
        let y = |t| {
            model.pose(Some(walk), t, PlaybackMode::Loop).unwrap()[0]
                .translation
                .y
        };
        assert!((y(0.0) - y(0.3)).abs() > 0.03);
        // The mesh follows: feet and hands move by centimetres.
        let bind = &model.meshes[0].positions;
        let moved = &model.skin_cpu(&pose).unwrap()[0].positions;
        let far = moved
            .iter()
            .zip(bind)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f32::max);
        assert!(far > 0.1, "{far}");
    }

    #[test]
    fn wave_raises_the_right_hand() {
        let model = Character::model();
        let index = model.skeleton.name_index().unwrap();
        let wave = model.clip("wave").unwrap();
        for t in [0.0, 0.4, 1.7] {
            let pose = model.pose(Some(wave), t, PlaybackMode::Loop).unwrap();
            let m = model.model_matrices(&pose).unwrap();
            let head = m[index["head"]].translation.y;
            assert!(m[index["r_hand"]].translation.y > head, "t = {t}");
            assert!(m[index["l_hand"]].translation.y < 1.1);
        }
    }
}
