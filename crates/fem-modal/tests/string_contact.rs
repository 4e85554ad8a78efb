//! MMJ on string modes against obstacles: free flight equal to the exact modal solution before
//! the first contact at every `ω_max Δt`, no penetration with e = 0, the energy with e = 1 and
//! e = 0, and the flat-obstacle ideal string against its closed-form solution (order in Δt,
//! independence of where the landing falls within a step, convergence to the converged model).

use fem_constraints::{LcpSolver, Lemke, ProjectedGaussSeidel, UnilateralContacts};
use fem_modal::StringModes;
use fem_time::{ModalDamping, ModalMoreauJean};
use fem_time::{NodalStepper as _, Stepper as _};

/// MMJ on the modes of `modes` with contacts at `points`, obstacle heights `heights`, from the
/// physical state `(q0, v0)` at `t0`.
#[allow(clippy::too_many_arguments)]
fn string_with_obstacle(
    modes: &StringModes,
    damping: &ModalDamping,
    points: &[f64],
    heights: Vec<f64>,
    restitution: f64,
    (q0, v0): (&[f64], &[f64]),
    (t0, dt): (f64, f64),
    solver: Box<dyn LcpSolver>,
) -> ModalMoreauJean {
    let n = modes.n_modes();
    let contacts =
        UnilateralContacts::from_dense(n, &modes.point_rows(points), heights, restitution).unwrap();
    ModalMoreauJean::from_physical_state(modes.modal_system(damping).unwrap(), dt, t0, q0, v0)
        .unwrap()
        .with_contacts(contacts, solver)
        .unwrap()
}

/// The guitar-like string.
fn guitar(n_modes: usize) -> StringModes {
    StringModes::new(1.002, 180.5, 1.17e-3, 1.78e-5, n_modes).unwrap()
}

#[test]
fn free_flight_is_exact_before_the_first_contact() {
    // The shipped point-obstacle case (1000 modes, 1.5 mm pluck at 0.501, obstacle under it on
    // the rest line, e = 1) at ω_max Δt = 1e-3, 1 and 1e3 (the shipped fs = 5 kHz is 1.07e3):
    // until the first step with an active contact (at most 8000 steps), the probes equal the
    // exact modal solution u(x, t) = Σ φ_k(x) q_k(0) cos(ω_k t) to 1e-12 of the pluck, the
    // velocities its time derivative to 1e-12 of the plateau speed, and the energy stays
    // constant to the round-off of the steps taken.
    let modes = guitar(1000);
    let n = modes.n_modes();
    let (x0, amplitude) = (0.501, 1.5e-3);
    let q0 = modes.triangular_pluck(x0, amplitude);
    let omega_max = modes.omega[n - 1];
    // The speed of the exact plateau, c a / x0 (the 1.18 m/s).
    let speed = modes.wave_speed() * amplitude / x0;
    let probes = [0.1, 0.25, 0.7];
    let rows = modes.point_rows(&probes);
    println!(
        "| ω_max Δt | steps before the first contact | max |u − u_exact| / a | max |u̇ − u̇_exact| / (c a/x0) | max |E − E0|/E0 |"
    );
    println!("|---|---|---|---|---|");
    for wdt in [1e-3, 1.0, 1e3] {
        let dt = wdt / omega_max;
        let mut s = string_with_obstacle(
            &modes,
            &ModalDamping::None,
            &[x0],
            vec![0.0],
            1.0,
            (&q0, &vec![0.0; n]),
            (0.0, dt),
            Box::new(Lemke::default()),
        );
        let e0 = s.modal_energy().plain;
        let (mut err_u, mut err_v, mut err_e, mut steps) = (0.0f64, 0.0f64, 0.0f64, 0);
        for _ in 0..8000 {
            if {
                s.step().unwrap();
                s.last_contact().n_active
            } > 0
            {
                break;
            }
            steps += 1;
            let t = s.time();
            // The exact sums cost 6000 sines per step: compare at the first 20 steps and every
            // 16th after (the energy at every step).
            err_e = err_e.max((s.modal_energy().plain - e0).abs() / e0);
            if steps > 20 && steps % 16 != 0 {
                continue;
            }
            for row in rows.chunks(n) {
                let (mut u, mut v, mut u_ex, mut v_ex) = (0.0, 0.0, 0.0, 0.0);
                for k in 0..n {
                    let (w, phase) = (modes.omega[k], modes.omega[k] * t);
                    u += row[k] * s.position()[k];
                    v += row[k] * s.velocity_at_step()[k];
                    u_ex += row[k] * q0[k] * phase.cos();
                    v_ex -= row[k] * q0[k] * w * phase.sin();
                }
                err_u = err_u.max((u - u_ex).abs() / amplitude);
                err_v = err_v.max((v - v_ex).abs() / speed);
            }
        }
        println!("| {wdt:e} | {steps} | {err_u:.1e} | {err_v:.1e} | {err_e:.1e} |");
        assert!(steps >= 5, "ω_max Δt = {wdt}: contact after {steps} steps");
        assert!(err_u < 1e-12, "ω_max Δt = {wdt}: displacement {err_u:e}");
        assert!(err_v < 1e-12, "ω_max Δt = {wdt}: velocity {err_v:e}");
        // The flow's coefficients are rounded, so the energy drifts by about ε per step.
        let energy_bound = 2.0 * steps as f64 * f64::EPSILON;
        assert!(err_e < energy_bound, "ω_max Δt = {wdt}: energy {err_e:e}");
    }
}

