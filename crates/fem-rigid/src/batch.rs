//! Four free, unloaded bodies stepped at once, one body per SIMD lane.
//!
//! A step of a free body with no applied force or torque (gravity only; the bodies of a large
//! set, as a rule) is the same straight-line sequence of ~300 flops for every body:
//! two exponential maps, their composition, `Λ + Λ D` and the translation (see
//! [`crate::scheme`] and [`crate::stepper`]). Here that sequence is written once over [`F4`],
//! four `f64`s side by side, so that each operation acts on four bodies: compiled with AVX2
//! (the stepper's runtime dispatch by `pulp`, [`crate::stepper`]) each is one 256-bit
//! instruction; without it, two SSE2 ones.
//!
//! **Bitwise the per-body result.** Every lane performs exactly the operations of
//! [`crate::scheme::rotate`] on its body, in the same order, with the same roundings: the
//! arithmetic is IEEE `+ − × ÷ √` lane by lane (no fused multiply–add is ever formed: Rust
//! does not contract `a * b + c`), and where the per-body code branches on a body's own numbers
//! the lanes follow the same branch:
//! - the Rodrigues and tangent coefficients use the short series (three terms) when all four
//!   angles are below [`crate::rotation::SHORT_SERIES_SQ`] — the usual step — and otherwise
//!   are taken lane by lane from the per-body functions;
//! - RIG_IMP's Newton iterates the four lanes together, freezing each lane at the iterate at
//!   which its own residual first passes the test (later iterations recompute it bit for bit);
//!   the step reports the largest iteration count and relative residual, as per body.
//!
//! Anything the per-body path would report — a Newton failure, a singular Newton matrix, a
//! non-finite state — makes the group return `None` before it writes anything; the stepper
//! then steps those four bodies one by one, which produces the per-body error. So the state,
//! the step report and the errors are the same as with the per-body kernel alone, on any CPU
//! and any number of threads (`tests/batch.rs` and the unit tests below check it bit for bit).

use std::array;
use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::mat3::{Mat3, Vec3};
use crate::rotation::{
    A_SERIES, B_SERIES, C_SERIES, SHORT_SERIES_SQ, rodrigues_coefficients, tangent_coefficient,
};
use crate::scheme::{NewtonSettings, Scheme};

/// Bodies per group.
pub(crate) const LANES: usize = 4;

/// Four `f64`s, one per body of a group; arithmetic lane by lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct F4(pub [f64; LANES]);

impl F4 {
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Self([x; LANES])
    }

    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Self(self.0.map(f))
    }

    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        Self(array::from_fn(|l| f(self.0[l], o.0[l])))
    }

    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(f64::sqrt)
    }

    /// True when `test` holds in every lane.
    #[inline(always)]
    fn all(self, test: impl Fn(f64) -> bool) -> bool {
        // `&` not `&&`: no early exit, one vector compare.
        self.0.iter().fold(true, |acc, &x| acc & test(x))
    }

    /// Lane `l` of `if_true` where `mask[l]`, else of `self`.
    #[inline(always)]
    fn select(self, mask: [bool; LANES], if_true: Self) -> Self {
        Self(array::from_fn(|l| {
            if mask[l] { if_true.0[l] } else { self.0[l] }
        }))
    }
}

macro_rules! lane_op {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait for F4 {
            type Output = Self;
            #[inline(always)]
            fn $method(self, o: Self) -> Self {
                self.zip(o, |a, b| a $op b)
            }
        }
        impl $trait<F4> for f64 {
            type Output = F4;
            #[inline(always)]
            fn $method(self, o: F4) -> F4 {
                F4::splat(self).zip(o, |a, b| a $op b)
            }
        }
    };
}
lane_op!(Add, add, +);
lane_op!(Sub, sub, -);
lane_op!(Mul, mul, *);
lane_op!(Div, div, /);

impl Neg for F4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|x| -x)
    }
}

type V4 = [F4; 3];
type M4 = [[F4; 3]; 3];

// The helpers below are those of `crate::mat3` and `crate::rotation`, over lanes, with the
// same order of operations (which is what makes the lanes bitwise the per-body results).

#[inline(always)]
fn dot(a: V4, b: V4) -> F4 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
fn cross(a: V4, b: V4) -> V4 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
fn scale(s: f64, a: V4) -> V4 {
    a.map(|x| s * x)
}

