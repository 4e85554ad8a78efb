//! The scene's stepper: bodies of any kind ([`BodyGroup`]s), obstacles, surface-pair
//! materials and links, stepped together (docs/theory/contact.md, §8).
//!
//! One step `t → t + h`:
//!
//! 1. every group begins its step: mid-step configuration `q^{t+h/2}`, free velocities
//!    `u_free` (Solfec's `BODY_Dynamic_Step_Begin`);
//! 2. detection at the mid-step configuration (fem-contact's BVH broad phase and parry's
//!    manifolds), within the prediction distance;
//! 3. the constraint points: the detected contacts with the law of their surface pair, then
//!    the links (fixed point, fixed direction, rigid link) at mid-step; the contact rule (R)
//!    below sets each contact's restitution and gap term;
//! 4. assembly of `W` and `q` (C4) with the gap rate `γ = 1/h`;
//! 5. the solve: fem-contact's NSGS, warm-started from the previous step's impulses by the
//!    contacts' identity (the two parties and the nearest point of the last step), in a
//!    fixed order;
//! 6. the impulses back to the bodies (`u = u_free + A⁻¹ p`), the work of every impulse, the
//!    contact records (for the contacts' frames), the warm starts for the next step;
//! 7. every group ends its step (Solfec's `BODY_Dynamic_Step_End`).
//!
//! **Rule (R)** for a contact point with mid-step gap `g`, start normal velocity `U_N⁻` and
//! free normal velocity `U_N,free`:
//! - *an impact*: not *persistent* (it carried a normal impulse in the previous step, not
//!   an impact's), its
//!   free motion crosses it before the next detection (`g ≤ 0` or `g + h U_N,free < 0`), and
//!   it approaches faster than one step of the applied forces moves it
//!   (`−U_N⁻ > |U_N,free − U_N⁻|`): Newton restitution, `U_N⁺ + e min(U_N⁻, 0) ≥ 0`, from
//!   wherever it is (the gap term dropped);
//! - otherwise no restitution: for `g > 0` the gap term `q_N += g/h` lets the point close
//!   exactly by the next detection (`g + h U_N⁺ ≥ 0`; in free flight it does not act), for
//!   `g ≤ 0` the point does not push out (`U_N⁺ ≥ 0`).
//!
//! A ball landing slowly is thus stopped exactly at the surface and then held there without
//! restitution (no jitter, no penetration), while an impact bounces with `e` before the surface
//! is crossed. Rule (R) is the rigid bodies' law; a solid's contacts take the mid-step position
//! law instead, `q_N += g/h` for either sign of `g` (docs/theory/contact.md §9.2, eq. C18;
//! [`BodyGroup::mid_step_level`], [`BodyGroup::mid_step_body`]), and its massless nodes the
//! position-level law (§9.1, eq. C17). Links take `q_N += g/h` of their violation `g` (drift correction).
//!
//! **Energy.** The work of the impulses, `½ Σ_i r_i · (U_i⁺ + U_i⁻)` (local frames, `U⁺`
//! the velocity the contact layer computed), is split into the work of the normal impulses of
//! contacts (minus: dissipated by impacts), of their tangential impulses (minus: dissipated
//! by friction) and of the links; with the same `H` for `U⁻` and `U⁺`, this is exactly the
//! change of kinetic energy the impulses make for the translation of a body and for RIG_POS,
//! so `total + dissipated − external_work − link_work` is constant to what the body schemes
//! conserve of their own energy.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use fem_contact::body::{AssemblySettings, Constraint, ContactBody, assemble};
use fem_contact::cone::frame_from_normal;
use fem_contact::detect::{
    DetectError, DetectSettings, Detected, MaterialTable, Obstacle, Other, PlacedShape,
    constraints_of, detect,
};
use fem_contact::{Law, NsgsReport, NsgsSettings, SolveError, solve};
use fem_time::{Clock, Energy, Invariant, StateField, StateKind, StepError, StepReport, restored};
use nalgebra::Vector3;
use rayon::prelude::*;

use crate::group::BodyGroup;

/// A bilateral constraint between a body and the world or another body.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkKind {
    /// The body's point stays at the world point (or at the other body's point): three rows.
    FixedPoint,
    /// The body's point does not move along `direction` (world, fixed): one row.
    FixedDirection {
        /// The direction (any length but zero).
        direction: Vector3<f64>,
    },
    /// The distance between the two points stays what it is at the start: one row.
    RigidLink,
}

/// A link as given: its kind, the first body and its point, the other body (or the fixed
/// world) and its point. Points are world points at the start.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The kind.
    pub kind: LinkKind,
    /// The first body (scene numbering).
    pub body: usize,
    /// The point of the first body.
    pub point: Vector3<f64>,
    /// The other body, or `None` for the fixed world.
    pub other: Option<usize>,
    /// The point of the other body (or the fixed world point).
    pub other_point: Vector3<f64>,
}

/// A link resolved against the bodies: body coordinates of its points.
#[derive(Clone, Debug)]
struct ResolvedLink {
    kind: LinkKind,
    body: usize,
    body_point: Vector3<f64>,
    other: Option<usize>,
    /// Body coordinates on the other body, or the world point.
    other_point: Vector3<f64>,
    /// A rigid link's length.
    length: f64,
}

