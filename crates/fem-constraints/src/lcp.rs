//! The linear complementarity problem and the interface of its solvers.
//!
//! Given a square `M` and a vector `q`, find `z` with
//!
//! ```text
//! z ≥ 0,   w = M z + q ≥ 0,   zᵀ w = 0.
//! ```
//!
//! The residual reported by every solver is the natural-map residual
//! `r(z) = ‖min(z, M z + q)‖∞`, zero exactly at a solution.

use nalgebra::DMatrix;

/// What a solve did: the work and the constraint residual at the returned multipliers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LcpReport {
    /// Pivots (Lemke) or sweeps (projected Gauss–Seidel).
    pub iterations: usize,
    /// `‖min(z, M z + q)‖∞` at the returned `z`.
    pub residual: f64,
}

/// Why an LCP solve failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LcpError {
    /// `M`, `q` and `z` do not have matching sizes.
    #[error("LCP sizes do not match: M is {rows}x{cols}, q has {q} entries, z has {z}")]
    DimensionMismatch {
        /// Rows of `M`.
        rows: usize,
        /// Columns of `M`.
        cols: usize,
        /// Length of `q`.
        q: usize,
        /// Length of `z`.
        z: usize,
    },
    /// A non-finite entry in `M` or `q`.
    #[error("LCP data has a non-finite entry")]
    NonFinite,
    /// Lemke's method ended on a secondary ray: the LCP has no solution (for a positive
    /// semi-definite `M`, the constraints are infeasible).
    #[error(
        "Lemke: ray termination after {pivots} pivots (entering variable {entering}): the LCP has no solution"
    )]
    RayTermination {
        /// Pivots done.
        pivots: usize,
        /// Index of the entering variable in `[w, z, z0]` numbering.
        entering: usize,
    },
    /// Lemke's method exceeded its pivot budget.
    #[error("Lemke: no solution after {pivots} pivots (limit reached)")]
    PivotLimit {
        /// Pivots done.
        pivots: usize,
    },
    /// Projected Gauss–Seidel did not reach its tolerance.
    #[error(
        "projected Gauss-Seidel: residual {residual:e} after {iterations} sweeps, tolerance {tolerance:e}"
    )]
    NotConverged {
        /// Sweeps done.
        iterations: usize,
        /// Residual reached.
        residual: f64,
        /// Residual asked for (absolute, already scaled).
        tolerance: f64,
    },
}

/// One interface for the LCP solvers: multipliers out, report (with the residual) back.
pub trait LcpSolver: std::fmt::Debug + Send {
    /// Solves `0 ≤ z ⊥ M z + q ≥ 0`. On entry `z` may hold a warm start (iterative solvers use
    /// it, pivoting ones ignore it); on success it holds the solution.
    fn solve(&mut self, m: &DMatrix<f64>, q: &[f64], z: &mut [f64]) -> Result<LcpReport, LcpError>;

    /// The method's name, snake_case, as selected in an input file.
    fn name(&self) -> &'static str;
}

/// The LCP methods by name, for configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LcpMethod {
    /// [`crate::Lemke`] with its defaults.
    Lemke,
    /// [`crate::ProjectedGaussSeidel`] with this tolerance and sweep limit.
    ProjectedGaussSeidel {
        /// Relative tolerance (see [`crate::ProjectedGaussSeidel::tolerance`]).
        tolerance: f64,
        /// Sweep limit.
        max_iterations: usize,
    },
}

impl LcpMethod {
    /// A boxed solver of this method.
    pub fn solver(&self) -> Box<dyn LcpSolver> {
        match *self {
            LcpMethod::Lemke => Box::new(crate::Lemke::default()),
            LcpMethod::ProjectedGaussSeidel {
                tolerance,
                max_iterations,
            } => Box::new(crate::ProjectedGaussSeidel {
                tolerance,
                max_iterations,
            }),
        }
    }
}

/// `‖min(z, M z + q)‖∞`, the natural-map residual of the LCP (zero exactly at a solution).
pub fn lcp_residual(m: &DMatrix<f64>, q: &[f64], z: &[f64]) -> f64 {
    let n = q.len();
    let mut r: f64 = 0.0;
    for i in 0..n {
        let mut w = q[i];
        for j in 0..n {
            w += m[(i, j)] * z[j];
        }
        r = r.max(z[i].min(w).abs());
    }
    r
}

/// Checks sizes and finiteness; shared by the solvers.
pub(crate) fn check(m: &DMatrix<f64>, q: &[f64], z: &[f64]) -> Result<(), LcpError> {
    if m.nrows() != q.len() || m.ncols() != q.len() || z.len() != q.len() {
        return Err(LcpError::DimensionMismatch {
            rows: m.nrows(),
            cols: m.ncols(),
            q: q.len(),
            z: z.len(),
        });
    }
    if m.iter().chain(q).any(|v| !v.is_finite()) {
        return Err(LcpError::NonFinite);
    }
    Ok(())
}