#[test]
fn no_penetration_and_decaying_energy_with_zero_restitution() {
    // Guitar string (issue's point-obstacle case, fewer modes: ω_max Δt = 3.8), obstacles at 40
    // points 0.2 mm below rest, a 0.4 mm pluck upwards at 0.3 L (the string swings down onto
    // them), with losses. Before issue 15 this run kept "no penetration" while its energy
    // grew by 28 orders of magnitude; the energy must now fall.
    let modes = guitar(120);
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
            (&q0, &vec![0.0; modes.n_modes()]),
            (0.0, 1.0 / 20_000.0),
            solver,
        );
        let e0 = s.modal_energy().plain;
        let (mut min_gap, mut contact_steps) = (f64::INFINITY, 0);
        for _ in 0..2000 {
            s.step().unwrap();
            let r = s.last_contact();
            min_gap = min_gap.min(r.min_gap);
            contact_steps += usize::from(r.n_active > 0);
        }
        let e_end = s.modal_energy().plain / e0;
        println!(
            "MMJ e = 0 ({name}): min gap {min_gap:e} m over 2000 steps, {contact_steps} with contact, E(end)/E0 = {e_end:.4}"
        );
        assert!(contact_steps > 10);
        assert!(min_gap > -bound, "{name}: {min_gap:e}");
        assert!(e_end < 0.5, "{name}: {e_end}");
    }
}

#[test]
fn energy_with_zero_restitution_never_rises() {
    // No losses, e = 0: the catching-up law dissipates (ΔE = −½ λᵀ y^{i−1}/Δt ≤ 0) and free
    // flight conserves, so the physical energy must not rise at any step, including with
    // ω_max Δt = 7.4 (200 modes at 20 kHz), where the seed's sample form blew up.
    let modes = guitar(200);
    let points: Vec<f64> = (1..=40).map(|i| 1.002 * i as f64 / 41.0).collect();
    let q0 = modes.triangular_pluck(0.3, 0.4e-3);
    let mut s = string_with_obstacle(
        &modes,
        &ModalDamping::None,
        &points,
        vec![0.0; 40],
        0.0,
        (&q0, &vec![0.0; modes.n_modes()]),
        (0.0, 1.0 / 20_000.0),
        Box::new(Lemke::default()),
    );
    let e0 = s.modal_energy().plain;
    let (mut previous, mut worst_rise, mut contact_steps) = (e0, 0.0f64, 0);
    for _ in 0..4000 {
        contact_steps += usize::from(
            {
                s.step().unwrap();
                s.last_contact().n_active
            } > 0,
        );
        let e = s.modal_energy().plain;
        worst_rise = worst_rise.max((e - previous) / e0);
        previous = e;
    }
    println!(
        "MMJ e = 0, no losses: {contact_steps} steps with contact, E(end)/E0 = {:.4}, worst rise in a step {worst_rise:.1e} E0",
        previous / e0
    );
    assert!(contact_steps > 1000);
    assert!(worst_rise < 1e-14, "{worst_rise:e}");
    assert!(previous < 0.9 * e0);
}