/// How far apart detected points may be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prediction {
    /// `2 h s + δ_min` each step, `s` the largest speed of any body point in the step (so
    /// that no approach is missed between two detections), `δ_min` a millionth of the
    /// smallest body.
    Auto,
    /// A fixed distance.
    Distance(f64),
}

/// The scene's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneSettings {
    /// The contact solver's.
    pub solver: NsgsSettings,
    /// The prediction distance of detection.
    pub prediction: Prediction,
}

impl Default for SceneSettings {
    fn default() -> Self {
        Self {
            solver: NsgsSettings::default(),
            prediction: Prediction::Auto,
        }
    }
}

/// Why a scene could not be built or stepped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SceneError {
    /// A link names a body the scene does not have.
    #[error("link {link} names body {body}, but the scene has {bodies} bodies")]
    LinkBody {
        /// The link.
        link: usize,
        /// The body.
        body: usize,
        /// Number of bodies.
        bodies: usize,
    },
    /// A link between a body and itself.
    #[error("link {0} joins a body to itself")]
    LinkToItself(usize),
    /// A rigid link between two coincident points.
    #[error("link {0}: a rigid link needs two distinct points (its length is zero)")]
    ZeroLengthLink(usize),
    /// A fixed direction of zero length.
    #[error("link {0}: the fixed direction is not a direction (zero or not finite)")]
    NoDirection(usize),
    /// Detection failed.
    #[error("detection: {0}")]
    Detection(#[from] DetectError),
    /// The contact solver failed (the sweep cap with the policy "fail", or a non-finite
    /// impulse).
    #[error("step {step} (t = {t}): {source}")]
    Solve {
        /// The step (1-based).
        step: u64,
        /// Its start time.
        t: f64,
        /// The solver's error.
        source: SolveError,
    },
    /// The local problem could not be assembled.
    #[error("step {step} (t = {t}): the contact problem could not be assembled: {message}")]
    Assembly {
        /// The step.
        step: u64,
        /// Its start time.
        t: f64,
        /// Why.
        message: String,
    },
    /// Settings out of range.
    #[error("{0}")]
    Settings(String),
}

/// The state of a contact point after a step, as written to the contacts' frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContactState {
    /// No normal impulse.
    #[default]
    Open,
    /// A normal impulse and no tangential sliding.
    Stick,
    /// Sliding on the cone's surface.
    Slip,
}

impl ContactState {
    /// `0` open, `1` stick, `2` slip.
    pub fn code(self) -> f64 {
        match self {
            ContactState::Open => 0.0,
            ContactState::Stick => 1.0,
            ContactState::Slip => 2.0,
        }
    }
}

/// One contact point of the last step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactRecord {
    /// The point (mid-step configuration).
    pub point: Vector3<f64>,
    /// The unit normal, from the second party into the first.
    pub normal: Vector3<f64>,
    /// The normal force `r_N / h` (the impulse over the step).
    pub normal_force: f64,
    /// The tangential force (world), `Fᵀ (0, r_T) / h`.
    pub tangential_force: Vector3<f64>,
    /// The gap at detection (`< 0` overlapping).
    pub gap: f64,
    /// Open, stick or slip.
    pub state: ContactState,
    /// The first body (scene numbering) and the other party.
    pub first: usize,
    /// The other party: a body (scene numbering) or an obstacle.
    pub second: Other,
}

/// What the last step's contact solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolveSummary {
    /// Contact points (detected, open ones included).
    pub contacts: usize,
    /// Contact points with a normal impulse.
    pub active: usize,
    /// Link rows' points.
    pub links: usize,
    /// Contact points found among the previous step's (by identity: the same two parties,
    /// within a step's motion), whose impulses started the solve.
    pub warm_started: usize,
    /// The solver's report.
    pub report: NsgsReport,
    /// `‖q‖` of the solve (C4, C11): a converged solve leaves every normal velocity at most
    /// `τ ‖q‖` short of the law (`τ` the solver's tolerance), so a contact's next mid-step
    /// gap at most `h τ ‖q‖` below zero — the solver's tolerance in metres
    /// (docs/validation.md, "No node below a plane").
    pub q_norm: f64,
}

/// Time spent in each part of the steps so far (wall clock).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    /// The groups' begin and end.
    pub bodies: Duration,
    /// Detection and the constraint points.
    pub detection: Duration,
    /// Assembly of `W` and `q`, warm starts.
    pub assembly: Duration,
    /// The solve.
    pub solve: Duration,
    /// Impulses back, work, records.
    pub update: Duration,
}

/// The two parties of a contact (detection numbering of shapes), the first part of its
/// identity from one step to the next; the second is where it is (see [`WarmStarts::find`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct ContactKey {
    first: u32,
    /// `j` for shape `j`, `−1 − k` for obstacle `k`.
    second: i64,
}

impl ContactKey {
    fn of(d: &Detected) -> Self {
        Self {
            first: d.first as u32,
            second: match d.second {
                Other::Body(j) => j as i64,
                Other::Obstacle(k) => -1 - k as i64,
            },
        }
    }

    fn to_values(self) -> [f64; 2] {
        [f64::from(self.first), self.second as f64]
    }

    fn from_values(v: &[f64]) -> Option<Self> {
        let int = |x: f64, lo: f64, hi: f64| (x.fract() == 0.0 && x >= lo && x <= hi).then_some(x);
        Some(Self {
            first: int(v[0], 0.0, u32::MAX as f64)? as u32,
            second: int(v[1], -(u32::MAX as f64) - 1.0, u32::MAX as f64)? as i64,
        })
    }
}

