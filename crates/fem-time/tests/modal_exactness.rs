//! MMJ: the free modal oscillation is reproduced exactly (to round-off), positions and physical
//! velocities, for every `ωΔt` in `[1e-8, 1e3]`, every damping ratio `σ/ω` in `[0, 10]` and
//! `ω = 0`, from the physical initial data; the free positions are the seed's samples (its
//! two-step recurrence); the stable coefficient forms agree with the seed's closed forms where
//! those are accurate and with the seed's Taylor series where those are.

use fem_time::nonsmooth::free_response;
use fem_time::{ModalCoefficients, ModalMoreauJean, ModalSystem};
use fem_time::{NodalStepper as _, Stepper as _};

/// The norm of the exact state `(q, q̇/ω̂)` in which errors are measured.
fn state_scale(omega: f64, sigma: f64, q: f64, v: f64, horizon: f64) -> f64 {
    let w_hat = if omega.max(sigma) > 0.0 {
        omega.max(sigma)
    } else {
        1.0 / horizon
    };
    (q * q + (v / w_hat).powi(2)).sqrt()
}

fn mode(omega: f64, sigma: f64) -> ModalSystem {
    ModalSystem {
        mass: vec![2.5],
        omega: vec![omega],
        sigma: vec![sigma],
    }
}

fn initial(omega: f64, sigma: f64) -> (f64, f64) {
    (1.0, 0.5 * omega + 0.25 * sigma + 0.5)
}

/// The error of the state `(q, q̇)` against the exact `(q_ex, v_ex)`, in the norm
/// `sqrt(q² + (q̇/ω̂)²)`.
fn state_error(
    omega: f64,
    sigma: f64,
    s: &ModalMoreauJean,
    q_ex: f64,
    v_ex: f64,
    horizon: f64,
) -> f64 {
    let w_hat = if omega.max(sigma) > 0.0 {
        omega.max(sigma)
    } else {
        1.0 / horizon
    };
    ((s.position()[0] - q_ex).powi(2) + ((s.velocity_at_step()[0] - v_ex) / w_hat).powi(2)).sqrt()
}

/// Local exactness: from the exact state `(q(Δt), q̇(Δt))` of 32 free motions (all phases), one
/// step lands on `(q(2Δt), q̇(2Δt))`; the worst relative error in the norm of the exact state.
fn worst_local_error(omega: f64, sigma: f64, dt: f64) -> f64 {
    let w_hat = if omega.max(sigma) > 0.0 {
        omega.max(sigma)
    } else {
        1.0 / dt
    };
    let mut worst = 0.0f64;
    for p in 0..32 {
        let phase = p as f64 * std::f64::consts::PI / 16.0;
        let (q0, v0) = (phase.cos(), w_hat * phase.sin());
        let (q1, v1) = free_response(omega, sigma, q0, v0, dt);
        let (q2, v2) = free_response(omega, sigma, q0, v0, 2.0 * dt);
        let scale = state_scale(omega, sigma, q2, v2, dt);
        if scale < 1e-280 {
            continue;
        }
        let mut s =
            ModalMoreauJean::from_physical_state(mode(omega, sigma), dt, dt, &[q1], &[v1]).unwrap();
        s.step().unwrap();
        worst = worst.max(state_error(omega, sigma, &s, q2, v2, dt) / scale);
    }
    worst
}

/// Global run from the physical data `(q(0), q̇(0))`: worst relative state error over the steps.
fn worst_global_error(omega: f64, sigma: f64, dt: f64, n_steps: usize) -> f64 {
    let (q0, v0) = initial(omega, sigma);
    let horizon = n_steps as f64 * dt;
    let mut s =
        ModalMoreauJean::from_physical_state(mode(omega, sigma), dt, 0.0, &[q0], &[v0]).unwrap();
    let scale0 = state_scale(omega, sigma, q0, v0, horizon);
    let mut worst = 0.0f64;
    for n in 1..=n_steps {
        s.step().unwrap();
        let (q, v) = free_response(omega, sigma, q0, v0, n as f64 * dt);
        let scale = state_scale(omega, sigma, q, v, horizon);
        if scale < 1e-200 * scale0 {
            break;
        }
        worst = worst.max(state_error(omega, sigma, &s, q, v, horizon) / scale);
    }
    worst
}

const RATIOS: [f64; 12] = [
    0.0,
    1e-8,
    1e-3,
    0.1,
    0.5,
    0.99,
    1.0 - 1e-9,
    1.0,
    1.0 + 1e-9,
    1.01,
    2.0,
    10.0,
];

