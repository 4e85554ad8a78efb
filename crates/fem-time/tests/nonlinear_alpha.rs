//! The nonlinear alpha scheme (31): energy conservation with the discrete gradient (30), order 2.

mod common;

use fem_time::{DiagonalPotential, NonlinearAlphaScheme, Stepper, WithPotential};
use fem_time::{LinearSystem, Mass, NewtonSettings};
use fem_time::{NodalStepper as _, StepSettings};

/// A P1 string on [0, 1], `n` cells, ρ = τ = 1, lumped mass.
fn string(n: usize) -> (LinearSystem, Vec<f64>) {
    let s = common::uniform_string(n, 1.0, 1.0);
    (
        LinearSystem::new(Mass::Lumped(s.lumped_mass), s.stiffness),
        s.x,
    )
}

/// `Φ(s) = s⁴/4 · 50`: a hardening cubic spring on every node (Duffing).
fn quartic(s: f64) -> [f64; 3] {
    [12.5 * s.powi(4), 50.0 * s.powi(3), 150.0 * s * s]
}

fn tight() -> NewtonSettings {
    NewtonSettings {
        max_iterations: 30,
        relative_tolerance: 1e-12,
        absolute_tolerance: 0.0,
    }
}

#[test]
fn discrete_energy_with_the_nonlinear_potential_is_conserved() {
    let (system, x) = string(40);
    let n = x.len();
    let u0: Vec<f64> = x
        .iter()
        .map(|&x| 0.8 * (std::f64::consts::PI * x).sin())
        .collect();
    let v0: Vec<f64> = x.iter().map(|&x| x * (1.0 - x)).collect();
    let potential = DiagonalPotential::new(n, quartic);
    let mut scheme = NonlinearAlphaScheme::energy_conserving(
        WithPotential::new(system, potential),
        StepSettings::new(0.01).with_newton(tight()),
        &u0,
        &v0,
    )
    .unwrap();
    let e0 = scheme.energy().unwrap().total;
    let mut worst = 0.0f64;
    let mut iterations = 0;
    for _ in 0..500 {
        iterations += scheme.step().unwrap().iterations;
        worst = worst.max((scheme.energy().unwrap().total - e0).abs() / e0);
    }
    assert!(scheme.energy().unwrap().potential > 0.0);
    assert!(worst < 1e-10, "relative energy drift {worst:e}");
    assert!(iterations >= 500, "the step is nonlinear: Newton iterates");
}

#[test]
fn observed_order_is_two_on_the_unconstrained_nonlinear_string() {
    let run = |dt: f64| -> Vec<f64> {
        let (system, x) = string(20);
        let n = x.len();
        let u0: Vec<f64> = x
            .iter()
            .map(|&x| 0.5 * (std::f64::consts::PI * x).sin())
            .collect();
        let potential = DiagonalPotential::new(n, quartic);
        let mut s = NonlinearAlphaScheme::energy_conserving(
            WithPotential::new(system, potential),
            StepSettings::new(dt).with_newton(tight()),
            &u0,
            &vec![0.0; n],
        )
        .unwrap();
        let steps = (0.5 / dt).round() as usize;
        for _ in 0..steps {
            s.step().unwrap();
        }
        s.position().to_vec()
    };
    let dts = [0.02, 0.01, 0.005, 0.0025];
    let reference = run(0.0025 / 8.0);
    let errors: Vec<f64> = dts
        .iter()
        .map(|&dt| {
            run(dt)
                .iter()
                .zip(&reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        })
        .collect();
    for w in errors.windows(2) {
        let order = (w[0] / w[1]).log2();
        assert!((1.8..2.3).contains(&order), "orders from {errors:?}");
    }
}
