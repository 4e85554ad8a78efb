//! Solids that meet each other and rigid shapes on their faces (issue 24 part B;
//! docs/validation.md "Bodies that meet (II)"): two equal bars head on (1D theory: they
//! exchange their velocities, the contact force a plateau `ρ c v₀ A` during `2L/c`), a rigid
//! sphere resting on a hex8 bar's top face between its corner nodes, a cube dropped on a
//! plane and a solid hitting a rigid body.

use fem_assembly::{DofMap, SolidOperator};
use fem_contact::detect::{MaterialTable, Obstacle, Shape};
use fem_contact::{NsgsSettings, SurfaceMaterial};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::CellKind;
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_rigid::{RigidBodies, RigidBody, RigidStepper, Scheme};
use fem_scene::rigid::{RigidGroup, body_of_shape};
use fem_scene::solid::{SolidBody, SolidGroup, SolidStepper, boundary_nodes};
use fem_scene::solid_faces::boundary_faces;
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

/// A hex8 box solid of `lengths` and `cells`, its reference placed at `offset`, moving at
/// `velocity`, stepped by DEF_LIM (`implicit`) or DEF_EXP with `dt`, gravity `gravity`; and
/// its lumped masses.
fn box_solid(
    lengths: [f64; 3],
    cells: [usize; 3],
    offset: [f64; 3],
    velocity: [f64; 3],
    dt: f64,
    gravity: Option<[f64; 3]>,
    implicit: bool,
) -> (SolidBody, Vec<f64>) {
    box_solid_of(
        lengths, cells, offset, velocity, dt, gravity, 0, E, RHO, true, implicit,
    )
}

/// [`box_solid`] of Young's modulus `young` and density `density`, with its faces or not.
#[allow(clippy::too_many_arguments)]
fn box_solid_of(
    lengths: [f64; 3],
    cells: [usize; 3],
    offset: [f64; 3],
    velocity: [f64; 3],
    dt: f64,
    gravity: Option<[f64; 3]>,
    material: u32,
    young: f64,
    density: f64,
    faces: bool,
    implicit: bool,
) -> (SolidBody, Vec<f64>) {
    let mesh = box_mesh(lengths, cells, BoxCells::Hex8).unwrap();
    let conn = mesh.blocks[0].connectivity.clone();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material_law = Material::new(MaterialModel::SaintVenantKirchhoff, young, 0.0).unwrap();
    let operator = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &conn,
        material_law,
        density,
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
    let stepper = if implicit {
        SolidStepper::Lim(DefLim::new(system, 0.0, StepSettings::new(dt), &x0, &v0).unwrap())
    } else {
        SolidStepper::Exp(
            DefExp::new(
                system,
                StepSettings::new(dt),
                &x0,
                &v0,
                CriticalStepCheck::every(0),
            )
            .unwrap(),
        )
    };
    let points: Vec<[f64; 3]> = mesh
        .points
        .iter()
        .map(|p| std::array::from_fn(|k| p[k] + offset[k]))
        .collect();
    let nodes = boundary_nodes(CellKind::Hex8, &conn).unwrap();
    let faces = if faces {
        boundary_faces(CellKind::Hex8, &conn).unwrap()
    } else {
        Vec::new()
    };
    let body = SolidBody::new(stepper, points, nodes, material, output)
        .unwrap()
        .with_faces(&faces)
        .unwrap()
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
    two_bars(false, 2e-3);
}

#[test]
fn two_equal_bars_head_on_def_lim() {
    // DEF_LIM is the midpoint rule: the balance is kept to the solve's tolerance.
    two_bars(true, 1e-5);
}

/// Two equal bars head on, DEF_LIM (`implicit`) or DEF_EXP, the balance asserted to
/// `balance_off` of the start's energy.
fn two_bars(implicit: bool, balance_off: f64) {
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
        implicit,
    );
    let (upper, m1) = box_solid(
        [A_SIDE, A_SIDE, L],
        [1, 1, n],
        [0.0, 0.0, g0],
        [0.0, 0.0, -V0],
        dt,
        None,
        implicit,
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
        "two bars ({}): dt {dt:.4e}, contact {duration:.5} (2L/c = {theory}, {:.2} steps off), lower leaves at {:.5e}, upper at {:.5e} (v0 = {V0:e}), mean force {mean_force:.5e} (rho c v0 A = {plateau:.5e}, ratio {:.4}), energy kept {:.5}, balance {drift:.3e}, deepest overlap {overlap:.3e}",
        if implicit { "DEF_LIM" } else { "DEF_EXP" },
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
    assert!(drift.abs() < balance_off, "{drift}");
    assert!(overlap < 1e-9 * V0, "{overlap}");
}