#[test]
fn energy_with_elastic_impacts_over_the_long_run() {
    // Point obstacle at mid-length on the rest line, 1.5 mm pluck at the same point, no
    // losses, e = 1: 100 modes at 20 kHz for one second (ω_max Δt = 5.2), and the shipped case,
    // 1000 modes at 5 kHz (ω_max Δt = 1.07e3) for 0.2 s.
    for (n_modes, fs, n_steps) in [(100, 20_000.0, 20_000), (1000, 5_000.0, 1000)] {
        let modes = guitar(n_modes);
        let q0 = modes.triangular_pluck(0.501, 1.5e-3);
        let mut s = string_with_obstacle(
            &modes,
            &ModalDamping::None,
            &[0.501],
            vec![0.0],
            1.0,
            (&q0, &vec![0.0; n_modes]),
            (0.0, 1.0 / fs),
            Box::new(Lemke::default()),
        );
        let e0 = s.modal_energy().discrete;
        let (mut max_dev, mut impacts, mut min_gap) = (0.0f64, 0, f64::INFINITY);
        for _ in 0..n_steps {
            s.step().unwrap();
            let r = s.last_contact();
            impacts += usize::from(r.n_active > 0 && s.impulses()[0] > 0.0);
            min_gap = min_gap.min(r.min_gap);
            max_dev = max_dev.max((s.modal_energy().discrete - e0).abs() / e0);
        }
        let drift = (s.modal_energy().discrete - e0) / e0;
        println!(
            "MMJ e = 1, {n_modes} modes at {fs} Hz: {impacts} impulses in {n_steps} steps; energy drift {drift:.1e}, max |E − E0|/E0 {max_dev:.1e}, min gap {min_gap:.1e} m"
        );
        assert!(impacts > 10);
        // The impulse's work ½λ(ẏ^{i+1} + ẏ^i) vanishes for e = 1.
        assert!(max_dev < 1e-12, "{max_dev:e}");
        assert!(min_gap > -1e-15, "{min_gap:e}");
    }
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

/// The flat-obstacle run on `n_modes` modes and as many contact points at `fs`, started from
/// the exact state at `t0`; the displacement at the 19 points `x = j/20` every `every` steps
/// up to t = 3, and the energy after the run.
fn flat_obstacle_run(
    n_modes: usize,
    fs: f64,
    t0: f64,
    every: usize,
) -> (Vec<(f64, Vec<f64>)>, f64) {
    let modes = StringModes::new(1.0, 1.0, 1.0, 0.0, n_modes).unwrap();
    let points: Vec<f64> = (1..=n_modes)
        .map(|i| i as f64 / (n_modes + 1) as f64)
        .collect();
    let pluck = modes.triangular_pluck(0.5, 1.0);
    let q0: Vec<f64> = (0..n_modes)
        .map(|k| pluck[k] * (modes.omega[k] * t0).cos())
        .collect();
    let v0: Vec<f64> = (0..n_modes)
        .map(|k| -pluck[k] * modes.omega[k] * (modes.omega[k] * t0).sin())
        .collect();
    let mut s = string_with_obstacle(
        &modes,
        &ModalDamping::None,
        &points,
        vec![-0.5; n_modes],
        0.0,
        (&q0, &v0),
        (t0, 1.0 / fs),
        Box::new(Lemke::default()),
    );
    let samples: Vec<f64> = (1..20).map(|i| i as f64 / 20.0).collect();
    let mut out = Vec::new();
    let n_steps = ((3.0 - t0) * fs).round() as usize;
    for n in 1..=n_steps {
        s.step().unwrap();
        if n % every == 0 {
            let u = samples
                .iter()
                .map(|&x| modes.displacement(s.position(), x))
                .collect();
            out.push((s.time(), u));
        }
    }
    (out, s.modal_energy().plain)
}

/// Max errors against the closed form before and after the landing at t = ¾.
fn closed_form_errors(run: &[(f64, Vec<f64>)]) -> (f64, f64) {
    let (mut before, mut after) = (0.0f64, 0.0f64);
    for (t, u) in run {
        for (j, u) in u.iter().enumerate() {
            let err = (u - flat_obstacle_exact((j + 1) as f64 / 20.0, *t)).abs();
            if *t <= 0.75 {
                before = before.max(err);
            } else {
                after = after.max(err);
            }
        }
    }
    (before, after)
}

#[test]
fn flat_obstacle_against_the_closed_form() {
    // Modes and contact points in proportion to fs (ω_max Δt = π/4 throughout). The landing
    // at t = ¾ falls on a step (t0 = 0) or halfway between two (t0 = Δt/2): the seed's sample
    // form lost 5–11 % of the energy and converged at first order with a large constant in the
    // first case; here both must agree.
    println!(
        "| fs (Hz) | modes = contact points | t0 | max error t<=0.75 | max error 0.75<t<=3 | energy at t = 3 (exact 1) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut errors = Vec::new();
    for (fs, n_modes) in [(200.0, 50), (400.0, 100), (800.0, 200)] {
        let mut pair = Vec::new();
        for t0 in [0.0, 0.5 / fs] {
            let (run, energy) = flat_obstacle_run(n_modes, fs, t0, 1);
            let (before, after) = closed_form_errors(&run);
            println!("| {fs} | {n_modes} | {t0:.3e} | {before:.3e} | {after:.3e} | {energy:.4} |");
            assert!(
                (energy - 1.0).abs() < 0.02,
                "fs {fs}, t0 {t0}: energy {energy}"
            );
            pair.push((before, after));
        }
        let (aligned, halfway) = (pair[0].1, pair[1].1);
        assert!(
            aligned < 1.25 * halfway && halfway < 1.25 * aligned,
            "fs {fs}: {aligned:e} (landing on a step) vs {halfway:e}"
        );
        errors.push(pair[0]);
    }
    let order = |e: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| (f(&e[0]) / f(&e[2])).log2() / 2.0;
    let (order_before, order_after) = (order(&errors, |e| e.0), order(&errors, |e| e.1));
    println!("observed order (fs 200 → 800): before {order_before:.2}, after {order_after:.2}");
    assert!(
        order_before > 0.85 && order_after > 0.9,
        "{order_before} {order_after}"
    );
}

#[test]
#[ignore = "slow (about 10 s in release): reproduces the convergence table of docs/validation.md"]
fn flat_obstacle_converges_to_the_model() {
    // With the modes fixed (200, the shipped input), the closed form is not the limit as
    // Δt → 0: the model's own truncation error (2.5e-3 after the landing) is. Against the
    // model's converged solution (the same scheme at fs = 51200), the error after the landing
    // falls at first order on average (the one-event timing error of time stepping; erratic
    // between successive halvings, as usual for event-capturing schemes); before the landing
    // only round-off remains.
    let (n_modes, fs_ref) = (200, 51_200.0);
    let (reference, _) = flat_obstacle_run(n_modes, fs_ref, 0.0, 64);
    let (_, model_vs_closed) = closed_form_errors(&reference);
    let mut errors = Vec::new();
    println!(
        "| fs (Hz) | max error t < 0.75 | max error 0.75 < t <= 3 (vs the fs = {fs_ref} run) |"
    );
    println!("|---|---|---|");
    for fs in [800.0, 1600.0, 3200.0, 6400.0] {
        let (run, _) = flat_obstacle_run(n_modes, fs, 0.0, (fs / 800.0) as usize);
        let (mut before, mut after) = (0.0f64, 0.0f64);
        for ((t, u), (t_ref, u_ref)) in run.iter().zip(&reference) {
            assert!((t - t_ref).abs() < 1e-9);
            let err = u
                .iter()
                .zip(u_ref)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            if *t < 0.75 - 1e-9 {
                before = before.max(err);
            } else if *t > 0.75 + 1e-9 {
                after = after.max(err);
            }
        }
        println!("| {fs} | {before:.2e} | {after:.2e} |");
        errors.push((before, after));
    }
    let order = (errors[0].1 / errors[3].1).log2() / 3.0;
    println!(
        "mean observed order (fs 800 → 6400) {order:.2}; the fs = {fs_ref} run is {model_vs_closed:.2e} from the closed form after the landing"
    );
    assert!(errors.iter().all(|e| e.0 < 1e-12), "{errors:?}");
    assert!(order > 0.7, "{order}");
}
