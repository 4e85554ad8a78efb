//! Rotations: the skew map, the exponential map `exp[Ψ]` by Rodrigues' formula, and its
//! tangent operator (the derivative of `exp`), as the seed writes them.
//!
//! The seed's exponential map (the formula after `R2(t+h)`) is
//!
//! ```text
//! exp[Ψ] = I + (sin‖Ψ‖ / ‖Ψ‖) Ψ̂ + ((1 − cos‖Ψ‖) / ‖Ψ‖²) Ψ̂²
//! ```
//!
//! Evaluated literally it loses accuracy as `‖Ψ‖ → 0` (`0/0` at zero, and `1 − cos θ` cancels:
//! at `θ = 1e-4` only 8 digits of `(1 − cos θ)/θ²` survive). Here the two coefficients
//!
//! ```text
//! a(θ) = sin θ / θ,    b(θ) = (1 − cos θ) / θ²
//! ```
//!
//! are functions of `θ²` evaluated
//! - below `θ = 1/2` [`SERIES_ANGLE`] by their Taylor series in `θ²` (8 terms, the first
//!   neglected term below `5e-20`; 3 terms below `θ² = 2e-5`, the first neglected term below
//!   `1.6e-18`), which needs neither a square root nor a trigonometric call;
//! - above it from the half angle, `sin θ = 2 sin(θ/2) cos(θ/2)` and `1 − cos θ = 2 sin²(θ/2)`,
//!   which has no cancellation at any angle.
//!
//! and the map is returned in increment form, `exp[Ψ] − I` ([`exp_increment`]), whose entries
//! (of size `θ`) are accurate to round-off relative to their own size. The diagonal of `Ψ̂²` is
//! formed as `−(ψⱼ² + ψₖ²)` (never as `ψᵢ² − θ²`), and `exp[−Ψ]` is bitwise the transpose of
//! `exp[Ψ]`. A rotation is advanced as `Λ + Λ(exp[Ψ] − I)`: the small product first, one rounding
//! per entry last, which is what keeps `Λ` orthonormal to round-off over 10⁶ steps without
//! re-orthonormalisation (see `tests/orthonormality.rs`).

use crate::mat3::{IDENTITY, Mat3, Vec3, dot};

pub use crate::mat3::hat;

/// The angle below which the Rodrigues coefficients are evaluated by their series in `θ²`.
pub const SERIES_ANGLE: f64 = 0.5;

const SERIES_ANGLE_SQ: f64 = SERIES_ANGLE * SERIES_ANGLE;

/// `1/n!` for `n = 0..=18`.
const INV_FACTORIAL: [f64; 19] = {
    let mut table = [1.0; 19];
    let mut n = 1;
    let mut f = 1.0_f64;
    while n < 19 {
        f *= n as f64; // exact: 18! < 2^53 · 2^10 and every n! up to 22! is exactly representable
        table[n] = 1.0 / f;
        n += 1;
    }
    table
};

/// Below this `θ²` three terms of each series suffice: the first neglected one is below
/// `x³/7! < 1.6e-18` relative.
pub(crate) const SHORT_SERIES_SQ: f64 = 2e-5;

/// The coefficients `1/(2k + offset)!`, `k = 0..8`, of `Σ (−x)^k / (2k + offset)!`.
const fn series_coefficients(offset: usize) -> [f64; 8] {
    let mut c = [0.0; 8];
    let mut k = 0;
    while k < 8 {
        c[k] = INV_FACTORIAL[2 * k + offset];
        k += 1;
    }
    c
}

/// `a(θ) = sin θ/θ`, `b(θ) = (1 − cos θ)/θ²`, `c(θ) = (θ − sin θ)/θ³` as series in `x = θ²`.
pub(crate) const A_SERIES: [f64; 8] = series_coefficients(1);
pub(crate) const B_SERIES: [f64; 8] = series_coefficients(2);
pub(crate) const C_SERIES: [f64; 8] = series_coefficients(3);

/// `Σ_{k<N} (−x)^k c_k` by Horner's rule (unrolled: `N` is a constant).
#[inline(always)]
fn horner<const N: usize>(x: f64, c: &[f64; 8]) -> f64 {
    let mut s = c[N - 1];
    let mut k = N - 1;
    while k > 0 {
        k -= 1;
        s = c[k] - x * s;
    }
    s
}

/// The series `c` at `x < SERIES_ANGLE²`: 3 terms for `x <` [`SHORT_SERIES_SQ`] (the usual
/// step: `θ = h‖Ω‖/2 < 4.5e-3`), 8 otherwise.
#[inline(always)]
fn series(x: f64, c: &[f64; 8]) -> f64 {
    if x < SHORT_SERIES_SQ {
        horner::<3>(x, c)
    } else {
        horner::<8>(x, c)
    }
}

