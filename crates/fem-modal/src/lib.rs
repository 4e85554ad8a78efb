//! The modal string: an ideal or stiff string in its sine modes, with unilateral contact
//! stepped by the exact modal Moreau–Jean scheme (Siconos seed) — a [`fem_model::Model`].
//!
//! | module | what it holds |
//! |---|---|
//! | [`modes`] | [`StringModes`]: frequencies, mode shapes, plucks, contact rows |
//! | [`model`] | the `model.modal_string` section and [`ModalStringModel`] |

pub mod model;
pub mod modes;

pub use model::{ModalStringModel, ModalStringSection};
pub use modes::StringModes;
