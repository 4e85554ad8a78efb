//! Second-order systems and the time steppers that advance them.
//!
//! Steppers act on a system trait, never on a mesh (STYLE.md, item 1): every nodal stepper
//! consumes one interface, [`SecondOrderSystem`] (mass, damping, internal force, tangent with
//! its symmetry, optional energy, external force), forms its own matrix
//! `c_m M + c_c C + c_k K` through one component (`effective`, with the free/constrained
//! partition of `control` and a Cholesky or LU factorization kept for as long as the
//! coefficients and the pattern do), and implements one [`Stepper`] interface. This crate
//! holds no model.
//!
//! | module | what it holds |
//! |---|---|
//! | [`system`] | [`SecondOrderSystem`], [`Mass`], [`Matrix`], and a ready-made [`LinearSystem`] |
//! | [`stepper`] | [`Stepper`] and [`NodalStepper`], [`StepReport`], [`Energy`], [`Invariant`], state fields |
//! | [`settings`] | [`StepSettings`] (step, start, prescribed dofs, Newton) and [`NewtonSettings`] |
//! | [`grid`] | [`TimeGrid`]: `t0`, `dt`, the step count and the snapping onto `t_end` |
//! | [`alpha`] | [`AlphaScheme`], the three-level alpha scheme (16) of Glowinski–Holmström (explicit central differences at `α = 0`) |
//! | [`nonlinear_alpha`] | [`NonlinearAlphaScheme`], the energy-conserving scheme (31)/(63) with a discrete gradient |
//! | [`potential`] | discrete-gradient potentials (30), (62) and [`WithPotential`] |
//! | [`backward_euler`] | [`BackwardEuler`], the acceleration-form step of the Serac seed |
//! | [`nonsmooth`] | Moreau–Jean ([`MoreauJean`]) and exact modal Moreau–Jean ([`ModalMoreauJean`]) with unilateral contact; modal bases |
//! | [`conservation_form`] | scheme (40) for Lagrangian systems in generalized coordinates, penalty or augmented Lagrangian |
//! | [`newton`] | [`NewtonSolver`]: Newton with line search on a problem that factors its own Jacobian |
//! | [`stability`] | the largest eigenvalue of `M⁻¹ A` by power iteration, for bound (23) |
//! | [`error`] | [`StepError`], the one error type of the steppers |
//!
//! Every nodal stepper takes Dirichlet conditions (direct, rate and full control of the Serac
//! seed) through [`StepSettings::dirichlet`].

pub mod alpha;
pub mod backward_euler;
pub mod conservation_form;
mod control;
mod effective;
pub mod error;
pub mod grid;
pub mod newton;
pub mod nonlinear_alpha;
pub mod nonsmooth;
pub mod potential;
pub mod settings;
pub mod stability;
pub mod stepper;
pub mod system;

pub use alpha::AlphaScheme;
pub use backward_euler::BackwardEuler;
pub use conservation_form::{ConservationFormScheme, ConservationFormSystem};
pub use error::StepError;
pub use grid::{GridError, TimeGrid};
pub use newton::{NewtonReport, NewtonSolver};
pub use nonlinear_alpha::NonlinearAlphaScheme;
pub use nonsmooth::{
    ContactReport, ModalBasis, ModalCoefficients, ModalDamping, ModalMoreauJean, ModalSystem,
    MoreauJean,
};
pub use potential::{
    DiagonalPotential, DiscreteGradientPotential, LinearConstraintPotential, WithPotential,
};
pub use settings::{NewtonSettings, StepSettings};
pub use stepper::{
    Energy, EnergyBalanceTracker, Invariant, NodalStepper, StateField, StateKind, StepReport,
    Stepper, restored,
};
pub use system::{LinearSystem, Mass, Matrix, SecondOrderSystem};
