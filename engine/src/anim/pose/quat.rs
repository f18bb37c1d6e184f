//! Quaternion helpers for sampling and blending: an accurate slerp without
//! library trig calls, nlerp, log/exp, and Direct3D's SQUAD.
//!
//! D3DX conventions, as reimplemented by Wine (`dlls/d3dx9_36/math.c`) and
//! checked there against native d3dx9 in Wine's conformance tests
//! (`dlls/d3dx9_36/tests/math.c`):
//! - `D3DXQuaternionMultiply(a, b)` is the Hamilton product `b * a`;
//! - `D3DXQuaternionSlerp` takes the shortest path (negates the second
//!   quaternion when the dot product is negative);
//! - `D3DXQuaternionSquad(q1, a, b, c, t) =
//!   Slerp(Slerp(q1, c, t), Slerp(a, b, t), 2t(1-t))`;
//! - `D3DXQuaternionSquadSetup` flips `q0` into `q1`'s hemisphere, `q2` into
//!   `q1`'s, and `q3` into the hemisphere of the *flipped* `q2`. Microsoft's
//!   page says `q3` is compared with the original `Q2`; native d3dx9 does
//!   not (Wine's test inputs `r, s, t, u` reproduce native's `B` only with
//!   the flipped `q2`, see `squad_setup_matches_native_d3dx` below).

use glam::{Quat, Vec3, Vec4};

pub(crate) use crate::anim::simd::lanes::{ACOS_COEFFS, MIN_SLERP_ANGLE};

/// `sin(x)` for `x` in `[0, pi/2]` (Taylor to x^11, |error| < 6e-8), all
/// four lanes at once so the two or three sines a slerp needs cost one
/// polynomial.
#[inline(always)]
pub(crate) fn sin4(x: Vec4) -> Vec4 {
    let x2 = x * x;
    let p = Vec4::splat(-1.0 / 39_916_800.0);
    let p = p * x2 + Vec4::splat(1.0 / 362_880.0);
    let p = p * x2 + Vec4::splat(-1.0 / 5040.0);
    let p = p * x2 + Vec4::splat(1.0 / 120.0);
    let p = p * x2 + Vec4::splat(-1.0 / 6.0);
    let p = p * x2 + Vec4::ONE;
    x * p
}

/// `acos(x)` for `x` in `[0, 1]` from [`ACOS_COEFFS`].
#[inline(always)]
pub(crate) fn acos01(x: f32) -> f32 {
    let mut p = ACOS_COEFFS[0];
    for c in &ACOS_COEFFS[1..] {
        p = p * x + c;
    }
    (1.0 - x).max(0.0).sqrt() * p
}

/// The angle between `a` and `b` after the shortest-path flip, and the
/// reciprocal of its sine: what a slerp between fixed endpoints needs.
#[inline]
pub(crate) fn slerp_angle(a: Quat, b: Quat) -> (f32, f32) {
    let d = a.dot(b).abs().min(1.0);
    let theta = acos01(d).max(MIN_SLERP_ANGLE);
    (theta, 1.0 / sin4(Vec4::splat(theta)).x)
}

/// Shortest-path spherical linear interpolation. Its weights come from a
/// sine and an arccosine polynomial, so it stays accurate to about 1e-7 and
/// vectorises; unlike D3DX's it never falls back to an unnormalised lerp.
#[inline]
pub fn slerp(a: Quat, b: Quat, t: f32) -> Quat {
    let d = a.dot(b);
    let b = if d < 0.0 { -b } else { b };
    let theta = acos01(d.abs().min(1.0)).max(MIN_SLERP_ANGLE);
    let s = sin4(Vec4::new((1.0 - t) * theta, t * theta, theta, 0.0));
    let inv = 1.0 / s.z;
    Quat::from_vec4(Vec4::from(a) * (s.x * inv) + Vec4::from(b) * (s.y * inv))
}

/// Shortest-path normalised lerp.
#[inline]
pub fn nlerp(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    Quat::from_vec4(Vec4::from(a).lerp(Vec4::from(b), t)).normalize()
}

