//! Four free, unloaded bodies stepped at once, one body per SIMD lane.
//!
//! A step of a free body with no applied force or torque (gravity only; the bodies of a large
//! set, as a rule) is the same straight-line sequence of ~300 flops for every body:
//! two exponential maps, their composition, `Λ + Λ D` and the translation (see
//! [`crate::scheme`] and [`crate::stepper`]). Here that sequence is written once over [`Lanes`],
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
use crate::scheme::{RigImpSettings, Scheme};

/// Bodies per group.
pub(crate) const LANES: usize = 4;

/// Four `f64`s, one per body of a group, with IEEE arithmetic lane by lane: `+ − × ÷` and
/// negation as operators, the rest as methods. A value also stands for its instruction set:
/// [`Lanes::splat`] and [`Lanes::with_lanes`] make new values of the same kind.
pub(crate) trait Lanes:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// `x` in every lane.
    fn splat(self, x: f64) -> Self;
    /// A value of the same kind with the lanes `a`.
    fn with_lanes(self, a: [f64; LANES]) -> Self;
    /// The lanes.
    fn to_array(self) -> [f64; LANES];
    /// `√x` lane by lane (IEEE, correctly rounded).
    fn sqrt(self) -> Self;
}

/// [`Lanes`] as a plain array: the compiler's choice of instructions (SSE2 on x86-64 without
/// AVX: two lanes per instruction where it pairs them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Plain4(pub [f64; LANES]);

macro_rules! plain_op {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait for Plain4 {
            type Output = Self;
            #[inline(always)]
            fn $method(self, o: Self) -> Self {
                Self(array::from_fn(|l| self.0[l] $op o.0[l]))
            }
        }
    };
}
plain_op!(Add, add, +);
plain_op!(Sub, sub, -);
plain_op!(Mul, mul, *);
plain_op!(Div, div, /);

impl Neg for Plain4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self(self.0.map(|x| -x))
    }
}

impl Lanes for Plain4 {
    #[inline(always)]
    fn splat(self, x: f64) -> Self {
        Self([x; LANES])
    }
    #[inline(always)]
    fn with_lanes(self, a: [f64; LANES]) -> Self {
        Self(a)
    }
    #[inline(always)]
    fn to_array(self) -> [f64; LANES] {
        self.0
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Self(self.0.map(f64::sqrt))
    }
}

/// [`Lanes`] in one AVX register (`pulp`'s `f64x4`), with the token `V3` that proves the CPU
/// has AVX2 (zero-sized: it costs nothing to carry).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx4 {
    v: pulp::f64x4,
    simd: pulp::x86::V3,
}

#[cfg(target_arch = "x86_64")]
impl Avx4 {
    /// Zeros, of the instruction set `simd` stands for.
    #[inline(always)]
    pub(crate) fn zero(simd: pulp::x86::V3) -> Self {
        Self {
            v: simd.splat_f64x4(0.0),
            simd,
        }
    }
}

#[cfg(target_arch = "x86_64")]
macro_rules! avx_op {
    ($trait:ident, $method:ident, $simd:ident) => {
        impl $trait for Avx4 {
            type Output = Self;
            #[inline(always)]
            fn $method(self, o: Self) -> Self {
                Self {
                    v: self.simd.$simd(self.v, o.v),
                    simd: self.simd,
                }
            }
        }
    };
}
#[cfg(target_arch = "x86_64")]
avx_op!(Add, add, add_f64x4);
#[cfg(target_arch = "x86_64")]
avx_op!(Sub, sub, sub_f64x4);
#[cfg(target_arch = "x86_64")]
avx_op!(Mul, mul, mul_f64x4);
#[cfg(target_arch = "x86_64")]
avx_op!(Div, div, div_f64x4);

