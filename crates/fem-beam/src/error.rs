//! The error type of the beam solvers.

use fem_assembly::SolverError;

/// Why a beam model, solve or step was refused or failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BeamError {
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
    /// A state of the wrong size.
    #[error("{what} has {found} entries; the model needs {expected}")]
    BadState {
        /// Which input.
        what: &'static str,
        /// Its size.
        found: usize,
        /// The model's size.
        expected: usize,
    },
    /// A static problem without any prescribed end position has no unique solution.
    #[error("the static problem needs at least one pinned or clamped end")]
    NoSupport,
    /// The linear solver refused the matrix.
    #[error("linear solver: {0}")]
    Solver(#[from] SolverError),
    /// Uzawa did not reach its tolerances.
    #[error(
        "Uzawa did not converge at step {step}: constraint residual {constraint_residual:e}, \
         change {change:e} after {iterations} iterations; raise max_iterations, enable Anderson \
         acceleration or change the augmentation parameter r"
    )]
    UzawaNotConverged {
        /// Time step (0 for a static solve).
        step: u64,
        /// Iterations done.
        iterations: usize,
        /// `‖x' − p‖` reached.
        constraint_residual: f64,
        /// Relative change of the iterate reached.
        change: f64,
    },
    /// Newton did not reach its tolerance (penalty scheme).
    #[error(
        "Newton did not converge at step {step}: residual {residual:e} after {iterations} \
         iterations (tolerance {tolerance:e}); reduce dt"
    )]
    NewtonDiverged {
        /// Time step.
        step: u64,
        /// Iterations done.
        iterations: usize,
        /// Residual reached.
        residual: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// The state stopped being finite.
    #[error("the solution became non-finite at step {step}")]
    NonFinite {
        /// Step index.
        step: u64,
    },
}