/// `D3DXQuaternionSquad`: `Slerp(Slerp(q1, c, t), Slerp(a, b, t), 2t(1-t))`,
/// each slerp taking the shortest path as D3DX's does.
#[inline]
pub fn squad(q1: Quat, a: Quat, b: Quat, c: Quat, t: f32) -> Quat {
    slerp(slerp(q1, c, t), slerp(a, b, t), 2.0 * t * (1.0 - t))
}

/// `D3DXQuaternionSquadSetup` for unit quaternions, returning `(A, B, C)`.
/// In Hamilton products, after the hemisphere flips described in the module
/// docs (`q0`, `q2`, `q3` adjusted, `q1` kept):
/// `A = exp(-(ln(q0 q1^-1) + ln(q2 q1^-1)) / 4) q1`,
/// `B = exp(-(ln(q1 q2^-1) + ln(q3 q2^-1)) / 4) q2`, `C = q2`.
pub fn squad_setup(q0: Quat, q1: Quat, q2: Quat, q3: Quat) -> (Quat, Quat, Quat) {
    let q0 = if q0.dot(q1) < 0.0 { -q0 } else { q0 };
    let q2 = if q1.dot(q2) < 0.0 { -q2 } else { q2 };
    let q3 = if q2.dot(q3) < 0.0 { -q3 } else { q3 };
    let inv1 = q1.conjugate();
    let inv2 = q2.conjugate();
    let a = quat_exp((quat_ln(q0 * inv1) + quat_ln(q2 * inv1)) * -0.25) * q1;
    let b = quat_exp((quat_ln(q1 * inv2) + quat_ln(q3 * inv2)) * -0.25) * q2;
    (a, b, q2)
}

/// Log of a unit quaternion as the vector part of a pure quaternion
/// (`D3DXQuaternionLn`: `acos(w) / sin(acos(w)) * v`).
pub fn quat_ln(q: Quat) -> Vec3 {
    let v = Vec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s < 1e-7 {
        return v;
    }
    v * (s.atan2(q.w) / s)
}

/// Exp of a pure quaternion given by its vector part (`D3DXQuaternionExp`).
pub fn quat_exp(v: Vec3) -> Quat {
    let theta = v.length();
    if theta < 1e-7 {
        return Quat::from_xyzw(v.x, v.y, v.z, 1.0).normalize();
    }
    let s = theta.sin() / theta;
    Quat::from_xyzw(v.x * s, v.y * s, v.z * s, theta.cos())
}

#[cfg(test)]
pub(crate) mod reference {
    //! An f64 D3DX, written from Wine's math.c and the D3DX documentation,
    //! for tests to compare the f32 code against. Not used by the library.

    pub type Q = [f64; 4]; // x, y, z, w

