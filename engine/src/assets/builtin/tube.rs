//! Tubes around a centre line, the one shape every procedural model here is
//! made of, and the two ways their vertices are weighted to joints.

use std::f32::consts::{FRAC_PI_2, TAU};

use glam::{Quat, Vec2, Vec3};

use crate::mesh::{normalize_influences, Influences};

/// How finely tubes are cut.
#[derive(Clone, Copy, Debug)]
pub(super) struct TubeStyle {
    /// Vertices around each ring (at least 3).
    pub radial: usize,
    /// Rings on each rounded end cap, the pole not counted.
    pub cap_rings: usize,
    /// Metres cut from each side of a corner of the centre line and replaced
    /// by a curve, so that rings on the inside of a bend do not cross.
    pub fillet: f32,
    /// Space the body rings evenly along the surface's profile instead of
    /// the centre line, so a steep change of radius (shoulders to neck)
    /// gets rings too. Off, rings sit at exact fractions of the length.
    pub follow_profile: bool,
}

/// The vertices of one tube in a [`MeshBuilder`].
pub(super) struct TubeSpan {
    pub first: usize,
    pub end: usize,
    /// Arc length of each centre-line point.
    pub nodes: Vec<f32>,
}

/// Vertex positions and triangles of several tubes, with what weighting
/// needs to know about each vertex.
#[derive(Default)]
pub(super) struct MeshBuilder {
    pub positions: Vec<Vec3>,
    pub indices: Vec<u32>,
    /// Arc length along the vertex's tube, clamped to the tube's ends (cap
    /// vertices take the end they close).
    pub arc: Vec<f32>,
    /// A point inside the tube the vertex's outward normal points away
    /// from: its ring's centre, or for caps the centre of the end.
    pub centres: Vec<Vec3>,
}

/// One ring of a tube, or the pole that closes it.
enum Ring {
    Loop {
        centre: Vec3,
        n: Vec3,
        b: Vec3,
        radius: Vec2,
        arc: f32,
        reference: Vec3,
    },
    Pole {
        at: Vec3,
        arc: f32,
        reference: Vec3,
    },
}

/// The centre line as a dense polyline: `(arc length, position, tangent)`.
struct CentreLine {
    samples: Vec<(f32, Vec3, Vec3)>,
    nodes: Vec<f32>,
}

impl CentreLine {
    fn new(points: &[Vec3], fillet: f32) -> Self {
        const STEPS: usize = 16;
        let n = points.len();
        let dirs: Vec<Vec3> = points
            .windows(2)
            .map(|w| (w[1] - w[0]).normalize_or(Vec3::Y))
            .collect();
        let lens: Vec<f32> = points.windows(2).map(|w| w[0].distance(w[1])).collect();
        let mut samples: Vec<(f32, Vec3, Vec3)> = Vec::new();
        let mut push = |p: Vec3, t: Vec3| -> f32 {
            let s = samples.last().map_or(0.0, |&(s, q, _)| s + q.distance(p));
            samples.push((s, p, t));
            s
        };
        let mut nodes = vec![0.0; n];
        push(points[0], dirs[0]);
        for i in 1..n - 1 {
            let (a, b) = (dirs[i - 1], dirs[i]);
            let f = fillet.min(0.45 * lens[i - 1]).min(0.45 * lens[i]);
            if a.dot(b) < 0.9999 && f > 0.0 {
                // A quadratic Bezier from `f` before the corner to `f` after
                // it, with the corner as control point.
                let (p0, c, p1) = (points[i] - a * f, points[i], points[i] + b * f);
                push(p0, a);
                for k in 1..=STEPS {
                    let u = k as f32 / STEPS as f32;
                    let p = p0 * (1.0 - u) * (1.0 - u) + c * 2.0 * u * (1.0 - u) + p1 * u * u;
                    let t = ((c - p0) * (1.0 - u) + (p1 - c) * u).normalize_or(b);
                    let s = push(p, t);
                    if k == STEPS / 2 {
                        nodes[i] = s;
                    }
                }
            } else {
                nodes[i] = push(points[i], (a + b).normalize_or(b));
            }
        }
        nodes[n - 1] = push(points[n - 1], dirs[n - 2]);
        Self { samples, nodes }
    }