#[inline(always)]
fn diag_mul(d: V4, v: V4) -> V4 {
    [d[0] * v[0], d[1] * v[1], d[2] * v[2]]
}

/// `v + dᵀ v`.
#[inline(always)]
fn add_t_product(d: &M4, v: V4) -> V4 {
    array::from_fn(|j| v[j] + (d[0][j] * v[0] + d[1][j] * v[1] + d[2][j] * v[2]))
}

/// `a + a d`.
#[inline(always)]
fn add_product(a: &M4, d: &M4) -> M4 {
    array::from_fn(|i| {
        array::from_fn(|j| a[i][j] + (a[i][0] * d[0][j] + a[i][1] * d[1][j] + a[i][2] * d[2][j]))
    })
}

/// `d0 + d1 + d0 d1`.
#[inline(always)]
fn compose_increments(d0: &M4, d1: &M4) -> M4 {
    array::from_fn(|i| {
        array::from_fn(|j| {
            let product = d0[i][0] * d1[0][j] + d0[i][1] * d1[1][j] + d0[i][2] * d1[2][j];
            d0[i][j] + d1[i][j] + product
        })
    })
}

#[inline(always)]
fn hat(v: V4) -> M4 {
    let z = F4::splat(0.0);
    [[z, -v[2], v[1]], [v[2], z, -v[0]], [-v[1], v[0], z]]
}

/// `Σ_{k<3} (−x)^k c_k` by Horner's rule, as `rotation::horner::<3>`.
#[inline(always)]
fn short_series(x: F4, c: &[f64; 8]) -> F4 {
    let s = F4::splat(c[2]);
    let s = c[1] - x * s;
    c[0] - x * s
}

/// True when every lane takes the short series of `rotation::series`.
#[inline(always)]
fn all_short(theta_sq: F4) -> bool {
    theta_sq.all(|x| x < SHORT_SERIES_SQ)
}

/// `rotation::rodrigues_coefficients` lane by lane.
#[inline(always)]
fn coefficients(theta_sq: F4) -> (F4, F4) {
    if all_short(theta_sq) {
        (short_series(theta_sq, &A_SERIES), short_series(theta_sq, &B_SERIES))
    } else {
        let ab = theta_sq.0.map(rodrigues_coefficients);
        (F4(ab.map(|c| c.0)), F4(ab.map(|c| c.1)))
    }
}

/// `rotation::tangent_coefficient` lane by lane.
#[inline(always)]
fn tangent_coefficients(theta_sq: F4) -> F4 {
    if all_short(theta_sq) {
        short_series(theta_sq, &C_SERIES)
    } else {
        theta_sq.map(tangent_coefficient)
    }
}

/// `exp[Ψ] − I` as `rotation::exp_increment`, and `(θ², b)` for the tangent operator.
#[inline(always)]
fn exp_increment(psi: V4) -> (M4, F4, F4) {
    let theta_sq = dot(psi, psi);
    let (a, b) = coefficients(theta_sq);
    let [p, q, r] = psi;
    let (pp, qq, rr) = (p * p, q * q, r * r);
    let (bpq, bpr, bqr) = (b * p * q, b * p * r, b * q * r);
    let (ap, aq, ar) = (a * p, a * q, a * r);
    let nb = -b;
    let d = [
        [nb * (qq + rr), bpq - ar, bpr + aq],
        [bpq + ar, nb * (pp + rr), bqr - ap],
        [bpr - aq, bqr + ap, nb * (pp + qq)],
    ];
    (d, theta_sq, b)
}

/// The tangent operator `T(Ψ) = I − b Ψ̂ + c Ψ̂²`, as `rotation::tangent_from`.
#[inline(always)]
fn tangent(psi: V4, b: F4, c: F4) -> M4 {
    let [p, q, r] = psi;
    let h = hat(psi);
    let h2 = [
        [-(q * q + r * r), p * q, p * r],
        [p * q, -(p * p + r * r), q * r],
        [p * r, q * r, -(p * p + q * q)],
    ];
    let nb = -b;
    array::from_fn(|i| {
        array::from_fn(|j| {
            let identity = F4::splat(if i == j { 1.0 } else { 0.0 });
            identity + (nb * h[i][j] + c * h2[i][j])
        })
    })
}