    pub fn dot(a: Q, b: Q) -> f64 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    }
    pub fn neg(a: Q) -> Q {
        [-a[0], -a[1], -a[2], -a[3]]
    }
    /// `D3DXQuaternionMultiply(p1, p2)`: the Hamilton product `p2 * p1`.
    pub fn d3dx_mul(p1: Q, p2: Q) -> Q {
        [
            p2[3] * p1[0] + p2[0] * p1[3] + p2[1] * p1[2] - p2[2] * p1[1],
            p2[3] * p1[1] - p2[0] * p1[2] + p2[1] * p1[3] + p2[2] * p1[0],
            p2[3] * p1[2] + p2[0] * p1[1] - p2[1] * p1[0] + p2[2] * p1[3],
            p2[3] * p1[3] - p2[0] * p1[0] - p2[1] * p1[1] - p2[2] * p1[2],
        ]
    }
    pub fn inverse(q: Q) -> Q {
        let n = dot(q, q);
        [-q[0] / n, -q[1] / n, -q[2] / n, q[3] / n]
    }
    pub fn ln(q: Q) -> Q {
        let t = if q[3] >= 1.0 || q[3] == -1.0 {
            1.0
        } else {
            q[3].acos() / (1.0 - q[3] * q[3]).sqrt()
        };
        [t * q[0], t * q[1], t * q[2], 0.0]
    }
    pub fn exp(q: Q) -> Q {
        let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
        if n == 0.0 {
            return [0.0, 0.0, 0.0, 1.0];
        }
        let s = n.sin() / n;
        [s * q[0], s * q[1], s * q[2], n.cos()]
    }
    /// Shortest-path slerp, exact (no lerp fallback but for equal inputs).
    pub fn slerp(a: Q, b: Q, t: f64) -> Q {
        let mut d = dot(a, b);
        let mut b = b;
        if d < 0.0 {
            d = -d;
            b = neg(b);
        }
        let d = d.min(1.0);
        let theta = d.acos();
        let (wa, wb) = if theta < 1e-12 {
            (1.0 - t, t)
        } else {
            (
                ((1.0 - t) * theta).sin() / theta.sin(),
                (t * theta).sin() / theta.sin(),
            )
        };
        [
            wa * a[0] + wb * b[0],
            wa * a[1] + wb * b[1],
            wa * a[2] + wb * b[2],
            wa * a[3] + wb * b[3],
        ]
    }
    /// The documented Squad formula.
    pub fn squad(q1: Q, a: Q, b: Q, c: Q, t: f64) -> Q {
        slerp(slerp(q1, c, t), slerp(a, b, t), 2.0 * t * (1.0 - t))
    }
    /// `D3DXQuaternionSquadSetup` step by step as Wine writes it.
    pub fn squad_setup(q0: Q, q1: Q, q2: Q, q3: Q) -> (Q, Q, Q) {
        let q0 = if dot(q0, q1) < 0.0 { neg(q0) } else { q0 };
        let c = if dot(q1, q2) < 0.0 { neg(q2) } else { q2 };
        let q3 = if dot(c, q3) < 0.0 { neg(q3) } else { q3 };
        let add_scale = |x: Q, y: Q| -> Q {
            [
                -0.25 * (x[0] + y[0]),
                -0.25 * (x[1] + y[1]),
                -0.25 * (x[2] + y[2]),
                -0.25 * (x[3] + y[3]),
            ]
        };
        let inv1 = inverse(q1);
        let la = ln(d3dx_mul(inv1, q0));
        let lb = ln(d3dx_mul(inv1, c));
        let a = d3dx_mul(q1, exp(add_scale(la, lb)));
        let inv2 = inverse(c);
        let la = ln(d3dx_mul(inv2, q1));
        let lb = ln(d3dx_mul(inv2, q3));
        let b = d3dx_mul(c, exp(add_scale(la, lb)));
        (a, b, c)
    }
    pub fn from_f32(q: glam::Quat) -> Q {
        [q.x as f64, q.y as f64, q.z as f64, q.w as f64]
    }
    /// Largest component difference, up to the sign of the whole quaternion.
    pub fn dist(a: glam::Quat, b: Q) -> f64 {
        let a = from_f32(a);
        let plus = (0..4).map(|i| (a[i] - b[i]).abs()).fold(0.0, f64::max);
        let minus = (0..4).map(|i| (a[i] + b[i]).abs()).fold(0.0, f64::max);
        plus.min(minus)
    }
}

#[cfg(test)]
mod tests {
    use super::reference as r;
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random_quat(rng: &mut impl Rng) -> Quat {
        loop {
            let v = Vec4::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            if v.length_squared() > 0.05 && v.length_squared() <= 1.0 {
                return Quat::from_vec4(v.normalize());
            }
        }
    }

    #[test]
    fn reference_setup_matches_native_d3dx() {
        // Inputs and native d3dx9 outputs from Wine's conformance test
        // (dlls/d3dx9_36/tests/math.c, D3DXQuaternionSquadSetup). In the
        // second call Q2 is flipped (dot(Q1, Q2) < 0) and dot(Q2, Q3) has
        // the opposite sign of dot(-Q2, Q3), so it tells the two flip rules
        // apart: only "compare Q3 with the flipped Q2" gives native's B.
        let rr = [0.2, 0.3, 1.3, -0.6];
        let s = [-3.0, -2.0, 4.0, 0.2];
        let t = [0.4, 8.3, -3.1, -2.7];
        let u = [1.1, -0.7, 9.2, 0.0];
        let close = |a: r::Q, b: [f64; 4]| (0..4).all(|i| (a[i] - b[i]).abs() < 1e-4);
        let (a, b, c) = r::squad_setup(rr, s, u, t);
        assert!(
            close(a, [-4.139569, -2.469115, 2.364477, 0.465494]),
            "{a:?}"
        );
        assert!(close(b, [2.342533, 2.365127, 8.628538, -0.898356]), "{b:?}");
        assert!(close(c, u));
        let (a, b, c) = r::squad_setup(rr, s, t, u);
        assert!(
            close(a, [-3.754567, -0.586085, 3.815818, -0.198150]),
            "{a:?}"
        );
        assert!(
            close(b, [0.140773, -8.737090, -0.516593, 3.053942]),
            "{b:?}"
        );
        assert!(close(c, r::neg(t)));
    }

