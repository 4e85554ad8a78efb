//! Lemke's complementary pivoting method with the lexicographic ratio test.
//!
//! The LCP `w = M z + q`, `0 ≤ z ⊥ w ≥ 0` is augmented with an artificial variable `z0` and
//! the covering vector `d = (1, …, 1)`:
//!
//! ```text
//! w − M z − d z0 = q,     w, z, z0 ≥ 0,     w_i z_i = 0.
//! ```
//!
//! Starting from the basis `w` (if `q ≥ 0`, `z = 0` is the answer), `z0` enters at the most
//! negative `q_i`, and each pivot brings in the complement of the variable that just left.
//! The method stops when `z0` leaves (a solution) or when the entering column has no positive
//! entry (a secondary ray: for `M` copositive-plus, e.g. positive semi-definite, the LCP is
//! infeasible).
//!
//! # Degeneracy
//! Ties in the ratio test (a zero right-hand side, duplicated contacts, zero rows of `M`) can
//! make the plain method cycle. The ratio test here is lexicographic: among the rows with the
//! smallest ratio `b_i / a_i` (within a relative tie tolerance), `z0`'s row leaves if it is
//! one of them; otherwise the row whose `(B⁻¹)_i / a_i` is lexicographically smallest leaves.
//! `B⁻¹` is read off the tableau's `w` columns (the initial basis is the identity), so the
//! rule costs nothing extra, and it makes the method finite (Cottle, Pang & Stone, *The Linear
//! Complementarity Problem*, 1992, §4.4).
//!
//! The tableau is dense, `n × (2n + 2)`; each pivot costs `O(n²)`.

use nalgebra::DMatrix;

use crate::lcp::{LcpError, LcpReport, LcpSolver, check, lcp_residual};

/// Lemke's method (exact up to round-off, finite thanks to the lexicographic ratio test).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lemke {
    /// Pivot limit; `None` for `100 (n + 1)`.
    pub max_pivots: Option<usize>,
    /// Relative tolerance under which two ratios tie and a column entry counts as zero.
    pub tie_tolerance: f64,
}

impl Default for Lemke {
    fn default() -> Self {
        Self {
            max_pivots: None,
            tie_tolerance: 1e-12,
        }
    }
}

impl LcpSolver for Lemke {
    fn solve(&mut self, m: &DMatrix<f64>, q: &[f64], z: &mut [f64]) -> Result<LcpReport, LcpError> {
        check(m, q, z)?;
        let n = q.len();
        z.fill(0.0);
        if q.iter().all(|&qi| qi >= 0.0) {
            return Ok(LcpReport {
                iterations: 0,
                residual: 0.0,
            });
        }
        let width = 2 * n + 2;
        let z0 = 2 * n;
        let rhs = 2 * n + 1;
        let mut t = vec![0.0; n * width];
        for i in 0..n {
            let row = &mut t[i * width..(i + 1) * width];
            row[i] = 1.0;
            for j in 0..n {
                row[n + j] = -m[(i, j)];
            }
            row[z0] = -1.0;
            row[rhs] = q[i];
        }
        let mut basis: Vec<usize> = (0..n).collect();

        // First pivot: z0 enters where q is most negative; ties go to the largest index,
        // which is the lexicographic choice for the identity basis.
        let mut r = 0;
        for i in 0..n {
            if q[i] <= q[r] {
                r = i;
            }
        }
        pivot(&mut t, width, n, r, z0);
        let mut leaving = basis[r];
        basis[r] = z0;
        let max_pivots = self.max_pivots.unwrap_or(100 * (n + 1));
        let mut pivots = 1;
        let tol = self.tie_tolerance;
        let mut ties: Vec<usize> = Vec::with_capacity(n);
        loop {
            let entering = if leaving < n {
                leaving + n
            } else {
                leaving - n
            };
            let col_max = (0..n).fold(0.0f64, |a, i| a.max(t[i * width + entering].abs()));
            let pivot_floor = tol * col_max.max(f64::MIN_POSITIVE);
            let mut min_ratio = f64::INFINITY;
            for i in 0..n {
                let a = t[i * width + entering];
                if a > pivot_floor {
                    min_ratio = min_ratio.min(t[i * width + rhs].max(0.0) / a);
                }
            }
            if !min_ratio.is_finite() {
                return Err(LcpError::RayTermination { pivots, entering });
            }
            ties.clear();
            let slack = tol * (1.0 + min_ratio.abs());
            for i in 0..n {
                let a = t[i * width + entering];
                if a > pivot_floor && t[i * width + rhs].max(0.0) / a <= min_ratio + slack {
                    ties.push(i);
                }
            }
            let row = if let Some(&i) = ties.iter().find(|&&i| basis[i] == z0) {
                i
            } else {
                lexicographic_min(&t, width, n, entering, &mut ties, tol)
            };
            pivot(&mut t, width, n, row, entering);
            leaving = basis[row];
            basis[row] = entering;
            pivots += 1;
            if leaving == z0 {
                break;
            }
            if pivots >= max_pivots {
                return Err(LcpError::PivotLimit { pivots });
            }
        }
        for (i, &b) in basis.iter().enumerate() {
            if (n..2 * n).contains(&b) {
                z[b - n] = t[i * width + rhs].max(0.0);
            }
        }
        Ok(LcpReport {
            iterations: pivots,
            residual: lcp_residual(m, q, z),
        })
    }

    fn name(&self) -> &'static str {
        "lemke"
    }
}

/// Among the tied rows, the one with the lexicographically smallest `(B⁻¹)_i / a_i`.
fn lexicographic_min(
    t: &[f64],
    width: usize,
    n: usize,
    entering: usize,
    ties: &mut Vec<usize>,
    tol: f64,
) -> usize {
    for k in 0..n {
        if ties.len() == 1 {
            break;
        }
        let value = |i: usize| t[i * width + k] / t[i * width + entering];
        let best = ties.iter().map(|&i| value(i)).fold(f64::INFINITY, f64::min);
        let scale = ties.iter().map(|&i| value(i).abs()).fold(0.0, f64::max);
        ties.retain(|&i| value(i) <= best + tol * scale);
    }
    ties[0]
}

/// Gauss–Jordan pivot of the tableau on `(r, c)`.
fn pivot(t: &mut [f64], width: usize, n: usize, r: usize, c: usize) {
    let p = t[r * width + c];
    for v in &mut t[r * width..(r + 1) * width] {
        *v /= p;
    }
    let (before, rest) = t.split_at_mut(r * width);
    let (pivot_row, after) = rest.split_at_mut(width);
    for row in before
        .chunks_exact_mut(width)
        .chain(after.chunks_exact_mut(width))
    {
        let f = row[c];
        if f != 0.0 {
            for (v, pr) in row.iter_mut().zip(pivot_row.iter()) {
                *v -= f * pr;
            }
            row[c] = 0.0;
        }
    }
    debug_assert_eq!(t.len(), n * width);
}
