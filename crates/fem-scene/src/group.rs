//! The interface a kind of body offers to a scene: [`BodyGroup`], a set of bodies of one kind
//! stepped by the kind's own scheme, split around the contact solve.
//!
//! A scene holds any number of groups (rigid bodies now; the total-Lagrangian solids of issue
//! 24 next). For one step a group
//!
//! 1. **begins** ([`BodyGroup::begin_step`]): computes its mid-step configuration and its free
//!    velocities (the step's end velocity without contact impulses), leaving its state at `t`
//!    untouched;
//! 2. **shows** its bodies to the contact layer: each body as a
//!    [`fem_contact::body::ContactBody`] ([`BodyGroup::contact_body`]), its shapes placed at
//!    mid-step for detection ([`BodyGroup::placed_shapes`]), and where a body point is at
//!    mid-step ([`BodyGroup::mid_step_point`], for links);
//! 3. takes the impulses back ([`BodyGroup::contact_bodies_mut`],
//!    [`fem_contact::body::ContactBody::apply_impulse`]) and **ends** its step
//!    ([`BodyGroup::end_step`]).
//!
//! Between steps it is a stepper like any other: clock, energy, state and restore. Nothing in
//! [`crate::SceneStepper`] knows which kind of body it steps.

use fem_contact::body::ContactBody;
use fem_contact::detect::PlacedShape;
use fem_io::Frame;
use fem_time::{Clock, Energy, StateField, StepError};
use nalgebra::Vector3;

/// What a group's step did (the largest over its bodies).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupStep {
    /// Iterations of the kind's own per-step solver (RIG_IMP's Newton), 0 for an explicit one.
    pub iterations: usize,
    /// Its final residual.
    pub residual: f64,
}

/// Who meets a group's surface at a [`SurfaceContact`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfaceParty {
    /// A contact point of one of the group's own bodies (a solid's node): the body (group
    /// numbering) and its shape (group numbering, in the order of
    /// [`BodyGroup::placed_shapes`]).
    Own {
        /// The body.
        body: usize,
        /// The shape.
        shape: usize,
    },
    /// A shape of another group (scene numbering of the placed shapes).
    Shape(usize),
}

/// A contact point a group finds on its own bodies' surfaces (a solid's faces, issue 24
/// part B): the first party's point against a point of a face of the group's body `second`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceContact {
    /// The first party.
    pub first: SurfaceParty,
    /// The body (group numbering) whose face holds `point_second`.
    pub second: usize,
    /// The first party's point (mid-step, world).
    pub point: Vector3<f64>,
    /// The point of the face (mid-step, world).
    pub point_second: Vector3<f64>,
    /// The unit normal out of the face, into the first party.
    pub normal: Vector3<f64>,
    /// The gap along the normal (`< 0` overlapping).
    pub gap: f64,
    /// The surface materials of the first party and of the face.
    pub materials: (u32, u32),
}

