//! A deformable solid in a scene (issue 24): the impacting bar. An elastic bar (`ν = 0`)
//! moving at `v₀` along its axis hits a rigid plane: in 1D theory the contact lasts `2L/c`
//! (`c = sqrt(E/ρ)`), the bar leaves at `−v₀` and keeps its energy. The bar is meshed along
//! its axis (hex8, tet4) and stepped by DEF_EXP and DEF_LIM through the scene's contact solve
//! (its nodes touching the plane, node to surface). docs/validation.md ("Impacting bar").

use fem_assembly::{DofMap, SolidOperator};
use fem_contact::detect::{MaterialTable, Obstacle};
use fem_contact::{NsgsSettings, SurfaceMaterial};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_scene::solid::{SolidBody, SolidGroup, SolidStepper, boundary_nodes};
use fem_scene::{BodyGroup, Prediction, SceneSettings, SceneStepper};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{CriticalStepCheck, DefExp, DefLim, StepSettings, Stepper};
use nalgebra::Vector3;

const L: f64 = 1.0;
const A_SIDE: f64 = 0.1;
const E: f64 = 1.0;
const RHO: f64 = 1.0;
const V0: f64 = 1e-3;

struct Outcome {
    /// Steps with an active contact, first and last (1-based step numbers).
    first: u64,
    last: u64,
    dt: f64,
    /// Mean axial velocity of the bar at the end.
    velocity: f64,
    /// Kinetic + strain energy at the end over the start's.
    energy_ratio: f64,
    /// Energy balance error (total + dissipated − work, end minus start) over the start's.
    balance: f64,
    /// Deepest node below the plane over the run.
    depth: f64,
    /// Largest total normal force (all contact points) of a step.
    force: f64,
    /// Total normal impulse over the run.
    impulse: f64,
}

fn impact(cells: BoxCells, implicit: bool, courant: f64, n: usize) -> Outcome {
    let mesh = box_mesh([A_SIDE, A_SIDE, L], [1, 1, n], cells).unwrap();
    let (kind, mesh_kind) = match cells {
        BoxCells::Hex8 => (SolidKind::Hex8, fem_mesh::CellKind::Hex8),
        _ => (SolidKind::Tet4, fem_mesh::CellKind::Tet4),
    };
    let conn = mesh.blocks[0].connectivity.clone();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, E, 0.0).unwrap();
    let operator = SolidOperator::new(
        kind,
        &mesh.points,
        &conn,
        material,
        RHO,
        Lumping::RowSum,
        &dofmap,
    )
    .unwrap();
    let system = SolidSystem::new(operator, SolidMass::Lumped).unwrap();
    let x0 = vec![0.0; dofmap.n_free()];
    let h_e = L / n as f64;
    let c = (E / RHO).sqrt();
    let dt = (courant * h_e / c).min(DefExp::auto_step(&system, &x0, 0.5).unwrap());
    // The bar starts 0.1 s of flight above the plane z = 0, moving down.
    let gap0 = 0.1 * V0;
    let mut v0 = vec![0.0; dofmap.n_free()];
    for (i, v) in v0.iter_mut().enumerate() {
        if i % 3 == 2 {
            *v = -V0;
        }
    }
    let t_end = 0.1 + 2.0 * L / c + 0.5;
    let settings = StepSettings::new(dt);
    let output = SolidOutput::new(
        mesh.points.clone(),
        VtkCells::new(),
        system.shared_operator(),
    );
    let stepper = if implicit {
        SolidStepper::Lim(DefLim::new(system, 0.0, settings, &x0, &v0).unwrap())
    } else {
        SolidStepper::Exp(
            DefExp::new(system, settings, &x0, &v0, CriticalStepCheck::every(0)).unwrap(),
        )
    };
    let points: Vec<[f64; 3]> = mesh
        .points
        .iter()
        .map(|p| [p[0], p[1], p[2] + gap0])
        .collect();
    let nodes = boundary_nodes(mesh_kind, &conn).unwrap();
    let body = SolidBody::new(stepper, points, nodes, 0, output).unwrap();
    let group = SolidGroup::new(vec![body]);
    let plane = Obstacle::Plane {
        point: Vector3::zeros(),
        normal: Vector3::z(),
    };
    let materials = MaterialTable {
        default: SurfaceMaterial::new(0.0, 0.0).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0],
    };
    let settings = SceneSettings {
        solver: NsgsSettings {
            tolerance: 1e-12,
            ..NsgsSettings::default()
        },
        prediction: Prediction::Auto,
    };
    let mut scene = SceneStepper::new(
        vec![Box::new(group) as Box<dyn BodyGroup>],
        vec![plane],
        materials,
        &[],
        settings,
    )
    .unwrap();
    let e0 = scene.scene_energy();
    let start = e0.total;
    let n_steps = (t_end / dt).ceil() as u64;
    let (mut first, mut last) = (0, 0);
    let mut depth: f64 = 0.0;
    let mut force: f64 = 0.0;
    let mut impulse = 0.0;
    for k in 1..=n_steps {
        scene.step().unwrap();
        if scene.last_solve().active > 0 {
            if first == 0 {
                first = k;
            }
            last = k;
        }
        let total: f64 = scene.contacts().iter().map(|r| r.normal_force).sum();
        force = force.max(total);
        impulse += total * dt;
        let g = &scene.groups()[0];
        let solid = &g.as_any().downcast_ref::<SolidGroup>().unwrap().bodies()[0];
        for (i, &d) in solid.free_dofs().iter().enumerate() {
            if d % 3 == 2 {
                let z = mesh.points[d / 3][2] + gap0 + solid.position()[i];
                depth = depth.max(-z);
            }
        }
    }
    let e1 = scene.scene_energy();
    let g = &scene.groups()[0];
    let solid = &g.as_any().downcast_ref::<SolidGroup>().unwrap().bodies()[0];
    // Mean axial velocity by mass: the lumped mass is uniform along the bar's axis up to the
    // ends, so weigh by the row-sum mass.
    let sys_mass: Vec<f64> = {
        let op = SolidOperator::new(
            kind,
            &mesh.points,
            &conn,
            Material::new(MaterialModel::SaintVenantKirchhoff, E, 0.0).unwrap(),
            RHO,
            Lumping::RowSum,
            &dofmap,
        )
        .unwrap();
        op.lumped_mass().to_vec()
    };
    let (mut p, mut m) = (0.0, 0.0);
    for (i, &d) in solid.free_dofs().iter().enumerate() {
        if d % 3 == 2 {
            p += sys_mass[i] * solid.velocity()[i];
            m += sys_mass[i];
        }
    }
    let balance = |e: &fem_time::Energy| e.total + e.dissipated - e.external_work;
    Outcome {
        first,
        last,
        dt,
        velocity: p / m,
        energy_ratio: e1.total / start,
        balance: (balance(&e1) - balance(&e0)) / start,
        depth,
        force,
        impulse,
    }
}

