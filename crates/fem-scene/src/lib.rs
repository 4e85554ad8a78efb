//! Bodies that meet: the scene of `fem` (issue 23; docs/theory/contact.md §8,
//! docs/architecture.md "Bodies that meet").
//!
//! A scene holds bodies of any kind behind one interface ([`BodyGroup`]: rigid bodies now,
//! [`rigid::RigidGroup`]; [`solid::SolidGroup`], total-Lagrangian solids), fixed obstacles, surface-pair materials and
//! links, and steps them together ([`SceneStepper`]): every group begins its step (mid-step
//! configuration, free velocities), detection at mid-step, the constraint points, assembly of
//! the local problem, fem-contact's NSGS warm-started by contact identity, the impulses back
//! through each body's inverse inertia, every group ends its step. The contact layer
//! (`fem-contact`) knows no body kind; each kind implements
//! [`fem_contact::body::ContactBody`] for its bodies and [`BodyGroup`] for the set.
//!
//! | module | what it holds |
//! |---|---|
//! | [`group`] | [`BodyGroup`], the interface of a kind of body |
//! | [`scene`] | [`SceneStepper`], links, settings, contact records, the energy bookkeeping |
//! | [`rigid`] | [`rigid::RigidGroup`]: fem-rigid's bodies with shapes and materials |
//! | [`solid`] | [`solid::SolidGroup`]: total-Lagrangian solids (DEF_EXP, DEF_LIM) whose surface nodes touch |
//! | [`solid_faces`] | a solid's boundary faces, the projection of a point onto a face (C20) |
//! | [`redistribute`] | a solid's lumped mass moved off its contact surface (massless contact nodes) |
//! | [`pressure`] | the contact pressure field of a solid's frames: nodal forces recovered by the boundary faces (C32) |
//! | [`pairs`] | contact on a solid's faces: another solid's nodes, a rigid shape (docs/theory/contact.md §10) |
//! | [`section`] | the `model.scene` input section ([`SceneSection`]) |
//! | [`generate`] | generators of many bodies and the CSV table |
//! | [`model`] | [`SceneModel`]: frames, the contact points' frames, the history |

pub mod generate;
pub mod group;
pub mod model;
pub mod pairs;
pub mod pressure;
pub mod redistribute;
pub mod rigid;
pub mod scene;
pub mod section;
pub mod solid;
pub mod solid_faces;

pub use group::{BodyGroup, GroupStep};
pub use model::SceneModel;
pub use scene::{
    ContactRecord, ContactState, Link, LinkKind, Prediction, SceneError, SceneSettings,
    SceneStepper, SolveSummary, Timing,
};
pub use section::SceneSection;
