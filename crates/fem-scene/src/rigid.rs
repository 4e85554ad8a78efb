//! Rigid bodies in a scene: [`RigidGroup`], fem-rigid's [`RigidStepper`] (RIG_POS, RIG_NEG,
//! RIG_IMP) with a convex shape and a surface material per body, as a [`BodyGroup`].
//!
//! Each body's shape is given in its body frame with the origin at its centre of mass (the
//! frame of [`fem_rigid::RigidBodies::material_point`]); detection sees it at
//! `x^{t+h/2} + Λ^{t+h/2} B`. The contact dofs, `H` and `A⁻¹` are fem-rigid's
//! ([`fem_rigid::contact`]).

use fem_contact::body::ContactBody;
use fem_contact::detect::{PlacedShape, Placement, Shape, ShapeMass};
use fem_io::Frame;
use fem_mesh::{CellBlock, CellKind, Mesh};
use fem_rigid::{Drawing, RigidBody, RigidStepper};
use fem_time::{Clock, Energy, StateField, StepError, Stepper};
use nalgebra::{Matrix3, Vector3};

use crate::group::{BodyGroup, GroupStep};

/// Why a rigid group could not be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RigidGroupError {
    /// Lists of different lengths.
    #[error("{bodies} bodies but {shapes} shapes and {materials} materials")]
    Lengths {
        /// Bodies.
        bodies: usize,
        /// Shapes.
        shapes: usize,
        /// Materials.
        materials: usize,
    },
    /// A shape whose centre of mass is not at its frame's origin.
    #[error(
        "body {body}: its shape's centre of mass is at {offset:e} from the origin of its frame (shapes of bodies are given about their centre of mass)"
    )]
    NotCentred {
        /// The body.
        body: usize,
        /// The distance.
        offset: f64,
    },
    /// A shape without volume where mass properties were asked of it.
    #[error("the shape has no volume to mass")]
    NoVolume,
}

/// Rigid bodies with shapes, stepped by a [`RigidStepper`] (module documentation).
#[derive(Debug)]
pub struct RigidGroup {
    stepper: RigidStepper,
    shapes: Vec<Shape>,
    materials: Vec<u32>,
    radii: Vec<f64>,
    drawing: Drawing,
    descriptions: Vec<String>,
}

/// A rigid body massed from its shape: the shape's solid of uniform `density`, with the
/// body's centre of mass at the shape frame's origin (sphere, box, or a hull built about its
/// centre by [`centred_hull`]). The position, rotation and velocities are left at rest at the
/// origin for the caller to set.
pub fn body_of_shape(shape: &Shape, density: f64) -> Result<RigidBody, RigidGroupError> {
    let m = shape
        .mass_properties(density)
        .ok_or(RigidGroupError::NoVolume)?;
    Ok(body_of_mass(&m))
}

/// A rigid body of the mass properties `m` (about its centre of mass).
pub fn body_of_mass(m: &ShapeMass) -> RigidBody {
    let j = m.inertia;
    RigidBody::new(
        m.mass,
        [0, 1, 2].map(|r| [0, 1, 2].map(|c| 0.5 * (j[(r, c)] + j[(c, r)]))),
    )
}

/// The convex hull of `points` moved so that its centre of mass is at the origin: the shape,
/// its mass properties at `density`, and the centre of mass in the points' coordinates.
pub fn centred_hull(
    points: &[Vector3<f64>],
    density: f64,
) -> Result<(Shape, ShapeMass, Vector3<f64>), fem_contact::detect::ShapeError> {
    let hull = Shape::convex_hull(points)?;
    let m = hull
        .mass_properties(density)
        .ok_or(fem_contact::detect::ShapeError::Flat(points.len()))?;
    let c = m.centre;
    let moved: Vec<Vector3<f64>> = points.iter().map(|p| p - c).collect();
    let shape = Shape::convex_hull(&moved)?;
    let mass = shape
        .mass_properties(density)
        .ok_or(fem_contact::detect::ShapeError::Flat(points.len()))?;
    Ok((shape, mass, c))
}

/// How finely a sphere is drawn: meridians `2n`, parallels `n`.
pub const SPHERE_DRAWING: u32 = 6;

impl RigidGroup {
    /// A group of the stepper's bodies with their shapes (body frame, about the centre of
    /// mass) and surface materials; each body is drawn by its shape.
    pub fn new(
        stepper: RigidStepper,
        shapes: Vec<Shape>,
        materials: Vec<u32>,
    ) -> Result<Self, RigidGroupError> {
        let n = stepper.bodies().len();
        if shapes.len() != n || materials.len() != n {
            return Err(RigidGroupError::Lengths {
                bodies: n,
                shapes: shapes.len(),
                materials: materials.len(),
            });
        }
        let mut drawing = Drawing::new();
        for (i, shape) in shapes.iter().enumerate() {
            let mesh = shape_mesh(shape);
            let centre = stepper.bodies().positions()[i];
            // The drawing's reference configuration: the body at its start position, unrotated
            // (its displacement is measured from there).
            let placed = Mesh {
                points: mesh.points.iter().map(|p| add3(*p, centre)).collect(),
                ..mesh.clone()
            };
            // A triangle surface always draws.
            let _ = drawing.push_mesh(i, centre, &placed);
        }
        let radii = shapes.iter().map(Shape::bounding_radius).collect();
        Ok(Self {
            stepper,
            shapes,
            materials,
            radii,
            drawing,
            descriptions: Vec::new(),
        })
    }

