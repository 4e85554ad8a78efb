//! The `model.scene` input section: bodies with shapes (given one by one, by generators or by
//! a CSV table), fixed obstacles, named surfaces and the materials of their pairs, links, and
//! the contact solver's settings. Every key is in `docs/input.md` ("model.scene").
//!
//! Why a section of its own rather than more keys in `model.rigid_bodies`: a scene's bodies
//! are given by their *shapes* (massed from them) and meet; `model.rigid_bodies` gives mass
//! properties and knows no contact. Issue 24 adds deformable solids to the same section
//! (a `solids` list beside `bodies`), which a rigid-body section could not hold.
//!
//! Placement: a body's shape is given about its centre of mass (a sphere, a box) or in the
//! input's coordinates (a hull of points, a mesh), in which case its centre of mass is
//! computed and is where the body is unless `position` moves it. `rotation` (a rotation
//! vector, radians) turns the body about its centre of mass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fem_contact::detect::{MaterialTable, Obstacle, Placement, Shape, ShapeMass};
use fem_contact::{CapPolicy, NsgsSettings, Strategy, SurfaceMaterial};
use fem_mesh::{CellKind, Mesh};
use fem_model::build::{msh_memory, time_grid};
use fem_model::input::{OfferedScheme, TimeSetting};
use fem_model::number::strict;
use fem_model::resources::frame_bytes;
use fem_model::{InputError, Model, ModelSection, Sections, Uses};
use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme};
use nalgebra::{Matrix3, Vector3};
use serde::Deserialize;

use crate::generate::{self, GeneratorInput, TableInput};
use crate::group::BodyGroup;
use crate::model::{HISTORY_COLUMNS, SceneModel};
use crate::rigid::{RigidGroup, body_of_mass};
use crate::scene::{Link, LinkKind, Prediction, SceneSettings, SceneStepper};
use crate::solid::{SolidBody, SolidGroup, SolidStepper, boundary_nodes, group_nodes};
use crate::solid_faces::{boundary_faces, faces_within};

/// The key of the section, for messages.
pub const SECTION: &str = "model.scene";

/// Bodies that meet: the `model.scene` section (module documentation).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSection {
    /// Gravity `[gx, gy, gz]` (m/s²).
    #[serde(deserialize_with = "strict")]
    pub gravity: Vec<f64>,
    /// The friction and restitution of each pair of surfaces.
    #[serde(default)]
    pub materials: Option<MaterialsInput>,
    /// Bodies one by one.
    #[serde(default)]
    pub bodies: Vec<BodyInput>,
    /// Bodies many at a time.
    #[serde(default)]
    pub generators: Vec<GeneratorInput>,
    /// Bodies from a CSV file.
    #[serde(default)]
    pub table: Option<TableInput>,
    /// Deformable solids (issue 24), stepped by `def_exp` or `def_lim`: each on its own
    /// `mesh` (default the `mesh` section's), placed by `position`; they meet each other
    /// node to face.
    #[serde(default)]
    pub solids: Vec<SolidInput>,
    /// Fixed obstacles.
    #[serde(default)]
    pub obstacles: Vec<ObstacleInput>,
    /// Links: fixed points, fixed directions, rigid links.
    #[serde(default)]
    pub links: Vec<LinkInput>,
    /// The contact solver.
    #[serde(default)]
    pub solver: Option<SolverInput>,
    /// How deep bodies may overlap at the start (a length; default a millionth of the
    /// smallest body's bounding radius).
    #[serde(default, deserialize_with = "strict")]
    pub overlap_tolerance: Option<f64>,
}

/// A deformable solid of a scene.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolidInput {
    /// The solid: every key of `model.solid` (its `gravity` defaults to the scene's).
    pub solid: fem_solid::SolidSection,
    /// The name of its surface, for the materials of pairs (default `default`).
    #[serde(default)]
    pub surface: Option<String>,
    /// The boundary physical group (dimension 2) whose nodes touch; default the whole
    /// boundary (tet4, hex8 and tet10 cells).
    #[serde(default)]
    pub contact_group: Option<String>,
    /// Spread the lumped mass of the contact nodes over the solid's other nodes in proportion
    /// to their masses (eq. C33; massless contact nodes held at position level,
    /// docs/theory/contact.md §9.1; under DEF_EXP their positions are the body's static
    /// equilibrium, eq. C26) (default false).
    #[serde(default)]
    pub mass_redistribution: bool,
    /// The solid's own mesh (the keys of the `mesh` section: `file` or `box`); default the
    /// `mesh` section's. The top-level `fixed` and `dirichlet` apply to solids on the `mesh`
    /// section's mesh only.
    #[serde(default)]
    pub mesh: Option<fem_model::input::MeshInput>,
    /// Where the mesh's origin is placed in the scene `[x, y, z]` (default the origin).
    #[serde(default, deserialize_with = "strict")]
    pub position: Option<Vec<f64>>,
}

/// A solid ready to join the scene but for its surface material: what
/// [`SceneSection::solid_bodies`] makes.
type SolidMaker = Box<dyn FnOnce(u32) -> Result<SolidBody, crate::solid::SolidGroupError>>;

/// The solids' makers, their common time grid (none without solids) and description.
type SolidMakers = (Vec<SolidMaker>, Option<fem_time::TimeGrid>, Vec<String>);

/// The materials of pairs of surfaces.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialsInput {
    /// For every pair not listed (default friction 0, restitution 0).
    #[serde(default)]
    pub default: Option<PairMaterialInput>,
    /// Pairs of named surfaces.
    #[serde(default)]
    pub pairs: Vec<PairInput>,
}

/// A friction and a restitution coefficient.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairMaterialInput {
    /// Coulomb's `μ ≥ 0`.
    #[serde(default, deserialize_with = "strict")]
    pub friction: Option<f64>,
    /// Newton's `e ∈ [0, 1]`.
    #[serde(default, deserialize_with = "strict")]
    pub restitution: Option<f64>,
}

/// The material of one pair of surfaces.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairInput {
    /// The two surfaces (the same name twice for a surface against itself).
    pub surfaces: Vec<String>,
    /// Coulomb's `μ ≥ 0`.
    #[serde(default, deserialize_with = "strict")]
    pub friction: Option<f64>,
    /// Newton's `e ∈ [0, 1]`.
    #[serde(default, deserialize_with = "strict")]
    pub restitution: Option<f64>,
}