/// The Rodrigues coefficients `(a, b) = (sin θ / θ, (1 − cos θ) / θ²)` as functions of
/// `θ² = theta_sq`, accurate to round-off at every angle (module docs).
#[inline(always)]
pub fn rodrigues_coefficients(theta_sq: f64) -> (f64, f64) {
    if theta_sq < SERIES_ANGLE_SQ {
        (series(theta_sq, &A_SERIES), series(theta_sq, &B_SERIES))
    } else {
        let theta = theta_sq.sqrt();
        let (s, c) = (0.5 * theta).sin_cos();
        let s_over = s / theta;
        (2.0 * s_over * c, 2.0 * s_over * s_over)
    }
}

/// The third coefficient of the tangent operator, `c(θ) = (θ − sin θ) / θ³`, from `θ²`.
#[inline(always)]
pub(crate) fn tangent_coefficient(theta_sq: f64) -> f64 {
    if theta_sq < SERIES_ANGLE_SQ {
        series(theta_sq, &C_SERIES)
    } else {
        let theta = theta_sq.sqrt();
        (theta - theta.sin()) / (theta * theta_sq)
    }
}

/// `exp[Ψ] − I = a Ψ̂ + b Ψ̂²` (Rodrigues), accurate relative to its own size as `‖Ψ‖ → 0`.
#[inline(always)]
pub fn exp_increment(psi: Vec3) -> Mat3 {
    let (a, b) = rodrigues_coefficients(dot(psi, psi));
    increment_from(psi, a, b)
}

/// `a Ψ̂ + b Ψ̂²` with the diagonal of `Ψ̂²` formed without cancellation.
#[inline(always)]
fn increment_from(psi: Vec3, a: f64, b: f64) -> Mat3 {
    let [p, q, r] = psi;
    let (pp, qq, rr) = (p * p, q * q, r * r);
    let (bpq, bpr, bqr) = (b * p * q, b * p * r, b * q * r);
    let (ap, aq, ar) = (a * p, a * q, a * r);
    [
        [-b * (qq + rr), bpq - ar, bpr + aq],
        [bpq + ar, -b * (pp + rr), bqr - ap],
        [bpr - aq, bqr + ap, -b * (pp + qq)],
    ]
}

/// The exponential map `exp[Ψ]`: the rotation by the angle `‖Ψ‖` about the axis `Ψ/‖Ψ‖`,
/// as `I + exp_increment(Ψ)`. Each entry is right to one ulp of 1 for `‖Ψ‖ ≤ 1` and to three
/// for `1 < ‖Ψ‖ ≤ π` (where `1 + (exp[Ψ] − I)ᵢᵢ` cancels; `tests/exp_map.rs`).
pub fn exp_map(psi: Vec3) -> Mat3 {
    let mut e = exp_increment(psi);
    for (i, row) in e.iter_mut().enumerate() {
        row[i] += 1.0;
    }
    e
}

/// The tangent operator `T(Ψ) = I − b(θ) Ψ̂ + c(θ) Ψ̂²`, with `c(θ) = (θ − sin θ)/θ³`: the
/// derivative of the exponential map in the body frame,
///
/// ```text
/// exp[Ψ + δ] = exp[Ψ] exp[T(Ψ) δ] + O(‖δ‖²).
/// ```
///
/// RIG_IMP's Newton uses it: `d/dΨ (exp[Ψ] v) = −exp[Ψ] v̂ T(Ψ)` for a fixed `v`.
pub fn tangent_operator(psi: Vec3) -> Mat3 {
    let x = dot(psi, psi);
    let (_, b) = rodrigues_coefficients(x);
    tangent_from(psi, b, tangent_coefficient(x))
}

/// `exp[Ψ] − I` with what the tangent operator at the same `Ψ` needs, so that RIG_IMP's
/// Newton forms `T(Ψ)` only when it needs a correction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExpWithTangent {
    pub increment: Mat3,
    psi: Vec3,
    theta_sq: f64,
    b: f64,
}

impl ExpWithTangent {
    #[inline(always)]
    pub(crate) fn new(psi: Vec3) -> Self {
        let theta_sq = dot(psi, psi);
        let (a, b) = rodrigues_coefficients(theta_sq);
        Self {
            increment: increment_from(psi, a, b),
            psi,
            theta_sq,
            b,
        }
    }

