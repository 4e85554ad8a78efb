//! The Hermite cubic beam element: `C¹` piecewise cubics for the position of an inextensible
//! beam (Glowinski–Holmström §4.3, the space `V_h`).
//!
//! Each node carries, per space component, two scalar dofs: the value `v(sᵢ)` and the slope
//! `v'(sᵢ)` with respect to the arc length `s`. On an element of length `h`, with the local
//! coordinate `ξ = (s − s₀)/h ∈ [0, 1]` and local dofs `[v₀, v₀', v₁, v₁']`,
//!
//! ```text
//! N₀ = 1 − 3ξ² + 2ξ³      N₁ = h (ξ − 2ξ² + ξ³)
//! N₂ = 3ξ² − 2ξ³          N₃ = h (−ξ² + ξ³)
//! ```
//!
//! and `d/ds = (1/h) d/dξ`. The element matrices, per component (the three space components
//! do not couple in any of them):
//!
//! | matrix | integral | rule |
//! |---|---|---|
//! | [`HermiteCubic::bending`] | `EI ∫ N_a'' N_b'' ds` | closed form (exact; 2-point Gauss is exact too) |
//! | [`HermiteCubic::mass`] | `ρ ∫ N_a N_b ds` | closed form `ρh/420 [156 22h 54 −13h; …]` |
//! | [`HermiteCubic::axial`] | `r Σ_q w_q h N_a'(ξ_q) N_b'(ξ_q)` | the caller's rule (the constraint points) |
//! | [`HermiteCubic::uniform_load`] | `f ∫ N_a ds` | closed form `f h [1/2, h/12, 1/2, −h/12]` |
//!
//! The axial (augmentation) term is deliberately *not* integrated exactly: it must use the
//! same points as the pointwise constraint `|x'| = 1` (see `docs/theory/inextensible_beam.md`),
//! which for the beam is [`constraint_rule`], the 2-point Gauss rule.

use crate::quadrature::{Rule, gauss_legendre};

/// Number of local scalar dofs of one component: `[v₀, v₀', v₁, v₁']`.
pub const N_LOCAL: usize = 4;

/// The rule at whose points the beam imposes `|x'| = 1`: 2-point Gauss per element.
///
/// One point per element under-constrains the discrete problem and three or more lock it
/// (`shared/notes/inextensible-beam.md`); two points give two scalar constraints per element
/// against the element's free dofs.
pub fn constraint_rule() -> Rule {
    gauss_legendre(2).expect("the 2-point rule is tabulated")
}

/// One Hermite cubic element of length `h` (per-component scalar kernel).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HermiteCubic {
    /// Element length `h` (reference arc length), > 0.
    pub length: f64,
}

impl HermiteCubic {
    /// The element of length `h`.
    pub fn new(length: f64) -> Self {
        Self { length }
    }

    /// Shape function values `N_a(ξ)`.
    pub fn values(&self, xi: f64) -> [f64; N_LOCAL] {
        let h = self.length;
        let (x2, x3) = (xi * xi, xi * xi * xi);
        [
            1.0 - 3.0 * x2 + 2.0 * x3,
            h * (xi - 2.0 * x2 + x3),
            3.0 * x2 - 2.0 * x3,
            h * (x3 - x2),
        ]
    }

    /// First arc-length derivatives `dN_a/ds` at `ξ`.
    pub fn first_derivatives(&self, xi: f64) -> [f64; N_LOCAL] {
        let h = self.length;
        let x2 = xi * xi;
        [
            (-6.0 * xi + 6.0 * x2) / h,
            1.0 - 4.0 * xi + 3.0 * x2,
            (6.0 * xi - 6.0 * x2) / h,
            3.0 * x2 - 2.0 * xi,
        ]
    }

    /// Second arc-length derivatives `d²N_a/ds²` at `ξ` (linear in `ξ`).
    pub fn second_derivatives(&self, xi: f64) -> [f64; N_LOCAL] {
        let h = self.length;
        [
            (-6.0 + 12.0 * xi) / (h * h),
            (-4.0 + 6.0 * xi) / h,
            (6.0 - 12.0 * xi) / (h * h),
            (6.0 * xi - 2.0) / h,
        ]
    }

    /// `Σ_a dofs[a] · basis[a]`: the interpolant (or a derivative) from one of the tables above.
    pub fn combine(basis: &[f64; N_LOCAL], dofs: &[f64; N_LOCAL]) -> f64 {
        basis.iter().zip(dofs).map(|(b, d)| b * d).sum()
    }