/// A body's shape.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum ShapeInput {
    /// A sphere of this radius about the centre of mass.
    Sphere(#[serde(deserialize_with = "strict")] f64),
    /// A box of these edge lengths along the body axes, about the centre of mass.
    Box(#[serde(deserialize_with = "strict")] Vec<f64>),
    /// The convex hull of these points (input coordinates).
    Hull(#[serde(deserialize_with = "strict")] Vec<Vec<f64>>),
    /// The convex hull of a Gmsh mesh's nodes (input coordinates).
    HullOfMesh(PathBuf),
    /// A Gmsh mesh: its triangles (or the boundary of its volume cells) are the shape, its
    /// volume cells (or its closed surface) give the mass.
    Mesh(PathBuf),
}

/// One body.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyInput {
    /// The shape.
    pub shape: ShapeInput,
    /// Density (kg/m³).
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// The centre of mass at `t0` (default: the origin for a sphere or a box, where the
    /// points put it for a hull or a mesh).
    #[serde(default, deserialize_with = "strict")]
    pub position: Option<Vec<f64>>,
    /// Rotation vector `Ψ0` about the centre of mass (radians).
    #[serde(default, deserialize_with = "strict")]
    pub rotation: Option<Vec<f64>>,
    /// Velocity of the centre of mass at `t0`.
    #[serde(default, deserialize_with = "strict")]
    pub velocity: Option<Vec<f64>>,
    /// Spatial angular velocity at `t0` (rad/s).
    #[serde(default, deserialize_with = "strict")]
    pub angular_velocity: Option<Vec<f64>>,
    /// The surface's name (default `default`).
    #[serde(default)]
    pub surface: Option<String>,
}

/// A fixed obstacle: a plane, or a shape placed in space.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleInput {
    /// A plane.
    #[serde(default)]
    pub plane: Option<PlaneInput>,
    /// A fixed shape.
    #[serde(default)]
    pub shape: Option<ShapeInput>,
    /// Where a sphere's or a box's centre is (default the origin); a hull or a mesh is where
    /// its points are, moved by this.
    #[serde(default, deserialize_with = "strict")]
    pub position: Option<Vec<f64>>,
    /// Rotation vector of the shape (radians).
    #[serde(default, deserialize_with = "strict")]
    pub rotation: Option<Vec<f64>>,
    /// The surface's name (default `default`).
    #[serde(default)]
    pub surface: Option<String>,
}

/// A plane obstacle (the type is fem-model's, shared with `contact.obstacles[].plane`).
pub use fem_model::input::PlaneInput;

/// A link's kind.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LinkKindInput {
    /// A body point held at a world point (or at another body's point).
    FixedPoint,
    /// A body point that does not move along a fixed direction.
    FixedDirection,
    /// Two points kept at their distance.
    RigidLink,
}

/// A link.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkInput {
    /// The kind.
    pub kind: LinkKindInput,
    /// The body (its number: bodies, then generators, then the table, in order).
    #[serde(deserialize_with = "strict")]
    pub body: usize,
    /// The body's point, a world point at `t0` (default its centre of mass).
    #[serde(default, deserialize_with = "strict")]
    pub point: Option<Vec<f64>>,
    /// The other body (default: the fixed world).
    #[serde(default, deserialize_with = "strict")]
    pub other: Option<usize>,
    /// The other point at `t0` (default: `point` for a fixed point, the other body's centre
    /// for a rigid link between bodies).
    #[serde(default, deserialize_with = "strict")]
    pub other_point: Option<Vec<f64>>,
    /// The direction of a fixed direction.
    #[serde(default, deserialize_with = "strict")]
    pub direction: Option<Vec<f64>>,
}

/// What the solver does when it reaches its sweep cap.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AtCapInput {
    /// Go on with the impulses reached (the history's `solver_error` shows it).
    #[default]
    Warn,
    /// Stop the run (exit 1) naming the step and the error reached.
    Fail,
}

/// What the contact solver runs first.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StrategyInput {
    /// Gauss–Seidel sweeps (with the Newton polish after `polish_after`).
    #[default]
    Nsgs,
    /// The global Newton method first, then the sweeps if it does not reach the tolerance.
    Newton,
}

/// The contact solver's settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverInput {
    /// Tolerance on Siconos' relative error (default 1e-8).
    #[serde(default, deserialize_with = "strict")]
    pub tolerance: Option<f64>,
    /// Sweep cap (default 10 000).
    #[serde(default, deserialize_with = "strict")]
    pub max_sweeps: Option<u64>,
    /// At the cap: `warn` (default) or `fail`.
    #[serde(default)]
    pub at_cap: Option<AtCapInput>,
    /// Sweeps before the global Newton polish is tried (default 10; 0: never).
    #[serde(default, deserialize_with = "strict")]
    pub polish_after: Option<u64>,
    /// `nsgs` (default) or `newton` (the global Newton method first).
    #[serde(default)]
    pub strategy: Option<StrategyInput>,
}

/// A body ready to be placed: its shape about its centre of mass, its mass, and its initial
/// state; `key` names it in messages.
#[derive(Clone, Debug)]
pub(crate) struct PlannedBody {
    pub key: String,
    pub shape: Shape,
    pub mass: ShapeMass,
    pub position: [f64; 3],
    pub rotation: [f64; 3],
    pub velocity: [f64; 3],
    pub angular_velocity: [f64; 3],
    pub surface: String,
}

/// Memory a body takes (its state in the stepper, its placed shape, its drawing, the scene's
/// scratch), beyond its drawing's points: an estimate checked before bodies are made.
pub(crate) const BODY_BYTES: f64 = 2048.0;
/// Memory of a drawing point (position, reference, displacement, velocity, body, cells).
pub(crate) const DRAWN_POINT_BYTES: f64 = 160.0;

impl ModelSection for SceneSection {
    const NAME: &'static str = "scene";

