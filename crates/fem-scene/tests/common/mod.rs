//! Scenes for the validation tests, built from Rust as a downstream code would.
#![allow(dead_code)]

use fem_contact::detect::{MaterialTable, Obstacle, Shape};
use fem_contact::{NsgsSettings, SurfaceMaterial};
use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme};
use fem_scene::rigid::{RigidGroup, body_of_shape};
use fem_scene::{BodyGroup, Link, Prediction, SceneSettings, SceneStepper};
use nalgebra::Vector3;

/// One body of a test scene.
pub struct Body {
    pub shape: Shape,
    pub density: f64,
    pub position: [f64; 3],
    pub rotation: [f64; 3],
    pub velocity: [f64; 3],
    pub angular_velocity: [f64; 3],
    pub material: u32,
}

impl Body {
    pub fn new(shape: Shape, density: f64, position: [f64; 3]) -> Self {
        Self {
            shape,
            density,
            position,
            rotation: [0.0; 3],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            material: 0,
        }
    }
}

/// A plane through `point` with outward normal `normal`.
pub fn plane(point: [f64; 3], normal: [f64; 3]) -> Obstacle {
    Obstacle::Plane {
        point: Vector3::from(point),
        normal: Vector3::from(normal).normalize(),
    }
}

/// One material for every pair.
pub fn materials(friction: f64, restitution: f64, obstacles: usize) -> MaterialTable {
    MaterialTable {
        default: SurfaceMaterial::new(friction, restitution).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0; obstacles],
    }
}

/// A scene of rigid bodies (every part of a test scene spelled out at the call).
#[allow(clippy::too_many_arguments)]
pub fn scene(
    bodies: Vec<Body>,
    gravity: [f64; 3],
    obstacles: Vec<Obstacle>,
    materials: MaterialTable,
    links: &[Link],
    scheme: Scheme,
    h: f64,
    solver: NsgsSettings,
) -> SceneStepper {
    let mut set = RigidBodies::new(gravity).unwrap();
    let mut shapes = Vec::new();
    let mut mats = Vec::new();
    for b in bodies {
        let mut body: RigidBody = body_of_shape(&b.shape, b.density).unwrap();
        body.position = b.position;
        body.rotation = b.rotation;
        body.velocity = b.velocity;
        body.angular_velocity = AngularVelocity::Spatial(b.angular_velocity);
        set.push(body).unwrap();
        shapes.push(b.shape);
        mats.push(b.material);
    }
    let stepper = RigidStepper::new(set, scheme, h, 0.0).unwrap();
    let group = RigidGroup::new(stepper, shapes, mats).unwrap();
    SceneStepper::new(
        vec![Box::new(group) as Box<dyn BodyGroup>],
        obstacles,
        materials,
        links,
        SceneSettings {
            solver,
            prediction: Prediction::Auto,
        },
    )
    .unwrap()
}

/// A scene of `groups` over the floor `z = 0`: frictionless, no restitution, NSGS to
/// `tolerance`.
pub fn on_the_floor(groups: Vec<Box<dyn BodyGroup>>, tolerance: f64) -> SceneStepper {
    SceneStepper::new(
        groups,
        vec![plane([0.0; 3], [0.0, 0.0, 1.0])],
        materials(0.0, 0.0, 1),
        &[],
        SceneSettings {
            solver: tight(tolerance),
            prediction: Prediction::Auto,
        },
    )
    .unwrap()
}

/// Tight solver settings.
pub fn tight(tolerance: f64) -> NsgsSettings {
    NsgsSettings {
        tolerance,
        ..Default::default()
    }
}

/// The rigid group of a one-group scene.
pub fn rigid(s: &SceneStepper) -> &RigidGroup {
    s.groups()[0]
        .as_any()
        .downcast_ref::<RigidGroup>()
        .expect("a rigid group")
}

/// The contact solver's tolerance in metres for the last step: a converged solve leaves a
/// contact's normal velocity at most `τ ‖q‖` short of the law (`τ` the solver's tolerance on
/// (C11)), so its next mid-step gap at most `h τ ‖q‖` below zero (docs/validation.md, "No
/// node below a plane").
pub fn solver_tolerance_in_metres(s: &SceneStepper) -> f64 {
    use fem_time::Stepper;
    s.clock().dt() * s.settings().solver.tolerance * s.last_solve().q_norm
}
