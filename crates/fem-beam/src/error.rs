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
    /// Both ends are prescribed at least the beam's length apart.
    #[error(
        "the supports are {span} m apart, not less than the length {length} m: an inextensible \
         beam cannot span them"
    )]
    SupportsOutOfReach {
        /// Distance between the prescribed end positions (m).
        span: f64,
        /// The beam's length (m).
        length: f64,
    },
    /// The direction of the initial sag has no component normal to the chord.
    #[error(
        "the sag direction {direction:?} has no component normal to the chord between the \
         supports: give a direction across the chord (for example [0, -1, 0])"
    )]
    DegenerateSagDirection {
        /// The given direction.
        direction: [f64; 3],
    },
    /// A cable (`EI = 0`) with the constraint at the Gauss points.
    #[error(
        "bending_stiffness = 0 (a cable) is not determined with |x'| = 1 at 2 Gauss points per \
         element (the nodal tangents form a zero-energy mode): impose it at the nodes and \
         midpoints (ConstraintPoints::NodesAndMidpoints)"
    )]
    CableNeedsNodalPoints,
    /// A prescribed end below the seabed.
    #[error("{end} is prescribed at height {height} m, below the seabed at {level} m")]
    EndBelowSeabed {
        /// Which end.
        end: &'static str,
        /// Its height (m).
        height: f64,
        /// The seabed's level (m).
        level: f64,
    },
    /// The beam is longer than the taut path over the seabed.
    #[error(
        "the beam is {excess} m longer than the taut path from end_a over the seabed to end_b: \
         a slack cable on a frictionless seabed has no unique equilibrium"
    )]
    SlackOnSeabed {
        /// Length beyond the taut path (m).
        excess: f64,
    },
    /// A feature the chosen solver does not support.
    #[error("{what}")]
    Unsupported {
        /// What and which solver does support it.
        what: &'static str,
    },
    /// The Newton–KKT static solve did not converge.
    #[error(
        "the static Newton-KKT solve did not converge after {iterations} iterations: \
         max ||x'| - 1| = {constraint:e}, last relative step {step:e}"
    )]
    StaticNotConverged {
        /// Iterations done (accepted and rejected).
        iterations: usize,
        /// `max_j ||x'_j| − 1|` reached.
        constraint: f64,
        /// Last relative position update.
        step: f64,
    },
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
    /// Newton did not reach its tolerance within the iteration cap of the step settings
    /// (the penalty scheme, Newton on the KKT system, the energy-conserving scheme).
    #[error(
        "Newton did not converge at step {step}: residual {residual:e} after {iterations} \
         iterations (tolerance {tolerance:e}); reduce dt or raise the iteration limit"
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
    /// Prescribed dofs in the step settings of a beam stepper: the beam's supports are
    /// constraints of its KKT system (the model's ends), not prescribed dofs.
    #[error(
        "the beam steppers take no prescribed dofs ({count} given in the step settings): the \
         beam's supports are constraints of its KKT system; give them as the model's ends \
         (End::Pinned or End::Clamped, fixed or moving: Placement::moving)"
    )]
    PrescribedDofs {
        /// How many prescribed dofs were given.
        count: usize,
    },
    /// The common step settings were refused (the step, the start time or the initial state).
    #[error(transparent)]
    Step(#[from] fem_time::StepError),
    /// The state stopped being finite.
    #[error("the solution became non-finite at step {step}")]
    NonFinite {
        /// Step index.
        step: u64,
    },
}
