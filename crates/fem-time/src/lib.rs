//! Second-order systems and the time steppers that advance them: the time layer every model
//! crate and every downstream code steps through.
//!
//! Steppers act on a system trait, never on a mesh (STYLE.md, item 1): every nodal stepper
//! consumes one interface, [`SecondOrderSystem`] (mass, damping, fallible internal force and
//! tangent, the tangent's kind, optional energy, external force), forms its matrix
//! `c_m M + c_c C + c_k K` with one public component ([`StepMatrix`]: fixed pattern, refilled
//! values, symbolic analysis kept), prescribes dofs with one public component
//! ([`DirichletControl`]), keeps its time in one [`Clock`], and implements one [`Stepper`]
//! interface. A stepper written in another crate uses the same three and is run, written and
//! checkpointed by the run loop like these. This crate holds no model.
//!
//! | module | what it holds |
//! |---|---|
//! | [`system`] | [`SecondOrderSystem`], [`Mass`], [`Matrix`], and a ready-made [`LinearSystem`] |
//! | [`evaluation`] | [`EvalError`] (why a force or tangent could not be evaluated) and [`TangentKind`] |
//! | [`stepper`] | [`Stepper`] and [`NodalStepper`], [`StepReport`], [`Energy`], [`Invariant`], state fields |
//! | [`clock`] | [`Clock`]: `t_n = t0 + n dt` from the index |
//! | [`settings`] | [`StepSettings`] (step, start, prescribed dofs, Newton) and [`NewtonSettings`] |
//! | [`grid`] | [`TimeGrid`]: `t0`, `dt`, the step count and the snapping onto `t_end` |
//! | [`control`] | [`DirichletControl`]: the free/prescribed split and the moves every stepper makes with it |
//! | [`step_matrix`] | [`StepMatrix`]: `c_m M + c_c C + c_k K` on the free dofs, refilled and factored |
//! | [`alpha`] | [`AlphaScheme`], the three-level alpha scheme (16) of Glowinski–Holmström (explicit central differences at `α = 0`) |
//! | [`nonlinear_alpha`] | [`NonlinearAlphaScheme`], the energy-conserving scheme (31)/(63) with a discrete gradient |
//! | [`potential`] | discrete-gradient potentials (30), (62) and [`WithPotential`] |
//! | [`backward_euler`] | [`BackwardEuler`], the acceleration-form step of the Serac seed |
//! | [`leapfrog`] | Solfec's DEF_EXP ([`DefExp`]) and DEF_LIM ([`DefLim`]) on a [`LeapFrogSystem`] |
//! | [`nonsmooth`] | Moreau–Jean ([`MoreauJean`]) and exact modal Moreau–Jean ([`ModalMoreauJean`]) with unilateral contact; modal bases |
//! | [`conservation_form`] | scheme (40) for Lagrangian systems in generalized coordinates, penalty or augmented Lagrangian |
//! | [`newton`] | [`NewtonSolver`]: Newton with line search on a problem that factors its own Jacobian |
//! | [`stability`] | the largest eigenvalue of `M⁻¹ A` by power iteration, for bound (23) |
//! | [`check`] | finite-difference checks of a system's force against its energy and of its tangent against its force |
//! | [`error`] | [`StepError`], the one error type of the steppers |
//!
//! Every nodal stepper takes Dirichlet conditions (direct, rate and full control of the Serac
//! seed) through [`StepSettings::dirichlet`].

pub mod alpha;
pub mod backward_euler;
pub mod check;
pub mod clock;
pub mod conservation_form;
pub mod control;
pub mod error;
pub mod evaluation;
pub mod grid;
pub mod leapfrog;
pub mod newton;
pub mod nonlinear_alpha;
pub mod nonsmooth;
pub mod potential;
pub mod settings;
pub mod stability;
pub mod step_matrix;
pub mod stepper;
pub mod system;

pub use alpha::AlphaScheme;
pub use backward_euler::BackwardEuler;
pub use clock::Clock;
pub use conservation_form::{ConservationFormScheme, ConservationFormSystem};
pub use control::DirichletControl;
pub use error::{ModelError, StepError};
pub use evaluation::{EvalError, TangentKind};
pub use grid::{GridError, TimeGrid};
pub use leapfrog::{CriticalStepCheck, DefExp, DefLim, LeapFrogSystem};
pub use newton::{NewtonReport, NewtonSolver};
pub use nonlinear_alpha::NonlinearAlphaScheme;
pub use nonsmooth::{
    ContactReport, ModalBasis, ModalCoefficients, ModalDamping, ModalMoreauJean, ModalSystem,
    MoreauJean,
};
pub use potential::{
    DiagonalPotential, DiscreteGradientPotential, LinearConstraintPotential, WithPotential,
};
pub use settings::{NewtonSettings, StepSettings, StepStart};
pub use step_matrix::{Coefficients, StepMatrix, Terms};
pub use stepper::{
    Energy, EnergyBalanceTracker, Invariant, NodalStepper, StateField, StateKind, StepReport,
    Stepper, restored,
};
pub use system::{LinearSystem, Mass, Matrix, SecondOrderSystem};
