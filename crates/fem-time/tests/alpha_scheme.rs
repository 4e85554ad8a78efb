//! Verification of the alpha scheme (16) on the P1 string: energy (19), order 2, bound (23).

mod common;

use fem_time::NodalStepper as _;
use fem_time::{AlphaScheme, LinearSystem, Mass, StepError, StepSettings, Stepper};
use std::f64::consts::PI;

/// A string on [0, 1] with both ends fixed, `n` cells, ρ = τ = 1.
fn string(n: usize, lumped: bool) -> (LinearSystem, Vec<f64>) {
    let s = common::uniform_string(n, 1.0, 1.0);
    let mass = if lumped {
        Mass::Lumped(s.lumped_mass)
    } else {
        Mass::Consistent(s.mass)
    };
    (LinearSystem::new(mass, s.stiffness), s.x)
}

#[test]
fn discrete_energy_is_constant_over_ten_thousand_steps() {
    for lumped in [true, false] {
        let (system, x) = string(100, lumped);
        // Plucked: triangle with apex at 0.3.
        let u0: Vec<f64> = x
            .iter()
            .map(|&s| if s < 0.3 { s / 0.3 } else { (1.0 - s) / 0.7 })
            .collect();
        let v0 = vec![0.0; x.len()];
        let mut scheme =
            AlphaScheme::energy_conserving(system, StepSettings::new(0.01), &u0, &v0).unwrap();
        let e0 = scheme.energy().unwrap().total;
        let mut worst: f64 = 0.0;
        for _ in 0..10_000 {
            scheme.step().unwrap();
            worst = worst.max((scheme.energy().unwrap().total - e0).abs() / e0);
        }
        eprintln!("lumped={lumped}: max relative energy drift over 10^4 steps {worst:e}");
        assert!(
            worst < 1e-12,
            "lumped={lumped}: relative energy drift {worst:e}"
        );
        // The energy is that of the pluck, ½ τ ∫ u'² = ½ (1/0.3 + 1/0.7) at t = 0, up to the
        // difference between E^{-1/2} (which sees the start (64)) and E(0): O(dt²) for smooth
        // data, but of order (dt/h)² times the kink's curvature for a pluck, here ~1 %.
        let exact = 0.5 * (1.0 / 0.3 + 1.0 / 0.7);
        assert!((e0 - exact).abs() / exact < 0.02, "{e0} vs {exact}");
        assert_eq!(scheme.factorization_count(), 1);
    }
}

/// Max nodal error over all steps in [0, 1] against u = sin(πx) cos(πt), dt = ratio · h.
///
/// The maximum over time matters: at t = 1 alone, cos(πt) is stationary, so the error there
/// is quadratic in the phase error and shows order 4, not the scheme's order 2.
fn standing_wave_error(n: usize, dt_over_h: f64, alpha: f64, lumped: bool) -> f64 {
    let (system, x) = string(n, lumped);
    let u0: Vec<f64> = x.iter().map(|&s| (PI * s).sin()).collect();
    let v0 = vec![0.0; x.len()];
    let dt = dt_over_h / n as f64;
    let steps = (1.0 / dt).round() as usize;
    let mut scheme = AlphaScheme::new(system, alpha, StepSettings::new(dt), &u0, &v0).unwrap();
    let mut worst: f64 = 0.0;
    for _ in 0..steps {
        scheme.step().unwrap();
        let t = scheme.time();
        let error = scheme
            .position()
            .iter()
            .zip(&x)
            .map(|(u, &s)| (u - (PI * s).sin() * (PI * t).cos()).abs())
            .fold(0.0, f64::max);
        worst = worst.max(error);
    }
    assert!((scheme.time() - 1.0).abs() < 1e-12);
    worst
}

fn observed_orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}

#[test]
fn second_order_in_h_and_dt_together() {
    for (alpha, lumped, ratio) in [
        (0.25, true, 0.5),
        (0.25, false, 0.5),
        (0.0, false, 0.25),
        (0.5, true, 0.5),
    ] {
        let errors: Vec<f64> = [10, 20, 40, 80, 160]
            .iter()
            .map(|&n| standing_wave_error(n, ratio, alpha, lumped))
            .collect();
        let orders = observed_orders(&errors);
        eprintln!(
            "alpha={alpha} lumped={lumped} dt/h={ratio}: errors {errors:?} orders {orders:?}"
        );
        for p in &orders {
            assert!(
                (p - 2.0).abs() < 0.1,
                "alpha={alpha} lumped={lumped}: errors {errors:?} orders {orders:?}"
            );
        }
    }
}

