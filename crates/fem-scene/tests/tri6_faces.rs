//! A tet10 solid's boundary tri6 faces as contact faces (issue 24; docs/validation.md "Bodies
//! that meet (II)", tri6 faces): a rigid sphere dropped between the nodes of a tet10 solid's
//! top face rests on the face (without the faces it falls in between the nodes), and a finer
//! solid's nodes dropped on a tet10 solid are stopped by its tri6 faces (without them they pass
//! through, node against node being no contact).

mod common;

use fem_assembly::{DofMap, SolidOperator};
use fem_contact::detect::Shape;
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::CellKind;
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_rigid::{RigidBodies, RigidStepper, Scheme};
use fem_scene::rigid::{RigidGroup, body_of_shape};
use fem_scene::solid::{SolidBody, SolidGroup, SolidStepper, boundary_nodes};
use fem_scene::solid_faces::boundary_faces;
use fem_scene::{BodyGroup, SceneStepper};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{CriticalStepCheck, DefExp, StepSettings, Stepper};

const G: f64 = 9.81;
const DENSITY: f64 = 1000.0;

/// A box solid of `cells` (hex8 or tet10), placed at `offset`, at rest, DEF_EXP with `dt`,
/// gravity, its boundary's nodes for contact, and its boundary faces or none.
fn box_solid(
    lengths: [f64; 3],
    n: [usize; 3],
    cells: BoxCells,
    offset: [f64; 3],
    young: f64,
    dt: f64,
    faces: bool,
) -> SolidBody {
    let mesh = box_mesh(lengths, n, cells).unwrap();
    let (kind, mesh_kind, lumping) = match cells {
        BoxCells::Tet10 => (SolidKind::Tet10, CellKind::Tet10, Lumping::Hrz),
        _ => (SolidKind::Hex8, CellKind::Hex8, Lumping::RowSum),
    };
    let conn = mesh.blocks[0].connectivity.clone();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, young, 0.0).unwrap();
    let operator = SolidOperator::new(
        kind,
        &mesh.points,
        &conn,
        material,
        DENSITY,
        lumping,
        &dofmap,
    )
    .unwrap();
    let system = SolidSystem::new(operator, SolidMass::Lumped)
        .unwrap()
        .with_gravity([0.0, 0.0, -G]);
    let x0 = vec![0.0; dofmap.n_free()];
    let output = SolidOutput::new(
        mesh.points.clone(),
        VtkCells::new(),
        system.shared_operator(),
    );
    let stepper = SolidStepper::Exp(
        DefExp::new(
            system,
            StepSettings::new(dt),
            &x0,
            &x0,
            CriticalStepCheck::every(0),
        )
        .unwrap(),
    );
    let points: Vec<[f64; 3]> = mesh
        .points
        .iter()
        .map(|p| std::array::from_fn(|k| p[k] + offset[k]))
        .collect();
    let nodes = boundary_nodes(mesh_kind, &conn).unwrap();
    let faces = if faces {
        boundary_faces(mesh_kind, &conn).unwrap()
    } else {
        Vec::new()
    };
    SolidBody::new(stepper, points, nodes, 0, output)
        .unwrap()
        .with_faces(&faces)
        .unwrap()
        .with_drawing(offset, mesh_kind, conn)
}

fn scene(groups: Vec<Box<dyn BodyGroup>>) -> SceneStepper {
    common::on_the_floor(groups, 1e-12)
}

/// The tet10 block's faces: a box 0.1 × 0.1 × 0.1 of one cube of tets (each box face four
/// triangles about its centre). The top face's tri6 `(0, 0), (0.1, 0), (0.05, 0.05)` has its
/// centroid at `(0.05, 1/60)`, 1/60 from the nearest node (the mid-side `(0.05, 0)`).
const SIDE: f64 = 0.1;
const CENTROID: [f64; 2] = [0.05, 1.0 / 60.0];