const G: f64 = 9.81;
/// A stiff, heavy solid (SI): c = 1000 m/s.
const YOUNG: f64 = 1e9;
const DENSITY: f64 = 1000.0;

/// A rigid sphere of radius `radius` and density `density` at `position` in a RIG_POS group
/// stepped by `dt`.
fn sphere_group(radius: f64, density: f64, position: [f64; 3], dt: f64) -> RigidGroup {
    let shape = Shape::sphere(radius).unwrap();
    let mut set = RigidBodies::new([0.0, 0.0, -G]).unwrap();
    let mut body: RigidBody = body_of_shape(&shape, density).unwrap();
    body.position = position;
    set.push(body).unwrap();
    let stepper = RigidStepper::new(set, Scheme::RigPos, dt, 0.0).unwrap();
    RigidGroup::new(stepper, vec![shape], vec![0]).unwrap()
}

struct SphereOnBar {
    /// The sphere's centre height at the end over the bar's top (reference).
    centre: f64,
    /// Its vertical velocity at the end.
    velocity: f64,
    /// The energy balance's drift over `m g R`.
    drift: f64,
    /// The deepest any bar node went below the plane.
    depth: f64,
    /// The largest of the steps' solver tolerances in metres, `h τ ‖q‖`.
    tolerance: f64,
}

/// A hex8 bar 0.1 × 0.1 × 0.2 (one cell across) standing on the plane z = 0, a rigid sphere
/// of radius 0.04 dropped from 1 mm above the middle of its top face, between its four
/// corner nodes (0.071 from each); gravity; 0.05 s.
fn sphere_on_bar(faces: bool) -> SphereOnBar {
    let (lx, lz, radius) = (0.1, 0.2, 0.04);
    let dt = 2e-5;
    let (bar, _) = box_solid_of(
        [lx, lx, lz],
        [1, 1, 4],
        [0.0, 0.0, 0.0],
        [0.0; 3],
        dt,
        Some([0.0, 0.0, -G]),
        0,
        YOUNG,
        DENSITY,
        faces,
        false,
    );
    let drop = 1e-3;
    let sphere = sphere_group(
        radius,
        DENSITY,
        [0.5 * lx, 0.5 * lx, lz + radius + drop],
        dt,
    );
    let mass = DENSITY * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    let mut scene = SceneStepper::new(
        vec![
            Box::new(sphere) as Box<dyn BodyGroup>,
            Box::new(SolidGroup::new(vec![bar])),
        ],
        vec![Obstacle::Plane {
            point: Vector3::zeros(),
            normal: Vector3::z(),
        }],
        materials(1),
        &[],
        settings(),
    )
    .unwrap();
    let e0 = scene.scene_energy();
    let mut depth: f64 = 0.0;
    let mut tolerance: f64 = 0.0;
    for _ in 0..2500 {
        scene.step().unwrap();
        tolerance = tolerance.max(solver_tolerance_in_metres(&scene));
        let g = scene.groups()[1]
            .as_any()
            .downcast_ref::<SolidGroup>()
            .unwrap();
        for p in g.bodies()[0].placed_nodes() {
            depth = depth.max(-p.z);
        }
    }
    let e1 = scene.scene_energy();
    let rigid = scene.groups()[0]
        .as_any()
        .downcast_ref::<RigidGroup>()
        .unwrap();
    let body = &rigid.stepper().bodies();
    SphereOnBar {
        centre: body.positions()[0][2] - lz,
        velocity: body.velocities()[0][2],
        drift: (balance(&e1) - balance(&e0)) / (mass * G * radius),
        depth,
        tolerance,
    }
}