    fn uses(&self) -> Uses {
        if !self.solids.is_empty() {
            // Solids that all have their own mesh read neither the `mesh` section nor the
            // `fixed` and `dirichlet` on its groups.
            let own = self.solids.iter().all(|s| s.mesh.is_some());
            return Uses {
                mesh: if own {
                    fem_model::model::MeshUse::Refused
                } else {
                    fem_model::model::MeshUse::Required
                },
                fixed: !own,
                dirichlet: !own,
                initial: false,
                schemes: &[
                    OfferedScheme {
                        name: fem_time::leapfrog::def_exp::NAME,
                        settings: &[],
                    },
                    OfferedScheme {
                        name: fem_time::leapfrog::def_lim::NAME,
                        settings: &[],
                    },
                ],
                ..Uses::ON_A_MESH
            };
        }
        Uses {
            schemes: &[
                OfferedScheme {
                    name: fem_rigid::scheme::RIG_POS,
                    settings: &[],
                },
                OfferedScheme {
                    name: fem_rigid::scheme::RIG_NEG,
                    settings: &[],
                },
                OfferedScheme {
                    name: fem_rigid::scheme::RIG_IMP,
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

/// `field` as three finite numbers.
pub(crate) fn vec3(field: &str, v: &[f64]) -> Result<[f64; 3], InputError> {
    let [x, y, z] = v else {
        return Err(InputError::invalid(
            field,
            format!("expected 3 numbers, got {}", v.len()),
        ));
    };
    if v.iter().any(|c| !c.is_finite()) {
        return Err(InputError::invalid(field, "expected finite numbers"));
    }
    Ok([*x, *y, *z])
}

fn optional3(field: String, v: &Option<Vec<f64>>) -> Result<Option<[f64; 3]>, InputError> {
    v.as_ref().map(|v| vec3(&field, v)).transpose()
}

/// A positive finite number at `field`.
pub(crate) fn positive(field: &str, x: f64, what: &str) -> Result<f64, InputError> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(InputError::invalid(
            field,
            format!("expected {what} > 0, got {x}"),
        ))
    }
}

/// The rotation matrix of a rotation vector.
pub(crate) fn rotation_matrix(psi: [f64; 3]) -> Matrix3<f64> {
    let r = fem_rigid::rotation::exp_map(psi);
    Matrix3::from_fn(|i, j| r[i][j])
}

/// A shape as read: the shape in the frame of its centre of mass, its mass properties at
/// `density` (`None` for an obstacle), and where that centre is in the input's coordinates
/// (the origin for a sphere or a box).
pub(crate) struct ReadShape {
    pub shape: Shape,
    pub mass: Option<ShapeMass>,
    pub centre: Vector3<f64>,
}

/// Reads a Gmsh mesh named at `field`, refused before it is read when it does not fit the
/// memory budget.
fn read_mesh(field: &str, file: &Path, input: &Sections<'_>) -> Result<Mesh, InputError> {
    let mut accept = |size: &fem_mesh::MshSize| {
        let (what, bytes) = msh_memory(size, 160.0);
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

/// The triangles of a mesh: the faces of its volume cells that belong to one cell only (its
/// boundary), or its `tri3` cells when it has no volume cell (a surface mesh; the triangles
/// of a volume mesh are only the faces of its physical groups).
fn mesh_triangles(mesh: &Mesh) -> Vec<[u32; 3]> {
    let mut tris: Vec<[u32; 3]> = Vec::new();
    // Faces of the volume cells, outward for a positively oriented cell.
    const TET: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]];
    const HEX: [[usize; 4]; 6] = [
        [0, 3, 2, 1],
        [4, 5, 6, 7],
        [0, 1, 5, 4],
        [1, 2, 6, 5],
        [2, 3, 7, 6],
        [3, 0, 4, 7],
    ];
    // Per face (its sorted nodes): how many cells have it, and its triangles.
    type Face = (usize, [u32; 3], Option<[u32; 3]>);
    let mut faces: BTreeMap<Vec<usize>, Face> = BTreeMap::new();
    let mut add = |nodes: &[usize], t1: [u32; 3], t2: Option<[u32; 3]>| {
        let mut key = nodes.to_vec();
        key.sort_unstable();
        faces
            .entry(key)
            .and_modify(|e| e.0 += 1)
            .or_insert((1, t1, t2));
    };
    for b in &mesh.blocks {
        let n = b.kind.n_nodes();
        match b.kind {
            CellKind::Tet4 | CellKind::Tet10 => {
                for c in b.connectivity.chunks_exact(n) {
                    for f in TET {
                        let t = f.map(|k| c[k] as u32);
                        add(&f.map(|k| c[k]), t, None);
                    }
                }
            }
            CellKind::Hex8 => {
                for c in b.connectivity.chunks_exact(n) {
                    for f in HEX {
                        let q = f.map(|k| c[k] as u32);
                        add(
                            &f.map(|k| c[k]),
                            [q[0], q[1], q[2]],
                            Some([q[0], q[2], q[3]]),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    for (count, t1, t2) in faces.into_values() {
        if count == 1 {
            tris.push(t1);
            tris.extend(t2);
        }
    }
    if tris.is_empty() {
        for b in mesh.blocks.iter().filter(|b| b.kind == CellKind::Tri3) {
            for c in b.connectivity.chunks_exact(3) {
                tris.push([c[0] as u32, c[1] as u32, c[2] as u32]);
            }
        }
    }
    tris
}

/// Reads a shape at `field`; `density` masses it (a body), `None` leaves it unmassed (an
/// obstacle).
pub(crate) fn read_shape(
    field: &str,
    shape: &ShapeInput,
    density: Option<f64>,
    input: &Sections<'_>,
) -> Result<ReadShape, InputError> {
    let bad = |e: fem_contact::detect::ShapeError| InputError::invalid(field, e.to_string());
    let massed = |s: &Shape| -> Result<Option<ShapeMass>, InputError> {
        density
            .map(|d| {
                s.mass_properties(d).ok_or_else(|| {
                    InputError::invalid(field, "the shape encloses no volume to give it a mass")
                })
            })
            .transpose()
    };
    let hull = |points: &[Vector3<f64>]| -> Result<ReadShape, InputError> {
        let raw = Shape::convex_hull(points).map_err(bad)?;
        let centre = match density {
            Some(d) => {
                raw.mass_properties(d)
                    .ok_or_else(|| InputError::invalid(field, "the hull encloses no volume"))?
                    .centre
            }
            None => Vector3::zeros(),
        };
        let moved: Vec<Vector3<f64>> = points.iter().map(|p| p - centre).collect();
        let shape = Shape::convex_hull(&moved).map_err(bad)?;
        let mass = massed(&shape)?;
        Ok(ReadShape {
            shape,
            mass,
            centre,
        })
    };
    match shape {
        ShapeInput::Sphere(r) => {
            let shape = Shape::sphere(positive(&format!("{field}.sphere"), *r, "a radius")?)
                .map_err(bad)?;
            let mass = massed(&shape)?;
            Ok(ReadShape {
                shape,
                mass,
                centre: Vector3::zeros(),
            })
        }
        ShapeInput::Box(edges) => {
            let key = format!("{field}.box");
            let e = vec3(&key, edges)?;
            for x in e {
                positive(&key, x, "edge lengths")?;
            }
            let shape = Shape::cuboid(e.map(|x| x / 2.0)).map_err(bad)?;
            let mass = massed(&shape)?;
            Ok(ReadShape {
                shape,
                mass,
                centre: Vector3::zeros(),
            })
        }
        ShapeInput::Hull(points) => {
            let key = format!("{field}.hull");
            let pts = points
                .iter()
                .enumerate()
                .map(|(i, p)| vec3(&format!("{key}[{i}]"), p).map(Vector3::from))
                .collect::<Result<Vec<_>, _>>()?;
            hull(&pts).map_err(|e| retag(e, &key))
        }
        ShapeInput::HullOfMesh(file) => {
            let key = format!("{field}.hull_of_mesh");
            let mesh = read_mesh(&key, file, input)?;
            let pts: Vec<Vector3<f64>> = mesh.points.iter().map(|p| Vector3::from(*p)).collect();
            hull(&pts).map_err(|e| retag(e, &key))
        }
        ShapeInput::Mesh(file) => {
            let key = format!("{field}.mesh");
            let mesh = read_mesh(&key, file, input)?;
            let tris = mesh_triangles(&mesh);
            if tris.is_empty() {
                return Err(InputError::invalid(
                    key,
                    "the mesh has no triangles and no tet4, tet10 or hex8 cells to make a surface of",
                ));
            }
            let volume = mesh
                .blocks
                .iter()
                .any(|b| matches!(b.kind, CellKind::Tet4 | CellKind::Tet10 | CellKind::Hex8));
            let pts: Vec<Vector3<f64>> = mesh.points.iter().map(|p| Vector3::from(*p)).collect();
            // The mass: of the volume cells (fem-rigid's integration), else of the closed
            // surface.
            let mass_at_input = match density {
                None => None,
                Some(d) if volume => {
                    let m = fem_rigid::mesh_mass_properties(&mesh, d)
                        .map_err(|e| InputError::invalid(&key, e.to_string()))?;
                    Some(ShapeMass {
                        mass: m.mass,
                        centre: Vector3::from(m.center),
                        inertia: Matrix3::from_fn(|i, j| m.inertia[i][j]),
                    })
                }
                Some(d) => Some(
                    Shape::triangle_mesh(&pts, &tris)
                        .map_err(|e| InputError::invalid(&key, e.to_string()))?
                        .mass_properties(d)
                        .ok_or_else(|| {
                            InputError::invalid(
                                &key,
                                "the surface encloses no volume to give it a mass (is it closed?)",
                            )
                        })?,
                ),
            };
            let centre = mass_at_input.map_or(Vector3::zeros(), |m| m.centre);
            let moved: Vec<Vector3<f64>> = pts.iter().map(|p| p - centre).collect();
            // Convex when every vertex is behind every triangle's plane: then a polyhedron
            // (it meets anything), else a triangle surface (it meets convex shapes only).
            let shape = match Shape::convex_surface(&moved, &tris) {
                Ok(s) => s,
                Err(_) => Shape::triangle_mesh(&moved, &tris)
                    .map_err(|e| InputError::invalid(&key, e.to_string()))?,
            };
            let mass = mass_at_input.map(|m| ShapeMass {
                centre: Vector3::zeros(),
                ..m
            });
            Ok(ReadShape {
                shape,
                mass,
                centre,
            })
        }
    }
}

fn retag(e: InputError, key: &str) -> InputError {
    match e {
        InputError::Invalid { message, .. } => InputError::invalid(key, message),
        other => other,
    }
}

impl SceneSection {
    /// Validates the section with the `time` section and builds the model.
    pub fn model(&self, input: &Sections<'_>) -> Result<SceneModel, InputError> {
        let mut grid = time_grid(input.time)?;
        // With solids the scheme is theirs; rigid bodies beside them take RIG_POS.
        let scheme = if self.solids.is_empty() {
            fem_rigid::section::scheme(input, SceneSection::NAME)?
        } else {
            Scheme::RigPos
        };
        let gravity = vec3(&format!("{SECTION}.gravity"), &self.gravity)?;
        let (solids, solid_grid, solid_lines) = self.solid_bodies(input, gravity)?;
        if let Some(g) = solid_grid {
            grid = g;
        }

        // How many bodies, before any is made.
        let mut planned_count = self.bodies.len() as f64;
        for (g, gen_input) in self.generators.iter().enumerate() {
            planned_count += generate::count(&format!("{SECTION}.generators[{g}]"), gen_input)?;
        }
        let table_rows = match &self.table {
            Some(t) => generate::table_rows(&format!("{SECTION}.table"), t, input)?,
            None => 0.0,
        };
        planned_count += table_rows;
        if planned_count < 1.0 && self.solids.is_empty() {
            return Err(InputError::invalid(
                format!("{SECTION}.bodies"),
                "expected at least one body (in bodies, generators or table)",
            ));
        }
        if planned_count > u32::MAX as f64 {
            return Err(InputError::invalid(
                format!("{SECTION}.generators"),
                format!("{planned_count} bodies: at most {} are counted", u32::MAX),
            ));
        }
        // The drawing: a sphere by 2n × n, a box by 8 points; a hull or a mesh by its own
        // (counted when read, below).
        let per_body_points =
            (2 * crate::rigid::SPHERE_DRAWING * crate::rigid::SPHERE_DRAWING + 2) as f64;
        input.check_memory(
            SECTION,
            &format!("{planned_count} bodies"),
            planned_count * (BODY_BYTES + per_body_points * DRAWN_POINT_BYTES),
        )?;

        let mut planned: Vec<PlannedBody> = Vec::with_capacity(planned_count as usize);
        for (i, b) in self.bodies.iter().enumerate() {
            let key = format!("{SECTION}.bodies[{i}]");
            planned.push(plan_body(&key, b, input)?);
        }
        for (g, gen_input) in self.generators.iter().enumerate() {
            generate::generate(
                &format!("{SECTION}.generators[{g}]"),
                gen_input,
                input,
                &mut planned,
            )?;
        }
        if let Some(t) = &self.table {
            generate::read_table(&format!("{SECTION}.table"), t, input, &mut planned)?;
        }

        // Surfaces and materials.
        let mut surfaces: Vec<String> = vec!["default".into()];
        let mut surface_index = |name: &str| -> u32 {
            match surfaces.iter().position(|s| s == name) {
                Some(k) => k as u32,
                None => {
                    surfaces.push(name.to_string());
                    (surfaces.len() - 1) as u32
                }
            }
        };
        let body_surfaces: Vec<u32> = planned.iter().map(|b| surface_index(&b.surface)).collect();
        let solid_surfaces: Vec<u32> = self
            .solids
            .iter()
            .map(|s| surface_index(s.surface.as_deref().unwrap_or("default")))
            .collect();
        let obstacle_surfaces: Vec<u32> = self
            .obstacles
            .iter()
            .map(|o| surface_index(o.surface.as_deref().unwrap_or("default")))
            .collect();
        let materials = self.material_table(&surfaces, obstacle_surfaces)?;

        // Obstacles.
        let mut obstacles = Vec::with_capacity(self.obstacles.len());
        let mut non_convex: Option<String> = None;
        for (k, o) in self.obstacles.iter().enumerate() {
            let key = format!("{SECTION}.obstacles[{k}]");
            let (obstacle, convex) = obstacle(&key, o, input)?;
            if !convex {
                non_convex.get_or_insert(format!("{key}.shape"));
            }
            obstacles.push(obstacle);
        }
        for b in &planned {
            if !b.shape.is_convex() {
                if let Some(first) = &non_convex {
                    return Err(InputError::invalid(
                        format!("{}.shape", b.key),
                        format!(
                            "a shape that is not convex meets convex shapes only, and {first} is not convex either: give one of them as a convex shape (a hull)"
                        ),
                    ));
                }
                non_convex = Some(format!("{}.shape", b.key));
            }
        }

        // The bodies and their drawing.
        let mut set = RigidBodies::with_capacity(gravity, planned.len())
            .map_err(|e| InputError::invalid(format!("{SECTION}.gravity"), e.to_string()))?;
        let mut shapes = Vec::with_capacity(planned.len());
        let mut drawn_points = 0.0;
        for b in &planned {
            let mut body: RigidBody = body_of_mass(&b.mass);
            body.position = b.position;
            body.rotation = b.rotation;
            body.velocity = b.velocity;
            body.angular_velocity = AngularVelocity::Spatial(b.angular_velocity);
            set.push(body)
                .map_err(|e| InputError::invalid(&b.key, e.to_string()))?;
            drawn_points += b.shape.triangles(crate::rigid::SPHERE_DRAWING).0.len() as f64;
            shapes.push(b.shape.clone());
        }
        input.check_memory(
            SECTION,
            &format!("the drawing of {} bodies", planned.len()),
            planned.len() as f64 * BODY_BYTES + drawn_points * DRAWN_POINT_BYTES,
        )?;
        let stepper = if planned.is_empty() {
            None
        } else {
            Some(
                RigidStepper::new(set, scheme, grid.dt(), grid.t0())
                    .map_err(|e| InputError::invalid("time", e.to_string()))?,
            )
        };
        let mut groups: Vec<Box<dyn BodyGroup>> = Vec::new();
        if let Some(stepper) = stepper {
            let group = RigidGroup::new(stepper, shapes, body_surfaces)
                .map_err(|e| InputError::invalid(SECTION, e.to_string()))?
                .with_descriptions(describe(&planned));
            groups.push(Box::new(group));
        }
        let mut solid_size = None;
        if !solids.is_empty() {
            let mut bodies = Vec::with_capacity(solids.len());
            for (i, (make, material)) in solids.into_iter().zip(solid_surfaces).enumerate() {
                let body = make(material).map_err(|e| {
                    InputError::invalid(
                        format!("{SECTION}.solids[{i}].contact_group"),
                        e.to_string(),
                    )
                })?;
                solid_size = Some(body.size().min(solid_size.unwrap_or(f64::INFINITY)));
                bodies.push(body);
            }
            groups.push(Box::new(
                SolidGroup::new(bodies).with_descriptions(solid_lines),
            ));
        }
        let links = self.links(&planned)?;
        let settings = SceneSettings {
            solver: self.solver_settings()?,
            prediction: Prediction::Auto,
        };
        let scene = SceneStepper::new(groups, obstacles, materials, &links, settings).map_err(
            |e| match &e {
                crate::scene::SceneError::ZeroLengthLink(l) => InputError::invalid(
                    format!("{SECTION}.links[{l}].other_point"),
                    "a rigid link needs two distinct points: its length is zero",
                ),
                crate::scene::SceneError::NoDirection(l) => InputError::invalid(
                    format!("{SECTION}.links[{l}].direction"),
                    "expected a direction (not zero)",
                ),
                crate::scene::SceneError::LinkToItself(l) => InputError::invalid(
                    format!("{SECTION}.links[{l}].other"),
                    "a link joins two different bodies",
                ),
                _ => InputError::invalid(SECTION, e.to_string()),
            },
        )?;
        self.check_overlaps(&scene, &planned, solid_size)?;

        // Output: the drawing's frames (and the contacts', whose size is not known: the
        // estimate takes four points a body), history rows.
        let n_points = drawn_points + 4.0 * planned.len() as f64;
        input.check_output(
            &grid,
            frame_bytes(n_points, 7.0, n_points, 8.0),
            (5 + HISTORY_COLUMNS.len()) as f64,
        )?;
        Ok(SceneModel::new(scene, grid))
    }

    /// The solids of `solids`, their common time grid and description: a maker of each body
    /// for its surface material index.
    fn solid_bodies(
        &self,
        input: &Sections<'_>,
        gravity: [f64; 3],
    ) -> Result<SolidMakers, InputError> {
        if self.solids.is_empty() {
            return Ok((Vec::new(), None, Vec::new()));
        }
        if !self.links.is_empty() {
            return Err(InputError::invalid(
                format!("{SECTION}.links"),
                "links join rigid bodies of a scene without solids (links on a solid are not built)",
            ));
        }
        let mut makers = Vec::with_capacity(self.solids.len());
        let mut grid: Option<fem_time::TimeGrid> = None;
        let mut lines = Vec::new();
        for (i, entry) in self.solids.iter().enumerate() {
            let key = format!("{SECTION}.solids[{i}]");
            let (make, g, describe) = self.solid_body(input, gravity, entry, &key)?;
            match grid {
                None => grid = Some(g),
                Some(first) if first != g => {
                    return Err(InputError::invalid(
                        format!("{key}.solid.auto_dt"),
                        format!(
                            "the solids of a scene step together, but this one's step is {} and solids[0]'s {}: give time.dt and no auto_dt",
                            fem_model::number::shown(g.dt()),
                            fem_model::number::shown(first.dt())
                        ),
                    ));
                }
                Some(_) => {}
            }
            if self.solids.len() > 1 {
                lines.push(format!("  solid {i}:"));
            }
            lines.extend(describe);
            makers.push(make);
        }
        Ok((makers, grid, lines))
    }

    /// One solid of `solids` at `key`, its time grid and description.
    fn solid_body(
        &self,
        input: &Sections<'_>,
        gravity: [f64; 3],
        entry: &SolidInput,
        key: &str,
    ) -> Result<(SolidMaker, fem_time::TimeGrid, Vec<String>), InputError> {
        let offset = optional3(format!("{key}.position"), &entry.position)?.unwrap_or([0.0; 3]);
        // A solid on its own mesh: the top-level fixed and dirichlet name the `mesh`
        // section's groups, not its.
        let own = entry.mesh.as_ref().map(|mesh| Sections {
            mesh: Some(mesh),
            fixed: &[],
            dirichlet: &[],
            ..*input
        });
        let input = own.as_ref().unwrap_or(input);
        let mut section = entry.solid.clone();
        if section.gravity.is_none() {
            section.gravity = Some(gravity.to_vec());
        }
        let own_mesh = entry.mesh.is_some();
        let retarget = |field: String| -> String {
            if let Some(rest) = field.strip_prefix("model.solid") {
                format!("{key}.solid{rest}")
            } else if own_mesh && let Some(rest) = field.strip_prefix("mesh") {
                format!("{key}.mesh{rest}")
            } else {
                field
            }
        };
        let prefix = |e: InputError| match e {
            InputError::Invalid { field, message } => InputError::Invalid {
                field: retarget(field),
                message,
            },
            InputError::Mesh { field, source } => InputError::Mesh {
                field: retarget(field),
                source,
            },
        };
        let prepared = section.prepare(input).map_err(prefix)?;
        let nodes = match &entry.contact_group {
            Some(g) => group_nodes(&prepared.mesh, g).ok_or_else(|| {
                let names: Vec<&str> = prepared
                    .mesh
                    .groups
                    .iter()
                    .filter(|x| x.dim == 2)
                    .map(|x| x.name.as_str())
                    .collect();
                InputError::invalid(
                    format!("{key}.contact_group"),
                    format!(
                        "the mesh has no boundary group '{g}' (its surface groups: {})",
                        if names.is_empty() {
                            "none".to_string()
                        } else {
                            names.join(", ")
                        }
                    ),
                )
            })?,
            None => boundary_nodes(prepared.mesh_kind, &prepared.connectivity)
                .map_err(|e| InputError::invalid(format!("{key}.contact_group"), e.to_string()))?,
        };
        // The contact faces: the boundary faces on the contact nodes (tet4, hex8 and tet10
        // cells; other kinds touch by their nodes only).
        let faces = match boundary_faces(prepared.mesh_kind, &prepared.connectivity) {
            Ok(all) => {
                let mut sorted = nodes.clone();
                sorted.sort_unstable();
                faces_within(&all, &sorted)
            }
            Err(_) => Vec::new(),
        };
        let mesh_kind = prepared.mesh_kind;
        let connectivity = prepared.connectivity.clone();
        let system = if entry.mass_redistribution {
            let at = format!("{key}.mass_redistribution");
            crate::redistribute::redistribute(
                prepared.system,
                crate::redistribute::Redistribution::Proportional,
                prepared.mesh_kind.n_nodes(),
                &prepared.connectivity,
                &nodes,
            )
            .map_err(|e| InputError::invalid(at, e.to_string()))?
        } else {
            prepared.system
        };
        let fem_solid::PreparedSolid {
            x0,
            v0,
            settings,
            grid,
            critical,
            mut describe,
            output,
            mesh,
            ..
        } = prepared;
        let step_error = |e: fem_time::StepError| InputError::invalid("time", e.to_string());
        let stepper = match input.scheme_name() {
            fem_time::leapfrog::def_exp::NAME => SolidStepper::Exp(
                fem_time::DefExp::with_bound_at(
                    system,
                    settings,
                    &x0,
                    &v0,
                    section.critical_step_check(),
                    critical,
                )
                .map_err(|e| match e {
                    fem_time::StepError::Unstable { .. } => {
                        InputError::invalid("time.dt", e.to_string())
                    }
                    other => step_error(other),
                })?,
            ),
            _ => SolidStepper::Lim(
                fem_time::DefLim::new(system, section.damping.unwrap_or(0.0), settings, &x0, &v0)
                    .map_err(step_error)?,
            ),
        };
        if offset != [0.0; 3] {
            describe.push(format!(
                "  placed at [{}]",
                offset.map(fem_model::number::shown).join(", ")
            ));
        }
        let points: Vec<[f64; 3]> = mesh
            .points
            .iter()
            .map(|p| std::array::from_fn(|k| p[k] + offset[k]))
            .collect();
        let make = move |material: u32| {
            SolidBody::new(stepper, points, nodes, material, output)
                .and_then(|b| b.with_pressure(mesh_kind, &connectivity))
                .and_then(|b| b.with_faces(&faces))
                .map(|b| b.with_drawing(offset, mesh_kind, connectivity))
        };
        Ok((Box::new(make), grid, describe))
    }

    fn material_table(
        &self,
        surfaces: &[String],
        obstacle_materials: Vec<u32>,
    ) -> Result<MaterialTable, InputError> {
        let at = format!("{SECTION}.materials");
        let pair_material = |key: &str,
                             friction: Option<f64>,
                             restitution: Option<f64>|
         -> Result<SurfaceMaterial, InputError> {
            let (mu, e) = (friction.unwrap_or(0.0), restitution.unwrap_or(0.0));
            if !(mu.is_finite() && mu >= 0.0) {
                return Err(InputError::invalid(
                    format!("{key}.friction"),
                    format!("expected a friction coefficient ≥ 0, got {mu}"),
                ));
            }
            if !(e.is_finite() && (0.0..=1.0).contains(&e)) {
                return Err(InputError::invalid(
                    format!("{key}.restitution"),
                    format!("expected a restitution coefficient between 0 and 1, got {e}"),
                ));
            }
            SurfaceMaterial::new(mu, e).map_err(|err| InputError::invalid(key, err.to_string()))
        };
        let Some(m) = &self.materials else {
            return Ok(MaterialTable {
                default: SurfaceMaterial::new(0.0, 0.0)
                    .map_err(|e| InputError::invalid(&at, e.to_string()))?,
                pairs: Vec::new(),
                obstacle_materials,
            });
        };
        let default = match &m.default {
            Some(d) => pair_material(&format!("{at}.default"), d.friction, d.restitution)?,
            None => pair_material(&format!("{at}.default"), None, None)?,
        };
        let mut pairs: Vec<((u32, u32), SurfaceMaterial)> = Vec::new();
        for (k, p) in m.pairs.iter().enumerate() {
            let key = format!("{at}.pairs[{k}]");
            let [a, b] = &p.surfaces[..] else {
                return Err(InputError::invalid(
                    format!("{key}.surfaces"),
                    format!("expected two surface names, got {}", p.surfaces.len()),
                ));
            };
            let index = |name: &String| {
                surfaces
                    .iter()
                    .position(|s| s == name)
                    .map(|i| i as u32)
                    .ok_or_else(|| {
                        InputError::invalid(
                            format!("{key}.surfaces"),
                            format!(
                                "no body or obstacle has the surface '{name}' (surfaces: {})",
                                surfaces.join(", ")
                            ),
                        )
                    })
            };
            let (ia, ib) = (index(a)?, index(b)?);
            let pair = (ia.min(ib), ia.max(ib));
            if pairs.iter().any(|(q, _)| *q == pair) {
                return Err(InputError::invalid(
                    format!("{key}.surfaces"),
                    format!("the pair '{a}', '{b}' is given twice"),
                ));
            }
            pairs.push((pair, pair_material(&key, p.friction, p.restitution)?));
        }
        Ok(MaterialTable {
            default,
            pairs,
            obstacle_materials,
        })
    }

    fn links(&self, planned: &[PlannedBody]) -> Result<Vec<Link>, InputError> {
        let n = planned.len();
        let mut links = Vec::with_capacity(self.links.len());
        for (l, link) in self.links.iter().enumerate() {
            let key = format!("{SECTION}.links[{l}]");
            let body_in = |field: &str, b: usize| {
                if b < n {
                    Ok(b)
                } else {
                    Err(InputError::invalid(
                        format!("{key}.{field}"),
                        format!("the scene has {n} bodies (numbered from 0), not body {b}"),
                    ))
                }
            };
            let body = body_in("body", link.body)?;
            let other = link.other.map(|o| body_in("other", o)).transpose()?;
            let point =
                optional3(format!("{key}.point"), &link.point)?.unwrap_or(planned[body].position);
            let other_point = match optional3(format!("{key}.other_point"), &link.other_point)? {
                Some(p) => p,
                None => match (link.kind, other) {
                    (LinkKindInput::RigidLink, Some(o)) => planned[o].position,
                    (LinkKindInput::RigidLink, None) => {
                        return Err(InputError::invalid(
                            format!("{key}.other_point"),
                            "a rigid link to the fixed world needs its fixed end: give 'other_point'",
                        ));
                    }
                    _ => point,
                },
            };
            let kind = match link.kind {
                LinkKindInput::FixedPoint => LinkKind::FixedPoint,
                LinkKindInput::RigidLink => LinkKind::RigidLink,
                LinkKindInput::FixedDirection => {
                    let d = link.direction.as_ref().ok_or_else(|| {
                        InputError::invalid(
                            format!("{key}.direction"),
                            "a fixed direction needs 'direction'",
                        )
                    })?;
                    LinkKind::FixedDirection {
                        direction: Vector3::from(vec3(&format!("{key}.direction"), d)?),
                    }
                }
            };
            if link.kind != LinkKindInput::FixedDirection && link.direction.is_some() {
                return Err(InputError::invalid(
                    format!("{key}.direction"),
                    "only a fixed_direction link takes a direction",
                ));
            }
            links.push(Link {
                kind,
                body,
                point: Vector3::from(point),
                other,
                other_point: Vector3::from(other_point),
            });
        }
        Ok(links)
    }

    fn solver_settings(&self) -> Result<NsgsSettings, InputError> {
        let at = format!("{SECTION}.solver");
        let mut s = NsgsSettings {
            polish_after: Some(10),
            ..NsgsSettings::default()
        };
        let Some(input) = &self.solver else {
            return Ok(s);
        };
        if let Some(t) = input.tolerance {
            if !(t.is_finite() && t > 0.0 && t < 1.0) {
                return Err(InputError::invalid(
                    format!("{at}.tolerance"),
                    format!("expected a tolerance between 0 and 1, got {t}"),
                ));
            }
            s.tolerance = t;
        }
        if let Some(m) = input.max_sweeps {
            if m == 0 {
                return Err(InputError::invalid(
                    format!("{at}.max_sweeps"),
                    "expected at least 1 sweep",
                ));
            }
            s.max_sweeps = m;
        }
        if let Some(p) = input.polish_after {
            s.polish_after = (p > 0).then_some(p);
        }
        s.strategy = match input.strategy.unwrap_or_default() {
            StrategyInput::Nsgs => Strategy::Nsgs,
            StrategyInput::Newton => Strategy::NewtonThenNsgs,
        };
        s.on_cap = match input.at_cap.unwrap_or_default() {
            AtCapInput::Warn => CapPolicy::WarnAndContinue,
            AtCapInput::Fail => CapPolicy::Fail,
        };
        Ok(s)
    }

    /// Refuses bodies that start overlapping (each other or an obstacle) deeper than
    /// `overlap_tolerance`, naming the first such body.
    fn check_overlaps(
        &self,
        scene: &SceneStepper,
        planned: &[PlannedBody],
        solid_size: Option<f64>,
    ) -> Result<(), InputError> {
        let smallest = planned
            .iter()
            .map(|b| b.shape.bounding_radius())
            .chain(solid_size)
            .fold(f64::INFINITY, f64::min);
        let key_of = |b: usize| {
            planned.get(b).map_or_else(
                || format!("{SECTION}.solids[{}]", b - planned.len()),
                |p| p.key.clone(),
            )
        };
        let tolerance = match self.overlap_tolerance {
            Some(t) if t.is_finite() && t >= 0.0 => t,
            Some(t) => {
                return Err(InputError::invalid(
                    format!("{SECTION}.overlap_tolerance"),
                    format!("expected a length ≥ 0, got {t}"),
                ));
            }
            None => 1e-6 * smallest,
        };
        let found = scene
            .contacts_now(0.0)
            .map_err(|e| InputError::invalid(SECTION, e.to_string()))?;
        if let Some(d) = found.iter().find(|d| d.gap < -tolerance) {
            let other = match d.second {
                fem_contact::detect::Other::Body(j) => key_of(j),
                fem_contact::detect::Other::Obstacle(k) => format!("{SECTION}.obstacles[{k}]"),
            };
            return Err(InputError::invalid(
                key_of(d.first),
                format!(
                    "the body starts overlapping {other} by {:.3e} (deeper than overlap_tolerance {:.3e}): move it apart",
                    -d.gap, tolerance
                ),
            ));
        }
        Ok(())
    }
}

/// A body as given in `bodies`.
fn plan_body(key: &str, b: &BodyInput, input: &Sections<'_>) -> Result<PlannedBody, InputError> {
    let density = positive(&format!("{key}.density"), b.density, "a density")?;
    let read = read_shape(&format!("{key}.shape"), &b.shape, Some(density), input)?;
    let mass = read
        .mass
        .ok_or_else(|| InputError::invalid(format!("{key}.shape"), "the shape has no mass"))?;
    let position = optional3(format!("{key}.position"), &b.position)?.unwrap_or(read.centre.into());
    Ok(PlannedBody {
        key: key.to_string(),
        shape: read.shape,
        mass,
        position,
        rotation: optional3(format!("{key}.rotation"), &b.rotation)?.unwrap_or([0.0; 3]),
        velocity: optional3(format!("{key}.velocity"), &b.velocity)?.unwrap_or([0.0; 3]),
        angular_velocity: optional3(format!("{key}.angular_velocity"), &b.angular_velocity)?
            .unwrap_or([0.0; 3]),
        surface: b.surface.clone().unwrap_or_else(|| "default".into()),
    })
}

/// An obstacle as given, and whether it is convex.
fn obstacle(
    key: &str,
    o: &ObstacleInput,
    input: &Sections<'_>,
) -> Result<(Obstacle, bool), InputError> {
    match (&o.plane, &o.shape) {
        (Some(p), None) => {
            if o.position.is_some() || o.rotation.is_some() {
                return Err(InputError::invalid(
                    key,
                    "a plane is placed by its 'point' and 'normal', not by position or rotation",
                ));
            }
            let point = vec3(&format!("{key}.plane.point"), &p.point)?;
            let normal = Vector3::from(vec3(&format!("{key}.plane.normal"), &p.normal)?);
            let n = normal.norm();
            if !(n > 0.0 && n.is_finite()) {
                return Err(InputError::invalid(
                    format!("{key}.plane.normal"),
                    "expected a direction (not zero)",
                ));
            }
            Ok((
                Obstacle::Plane {
                    point: Vector3::from(point),
                    normal: normal / n,
                },
                true,
            ))
        }
        (None, Some(s)) => {
            let read = read_shape(&format!("{key}.shape"), s, None, input)?;
            let position = optional3(format!("{key}.position"), &o.position)?.unwrap_or([0.0; 3]);
            let rotation = optional3(format!("{key}.rotation"), &o.rotation)?.unwrap_or([0.0; 3]);
            let convex = read.shape.is_convex();
            Ok((
                Obstacle::Fixed {
                    shape: read.shape,
                    placement: Placement {
                        translation: Vector3::from(position) + read.centre,
                        rotation: rotation_matrix(rotation),
                    },
                },
                convex,
            ))
        }
        _ => Err(InputError::invalid(
            key,
            "expected exactly one of 'plane' and 'shape'",
        )),
    }
}

/// What `fem check` says about the bodies: the first ten, then a count.
fn describe(planned: &[PlannedBody]) -> Vec<String> {
    let mut lines = vec![format!("  {} rigid bodies", planned.len())];
    for b in planned.iter().take(10) {
        let (points, _) = b.shape.triangles(crate::rigid::SPHERE_DRAWING);
        lines.push(format!(
            "  {}: mass {}, at {}, surface '{}', {} shape ({} drawn points)",
            b.key,
            fem_model::number::shown(b.mass.mass),
            fem_model::number::shown_list(&b.position),
            b.surface,
            if b.shape.is_convex() {
                "convex"
            } else {
                "non-convex"
            },
            points.len()
        ));
    }
    if planned.len() > 10 {
        lines.push(format!("  … and {} more", planned.len() - 10));
    }
    lines
}