    /// Bending stiffness `EI ∫ N_a'' N_b'' ds`:
    /// `EI/h³ [12 6h −12 6h; 6h 4h² −6h 2h²; −12 −6h 12 −6h; 6h 2h² −6h 4h²]`.
    pub fn bending(&self, ei: f64) -> [[f64; N_LOCAL]; N_LOCAL] {
        let h = self.length;
        let c = ei / (h * h * h);
        let (a, b, d, e) = (12.0 * c, 6.0 * h * c, 4.0 * h * h * c, 2.0 * h * h * c);
        [[a, b, -a, b], [b, d, -b, e], [-a, -b, a, -b], [b, e, -b, d]]
    }

    /// Consistent mass `ρ ∫ N_a N_b ds`:
    /// `ρh/420 [156 22h 54 −13h; 22h 4h² 13h −3h²; 54 13h 156 −22h; −13h −3h² −22h 4h²]`.
    pub fn mass(&self, rho: f64) -> [[f64; N_LOCAL]; N_LOCAL] {
        let h = self.length;
        let c = rho * h / 420.0;
        let h2 = h * h;
        [
            [156.0 * c, 22.0 * h * c, 54.0 * c, -13.0 * h * c],
            [22.0 * h * c, 4.0 * h2 * c, 13.0 * h * c, -3.0 * h2 * c],
            [54.0 * c, 13.0 * h * c, 156.0 * c, -22.0 * h * c],
            [-13.0 * h * c, -3.0 * h2 * c, -22.0 * h * c, 4.0 * h2 * c],
        ]
    }

    /// The augmentation (axial) matrix `r Σ_q w_q h N_a'(ξ_q) N_b'(ξ_q)` on `rule`.
    ///
    /// With [`constraint_rule`] this is the matrix of `r ∫ x'·y'` integrated at the constraint
    /// points, as the Uzawa algorithm needs; with a 3-point rule it is exact.
    pub fn axial(&self, r: f64, rule: &Rule) -> [[f64; N_LOCAL]; N_LOCAL] {
        let mut k = [[0.0; N_LOCAL]; N_LOCAL];
        for (&xi, &w) in rule.points.iter().zip(&rule.weights) {
            let d = self.first_derivatives(xi);
            let c = r * w * self.length;
            for a in 0..N_LOCAL {
                for b in 0..N_LOCAL {
                    k[a][b] += c * d[a] * d[b];
                }
            }
        }
        k
    }

