//! The framework layer of `fem`: what every model family implements, and what they share.
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | the [`Model`] interface (stepper, history columns, frames, probes), [`ModelSection`] (a model's input section, which builds it), [`Uses`] and the one check of what a model reads |
//! | [`input`] | the input sections models share: mesh, fixed and prescribed dofs, contact, initial state, time scheme, output |
//! | [`mod@build`] | builders on those sections: the mesh, dof sets, Dirichlet conditions, time functions, the time grid, Newton's settings |
//! | [`resources`] | the [`Budget`](resources::Budget) of memory and disk a run may claim, and the estimates checked against it before anything is allocated |
//! | [`number`] | numbers as the file writes them: a quoted `"0.01"` is refused where a number belongs |
//! | [`vibration`] | [`Linearization`](vibration::Linearization): a model's stiffness, mass and held dofs at its initial state, for `fem modes` |
//! | [`error`] | [`InputError`]: the YAML path of a refused value and what was expected |
//!
//! Layering: this crate sits above `fem-time` and below the model crates (`fem-string`,
//! `fem-modal`, `fem-pendulum`, `fem-beam`, …); the `fem` crate holds the file schema that
//! lists the models, the registry and the run loop. No crate here knows YAML: sections are
//! `serde` types, read by whatever format the program chooses.

pub mod build;
pub mod error;
pub mod input;
pub mod model;
pub mod number;
pub mod progress;
pub mod resources;
pub mod vibration;

pub use error::InputError;
pub use model::{
    CheckOptions, Checked, MeshUse, Model, ModelSection, Sections, Uses, build, check, check_uses,
};