/// Solves `a x = b` by the adjugate as `mat3::solve`; `None` if any lane's would be `None`.
#[inline(always)]
fn solve(a: &M4, b: V4, active: [bool; LANES]) -> Option<V4> {
    let c0 = cross(a[1], a[2]);
    let c1 = cross(a[2], a[0]);
    let c2 = cross(a[0], a[1]);
    let det = dot(a[0], c0);
    let r = 1.0 / det;
    let x = [
        r * (c0[0] * b[0] + c1[0] * b[1] + c2[0] * b[2]),
        r * (c0[1] * b[0] + c1[1] * b[1] + c2[1] * b[2]),
        r * (c0[2] * b[0] + c1[2] * b[1] + c2[2] * b[2]),
    ];
    let sum = x[0] + x[1] + x[2];
    let regular = (0..LANES).all(|l| !active[l] || (det.0[l] != 0.0 && sum.0[l].is_finite()));
    regular.then_some(x)
}

/// RIG_IMP's Newton for `W3(t+h)` over four lanes, as `scheme::solve_w3` per lane: returns
/// `Ω₃`, `exp[h/2 Ω₃] − I`, the largest iteration count and the largest relative residual, or
/// `None` where any lane's iteration fails.
#[inline(always)]
fn solve_w3(
    half: f64,
    inertia: V4,
    a: V4,
    start: V4,
    settings: &NewtonSettings,
) -> Option<(V4, M4, usize, f64)> {
    let scale_a = dot(a, a).sqrt();
    let threshold = (settings.tolerance * scale_a).map(|t| t.max(settings.absolute_tolerance));
    let mut w = start;
    let mut iterations = 0;
    loop {
        let psi = scale(half, w);
        let (d, theta_sq, b) = exp_increment(psi);
        let rotated = add_t_product(&d, a);
        let jw = diag_mul(inertia, w);
        let r = [jw[0] - rotated[0], jw[1] - rotated[1], jw[2] - rotated[2]];
        let residual = dot(r, r).sqrt();
        let done: [bool; LANES] = array::from_fn(|l| residual.0[l] <= threshold.0[l]);
        if done.iter().all(|&d| d) {
            // Every lane's `w` has been frozen since its own convergence, so `residual` is
            // the one it converged with.
            let relative = residual.zip(scale_a, |r, s| if s > 0.0 { r / s } else { r });
            let worst = relative.0.iter().fold(0.0_f64, |m, &r| m.max(r));
            return Some((w, d, iterations, worst));
        }
        let failing = (0..LANES)
            .any(|l| !done[l] && (iterations == settings.max_iterations || !residual.0[l].is_finite()));
        if failing {
            return None;
        }
        let t = tangent(psi, b, tangent_coefficients(theta_sq));
        let jh = hat(rotated);
        let jac: M4 = array::from_fn(|i| {
            array::from_fn(|k| {
                let diagonal = if i == k { inertia[i] } else { F4::splat(0.0) };
                diagonal - half * (jh[i][0] * t[0][k] + jh[i][1] * t[1][k] + jh[i][2] * t[2][k])
            })
        });
        let active = done.map(|d| !d);
        let delta = solve(&jac, r, active)?;
        w = array::from_fn(|c| (w[c] - delta[c]).select(done, w[c]));
        iterations += 1;
    }
}

/// The state of four consecutive free, unloaded bodies: read by [`step_group`], written back
/// by it.
pub(crate) struct Group<'a> {
    pub inertia: &'a [Vec3],
    pub inverse_inertia: &'a [Vec3],
    pub position: &'a mut [Vec3],
    pub velocity: &'a mut [Vec3],
    pub rotation: &'a mut [Mat3],
    pub omega: &'a mut [Vec3],
}

#[inline(always)]
fn load_v(s: &[Vec3]) -> V4 {
    array::from_fn(|c| F4(array::from_fn(|l| s[l][c])))
}

#[inline(always)]
fn store_v(v: &V4, s: &mut [Vec3]) {
    for (l, out) in s.iter_mut().enumerate().take(LANES) {
        *out = [v[0].0[l], v[1].0[l], v[2].0[l]];
    }
}

