//! The nonlinear alpha scheme (31): energy conservation with the discrete gradient (30), order 2.

use fem_assembly::{DofMap, string::StringMatrices};
use fem_elements::StringMaterial;
use fem_time::nonlinear_alpha::{DiagonalPotential, NonlinearAlphaScheme};
use fem_time::{LinearSystem, Mass, NewtonSettings};

/// A P1 string on [0, 1], `n` cells, ρ = τ = 1, lumped mass.
fn string(n: usize) -> (LinearSystem, Vec<f64>) {
    let points: Vec<[f64; 3]> = (0..=n).map(|i| [i as f64 / n as f64, 0.0, 0.0]).collect();
    let cells: Vec<[usize; 2]> = (0..n).map(|i| [i, i + 1]).collect();
    let dofmap = DofMap::with_fixed(n + 1, 1, [0, n]);
    let material = StringMaterial {
        density: 1.0,
        tension: 1.0,
    };
    let s = StringMatrices::assemble(&points, &cells, &material, &dofmap);
    let x = dofmap.free_dofs().iter().map(|&g| points[g][0]).collect();
    (
        LinearSystem {
            mass: Mass::Lumped(s.lumped_mass),
            stiffness: s.stiffness,
            damping: None,
            force: None,
        },
        x,
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
    let mut scheme =
        NonlinearAlphaScheme::energy_conserving(system, potential, 0.01, 0.0, &u0, &v0, tight())
            .unwrap();
    let e0 = scheme.energy().total;
    let mut worst = 0.0f64;
    let mut iterations = 0;
    for _ in 0..500 {
        iterations += scheme.step().unwrap().iterations;
        worst = worst.max((scheme.energy().total - e0).abs() / e0);
    }
    assert!(scheme.energy().potential > 0.0);
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
            system,
            potential,
            dt,
            0.0,
            &u0,
            &vec![0.0; n],
            tight(),
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