#[test]
fn a_sphere_dropped_on_a_bars_top_face_rests_on_it() {
    let on = sphere_on_bar(true);
    let off = sphere_on_bar(false);
    println!(
        "sphere on a bar's face: centre {:.6e} above the top (R = 0.04), velocity {:.3e}, balance drift {:.3e} (of m g R), deepest bar node {:.3e}; without faces: centre {:.4e}",
        on.centre, on.velocity, on.drift, on.depth, off.centre
    );
    // Without the faces the sphere passes between the corner nodes (by more than 1 cm
    // within the run).
    assert!(off.centre < 0.04 - 0.01, "{}", off.centre);
    // With them it rests on the face: its centre a radius above it, to the face's sag under
    // its weight.
    assert!((on.centre - 0.04).abs() < 1e-5, "{}", on.centre);
    assert!(on.velocity.abs() < 1e-3, "{}", on.velocity);
    assert!(on.drift.abs() < 1e-3, "{}", on.drift);
    // The bar's nodes on the plane: no deeper than the solver's tolerance in metres.
    println!(
        "  deepest bar node {:.3e} m, solver tolerance h τ ‖q‖ at most {:.3e} m",
        on.depth, on.tolerance
    );
    assert!(on.depth <= on.tolerance, "{} {}", on.depth, on.tolerance);
}

struct Drop {
    /// The energy balance's drift over the potential energy of the drop, `m g d`.
    drift: f64,
    /// The deepest any node went below the plane (or into the rigid box's top).
    depth: f64,
    /// The cube's largest node speed at the end over its impact speed.
    rest: f64,
    /// Energy dissipated by the contacts over `m g d`.
    dissipated: f64,
    /// The largest of the steps' solver tolerances in metres, `h τ ‖q‖`.
    tolerance: f64,
    /// The largest `|drift|` over the run (rows of every step).
    largest_drift: f64,
    /// The drift less the leap-frog's modified-energy term `(h²/8) uᵀ K u` (end of the
    /// run), over `m g d`: what DEF_EXP's own energy does not explain.
    corrected: f64,
    /// The largest `|corrected|` over the run.
    largest_corrected: f64,
}

/// `uᵀ K(x) u` of the cube's twin system by a central difference of the internal force.
fn velocity_stiffness(system: &SolidSystem, x: &[f64], u: &[f64]) -> f64 {
    use fem_time::SecondOrderSystem;
    let norm = u.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm == 0.0 {
        return 0.0;
    }
    let eps = 1e-7 / norm;
    let plus: Vec<f64> = x.iter().zip(u).map(|(x, u)| x + eps * u).collect();
    let minus: Vec<f64> = x.iter().zip(u).map(|(x, u)| x - eps * u).collect();
    let (mut fp, mut fm) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    system.internal_force(&plus, &mut fp).unwrap();
    system.internal_force(&minus, &mut fm).unwrap();
    u.iter()
        .zip(fp.iter().zip(&fm))
        .map(|(u, (p, m))| u * (p - m) / (2.0 * eps))
        .sum()
}

/// The contact solver's tolerance in metres for the last step: a converged solve leaves a
/// contact's normal velocity at most `τ ‖q‖` short of the law, so its next mid-step gap at
/// most `h τ ‖q‖` below zero (docs/validation.md, "No node below a plane").
fn solver_tolerance_in_metres(s: &SceneStepper) -> f64 {
    s.clock().dt() * s.settings().solver.tolerance * s.last_solve().q_norm
}

