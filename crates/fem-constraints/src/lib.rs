//! Constraints: Dirichlet sets, penalty and augmented-Lagrangian constraints, and the linear
//! complementarity problems (LCP) of unilateral contact.
//!
//! | module | what it holds |
//! |---|---|
//! | [`constraint`] | the [`ConstraintSolver`] interface (potential, multipliers, residual, discrete gradient (30)/(62)) and [`ConstraintFunction`] |
//! | [`penalty`] | [`Penalty`]: the quadratic penalty (3), (35), (47) |
//! | [`augmented`] | [`AugmentedLagrangian`]: Hestenes–Powell (8)–(10) |
//! | [`dirichlet`] | Dirichlet sets: prescribed dofs, their [`Signal`]s and [`Enforcement`] methods |
//! | [`lcp`] | the LCP `0 ≤ z ⊥ M z + q ≥ 0`, the [`LcpSolver`] interface, its report and errors |
//! | [`lemke`] | [`Lemke`]: Lemke's complementary pivoting, lexicographic ratio test (exact, finite) |
//! | [`pgs`] | [`ProjectedGaussSeidel`]: projected Gauss–Seidel with a stated tolerance |
//! | [`unilateral`] | [`UnilateralContacts`] `y = H q − h ≥ 0` and the impact LCP of Moreau's law |
//!
//! Every constraint solver exposes the same two things (STYLE.md, item 9): the multipliers
//! (written into the caller's `z`) and the constraint residual (in the returned report).

pub mod augmented;
pub mod constraint;
pub mod dirichlet;
pub mod function;
pub mod lcp;
pub mod lemke;
pub mod penalty;
pub mod pgs;
pub mod unilateral;

pub use augmented::AugmentedLagrangian;
pub use constraint::{
    ConstraintError, ConstraintFunction, ConstraintKind, ConstraintSolver, DiscreteGradient,
    MultiplierUpdate, constraint_residual,
};
pub use dirichlet::{
    ConflictingSets, DirichletConditions, DirichletSet, Enforcement, Signal, SystemDof,
};
pub use function::{EXPRESSION_SYNTAX, Expression, FunctionError, Prescribed, Table, TimeFunction};
pub use lcp::{LcpError, LcpMethod, LcpReport, LcpSolver, lcp_residual};
pub use lemke::Lemke;
pub use penalty::Penalty;
pub use pgs::ProjectedGaussSeidel;
pub use unilateral::{ContactError, ImpactReport, UnilateralContacts, solve_impact};
