//! P1 strings: the finite-element string on a mesh's line cells, and the two colliding strings
//! of Glowinski–Holmström §3 — each a [`fem_model::Model`].
//!
//! | module | what it holds |
//! |---|---|
//! | [`assembly`] | [`StringMatrices`]: mass (consistent and lumped) and stiffness of a P1 string on line cells, (53)–(55) |
//! | [`fe`] | the `model.string` section and [`StringModel`]: any nodal stepper, fixed and prescribed dofs |
//! | [`colliding`] | the `model.colliding_strings` section, [`CollidingStrings`] (scheme (63), start (64)) and its model |

pub mod assembly;
pub mod colliding;
pub mod fe;

pub use assembly::StringMatrices;
pub use colliding::{
    CollidingStrings, CollidingStringsModel, CollidingStringsParameters, CollidingStringsSection,
    CollidingStringsStep,
};
pub use fe::{StringModel, StringSection};