/// The impulses of the last step by contact identity, sorted by parties (then in detection
/// order).
///
/// A contact is the same from one step to the next when it joins the same two parties at
/// nearly the same place: the nearest of the last step's points of the pair, within the
/// distance any body point moves in a step. Parry's feature ids are not used: on two faces
/// that coincide (a stack of boxes) the clipped manifold's points swap the features they
/// are attributed to from one step to the next while staying where they are, and a warm
/// start lost is a cold start of a statically indeterminate stack (tens of thousands of
/// sweeps).
#[derive(Clone, Debug, Default)]
struct WarmStarts {
    keys: Vec<ContactKey>,
    /// The contact point (mid-step, world).
    points: Vec<Vector3<f64>>,
    /// World impulse `Fᵀ r`.
    impulses: Vec<Vector3<f64>>,
    /// Local normal impulse `r_N` (zero for an impact's, which does not make a contact
    /// persistent).
    normal: Vec<f64>,
}

impl WarmStarts {
    /// The last step's contact of the same parties nearest to `point`, within `radius`
    /// (the first of equally near ones).
    fn find(&self, key: &ContactKey, point: &Vector3<f64>, radius: f64) -> Option<usize> {
        let lo = self.keys.partition_point(|x| x < key);
        let hi = self.keys.partition_point(|x| x <= key);
        let mut best: Option<(usize, f64)> = None;
        for k in lo..hi {
            let d = (self.points[k] - point).norm();
            if d <= radius && best.is_none_or(|(_, b)| d < b) {
                best = Some((k, d));
            }
        }
        best.map(|(k, _)| k)
    }
}

/// The scene's stepper (module documentation).
pub struct SceneStepper {
    groups: Vec<Box<dyn BodyGroup>>,
    offsets: Vec<usize>,
    obstacles: Vec<Obstacle>,
    materials: MaterialTable,
    links: Vec<ResolvedLink>,
    settings: SceneSettings,
    min_prediction: f64,
    clock: Clock,
    warm: WarmStarts,
    link_impulses: Vec<Vector3<f64>>,
    /// Dissipated by the normal impulses of contacts, by their tangential impulses, and the
    /// work of the links, since the start.
    dissipated_impact: f64,
    dissipated_friction: f64,
    link_work: f64,
    last: SolveSummary,
    contacts: Vec<ContactRecord>,
    timing: Timing,
}

impl std::fmt::Debug for SceneStepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneStepper")
            .field("bodies", &self.n_bodies())
            .field("obstacles", &self.obstacles.len())
            .field("links", &self.links.len())
            .field("clock", &self.clock)
            .finish()
    }
}

impl SceneStepper {
    /// A scene of `groups` (their bodies numbered group after group), `obstacles`, surface
    /// materials (each body's shape and each obstacle carry a material index into
    /// `materials`), and `links`, stepped by `settings`. The clock is the first group's (every
    /// group must have the same).
    pub fn new(
        groups: Vec<Box<dyn BodyGroup>>,
        obstacles: Vec<Obstacle>,
        materials: MaterialTable,
        links: &[Link],
        settings: SceneSettings,
    ) -> Result<Self, SceneError> {
        let mut offsets = vec![0];
        for g in &groups {
            offsets.push(offsets.last().copied().unwrap_or(0) + g.len());
        }
        let clock = groups.first().map(|g| g.clock()).ok_or_else(|| {
            SceneError::Settings("a scene needs at least one group of bodies".into())
        })?;
        if groups.iter().any(|g| g.clock() != clock) {
            return Err(SceneError::Settings(
                "the groups of a scene must share their clock (t0, dt and step)".into(),
            ));
        }
        if let Prediction::Distance(d) = settings.prediction
            && !(d.is_finite() && d >= 0.0)
        {
            return Err(SceneError::Settings(format!(
                "prediction: expected a distance ≥ 0, got {d}"
            )));
        }
        let mut scene = Self {
            groups,
            offsets,
            obstacles,
            materials,
            links: Vec::new(),
            settings,
            min_prediction: 0.0,
            clock,
            warm: WarmStarts::default(),
            link_impulses: Vec::new(),
            dissipated_impact: 0.0,
            dissipated_friction: 0.0,
            link_work: 0.0,
            last: SolveSummary::default(),
            contacts: Vec::new(),
            timing: Timing::default(),
        };
        let n = scene.n_bodies();
        for (l, link) in links.iter().enumerate() {
            for b in std::iter::once(link.body).chain(link.other) {
                if b >= n {
                    return Err(SceneError::LinkBody {
                        link: l,
                        body: b,
                        bodies: n,
                    });
                }
            }
            if link.other == Some(link.body) {
                return Err(SceneError::LinkToItself(l));
            }
            let body_point = scene.body_coordinates(link.body, &link.point);
            let other_point = match link.other {
                Some(o) => scene.body_coordinates(o, &link.other_point),
                None => link.other_point,
            };
            let length = (link.point - link.other_point).norm();
            match &link.kind {
                LinkKind::RigidLink if !(length > 0.0 && length.is_finite()) => {
                    return Err(SceneError::ZeroLengthLink(l));
                }
                LinkKind::FixedDirection { direction }
                    if !(direction.norm() > 0.0 && direction.norm().is_finite()) =>
                {
                    return Err(SceneError::NoDirection(l));
                }
                _ => {}
            }
            scene.links.push(ResolvedLink {
                kind: link.kind.clone(),
                body: link.body,
                body_point,
                other: link.other,
                other_point,
                length,
            });
        }
        scene.link_impulses = vec![Vector3::zeros(); scene.links.len()];
        let (shapes, _) = scene.placed_shapes();
        let smallest = shapes
            .iter()
            .map(|s| s.shape.bounding_radius())
            .fold(f64::INFINITY, f64::min);
        scene.min_prediction = if smallest.is_finite() {
            1e-6 * smallest
        } else {
            0.0
        };
        Ok(scene)
    }

