//! The double pendulum of §2: Table 2 (wall by penalty) and Table 4 (ellipse by penalty and
//! augmented Lagrangian), through the public traits.

use fem_pendulum::{
    ConstraintMethod, DoublePendulum, PendulumRecord, PendulumSetup, PendulumSimulation,
};
use fem_time::StepError;
use fem_time::conservation_form::ConservationFormSystem;
use fem_time::conservation_form::MultiplierSettings;

fn run(setup: &PendulumSetup, t_end: f64) -> Vec<PendulumRecord> {
    let mut sim = PendulumSimulation::new(setup).unwrap();
    let mut records = Vec::new();
    sim.run(t_end, |r| records.push(*r)).unwrap();
    records
}

#[test]
fn free_hanging_energy_is_the_papers() {
    let p = DoublePendulum::table3();
    assert!((p.potential_energy(&[0.0, 0.0]) + 110.475).abs() < 1e-9);
}

/// Table 2, the first impact (t ∈ [0, 3]) at ε = 1e-7, 1e-8, 1e-9, Δt = 1e-4.
#[test]
fn wall_penetration_follows_table_2() {
    let paper_mm = [(1e-7, 11.0), (1e-8, 3.63), (1e-9, 1.16)];
    for (eps, mm) in paper_mm {
        let records = run(&PendulumSetup::wall(eps, 1e-4), 3.0);
        let pen = records.iter().map(|r| r.constraint).fold(0.0, f64::max) * 1e3;
        assert!(
            (pen / mm - 1.0).abs() < 0.05,
            "eps {eps:e}: {pen} mm vs {mm} mm"
        );
    }
}

/// Table 4 at the augmented Lagrangian's step Δt = 5e-4 on t ∈ [0, 2]: at the same ε the
/// augmented Lagrangian violates the constraint (at the half steps, where both enforce it)
/// at least 10× less than the penalty method.
#[test]
fn augmented_lagrangian_beats_penalty_tenfold_at_the_same_epsilon() {
    let al = run(
        &PendulumSetup::ellipse(
            ConstraintMethod::AugmentedLagrangian {
                epsilon: 1e-6,
                multipliers: MultiplierSettings::default(),
            },
            5e-4,
        ),
        2.0,
    );
    let pen = run(
        &PendulumSetup::ellipse(ConstraintMethod::Penalty { epsilon: 1e-6 }, 5e-4),
        2.0,
    );
    let max_g = |r: &[PendulumRecord]| {
        r.iter()
            .skip(1)
            .map(|r| r.constraint_half_step.abs())
            .fold(0.0, f64::max)
    };
    let (g_al, g_pen) = (max_g(&al), max_g(&pen));
    assert!(
        g_pen / g_al >= 10.0,
        "penalty {g_pen:e}, augmented Lagrangian {g_al:e}"
    );
    let mean_mult = al
        .iter()
        .skip(1)
        .map(|r| r.multiplier_iterations)
        .sum::<usize>() as f64
        / (al.len() - 1) as f64;
    assert!(mean_mult > 1.0 && mean_mult < 100.0, "{mean_mult}");
}

/// After the torque stops (t > 4) the augmented-Lagrangian energy T + V stays constant to
/// about 1e-4 relative (Fig. 5).
#[test]
fn energy_after_the_torque_is_nearly_constant() {
    let al = run(
        &PendulumSetup::ellipse(
            ConstraintMethod::AugmentedLagrangian {
                epsilon: 1e-6,
                multipliers: MultiplierSettings::default(),
            },
            5e-4,
        ),
        6.0,
    );
    let after: Vec<f64> = al
        .iter()
        .filter(|r| r.t > 4.001)
        .map(|r| r.energy)
        .collect();
    let (lo, hi) = after
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &e| {
            (l.min(e), h.max(e))
        });
    assert!((hi - lo) / hi.abs() < 5e-4, "energy in [{lo}, {hi}]");
}

#[test]
fn bad_input_is_refused() {
    let mut setup = PendulumSetup::wall(-1e-6, 1e-4);
    assert!(matches!(
        PendulumSimulation::new(&setup),
        Err(StepError::InvalidParameter {
            name: "epsilon",
            ..
        })
    ));
    setup = PendulumSetup::wall(1e-6, 1e-4);
    setup.pendulum.m[1] = 0.0;
    assert!(matches!(
        PendulumSimulation::new(&setup),
        Err(StepError::InvalidParameter { name: "m", .. })
    ));
}

/// The torque (45) at `O` does work: `T + V` rose by 28.6 J (30 % of the run's largest
/// energy) over the 4 s it acts, and the run's balance said "conserved to the scheme's
/// truncation error". With its work `W = Σ Q(t_n)(θ₁^{n+1/2} − θ₁^{n−1/2})` in the balance,
/// `T + V + ψ − W` holds over the whole run to 8.0e-4 of the energy (augmented Lagrangian at the
/// paper's Δt = 5e-4: its constraint force's own work, which does not fall with Δt —
/// `docs/validation.md`) and to 2.0e-4 (penalty, Δt = 1e-5, every step); and since `Q = −30` is constant
/// while it acts, `W` telescopes to `−30 (θ₁ at the last half step with t ≤ 4 − θ₁(0))`.
#[test]
fn the_torque_work_closes_the_energy_balance() {
    for (enforcement, dt, tol) in [
        (
            ConstraintMethod::AugmentedLagrangian {
                epsilon: 1e-6,
                multipliers: MultiplierSettings::default(),
            },
            5e-4,
            1e-3,
        ),
        (ConstraintMethod::Penalty { epsilon: 1e-6 }, 1e-5, 5e-4),
    ] {
        let records = run(&PendulumSetup::ellipse(enforcement, dt), 8.0);
        let e_max = records.iter().fold(0.0f64, |m, r| m.max(r.energy.abs()));
        // The scheme's energy: T + V and the constraint's (the penalty's ψ), as the run's total.
        let total = |r: &PendulumRecord| r.energy + r.constraint_energy;
        let b0 = total(&records[0]) - records[0].torque_work;
        let drift = records
            .iter()
            .map(|r| (total(r) - r.torque_work - b0).abs())
            .fold(0.0, f64::max);
        let rise = records
            .iter()
            .fold(0.0f64, |m, r| m.max(r.energy - records[0].energy));
        eprintln!(
            "{enforcement:?}: T + V rises by {rise:.3} J, T + V − W drifts by {drift:.2e} J ({:.1e} of {e_max:.1} J)",
            drift / e_max
        );
        assert!(rise > 0.25 * e_max, "{rise}");
        assert!(drift < tol * e_max, "{enforcement:?}: {drift:e}");
        // The telescoped work: the half step n + 1/2 at θ^n + (θ^{n+1} − θ^n)/2.
        let last_on = records.iter().rposition(|r| r.t <= 4.0 + 1e-12).unwrap();
        let (a, b) = (records[last_on].theta[0], records[last_on + 1].theta[0]);
        let w = -30.0 * (0.5 * (a + b) - records[0].theta[0]);
        let w_run = records.last().unwrap().torque_work;
        assert!(
            (w_run - w).abs() < 1e-12 * w.abs().max(1.0),
            "{w_run} vs {w}"
        );
    }
}
