//! The error type of rigid-body input and stepping.

/// Why a body, a stepper or a step was refused or failed.
///
/// `body` is the body's index in the order the bodies were added.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RigidError {
    /// A mass that is not a positive finite number.
    #[error("body {body}: mass = {mass} must be positive and finite")]
    InvalidMass {
        /// Body index.
        body: usize,
        /// The given mass.
        mass: f64,
    },
    /// An input that is not finite (NaN or infinite).
    #[error("body {body}: {field} has a non-finite entry {value}")]
    NonFiniteInput {
        /// Body index.
        body: usize,
        /// Which input (`inertia`, `position`, `rotation`, `velocity`, `angular_velocity`,
        /// `fixed_point`).
        field: &'static str,
        /// The offending value.
        value: f64,
    },
    /// An inertia tensor that is not symmetric.
    #[error(
        "body {body}: the inertia tensor is not symmetric (max |J_ij - J_ji| = {asymmetry:e}, \
         relative to its largest entry)"
    )]
    InertiaNotSymmetric {
        /// Body index.
        body: usize,
        /// `max |J_ij − J_ji| / max |J_ij|`.
        asymmetry: f64,
    },
    /// An inertia tensor that is not positive definite (or so ill-conditioned that `J⁻¹` is
    /// meaningless: smallest eigenvalue below `1e-12` times the largest).
    #[error(
        "body {body}: the inertia tensor {about} is not positive definite: eigenvalues \
         {eigenvalues:?} (each must exceed 1e-12 times the largest)"
    )]
    InertiaNotPositiveDefinite {
        /// Body index.
        body: usize,
        /// `"about the centre of mass"` or `"about the fixed point"`.
        about: &'static str,
        /// Its eigenvalues, ascending.
        eigenvalues: [f64; 3],
    },
    /// A body turning about a fixed point was given a linear velocity that is not the one
    /// its rotation implies (`v = ω × (x − p)`).
    #[error(
        "body {body}: with a fixed point the velocity of the centre is ω × (x − p) = \
         {expected:?}; the given velocity {given:?} differs (leave it zero to derive it)"
    )]
    FixedPointVelocityMismatch {
        /// Body index.
        body: usize,
        /// The given velocity.
        given: [f64; 3],
        /// The velocity the angular velocity implies.
        expected: [f64; 3],
    },
    /// Gravity that is not finite.
    #[error("gravity {gravity:?} has a non-finite component")]
    NonFiniteGravity {
        /// The given gravity.
        gravity: [f64; 3],
    },
    /// A time step or start time that is not usable.
    #[error("time step dt = {dt} must be positive and finite (start time t0 = {t0} finite)")]
    InvalidTime {
        /// The given step.
        dt: f64,
        /// The given start time.
        t0: f64,
    },
    /// Newton settings out of range.
    #[error(
        "RIG_IMP Newton settings: tolerance = {tolerance} must be in (0, 1), max_iterations \
         = {max_iterations} at least 1 and absolute_tolerance = {absolute_tolerance} finite and \
         non-negative"
    )]
    InvalidNewtonSettings {
        /// The given relative tolerance.
        tolerance: f64,
        /// The given iteration cap.
        max_iterations: usize,
        /// The given absolute tolerance.
        absolute_tolerance: f64,
    },
    /// RIG_IMP's Newton iteration for `W3(t+h)` did not reach its tolerance.
    #[error(
        "RIG_IMP: Newton for W3(t+h) did not converge at step {step} (t = {time}) for body \
         {body}: relative residual {residual:e} after {iterations} iterations (tolerance \
         {tolerance:e}); reduce time.dt or raise time.newton.max_iterations"
    )]
    NewtonNotConverged {
        /// The step being taken (1 for the step from `t0` to `t0 + dt`).
        step: u64,
        /// The time at the start of that step.
        time: f64,
        /// Body index.
        body: usize,
        /// Iterations done.
        iterations: usize,
        /// `‖exp[h/2 Ω₃] J Ω₃ − a‖ / ‖a‖` reached.
        residual: f64,
        /// The tolerance asked for.
        tolerance: f64,
    },
    /// A step produced a non-finite state (a load returned NaN, or the step diverged).
    #[error(
        "step {step} (t = {time}): body {body} has a non-finite state after the step (check its \
         force and torque functions, or reduce time.dt)"
    )]
    NonFiniteState {
        /// The step being taken.
        step: u64,
        /// The time at the start of that step.
        time: f64,
        /// Body index.
        body: usize,
    },
    /// A contact step was asked of a set with a body on a kinematic fixed point.
    #[error(
        "body {body} turns about a fixed point: in a step with contact, hold its point by a \
         fixed-point constraint instead"
    )]
    FixedPointInContact {
        /// Body index.
        body: usize,
    },
    /// `end_contact_step` without `begin_contact_step`.
    #[error("a contact step was ended without being begun")]
    ContactStepNotBegun,
}
