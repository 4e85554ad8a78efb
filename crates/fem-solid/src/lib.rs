//! Total-Lagrangian solids as a model of `fem` (issue 10, model level): the solid as a
//! second-order system, Solfec's DEF_EXP and DEF_LIM leap-frog steppers (seed `004`), and the
//! `model.solid` input section.
//!
//! | module | what it holds |
//! |---|---|
//! | [`system`] | [`SolidSystem`]: the solid as a [`fem_time::SecondOrderSystem`] (mass, force, tangent, strain energy, gravity, dead tractions) |
//! | [`loads`] | [`DeadLoads`]: body force and dead tractions on the free dofs |
//! | [`leapfrog`] | the leap-frog state shared by both schemes, [`LeapFrogSystem`] (a system with a critical step) |
//! | [`def_exp`] | [`DefExp`]: explicit leap-frog on a lumped mass, with the critical step checked at the start and as the body deforms |
//! | [`spectral`] | the critical step from the body's largest eigenvalue (Lanczos, capped by the element bound) |
//! | [`def_lim`] | [`DefLim`]: linearly implicit leap-frog, one linear solve per step, stiffness-proportional damping |
//! | `step_matrix` | DEF_LIM's `A = M + c K` on the tangent's pattern, its free block and factorization |
//! | `prescribed` | direct, rate and full control in the leap-frog |
//! | [`rotation`] | [`RotationSignal`]: a prescribed rigid rotation about an axis, per dof |
//! | [`initial`] | initial velocities: uniform, rigid rotation, expressions of `x, y, z` |
//! | [`section`] | [`SolidSection`], the `model.solid` input section |
//! | [`model`] | [`SolidModel`], the solid as a [`fem_model::Model`]: frames and `history.csv` |
//!
//! Theory: `docs/theory/solid.md` (kinematics, materials, the two schemes); validation:
//! `docs/validation.md`.

pub mod def_exp;
pub mod def_lim;
pub mod initial;
pub mod leapfrog;
pub mod loads;
pub mod model;
mod prescribed;
pub mod rotation;
pub mod section;
pub mod spectral;
mod step_matrix;
pub mod system;

pub use def_exp::{CriticalStepCheck, DefExp};
pub use def_lim::DefLim;
pub use leapfrog::LeapFrogSystem;
pub use loads::DeadLoads;
pub use model::SolidModel;
pub use rotation::RotationSignal;
pub use section::{SolidSection, SolidSetup, TractionFaces};
pub use system::{SolidMass, SolidSystem};
