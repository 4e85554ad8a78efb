//! Rigid bodies stepped by Solfec's RIG_POS, RIG_NEG and RIG_IMP rotation schemes (NEW1, NEW2,
//! NEW3 of Koziara & Bićanić, IJNME 81(9):1073–1092, 2010), free or turning about a fixed
//! point, under gravity and applied forces and torques given as functions of time.
//!
//! | module | what it holds |
//! |---|---|
//! | [`rotation`] | the skew map, `exp[Ψ]` by Rodrigues' formula with a series at small angles, its tangent operator |
//! | [`scheme`] | [`Scheme`] (RIG_POS, RIG_NEG, RIG_IMP with [`RigImpSettings`]): the seed's equations `R(t+h/2)` … `R2(t+h)` |
//! | [`bodies`] | [`RigidBody`] (one body as given), [`RigidBodies`] (the state, struct of arrays), [`Observables`] |
//! | [`stepper`] | [`RigidStepper`]: one step of every body, translation by the seed's `q(t+h/2)`, `u(t+h)`, `q(t+h)` |
//! | [`contact`] | the step split around a contact solve, each body a [`fem_contact::body::ContactBody`] ([`RigidContactBody`]) |
//! | [`exact`] | closed forms for validation: `K(m)` by the AGM, pendulum and torque-free periods |
//! | [`error`] | [`RigidError`] |
//! | [`section`] | [`RigidBodiesSection`], the `model.rigid_bodies` input section: bodies, placement, loads, drawings |
//! | [`drawing`] | [`Drawing`]: each body's mesh or box, moved rigidly, as ParaView frames |
//! | [`model`] | [`RigidModel`], the bodies as a [`fem_model::Model`]: frames and `history.csv` |
//!
//! Conventions: `Λ` maps the body frame (the reference configuration) to space; `Ω` is the
//! body-frame angular velocity and `ω = Λ Ω` the spatial one; the inertia is given in the body
//! frame about the centre of mass. Theory and derivations: `docs/theory/rigid_body.md`.
//!
//! ```
//! use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal};
//! // A heavy symmetric top (Simo & Wong 1991): J = diag(5, 5, 1) about the tip, m g l = 20.
//! let mut top = RigidBody::new(1.0, diagonal([4.0, 4.0, 1.0])); // about the centre, l = 1
//! top.rotation = [0.05, 0.0, 0.0];
//! top.position = fem_rigid::rotation::exp_map(top.rotation).map(|row| row[2]); // Λ e₃
//! top.fixed_point = Some([0.0; 3]);
//! top.angular_velocity = AngularVelocity::Body([0.0, 0.0, 50.0]);
//! let bodies = RigidBodies::from_bodies([0.0, 0.0, -20.0], [top]).unwrap();
//! let mut stepper = RigidStepper::new(bodies, Scheme::rig_imp(), 1e-3, 0.0).unwrap();
//! let e0 = stepper.total_energy();
//! assert!((e0 - 1269.975).abs() < 1e-3);
//! for _ in 0..100 {
//!     stepper.step().unwrap();
//! }
//! assert!((stepper.total_energy() - e0).abs() < 1e-3);
//! ```

mod batch;
pub mod bodies;
pub mod contact;
pub mod drawing;
pub mod error;
pub mod exact;
mod mat3;
pub mod mesh_mass;
pub mod model;
pub mod rotation;
pub mod scheme;
pub mod section;
pub mod stepper;

pub use bodies::{
    AngularVelocity, Observables, RigidBodies, RigidBody, diagonal, inertia_about_centre,
    inertia_about_point,
};
pub use contact::RigidContactBody;
pub use drawing::Drawing;
pub use error::RigidError;
pub use mesh_mass::{MeshMassError, mesh_mass_properties};
pub use model::RigidModel;
pub use scheme::{RigImpSettings, Scheme};
pub use section::RigidBodiesSection;
pub use stepper::{RigidStepReport, RigidStepper};
