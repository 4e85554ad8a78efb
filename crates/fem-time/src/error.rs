//! The error type shared by the steppers.

use fem_assembly::SolverError;

/// Why a stepper refused to start or to continue.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StepError {
    /// A parameter out of its range.
    #[error("{name} = {value} is out of range: expected {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Given value.
        value: f64,
        /// What was expected.
        expected: &'static str,
    },
    /// Initial data of the wrong length or not finite.
    #[error(
        "initial {what} has {found} entries (or a non-finite one); the system has {expected} dofs"
    )]
    BadInitialData {
        /// Which vector.
        what: &'static str,
        /// Its length.
        found: usize,
        /// Number of dofs.
        expected: usize,
    },
    /// The step violates the stability bound (23).
    #[error(
        "time step dt = {dt:e} exceeds the stability bound (23) of the alpha scheme with alpha = {alpha}: \
         dt < 2/sqrt(lambda_max (1 - 4 alpha)) = {bound:e} (lambda_max of M^-1 A ≈ {lambda_max:e}); \
         reduce dt below {bound:e} or use alpha = 0.25 (unconditionally stable)"
    )]
    Unstable {
        /// The step asked for.
        dt: f64,
        /// The bound.
        bound: f64,
        /// The estimated largest eigenvalue of `M⁻¹ A`.
        lambda_max: f64,
        /// The scheme's alpha.
        alpha: f64,
    },
    /// The linear solver refused the scheme's matrix.
    #[error("linear solver: {0}")]
    Solver(#[from] SolverError),
    /// Newton's method did not reach its tolerance.
    #[error(
        "Newton did not converge at step {step}: residual {residual:e} after {iterations} iterations \
         (tolerance {tolerance:e}); reduce dt or raise the iteration limit"
    )]
    NewtonDiverged {
        /// Step being computed (1-based).
        step: u64,
        /// Iterations done.
        iterations: usize,
        /// Residual norm reached.
        residual: f64,
        /// The tolerance it had to reach.
        tolerance: f64,
    },
    /// Dirichlet conditions name a dof the system does not have.
    #[error("a Dirichlet condition names dof {dof}, but the system has {n_dofs} dofs")]
    DirichletOutOfRange {
        /// The dof.
        dof: usize,
        /// The system size.
        n_dofs: usize,
    },
    /// The state stopped being finite.
    #[error("the solution became non-finite at step {step} (t = {t:e})")]
    NonFinite {
        /// Step index reached.
        step: u64,
        /// Its time.
        t: f64,
    },
}

/// Refuses a time step that is not positive and finite.
pub(crate) fn check_dt(dt: f64) -> Result<(), StepError> {
    if dt > 0.0 && dt.is_finite() {
        Ok(())
    } else {
        Err(StepError::InvalidParameter {
            name: "dt",
            value: dt,
            expected: "a positive finite time step",
        })
    }
}

/// Refuses the alpha scheme's parameter outside `[0, ½]`.
pub(crate) fn check_alpha(alpha: f64) -> Result<(), StepError> {
    if (0.0..=0.5).contains(&alpha) {
        Ok(())
    } else {
        Err(StepError::InvalidParameter {
            name: "alpha",
            value: alpha,
            expected: "0 <= alpha <= 0.5",
        })
    }
}

/// Refuses initial position and velocity vectors of the wrong length or with non-finite entries.
pub(crate) fn check_initial(n: usize, x0: &[f64], v0: &[f64]) -> Result<(), StepError> {
    for (what, v) in [("position", x0), ("velocity", v0)] {
        if v.len() != n || v.iter().any(|e| !e.is_finite()) {
            return Err(StepError::BadInitialData {
                what,
                found: v.len(),
                expected: n,
            });
        }
    }
    Ok(())
}
