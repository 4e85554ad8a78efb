//! Total-Lagrangian solids as a model of `fem` (issue 10, model level): the solid as a
//! second-order system (and a [`fem_time::LeapFrogSystem`], so that Solfec's DEF_EXP and
//! DEF_LIM of `fem_time::leapfrog` step it), and the `model.solid` input section.
//!
//! | module | what it holds |
//! |---|---|
//! | [`system`] | [`SolidSystem`]: the solid as a [`fem_time::SecondOrderSystem`] (mass, force, tangent, strain energy, gravity, dead tractions) |
//! | [`loads`] | [`DeadLoads`]: body force and dead tractions on the free dofs |
//! | [`rotation`] | [`RotationSignal`]: a prescribed rigid rotation about an axis, per dof |
//! | [`initial`] | initial velocities: uniform, rigid rotation, expressions of `x, y, z` |
//! | [`section`] | [`SolidSection`], the `model.solid` input section |
//! | [`model`] | [`SolidModel`], the solid as a [`fem_model::Model`]: frames and `history.csv` |
//! | [`modal`] | [`ModalSolidModel`]: the solid in its lowest modes, stepped by the exact modal Moreau–Jean scheme with contacts against planes |
//!
//! Theory: `docs/theory/solid.md` (kinematics, materials, the two schemes); validation:
//! `docs/validation.md`.

pub mod initial;
pub mod loads;
pub mod modal;
pub mod model;
pub mod rotation;
pub mod section;
pub mod system;

pub use loads::DeadLoads;
pub use modal::ModalSolidModel;
pub use model::SolidModel;
pub use rotation::RotationSignal;
pub use section::{PreparedSolid, SolidSection, SolidSetup, TractionFaces};
pub use system::{SolidMass, SolidSystem};