/// The worst case (7.7e-13) is critical damping at `σΔt ≈ 100`: there the flow matrix
/// `[[C, S], [Ċ, Ṡ]]` has entries `~σΔt e^{−σΔt}` and determinant `e^{−2σΔt}`, a condition
/// number `~(σΔt)²`, and the error is `ε` times that, for any evaluation in floating point.
#[test]
fn free_modes_are_exact_at_every_step_over_the_whole_range() {
    let dt = 1e-3;
    let mut worst_all = 0.0f64;
    println!(
        "omega dt  | worst one-step relative state error over sigma/omega in [0, 10], 32 phases"
    );
    for e in 0..=44 {
        let wdt = 10f64.powf(-8.0 + 0.25 * e as f64);
        let omega = wdt / dt;
        let mut worst = 0.0f64;
        for r in RATIOS {
            let err = worst_local_error(omega, r * omega, dt);
            assert!(
                err < 1e-12,
                "omega dt = {wdt:e}, sigma/omega = {r}: {err:e}"
            );
            worst = worst.max(err);
        }
        if e % 4 == 0 {
            println!("{wdt:9.1e} | {worst:9.2e}");
        }
        worst_all = worst_all.max(worst);
    }
    // The rigid mode: omega = 0, sigma dt from 0 to 1e3.
    let mut rigid = 0.0f64;
    for e in 0..=13 {
        let sdt = if e == 0 { 0.0 } else { 10f64.powi(e - 10) };
        let err = worst_local_error(0.0, sdt / dt, dt);
        assert!(err < 1e-12, "omega = 0, sigma dt = {sdt:e}: {err:e}");
        rigid = rigid.max(err);
    }
    println!("one step: worst {worst_all:e} over the range; rigid mode {rigid:e}");
}

#[test]
fn free_modes_stay_exact_over_a_thousand_steps() {
    // Over many steps round-off accumulates like n eps times the phase sensitivity: ω itself
    // is known to eps, so the phase of the exact motion to eps ωt (largest at ωΔt = 1e3), and
    // where the two roots e^{λΔt} nearly coincide (critical damping, or ω_dΔt near a multiple
    // of π, where the samples alias) the recurrence amplifies coefficient round-off by the
    // inverse root separation. The bound: 100 n eps max(1, ωΔt); measured worst ratio ~42.
    let (dt, n_steps) = (1e-3, 1000);
    let (mut worst_ratio, mut worst, mut at) = (0.0f64, 0.0f64, (0.0, 0.0));
    let mut cases: Vec<(f64, f64)> = Vec::new();
    for e in 0..=44 {
        let wdt = 10f64.powf(-8.0 + 0.25 * e as f64);
        cases.extend(RATIOS.iter().map(|r| (wdt / dt, r * wdt / dt)));
    }
    for e in 0..=13 {
        let sdt = if e == 0 { 0.0 } else { 10f64.powi(e - 10) };
        cases.push((0.0, sdt / dt));
    }
    for (omega, sigma) in cases {
        let err = worst_global_error(omega, sigma, dt, n_steps);
        let ratio = err / (n_steps as f64 * f64::EPSILON * (omega * dt).max(1.0));
        worst = worst.max(err);
        if ratio > worst_ratio {
            (worst_ratio, at) = (ratio, (omega * dt, sigma / omega));
        }
    }
    println!(
        "global over {n_steps} steps: worst relative error {worst:e}; worst error / (n eps max(1, omega dt)) = {worst_ratio:.1} at omega dt = {:e}, sigma/omega = {}",
        at.0, at.1
    );
    assert!(worst_ratio < 100.0);
}

/// The seed's closed forms (accurate when ωΔt is moderate and the mode under-damped).
fn seed_closed_forms(omega: f64, sigma: f64, dt: f64) -> (f64, f64) {
    let s = (sigma * sigma - omega * omega).abs().sqrt();
    let a = if omega > sigma {
        2.0 * (-sigma * dt).exp() * (s * dt).cos()
    } else {
        (-sigma * dt).exp() * ((s * dt).exp() + (-s * dt).exp())
    };
    let e = (-2.0 * sigma * dt).exp();
    let x = omega * omega * dt * dt;
    let theta = 2.0 / x - a / (1.0 + e - a);
    let dt_sigma_star = (1.0 + x / 2.0 - theta * x / 2.0) * (1.0 - e) / (1.0 + e);
    let w = 1.0 + x / 2.0 * (1.0 - theta) + dt_sigma_star;
    (w, dt_sigma_star)
}