    #[test]
    fn squad_setup_matches_reference_on_unit_quaternions() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..500 {
            let q: [Quat; 4] = std::array::from_fn(|_| random_quat(&mut rng));
            let (a, b, c) = squad_setup(q[0], q[1], q[2], q[3]);
            let (ea, eb, ec) = r::squad_setup(
                r::from_f32(q[0]),
                r::from_f32(q[1]),
                r::from_f32(q[2]),
                r::from_f32(q[3]),
            );
            // Signs matter here: C and B are defined up to nothing.
            for (got, want) in [(a, ea), (b, eb), (c, ec)] {
                let g = r::from_f32(got);
                let err = (0..4).map(|i| (g[i] - want[i]).abs()).fold(0.0, f64::max);
                assert!(err < 2e-5, "{got:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn squad_equals_the_documented_formula() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for _ in 0..500 {
            let q: [Quat; 4] = std::array::from_fn(|_| random_quat(&mut rng));
            let t: f32 = rng.gen_range(0.0..=1.0);
            let got = squad(q[0], q[1], q[2], q[3], t);
            let want = r::squad(
                r::from_f32(q[0]),
                r::from_f32(q[1]),
                r::from_f32(q[2]),
                r::from_f32(q[3]),
                t as f64,
            );
            assert!(r::dist(got, want) < 2e-6, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn squad_passes_through_its_keys_and_reduces_to_slerp() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..200 {
            let q: [Quat; 4] = std::array::from_fn(|_| random_quat(&mut rng));
            let (a, b, c) = squad_setup(q[0], q[1], q[2], q[3]);
            assert!(squad(q[1], a, b, c, 0.0).abs_diff_eq(q[1], 1e-6));
            let end = squad(q[1], a, b, c, 1.0);
            assert!(end.dot(q[2]).abs() > 1.0 - 1e-6, "{end:?} {:?}", q[2]);
            // Control points equal to the ends: Slerp(p, p, h) = p.
            let t: f32 = rng.gen_range(0.0..=1.0);
            let s = squad(q[1], q[1], c, c, t);
            let want = r::slerp(r::from_f32(q[1]), r::from_f32(c), t as f64);
            assert!(r::dist(s, want) < 2e-6);
        }
    }

    #[test]
    fn slerp_is_accurate_and_takes_the_short_way() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for _ in 0..1000 {
            let a = random_quat(&mut rng);
            let b = random_quat(&mut rng);
            let t: f32 = rng.gen_range(0.0..=1.0);
            let want = r::slerp(r::from_f32(a), r::from_f32(b), t as f64);
            assert!(r::dist(slerp(a, b, t), want) < 1e-6);
        }
        // Nearly equal quaternions: no division blow-up.
        let a = Quat::from_rotation_y(0.3);
        let b = Quat::from_rotation_y(0.3 + 1e-6);
        assert!(slerp(a, b, 0.5).abs_diff_eq(a, 1e-6));
        assert!(slerp(a, a, 0.5).abs_diff_eq(a, 1e-7));
    }

    #[test]
    fn polynomials_match_libm() {
        for i in 0..=1000 {
            let x = i as f32 / 1000.0;
            assert!((acos01(x) - x.acos()).abs() < 3e-7, "acos {x}");
            let y = x * std::f32::consts::FRAC_PI_2;
            assert!((sin4(Vec4::splat(y)).x - y.sin()).abs() < 2e-7, "sin {y}");
        }
    }
}