    fn length(&self) -> f32 {
        self.samples.last().map_or(0.0, |s| s.0)
    }

    /// Position and unit tangent at arc length `s`.
    fn at(&self, s: f32) -> (Vec3, Vec3) {
        let i = self
            .samples
            .partition_point(|&(t, _, _)| t <= s)
            .clamp(1, self.samples.len() - 1);
        let (s0, p0, t0) = self.samples[i - 1];
        let (s1, p1, t1) = self.samples[i];
        let u = if s1 > s0 {
            ((s - s0) / (s1 - s0)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (p0.lerp(p1, u), t0.lerp(t1, u).normalize_or(t1))
    }
}

/// `radii[i]` at `nodes[i]`, eased between them so the surface has no kinks.
fn radius_at(nodes: &[f32], radii: &[Vec2], s: f32) -> Vec2 {
    let i = nodes.partition_point(|&t| t <= s).clamp(1, nodes.len() - 1);
    let (s0, s1) = (nodes[i - 1], nodes[i]);
    let u = if s1 > s0 {
        ((s - s0) / (s1 - s0)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    radii[i - 1].lerp(radii[i], u * u * (3.0 - 2.0 * u))
}

impl MeshBuilder {
    /// Appends a closed tube through `points` (at least two, no two equal)
    /// with half-widths `radii[i]` at each: `x` along the ring frame's
    /// normal, which starts as `side` made perpendicular to the first
    /// segment and is carried along without twisting; `y` across it. The
    /// body has `rings` rings (at least two) from end to end; each end is
    /// closed by a rounded cap. Triangles are counter-clockwise seen from
    /// outside.
    pub fn tube(
        &mut self,
        points: &[Vec3],
        radii: &[Vec2],
        side: Vec3,
        rings: usize,
        style: &TubeStyle,
    ) -> TubeSpan {
        let line = CentreLine::new(points, style.fillet);
        let length = line.length();
        let nodes = line.nodes.clone();
        let rings = rings.max(2);
        let arcs = if style.follow_profile {
            profile_spacing(&line, &nodes, radii, rings)
        } else {
            (0..rings)
                .map(|i| length * i as f32 / (rings - 1) as f32)
                .collect()
        };

        let mut body = Vec::with_capacity(rings);
        let (_, t0) = line.at(0.0);
        let mut n = (side - t0 * t0.dot(side))
            .try_normalize()
            .unwrap_or_else(|| t0.any_orthonormal_vector());
        let mut prev_t = t0;
        for &s in &arcs {
            let (c, t) = line.at(s);
            n = Quat::from_rotation_arc(prev_t, t) * n;
            n = (n - t * t.dot(n)).normalize_or(t.any_orthonormal_vector());
            prev_t = t;
            body.push((c, t, n, radius_at(&nodes, radii, s), s));
        }

        let mut list = Vec::with_capacity(rings + 2 * style.cap_rings + 2);
        let (c, t, n, r, _) = body[0];
        self.cap(&mut list, c, -t, n, r, 0.0, style.cap_rings, false);
        for &(c, t, n, r, s) in &body {
            list.push(Ring::Loop {
                centre: c,
                n,
                b: t.cross(n),
                radius: r,
                arc: s,
                reference: c,
            });
        }
        let (c, t, n, r, _) = body[body.len() - 1];
        self.cap(&mut list, c, t, n, r, length, style.cap_rings, true);

        let first = self.positions.len();
        self.emit(&list, style.radial.max(3));
        TubeSpan {
            first,
            end: self.positions.len(),
            nodes,
        }
    }

    /// Rings of a hemispherical cap beyond `centre` in direction `out`, in
    /// the order they follow the tube's direction: pole first at the start
    /// (`at_end` false), pole last at the end.
    #[allow(clippy::too_many_arguments)]
    fn cap(
        &self,
        list: &mut Vec<Ring>,
        centre: Vec3,
        out: Vec3,
        n: Vec3,
        radius: Vec2,
        arc: f32,
        cap_rings: usize,
        at_end: bool,
    ) {
        let depth = 0.5 * (radius.x + radius.y);
        let ring = |k: usize| {
            let phi = FRAC_PI_2 * k as f32 / (cap_rings + 1) as f32;
            Ring::Loop {
                centre: centre + out * depth * phi.sin(),
                n,
                // The binormal of the tube's own direction, whichever way
                // the cap faces, so the cap's rings line up with the body's.
                b: if at_end { out.cross(n) } else { n.cross(out) },
                radius: radius * phi.cos(),
                arc,
                reference: centre,
            }
        };
        let pole = Ring::Pole {
            at: centre + out * depth,
            arc,
            reference: centre,
        };
        if at_end {
            list.extend((1..=cap_rings).map(ring));
            list.push(pole);
        } else {
            list.push(pole);
            list.extend((1..=cap_rings).rev().map(ring));
        }
    }

    /// Vertices of each ring in order, and the strips between neighbours.
    fn emit(&mut self, list: &[Ring], radial: usize) {
        let mut starts = Vec::with_capacity(list.len());
        for ring in list {
            starts.push(self.positions.len() as u32);
            match *ring {
                Ring::Loop {
                    centre,
                    n,
                    b,
                    radius,
                    arc,
                    reference,
                } => {
                    for j in 0..radial {
                        let (sin, cos) = (TAU * j as f32 / radial as f32).sin_cos();
                        self.positions
                            .push(centre + n * (radius.x * cos) + b * (radius.y * sin));
                        self.arc.push(arc);
                        self.centres.push(reference);
                    }
                }
                Ring::Pole { at, arc, reference } => {
                    self.positions.push(at);
                    self.arc.push(arc);
                    self.centres.push(reference);
                }
            }
        }
        let r = radial as u32;
        for (k, pair) in list.windows(2).enumerate() {
            let (a0, b0) = (starts[k], starts[k + 1]);
            for j in 0..r {
                let j1 = (j + 1) % r;
                match pair {
                    [Ring::Pole { .. }, Ring::Loop { .. }] => {
                        self.indices.extend([a0, b0 + j1, b0 + j]);
                    }
                    [Ring::Loop { .. }, Ring::Pole { .. }] => {
                        self.indices.extend([a0 + j, a0 + j1, b0]);
                    }
                    _ => {
                        let (a, b, c, d) = (a0 + j, a0 + j1, b0 + j1, b0 + j);
                        self.indices.extend([a, b, c, a, c, d]);
                    }
                }
            }
        }
    }
}

/// Arc lengths of `rings` body rings spaced evenly along the profile
/// `sqrt(ds^2 + dr^2)` of the mean radius.
fn profile_spacing(line: &CentreLine, nodes: &[f32], radii: &[Vec2], rings: usize) -> Vec<f32> {
    const STEPS: usize = 512;
    let length = line.length();
    let mean = |s: f32| {
        let r = radius_at(nodes, radii, s);
        0.5 * (r.x + r.y)
    };
    let mut cumulative = Vec::with_capacity(STEPS + 1);
    cumulative.push(0.0f32);
    let ds = length / STEPS as f32;
    for k in 0..STEPS {
        let dr = mean((k + 1) as f32 * ds) - mean(k as f32 * ds);
        let last = cumulative[k];
        cumulative.push(last + (ds * ds + dr * dr).sqrt());
    }
    let total = cumulative[STEPS];
    (0..rings)
        .map(|i| {
            let w = total * i as f32 / (rings - 1) as f32;
            let k = cumulative.partition_point(|&c| c <= w).clamp(1, STEPS);
            let (c0, c1) = (cumulative[k - 1], cumulative[k]);
            let u = if c1 > c0 { (w - c0) / (c1 - c0) } else { 0.0 };
            ((k - 1) as f32 + u.clamp(0.0, 1.0)) * ds
        })
        .collect()
}

/// Smooth window weights: a joint owns the arc span `[s0, s1]` of its tube
/// with weight one and fades out over `blend` metres beyond it, so a vertex
/// mid-bone follows one joint and the rings near a joint blend across it.
/// Spans are `(joint, s0, s1)`.
pub(super) fn window_weights(s: f32, spans: &[(u16, f32, f32)], blend: f32) -> Vec<(u16, f32)> {
    spans
        .iter()
        .filter_map(|&(joint, s0, s1)| {
            let d = (s0 - s).max(s - s1).max(0.0);
            let u = (d / blend.max(1e-6)).min(1.0);
            let w = 1.0 - u * u * (3.0 - 2.0 * u);
            (w > 0.0).then_some((joint, w))
        })
        .collect()
}

/// Spans of [`window_weights`] from a tube's nodes: the segment from point
/// `i` to `i + 1` belongs to `owners[i]`; neighbours of one owner merge.
pub(super) fn owner_spans(nodes: &[f32], owners: &[u16]) -> Vec<(u16, f32, f32)> {
    let mut spans: Vec<(u16, f32, f32)> = Vec::new();
    for (i, &joint) in owners.iter().enumerate().take(nodes.len() - 1) {
        match spans.last_mut() {
            Some(last) if last.0 == joint => last.2 = nodes[i + 1],
            _ => spans.push((joint, nodes[i], nodes[i + 1])),
        }
    }
    spans
}

/// Uniform cubic B-spline weights of a chain of bones, bone `k` centred on
/// the middle of segment `k`; `t` is in segment units (segment `k` spans
/// `[k, k + 1]`). At most four bones are non-zero, and only three where `t`
/// is a segment's middle (a knot), so triangles between rings that never
/// straddle a knot need at most four. Bones past the chain's ends drop out
/// and the rest are renormalised later.
pub(super) fn bspline_weights(t: f32, bones: &[u16]) -> Vec<(u16, f32)> {
    let u = t - 0.5;
    let mut m = u.floor();
    let mut f = u - m;
    // Rings meant to sit on a knot must give the fourth bone exactly zero.
    const SNAP: f32 = 1e-3;
    if f > 1.0 - SNAP {
        m += 1.0;
        f = 0.0;
    } else if f < SNAP {
        f = 0.0;
    }
    let g = 1.0 - f;
    let w = [
        g * g * g / 6.0,
        (3.0 * f * f * f - 6.0 * f * f + 4.0) / 6.0,
        (-3.0 * f * f * f + 3.0 * f * f + 3.0 * f + 1.0) / 6.0,
        f * f * f / 6.0,
    ];
    let m = m as i64;
    w.iter()
        .enumerate()
        .filter_map(|(k, &w)| {
            let bone = m - 1 + k as i64;
            (w > 0.0 && bone >= 0 && (bone as usize) < bones.len())
                .then(|| (bones[bone as usize], w))
        })
        .collect()
}

/// Per-vertex `(joint, weight)` lists as [`Influences`] with exactly
/// `slots` slots: the largest `slots` weights kept and renormalised by
/// [`normalize_influences`], then unused slots padded with weight zero.
pub(super) fn influences(lists: &[Vec<(u16, f32)>], slots: usize) -> Influences {
    let slots = slots.clamp(1, 8);
    let widest = lists.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut raw = Influences::new(
        widest,
        Vec::with_capacity(lists.len() * widest),
        Vec::with_capacity(lists.len() * widest),
    );
    for list in lists {
        for k in 0..widest {
            let (j, w) = list.get(k).copied().unwrap_or((0, 0.0));
            raw.joints.push(j);
            raw.weights.push(w);
        }
    }
    let (kept, _) = normalize_influences(&raw, slots, 0);
    pad(&kept, slots)
}

/// The same influences with `slots` slots per vertex (at least as many as
/// they have), the new ones of weight zero on the vertex's first joint.
pub(super) fn pad(inf: &Influences, slots: usize) -> Influences {
    let k = inf.per_vertex;
    if k >= slots {
        return inf.clone();
    }
    let n = inf.vertex_count();
    let mut out = Influences::new(
        slots,
        Vec::with_capacity(n * slots),
        Vec::with_capacity(n * slots),
    );
    for v in 0..n {
        let (js, ws) = inf.vertex(v);
        out.joints.extend_from_slice(js);
        out.weights.extend_from_slice(ws);
        out.joints.extend(std::iter::repeat_n(js[0], slots - k));
        out.weights.extend(std::iter::repeat_n(0.0, slots - k));
    }
    out
}

/// Rotation to add to joint `j`'s bind-local rotation so that, with its
/// ancestors in their bind pose, the joint turns by `delta` about its own
/// pivot in model axes: `bind_local * C^-1 * delta * C`, `C` the joint's
/// bind-pose model rotation. With ancestors moved, `delta` turns with them.
pub(super) fn model_axes(bind_local: Quat, bind_model: Quat, delta: Quat) -> Quat {
    (bind_local * bind_model.inverse() * delta * bind_model).normalize()
}

#[cfg(test)]
pub(super) mod checks {
    //! Assertions every built-in model's tests share.

    use glam::{Affine3A, Vec3};

    use crate::assets::Model;
    use crate::mesh::SkinnedMesh;

    /// Weights non-negative, summing to one, joints inside the skin.
    pub fn weights_are_normalised(model: &Model) {
        for mesh in &model.meshes {
            let skin = &model.skins[mesh.skin];
            let inf = &mesh.influences;
            for v in 0..mesh.vertex_count() {
                let (js, ws) = inf.vertex(v);
                let sum: f32 = ws.iter().sum();
                assert!((sum - 1.0).abs() <= 1e-5, "vertex {v}: weights sum {sum}");
                assert!(ws.iter().all(|&w| w >= 0.0), "vertex {v}: {ws:?}");
                assert!(js.iter().all(|&j| (j as usize) < skin.len()), "{js:?}");
            }
        }
    }

    /// Unit normals pointing away from the tube's axis at every vertex.
    pub fn normals_point_out(mesh: &SkinnedMesh, centres: &[Vec3]) {
        assert_eq!(centres.len(), mesh.vertex_count());
        for (v, ((p, n), c)) in mesh
            .positions
            .iter()
            .zip(&mesh.normals)
            .zip(centres)
            .enumerate()
        {
            assert!(
                (n.length() - 1.0).abs() < 1e-4,
                "vertex {v}: |n| = {}",
                n.length()
            );
            let out = (*p - *c).normalize();
            assert!(n.dot(out) > 0.2, "vertex {v}: normal {n} against {out}");
        }
    }

    /// The bind pose's skinning matrices are identities and skin every
    /// vertex onto itself.
    pub fn bind_pose_is_rest(model: &Model) {
        let bind = model.skeleton.bind_local();
        for palette in model.skin_matrices(bind).unwrap() {
            for m in palette {
                assert!(m.abs_diff_eq(Affine3A::IDENTITY, 1e-4), "{m:?}");
            }
        }
        let skinned = model.skin_cpu(bind).unwrap();
        for (mesh, out) in model.meshes.iter().zip(&skinned) {
            for (a, b) in out.positions.iter().zip(&mesh.positions) {
                assert!(a.abs_diff_eq(*b, 1e-4), "{a} != {b}");
            }
            for (a, b) in out.normals.iter().zip(&mesh.normals) {
                assert!(a.abs_diff_eq(*b, 1e-4), "{a} != {b}");
            }
        }
    }

    /// `parents[i] < i` for every joint that has a parent.
    pub fn parents_come_first(model: &Model) {
        for i in 0..model.skeleton.len() {
            if let Some(p) = model.skeleton.parent(i) {
                assert!(p < i, "joint {i} has parent {p}");
            }
        }
    }
}
