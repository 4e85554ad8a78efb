//! Projected Gauss–Seidel for the LCP `0 ≤ z ⊥ M z + q ≥ 0`.
//!
//! One sweep updates each multiplier in turn with the others fixed,
//! `z_i ← max(0, z_i − (q + M z)_i / M_ii)`. It converges for symmetric positive definite `M`
//! (and in practice for the positive semi-definite Delassus matrices of contact with a
//! feasible problem); convergence is linear, with a rate that degrades with the condition
//! number. The solve stops when the natural residual `‖min(z, M z + q)‖∞` falls to
//! `tolerance · ‖q‖∞`, else fails with [`LcpError::NotConverged`]. When `q ≥ 0` the answer
//! `z = 0` is returned at once (whatever the warm start). A row with `M_ii ≤ 0` keeps `z_i = 0`.
//!
//! # Implementation
//! The solver keeps `w = M z + q` up to date instead of forming row products: when a sweep
//! changes `z_i` by `δ`, it adds `δ M_{:,i}` to `w` (a contiguous column of the column-major
//! `M`; nothing when `z_i` does not change, as for the many contacts that stay open). The
//! iterates are those of the textbook sweep `z_i ← max(0, z_i − (q + M z)_i / M_ii)` up to
//! round-off, and the residual after a sweep is `O(n)` from `w` instead of an `O(n²)` product.
//! To keep the round-off of the updates from accumulating, `w` is recomputed exactly every
//! [`REFRESH_SWEEPS`] sweeps and before the solve stops: the returned residual is always that
//! of the exact `M z + q`.

use nalgebra::DMatrix;

use crate::lcp::{LcpError, LcpReport, LcpSolver, check};

/// Sweeps between exact recomputations of `w = M z + q` (see the module doc).
pub const REFRESH_SWEEPS: usize = 32;

/// `w = M z + q`, exactly (row products in the order of [`crate::lcp::lcp_residual`]), and
/// returns the natural residual `‖min(z, w)‖∞`.
fn exact_w(m: &DMatrix<f64>, q: &[f64], z: &[f64], w: &mut [f64]) -> f64 {
    for (i, wi) in w.iter_mut().enumerate() {
        let mut s = q[i];
        for (j, zj) in z.iter().enumerate() {
            s += m[(i, j)] * zj;
        }
        *wi = s;
    }
    natural_residual(z, w)
}

/// `‖min(z, w)‖∞`.
fn natural_residual(z: &[f64], w: &[f64]) -> f64 {
    z.iter()
        .zip(w)
        .fold(0.0f64, |r, (z, w)| r.max(z.min(*w).abs()))
}

/// Projected Gauss–Seidel with a relative stopping tolerance and a sweep limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProjectedGaussSeidel {
    /// Stop when `‖min(z, Mz + q)‖∞ ≤ tolerance · ‖q‖∞`.
    pub tolerance: f64,
    /// Sweep limit.
    pub max_iterations: usize,
}

impl Default for ProjectedGaussSeidel {
    /// `tolerance = 1e-12`, `max_iterations = 100_000`.
    fn default() -> Self {
        Self {
            tolerance: 1e-12,
            max_iterations: 100_000,
        }
    }
}

impl LcpSolver for ProjectedGaussSeidel {
    fn solve(&mut self, m: &DMatrix<f64>, q: &[f64], z: &mut [f64]) -> Result<LcpReport, LcpError> {
        check(m, q, z)?;
        let n = q.len();
        if q.iter().all(|&qi| qi >= 0.0) {
            z.fill(0.0);
            return Ok(LcpReport::default());
        }
        let q_norm = q.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let target = self.tolerance * q_norm;
        for zi in z.iter_mut() {
            if !(zi.is_finite() && *zi > 0.0) {
                *zi = 0.0;
            }
        }
        let mut w = vec![0.0; n];
        let mut residual = exact_w(m, q, z, &mut w);
        let mut sweeps = 0;
        while residual > target {
            if sweeps >= self.max_iterations {
                return Err(LcpError::NotConverged {
                    iterations: sweeps,
                    residual,
                    tolerance: target,
                });
            }
            for i in 0..n {
                let mii = m[(i, i)];
                let zi = if mii <= 0.0 {
                    0.0
                } else {
                    (z[i] - w[i] / mii).max(0.0)
                };
                let delta = zi - z[i];
                if delta != 0.0 {
                    z[i] = zi;
                    w.iter_mut()
                        .zip(m.column(i).iter())
                        .for_each(|(w, m)| *w += m * delta);
                }
            }
            sweeps += 1;
            residual = natural_residual(z, &w);
            if residual <= target || sweeps % REFRESH_SWEEPS == 0 {
                // Refresh, and confirm convergence on the exact w (sweeping on from it if
                // round-off fooled the check).
                residual = exact_w(m, q, z, &mut w);
            }
        }
        Ok(LcpReport {
            iterations: sweeps,
            residual,
        })
    }

    fn name(&self) -> &'static str {
        "projected_gauss_seidel"
    }
}
