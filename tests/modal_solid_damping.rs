//! The modal solid with `model.solid.damping` (stiffness-proportional `C = η K`, the same
//! physics as DEF_LIM's): each mode's rate is `σ_k = η ω_k² / 2` (damping ratio
//! `ζ_k = η ω_k / 2`), and the exact modal Moreau–Jean scheme steps it exactly.
//!
//! - free decay: every modal coordinate is the closed form
//!   `q̇₀ e^{−ζωt} sin(ω_d t)/ω_d`, `ω_d = ω sqrt(1 − ζ²)`, to round-off;
//! - energy balance: the history's `dissipated` grows each step by the integral
//!   `Σ_k ∫ 2σ_k q̇_k² dt` of the exact motion (Gauss–Legendre, independent of the scheme), and
//!   `total + dissipated` is the initial energy to round-off; with a stop, the step is the
//!   contact kick at `t_i` then the exact damped flow (the flow run backwards from `t_{i+1}`
//!   lands on `q^i`), the dissipation is still that integral from the kicked state, and
//!   `total + dissipated − impact_work` is the initial energy to round-off.

use std::path::Path;

use fem::input::ModelRegistry;
use fem::model::Model;
use fem::model::resources::Budget;
use fem::solid::SolidSection;
use fem::solid::modal::ModalSolidModel;
use fem::time::nonsmooth::free_response;
use fem::time::{NodalStepper, Stepper};

/// η (s): ζ₁ ≈ 0.02 on the first mode (ω₁ ≈ 10 rad/s), ≈ 0.6 on the sixth.
const ETA: f64 = 0.004;
const DT: f64 = 5e-4;

/// The cantilever of inputs/solid_modal_stop.yaml, coarser (10 × 1 × 1 eas hex8), in its 6
/// lowest modes, thrown down at 0.5 m/s, with `damping: ETA`, and optionally the stop 2 mm
/// below its tip.
fn cantilever(stop: bool) -> ModalSolidModel {
    let contact = if stop {
        "contact:\n  obstacles:\n    - group: xmax\n      plane: { point: [1.0, 0.0, -0.002], \
         normal: [0, 0, 1] }\n  restitution: 1.0\n"
    } else {
        ""
    };
    let text = format!(
        "mesh:\n  box: {{ lengths: [1.0, 0.1, 0.1], cells: [10, 1, 1], kind: hex8 }}\nmodel:\n  solid:\n    \
         material: {{ model: svk, young: 1e7, poisson: 0.3, density: 1000 }}\n    element: eas\n    \
         modes: 6\n    damping: {ETA}\n    initial_velocity: {{ uniform: [0, 0, -0.5] }}\nfixed:\n  \
         - group: xmin\n{contact}time: {{ scheme: modal_moreau_jean, dt: {DT}, t_end: 1.0 }}\n"
    );
    let path = Path::new("modal_solid_damping.yaml");
    let input = fem::parse(&text, path).expect("the input parses");
    let section = input
        .model
        .section()
        .downcast_ref::<SolidSection>()
        .expect("a solid");
    let sections = input.sections(path, Budget::unlimited());
    ModalSolidModel::new(section, &sections).expect("the model builds")
}

/// Takes a step as the run loop does.
fn step(model: &mut ModalSolidModel) {
    let report = model.stepper_mut().step().expect("the step");
    model.after_step(&report).expect("after the step");
}

