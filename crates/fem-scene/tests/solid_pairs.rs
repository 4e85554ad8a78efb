//! Solids that meet each other and rigid shapes on their faces (issue 24 part B;
//! docs/validation.md "Bodies that meet (II)"): two equal bars head on (1D theory: they
//! exchange their velocities, the contact force a plateau `ρ c v₀ A` during `2L/c`), a rigid
//! sphere resting on a hex8 bar's top face between its corner nodes, a cube dropped on a
//! plane and a solid hitting a rigid body.

use fem_assembly::{DofMap, SolidOperator};
use fem_contact::detect::MaterialTable;
use fem_contact::{NsgsSettings, SurfaceMaterial};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::CellKind;
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_scene::solid::{SolidBody, SolidGroup, SolidStepper, boundary_nodes};
use fem_scene::solid_faces::boundary_faces;
use fem_scene::{BodyGroup, Prediction, SceneSettings, SceneStepper};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{CriticalStepCheck, DefExp, StepSettings, Stepper};

const L: f64 = 1.0;
const A_SIDE: f64 = 0.1;
const E: f64 = 1.0;
const RHO: f64 = 1.0;
const V0: f64 = 1e-3;

/// A hex8 box solid of `lengths` and `cells`, its reference placed at `offset`, moving at
/// `velocity`, stepped by DEF_EXP with `dt`, gravity `gravity`; and its lumped masses.
fn box_solid(
    lengths: [f64; 3],
    cells: [usize; 3],
    offset: [f64; 3],
    velocity: [f64; 3],
    dt: f64,
    gravity: Option<[f64; 3]>,
    material: u32,
) -> (SolidBody, Vec<f64>) {
    let mesh = box_mesh(lengths, cells, BoxCells::Hex8).unwrap();
    let conn = mesh.blocks[0].connectivity.clone();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material_law = Material::new(MaterialModel::SaintVenantKirchhoff, E, 0.0).unwrap();
    let operator = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &conn,
        material_law,
        RHO,
        Lumping::RowSum,
        &dofmap,
    )
    .unwrap();
    let mass = operator.lumped_mass().to_vec();
    let mut system = SolidSystem::new(operator, SolidMass::Lumped).unwrap();
    if let Some(g) = gravity {
        system = system.with_gravity(g);
    }
    let x0 = vec![0.0; dofmap.n_free()];
    let v0: Vec<f64> = (0..dofmap.n_free()).map(|i| velocity[i % 3]).collect();
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
            &v0,
            CriticalStepCheck::every(0),
        )
        .unwrap(),
    );
    let points: Vec<[f64; 3]> = mesh
        .points
        .iter()
        .map(|p| std::array::from_fn(|k| p[k] + offset[k]))
        .collect();
    let nodes = boundary_nodes(CellKind::Hex8, &conn).unwrap();
    let faces = boundary_faces(CellKind::Hex8, &conn).unwrap();
    let body = SolidBody::new(stepper, points, nodes, material, output)
        .unwrap()
        .with_faces(&faces)
        .with_drawing(offset, CellKind::Hex8, conn);
    (body, mass)
}

fn settings() -> SceneSettings {
    SceneSettings {
        solver: NsgsSettings {
            tolerance: 1e-12,
            ..NsgsSettings::default()
        },
        prediction: Prediction::Auto,
    }
}

fn materials(obstacles: usize) -> MaterialTable {
    MaterialTable {
        default: SurfaceMaterial::new(0.0, 0.0).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0; obstacles],
    }
}

/// Mean velocity (by lumped mass) of solid `i` along `axis`.
fn mean_velocity(scene: &SceneStepper, group: usize, i: usize, mass: &[f64], axis: usize) -> f64 {
    let g = scene.groups()[group]
        .as_any()
        .downcast_ref::<SolidGroup>()
        .unwrap();
    let b = &g.bodies()[i];
    let (mut p, mut m) = (0.0, 0.0);
    for (k, &d) in b.free_dofs().iter().enumerate() {
        if d % 3 == axis {
            p += mass[k] * b.velocity()[k];
            m += mass[k];
        }
    }
    p / m
}

fn balance(e: &fem_time::Energy) -> f64 {
    e.total + e.dissipated - e.external_work
}

