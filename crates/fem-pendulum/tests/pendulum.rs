//! The double pendulum of §2: Table 2 (wall by penalty) and Table 4 (ellipse by penalty and
//! augmented Lagrangian), through the public traits.

use fem_pendulum::{
    DoublePendulum, Enforcement, PendulumRecord, PendulumSetup, PendulumSimulation,
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
            Enforcement::AugmentedLagrangian {
                epsilon: 1e-6,
                multipliers: MultiplierSettings::default(),
            },
            5e-4,
        ),
        2.0,
    );
    let pen = run(
        &PendulumSetup::ellipse(Enforcement::Penalty { epsilon: 1e-6 }, 5e-4),
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
            Enforcement::AugmentedLagrangian {
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
