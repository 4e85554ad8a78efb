//! A deformable solid in a scene (issue 24): the impacting bar. An elastic bar (`ν = 0`)
//! moving at `v₀` along its axis hits a rigid plane: in 1D theory the contact lasts `2L/c`
//! (`c = sqrt(E/ρ)`), the bar leaves at `−v₀` and keeps its energy. The bar is meshed along
//! its axis (hex8, tet4) and stepped by DEF_EXP and DEF_LIM through the scene's contact solve
//! (its nodes touching the plane, node to surface). docs/validation.md ("Impacting bar").

mod common;

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_scene::BodyGroup;
use fem_scene::redistribute::{Redistribution, redistribute};
use fem_scene::solid::{SolidBody, SolidGroup, SolidStepper, boundary_nodes};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{CriticalStepCheck, DefExp, DefLim, StepSettings, Stepper};

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

/// The contact law of the bar's struck face.
#[derive(Clone, Copy, PartialEq)]
enum Law {
    /// Every node keeps its lumped mass; the solids' default law, the mid-step position law
    /// (docs/theory/contact.md §9.2, C18: no restitution).
    Lumped,
    /// The struck face's mass redistributed to the layer above (massless contact nodes, R1),
    /// the position-level law (docs/theory/contact.md §9.1).
    Redistributed,
    /// The struck face's mass spread over the whole bar in proportion (C33), the
    /// position-level law.
    Proportional,
}

fn impact(cells: BoxCells, implicit: bool, courant: f64, n: usize) -> Outcome {
    impact_with(cells, implicit, courant, n, Law::Lumped)
}

fn impact_with(cells: BoxCells, implicit: bool, courant: f64, n: usize, law: Law) -> Outcome {
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
    let mut system = SolidSystem::new(operator, SolidMass::Lumped).unwrap();
    if law != Law::Lumped {
        let bottom: Vec<usize> = (0..mesh.n_nodes())
            .filter(|&k| mesh.points[k][2] == 0.0)
            .collect();
        system = redistribute(
            system,
            if law == Law::Proportional {
                Redistribution::Proportional
            } else {
                Redistribution::Neighbours
            },
            kind.n_nodes(),
            &conn,
            &bottom,
        )
        .unwrap();
    }
    let lumped: Vec<f64> = match fem_time::SecondOrderSystem::mass(&system) {
        fem_time::Mass::Lumped(m) => m.clone(),
        fem_time::Mass::Consistent(_) => unreachable!("a lumped mass"),
    };
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
    let mut scene = common::on_the_floor(vec![Box::new(group) as Box<dyn BodyGroup>], 1e-12);
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
    // Mean axial velocity: the momentum over the mass (the system's lumped mass, as
    // redistributed).
    let sys_mass = lumped;
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

#[test]
fn with_the_mass_redistributed_off_the_struck_face_the_bar_keeps_its_energy_def_lim_hex8() {
    // Massless contact nodes (Khenous, Laborde & Renard 2008) and the position-level law:
    // the impact costs nothing, the energy is the midpoint rule's to 1e-5 (it is 0.985 of
    // the start's with the mass on the contact nodes and the mid-step law, 0.979 with rule
    // (R)), and the bar leaves faster than with the mass on the contact nodes (0.971 v0). What remains of the rebound's shortfall is the semi-discrete bar's
    // dispersion (docs/validation.md): the released energy stays in its vibration.
    let o = impact_with(BoxCells::Hex8, true, 0.5, 40, Law::Redistributed);
    check(
        "DEF_LIM hex8 40 cells, mass redistributed",
        &o,
        4.0,
        0.025,
        2e-5,
        2e-5,
    );
    let lumped = impact(BoxCells::Hex8, true, 0.5, 40);
    assert!(
        o.velocity > lumped.velocity + 0.005 * V0,
        "redistributed {} against {}",
        o.velocity,
        lumped.velocity
    );
}

#[test]
fn with_the_mass_redistributed_off_the_struck_face_the_bar_keeps_its_energy_def_lim_tet4() {
    let o = impact_with(BoxCells::Tet4, true, 0.3, 20, Law::Redistributed);
    check(
        "DEF_LIM tet4 20 layers, mass redistributed",
        &o,
        5.0,
        0.03,
        1e-3,
        2e-5,
    );
}

#[test]
fn with_the_mass_redistributed_the_rebound_converges_under_refinement() {
    // The energy is kept at every size; the rebound's shortfall shrinks with the cell
    // (0.031 -> 0.022 from 20 to 40 cells: the semi-discrete bar's dispersive release).
    let coarse = impact_with(BoxCells::Hex8, true, 0.5, 20, Law::Redistributed);
    let fine = impact_with(BoxCells::Hex8, true, 0.5, 40, Law::Redistributed);
    let (dc, df) = (1.0 - coarse.velocity / V0, 1.0 - fine.velocity / V0);
    println!(
        "rebound shortfall: 20 cells {dc:.4e}, 40 cells {df:.4e}, ratio {:.3}",
        dc / df
    );
    assert!(df < 0.8 * dc, "{dc} {df}");
    for o in [&coarse, &fine] {
        assert!((o.energy_ratio - 1.0).abs() < 2e-5, "{}", o.energy_ratio);
    }
}

#[test]
fn def_exp_steps_a_massless_node_by_its_equilibrium() {
    // DEF_EXP with the struck face's mass redistributed: its 4 nodes' 12 dofs are massless
    // (C26), and the critical step of the massive dofs (held massless dofs) is no shorter
    // than the bar's before the redistribution (the masses only grew).
    let mesh = box_mesh([A_SIDE, A_SIDE, L], [1, 1, 4], BoxCells::Hex8).unwrap();
    let conn = mesh.blocks[0].connectivity.clone();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, E, 0.0).unwrap();
    let operator = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &conn,
        material,
        RHO,
        Lumping::RowSum,
        &dofmap,
    )
    .unwrap();
    let system = SolidSystem::new(operator, SolidMass::Lumped).unwrap();
    let bottom: Vec<usize> = (0..mesh.n_nodes())
        .filter(|&k| mesh.points[k][2] == 0.0)
        .collect();
    let x0 = vec![0.0; dofmap.n_free()];
    let before = DefExp::estimate(&system, &x0).unwrap().step.dt;
    let system = redistribute(system, Redistribution::Neighbours, 8, &conn, &bottom).unwrap();
    let after = DefExp::estimate(&system, &x0).unwrap().step.dt;
    assert!(
        after.is_finite() && after >= before * (1.0 - 1e-9),
        "{after} {before}"
    );
    let mut stepper = DefExp::new(
        system,
        StepSettings::new(0.5 * before),
        &x0,
        &x0,
        CriticalStepCheck::every(0),
    )
    .unwrap();
    assert_eq!(stepper.massless_dofs().len(), 12);
    // At rest it stays at rest: the equilibrium of an unloaded body is its reference.
    for _ in 0..5 {
        stepper.step().unwrap();
    }
    assert!(
        fem_time::NodalStepper::position(&stepper)
            .iter()
            .all(|x| x.abs() < 1e-15)
    );
}