/// One step of `scheme` for four free bodies without applied loads under `gravity`, exactly
/// as `scheme::rotate` and the stepper's translation do it per body (module docs). Returns the
/// largest Newton iteration count and relative residual (0 and 0 for the explicit schemes), or
/// `None`, with nothing written, where the per-body path would fail or report an error.
#[inline(always)]
pub(crate) fn step_group(
    g: Group<'_>,
    scheme: &Scheme,
    h: f64,
    gravity: Vec3,
) -> Option<(usize, f64)> {
    let half = 0.5 * h;
    let inertia = load_v(g.inertia);
    let inverse_inertia = load_v(g.inverse_inertia);
    let w = load_v(g.omega);
    // R(t+h/2), W(t+h/2), W1(t+h), with no torque (scheme::rotate).
    let (d0, _, _) = exp_increment(scale(half, w));
    let m0 = add_t_product(&d0, diag_mul(inertia, w));
    let w_half = diag_mul(inverse_inertia, m0);
    let gyroscopic = cross(w_half, diag_mul(inertia, w_half));
    let rate = scale(-1.0, gyroscopic);
    let jr = diag_mul(inverse_inertia, rate);
    let w1: V4 = array::from_fn(|c| w[c] + h * jr[c]);
    let a = m0;
    let (omega, d_end, iterations, residual) = match scheme {
        Scheme::RigPos => {
            let (d1, _, _) = exp_increment(scale(half, w1));
            (w1, d1, 0, 0.0)
        }
        Scheme::RigNeg => {
            let (d1, _, _) = exp_increment(scale(half, w1));
            let m = add_t_product(&d1, a);
            (array::from_fn(|c| m[c] / inertia[c]), d1, 0, 0.0)
        }
        Scheme::RigImp(settings) => solve_w3(half, inertia, a, w1, settings)?,
    };
    let increment = compose_increments(&d0, &d_end);
    // The translation of a free body under gravity alone (stepper::step_chunk).
    let x = load_v(g.position);
    let v = load_v(g.velocity);
    let x_half: V4 = array::from_fn(|c| x[c] + half * v[c]);
    let v_new: V4 = array::from_fn(|c| v[c] + h * F4::splat(gravity[c]));
    let x_new: V4 = array::from_fn(|c| x_half[c] + half * v_new[c]);
    let [x0, x1, x2] = x_new;
    let [v0, v1, v2] = v_new;
    let [w0, w1, w2] = omega;
    let check = ((x0 + x1) + (x2 + v0)) + ((v1 + v2) + (w0 + (w1 + w2)));
    if !check.all(f64::is_finite) {
        return None;
    }
    let lambda: M4 =
        array::from_fn(|i| array::from_fn(|j| F4(array::from_fn(|l| g.rotation[l][i][j]))));
    let lambda = add_product(&lambda, &increment);
    for (l, out) in g.rotation.iter_mut().enumerate().take(LANES) {
        *out = array::from_fn(|i| array::from_fn(|j| lambda[i][j].0[l]));
    }
    store_v(&x_new, g.position);
    store_v(&v_new, g.velocity);
    store_v(&omega, g.omega);
    Some((iterations, residual))
}

#[cfg(test)]
mod tests {
    use crate::bodies::{AngularVelocity, RigidBodies, RigidBody};
    use crate::error::RigidError;
    use crate::scheme::{NewtonSettings, Scheme};
    use crate::stepper::{Kernel, RigidStepper};
    use fem_constraints::TimeFunction;

    fn kernels() -> [Kernel; 3] {
        [
            Kernel::PerBody,
            Kernel::Lanes(pulp::Arch::Scalar),
            Kernel::detect(),
        ]
    }