    /// Number of bodies.
    pub fn n_bodies(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// The groups.
    pub fn groups(&self) -> &[Box<dyn BodyGroup>] {
        &self.groups
    }

    /// The groups, to read or draw them.
    pub fn groups_mut(&mut self) -> &mut [Box<dyn BodyGroup>] {
        &mut self.groups
    }

    /// The group and its index of scene body `b`.
    fn locate(&self, b: usize) -> (usize, usize) {
        let g = self.offsets.partition_point(|&o| o <= b) - 1;
        (g, b - self.offsets[g])
    }

    fn body_coordinates(&self, b: usize, point: &Vector3<f64>) -> Vector3<f64> {
        let (g, i) = self.locate(b);
        self.groups[g].body_coordinates(i, point)
    }

    fn mid_step_point(&self, b: usize, body_point: &Vector3<f64>) -> Vector3<f64> {
        let (g, i) = self.locate(b);
        self.groups[g].mid_step_point(i, body_point)
    }

    /// Every body's shapes where the groups show them now (mid-step inside a step), and
    /// their bodies (scene numbering).
    fn placed_shapes(&self) -> (Vec<PlacedShape>, Vec<usize>) {
        let (shapes, owners, _) = self.placed_shapes_of_groups();
        (shapes, owners)
    }

    /// [`Self::placed_shapes`] and each shape's group and index in its group.
    fn placed_shapes_of_groups(&self) -> (Vec<PlacedShape>, Vec<usize>, Vec<(usize, usize)>) {
        let mut shapes = Vec::with_capacity(self.n_bodies());
        let mut owners = Vec::with_capacity(self.n_bodies());
        let mut of_group = Vec::with_capacity(self.n_bodies());
        for (g, group) in self.groups.iter().enumerate() {
            let start = owners.len();
            group.placed_shapes(&mut shapes, &mut owners);
            for (k, o) in owners[start..].iter_mut().enumerate() {
                *o += self.offsets[g];
                of_group.push((g, k));
            }
        }
        (shapes, owners, of_group)
    }

    /// The contact points of the configuration now (at a step boundary), within `prediction`:
    /// for the check of bodies that start interpenetrating.
    pub fn contacts_now(&self, prediction: f64) -> Result<Vec<Detected>, SceneError> {
        let (shapes, owners, of_group) = self.placed_shapes_of_groups();
        let mut found = detect(&shapes, &self.obstacles, &DetectSettings { prediction })?;
        for d in &mut found {
            d.first = owners[d.first];
            if let Other::Body(j) = &mut d.second {
                *j = owners[*j];
            }
        }
        // And on the groups' own surfaces (a solid's faces).
        let mut constraints = Vec::new();
        let (mut keys, mut seconds) = (Vec::new(), Vec::new());
        self.surface_constraints(
            &shapes,
            &owners,
            &of_group,
            prediction,
            &mut constraints,
            &mut keys,
            &mut seconds,
        );
        found.extend(constraints.iter().zip(seconds).map(|(c, second)| Detected {
            first: c.first,
            second,
            point: c.point,
            normal: c.frame.row(0).transpose(),
            gap: c.gap,
            features: [0; 4],
        }));
        Ok(found)
    }

    /// The obstacles.
    pub fn obstacles(&self) -> &[Obstacle] {
        &self.obstacles
    }

    /// The contact points of the last step.
    pub fn contacts(&self) -> &[ContactRecord] {
        &self.contacts
    }

    /// What the last step's solve did.
    pub fn last_solve(&self) -> &SolveSummary {
        &self.last
    }

    /// Energy dissipated by the normal impulses of contacts since the start (impacts, and the
    /// stop of a landing).
    pub fn dissipated_impact(&self) -> f64 {
        self.dissipated_impact
    }

    /// Energy dissipated by friction since the start.
    pub fn dissipated_friction(&self) -> f64 {
        self.dissipated_friction
    }

    /// Work of the links' impulses since the start (their drift correction).
    pub fn link_work(&self) -> f64 {
        self.link_work
    }

    /// Time spent so far, by part of the step.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// The settings.
    pub fn settings(&self) -> &SceneSettings {
        &self.settings
    }

    /// The link constraints at mid-step, after the contacts.
    fn link_constraints(&self) -> Vec<Constraint> {
        self.links
            .iter()
            .map(|l| {
                let p1 = self.mid_step_point(l.body, &l.body_point);
                let p2 = match l.other {
                    Some(o) => self.mid_step_point(o, &l.other_point),
                    None => l.other_point,
                };
                let d = p1 - p2;
                let (frame, gap, law) = match &l.kind {
                    LinkKind::FixedPoint => {
                        let n = d.norm();
                        let normal = if n > 0.0 { d / n } else { Vector3::z() };
                        (frame_from_normal(&normal), n, Law::FixedPoint)
                    }
                    LinkKind::FixedDirection { direction } => {
                        let n = direction.normalize();
                        (frame_from_normal(&n), n.dot(&d), Law::FixedDirection)
                    }
                    LinkKind::RigidLink => {
                        let n = d.norm();
                        let normal = if n > 0.0 { d / n } else { Vector3::z() };
                        (frame_from_normal(&normal), n - l.length, Law::RigidLink)
                    }
                };
                Constraint {
                    first: l.body,
                    second: l.other,
                    point: p1,
                    point_second: p2,
                    frame,
                    gap,
                    law,
                }
            })
            .collect()
    }

    /// Appends the contacts every group finds on its own bodies' surfaces
    /// ([`BodyGroup::surface_contacts`]) to `constraints`, with their identity (first: the
    /// first party's shape; second: past the shapes, the face's body) and second party.
    #[allow(clippy::too_many_arguments)]
    fn surface_constraints(
        &self,
        shapes: &[PlacedShape],
        owners: &[usize],
        of_group: &[(usize, usize)],
        prediction: f64,
        constraints: &mut Vec<Constraint>,
        keys: &mut Vec<ContactKey>,
        seconds: &mut Vec<Other>,
    ) {
        use crate::group::SurfaceParty;
        for (g, group) in self.groups.iter().enumerate() {
            let foreign: Vec<bool> = of_group
                .iter()
                .map(|&(h, _)| h != g && !self.groups[h].point_contacts())
                .collect();
            let found = group.surface_contacts(shapes, &foreign, prediction);
            if found.is_empty() {
                continue;
            }
            let start = of_group.partition_point(|&(h, _)| h < g);
            for sc in found {
                let (first, shape) = match sc.first {
                    SurfaceParty::Own { body, shape } => (self.offsets[g] + body, start + shape),
                    SurfaceParty::Shape(s) => (owners[s], s),
                };
                let second = self.offsets[g] + sc.second;
                if first == second {
                    continue;
                }
                constraints.push(Constraint {
                    first,
                    second: Some(second),
                    point: sc.point,
                    point_second: sc.point_second,
                    frame: frame_from_normal(&sc.normal),
                    gap: sc.gap,
                    law: self.materials.pair(sc.materials.0, sc.materials.1).law(),
                });
                keys.push(ContactKey {
                    first: shape as u32,
                    second: (shapes.len() + second) as i64,
                });
                seconds.push(Other::Body(second));
            }
        }
    }

    /// One step (module documentation).
    pub fn step_scene(&mut self) -> Result<StepReport, StepError> {
        let step = self.clock.step() + 1;
        let t = self.clock.time();
        let h = self.clock.dt();
        let fail = |e: SceneError| StepError::model(step, t, e);
        let start = Instant::now();
        for g in &mut self.groups {
            g.begin_step()?;
        }
        let begun = Instant::now();
        self.timing.bodies += begun - start;

        // Detection at mid-step.
        let (shapes, owners, of_group) = self.placed_shapes_of_groups();
        let speed = self
            .groups
            .iter()
            .map(|g| g.speed_bound())
            .fold(0.0, f64::max);
        let prediction = match self.settings.prediction {
            Prediction::Auto => 2.0 * h * speed + self.min_prediction,
            Prediction::Distance(d) => d,
        };
        let detected = detect(&shapes, &self.obstacles, &DetectSettings { prediction })
            .map_err(|e| fail(SceneError::Detection(e)))?;
        let mut constraints = constraints_of(&detected, &shapes, &self.materials);
        let keys: Vec<ContactKey> = detected.iter().map(ContactKey::of).collect();
        // Where each point acts (a solid's node, not the ball detection saw), then bodies.
        let snap = |shape: usize, point: &Vector3<f64>| {
            let (g, k) = of_group[shape];
            self.groups[g].contact_point(k, point)
        };
        let points_only = |shape: usize| self.groups[of_group[shape].0].point_contacts();
        let mut node_to_node = vec![false; constraints.len()];
        for (i, (c, d)) in constraints.iter_mut().zip(&detected).enumerate() {
            if let Some(p) = snap(d.first, &c.point) {
                c.point = p;
            }
            if let Other::Body(j) = d.second {
                if let Some(p) = snap(j, &c.point_second) {
                    c.point_second = p;
                }
                node_to_node[i] = points_only(d.first) && points_only(j);
            }
            c.first = owners[c.first];
            c.second = c.second.map(|j| owners[j]);
        }
        // A body's own shapes do not meet, nor two solids' nodes.
        let kept: Vec<usize> = (0..constraints.len())
            .filter(|&i| constraints[i].second != Some(constraints[i].first) && !node_to_node[i])
            .collect();
        if kept.len() < constraints.len() {
            constraints = kept.iter().map(|&i| constraints[i].clone()).collect();
        }
        let mut keys: Vec<ContactKey> = kept.iter().map(|&i| keys[i]).collect();
        let mut seconds: Vec<Other> = kept
            .iter()
            .zip(&constraints)
            .map(|(&i, c)| match detected[i].second {
                Other::Obstacle(k) => Other::Obstacle(k),
                Other::Body(_) => Other::Body(c.second.unwrap_or(0)),
            })
            .collect();
        // Contacts on the groups' own surfaces (a solid's faces met by another solid's nodes
        // or by a rigid shape), after the detected ones.
        self.surface_constraints(
            &shapes,
            &owners,
            &of_group,
            prediction,
            &mut constraints,
            &mut keys,
            &mut seconds,
        );
        let gaps: Vec<f64> = constraints.iter().map(|c| c.gap).collect();
        let n_contacts = constraints.len();
        constraints.extend(self.link_constraints());
        let detected_at = Instant::now();
        self.timing.detection += detected_at - begun;

        // Start velocities, rule (R), assembly, warm start.
        let bodies: Vec<&dyn ContactBody> = self
            .groups
            .iter()
            .flat_map(|g| (0..g.len()).map(move |i| g.contact_body(i)))
            .collect();
        let start_local: Vec<Vector3<f64>> = constraints
            .par_iter()
            .with_min_len(512)
            .map(|c| local_velocity(c, &bodies, |b| b.start_velocity()))
            .collect();
        let free_normal: Vec<f64> = constraints[..n_contacts]
            .par_iter()
            .with_min_len(512)
            .map(|c| local_velocity(c, &bodies, |b| b.free_velocity()).x)
            .collect();
        // How far a body point moves in a step: the radius within which a contact is the
        // same as one of the last step.
        let moved = h * speed + self.min_prediction;
        let previous: Vec<Option<usize>> = keys
            .iter()
            .zip(&constraints)
            .map(|(k, c)| self.warm.find(k, &c.point, moved))
            .collect();
        let mut impacts = vec![false; n_contacts];
        // Contacts of massless nodes take the position-level law (§9.1): no rule (R). Those on
        // the groups' own faces (after the detected ones) keep the velocity law.
        let mut position_level: Vec<bool> = kept
            .iter()
            .map(|&j| {
                let d = &detected[j];
                let level = |shape: usize| {
                    let (g, k) = of_group[shape];
                    self.groups[g].position_level(k)
                };
                level(d.first) || matches!(d.second, Other::Body(s) if level(s))
            })
            .collect();
        position_level.resize(n_contacts, false);
        // Contacts of nodes under the mid-step position law (§9.2, a solid's default): no
        // rule (R) either.
        let mut mid_step_level: Vec<bool> = kept
            .iter()
            .map(|&j| {
                let d = &detected[j];
                let level = |shape: usize| {
                    let (g, k) = of_group[shape];
                    self.groups[g].mid_step_level(k)
                };
                level(d.first) || matches!(d.second, Other::Body(s) if level(s))
            })
            .collect();
        // A contact on a group's own faces takes the mid-step law when the face's body does.
        for c in &constraints[mid_step_level.len()..n_contacts] {
            let face = c.second.map(|b| self.locate(b));
            mid_step_level.push(face.is_some_and(|(g, b)| self.groups[g].mid_step_body(b)));
        }
        for (i, c) in constraints.iter_mut().take(n_contacts).enumerate() {
            let Law::Contact { friction, .. } = c.law else {
                continue;
            };
            if position_level[i] || mid_step_level[i] {
                c.law = Law::Contact {
                    friction,
                    restitution: 0.0,
                };
                continue;
            }
            let persistent = previous[i].is_some_and(|k| self.warm.normal[k] > 0.0);
            let (start, free) = (start_local[i].x, free_normal[i]);
            let closing = c.gap <= 0.0 || c.gap + h * free < 0.0;
            // An approach no faster than what one step of the applied forces gives is below
            // the step's resolution: a landing, not an impact.
            let impact = !persistent && closing && -start > (free - start).abs();
            impacts[i] = impact;
            if impact {
                // Crossed before the next detection: an impact now, at mid-step, with
                // restitution (R2).
                c.gap = c.gap.min(0.0);
                if let Law::Contact { restitution, .. } = c.law {
                    let half_kick = 0.5 * (free - start);
                    let at_impact = start + half_kick;
                    let target = -restitution * at_impact + half_kick;
                    c.law = Law::Contact {
                        friction,
                        restitution: (-target / start).clamp(0.0, 1.0),
                    };
                }
            } else {
                c.law = Law::Contact {
                    friction,
                    restitution: 0.0,
                };
            }
        }
        let gap_rate = 1.0 / h;
        let mut assembly = assemble(&constraints, &bodies, &AssemblySettings { gap_rate })
            .map_err(|e| {
                fail(SceneError::Assembly {
                    step,
                    t,
                    message: e.to_string(),
                })
            })?;
        // The position-level law: q_N += 2g/h for either sign of g (eq. C17), in place of
        // the assembly's g/h for g > 0.
        let shifts = constraints
            .iter()
            .take(n_contacts)
            .enumerate()
            .filter_map(|(i, c)| {
                if position_level[i] {
                    let assembled = if c.gap > 0.0 { gap_rate * c.gap } else { 0.0 };
                    Some((i, 2.0 * gap_rate * c.gap - assembled))
                } else if mid_step_level[i] && c.gap <= 0.0 {
                    // The mid-step law: q_N += g/h for either sign of g (eq. C18); the
                    // assembly gave g/h for g > 0 only.
                    Some((i, gap_rate * c.gap))
                } else {
                    None
                }
            });
        assembly.problem.shift_normals(shifts);
        let mut r: Vec<Vector3<f64>> = constraints
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let world = if i < n_contacts {
                    previous[i].map(|k| self.warm.impulses[k])
                } else {
                    Some(self.link_impulses[i - n_contacts])
                };
                world.map_or(Vector3::zeros(), |w| c.frame * w)
            })
            .collect();
        drop(bodies);
        let assembled = Instant::now();
        self.timing.assembly += assembled - detected_at;