#[test]
fn proportional_redistribution_leaves_faster_than_the_neighbours_one() {
    // The general case (no rollers, Courant 0.5, hex8, 20 and 40 cells): C33 keeps the bulk
    // uniform where R1 puts a heavy layer next to the struck face. Measured (docs/validation.md,
    // "Mass redistributed, DEF_EXP"): DEF_LIM 0.9770 / 0.9835 v0 against R1's 0.9690 / 0.9780,
    // energy 0.999989 / 0.999994 (R1 0.999990 / 0.999993); DEF_EXP 0.9832 / 0.9881 against
    // 0.9765 / 0.9838. Shortfall order about 1/2 (dispersion of the release).
    for implicit in [true, false] {
        let mut shortfall = Vec::new();
        for n in [20, 40] {
            let c33 = impact_with(BoxCells::Hex8, implicit, 0.5, n, Law::Proportional);
            let r1 = impact_with(BoxCells::Hex8, implicit, 0.5, n, Law::Redistributed);
            println!(
                "implicit {implicit}, {n} cells: C33 {:.6} v0, energy {:.6}; R1 {:.6} v0, energy {:.6}",
                c33.velocity / V0,
                c33.energy_ratio,
                r1.velocity / V0,
                r1.energy_ratio
            );
            assert!(
                c33.velocity > r1.velocity + 0.002 * V0,
                "{n} cells: C33 {} R1 {}",
                c33.velocity,
                r1.velocity
            );
            let energy_off = if implicit { 2e-5 } else { 3e-3 };
            assert!(
                (c33.energy_ratio - 1.0).abs() < energy_off,
                "{n} cells: {}",
                c33.energy_ratio
            );
            assert!(c33.depth < 1e-9 * V0, "{n} cells: {}", c33.depth);
            shortfall.push(1.0 - c33.velocity / V0);
        }
        assert!(
            shortfall[0] > 1.3 * shortfall[1] && shortfall[1] > 0.0,
            "{shortfall:?}"
        );
    }
}

#[test]
#[ignore]
fn probe_methods() {
    // cargo test -p fem-scene --test solid_impact -- --ignored --nocapture probe_methods
    for (cells, name) in [(BoxCells::Hex8, "hex8"), (BoxCells::Tet4, "tet4")] {
        for implicit in [false, true] {
            for n in [20, 40, 80] {
                for law in [Law::Lumped, Law::Redistributed, Law::Proportional] {
                    let o = impact_with(cells, implicit, 0.5, n, law);
                    let duration = (o.last - o.first + 1) as f64 * o.dt;
                    let h_e = L / n as f64;
                    println!(
                        "{name} {} {n} {}: dt {:.4} dx/c, contact {:+.2} steps beyond 2L/c, leaves at {:.6} v0, energy {:.6}, balance {:.2e}",
                        if implicit { "DEF_LIM" } else { "DEF_EXP" },
                        match law {
                            Law::Lumped => "lumped",
                            Law::Redistributed => "R1",
                            Law::Proportional => "C33",
                        },
                        o.dt / h_e,
                        (duration - 2.0 * L) / o.dt,
                        o.velocity / V0,
                        o.energy_ratio,
                        o.balance,
                    );
                }
            }
        }
    }
}
