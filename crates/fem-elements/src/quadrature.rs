//! Gauss–Legendre quadrature on the reference interval `[0, 1]`.
//!
//! An `n`-point rule integrates polynomials of degree `2n - 1` exactly. Points and weights are
//! tabulated for `n = 1..=5` (enough for Hermite cubics squared and products of their
//! second derivatives) and mapped from the classical `[-1, 1]` values.

/// A quadrature rule on `[0, 1]`: `∫₀¹ f ≈ Σ weights[q] f(points[q])`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// Abscissae in `[0, 1]`, increasing.
    pub points: Vec<f64>,
    /// Weights, summing to 1.
    pub weights: Vec<f64>,
}

impl Rule {
    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.points.len()
    }

    /// Highest polynomial degree integrated exactly (`2n - 1`).
    pub fn exact_degree(&self) -> usize {
        2 * self.n_points() - 1
    }
}

/// The `n`-point Gauss–Legendre rule on `[0, 1]`, for `1 <= n <= 5`; `None` otherwise.
pub fn gauss_legendre(n: usize) -> Option<Rule> {
    // Classical points and weights on [-1, 1] (positive half; the rules are symmetric).
    let (x, w): (&[f64], &[f64]) = match n {
        1 => (&[0.0], &[2.0]),
        2 => (&[0.577_350_269_189_625_8], &[1.0]),
        3 => (&[0.0, 0.774_596_669_241_483_4], &[8.0 / 9.0, 5.0 / 9.0]),
        4 => (
            &[0.339_981_043_584_856_3, 0.861_136_311_594_052_6],
            &[0.652_145_154_862_546_1, 0.347_854_845_137_453_9],
        ),
        5 => (
            &[0.0, 0.538_469_310_105_683_1, 0.906_179_845_938_664],
            &[
                0.568_888_888_888_888_9,
                0.478_628_670_499_366_5,
                0.236_926_885_056_189_1,
            ],
        ),
        _ => return None,
    };
    let mut pairs: Vec<(f64, f64)> = Vec::with_capacity(n);
    for (&xi, &wi) in x.iter().zip(w) {
        pairs.push((xi, wi));
        if xi != 0.0 {
            pairs.push((-xi, wi));
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Rule {
        points: pairs.iter().map(|p| 0.5 * (p.0 + 1.0)).collect(),
        weights: pairs.iter().map(|p| 0.5 * p.1).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_integrate_monomials_up_to_their_degree() {
        for n in 1..=5 {
            let rule = gauss_legendre(n).unwrap();
            assert_eq!(rule.n_points(), n);
            for degree in 0..=rule.exact_degree() {
                let approx: f64 = rule
                    .points
                    .iter()
                    .zip(&rule.weights)
                    .map(|(x, w)| w * x.powi(degree as i32))
                    .sum();
                let exact = 1.0 / (degree as f64 + 1.0);
                assert!((approx - exact).abs() < 1e-15, "n={n} degree={degree}");
            }
            // One degree higher is not exact: the table is not accidentally a larger rule.
            let d = rule.exact_degree() + 1;
            let approx: f64 = rule
                .points
                .iter()
                .zip(&rule.weights)
                .map(|(x, w)| w * x.powi(d as i32))
                .sum();
            assert!((approx - 1.0 / (d as f64 + 1.0)).abs() > 1e-6);
        }
        assert!(gauss_legendre(0).is_none());
        assert!(gauss_legendre(6).is_none());
    }
}