        let report = solve(&assembly.problem, &mut r, &self.settings.solver)
            .map_err(|e| fail(SceneError::Solve { step, t, source: e }))?;
        let solved = Instant::now();
        self.timing.solve += solved - assembled;

        // Impulses back, work, records, warm starts.
        {
            let mut muts: Vec<&mut dyn ContactBody> = self
                .groups
                .iter_mut()
                .flat_map(|g| g.contact_bodies_mut())
                .collect();
            assembly.apply(&r, &mut muts);
        }
        let mut u = vec![Vector3::zeros(); constraints.len()];
        assembly.problem.velocity(&r, &mut u);
        let mut impact = 0.0;
        let mut friction = 0.0;
        let mut links = 0.0;
        let mut records = Vec::with_capacity(n_contacts);
        let mut active = 0;
        let tolerance = self.settings.solver.tolerance;
        for (i, c) in constraints.iter().enumerate() {
            let shift = match c.law {
                Law::Contact { .. } if position_level.get(i) == Some(&true) => {
                    2.0 * gap_rate * c.gap
                }
                Law::Contact { .. } if mid_step_level.get(i) == Some(&true) => gap_rate * c.gap,
                Law::Contact { restitution, .. } => {
                    if c.gap > 0.0 {
                        gap_rate * c.gap
                    } else {
                        restitution * start_local[i].x.min(0.0)
                    }
                }
                _ => gap_rate * c.gap,
            };
            let mut plus = u[i];
            plus.x -= shift;
            let work = 0.5 * r[i].component_mul(&(plus + start_local[i]));
            if i < n_contacts {
                impact -= work.x;
                friction -= work.y + work.z;
                let rn = r[i].x;
                let rt = Vector3::new(0.0, r[i].y, r[i].z);
                let state = if rn <= 0.0 {
                    ContactState::Open
                } else {
                    active += 1;
                    let slip = (plus.y * plus.y + plus.z * plus.z).sqrt();
                    let scale = assembly.problem.q()[i].norm().max(f64::MIN_POSITIVE);
                    if slip > tolerance * scale {
                        ContactState::Slip
                    } else {
                        ContactState::Stick
                    }
                };
                records.push(ContactRecord {
                    point: c.point,
                    normal: c.frame.row(0).transpose(),
                    normal_force: rn / h,
                    tangential_force: c.frame.transpose() * rt / h,
                    gap: gaps[i],
                    state,
                    first: c.first,
                    second: seconds[i],
                });
            } else {
                links += work.x + work.y + work.z;
            }
        }
        self.dissipated_impact += impact;
        self.dissipated_friction += friction;
        self.link_work += links;
        // Warm starts for the next step: sorted by parties, then in detection order.
        let mut order: Vec<usize> = (0..n_contacts).collect();
        order.sort_by_key(|&i| (keys[i], i));
        self.warm = WarmStarts {
            keys: order.iter().map(|&i| keys[i]).collect(),
            points: order.iter().map(|&i| constraints[i].point).collect(),
            impulses: order
                .iter()
                .map(|&i| constraints[i].frame.transpose() * r[i])
                .collect(),
            // What makes a contact persistent next step: a normal impulse that was not an
            // impact's.
            normal: order
                .iter()
                .map(|&i| if impacts[i] { 0.0 } else { r[i].x })
                .collect(),
        };
        for (l, c) in constraints[n_contacts..].iter().enumerate() {
            self.link_impulses[l] = c.frame.transpose() * r[n_contacts + l];
        }
        self.contacts = records;
        self.last = SolveSummary {
            contacts: n_contacts,
            active,
            links: constraints.len() - n_contacts,
            warm_started: previous.iter().filter(|p| p.is_some()).count(),
            report,
            q_norm: assembly.problem.norm_q(),
        };
        let updated = Instant::now();
        self.timing.update += updated - solved;