#[test]
fn two_equal_bars_head_on_exchange_their_velocities_after_2l_over_c() {
    let n = 40;
    let c = (E / RHO).sqrt();
    let dt = 0.5 * (L / n as f64) / c;
    // Bar 0 below, moving up; bar 1 above, moving down; 2 g0 apart (0.1 s of closing).
    let g0 = 0.05 * V0;
    let (lower, m0) = box_solid(
        [A_SIDE, A_SIDE, L],
        [1, 1, n],
        [0.0, 0.0, -L - g0],
        [0.0, 0.0, V0],
        dt,
        None,
        0,
    );
    let (upper, m1) = box_solid(
        [A_SIDE, A_SIDE, L],
        [1, 1, n],
        [0.0, 0.0, g0],
        [0.0, 0.0, -V0],
        dt,
        None,
        0,
    );
    let group = SolidGroup::new(vec![lower, upper]);
    let mut scene = SceneStepper::new(
        vec![Box::new(group) as Box<dyn BodyGroup>],
        vec![],
        materials(0),
        &[],
        settings(),
    )
    .unwrap();
    let e0 = scene.scene_energy();
    let t_end = 0.1 + 2.0 * L / c + 0.4;
    let n_steps = (t_end / dt).ceil() as u64;
    let (mut first, mut last) = (0, 0);
    let mut impulse = 0.0;
    let mut overlap: f64 = 0.0;
    for k in 1..=n_steps {
        scene.step().unwrap();
        if scene.last_solve().active > 0 {
            if first == 0 {
                first = k;
            }
            last = k;
        }
        // Every contact is a node of one bar on the other's end face.
        for r in scene.contacts() {
            assert!((r.normal.z.abs() - 1.0).abs() < 1e-12, "{:?}", r.normal);
        }
        impulse += scene.contacts().iter().map(|r| r.normal_force).sum::<f64>() * dt;
        let g = scene.groups()[0]
            .as_any()
            .downcast_ref::<SolidGroup>()
            .unwrap();
        // The lower bar's top nodes against the upper bar's bottom ones: their z distance.
        let (b0, b1) = (&g.bodies()[0], &g.bodies()[1]);
        let top0 = b0
            .placed_nodes()
            .iter()
            .map(|p| p.z)
            .fold(f64::NEG_INFINITY, f64::max);
        let bottom1 = b1
            .placed_nodes()
            .iter()
            .map(|p| p.z)
            .fold(f64::INFINITY, f64::min);
        overlap = overlap.max(top0 - bottom1);
    }
    let e1 = scene.scene_energy();
    let duration = (last - first + 1) as f64 * dt;
    let theory = 2.0 * L / c;
    let plateau = RHO * c * V0 * A_SIDE * A_SIDE;
    let mean_force = impulse / duration;
    let (v_lower, v_upper) = (
        mean_velocity(&scene, 0, 0, &m0, 2),
        mean_velocity(&scene, 0, 1, &m1, 2),
    );
    let drift = (balance(&e1) - balance(&e0)) / e0.total;
    println!(
        "two bars: dt {dt:.4e}, contact {duration:.5} (2L/c = {theory}, {:.2} steps off), lower leaves at {:.5e}, upper at {:.5e} (v0 = {V0:e}), mean force {mean_force:.5e} (rho c v0 A = {plateau:.5e}, ratio {:.4}), energy kept {:.5}, balance {drift:.3e}, deepest overlap {overlap:.3e}",
        (duration - theory) / dt,
        v_lower,
        v_upper,
        mean_force / plateau,
        e1.total / e0.total,
    );
    assert!(((duration - theory) / dt).abs() <= 4.0, "{duration}");
    // They exchange their velocities (to the first node layer's loss, 1/(2n) of the energy).
    assert!((v_lower / -V0 - 1.0).abs() < 0.05, "{v_lower}");
    assert!((v_upper / V0 - 1.0).abs() < 0.05, "{v_upper}");
    assert!((mean_force / plateau - 1.0).abs() < 0.06, "{mean_force}");
    assert!(drift.abs() < 2e-3, "{drift}");
    assert!(overlap < 1e-9 * V0, "{overlap}");
}
