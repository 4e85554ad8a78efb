//! Inextensible Hermite-cubic beams in 3D (Glowinski–Holmström §4, equations (68)–(97)).
//!
//! A beam of length `L`, flexural stiffness `EI` and mass per unit length `ρ` is represented by
//! `C¹` Hermite cubics (position and tangent at every node); the inextensibility `|x'| = 1` is
//! imposed at the 2 Gauss points of every element.
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | [`BeamParameters`], [`End`] supports, [`Beam`] (mesh, matrices, sampling), [`BeamState`] |
//! | [`uzawa`] | Algorithm 2 (Uzawa) with `p = x'`, plain or Anderson-accelerated |
//! | [`kkt`] | Newton (SQP) on the KKT system of the same constrained problem |
//! | [`statics`] | the static problem (68)–(87): Newton–KKT or Uzawa |
//! | [`section`] | the `model.beam` input section and [`BeamRun`], the beam as a `fem_model::Model` |
//! | [`dynamics`] | the augmented-Lagrangian scheme (97) (Uzawa or Newton–KKT per step) and the time-discretized penalty (93) |
//! | [`energy`] | an energy-conserving second-order scheme (constrained midpoint rule, the constraint force along the midpoint tangent) |
//!
//! Beyond the paper: the constraint at the nodes and midpoints ([`ConstraintPoints`]; fourth
//! order, cables with `EI = 0`), statics by Newton on the KKT system
//! ([`solve_static_newton`]), a seabed ([`Seabed`], frictionless unilateral contact of the
//! whole curve, by the Bézier control points of its elements).
//!
//! Sign convention, derivation and the closed-form checks: `docs/theory/inextensible_beam.md`.
//!
//! ```
//! use fem_beam::{Beam, BeamParameters, BeamState, End, UzawaSettings, solve_static};
//! let model = Beam::new(BeamParameters::paper_95()).unwrap();
//! let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
//! let sol = solve_static(&model, &guess, &UzawaSettings::anderson(1e4)).unwrap();
//! assert!(sol.report.max_constraint_violation < 1e-8);
//! ```

mod block_tridiag;
pub mod dynamics;
pub mod energy;
pub mod error;
pub mod kkt;
mod kkt_block;
pub mod model;
mod seabed;
pub mod section;
pub mod statics;
pub mod uzawa;

pub use dynamics::{
    AugmentedLagrangianStepper, BeamStepReport, NewtonKktStepper, PenaltyForm, PenaltySettings,
    PenaltyStepper,
};
pub use energy::EnergyConservingStepper;
pub use error::BeamError;
pub use kkt::{KktAssembly, KktFactorization, NewtonKktReport, NewtonKktSettings, NewtonKktSolver};
pub use model::{
    Beam, BeamOptions, BeamParameters, BeamState, ConstraintPoints, End, Placement, PointLoad,
    Sample, Seabed,
};
pub use section::{BeamRun, BeamSection};
pub use statics::{
    STATIC_NEWTON, StaticSolution, solve_static, solve_static_at, solve_static_newton,
};
pub use uzawa::{Acceleration, UzawaReport, UzawaSettings, UzawaSolver};