    /// `n` bodies with spins from rest to `h|Ω|/2 ≈ 0.6` (all three branches of the Rodrigues
    /// coefficients, in mixed and in uniform groups), general inertias, and three bodies in 24
    /// loaded or on a fixed point (groups the batch must leave to the per-body path).
    fn bodies(n: usize, spin: impl Fn(usize) -> f64) -> RigidBodies {
        let mut set = RigidBodies::new([0.0, -1.0, -9.81]).expect("gravity");
        for i in 0..n {
            let x = i as f64;
            let inertia = [
                [2.0 + (0.3 * x).sin(), 0.1, 0.05 * (x * 0.7).cos()],
                [0.1, 3.0, 0.2],
                [0.05 * (x * 0.7).cos(), 0.2, 4.0 + 0.5 * (0.1 * x).cos()],
            ];
            let mut b = RigidBody::new(1.0 + 0.01 * x, inertia);
            b.position = [x, -x, 0.5];
            b.velocity = [0.1 * x.sin(), 1.0, -2.0];
            b.rotation = [0.3 * x.cos(), (0.37 * x).sin(), 0.2];
            let s = spin(i);
            b.angular_velocity =
                AngularVelocity::Body([s * (0.6 + 0.1 * x.cos()), -0.7 * s, 0.4 * s]);
            match i % 24 {
                1 => b.torque = Some([0.5, -0.25, 1.0].map(TimeFunction::Constant)),
                3 => b.force = Some([1.0, 0.0, 0.0].map(TimeFunction::Constant)),
                7 => {
                    b.fixed_point = Some([x, -x, -0.5]);
                    b.velocity = [0.0; 3];
                }
                _ => {}
            }
            set.push(b).expect("valid body");
        }
        set
    }

    fn spin(i: usize) -> f64 {
        match (i / 4) % 5 {
            0 => 1.0,                          // short series
            1 => 0.0,                          // at rest
            2 => 400.0,                        // long series (θ = 0.2)
            3 => 1200.0,                       // half-angle formulas (θ = 0.6)
            _ => [1.0, 30.0, 1200.0, 9.0][i % 4], // mixed
        }
    }

    fn bits(s: &RigidStepper) -> Vec<u64> {
        use fem_time::Stepper;
        s.state()
            .iter()
            .flat_map(|f| f.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn every_kernel_steps_bitwise_alike() {
        let schemes = [
            Scheme::RigPos,
            Scheme::RigNeg,
            Scheme::rig_imp(),
            Scheme::RigImp(NewtonSettings {
                tolerance: 1e-10,
                absolute_tolerance: 1e-9,
                ..NewtonSettings::default()
            }),
        ];
        for scheme in schemes {
            let mut reference: Option<(Vec<u64>, Vec<(usize, u64)>)> = None;
            for kernel in kernels() {
                let mut s = RigidStepper::new(bodies(203, spin), scheme, 1e-3, 0.0)
                    .expect("stepper")
                    .with_kernel(kernel);
                let reports: Vec<(usize, u64)> = (0..8)
                    .map(|_| {
                        let r = s.step().expect("step");
                        (r.newton_iterations, r.newton_residual.to_bits())
                    })
                    .collect();
                let got = (bits(&s), reports);
                match &reference {
                    None => reference = Some(got),
                    Some(r) => assert!(*r == got, "{kernel:?} differs for {scheme:?}"),
                }
            }
            if matches!(scheme, Scheme::RigImp(_)) {
                let (_, reports) = reference.expect("ran");
                assert!(reports.iter().all(|r| r.0 >= 1), "Newton iterated");
            }
        }
    }

    #[test]
    fn every_kernel_reports_the_same_failure() {
        // A Newton that cannot converge in one iteration, and a spin that overflows (body 13,
        // in a group of free unloaded bodies): the per-body error, from every kernel.
        let tight = Scheme::RigImp(NewtonSettings {
            tolerance: 1e-300,
            max_iterations: 1,
            absolute_tolerance: 0.0,
        });
        let huge = |i: usize| if i == 13 { 1e308 } else { spin(i) };
        for scheme in [tight, Scheme::RigPos, Scheme::RigNeg, Scheme::rig_imp()] {
            let errors = kernels().map(|kernel| {
                RigidStepper::new(bodies(40, huge), scheme, 1e-3, 0.0)
                    .expect("stepper")
                    .with_kernel(kernel)
                    .step()
                    .expect_err("fails")
            });
            match errors[0] {
                RigidError::NewtonNotConverged { .. } if scheme == tight => {}
                RigidError::NewtonNotConverged { body: 13, .. }
                | RigidError::NonFiniteState { body: 13, .. } => {}
                ref other => panic!("{scheme:?}: {other:?}"),
            }
            for e in &errors[1..] {
                assert_eq!(e.to_string(), errors[0].to_string(), "{scheme:?}");
            }
        }
    }
}