/// A hex8 cube 0.1 (2 × 2 × 2 cells, E = 1e7, ρ = 1000, ν = 0) dropped from `drop` above the
/// plane z = 0 (or above a rigid box 0.3 × 0.3 × 0.05 resting on it), e = 0; 0.1 s.
/// `rule_r`: the cube's contacts take rule (R) instead of the mid-step law.
fn dropped_cube(on_box: bool, dt: f64, rule_r: bool) -> Drop {
    let (side, drop) = (0.1, 5e-3);
    let base = if on_box { 0.05 } else { 0.0 };
    let (cube, _) = box_solid_of(
        [side; 3],
        [2, 2, 2],
        [0.0, 0.0, base + drop],
        [0.0; 3],
        dt,
        Some([0.0, 0.0, -G]),
        0,
        1e7,
        DENSITY,
        true,
        false,
    );
    let cube = if rule_r { cube.with_rule_r() } else { cube };
    let mut groups: Vec<Box<dyn BodyGroup>> = Vec::new();
    if on_box {
        let shape = Shape::cuboid([0.15, 0.15, 0.025]).unwrap();
        let mut set = RigidBodies::new([0.0, 0.0, -G]).unwrap();
        let mut body: RigidBody = body_of_shape(&shape, DENSITY).unwrap();
        body.position = [0.05, 0.05, 0.025];
        set.push(body).unwrap();
        let stepper = RigidStepper::new(set, Scheme::RigPos, dt, 0.0).unwrap();
        groups.push(Box::new(
            RigidGroup::new(stepper, vec![shape], vec![0]).unwrap(),
        ));
    }
    groups.push(Box::new(SolidGroup::new(vec![cube])));
    let solid_group = groups.len() - 1;
    let mut scene = SceneStepper::new(
        groups,
        vec![Obstacle::Plane {
            point: Vector3::zeros(),
            normal: Vector3::z(),
        }],
        materials(1),
        &[],
        settings(),
    )
    .unwrap();
    let e0 = scene.scene_energy();
    let mass = DENSITY * side.powi(3);
    let reference = mass * G * drop;
    // The cube's twin system, for the modified energy's `uᵀ K u`.
    let twin = {
        let mesh = box_mesh([side; 3], [2, 2, 2], BoxCells::Hex8).unwrap();
        let dofmap = DofMap::new(mesh.n_nodes(), 3);
        let law = Material::new(MaterialModel::SaintVenantKirchhoff, 1e7, 0.0).unwrap();
        let operator = SolidOperator::new(
            SolidKind::Hex8,
            &mesh.points,
            &mesh.blocks[0].connectivity,
            law,
            DENSITY,
            Lumping::RowSum,
            &dofmap,
        )
        .unwrap();
        SolidSystem::new(operator, SolidMass::Lumped).unwrap()
    };
    let mut depth: f64 = 0.0;
    let mut tolerance: f64 = 0.0;
    let (mut largest_drift, mut largest_corrected, mut corrected): (f64, f64, f64) =
        (0.0, 0.0, 0.0);
    for _ in 0..(0.1 / dt).round() as usize {
        scene.step().unwrap();
        tolerance = tolerance.max(solver_tolerance_in_metres(&scene));
        {
            let g = scene.groups()[solid_group]
                .as_any()
                .downcast_ref::<SolidGroup>()
                .unwrap();
            let b = &g.bodies()[0];
            let drift = (balance(&scene.scene_energy()) - balance(&e0)) / reference;
            let shadow = dt * dt / 8.0 * velocity_stiffness(&twin, b.position(), b.velocity());
            corrected = drift - shadow / reference;
            largest_drift = largest_drift.max(drift.abs());
            largest_corrected = largest_corrected.max(corrected.abs());
        }
        let g = scene.groups()[solid_group]
            .as_any()
            .downcast_ref::<SolidGroup>()
            .unwrap();
        let floor = if on_box {
            let rigid = scene.groups()[0]
                .as_any()
                .downcast_ref::<RigidGroup>()
                .unwrap();
            rigid.stepper().bodies().positions()[0][2] + 0.025
        } else {
            0.0
        };
        for p in g.bodies()[0].placed_nodes() {
            depth = depth.max(floor - p.z);
        }
    }
    let e1 = scene.scene_energy();
    let g = scene.groups()[solid_group]
        .as_any()
        .downcast_ref::<SolidGroup>()
        .unwrap();
    let speed = g.bodies()[0]
        .velocity()
        .iter()
        .fold(0.0_f64, |a, v| a.max(v.abs()));
    Drop {
        drift: (balance(&e1) - balance(&e0)) / reference,
        depth,
        rest: speed / (2.0 * G * drop).sqrt(),
        dissipated: e1.dissipated / reference,
        tolerance,
        largest_drift,
        corrected,
        largest_corrected,
    }
}