        let mut group_iterations = 0;
        for g in &mut self.groups {
            group_iterations = group_iterations.max(g.end_step()?.iterations);
        }
        self.timing.bodies += updated.elapsed();
        let _ = group_iterations;
        self.clock.advance();
        Ok(StepReport {
            iterations: report.sweeps as usize,
            residual: report.error,
            constraint_violation: 0.0,
        })
    }

    /// Kinetic and potential energy of every group, their applied loads' work, the
    /// dissipation of the contacts and the work of the links.
    pub fn scene_energy(&self) -> Energy {
        let mut e = Energy::new(0.0, 0.0);
        for g in &self.groups {
            let ge = g.energy();
            e.kinetic += ge.kinetic;
            e.potential += ge.potential;
            e.external_work += ge.external_work;
        }
        e.total = e.kinetic + e.potential;
        e.dissipated = self.dissipated_impact + self.dissipated_friction;
        for g in &self.groups {
            // (A body scheme's own dissipation: DEF_LIM's damping.)
            e.dissipated += g.energy().dissipated;
        }
        e.reaction_work = self.link_work;
        e
    }
}

/// The local velocity `F Σ ±H u` of a constraint for the velocity `which` of its bodies.
fn local_velocity(
    c: &Constraint,
    bodies: &[&dyn ContactBody],
    which: impl Fn(&dyn ContactBody) -> &[f64],
) -> Vector3<f64> {
    let mut world = Vector3::zeros();
    let mut h = Vec::new();
    for (b, sign, point) in std::iter::once((c.first, 1.0, &c.point))
        .chain(c.second.map(|b| (b, -1.0, &c.point_second)))
    {
        h.clear();
        bodies[b].point_map(point, &mut h);
        let u = which(bodies[b]);
        for &(d, v) in &h {
            world += sign * v * u[d];
        }
    }
    c.frame * world
}