/// `∫₀^h f` by Gauss–Legendre with 8 points on each of `pieces` equal parts (nodes by Newton
/// on P₈).
fn integral(h: f64, pieces: usize, f: impl Fn(f64) -> f64) -> f64 {
    const N: usize = 8;
    let mut rule = [(0.0, 0.0); N];
    for (i, r) in rule.iter_mut().enumerate() {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (N as f64 + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=N {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            dp = N as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        *r = (x, 2.0 / ((1.0 - x * x) * dp * dp));
    }
    let part = h / pieces as f64;
    (0..pieces)
        .map(|j| {
            let a = j as f64 * part;
            rule.iter()
                .map(|&(x, w)| 0.5 * part * w * f(a + 0.5 * part * (x + 1.0)))
                .sum::<f64>()
        })
        .sum()
}

/// `Σ_k ∫₀^Δt 2σ_k m_k q̇_k(t)² dt` along the exact free motion from `(q, u)`.
fn dissipation_over_a_step(model: &ModalSolidModel, q: &[f64], u: &[f64]) -> f64 {
    let system = model.modal_stepper().system();
    (0..q.len())
        .map(|k| {
            let (w, s, m) = (system.omega[k], system.sigma[k], system.mass[k]);
            let pieces = (w * DT / 0.5).ceil().max(1.0) as usize;
            2.0 * s
                * m
                * integral(DT, pieces, |t| {
                    let v = free_response(w, s, q[k], u[k], t).1;
                    v * v
                })
        })
        .sum()
}

#[test]
fn the_modal_rates_are_eta_omega_squared_over_two() {
    let model = cantilever(false);
    let system = model.modal_stepper().system();
    for (w, s) in system.omega.iter().zip(&system.sigma) {
        assert_eq!(*s, 0.5 * ETA * w * w);
    }
    let zeta_1 = system.sigma[0] / system.omega[0];
    assert!((0.01..0.05).contains(&zeta_1), "zeta_1 = {zeta_1}");
    assert!(
        model.describe().iter().any(|l| l.contains("damping ratio")),
        "{:?}",
        model.describe()
    );
}

#[test]
fn a_damped_mode_decays_as_exp_minus_zeta_omega_t() {
    let mut model = cantilever(false);
    let v0 = model.modal_stepper().velocity_at_step().into_owned();
    let system = model.modal_stepper().system().clone();
    let n = 2000;
    for _ in 0..n {
        step(&mut model);
    }
    let t = model.modal_stepper().time();
    assert!((t - n as f64 * DT).abs() < 1e-12);
    let q = model.modal_stepper().position();
    let u = model.modal_stepper().velocity_at_step();
    let mut worst = 0.0f64;
    for k in 0..q.len() {
        let w = system.omega[k];
        let zeta = 0.5 * ETA * w;
        assert!(zeta < 1.0, "mode {k} is under-damped here");
        let wd = w * (1.0 - zeta * zeta).sqrt();
        let envelope = (-zeta * w * t).exp();
        let q_exact = v0[k] * envelope * (wd * t).sin() / wd;
        let u_exact = v0[k] * envelope * ((wd * t).cos() - zeta * w * (wd * t).sin() / wd);
        let amplitude = v0[k].abs() / wd;
        worst = worst.max((q[k] - q_exact).abs() / amplitude);
        println!(
            "mode {k}: omega {w:.4} zeta {zeta:.4} e^(-zeta omega t) {envelope:.6e} q {:.6e} closed form {q_exact:.6e}",
            q[k]
        );
        assert!(
            (q[k] - q_exact).abs() <= 1e-10 * amplitude,
            "mode {k}: q = {}, closed form {q_exact} (amplitude {amplitude})",
            q[k]
        );
        assert!(
            (u[k] - u_exact).abs() <= 1e-10 * v0[k].abs(),
            "mode {k}: u = {}, closed form {u_exact}",
            u[k]
        );
    }
    println!("largest |q - closed form| / amplitude over the modes at t = {t}: {worst:.2e}");
    // The first mode lost what exp(−2ζωt) says, through 1.6 of its periods.
    let e1 = 0.5 * (u[0] * u[0] + system.omega[0].powi(2) * q[0] * q[0]);
    assert!(e1 < 0.5 * v0[0] * v0[0]);
}

/// Runs `n` steps, checking each step's `dissipated` increment against the integral along
/// the exact motion from the kicked state; returns the largest relative misfit of the balance.
fn balance(model: &mut ModalSolidModel, n: usize) -> (f64, usize) {
    let e0 = model.energy().unwrap().total;
    let mut worst = 0.0f64;
    let mut worst_step = 0.0f64;
    let mut worst_absolute = 0.0f64;
    let mut kicks = 0;
    for _ in 0..n {
        let (d_before, _) = model.losses();
        let q_before = model.modal_stepper().position().to_vec();
        step(model);
        let system = model.modal_stepper().system().clone();
        let q = model.modal_stepper().position().to_vec();
        let u = model.modal_stepper().velocity_at_step().into_owned();
        // The state the flow started from: the exact flow run back from t_{i+1}.
        let (qs, us): (Vec<f64>, Vec<f64>) = (0..q.len())
            .map(|k| free_response(system.omega[k], system.sigma[k], q[k], u[k], -DT))
            .unzip();
        for k in 0..q.len() {
            let scale = q_before[k].abs().max(q[k].abs()).max(1e-12);
            assert!(
                (qs[k] - q_before[k]).abs() <= 1e-9 * scale,
                "mode {k}: the step is not a kick at t_i then the flow ({} vs {})",
                qs[k],
                q_before[k]
            );
        }
        if model.modal_stepper().impulses().iter().any(|&l| l != 0.0) {
            kicks += 1;
        }
        let (d_after, work) = model.losses();
        let expected = dissipation_over_a_step(model, &q_before, &us);
        worst_absolute = worst_absolute.max(((d_after - d_before) - expected).abs() / e0);
        if expected > 1e-12 * e0 {
            worst_step = worst_step.max(((d_after - d_before) - expected).abs() / expected);
        }
        assert!(
            ((d_after - d_before) - expected).abs() <= 1e-8 * expected + 1e-15 * e0,
            "step {}: dissipated {} , the integral {expected}",
            model.modal_stepper().step_index(),
            d_after - d_before
        );
        let e = model.energy().unwrap();
        assert_eq!(e.dissipated, d_after);
        worst = worst.max((e.total + d_after - work - e0).abs() / e0);
    }
    let (d, work) = model.losses();
    println!(
        "{n} steps, {kicks} with an impulse: E0 {e0:.6e} J, dissipated {d:.6e} J, impact work \
         {work:.3e} J; a step's dissipation against the integral: {worst_step:.2e} relative to \
         it, {worst_absolute:.2e} relative to E0; balance misfit {worst:.2e} (relative to E0)"
    );
    (worst, kicks)
}

#[test]
fn the_free_decay_closes_the_energy_balance_to_round_off() {
    let mut model = cantilever(false);
    assert_eq!(model.history_columns(), ["dissipated"]);
    let (worst, kicks) = balance(&mut model, 2000);
    assert_eq!(kicks, 0);
    assert!(worst < 1e-13, "balance misfit {worst:e}");
    let (d, work) = model.losses();
    let e0 = d + model.energy().unwrap().total;
    assert!(d > 0.1 * e0, "the damping took {d} of {e0}");
    assert_eq!(work, 0.0);
}

#[test]
fn with_a_stop_the_impacts_work_and_the_damping_close_the_balance() {
    let mut model = cantilever(true);
    assert_eq!(
        &model.history_columns()[..3],
        ["dissipated", "impact_work", "n_active"]
    );
    let (worst, kicks) = balance(&mut model, 600);
    assert!(kicks > 0, "the tip never met the stop");
    assert!(worst < 1e-13, "balance misfit {worst:e}");
    let mut row = Vec::new();
    model.history_values(&Default::default(), &mut row);
    let (d, work) = model.losses();
    assert_eq!(&row[..2], &[d, work]);
}
