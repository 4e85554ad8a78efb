//! MMJ on string modes against obstacles: no penetration with e = 0, the long-run energy with
//! e = 1, and the flat-obstacle ideal string against its closed-form solution.

use fem_constraints::{LcpSolver, Lemke, ProjectedGaussSeidel, UnilateralContacts};
use fem_modal::StringModes;
use fem_time::{ModalDamping, ModalMoreauJean};
use fem_time::{NodalStepper as _, Stepper as _};

/// MMJ on `n` modes of the string with contacts at `points`, obstacle heights `heights`.
#[allow(clippy::too_many_arguments)]
fn string_with_obstacle(
    modes: &StringModes,
    damping: &ModalDamping,
    points: &[f64],
    heights: Vec<f64>,
    restitution: f64,
    q0: &[f64],
    dt: f64,
    solver: Box<dyn LcpSolver>,
) -> ModalMoreauJean {
    let n = modes.n_modes();
    let contacts =
        UnilateralContacts::from_dense(n, &modes.point_rows(points), heights, restitution).unwrap();
    ModalMoreauJean::new(
        modes.modal_system(damping).unwrap(),
        dt,
        0.0,
        q0,
        &vec![0.0; n],
    )
    .unwrap()
    .with_contacts(contacts, solver)
    .unwrap()
}

#[test]
fn no_penetration_with_zero_restitution() {
    // Guitar-like string (issue's point-obstacle case, fewer modes), obstacles at 40 points
    // 0.2 mm below rest, a 0.4 mm pluck upwards at 0.3 L (the string swings down onto them), with losses.
    let modes = StringModes::new(1.002, 180.5, 1.17e-3, 1.78e-5, 120).unwrap();
    let points: Vec<f64> = (1..=40).map(|i| 1.002 * i as f64 / 41.0).collect();
    let q0 = modes.triangular_pluck(0.3, 0.4e-3);
    let damping = ModalDamping::Rayleigh {
        mass: 1.0,
        stiffness: 1e-9,
    };
    let solvers: [(Box<dyn LcpSolver>, f64); 2] = [
        (Box::new(Lemke::default()), 1e-15),
        (
            Box::new(ProjectedGaussSeidel {
                tolerance: 1e-10,
                max_iterations: 200_000,
            }),
            1e-12,
        ),
    ];
    for (solver, bound) in solvers {
        let name = solver.name();
        let mut s = string_with_obstacle(
            &modes,
            &damping,
            &points,
            vec![-0.2e-3; 40],
            0.0,
            &q0,
            1.0 / 20_000.0,
            solver,
        );
        let (mut min_gap, mut contact_steps) = (f64::INFINITY, 0);
        for _ in 0..2000 {
            s.step().unwrap();
            let r = s.last_contact();
            min_gap = min_gap.min(r.min_gap);
            contact_steps += usize::from(r.n_active > 0);
        }
        println!(
            "MMJ e = 0 ({name}): min gap {min_gap:e} m over 2000 steps, {contact_steps} with contact"
        );
        assert!(contact_steps > 10);
        assert!(min_gap > -bound, "{name}: {min_gap:e}");
    }
}

