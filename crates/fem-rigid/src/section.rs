//! The `model.rigid_bodies` input section: rigid bodies given by their mass properties (or by
//! a volume mesh and a density), drawn by a mesh or a box, with their initial state, fixed
//! points and applied loads. Every key is in `docs/input.md`.
//!
//! # Placement
//! Each body has a **reference configuration**, where the body frame coincides with the
//! spatial axes (`Λ = I`): the coordinates of its drawing (and of its mesh) and its
//! `centre_of_mass` are given there. `rotation` `Ψ0` turns it by `Λ(t0) = exp[Ψ0]` about its
//! fixed point if it has one, otherwise about its centre of mass; a free body is then moved so
//! that its centre of mass is at `position`. So a heavy top is written as it stands upright,
//! tilted by `rotation` about its tip, and a drawing point at reference position `X` is at
//! `x_c(t) + Λ(t) (X − c)` at time `t`.
//!
//! Vectors are read as lists and their length checked here, so that a wrong one is refused
//! with its YAML path (`model.rigid_bodies.bodies[0].rotation`), not only its line.

use std::path::PathBuf;

use fem_constraints::TimeFunction;
use fem_model::build::{msh_memory, time_function, time_grid};
use fem_model::input::{FunctionInput, OfferedScheme, TimeSetting};
use fem_model::resources::frame_bytes;
use fem_model::{InputError, Model, ModelSection, Sections, Uses};
use serde::Deserialize;

use crate::bodies::{AngularVelocity, RigidBodies, RigidBody};
use crate::drawing::{Drawing, equivalent_box};
use crate::error::RigidError;
use crate::mat3::{IDENTITY, Mat3, add, mat_mul_t, mat_vec, norm, sub};
use crate::model::{BodySummary, HISTORY_COLUMNS, RigidModel};
use crate::rotation::exp_map;
use crate::scheme::{RigImpSettings, Scheme};
use crate::stepper::RigidStepper;

/// Rigid bodies under gravity, free or on fixed points, stepped by RIG_POS, RIG_NEG or
/// RIG_IMP: the `model.rigid_bodies` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigidBodiesSection {
    /// Gravity, a spatial acceleration `[gx, gy, gz]` (m/s²).
    pub gravity: Vec<f64>,
    /// The bodies (at least one).
    pub bodies: Vec<BodyInput>,
}

/// One rigid body.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyInput {
    /// Mass `m > 0` (kg), with `inertia` or `principal_inertia`.
    #[serde(default)]
    pub mass: Option<f64>,
    /// Inertia tensor about the centre of mass in body axes (kg m²), a symmetric positive
    /// definite 3×3 matrix (rows).
    #[serde(default)]
    pub inertia: Option<Vec<Vec<f64>>>,
    /// Principal moments of inertia about the centre of mass (kg m²), instead of `inertia`.
    #[serde(default)]
    pub principal_inertia: Option<Vec<f64>>,
    /// With `principal_inertia`: the rotation vector `ψ` whose `exp[ψ]` has the principal axes
    /// as columns, in body axes (default zero: the body axes are principal).
    #[serde(default)]
    pub principal_axes: Option<Vec<f64>>,
    /// The centre of mass in the reference configuration, the drawing's coordinates (default
    /// the origin); a mesh body's follows from its mesh.
    #[serde(default)]
    pub centre_of_mass: Option<Vec<f64>>,
    /// A Gmsh volume mesh (tet4, hex8, tet10) of the body, relative to the input file, whose
    /// mass properties are integrated with `density`, instead of `mass` and `inertia`.
    #[serde(default)]
    pub mesh: Option<PathBuf>,
    /// Density of a mesh body (kg/m³).
    #[serde(default)]
    pub density: Option<f64>,
    /// How the body is drawn (default: its mesh, or the box of its mass and moments).
    #[serde(default)]
    pub draw: Option<DrawInput>,
    /// Rotation vector `Ψ0` (three numbers, radians): `Λ(t0) = exp[Ψ0]`.
    #[serde(default)]
    pub rotation: Option<Vec<f64>>,
    /// Free body: the centre of mass at `t0` (default: `centre_of_mass`).
    #[serde(default)]
    pub position: Option<Vec<f64>>,
    /// Free body: the velocity of the centre of mass at `t0` (default zero).
    #[serde(default)]
    pub velocity: Option<Vec<f64>>,
    /// Angular velocity at `t0`, `{body: Ω}` or `{spatial: ω}` (rad/s, default zero).
    #[serde(default)]
    pub angular_velocity: Option<AngularVelocityInput>,
    /// A fixed point (spatial) about which the body turns.
    #[serde(default)]
    pub fixed_point: Option<Vec<f64>>,
    /// Applied spatial force at the centre of mass, three functions of `t` (N).
    #[serde(default)]
    pub force: Option<Vec<FunctionInput>>,
    /// Applied spatial torque about the centre of mass (or the fixed point), three functions
    /// of `t` (N m).
    #[serde(default)]
    pub torque: Option<Vec<FunctionInput>>,
}

