//! The double compound pendulum of Glowinski–Holmström §2 — a [`fem_model::Model`] in
//! generalized coordinates, stepped by the conservation-form scheme (40).
//!
//! | module | what it holds |
//! |---|---|
//! | [`pendulum`] | [`DoublePendulum`] (a conservation-form system), the wall and the ellipse, [`PendulumSimulation`] |
//! | [`model`] | the `model.double_pendulum` section and [`PendulumModel`] |

pub mod model;
pub mod pendulum;

pub use model::{DoublePendulumSection, PendulumModel};
pub use pendulum::{
    ConstraintMethod, DoublePendulum, EllipseConstraint, PendulumConstraint, PendulumRecord,
    PendulumSetup, PendulumSimulation, WallConstraint,
};
