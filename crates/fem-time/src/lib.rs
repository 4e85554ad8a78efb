//! Second-order systems and the time steppers that advance them.
//!
//! Steppers act on a system trait, never on a mesh (STYLE.md, item 1): the system offers its
//! mass, stiffness, damping and load; the stepper forms its own matrix `c_m M + c_k K + c_c C`
//! and keeps the factorization for as long as those coefficients do not change.
//!
//! | module | what it holds |
//! |---|---|
//! | [`grid`] | [`TimeGrid`]: `t0`, `dt`, the step count and the snapping onto `t_end` |
//! | [`system`] | [`LinearSecondOrderSystem`], `M ẍ + C ẋ + A x = f(t)`, and a ready-made [`LinearSystem`] |
//! | [`backward_euler`] | [`BackwardEuler`], the acceleration-form step of the Serac seed with direct/rate/full Dirichlet control |
//! | [`alpha`] | [`AlphaScheme`], the three-level alpha scheme (16) of Glowinski–Holmström |
//! | [`nonlinear_alpha`] | [`NonlinearAlphaScheme`], the energy-conserving scheme (31)/(63) with a discrete gradient of the potential |
//! | [`newton`] | [`NewtonSolver`]: Newton with line search, dense LU or sparse Cholesky Jacobians |
//! | [`colliding_strings`] | the two colliding strings of §3 (penalty, scheme (63), start (64)) |
//! | [`conservation_form`] | scheme (40) for Lagrangian systems in generalized coordinates, penalty or augmented Lagrangian |
//! | [`double_pendulum`] | the double pendulum of §2 with the wall and the ellipse (Tables 1–4) |
//! | [`nonsmooth`] | Moreau–Jean ([`MoreauJean`]) and exact modal Moreau–Jean ([`ModalMoreauJean`]) with unilateral contact; string modal bases |
//! | [`stability`] | the largest eigenvalue of `M⁻¹ A` by power iteration, for bound (23) |

pub mod alpha;
pub mod backward_euler;
pub mod colliding_strings;
pub mod conservation_form;
pub mod double_pendulum;
pub mod error;
pub mod grid;
pub mod newton;
pub mod nonlinear_alpha;
pub mod nonsmooth;
mod partition;
pub mod stability;
pub mod stepper;
pub mod system;

pub use alpha::{AlphaScheme, Energy};
pub use backward_euler::{BackwardEuler, NewtonSettings, StepStats};
pub use error::StepError;
pub use grid::{GridError, TimeGrid};
pub use newton::{NewtonReport, NewtonSolver};
pub use nonlinear_alpha::{NonlinearAlphaScheme, NonlinearEnergy};
pub use nonsmooth::{
    ModalBasis, ModalCoefficients, ModalDamping, ModalMoreauJean, ModalSystem, MoreauJean,
    NonsmoothError, StepReport, StringModes,
};
pub use stepper::{StepInfo, Stepper};
pub use system::{LinearSecondOrderSystem, LinearSystem, Mass, SecondOrderSystem};
