//! The one error type of the steppers: why a stepper refused to start or to continue.
//!
//! Whether an error is the user's (exit code 2) or the run's (exit code 1) is not a property of
//! the variant but of when it happens: the driver treats errors from construction as input
//! errors and errors from a step as run failures.

use std::sync::Arc;

use fem_assembly::FactorError;
use fem_constraints::{ContactError, LcpError};

use crate::evaluation::EvalError;

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
    /// A vector of the wrong length or with a non-finite entry.
    #[error("{what} has {found} entries (or a non-finite one); expected {expected}")]
    BadData {
        /// Which vector.
        what: &'static str,
        /// Its length.
        found: usize,
        /// Expected length.
        expected: usize,
    },
    /// The step violates a stability bound.
    #[error(
        "time step dt = {dt:e} exceeds the stability bound {which}: dt < {bound:e} \
         (largest eigenvalue of M^-1 K ≈ {lambda_max:e}); {advice}"
    )]
    Unstable {
        /// Which bound, of which scheme, as named in messages (`(23) of the alpha scheme …`).
        which: &'static str,
        /// The step asked for.
        dt: f64,
        /// The bound.
        bound: f64,
        /// The estimated largest eigenvalue of `M⁻¹ K`.
        lambda_max: f64,
        /// What to do about it.
        advice: &'static str,
    },
    /// The step's matrix could not be factored.
    #[error("{0}")]
    Factorization(#[from] FactorError),
    /// Newton's method did not reach its tolerance.
    #[error(
        "Newton did not converge at step {step}: residual {residual:e} after {iterations} iterations \
         (tolerance {tolerance:e}); reduce dt or raise the iteration limit"
    )]
    NewtonDiverged {
        /// Step being computed (1-based; 0 for a scheme's start).
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
    /// The contact set does not fit the system.
    #[error("contacts: {0}")]
    Contact(#[from] ContactError),
    /// The impact LCP failed.
    #[error("impact LCP at step {step} (t = {t:e}): {source}")]
    Lcp {
        /// Step being taken.
        step: u64,
        /// Its start time.
        t: f64,
        /// The solver's error.
        source: LcpError,
    },
    /// The multiplier iteration of an augmented Lagrangian did not reach its tolerance.
    #[error(
        "the augmented-Lagrangian multipliers did not converge at step {step}: constraint residual \
         {residual:e} after {iterations} updates (tolerance {tolerance:e}); raise the iteration limit, \
         the tolerance or epsilon, or reduce dt"
    )]
    MultipliersNotConverged {
        /// Step being computed (1-based).
        step: u64,
        /// Updates done.
        iterations: usize,
        /// Constraint residual reached.
        residual: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// The system could not evaluate its force or tangent while the step was computed.
    #[error("step {step} (t = {t:e}): {source}")]
    Evaluation {
        /// Step being computed (1-based; 0 before the first step).
        step: u64,
        /// Its start time.
        t: f64,
        /// What failed.
        source: EvalError,
    },
    /// A scheme that solves needs a tangent, and the system gives none.
    #[error(
        "{scheme} needs the system's tangent, and this system gives none (it is for explicit schemes)"
    )]
    NeedsTangent {
        /// The scheme.
        scheme: &'static str,
    },
    /// An explicit scheme that does not solve needs a lumped mass.
    #[error(
        "{scheme} needs a lumped mass (it does not solve a linear system); this system's mass is consistent"
    )]
    NeedsLumpedMass {
        /// The scheme.
        scheme: &'static str,
    },
    /// A scheme needs a linear system for what it was asked to do.
    #[error("{scheme} needs a linear system {why}; this system is nonlinear")]
    NeedsLinearSystem {
        /// The scheme.
        scheme: &'static str,
        /// What needs it.
        why: &'static str,
    },
    /// The Jacobian of a step's equations is singular.
    #[error("the Jacobian of the equations of step {step} is singular")]
    SingularJacobian {
        /// Step being computed (1-based; 0 for a scheme's start).
        step: u64,
    },
    /// A matrix handed to a step component does not have the pattern it was built with.
    #[error("{what}: the step matrix's pattern is fixed when it is built")]
    PatternMismatch {
        /// What was handed over.
        what: &'static str,
    },
    /// A failure of a model's own stepper, in the model's own error type (a caller may
    /// downcast [`ModelError::source`]), which says where it happened in its own words.
    #[error("{source}")]
    Model {
        /// Step being computed (1-based; 0 before the first step).
        step: u64,
        /// Its start time.
        t: f64,
        /// The model's error.
        source: ModelError,
    },
}

/// A model's own error, shared (so that errors stay cheap to clone) and comparable by what it
/// says.
#[derive(Clone, Debug)]
pub struct ModelError(pub Arc<dyn std::error::Error + Send + Sync>);

impl ModelError {
    /// Wraps a model's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Arc::new(error))
    }

    /// The model's error, to downcast.
    pub fn source(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self.0.as_ref()
    }
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ModelError {}

impl PartialEq for ModelError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl StepError {
    /// A model's own error at step `step` (1-based) from `t`.
    pub fn model(step: u64, t: f64, error: impl std::error::Error + Send + Sync + 'static) -> Self {
        StepError::Model {
            step,
            t,
            source: ModelError::new(error),
        }
    }
}

impl From<fem_assembly::SolverError> for StepError {
    fn from(source: fem_assembly::SolverError) -> Self {
        StepError::Factorization(FactorError {
            method: fem_assembly::FactorMethod::Cholesky,
            source,
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

/// Refuses a vector of the wrong length or with non-finite entries.
pub(crate) fn check_vector(what: &'static str, v: &[f64], n: usize) -> Result<(), StepError> {
    if v.len() != n || v.iter().any(|e| !e.is_finite()) {
        return Err(StepError::BadData {
            what,
            found: v.len(),
            expected: n,
        });
    }
    Ok(())
}

/// Refuses initial position and velocity vectors of the wrong length or with non-finite entries.
pub(crate) fn check_initial(n: usize, x0: &[f64], v0: &[f64]) -> Result<(), StepError> {
    check_vector("initial position", x0, n)?;
    check_vector("initial velocity", v0, n)
}
