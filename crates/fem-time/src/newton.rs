//! Newton's method for the nonlinear equations of an implicit step, `R(y) = 0`.
//!
//! The problem ([`NonlinearProblem`]) gives the residual and factors its own Jacobian (with the
//! stepper's step-matrix component for sparse systems, by dense LU for small ones:
//! [`DenseJacobian`]), so Newton's method itself is only the iteration: each iteration solves
//! `J Δy = −R` and takes the largest step `y + t Δy`, `t ∈ {1, ½, ¼, …}` (at most
//! [`NewtonSolver::max_line_search_cuts`] halvings) that decreases `‖R‖₂`; when no halving
//! decreases it, the full step is taken (plain Newton).
//!
//! Converged when `‖R‖∞ ≤ absolute_tolerance + relative_tolerance · scale`, with `scale` given
//! by the caller (the size of the forces in its equation, see [`NewtonSettings`]). Failure is
//! [`StepError::NewtonDiverged`] with the step, the iterations, the residual and the tolerance.

use nalgebra::{DMatrix, DVector, linalg::LU};

use crate::{NewtonSettings, StepError};

/// Equations `R(y) = 0` of `n_unknowns()` unknowns, with a Jacobian the problem factors itself.
pub trait NonlinearProblem {
    /// Number of unknowns (and of equations).
    fn n_unknowns(&self) -> usize;
    /// Writes `R(y)` into `r` (overwriting it); fails when the system cannot be evaluated at
    /// `y` (a line-search trial that fails is rejected, not fatal).
    fn residual(&mut self, y: &[f64], r: &mut [f64]) -> Result<(), StepError>;
    /// Forms and factors the Jacobian `∂R/∂y` at `y` for the solves that follow.
    fn factor_jacobian(&mut self, y: &[f64]) -> Result<(), StepError>;
    /// Solves `J Δ = b` in place with the Jacobian factored last.
    fn solve_jacobian(&self, b: &mut [f64]);
}

/// A small dense Jacobian factored by LU with partial pivoting, for problems whose Jacobian is
/// not worth a sparse matrix.
#[derive(Clone, Debug, Default)]
pub struct DenseJacobian {
    lu: Option<LU<f64, nalgebra::Dyn, nalgebra::Dyn>>,
}

impl DenseJacobian {
    /// Factors `j`; a singular matrix is refused.
    pub fn factor(&mut self, j: DMatrix<f64>) -> Result<(), StepError> {
        let lu = j.lu();
        if !lu.is_invertible() {
            return Err(StepError::SingularJacobian { step: 0 });
        }
        self.lu = Some(lu);
        Ok(())
    }

    /// Solves `J Δ = b` in place.
    pub fn solve(&self, b: &mut [f64]) {
        let lu = self.lu.as_ref().expect("factored before solving");
        let x = lu
            .solve(&DVector::from_column_slice(b))
            .expect("an invertible factor solves");
        b.copy_from_slice(x.as_slice());
    }
}

/// What one Newton solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonReport {
    /// Newton iterations (linear solves); 0 when the initial guess already converged.
    pub iterations: usize,
    /// `‖R‖∞` at the returned `y`.
    pub residual: f64,
    /// The tolerance `absolute + relative · scale` it had to reach.
    pub tolerance: f64,
    /// Line-search halvings taken over all iterations.
    pub line_search_cuts: usize,
}

/// Newton's method with a backtracking line search.
#[derive(Debug)]
pub struct NewtonSolver {
    /// Iteration limit and tolerances.
    pub settings: NewtonSettings,
    /// Halvings of the step tried per iteration before the full step is taken anyway.
    pub max_line_search_cuts: usize,
    residual: Vec<f64>,
    trial: Vec<f64>,
    trial_residual: Vec<f64>,
}

impl NewtonSolver {
    /// A solver with these settings and up to 8 line-search halvings.
    pub fn new(settings: NewtonSettings) -> Self {
        Self {
            settings,
            max_line_search_cuts: 8,
            residual: Vec::new(),
            trial: Vec::new(),
            trial_residual: Vec::new(),
        }
    }