#[test]
fn energy_with_elastic_impacts_over_the_long_run() {
    // Point obstacle at mid-length on the rest line, 1.5 mm pluck at the same point, no
    // losses, e = 1, 100 modes at 20 kHz for one second.
    let modes = StringModes::new(1.002, 180.5, 1.17e-3, 1.78e-5, 100).unwrap();
    let q0 = modes.triangular_pluck(0.501, 1.5e-3);
    let mut s = string_with_obstacle(
        &modes,
        &ModalDamping::None,
        &[0.501],
        vec![0.0],
        1.0,
        &q0,
        1.0 / 20_000.0,
        Box::new(Lemke::default()),
    );
    let e0 = s.modal_energy().discrete;
    let (mut max_dev, mut impacts) = (0.0f64, 0);
    for _ in 0..20_000 {
        s.step().unwrap();
        let r = s.last_contact();
        impacts += usize::from(r.n_active > 0 && s.impulses()[0] > 0.0);
        max_dev = max_dev.max((s.modal_energy().discrete - e0).abs() / e0);
    }
    let drift = (s.modal_energy().discrete - e0) / e0;
    println!(
        "MMJ e = 1: {impacts} impulses in 1 s; energy drift {drift:e}, max |E − E0|/E0 {max_dev:e}"
    );
    assert!(impacts > 10);
    // Measured 9.1e-13 (Lemke): the impulse work ½λ(ẏ⁺ + ẏ⁻) vanishes for e = 1.
    assert!(max_dev < 1e-10, "{max_dev:e}");
}

/// The closed form of the flat-obstacle case (L = T = μ = 1, c = 1, unit triangular pluck
/// at x = ½, obstacle at −½, e = 0): free d'Alembert motion until t = ¾, when the plateau
/// (moving at −2) lands on the obstacle everywhere on [¼, ¾] and stops; from then on the free
/// d'Alembert motion of the kinked shape g at rest, which never goes below −½.
fn flat_obstacle_exact(x: f64, t: f64) -> f64 {
    fn odd_periodic(f: &dyn Fn(f64) -> f64, x: f64) -> f64 {
        let y = x.rem_euclid(2.0);
        if y <= 1.0 { f(y) } else { -f(2.0 - y) }
    }
    let pluck = |x: f64| 1.0 - (2.0 * x - 1.0).abs();
    let landed = |x: f64| (-2.0 * x).max(-0.5).max(-2.0 * (1.0 - x));
    if t <= 0.75 {
        0.5 * (odd_periodic(&pluck, x - t) + odd_periodic(&pluck, x + t))
    } else {
        let s = t - 0.75;
        0.5 * (odd_periodic(&landed, x - s) + odd_periodic(&landed, x + s))
    }
}

#[test]
fn flat_obstacle_against_the_closed_form() {
    println!(
        "| fs (Hz) | modes | contact points | max error t<=0.75 | max error 0.75<t<=3 | energy after impact (exact 1) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut errors = Vec::new();
    for (fs, n_modes) in [(200.0, 50), (400.0, 100), (800.0, 200)] {
        let modes = StringModes::new(1.0, 1.0, 1.0, 0.0, n_modes).unwrap();
        let points: Vec<f64> = (1..=n_modes)
            .map(|i| i as f64 / (n_modes + 1) as f64)
            .collect();
        let q0 = modes.triangular_pluck(0.5, 1.0);
        let dt: f64 = 1.0 / fs;
        let mut s = string_with_obstacle(
            &modes,
            &ModalDamping::None,
            &points,
            vec![-0.5; n_modes],
            0.0,
            &q0,
            dt,
            Box::new(Lemke::default()),
        );
        let samples: Vec<f64> = (1..20).map(|i| i as f64 / 20.0).collect();
        let n_steps = (3.0 * fs) as usize;
        let (mut before, mut after) = (0.0f64, 0.0f64);
        for n in 1..=n_steps {
            s.step().unwrap();
            let t = n as f64 * dt;
            for &x in &samples {
                let err = (modes.displacement(s.position(), x) - flat_obstacle_exact(x, t)).abs();
                if t <= 0.75 {
                    before = before.max(err);
                } else {
                    after = after.max(err);
                }
            }
        }
        let energy = s.modal_energy().plain;
        println!("| {fs} | {n_modes} | {n_modes} | {before:.3e} | {after:.3e} | {energy:.4} |");
        errors.push(after);
        assert!(
            before < 0.05 && after < 0.2,
            "fs {fs}: {before:e} {after:e}"
        );
        assert!((energy - 1.0).abs() < 0.1);
    }
    assert!(errors[2] < errors[0], "the error must fall with fs");
}