    /// Consistent load `f ∫ N_a ds` of a uniform load `f` per unit length (one component):
    /// `f h [1/2, h/12, 1/2, −h/12]`.
    pub fn uniform_load(&self, f: f64) -> [f64; N_LOCAL] {
        let h = self.length;
        [
            0.5 * f * h,
            f * h * h / 12.0,
            0.5 * f * h,
            -f * h * h / 12.0,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `∫₀ʰ g(s) ds` by the 5-point rule (exact to degree 9).
    fn integrate(h: f64, g: impl Fn(f64) -> f64) -> f64 {
        let rule = gauss_legendre(5).unwrap();
        rule.points
            .iter()
            .zip(&rule.weights)
            .map(|(&xi, &w)| w * h * g(xi))
            .sum()
    }

    fn quad_form(k: &[[f64; 4]; 4], u: &[f64; 4]) -> f64 {
        (0..4)
            .map(|a| (0..4).map(|b| u[a] * k[a][b] * u[b]).sum::<f64>())
            .sum()
    }

    /// Checks `k u` against the central difference of `energy` at `u`.
    fn check_gradient(k: &[[f64; 4]; 4], u: [f64; 4], energy: impl Fn(&[f64; 4]) -> f64) {
        let scale = k.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        for a in 0..4 {
            let step = 1e-5;
            let (mut up, mut dn) = (u, u);
            up[a] += step;
            dn[a] -= step;
            let fd = (energy(&up) - energy(&dn)) / (2.0 * step);
            let exact: f64 = (0..4).map(|b| k[a][b] * u[b]).sum();
            assert!(
                (fd - exact).abs() < 1e-7 * scale,
                "row {a}: fd {fd} exact {exact}"
            );
        }
    }

    #[test]
    fn interpolates_cubics_exactly() {
        let h = 0.7;
        let e = HermiteCubic::new(h);
        let s0 = 0.3;
        let g = |s: f64| 1.5 - 2.0 * s + 0.5 * s * s - 1.25 * s * s * s;
        let dg = |s: f64| -2.0 + s - 3.75 * s * s;
        let ddg = |s: f64| 1.0 - 7.5 * s;
        let dofs = [g(s0), dg(s0), g(s0 + h), dg(s0 + h)];
        for i in 0..=10 {
            let xi = i as f64 / 10.0;
            let s = s0 + xi * h;
            let v = HermiteCubic::combine(&e.values(xi), &dofs);
            let d = HermiteCubic::combine(&e.first_derivatives(xi), &dofs);
            let dd = HermiteCubic::combine(&e.second_derivatives(xi), &dofs);
            assert!((v - g(s)).abs() < 1e-14);
            assert!((d - dg(s)).abs() < 1e-13);
            assert!((dd - ddg(s)).abs() < 1e-12);
        }
    }

    #[test]
    fn bending_energy_of_a_cubic_and_mass_totals() {
        // v = s³ on [0, h]: ½ EI ∫ (6s)² = 6 EI h³.
        let (h, ei, rho) = (0.4, 3.0, 2.5);
        let e = HermiteCubic::new(h);
        let u = [0.0, 0.0, h * h * h, 3.0 * h * h];
        assert!((0.5 * quad_form(&e.bending(ei), &u) - 6.0 * ei * h.powi(3)).abs() < 1e-13);
        // A rigid motion has no bending energy.
        assert!(quad_form(&e.bending(ei), &[1.0, 0.0, 1.0, 0.0]).abs() < 1e-12);
        assert!(quad_form(&e.bending(ei), &[0.0, 1.0, h, 1.0]).abs() < 1e-12);
        // Translation: ∫ρ = ρh; the value block sums to ρh.
        let m = e.mass(rho);
        assert!((quad_form(&m, &[1.0, 0.0, 1.0, 0.0]) - rho * h).abs() < 1e-14);
        // v = s: ∫ ρ s² = ρ h³/3.
        assert!((quad_form(&m, &[0.0, 1.0, h, 1.0]) - rho * h.powi(3) / 3.0).abs() < 1e-14);
        // Load of f = 1 on v = 1 is h; on v = s it is h²/2.
        let f = e.uniform_load(1.0);
        assert!((HermiteCubic::combine(&f, &[1.0, 0.0, 1.0, 0.0]) - h).abs() < 1e-15);
        assert!((HermiteCubic::combine(&f, &[0.0, 1.0, h, 1.0]) - 0.5 * h * h).abs() < 1e-15);
        // The 3-point axial matrix is exact: v = s² gives r ∫ (2s)² = 4 r h³/3.
        let k3 = e.axial(2.0, &gauss_legendre(3).unwrap());
        let u2 = [0.0, 0.0, h * h, 2.0 * h];
        assert!((quad_form(&k3, &u2) - 2.0 * 4.0 * h.powi(3) / 3.0).abs() < 1e-14);
    }

    #[test]
    fn every_matrix_is_the_gradient_of_its_energy() {
        let (h, ei, rho, r) = (0.9, 7.0, 1.3, 11.0);
        let e = HermiteCubic::new(h);
        let u = [0.3, -1.1, 0.8, 0.45];
        check_gradient(&e.bending(ei), u, |v| {
            integrate(h, |xi| {
                0.5 * ei * HermiteCubic::combine(&e.second_derivatives(xi), v).powi(2)
            })
        });
        check_gradient(&e.mass(rho), u, |v| {
            integrate(h, |xi| {
                0.5 * rho * HermiteCubic::combine(&e.values(xi), v).powi(2)
            })
        });
        let rule = constraint_rule();
        check_gradient(&e.axial(r, &rule), u, |v| {
            rule.points
                .iter()
                .zip(&rule.weights)
                .map(|(&xi, &w)| {
                    0.5 * r * w * h * HermiteCubic::combine(&e.first_derivatives(xi), v).powi(2)
                })
                .sum()
        });
        // The load is the gradient of ∫ f v.
        let f = 2.5;
        let load = e.uniform_load(f);
        for a in 0..4 {
            let mut unit = [0.0; 4];
            unit[a] = 1.0;
            let exact = integrate(h, |xi| f * HermiteCubic::combine(&e.values(xi), &unit));
            assert!((load[a] - exact).abs() < 1e-14);
        }
        // Symmetry.
        for m in [e.bending(ei), e.mass(rho), e.axial(r, &rule)] {
            for a in 0..4 {
                for b in 0..4 {
                    assert!((m[a][b] - m[b][a]).abs() < 1e-12 * m[a][a].abs().max(1.0));
                }
            }
        }
    }

    #[test]
    fn derivative_tables_are_derivatives_of_the_values() {
        let e = HermiteCubic::new(1.7);
        let step = 1e-6;
        for xi in [0.1, 0.5, 0.83] {
            let (p, m) = (e.values(xi + step), e.values(xi - step));
            let (dp, dm) = (
                e.first_derivatives(xi + step),
                e.first_derivatives(xi - step),
            );
            let d1 = e.first_derivatives(xi);
            let d2 = e.second_derivatives(xi);
            for a in 0..4 {
                let fd1 = (p[a] - m[a]) / (2.0 * step * e.length);
                let fd2 = (dp[a] - dm[a]) / (2.0 * step * e.length);
                assert!((fd1 - d1[a]).abs() < 1e-8);
                assert!((fd2 - d2[a]).abs() < 1e-8);
            }
        }
    }
}