fn check(
    name: &str,
    o: &Outcome,
    steps_off: f64,
    velocity_off: f64,
    energy_off: f64,
    balance_off: f64,
) {
    let duration = (o.last - o.first + 1) as f64 * o.dt;
    let theory = 2.0 * L / (E / RHO).sqrt();
    let plateau = RHO * (E / RHO).sqrt() * V0 * A_SIDE * A_SIDE;
    let mean_force = o.impulse / duration;
    println!(
        "{name}: dt = {:.4e}, contact {:.6} (2L/c = {theory}, {:.2} steps off), leaves at {:.6e} (v0 = {V0:e}, ratio {:.6}), energy ratio {:.6}, balance {:.3e}, deepest node {:.3e}, peak total force {:.4e}, mean {:.4e} (rho c v0 A = {plateau:.4e})",
        o.dt,
        duration,
        (duration - theory) / o.dt,
        o.velocity,
        o.velocity / V0,
        o.energy_ratio,
        o.balance,
        o.depth,
        o.force,
        mean_force,
    );
    assert!(
        ((duration - theory) / o.dt).abs() <= steps_off,
        "{name}: the contact lasts {duration}, 2L/c = {theory}"
    );
    assert!(
        (o.velocity / V0 - 1.0).abs() <= velocity_off,
        "{name}: leaves at {}",
        o.velocity
    );
    assert!(
        (o.energy_ratio - 1.0).abs() <= energy_off,
        "{name}: energy ratio {}",
        o.energy_ratio
    );
    // The mean force over the contact is the plateau rho c v0 A (1D theory) to the loss of
    // the rebound and the duration's step.
    assert!(
        (mean_force / plateau - 1.0).abs() <= 0.06,
        "{name}: mean contact force {mean_force}, plateau {plateau}"
    );
    // The scene's bookkeeping closes: what the contacts took is in `dissipated`, to the
    // scheme's own energy error (DEF_EXP's leap-frog energy oscillates with the wave front's
    // highest modes; DEF_LIM is the midpoint rule, exact for a linear body).
    assert!(
        o.balance.abs() < balance_off,
        "{name}: balance {}",
        o.balance
    );
    // No node passes the plane by more than the solver's resolution.
    assert!(
        o.depth < 1e-9 * V0,
        "{name}: a node {} below the plane",
        o.depth
    );
}

#[test]
fn an_elastic_bar_hitting_a_wall_rebounds_after_2l_over_c_def_exp_hex8() {
    let o = impact(BoxCells::Hex8, false, 0.5, 40);
    check(
        "DEF_EXP hex8 40 cells, Courant 0.5",
        &o,
        4.0,
        0.05,
        0.05,
        2e-3,
    );
}

#[test]
fn an_elastic_bar_hitting_a_wall_rebounds_after_2l_over_c_def_exp_tet4() {
    let o = impact(BoxCells::Tet4, false, 0.3, 20);
    check(
        "DEF_EXP tet4 20 layers, Courant 0.3",
        &o,
        4.0,
        0.06,
        0.08,
        2e-3,
    );
}

#[test]
fn an_elastic_bar_hitting_a_wall_rebounds_after_2l_over_c_def_lim_hex8() {
    let o = impact(BoxCells::Hex8, true, 0.5, 40);
    check(
        "DEF_LIM hex8 40 cells, Courant 0.5",
        &o,
        4.0,
        0.05,
        0.05,
        1e-5,
    );
}

#[test]
fn the_energy_lost_at_the_impact_shrinks_with_the_mesh() {
    // The first node stopped by the plane (e = 0) loses its kinetic energy: ½ m_node v₀², a
    // share 1/(2n) of the bar's: first order in the cell size.
    let coarse = impact(BoxCells::Hex8, false, 0.5, 20);
    let fine = impact(BoxCells::Hex8, false, 0.5, 40);
    let (lc, lf) = (1.0 - coarse.energy_ratio, 1.0 - fine.energy_ratio);
    println!(
        "energy lost: 20 cells {lc:.4e}, 40 cells {lf:.4e}, ratio {:.3}",
        lc / lf
    );
    assert!(lf < lc, "{lc} {lf}");
    assert!((lc / lf) > 1.5, "{lc} {lf}");
}