    /// Solves `R(y) = 0` from the initial guess in `y`, which holds the solution on success.
    /// `scale` multiplies the relative tolerance; `step` only labels the error.
    pub fn solve<P: NonlinearProblem + ?Sized>(
        &mut self,
        problem: &mut P,
        y: &mut [f64],
        scale: f64,
        step: u64,
    ) -> Result<NewtonReport, StepError> {
        let n = problem.n_unknowns();
        self.residual.resize(n, 0.0);
        self.trial.resize(n, 0.0);
        self.trial_residual.resize(n, 0.0);
        let tolerance = self.settings.absolute_tolerance + self.settings.relative_tolerance * scale;
        problem.residual(y, &mut self.residual)?;
        let mut norm = inf_norm(&self.residual);
        let mut report = NewtonReport {
            iterations: 0,
            residual: norm,
            tolerance,
            line_search_cuts: 0,
        };
        loop {
            if !norm.is_finite() {
                return Err(StepError::NewtonDiverged {
                    step,
                    iterations: report.iterations,
                    residual: norm,
                    tolerance,
                });
            }
            if norm <= tolerance {
                report.residual = norm;
                return Ok(report);
            }
            if report.iterations >= self.settings.max_iterations {
                return Err(StepError::NewtonDiverged {
                    step,
                    iterations: report.iterations,
                    residual: norm,
                    tolerance,
                });
            }
            report.iterations += 1;
            // Δy = −J⁻¹ R.
            let mut delta: Vec<f64> = self.residual.iter().map(|r| -r).collect();
            problem.factor_jacobian(y).map_err(|e| match e {
                StepError::SingularJacobian { .. } => StepError::SingularJacobian { step },
                other => other,
            })?;
            problem.solve_jacobian(&mut delta);
            let merit = two_norm(&self.residual);
            let mut t = 1.0;
            let mut accepted = false;
            for cut in 0..=self.max_line_search_cuts {
                for i in 0..n {
                    self.trial[i] = y[i] + t * delta[i];
                }
                let evaluated = problem.residual(&self.trial, &mut self.trial_residual);
                let trial_merit = two_norm(&self.trial_residual);
                if evaluated.is_ok()
                    && trial_merit.is_finite()
                    && trial_merit < (1.0 - 1e-4 * t) * merit
                {
                    report.line_search_cuts += cut;
                    accepted = true;
                    break;
                }
                t *= 0.5;
            }
            if !accepted {
                for i in 0..n {
                    self.trial[i] = y[i] + delta[i];
                }
                problem.residual(&self.trial, &mut self.trial_residual)?;
            }
            y.copy_from_slice(&self.trial);
            std::mem::swap(&mut self.residual, &mut self.trial_residual);
            norm = inf_norm(&self.residual);
        }
    }
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(
        0.0f64,
        |m, x| {
            if x.is_nan() { f64::NAN } else { m.max(x.abs()) }
        },
    )
}

fn two_norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The Jacobian of `residual` at `y` by central differences, `h_j = ∛ε_mach · max(1, |y_j|)`:
/// for small systems whose analytic Jacobian is not worth writing (truncation error
/// `O(h²)`, round-off `O(ε_mach / h)`, both about `1e-11` relative).
pub fn central_difference_jacobian(
    n: usize,
    y: &[f64],
    mut residual: impl FnMut(&[f64], &mut [f64]),
) -> DMatrix<f64> {
    let mut j = DMatrix::zeros(n, n);
    let mut yp = y.to_vec();
    let mut rp = vec![0.0; n];
    let mut rm = vec![0.0; n];
    for c in 0..n {
        let h = f64::EPSILON.cbrt() * y[c].abs().max(1.0);
        yp[c] = y[c] + h;
        residual(&yp, &mut rp);
        yp[c] = y[c] - h;
        residual(&yp, &mut rm);
        yp[c] = y[c];
        for r in 0..n {
            j[(r, c)] = (rp[r] - rm[r]) / (2.0 * h);
        }
    }
    j
}