    /// The same group with these lines for `fem check` (one per body, the first ten shown).
    pub fn with_descriptions(mut self, lines: Vec<String>) -> Self {
        self.descriptions = lines;
        self
    }

    /// The stepper, with the bodies and their state.
    pub fn stepper(&self) -> &RigidStepper {
        &self.stepper
    }

    /// The shapes.
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    fn placement(&self, i: usize) -> (Vector3<f64>, Matrix3<f64>) {
        let (x, r) = if self.stepper.in_contact_step() {
            self.stepper.mid_step_placement(i)
        } else {
            let b = self.stepper.bodies();
            (b.positions()[i], b.rotation(i))
        };
        (Vector3::from(x), Matrix3::from_fn(|row, col| r[row][col]))
    }
}

fn add3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// A shape's surface as a mesh of triangles (body frame).
pub fn shape_mesh(shape: &Shape) -> Mesh {
    let (points, triangles) = shape.triangles(SPHERE_DRAWING);
    let mut block = CellBlock::new(CellKind::Tri3);
    for t in &triangles {
        block.push(&t.map(|k| k as usize));
    }
    Mesh {
        points: points.iter().map(|p| [p.x, p.y, p.z]).collect(),
        blocks: vec![block],
        groups: Vec::new(),
    }
}

impl BodyGroup for RigidGroup {
    fn kind(&self) -> &'static str {
        "rigid bodies"
    }

    fn len(&self) -> usize {
        self.stepper.bodies().len()
    }

    fn begin_step(&mut self) -> Result<(), StepError> {
        let (step, t) = (self.stepper.step_index() + 1, self.stepper.time());
        self.stepper
            .begin_contact_step()
            .map_err(|e| StepError::model(step, t, e))
    }

    fn contact_body(&self, i: usize) -> &dyn ContactBody {
        &self.stepper.contact_bodies()[i]
    }

    fn contact_bodies_mut(&mut self) -> Vec<&mut dyn ContactBody> {
        self.stepper
            .contact_bodies_mut()
            .iter_mut()
            .map(|b| b as &mut dyn ContactBody)
            .collect()
    }

    fn placed_shapes(&self, shapes: &mut Vec<PlacedShape>, owners: &mut Vec<usize>) {
        for (i, shape) in self.shapes.iter().enumerate() {
            let (x, r) = self.placement(i);
            shapes.push(PlacedShape {
                shape: shape.clone(),
                placement: Placement {
                    translation: x,
                    rotation: r,
                },
                material: self.materials[i],
            });
            owners.push(i);
        }
    }

    fn mid_step_point(&self, i: usize, body_point: &Vector3<f64>) -> Vector3<f64> {
        let (x, r) = self.placement(i);
        x + r * body_point
    }

    fn body_coordinates(&self, i: usize, point: &Vector3<f64>) -> Vector3<f64> {
        let (x, r) = self.placement(i);
        r.transpose() * (point - x)
    }

    fn speed_bound(&self) -> f64 {
        let bodies = self.stepper.contact_bodies();
        bodies
            .iter()
            .zip(&self.radii)
            .map(|(b, r)| {
                let norm = |u: &[f64], k: usize| {
                    (u[k] * u[k] + u[k + 1] * u[k + 1] + u[k + 2] * u[k + 2]).sqrt()
                };
                let (s, f) = (b.start_velocity(), b.free_velocity());
                norm(s, 0).max(norm(f, 0)) + norm(s, 3).max(norm(f, 3)) * r
            })
            .fold(0.0, f64::max)
    }

    fn end_step(&mut self) -> Result<GroupStep, StepError> {
        let (step, t) = (self.stepper.step_index() + 1, self.stepper.time());
        let report = self
            .stepper
            .end_contact_step()
            .map_err(|e| StepError::model(step, t, e))?;
        Ok(GroupStep {
            iterations: report.newton_iterations,
            residual: report.newton_residual,
        })
    }

    fn clock(&self) -> Clock {
        Stepper::clock(&self.stepper)
    }

    fn energy(&self) -> Energy {
        self.stepper.energy_of(&self.stepper.observables())
    }

    fn state(&self) -> Vec<StateField<'_>> {
        Stepper::state(&self.stepper)
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        Stepper::restore(&mut self.stepper, step_index, fields)
    }

    fn frame(&mut self) -> Frame<'_> {
        self.drawing.update(self.stepper.bodies());
        self.drawing.frame()
    }

    fn describe(&self) -> Vec<String> {
        let mut lines = self.descriptions.clone();
        if lines.is_empty() {
            lines.push(format!("  {} rigid bodies", self.len()));
        }
        lines
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
