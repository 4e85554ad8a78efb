//! Projected Gauss–Seidel for the LCP `0 ≤ z ⊥ M z + q ≥ 0`.
//!
//! One sweep updates each multiplier in turn with the others fixed,
//! `z_i ← max(0, z_i − (q + M z)_i / M_ii)`. It converges for symmetric positive definite `M`
//! (and in practice for the positive semi-definite Delassus matrices of contact with a
//! feasible problem); convergence is linear, with a rate that degrades with the condition
//! number. The solve stops when the natural residual `‖min(z, M z + q)‖∞` falls to
//! `tolerance · ‖q‖∞`, else fails with [`LcpError::NotConverged`]. When `q ≥ 0` the answer
//! `z = 0` is returned at once (whatever the warm start). A row with `M_ii ≤ 0` keeps `z_i = 0`.

use nalgebra::DMatrix;

use crate::lcp::{LcpError, LcpReport, LcpSolver, check, lcp_residual};

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
        let mut residual = lcp_residual(m, q, z);
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
                if mii <= 0.0 {
                    z[i] = 0.0;
                    continue;
                }
                let mut w = q[i];
                for j in 0..n {
                    w += m[(i, j)] * z[j];
                }
                z[i] = (z[i] - w / mii).max(0.0);
            }
            sweeps += 1;
            residual = lcp_residual(m, q, z);
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