#[cfg(target_arch = "x86_64")]
impl Neg for Avx4 {
    type Output = Self;
    /// The sign bit flipped, as `-x` (not `0 − x`, which differs at `x = +0`).
    #[inline(always)]
    fn neg(self) -> Self {
        let sign = self.simd.splat_f64x4(-0.0);
        Self {
            v: self.simd.xor_f64x4(self.v, sign),
            simd: self.simd,
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes for Avx4 {
    #[inline(always)]
    fn splat(self, x: f64) -> Self {
        Self {
            v: self.simd.splat_f64x4(x),
            simd: self.simd,
        }
    }
    #[inline(always)]
    fn with_lanes(self, a: [f64; LANES]) -> Self {
        Self {
            v: pulp::f64x4(a[0], a[1], a[2], a[3]),
            simd: self.simd,
        }
    }
    #[inline(always)]
    fn to_array(self) -> [f64; LANES] {
        let pulp::f64x4(a, b, c, d) = self.v;
        [a, b, c, d]
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Self {
            v: self.simd.sqrt_f64x4(self.v),
            simd: self.simd,
        }
    }
}

/// True when `test` holds in every lane.
#[inline(always)]
fn all<L: Lanes>(x: L, test: impl Fn(f64) -> bool) -> bool {
    // `&` not `&&`: no early exit.
    x.to_array().iter().fold(true, |acc, &x| acc & test(x))
}

/// Lane `l` of `if_true` where `mask[l]`, else of `x`.
#[inline(always)]
fn select<L: Lanes>(x: L, mask: [bool; LANES], if_true: L) -> L {
    let (a, b) = (x.to_array(), if_true.to_array());
    x.with_lanes(array::from_fn(|l| if mask[l] { b[l] } else { a[l] }))
}

/// `f` lane by lane.
#[inline(always)]
fn map<L: Lanes>(x: L, f: impl Fn(f64) -> f64) -> L {
    x.with_lanes(x.to_array().map(f))
}

/// `[e(0), e(1), e(2)]` with `$i` bound to each index in turn, written out. Not
/// `array::from_fn`: its closure would be a function of its own, compiled without AVX, in which
/// every AVX operation is a call; a macro keeps the code in the caller.
macro_rules! each3 {
    ($i:ident => $e:expr) => {
        [
            {
                let $i = 0;
                $e
            },
            {
                let $i = 1;
                $e
            },
            {
                let $i = 2;
                $e
            },
        ]
    };
}

type V<L> = [L; 3];
type M<L> = [[L; 3]; 3];

// The helpers below are those of `crate::mat3` and `crate::rotation`, over lanes, with the
// same order of operations (which is what makes the lanes bitwise the per-body results).

#[inline(always)]
fn dot<L: Lanes>(a: V<L>, b: V<L>) -> L {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
fn cross<L: Lanes>(a: V<L>, b: V<L>) -> V<L> {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
fn scale<L: Lanes>(s: f64, a: V<L>) -> V<L> {
    let s = a[0].splat(s);
    [s * a[0], s * a[1], s * a[2]]
}

#[inline(always)]
fn diag_mul<L: Lanes>(d: V<L>, v: V<L>) -> V<L> {
    [d[0] * v[0], d[1] * v[1], d[2] * v[2]]
}

/// `v + dᵀ v`.
#[inline(always)]
fn add_t_product<L: Lanes>(d: &M<L>, v: V<L>) -> V<L> {
    each3!(j => v[j] + (d[0][j] * v[0] + d[1][j] * v[1] + d[2][j] * v[2]))
}

/// `a + a d`.
#[inline(always)]
fn add_product<L: Lanes>(a: &M<L>, d: &M<L>) -> M<L> {
    each3!(i => each3!(j => a[i][j] + (a[i][0] * d[0][j] + a[i][1] * d[1][j] + a[i][2] * d[2][j])))
}

/// `d0 + d1 + d0 d1`.
#[inline(always)]
fn compose_increments<L: Lanes>(d0: &M<L>, d1: &M<L>) -> M<L> {
    each3!(i => each3!(j => {
        let product = d0[i][0] * d1[0][j] + d0[i][1] * d1[1][j] + d0[i][2] * d1[2][j];
        d0[i][j] + d1[i][j] + product
    }))
}

#[inline(always)]
fn hat<L: Lanes>(v: V<L>) -> M<L> {
    let z = v[0].splat(0.0);
    [[z, -v[2], v[1]], [v[2], z, -v[0]], [-v[1], v[0], z]]
}

/// `Σ_{k<3} (−x)^k c_k` by Horner's rule, as `rotation::horner::<3>`.
#[inline(always)]
fn short_series<L: Lanes>(x: L, c: &[f64; 8]) -> L {
    let s = x.splat(c[2]);
    let s = x.splat(c[1]) - x * s;
    x.splat(c[0]) - x * s
}

/// True when every lane takes the short series of `rotation::series`.
#[inline(always)]
fn all_short<L: Lanes>(theta_sq: L) -> bool {
    all(theta_sq, |x| x < SHORT_SERIES_SQ)
}

/// `rotation::rodrigues_coefficients` lane by lane.
#[inline(always)]
fn coefficients<L: Lanes>(theta_sq: L) -> (L, L) {
    if all_short(theta_sq) {
        (
            short_series(theta_sq, &A_SERIES),
            short_series(theta_sq, &B_SERIES),
        )
    } else {
        let ab = theta_sq.to_array().map(rodrigues_coefficients);
        (
            theta_sq.with_lanes(ab.map(|c| c.0)),
            theta_sq.with_lanes(ab.map(|c| c.1)),
        )
    }
}

/// `rotation::tangent_coefficient` lane by lane.
#[inline(always)]
fn tangent_coefficients<L: Lanes>(theta_sq: L) -> L {
    if all_short(theta_sq) {
        short_series(theta_sq, &C_SERIES)
    } else {
        map(theta_sq, tangent_coefficient)
    }
}

/// `exp[Ψ] − I` as `rotation::exp_increment`, and `(θ², b)` for the tangent operator.
#[inline(always)]
fn exp_increment<L: Lanes>(psi: V<L>) -> (M<L>, L, L) {
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
fn tangent<L: Lanes>(psi: V<L>, b: L, c: L) -> M<L> {
    let [p, q, r] = psi;
    let h = hat(psi);
    let h2 = [
        [-(q * q + r * r), p * q, p * r],
        [p * q, -(p * p + r * r), q * r],
        [p * r, q * r, -(p * p + q * q)],
    ];
    let nb = -b;
    each3!(i => each3!(j => {
        let identity = p.splat(if i == j { 1.0 } else { 0.0 });
        identity + (nb * h[i][j] + c * h2[i][j])
    }))
}

/// Solves `a x = b` by the adjugate as `mat3::solve`; `None` if the solve of any `active`
/// lane would be `None`.
#[inline(always)]
fn solve<L: Lanes>(a: &M<L>, b: V<L>, active: [bool; LANES]) -> Option<V<L>> {
    let c0 = cross(a[1], a[2]);
    let c1 = cross(a[2], a[0]);
    let c2 = cross(a[0], a[1]);
    let det = dot(a[0], c0);
    let r = det.splat(1.0) / det;
    let x = [
        r * (c0[0] * b[0] + c1[0] * b[1] + c2[0] * b[2]),
        r * (c0[1] * b[0] + c1[1] * b[1] + c2[1] * b[2]),
        r * (c0[2] * b[0] + c1[2] * b[1] + c2[2] * b[2]),
    ];
    let (det, sum) = (det.to_array(), (x[0] + x[1] + x[2]).to_array());
    let regular = (0..LANES).all(|l| !active[l] || (det[l] != 0.0 && sum[l].is_finite()));
    regular.then_some(x)
}

/// RIG_IMP's Newton for `W3(t+h)` over four lanes, as `scheme::solve_w3` per lane: returns
/// `Ω₃`, `exp[h/2 Ω₃] − I`, the largest iteration count and the largest relative residual, or
/// `None` where any lane's iteration fails.
#[inline(always)]
fn solve_w3<L: Lanes>(
    half: f64,
    inertia: V<L>,
    a: V<L>,
    start: V<L>,
    settings: &RigImpSettings,
) -> Option<(V<L>, M<L>, usize, f64)> {
    let scale_a = dot(a, a).sqrt().to_array();
    let threshold = scale_a.map(|s| (settings.tolerance * s).max(settings.absolute_tolerance));
    let half_l = a[0].splat(half);
    let mut w = start;
    let mut iterations = 0;
    loop {
        let psi = scale(half, w);
        let (d, theta_sq, b) = exp_increment(psi);
        let rotated = add_t_product(&d, a);
        let jw = diag_mul(inertia, w);
        let r = [jw[0] - rotated[0], jw[1] - rotated[1], jw[2] - rotated[2]];
        let residual = dot(r, r).sqrt().to_array();
        let done: [bool; LANES] = array::from_fn(|l| residual[l] <= threshold[l]);
        if done.iter().all(|&d| d) {
            // Every lane's `w` has been frozen since its own convergence, so `residual` is
            // the one it converged with.
            let worst = (0..LANES).fold(0.0_f64, |m, l| {
                let (r, s) = (residual[l], scale_a[l]);
                m.max(if s > 0.0 { r / s } else { r })
            });
            return Some((w, d, iterations, worst));
        }
        let failing = (0..LANES).any(|l| {
            !done[l] && (iterations == settings.max_iterations || !residual[l].is_finite())
        });
        if failing {
            return None;
        }
        let t = tangent(psi, b, tangent_coefficients(theta_sq));
        let jh = hat(rotated);
        let jac: M<L> = each3!(i => each3!(k => {
            let diagonal = if i == k { inertia[i] } else { half_l.splat(0.0) };
            diagonal - half_l * (jh[i][0] * t[0][k] + jh[i][1] * t[1][k] + jh[i][2] * t[2][k])
        }));
        let delta = solve(&jac, r, done.map(|d| !d))?;
        w = if done.contains(&true) {
            each3!(c => select(w[c] - delta[c], done, w[c]))
        } else {
            each3!(c => w[c] - delta[c])
        };
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

/// Component `c` of four bodies' vectors as lanes.
#[inline(always)]
fn load_v<L: Lanes>(zero: L, s: &[Vec3]) -> V<L> {
    each3!(c => zero.with_lanes([s[0][c], s[1][c], s[2][c], s[3][c]]))
}

#[inline(always)]
fn store_v<L: Lanes>(v: &V<L>, s: &mut [Vec3]) {
    let [a, b, c] = v.map(|x| x.to_array());
    for (l, out) in s.iter_mut().enumerate().take(LANES) {
        *out = [a[l], b[l], c[l]];
    }
}

/// One step of `scheme` for four free bodies without applied loads under `gravity`, exactly
/// as `scheme::rotate` and the stepper's translation do it per body (module docs), in the
/// lanes of `zero`'s kind. Returns the largest Newton iteration count and relative residual
/// (0 and 0 for the explicit schemes), or `None`, with nothing written, where the per-body
/// path would fail or report an error.
#[inline(always)]
pub(crate) fn step_group<L: Lanes>(
    zero: L,
    g: Group<'_>,
    scheme: &Scheme,
    h: f64,
    gravity: Vec3,
) -> Option<(usize, f64)> {
    let half = 0.5 * h;
    let inertia = load_v(zero, g.inertia);
    let inverse_inertia = load_v(zero, g.inverse_inertia);
    let w = load_v(zero, g.omega);
    // R(t+h/2), W(t+h/2), W1(t+h), with no torque (scheme::rotate).
    let (d0, _, _) = exp_increment(scale(half, w));
    let m0 = add_t_product(&d0, diag_mul(inertia, w));
    let w_half = diag_mul(inverse_inertia, m0);
    let gyroscopic = cross(w_half, diag_mul(inertia, w_half));
    let rate = scale(-1.0, gyroscopic);
    let jr = diag_mul(inverse_inertia, rate);
    let h_l = zero.splat(h);
    let w1: V<L> = each3!(c => w[c] + h_l * jr[c]);
    let a = m0;
    let (omega, d_end, iterations, residual) = match scheme {
        Scheme::RigPos => {
            let (d1, _, _) = exp_increment(scale(half, w1));
            (w1, d1, 0, 0.0)
        }
        Scheme::RigNeg => {
            let (d1, _, _) = exp_increment(scale(half, w1));
            let m = add_t_product(&d1, a);
            (each3!(c => m[c] / inertia[c]), d1, 0, 0.0)
        }
        Scheme::RigImp(settings) => solve_w3(half, inertia, a, w1, settings)?,
    };
    let increment = compose_increments(&d0, &d_end);
    // The translation of a free body under gravity alone (stepper::step_chunk_generic).
    let half_l = zero.splat(half);
    let x = load_v(zero, g.position);
    let v = load_v(zero, g.velocity);
    let x_half: V<L> = each3!(c => x[c] + half_l * v[c]);
    let v_new: V<L> = each3!(c => v[c] + h_l * zero.splat(gravity[c]));
    let x_new: V<L> = each3!(c => x_half[c] + half_l * v_new[c]);
    let [x0, x1, x2] = x_new;
    let [v0, v1, v2] = v_new;
    let [w0, w1, w2] = omega;
    let check = ((x0 + x1) + (x2 + v0)) + ((v1 + v2) + (w0 + (w1 + w2)));
    if !all(check, f64::is_finite) {
        return None;
    }
    let r = &g.rotation;
    let lambda: M<L> =
        each3!(i => each3!(j => zero.with_lanes([r[0][i][j], r[1][i][j], r[2][i][j], r[3][i][j]])));
    let lambda = add_product(&lambda, &increment).map(|row| row.map(|x| x.to_array()));
    for (l, out) in g.rotation.iter_mut().enumerate().take(LANES) {
        *out = array::from_fn(|i| array::from_fn(|j| lambda[i][j][l]));
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
    use crate::scheme::{RigImpSettings, Scheme};
    use crate::stepper::{Kernel, RigidStepper};
    use fem_constraints::TimeFunction;

    fn kernels() -> [Kernel; 3] {
        [Kernel::PerBody, Kernel::Plain, Kernel::detect()]
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
            0 => 1.0,                             // short series
            1 => 0.0,                             // at rest
            2 => 400.0,                           // long series (θ = 0.2)
            3 => 1200.0,                          // half-angle formulas (θ = 0.6)
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

    /// The state's bits after a run, and each step's Newton iterations and residual bits.
    type Run = (Vec<u64>, Vec<(usize, u64)>);

    #[test]
    fn every_kernel_steps_bitwise_alike() {
        let schemes = [
            Scheme::RigPos,
            Scheme::RigNeg,
            Scheme::rig_imp(),
            Scheme::RigImp(RigImpSettings {
                tolerance: 1e-10,
                absolute_tolerance: 1e-9,
                ..RigImpSettings::default()
            }),
        ];
        for scheme in schemes {
            let mut reference: Option<Run> = None;
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
        let tight = Scheme::RigImp(RigImpSettings {
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