#[test]
fn explicit_scheme_solves_nothing_and_enforces_the_cfl_bound() {
    let n = 50;
    let (system, x) = string(n, true);
    let u0: Vec<f64> = x.iter().map(|&s| (PI * s).sin()).collect();
    let v0 = vec![0.0; x.len()];
    let h = 1.0 / n as f64;
    // λ_m(M⁻¹A) for the lumped string is (4/h²) sin²((n−1)π/(2n)) < 4/h², so the bound (23) at
    // α = 0 is just above h/c.
    let scheme = AlphaScheme::explicit(system, StepSettings::new(0.9 * h), &u0, &v0).unwrap();
    assert!(scheme.is_explicit());
    assert_eq!(scheme.factorization_count(), 0);
    let (bound, lambda) = scheme.stability().unwrap();
    let exact_lambda = 4.0 / (h * h) * ((n - 1) as f64 * PI / (2 * n) as f64).sin().powi(2);
    assert!(
        (lambda.value - exact_lambda).abs() / exact_lambda < 1e-6,
        "{} vs {exact_lambda}",
        lambda.value
    );
    assert!(bound > h && bound < 1.001 * h);

    let (system, _) = string(n, true);
    match AlphaScheme::explicit(system, StepSettings::new(1.01 * h), &u0, &v0) {
        Err(StepError::Unstable { bound, .. }) => {
            assert!((bound - 2.0 / exact_lambda.sqrt()).abs() < 1e-6 * bound)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // α = 0.2 widens the bound by 1/sqrt(1 − 0.8).
    let (system, _) = string(n, true);
    assert!(AlphaScheme::new(system, 0.2, StepSettings::new(2.2 * h), &u0, &v0).is_ok());
}

#[test]
fn energy_balance_with_damping_and_force() {
    let n = 40;
    let (mut system, x) = string(n, false);
    let m = x.len();
    // Rayleigh-like damping C = 0.3 M (consistent) and a pulsating point force.
    let Mass::Consistent(mass) = &system.mass else {
        unreachable!()
    };
    system.damping = Some(fem_time::Matrix::from(mass * 0.3));
    system.force = Some(Box::new(move |t, f| {
        f.fill(0.0);
        f[m / 3] = (5.0 * t).sin();
    }));
    let u0 = vec![0.0; m];
    let v0: Vec<f64> = x.iter().map(|&s| (PI * s).sin()).collect();
    let mut scheme =
        AlphaScheme::energy_conserving(system, StepSettings::new(0.01), &u0, &v0).unwrap();
    assert_eq!(
        scheme.factorization_count(),
        2,
        "step matrix + start matrix"
    );
    let e0 = scheme.energy().unwrap().total;
    for _ in 0..2000 {
        scheme.step().unwrap();
        let e = scheme.energy().unwrap();
        let balance = e.total + e.dissipated - e.external_work - e0;
        assert!(
            balance.abs() < 1e-12 * e0.max(e.total),
            "balance {balance:e}"
        );
    }
    assert!(scheme.energy().unwrap().dissipated > 0.1 * e0);
}

#[test]
fn bad_parameters_are_refused() {
    let (system, x) = string(10, true);
    let z = vec![0.0; x.len()];
    assert!(matches!(
        AlphaScheme::new(system, 0.6, StepSettings::new(0.1), &z, &z),
        Err(StepError::InvalidParameter { name: "alpha", .. })
    ));
    let (system, _) = string(10, true);
    assert!(matches!(
        AlphaScheme::new(system, 0.25, StepSettings::new(f64::NAN), &z, &z),
        Err(StepError::InvalidParameter { name: "dt", .. })
    ));
    let (system, _) = string(10, true);
    assert!(matches!(
        AlphaScheme::new(system, 0.25, StepSettings::new(0.1), &z[1..], &z),
        Err(StepError::BadData { .. })
    ));
}