#[test]
fn stable_forms_match_the_seed() {
    // Closed forms where they are accurate.
    for (omega, sigma, dt) in [
        (1.0, 0.0, 0.7),
        (3.0, 0.4, 0.5),
        (2.0, 5.0, 0.3),
        (1.0, 1.0, 1.0),
    ] {
        let c = ModalCoefficients::new(omega, sigma, dt);
        let (w, ss) = seed_closed_forms(omega, sigma, dt);
        assert!(
            (1.0 / c.inv_w - w).abs() < 1e-12 * w,
            "{omega} {sigma}: {} vs {w}",
            1.0 / c.inv_w
        );
        assert!((c.dt_sigma_star - ss).abs() < 1e-12 * (1.0 + ss));
    }
    // The seed's Taylor series (to Δt⁷) where the closed forms cancel.
    for (omega, sigma) in [(1.0, 0.0), (1.0, 0.3), (0.5, 2.0), (0.0, 1.0)] {
        let dt: f64 = 1e-3;
        let (w2, s2) = (omega * omega, sigma * sigma);
        let inv_w = 1.0 - dt * sigma
            + dt.powi(2) * (-w2 / 12.0 + 2.0 * s2 / 3.0)
            + dt.powi(3) * (w2 * sigma / 12.0 - s2 * sigma / 3.0)
            + dt.powi(4) * (w2 * w2 / 360.0 - w2 * s2 / 20.0 + 2.0 * s2 * s2 / 15.0)
            + dt.powi(5)
                * (-w2 * w2 * sigma / 360.0 + w2 * s2 * sigma / 45.0
                    - 2.0 * s2 * s2 * sigma / 45.0);
        let dss = dt * sigma
            + dt.powi(3) * sigma * w2 / 12.0
            + dt.powi(5) * (w2 * w2 * sigma / 240.0 - w2 * s2 * sigma / 180.0);
        let c = ModalCoefficients::new(omega, sigma, dt);
        assert!(
            (c.inv_w - inv_w).abs() < 4e-16,
            "1/W: {} vs {inv_w}",
            c.inv_w
        );
        assert!((c.dt_sigma_star - dss).abs() < 1e-16 * (1.0 + dss / dt));
    }
    // The seed's closed forms lose everything at small ωΔt; the stable ones do not.
    let c = ModalCoefficients::new(1.0, 0.0, 1e-7);
    let (w, _) = seed_closed_forms(1.0, 0.0, 1e-7);
    println!(
        "omega dt = 1e-7: seed closed-form W = {w:e}, stable W = {:e}",
        1.0 / c.inv_w
    );
    assert!((1.0 / c.inv_w - (1.0 + 1e-14 / 12.0)).abs() < 1e-15);
}

#[test]
fn free_positions_are_the_seeds_samples() {
    // The stepper carries (q, q̇) and the seed's scheme two samples; in free flight both
    // produce the same positions: q^{i+1} = A q^i − e q^{i−1} with the seed's A_k (`trace`) and
    // e_k (`decay`). Also the flow's identities: Ċ = −ω²S, C − Ṡ = 2σS, det Φ = e^{−2σΔt}.
    let dt = 1e-3;
    let mut worst = 0.0f64;
    for e in 0..=22 {
        let wdt = 10f64.powf(-8.0 + 0.5 * e as f64);
        for r in RATIOS {
            let (omega, sigma) = (wdt / dt, r * wdt / dt);
            let c = ModalCoefficients::new(omega, sigma, dt);
            let det = c.flow_c * c.flow_s_dot - c.flow_s * c.flow_c_dot;
            let e2 = (-2.0 * sigma * dt).exp();
            assert!(
                (det - e2).abs() <= 1e-13 * (1.0 + e2),
                "{wdt} {r}: det {det} vs {e2}"
            );
            assert!(c.impulse_position >= 0.0);
            let (q0, v0) = initial(omega, sigma);
            let mut s =
                ModalMoreauJean::from_physical_state(mode(omega, sigma), dt, 0.0, &[q0], &[v0])
                    .unwrap();
            let mut history = vec![q0];
            for _ in 0..20 {
                s.step().unwrap();
                history.push(s.position()[0]);
            }
            for w in history.windows(3) {
                let scale = w[0].abs().max(w[1].abs()).max(w[2].abs()).max(1e-300);
                let seed = c.trace * w[1] - c.decay * w[0];
                // The recurrence's round-off: |A| ≤ 2, so a few ε of the largest sample.
                let err = (w[2] - seed).abs() / scale;
                if scale > 1e-200 {
                    worst = worst.max(err);
                }
            }
        }
    }
    println!("free positions vs the seed's recurrence: worst {worst:e} of the samples");
    assert!(worst < 1e-13, "{worst:e}");
}