#[test]
fn a_cube_dropped_on_a_plane_comes_to_rest_with_its_energy_balance_closed() {
    // The balance's drift is DEF_EXP's own energy error (docs/theory/contact.md, C25): the leap-frog (drift–kick–drift)
    // keeps `T + V − W − (h²/8) uᵀKu` for a linear body (docs/validation.md, "The cube's
    // balance"), so the drift is `(h²/8) uᵀKu` of the cube's vibration — second order in h,
    // oscillating with the vibration's phase. Measured (largest over the run, of m g d):
    // 7.7e-3, 2.1e-3, 5.3e-4, 1.3e-4 at h = 1e-4, 5e-5, 2.5e-5, 1.25e-5.
    let coarse = dropped_cube(false, 5e-5, false);
    let fine = dropped_cube(false, 2.5e-5, false);
    for (h, d) in [(5e-5, &coarse), (2.5e-5, &fine)] {
        println!(
            "cube on a plane, h = {h:e}: balance drift {:.3e} (largest over the run {:.3e}) of m g d; less (h²/8) uᵀKu {:.3e} (largest {:.3e}); dissipated {:.4} of m g d; deepest node {:.3e} m (solver tolerance h τ ‖q‖ at most {:.3e} m); largest node speed at the end {:.3e} of the impact's",
            d.drift,
            d.largest_drift,
            d.corrected,
            d.largest_corrected,
            d.dissipated,
            d.depth,
            d.tolerance,
            d.rest
        );
        // The drift is the modified energy's term: what it leaves is below 2 % of it.
        assert!(
            d.largest_corrected < 0.02 * d.largest_drift,
            "h = {h}: {} {}",
            d.largest_corrected,
            d.largest_drift
        );
        assert!(d.largest_drift < 3e-3, "h = {h}: {}", d.largest_drift);
        // No node below the plane by more than the solver's tolerance in metres.
        assert!(
            d.depth <= d.tolerance,
            "h = {h}: {} {}",
            d.depth,
            d.tolerance
        );
        // e = 0: the impact takes most of the drop's energy; the cube keeps some as
        // vibration.
        assert!(
            d.dissipated > 0.5 && d.dissipated <= 1.0 + 1e-3,
            "h = {h}: {}",
            d.dissipated
        );
    }
    // Second order: the largest drift shrinks by 4 when h is halved (measured 4.0).
    let ratio = coarse.largest_drift / fine.largest_drift;
    assert!(ratio > 3.0 && ratio < 5.0, "{ratio}");
    // The dissipated share converges with the mid-step law (0.5957, 0.5885, 0.5887 at
    // h = 5e-5, 2.5e-5, 1.25e-5; rule (R): 0.626, 0.548, 0.575).
    assert!(
        (coarse.dissipated - fine.dissipated).abs() < 0.02,
        "{} {}",
        coarse.dissipated,
        fine.dissipated
    );
}

#[test]
#[ignore]
fn cube_drift_probe() {
    // cargo test -p fem-scene --test solid_pairs -- --ignored --nocapture cube_drift_probe
    for (rule_r, dt) in [false, true]
        .into_iter()
        .flat_map(|r| [1e-4, 5e-5, 2.5e-5, 1.25e-5].map(|dt| (r, dt)))
    {
        let d = dropped_cube(false, dt, rule_r);
        println!(
            "rule (R) {rule_r}, h = {dt:.3e}: drift {:+.3e} (largest {:.3e}), corrected by (h²/8) uᵀKu {:+.3e} (largest {:.3e}), dissipated {:.4}, deepest {:.2e}, rest {:.3e}",
            d.drift,
            d.largest_drift,
            d.corrected,
            d.largest_corrected,
            d.dissipated,
            d.depth,
            d.rest
        );
    }
}

#[test]
fn a_cube_dropped_on_a_rigid_box_keeps_its_energy_balance() {
    let d = dropped_cube(true, 5e-5, false);
    println!(
        "cube on a rigid box, h = 5e-5: balance drift {:.3e} (largest {:.3e}) of m g d, less (h²/8) uᵀKu {:.3e} (largest {:.3e}), dissipated {:.4} (of m g d), largest node speed at the end {:.3e} of the impact's",
        d.drift, d.largest_drift, d.corrected, d.largest_corrected, d.dissipated, d.rest
    );
    assert!(d.largest_drift < 3e-3, "{}", d.largest_drift);
    assert!(
        d.largest_corrected < 0.02 * d.largest_drift,
        "{} {}",
        d.largest_corrected,
        d.largest_drift
    );
    assert!(d.dissipated > 0.3, "{}", d.dissipated);
    println!(
        "  deepest node into the box {:.3e} m, solver tolerance h τ ‖q‖ at most {:.3e} m",
        d.depth, d.tolerance
    );
    assert!(d.depth <= d.tolerance, "{} {}", d.depth, d.tolerance);
}