/// A rigid sphere of radius 0.01 dropped from 0.5 mm above the centroid of a tri6 of the
/// tet10 block's top face (the block on the plane z = 0); 0.03 s. Returns the sphere's centre
/// height over the top face at the end, the lowest it was over the run, and its vertical
/// velocity at the end.
fn sphere_on_tet10(faces: bool) -> (f64, f64, f64) {
    let (radius, dt) = (0.01, 1e-5);
    let block = box_solid(
        [SIDE; 3],
        [1, 1, 1],
        BoxCells::Tet10,
        [0.0; 3],
        1e8,
        dt,
        faces,
    );
    let shape = Shape::sphere(radius).unwrap();
    let mut set = RigidBodies::new([0.0, 0.0, -G]).unwrap();
    let mut body = body_of_shape(&shape, DENSITY).unwrap();
    body.position = [CENTROID[0], CENTROID[1], SIDE + radius + 5e-4];
    set.push(body).unwrap();
    let stepper = RigidStepper::new(set, Scheme::RigPos, dt, 0.0).unwrap();
    let sphere = RigidGroup::new(stepper, vec![shape], vec![0]).unwrap();
    let mut s = scene(vec![
        Box::new(sphere) as Box<dyn BodyGroup>,
        Box::new(SolidGroup::new(vec![block])),
    ]);
    let centre = |s: &SceneStepper| {
        let rigid = s.groups()[0].as_any().downcast_ref::<RigidGroup>().unwrap();
        let bodies = rigid.stepper().bodies();
        (bodies.positions()[0][2] - SIDE, bodies.velocities()[0][2])
    };
    let mut lowest = f64::INFINITY;
    for _ in 0..3000 {
        s.step().unwrap();
        lowest = lowest.min(centre(&s).0);
    }
    let (end, velocity) = centre(&s);
    (end, lowest, velocity)
}

#[test]
fn a_sphere_dropped_between_the_nodes_of_a_tet10_face_rests_on_the_face() {
    let (on, lowest, velocity) = sphere_on_tet10(true);
    let (off, _, _) = sphere_on_tet10(false);
    println!(
        "sphere R = 0.01 on a tet10 face: centre {on:.6e} above the top at the end, {lowest:.6e} at the lowest, velocity {velocity:.2e}; without faces {off:.4e}"
    );
    // Without the faces the sphere passes between the nodes (1/60 > R away): in free fall,
    // 3.9 mm below the face by the end.
    assert!(off < 0.01 - 3e-3, "{off}");
    // With them it rests on the tri6, a radius above it to the face's sag under its weight,
    // over the whole run; what moves is the ringing of the undamped block (the impact was at
    // 0.1 m/s).
    assert!((on - 0.01).abs() < 1e-5, "{on}");
    assert!(lowest > 0.01 - 1e-5, "{lowest}");
    assert!(velocity.abs() < 1e-2, "{velocity}");
}

/// A hex8 cube 0.02 (2 × 2 × 2 cells, finer than the tet10 block's faces: its nodes meet the
/// block's tri6 faces) dropped from 0.5 mm above the block's top face, its centre above the
/// centroid of a tri6 (no node of the cube above a node of the block); 0.03 s. Returns the
/// lowest node of the cube over the block's top at the end and over the run.
fn cube_on_tet10(faces: bool) -> (f64, f64) {
    let dt = 1e-5;
    let block = box_solid(
        [SIDE; 3],
        [1, 1, 1],
        BoxCells::Tet10,
        [0.0; 3],
        1e8,
        dt,
        faces,
    );
    let a = 0.02;
    let cube = box_solid(
        [a; 3],
        [2, 2, 2],
        BoxCells::Hex8,
        [
            CENTROID[0] - 0.5 * a + 3e-3,
            CENTROID[1] - 0.5 * a + 1e-3,
            SIDE + 5e-4,
        ],
        1e7,
        dt,
        true,
    );
    let mut s = scene(vec![Box::new(SolidGroup::new(vec![block, cube]))]);
    let lowest_node = |s: &SceneStepper| {
        let g = s.groups()[0].as_any().downcast_ref::<SolidGroup>().unwrap();
        g.bodies()[1]
            .placed_nodes()
            .iter()
            .map(|p| p.z - SIDE)
            .fold(f64::INFINITY, f64::min)
    };
    let mut lowest = f64::INFINITY;
    for _ in 0..3000 {
        s.step().unwrap();
        lowest = lowest.min(lowest_node(&s));
    }
    (lowest_node(&s), lowest)
}

#[test]
fn a_solids_nodes_are_stopped_by_a_tet10_solids_tri6_faces() {
    let (on, lowest) = cube_on_tet10(true);
    let (off, _) = cube_on_tet10(false);
    println!(
        "hex8 cube on a tet10 block: lowest cube node {on:.4e} over the top at the end, {lowest:.4e} over the run; without the block's faces {off:.4e}"
    );
    // Without the faces the cube falls into the block (its nodes meet no node).
    assert!(off < -2e-3, "{off}");
    // With them it rests on the top face, to the faces' sag under its weight, over the whole
    // run.
    assert!(on.abs() < 1e-5, "{on}");
    assert!(lowest > -1e-5, "{lowest}");
}
