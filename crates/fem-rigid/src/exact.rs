//! Closed-form references for validation: the complete elliptic integral of the first kind by
//! the arithmetic–geometric mean, the period of a pendulum, and the period of a torque-free
//! asymmetric body (Euler's equations solved by Jacobi elliptic functions; Landau & Lifshitz,
//! Mechanics, §37).

use std::f64::consts::PI;

/// The arithmetic–geometric mean of `a > 0` and `b > 0`, iterated to round-off.
pub fn agm(mut a: f64, mut b: f64) -> f64 {
    for _ in 0..64 {
        if (a - b).abs() <= 2.0 * f64::EPSILON * a {
            break;
        }
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    0.5 * (a + b)
}

/// The complete elliptic integral of the first kind `K(m) = ∫₀^{π/2} dφ / √(1 − m sin²φ)`, in
/// terms of the parameter `m = k²` (`0 ≤ m < 1`), as `π / (2 agm(1, √(1 − m)))`.
pub fn complete_elliptic_k(m: f64) -> f64 {
    complete_elliptic_k_complement(1.0 - m)
}

/// `K` in terms of the complementary parameter `m₁ = 1 − m` (`0 < m₁ ≤ 1`): accurate when `m`
/// is close to 1, where forming `1 − m` would cancel.
pub fn complete_elliptic_k_complement(m1: f64) -> f64 {
    PI / (2.0 * agm(1.0, m1.sqrt()))
}

/// The period of a pendulum turning about a fixed horizontal axis, released from rest at the
/// angle `amplitude` (radians, `0 < amplitude < π`) from the downward vertical:
/// `4 √(J / (m g L)) K(sin²(amplitude/2))`, with `J` the inertia about the axis, `m` the
/// mass, `L` the distance of the centre of mass from the axis and `g` gravity. A point mass
/// has `J = m L²`: `4 √(L/g) K(sin²(amplitude/2))`.
pub fn pendulum_period(
    inertia_about_axis: f64,
    mass: f64,
    length: f64,
    g: f64,
    amplitude: f64,
) -> f64 {
    let s = (0.5 * amplitude).sin();
    4.0 * (inertia_about_axis / (mass * g * length)).sqrt() * complete_elliptic_k(s * s)
}

/// The period of the body-frame angular velocity `Ω(t)` of a torque-free rigid body with
/// distinct principal moments `moments` (any order), started with `omega` (components in the
/// same principal axes): `4 K(m) / λ`, where with `2E = Σ Iᵢ Ωᵢ²`, `L² = Σ Iᵢ² Ωᵢ²` and the
/// moments sorted `I₁ < I₂ < I₃`, for `L² > 2E I₂`
///
/// ```text
/// λ² = (I₃ − I₂)(L² − 2E I₁) / (I₁ I₂ I₃),   1 − m = (I₃ − I₁)(L² − 2E I₂) / ((I₃ − I₂)(L² − 2E I₁)),
/// ```
///
/// and for `L² < 2E I₂` the same with `I₁` and `I₃` exchanged. `Ω₂` changes sign twice per
/// period: a body spun near its intermediate axis flips every half period. `None` on the
/// separatrix (`L² = 2E I₂`, infinite period), for equal moments or a body at rest.
pub fn torque_free_period(moments: [f64; 3], omega: [f64; 3]) -> Option<f64> {
    let mut axes = [
        (moments[0], omega[0]),
        (moments[1], omega[1]),
        (moments[2], omega[2]),
    ];
    axes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let [(i1, _), (i2, _), (i3, _)] = axes;
    if !(i1 < i2 && i2 < i3) {
        return None;
    }
    let two_e: f64 = axes.iter().map(|(i, w)| i * w * w).sum();
    let l2: f64 = axes.iter().map(|(i, w)| i * i * w * w).sum();
    let (lo, hi) = if l2 > two_e * i2 { (i1, i3) } else { (i3, i1) };
    // With (lo, hi) = (I₁, I₃) or (I₃, I₁): λ², 1 − m as in the docs (signs pair up).
    let lambda_sq = (hi - i2) * (l2 - two_e * lo) / (i1 * i2 * i3);
    let m1 = (hi - lo) * (l2 - two_e * i2) / ((hi - i2) * (l2 - two_e * lo));
    if !(lambda_sq > 0.0 && m1 > 0.0 && m1 <= 1.0) {
        return None;
    }
    Some(4.0 * complete_elliptic_k_complement(m1) / lambda_sq.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elliptic_k_against_tables() {
        assert!((complete_elliptic_k(0.0) - PI / 2.0).abs() < 1e-16);
        // Abramowitz & Stegun, Table 17.1.
        let k = complete_elliptic_k(0.5);
        assert!((k - 1.854_074_677_301_371_9).abs() < 5e-16, "{k:e}");
        assert!((complete_elliptic_k(0.9) - 2.578_092_113_348_173).abs() < 1e-15);
        // Small m: π/2 (1 + m/4 + 9m²/64 + 25 m³/256 …).
        let m = 1e-4;
        let series = PI / 2.0 * (1.0 + m / 4.0 + 9.0 * m * m / 64.0 + 25.0 * m * m * m / 256.0);
        assert!((complete_elliptic_k(m) - series).abs() < 1e-15);
        // m → 1: K ≈ ln(4/k') + (k'²/4)(ln(4/k') − 1), k'² = m1.
        let m1: f64 = 1e-10;
        let l = (4.0 / m1.sqrt()).ln();
        assert!((complete_elliptic_k_complement(m1) - (l + m1 / 4.0 * (l - 1.0))).abs() < 1e-14);
    }

    #[test]
    fn pendulum_limits() {
        // Small amplitude: 2π √(L/g).
        let t = pendulum_period(1.0, 1.0, 1.0, PI * PI, 1e-6);
        assert!((t - 2.0).abs() < 1e-12);
        // Solfec's test: released horizontal, L = 1, g = π², 2.36 s.
        let t = pendulum_period(1.0, 1.0, 1.0, PI * PI, PI / 2.0);
        assert!((t - 2.360_681_198_032_192).abs() < 1e-14, "{t}");
    }

    #[test]
    fn torque_free_symmetric_in_cases() {
        // Both branches; a tiny spin about the major axis has the linearised period
        // 2π / (Ω₃ √((I₃−I₁)(I₃−I₂)/(I₁I₂))).
        let w3 = 1.0;
        let t = torque_free_period([1.0, 2.0, 3.0], [1e-7, 0.0, w3]).unwrap();
        let lin = 2.0 * PI / (w3 * ((3.0 - 1.0) * (3.0 - 2.0) / (1.0 * 2.0_f64)).sqrt());
        assert!((t - lin).abs() < 1e-9, "{t} {lin}");
        let t = torque_free_period([3.0, 2.0, 1.0], [0.0, 1e-7, w3]).unwrap();
        let lin = 2.0 * PI / (w3 * ((3.0 - 1.0) * (2.0 - 1.0) / (3.0 * 2.0_f64)).sqrt());
        assert!((t - lin).abs() < 1e-9, "{t} {lin}");
        assert!(torque_free_period([1.0, 1.0, 3.0], [1.0, 0.0, 1.0]).is_none());
        assert!(torque_free_period([1.0, 2.0, 3.0], [0.0, 1.0, 0.0]).is_none());
    }
}
