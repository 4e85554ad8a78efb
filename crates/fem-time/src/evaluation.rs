//! Why a system could not evaluate its force or tangent, and what kind of tangent it has.
//!
//! A system's evaluations are fallible ([`crate::SecondOrderSystem::internal_force`] returns a
//! `Result`): a cell turned inside out, a value that is not finite, or a failure of the model's
//! own is an [`EvalError`] the stepper passes on with the step it was computing
//! ([`crate::StepError::Evaluation`]), never a NaN for the caller to discover.

use fem_assembly::Symmetry;

use crate::error::ModelError;

/// Why an evaluation of a system failed.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A cell of the mesh turned inside out: `J = det F ≤ 0` (or not a number) at one of its
    /// quadrature points.
    #[error(
        "{element} cell {cell} is inverted by the displacement (J = det F <= 0 or NaN at a quadrature point)"
    )]
    InvertedCell {
        /// The element kind (`hex8`, `tet4`…).
        element: &'static str,
        /// The cell (the lowest index among the inverted ones).
        cell: usize,
    },
    /// A value that is not finite.
    #[error("the {what} is not finite at dof {dof}")]
    NonFinite {
        /// What was evaluated (`internal force`, `tangent`…).
        what: &'static str,
        /// The first dof where it is not.
        dof: usize,
    },
    /// The system gives no tangent ([`TangentKind::NotProvided`]) and the scheme needs one.
    #[error("the system gives no tangent (it is for explicit schemes only)")]
    NoTangent,
    /// The evaluation failed on another process of a distributed body (that process names
    /// the cause).
    #[error("the evaluation failed on another process")]
    Elsewhere,
    /// The tangent's pattern changed between evaluations (the stepper contract forbids it).
    #[error("the tangent's sparsity pattern changed between evaluations")]
    PatternChanged,
    /// A failure of the model's own, in its own type (a caller may downcast it).
    #[error("{0}")]
    Model(ModelError),
}

impl EvalError {
    /// A model's own error.
    pub fn model(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        EvalError::Model(ModelError::new(error))
    }

    /// Refuses `values` with a non-finite entry, naming `what` and the first such dof.
    pub fn check_finite(what: &'static str, values: &[f64]) -> Result<(), EvalError> {
        match values.iter().position(|v| !v.is_finite()) {
            None => Ok(()),
            Some(dof) => Err(EvalError::NonFinite { what, dof }),
        }
    }
}

impl PartialEq for EvalError {
    fn eq(&self, other: &Self) -> bool {
        use EvalError::*;
        match (self, other) {
            (
                InvertedCell { element, cell },
                InvertedCell {
                    element: e2,
                    cell: c2,
                },
            ) => element == e2 && cell == c2,
            (NonFinite { what, dof }, NonFinite { what: w2, dof: d2 }) => what == w2 && dof == d2,
            (NoTangent, NoTangent) | (PatternChanged, PatternChanged) | (Elsewhere, Elsewhere) => {
                true
            }
            (Model(a), Model(b)) => a == b,
            _ => false,
        }
    }
}

/// What tangent a system gives: it says so itself (there is no default, so a system with an
/// unsymmetric tangent cannot be factored by Cholesky because an override was forgotten).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TangentKind {
    /// A symmetric tangent: Cholesky.
    Symmetric,
    /// An unsymmetric tangent (a follower load, say): LU.
    Unsymmetric,
    /// No tangent: the system is for explicit schemes (DEF_EXP, the alpha scheme at `α = 0`
    /// with a lumped mass); an implicit scheme refuses it when it is built.
    NotProvided,
}

impl TangentKind {
    /// The symmetry of the factorization, when there is a tangent.
    pub fn symmetry(self) -> Option<Symmetry> {
        match self {
            TangentKind::Symmetric => Some(Symmetry::Symmetric),
            TangentKind::Unsymmetric => Some(Symmetry::Unsymmetric),
            TangentKind::NotProvided => None,
        }
    }
}