    /// `T(Ψ)`.
    #[inline(always)]
    pub(crate) fn tangent(&self) -> Mat3 {
        tangent_from(self.psi, self.b, tangent_coefficient(self.theta_sq))
    }
}

#[inline(always)]
fn tangent_from(psi: Vec3, b: f64, c: f64) -> Mat3 {
    let [p, q, r] = psi;
    // Ψ̂ and Ψ̂² = ΨΨᵀ − θ² I.
    let h = hat(psi);
    let h2 = [
        [-(q * q + r * r), p * q, p * r],
        [p * q, -(p * p + r * r), q * r],
        [p * r, q * r, -(p * p + q * q)],
    ];
    let mut t = IDENTITY;
    for i in 0..3 {
        for j in 0..3 {
            t[i][j] += -b * h[i][j] + c * h2[i][j];
        }
    }
    t
}

/// `max |(ΛᵀΛ − I)_ij|`, the departure of `Λ` from orthonormality.
pub fn orthonormality_defect(lambda: &Mat3) -> f64 {
    crate::mat3::orthonormality_defect(lambda)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mat3::{mat_mul, sub};

    #[test]
    fn factorials() {
        assert_eq!(INV_FACTORIAL[3], 1.0 / 6.0);
        assert_eq!(INV_FACTORIAL[5], 1.0 / 120.0);
        assert_eq!(INV_FACTORIAL[18], 1.0 / 6_402_373_705_728_000.0);
    }

    #[test]
    fn coefficients_are_continuous_at_the_switch() {
        let below = SERIES_ANGLE_SQ * (1.0 - 4.0 * f64::EPSILON);
        let (a0, b0) = rodrigues_coefficients(below);
        let (a1, b1) = rodrigues_coefficients(SERIES_ANGLE_SQ);
        assert!((a0 - a1).abs() <= 2.0 * f64::EPSILON, "{a0} {a1}");
        assert!((b0 - b1).abs() <= 2.0 * f64::EPSILON, "{b0} {b1}");
        assert!((tangent_coefficient(below) - tangent_coefficient(SERIES_ANGLE_SQ)).abs() < 1e-14);
        assert_eq!(rodrigues_coefficients(0.0), (1.0, 0.5));
        let (below, at) = (SHORT_SERIES_SQ * (1.0 - f64::EPSILON), SHORT_SERIES_SQ);
        let (a0, b0) = rodrigues_coefficients(below);
        let (a1, b1) = rodrigues_coefficients(at);
        assert!((a0 - a1).abs() <= f64::EPSILON && (b0 - b1).abs() <= f64::EPSILON);
        assert_eq!(tangent_coefficient(0.0), 1.0 / 6.0);
    }

    #[test]
    fn inverse_is_the_transpose_bitwise() {
        for psi in [[0.1, -0.2, 0.3], [1e-9, 2e-9, -3e-9], [2.0, -1.0, 0.5]] {
            let e = exp_increment(psi);
            let f = exp_increment([-psi[0], -psi[1], -psi[2]]);
            for i in 0..3 {
                for j in 0..3 {
                    assert_eq!(e[i][j].to_bits(), f[j][i].to_bits());
                }
            }
        }
    }

    #[test]
    fn tangent_operator_matches_finite_differences() {
        // exp[Ψ]ᵀ exp[Ψ + ε e_k] ≈ I + ε (T e_k)^, so column k of T is the axial vector of
        // (exp[Ψ]ᵀ exp[Ψ + ε e_k] − exp[Ψ]ᵀ exp[Ψ − ε e_k]) / 2ε.
        for psi in [[0.3, -0.1, 0.2], [1.2, 0.7, -2.1], [1e-3, 0.0, 2e-3]] {
            let t = tangent_operator(psi);
            let et = {
                let e = exp_map(psi);
                [
                    [e[0][0], e[1][0], e[2][0]],
                    [e[0][1], e[1][1], e[2][1]],
                    [e[0][2], e[1][2], e[2][2]],
                ]
            };
            let eps = 1e-6;
            for k in 0..3 {
                let mut plus = psi;
                plus[k] += eps;
                let mut minus = psi;
                minus[k] -= eps;
                let dp = mat_mul(&et, &exp_map(plus));
                let dm = mat_mul(&et, &exp_map(minus));
                let axial = |m: &Mat3| [m[2][1], m[0][2], m[1][0]];
                let col = sub(axial(&dp), axial(&dm)).map(|v| v / (2.0 * eps));
                for i in 0..3 {
                    assert!((col[i] - t[i][k]).abs() < 1e-9, "{psi:?} {i} {k}");
                }
            }
        }
    }
}