/// A set of bodies of one kind in a scene (module documentation).
pub trait BodyGroup: Send + Sync {
    /// What the group holds, for messages (`"rigid bodies"`).
    fn kind(&self) -> &'static str;
    /// Number of bodies.
    fn len(&self) -> usize;
    /// Whether the group has no body.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The first half of a step: mid-step configuration and free velocities.
    fn begin_step(&mut self) -> Result<(), StepError>;
    /// Body `i` as the contact layer sees it, between [`Self::begin_step`] and
    /// [`Self::end_step`].
    fn contact_body(&self, i: usize) -> &dyn ContactBody;
    /// Every body, to give it its impulse (in body order).
    fn contact_bodies_mut(&mut self) -> Vec<&mut dyn ContactBody>;
    /// Appends each body's shape placed at mid-step, and the body it belongs to (group
    /// numbering), for detection. Called between [`Self::begin_step`] and [`Self::end_step`].
    fn placed_shapes(&self, shapes: &mut Vec<PlacedShape>, owners: &mut Vec<usize>);
    /// Where the contact point detected on the group's shape `shape` (group numbering, in the
    /// order of [`Self::placed_shapes`]) acts on the body, if not where detection put it: a
    /// solid's node shown as a small ball acts at the node (issue 24). `None`: at `point`.
    fn contact_point(&self, shape: usize, point: &Vector3<f64>) -> Option<Vector3<f64>> {
        let _ = (shape, point);
        None
    }
    /// Whether the contact detected on the group's shape `shape` (group numbering) takes the
    /// position-level law: a massless node (a mass redistributed off the contact surface,
    /// [`crate::redistribute`]) is held by `g(t+h) ≥ 0`, `q_N += 2g/h` for either sign of the
    /// mid-step gap `g`, with no restitution (docs/theory/contact.md §9.1). Default: no (the
    /// velocity law and rule (R) of §8).
    fn position_level(&self, shape: usize) -> bool {
        let _ = shape;
        false
    }
    /// Whether the contact detected on the group's shape `shape` takes the mid-step position
    /// law: the node's next mid-step position, where the scheme evaluates its forces, is held
    /// on the surface, `g(t+h/2) + h U_N⁺ ≥ 0`, `q_N += g/h` for either sign of the mid-step
    /// gap `g`, with no restitution and no rule (R) (docs/theory/contact.md §9.2, eq. C18).
    /// Default: no.
    fn mid_step_level(&self, shape: usize) -> bool {
        let _ = shape;
        false
    }
    /// Whether the contacts on the faces of the group's body `body` (group numbering;
    /// [`Self::surface_contacts`]) take the mid-step position law of
    /// [`Self::mid_step_level`]. Default: no (rule (R)).
    fn mid_step_body(&self, body: usize) -> bool {
        let _ = body;
        false
    }
    /// Whether the group's shapes are points of its bodies (a solid's nodes): two such
    /// shapes of two bodies are not paired (node to node is no contact; two solids meet node
    /// to face, [`Self::surface_contacts`]).
    fn point_contacts(&self) -> bool {
        false
    }
    /// The contact points the group finds itself between its bodies' surfaces and their own
    /// contact points (one solid's nodes against another's faces) or the scene's shapes
    /// `shapes` marked in `foreign` (other groups' shapes that are not points: a rigid sphere
    /// against a solid's faces), within `prediction`, at mid-step (issue 24 part B). The
    /// group must then map the `point_second` it returned to its face
    /// ([`fem_contact::body::ContactBody::point_map`]). Default: none.
    fn surface_contacts(
        &self,
        shapes: &[PlacedShape],
        foreign: &[bool],
        prediction: f64,
    ) -> Vec<SurfaceContact> {
        let _ = (shapes, foreign, prediction);
        Vec::new()
    }
    /// The world position at mid-step of the point of body `i` at body coordinates
    /// `body_point` ([`Self::body_coordinates`]).
    fn mid_step_point(&self, i: usize, body_point: &Vector3<f64>) -> Vector3<f64>;
    /// The body coordinates of the point of body `i` now at the world point `point` (at a step
    /// boundary: a scene takes its links' points at the start).
    fn body_coordinates(&self, i: usize, point: &Vector3<f64>) -> Vector3<f64>;
    /// A bound on the speed of any point of any body, from the start and free velocities of
    /// the step begun (for the scene's prediction distance).
    fn speed_bound(&self) -> f64;
    /// The second half of a step: each body ends with the impulse it was given; the group's
    /// clock advances.
    fn end_step(&mut self) -> Result<GroupStep, StepError>;
    /// The group's clock.
    fn clock(&self) -> Clock;
    /// Kinetic and potential energy now, and the work of applied loads since the start.
    fn energy(&self) -> Energy;
    /// The group's state as named arrays (names unique within the group).
    fn state(&self) -> Vec<StateField<'_>>;
    /// Restores what [`Self::state`] returned at step `step_index`.
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError>;
    /// The group's ParaView frame now.
    fn frame(&mut self) -> Frame<'_>;
    /// What `fem check` prints about the group.
    fn describe(&self) -> Vec<String>;
    /// The group as `Any`, for a caller that knows its kind (`downcast_ref`).
    fn as_any(&self) -> &dyn std::any::Any;
}