impl fem_time::Stepper for SceneStepper {
    fn step(&mut self) -> Result<StepReport, StepError> {
        self.step_scene()
    }

    fn clock(&self) -> Clock {
        self.clock
    }

    fn energy(&self) -> Option<Energy> {
        Some(self.scene_energy())
    }

    fn invariant(&self) -> Invariant {
        // The contacts' and links' work is accounted exactly; what remains is each body
        // scheme's own (RIG_*: truncation).
        Invariant::Truncation
    }

    fn state(&self) -> Vec<StateField<'_>> {
        let mut fields = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            for f in group.state() {
                fields.push(StateField {
                    name: Cow::Owned(format!("group{g}.{}", f.name)),
                    kind: f.kind,
                    values: f.values,
                });
            }
        }
        let keys: Vec<f64> = self.warm.keys.iter().flat_map(|k| k.to_values()).collect();
        let impulses: Vec<f64> = self
            .warm
            .impulses
            .iter()
            .flat_map(|v| v.iter().copied())
            .collect();
        let links: Vec<f64> = self
            .link_impulses
            .iter()
            .flat_map(|v| v.iter().copied())
            .collect();
        let points: Vec<f64> = self
            .warm
            .points
            .iter()
            .flat_map(|v| v.iter().copied())
            .collect();
        fields.push(StateField::owned("warm_start_keys", StateKind::Other, keys));
        fields.push(StateField::owned(
            "warm_start_points",
            StateKind::Other,
            points,
        ));
        fields.push(StateField::owned(
            "warm_start_impulses",
            StateKind::Other,
            impulses,
        ));
        fields.push(StateField::owned(
            "warm_start_normal",
            StateKind::Other,
            self.warm.normal.clone(),
        ));
        fields.push(StateField::owned("link_impulses", StateKind::Other, links));
        fields.push(StateField::owned(
            "contact_work",
            StateKind::Other,
            vec![
                self.dissipated_impact,
                self.dissipated_friction,
                self.link_work,
            ],
        ));
        fields
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        for (g, group) in self.groups.iter_mut().enumerate() {
            let prefix = format!("group{g}.");
            let own: Vec<StateField<'_>> = fields
                .iter()
                .filter_map(|f| {
                    f.name.strip_prefix(&prefix).map(|name| StateField {
                        name: Cow::Owned(name.to_string()),
                        kind: f.kind,
                        values: Cow::Borrowed(&f.values[..]),
                    })
                })
                .collect();
            group.restore(step_index, &own)?;
        }
        let normal = fields
            .iter()
            .find(|f| f.name == "warm_start_normal")
            .map_or(0, |f| f.values.len());
        let keys = restored(fields, "warm_start_keys", 2 * normal)?;
        let points = restored(fields, "warm_start_points", 3 * normal)?;
        let impulses = restored(fields, "warm_start_impulses", 3 * normal)?;
        let normal = restored(fields, "warm_start_normal", normal)?;
        let links = restored(fields, "link_impulses", 3 * self.links.len())?;
        let work = restored(fields, "contact_work", 3)?;
        let keys: Option<Vec<ContactKey>> =
            keys.chunks_exact(2).map(ContactKey::from_values).collect();
        let keys = keys.ok_or(StepError::BadData {
            what: "warm_start_keys",
            found: 0,
            expected: 2 * normal.len(),
        })?;
        if keys.windows(2).any(|w| w[0] > w[1]) {
            return Err(StepError::BadData {
                what: "warm_start_keys (sorted)",
                found: keys.len(),
                expected: keys.len(),
            });
        }
        if impulses
            .iter()
            .chain(normal)
            .chain(points)
            .chain(links)
            .chain(work)
            .any(|v| !v.is_finite())
        {
            return Err(StepError::BadData {
                what: "warm starts and contact work (finite)",
                found: impulses.len(),
                expected: impulses.len(),
            });
        }
        self.warm = WarmStarts {
            keys,
            points: points
                .chunks_exact(3)
                .map(Vector3::from_column_slice)
                .collect(),
            impulses: impulses
                .chunks_exact(3)
                .map(Vector3::from_column_slice)
                .collect(),
            normal: normal.to_vec(),
        };
        self.link_impulses = links
            .chunks_exact(3)
            .map(Vector3::from_column_slice)
            .collect();
        self.dissipated_impact = work[0];
        self.dissipated_friction = work[1];
        self.link_work = work[2];
        self.clock.set_step(step_index);
        self.contacts.clear();
        self.last = SolveSummary::default();
        Ok(())
    }
}