/// How a body is drawn.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum DrawInput {
    /// A box with these edge lengths along the body axes, centred on the centre of mass.
    Box(Vec<f64>),
    /// The surface or volume cells of a Gmsh mesh in the reference configuration.
    Mesh(PathBuf),
}

/// An initial angular velocity, in body axes or in space.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum AngularVelocityInput {
    /// The body-frame angular velocity `Ω`.
    Body(Vec<f64>),
    /// The spatial angular velocity `ω = Λ Ω`.
    Spatial(Vec<f64>),
}

impl ModelSection for RigidBodiesSection {
    const NAME: &'static str = "rigid_bodies";

    fn uses(&self) -> Uses {
        Uses {
            schemes: &[
                OfferedScheme {
                    name: crate::scheme::RIG_POS,
                    settings: &[],
                },
                OfferedScheme {
                    name: crate::scheme::RIG_NEG,
                    settings: &[],
                },
                OfferedScheme {
                    name: crate::scheme::RIG_IMP,
                    settings: &[TimeSetting::Newton],
                },
            ],
            ..Uses::OWN_GEOMETRY
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        Ok(Box::new(self.model(input)?))
    }
}

const SECTION: &str = "model.rigid_bodies";

impl RigidBodiesSection {
    /// Validates the section with the `time` section and builds the model.
    pub fn model(&self, input: &Sections<'_>) -> Result<RigidModel, InputError> {
        let grid = time_grid(input.time)?;
        let scheme = scheme(input, RigidBodiesSection::NAME)?;
        let gravity = vec3(&format!("{SECTION}.gravity"), &self.gravity, "gravity")?;
        if self.bodies.is_empty() {
            return Err(InputError::invalid(
                format!("{SECTION}.bodies"),
                "expected at least one body",
            ));
        }
        let mut set = RigidBodies::with_capacity(gravity, self.bodies.len())
            .map_err(|e| InputError::invalid(format!("{SECTION}.gravity"), e.to_string()))?;
        let mut drawing = Drawing::new();
        let mut summaries = Vec::with_capacity(self.bodies.len());
        for (i, b) in self.bodies.iter().enumerate() {
            let path = format!("{SECTION}.bodies[{i}]");
            summaries.push(add_body(b, i, &path, input, &grid, &mut set, &mut drawing)?);
        }
        // Frames of the drawing (point data: displacement, velocity, body), history rows of
        // step, t, the energies and the momenta.
        input.check_output(
            &grid,
            frame_bytes(
                drawing.n_points() as f64,
                7.0,
                drawing.n_cells() as f64,
                8.0,
            ),
            (5 + HISTORY_COLUMNS.len()) as f64,
        )?;
        let stepper = RigidStepper::new(set, scheme, grid.dt(), grid.t0())
            .map_err(|e| InputError::invalid("time", e.to_string()))?;
        warn_about(&stepper, grid.dt());
        Ok(RigidModel::new(stepper, grid, drawing, summaries))
    }
}

/// The scheme `time.scheme` names, with RIG_IMP's Newton settings from `time.newton` (its own
/// defaults, 1e-14 and 20 iterations, without that section); any other scheme is refused for
/// the section `model`. The scene of fem-scene reads its rigid bodies' scheme here too.
pub fn scheme(input: &Sections<'_>, model: &str) -> Result<Scheme, InputError> {
    Ok(match input.scheme_name() {
        crate::scheme::RIG_POS => Scheme::RigPos,
        crate::scheme::RIG_NEG => Scheme::RigNeg,
        crate::scheme::RIG_IMP => {
            let settings = match input.time.newton {
                None => RigImpSettings::default(),
                Some(n) => RigImpSettings {
                    tolerance: n.relative_tolerance,
                    max_iterations: n.max_iterations,
                    absolute_tolerance: n.absolute_tolerance,
                },
            };
            settings
                .validate()
                .map_err(|e| InputError::invalid("time.newton", e.to_string()))?;
            Scheme::RigImp(settings)
        }
        _ => return Err(input.unhandled_scheme(model)),
    })
}

/// Three finite numbers at `field`.
fn vec3(field: &str, v: &[f64], what: &str) -> Result<[f64; 3], InputError> {
    let [x, y, z] = v else {
        return Err(InputError::invalid(
            field,
            format!("expected {what} as exactly 3 numbers, got {}", v.len()),
        ));
    };
    if let Some(bad) = v.iter().find(|c| !c.is_finite()) {
        return Err(InputError::invalid(
            field,
            format!("expected finite numbers, got {bad}"),
        ));
    }
    Ok([*x, *y, *z])
}

fn optional_vec3(
    field: String,
    v: &Option<Vec<f64>>,
    what: &str,
) -> Result<Option<[f64; 3]>, InputError> {
    v.as_ref().map(|v| vec3(&field, v, what)).transpose()
}

/// The mass properties of a body as given (or integrated from its mesh).
struct MassInput {
    mass: f64,
    /// About the centre of mass, body axes.
    inertia: Mat3,
    /// Principal moments and axes (columns) of `inertia`, for the default drawing.
    moments: [f64; 3],
    axes: Mat3,
    /// The YAML key the inertia came from.
    key: &'static str,
    /// A mesh body: its mesh (drawn by default), file and centre of mass.
    mesh: Option<(fem_mesh::Mesh, PathBuf, [f64; 3])>,
}

/// Reads a body's Gmsh mesh (`field` its key), refused before it is read or built when it does
/// not fit the memory budget.
fn read_body_mesh(
    field: &str,
    file: &std::path::Path,
    input: &Sections<'_>,
) -> Result<fem_mesh::Mesh, InputError> {
    let mut accept = |size: &fem_mesh::MshSize| {
        // The mesh and its copy in the drawing.
        let (what, bytes) = msh_memory(size, 128.0);
        input
            .check_memory(field, &what, bytes)
            .map_err(|e| match e {
                InputError::Invalid { message, .. } => message,
                other => other.to_string(),
            })
    };
    fem_mesh::read_msh_within(&input.base_dir().join(file), &mut accept).map_err(|e| {
        InputError::Mesh {
            field: field.to_string(),
            source: Box::new(e),
        }
    })
}

/// A mesh body's mass properties: `mesh` integrated with `density` (both required, and no
/// `mass`, `inertia`, `principal_inertia`, `principal_axes` or `centre_of_mass` beside them).
fn mesh_mass_input(
    b: &BodyInput,
    path: &str,
    input: &Sections<'_>,
) -> Result<MassInput, InputError> {
    let at = |key: &str| format!("{path}.{key}");
    for (key, given) in [
        ("mass", b.mass.is_some()),
        ("inertia", b.inertia.is_some()),
        ("principal_inertia", b.principal_inertia.is_some()),
    ] {
        if given {
            return Err(InputError::invalid(
                at(key),
                "give either 'mass' with 'inertia' (or 'principal_inertia'), or 'mesh' with \
                 'density', not both",
            ));
        }
    }
    for (key, given) in [
        ("principal_axes", b.principal_axes.is_some()),
        ("centre_of_mass", b.centre_of_mass.is_some()),
    ] {
        if given {
            return Err(InputError::invalid(
                at(key),
                format!(
                    "a body massed from its mesh takes its '{key}' from the mesh: remove '{key}'"
                ),
            ));
        }
    }
    let (Some(file), Some(density)) = (&b.mesh, b.density) else {
        let missing = if b.mesh.is_none() { "mesh" } else { "density" };
        return Err(InputError::invalid(
            path,
            format!(
                "a body massed from a mesh needs both 'mesh' (a Gmsh volume mesh) and 'density' \
                 (kg/m^3): '{missing}' is missing"
            ),
        ));
    };
    if !(density.is_finite() && density > 0.0) {
        return Err(InputError::invalid(
            at("density"),
            format!("expected a positive finite density (kg/m^3), got {density}"),
        ));
    }
    let field = at("mesh");
    let mesh = read_body_mesh(&field, file, input)?;
    let props = crate::mesh_mass::mesh_mass_properties(&mesh, density)
        .map_err(|e| InputError::invalid(&field, format!("{}: {e}", file.display())))?;
    let (moments, axes) = principal(&props.inertia);
    Ok(MassInput {
        mass: props.mass,
        inertia: props.inertia,
        moments,
        axes,
        key: "mesh",
        mesh: Some((mesh, file.clone(), props.center)),
    })
}

fn mass_input(b: &BodyInput, path: &str, input: &Sections<'_>) -> Result<MassInput, InputError> {
    let at = |key: &str| format!("{path}.{key}");
    if b.mesh.is_some() || b.density.is_some() {
        return mesh_mass_input(b, path, input);
    }
    let Some(mass) = b.mass else {
        return Err(InputError::invalid(
            path,
            "missing mass properties: give 'mass' with 'inertia' (or 'principal_inertia'), or \
             'mesh' with 'density'",
        ));
    };
    if !(mass.is_finite() && mass > 0.0) {
        return Err(InputError::invalid(
            at("mass"),
            format!("expected a positive finite mass, got {mass}"),
        ));
    }
    match (&b.inertia, &b.principal_inertia) {
        (Some(_), Some(_)) => Err(InputError::invalid(
            path,
            "give 'inertia' (a 3x3 matrix) or 'principal_inertia' (three moments), not both",
        )),
        (None, None) => Err(InputError::invalid(
            path,
            "missing mass properties: 'mass' needs 'inertia' (a 3x3 matrix about the centre of \
             mass) or 'principal_inertia' (three moments)",
        )),
        (Some(rows), None) => {
            if b.principal_axes.is_some() {
                return Err(InputError::invalid(
                    at("principal_axes"),
                    "'principal_axes' goes with 'principal_inertia', not with 'inertia'",
                ));
            }
            let bad_shape = || {
                InputError::invalid(
                    at("inertia"),
                    format!(
                        "expected a 3x3 matrix (three rows of three numbers), got {} rows of {:?} \
                         numbers",
                        rows.len(),
                        rows.iter().map(Vec::len).collect::<Vec<_>>()
                    ),
                )
            };
            if rows.len() != 3 {
                return Err(bad_shape());
            }
            let mut inertia = [[0.0; 3]; 3];
            for (r, row) in rows.iter().enumerate() {
                if row.len() != 3 {
                    return Err(bad_shape());
                }
                inertia[r] = vec3(&at("inertia"), row, "a row of the inertia")?;
            }
            let (moments, axes) = principal(&inertia);
            Ok(MassInput {
                mass,
                inertia,
                moments,
                axes,
                key: "inertia",
                mesh: None,
            })
        }
        (None, Some(moments)) => {
            let moments = vec3(&at("principal_inertia"), moments, "three principal moments")?;
            let axes = match optional_vec3(
                at("principal_axes"),
                &b.principal_axes,
                "a rotation vector",
            )? {
                Some(psi) => exp_map(psi),
                None => IDENTITY,
            };
            // J = R diag(moments) Rᵀ.
            let rd = [0, 1, 2].map(|k| [0, 1, 2].map(|j| axes[k][j] * moments[j]));
            let mut inertia = mat_mul_t(&rd, &axes);
            // Exactly symmetric, whatever the rounding of the product.
            for r in 0..3 {
                for c in r + 1..3 {
                    let s = 0.5 * (inertia[r][c] + inertia[c][r]);
                    inertia[r][c] = s;
                    inertia[c][r] = s;
                }
            }
            Ok(MassInput {
                mass,
                inertia,
                moments,
                axes,
                key: "principal_inertia",
                mesh: None,
            })
        }
    }
}

/// Principal moments and axes (columns, a rotation) of a symmetric matrix, for drawing. A
/// matrix that is not positive definite is refused later, by the bodies.
fn principal(j: &Mat3) -> ([f64; 3], Mat3) {
    let m = nalgebra::Matrix3::from_fn(|r, c| 0.5 * (j[r][c] + j[c][r]));
    let eigen = m.symmetric_eigen();
    let mut axes: Mat3 = [0, 1, 2].map(|r| [0, 1, 2].map(|c| eigen.eigenvectors[(r, c)]));
    if crate::mat3::determinant(&axes) < 0.0 {
        for row in axes.iter_mut() {
            row[2] = -row[2];
        }
    }
    (
        [
            eigen.eigenvalues[0],
            eigen.eigenvalues[1],
            eigen.eigenvalues[2],
        ],
        axes,
    )
}

/// Three time functions at `field`, finite on the run's interval.
fn loads(
    field: &str,
    functions: &Option<Vec<FunctionInput>>,
    input: &Sections<'_>,
    grid: &fem_time::TimeGrid,
) -> Result<Option<[TimeFunction; 3]>, InputError> {
    let Some(functions) = functions else {
        return Ok(None);
    };
    if functions.len() != 3 {
        return Err(InputError::invalid(
            field,
            format!(
                "expected 3 functions of t (x, y and z components), got {}",
                functions.len()
            ),
        ));
    }
    let function = |k: usize| -> Result<TimeFunction, InputError> {
        let at = format!("{field}[{k}]");
        let g = time_function(input.base_dir(), &functions[k])
            .map_err(|m| InputError::invalid(&at, m))?;
        // Loads are evaluated at the half steps; sample the interval (ends included).
        const SAMPLES: usize = 1001;
        let (t0, t1) = (grid.t0(), grid.t_end());
        for s in 0..SAMPLES {
            let t = t0 + (t1 - t0) * s as f64 / (SAMPLES - 1) as f64;
            let v = g.eval(t);
            if !v.is_finite() {
                return Err(InputError::invalid(
                    &at,
                    format!("the function is not finite at t = {t} (it gives {v})"),
                ));
            }
        }
        Ok(g)
    };
    let [x, y, z] = [function(0)?, function(1)?, function(2)?];
    Ok(Some([x, y, z]))
}

/// Validates one body, adds it to `set` and its drawing to `drawing`.
fn add_body(
    b: &BodyInput,
    index: usize,
    path: &str,
    input: &Sections<'_>,
    grid: &fem_time::TimeGrid,
    set: &mut RigidBodies,
    drawing: &mut Drawing,
) -> Result<BodySummary, InputError> {
    let at = |key: &str| format!("{path}.{key}");
    let mut props = mass_input(b, path, input)?;
    let centre = match &props.mesh {
        Some((_, _, c)) => *c,
        None => {
            optional_vec3(at("centre_of_mass"), &b.centre_of_mass, "a point")?.unwrap_or([0.0; 3])
        }
    };
    let psi = optional_vec3(
        at("rotation"),
        &b.rotation,
        "a rotation vector (axis times angle, radians)",
    )?
    .unwrap_or([0.0; 3]);
    let fixed_point = optional_vec3(at("fixed_point"), &b.fixed_point, "a point")?;
    let lambda0 = exp_map(psi);
    let position = match fixed_point {
        Some(p) => {
            for (key, given) in [
                ("position", b.position.is_some()),
                ("velocity", b.velocity.is_some()),
            ] {
                if given {
                    return Err(InputError::invalid(
                        at(key),
                        format!(
                            "a body on a fixed point has no free {key}: it follows from \
                             'fixed_point', 'centre_of_mass', 'rotation' and \
                             'angular_velocity' — remove '{key}'"
                        ),
                    ));
                }
            }
            add(p, mat_vec(&lambda0, sub(centre, p)))
        }
        None => optional_vec3(at("position"), &b.position, "a point")?.unwrap_or(centre),
    };
    let velocity = optional_vec3(at("velocity"), &b.velocity, "a velocity")?.unwrap_or([0.0; 3]);
    let angular_velocity = match &b.angular_velocity {
        None => AngularVelocity::Body([0.0; 3]),
        Some(AngularVelocityInput::Body(w)) => AngularVelocity::Body(vec3(
            &at("angular_velocity.body"),
            w,
            "an angular velocity",
        )?),
        Some(AngularVelocityInput::Spatial(w)) => AngularVelocity::Spatial(vec3(
            &at("angular_velocity.spatial"),
            w,
            "an angular velocity",
        )?),
    };
    // The energies of the initial state must be numbers (an angular velocity of 1e200 passed
    // `fem check` and stopped the run at step 0 with an infinite kinetic energy).
    let omega = match angular_velocity {
        AngularVelocity::Body(w) | AngularVelocity::Spatial(w) => w,
    };
    let spin: f64 = (0..3)
        .map(|r| omega[r] * (0..3).map(|c| props.inertia[r][c] * omega[c]).sum::<f64>())
        .sum();
    let gravity_scale = norm(set.gravity());
    for (key, value) in [
        ("angular_velocity", 0.5 * spin),
        (
            "velocity",
            0.5 * props.mass * crate::mat3::dot(velocity, velocity),
        ),
        (
            if fixed_point.is_some() {
                "fixed_point"
            } else {
                "position"
            },
            props.mass * gravity_scale * norm(position),
        ),
    ] {
        if !value.is_finite() {
            return Err(InputError::invalid(
                at(key),
                format!(
                    "too large: the body's energy from it is not a finite number ({value}); give a \
                     value whose energy can be computed"
                ),
            ));
        }
    }
    let body = RigidBody {
        mass: props.mass,
        inertia: props.inertia,
        position,
        rotation: psi,
        velocity,
        angular_velocity,
        fixed_point,
        force: loads(&at("force"), &b.force, input, grid)?,
        torque: loads(&at("torque"), &b.torque, input, grid)?,
    };
    set.push(body).map_err(|e| {
        let key = match &e {
            RigidError::InvalidMass { .. } => "mass",
            RigidError::NonFiniteInput { field, .. } => field,
            RigidError::FixedPointVelocityMismatch { .. } => "velocity",
            _ => props.key,
        };
        InputError::invalid(at(key), e.to_string())
    })?;

    let (shape, described) = match &b.draw {
        Some(DrawInput::Box(lengths)) => {
            let lengths = vec3(&at("draw.box"), lengths, "three edge lengths")?;
            (
                drawing.push_box(index, centre, lengths, &IDENTITY),
                format!("a box {}", fem_model::number::shown_list(&lengths)),
            )
        }
        Some(DrawInput::Mesh(file)) => {
            // Refused before it is read (the file's size) and before it is built (its header
            // counts) when it does not fit the memory budget.
            let mesh = read_body_mesh(&at("draw.mesh"), file, input)?;
            (
                drawing.push_mesh(index, centre, &mesh),
                format!(
                    "{} ({} nodes, {} cells)",
                    file.display(),
                    mesh.n_nodes(),
                    mesh.n_cells()
                ),
            )
        }
        None if props.mesh.is_some() => {
            let (mesh, file, _) = props.mesh.take().expect("a mesh body");
            (
                drawing.push_mesh(index, centre, &mesh),
                format!(
                    "its mesh {} ({} nodes, {} cells)",
                    file.display(),
                    mesh.n_nodes(),
                    mesh.n_cells()
                ),
            )
        }
        None => {
            let lengths = equivalent_box(props.mass, props.moments);
            (
                drawing.push_box(index, centre, lengths, &props.axes),
                format!(
                    "the box of its mass and moments, {}",
                    fem_model::number::shown_list(&lengths)
                ),
            )
        }
    };
    shape.map_err(|e| InputError::invalid(at("draw"), e.to_string()))?;
    let support = match fixed_point {
        Some(p) => format!(
            "on the fixed point {} (arm {})",
            fem_model::number::shown_list(&p),
            fem_model::number::shown(norm(sub(position, p)))
        ),
        None => "free".to_string(),
    };
    Ok(BodySummary {
        mass: props.mass,
        moments: props.moments,
        support,
        drawing: described,
    })
}

/// Warnings about a valid but suspicious set-up: bodies nothing moves, and RIG_NEG on a
/// slender body spinning fast for its step (`docs/theory/rigid_body.md`, "RIG_NEG on slender
/// bodies": unstable for `h ‖Ω‖ > 2^{5/4} √(J_min/J_max)`).
fn warn_about(stepper: &RigidStepper, h: f64) {
    let bodies = stepper.bodies();
    for i in bodies.motionless_bodies() {
        let why = if bodies.fixed_point(i).is_some() {
            "it starts at rest on its fixed point, with no torque or force and its centre of \
             mass on the line of gravity through the point"
        } else {
            "it starts at rest, with no force or torque and no gravity"
        };
        log::warn!("{SECTION}.bodies[{i}]: nothing moves this body ({why}): it stays where it is");
    }
    if matches!(stepper.scheme(), Scheme::RigNeg) {
        for i in 0..bodies.len() {
            let j = bodies.principal_moments(i);
            let (lo, hi) = (
                j.iter().copied().fold(f64::INFINITY, f64::min),
                j.iter().copied().fold(0.0, f64::max),
            );
            let spin = h * norm(bodies.angular_velocity(i));
            let limit = 2.0_f64.powf(1.25) * (lo / hi).sqrt();
            if spin > 0.5 * limit {
                log::warn!(
                    "{SECTION}.bodies[{i}]: with rig_neg, dt |Omega| = {spin:.3e} is near or above \
                     the stability limit {limit:.3e} of a body this slender (moments {j:?}); \
                     consider rig_imp or a smaller dt"
                );
            }
        }
    }
}
