//! A limitation of RIG_NEG, derived from `W2(t+h)` as the seed writes it and observed: a
//! slender body (axial moment `ε J`, transverse moments `J`) turning at `ω` about a transverse
//! axis. A small axial spin `s` is, by Euler's equations, constant. Linearised about
//! `Ω = (0, 0, ω)` (axis first), `R(t+h/2)`–`W2(t+h)` give, with `x = h² ω² / (4 ε)`,
//!
//! ```text
//! (exp[−h/2 Ω] J Ω)_axial = ε s + h²ω²s/8,     Ω₁ = (s, β + h ω s (1 + x/2), ω),
//! (exp[−h/2 Ω₁] a)_axial  = ε s − h²ω² s x/4,  so  s^{t+h} = (1 − x²) s^t
//! ```
//!
//! (the transverse momentum that the two half-rotations move onto the axis, divided by the
//! small `ε J`). RIG_NEG is therefore stable only for `x ≤ √2`, i.e. `h ω ≤ 2^{5/4} √ε`
//! (0.0752 for `ε = 1e-3`), and accurate only for `x ≪ 1`. RIG_POS and RIG_IMP keep `s`
//! (factor 1). This is how a pendulum on a small sphere (`ε ≈ 1e-3`) released above its pivot
//! blew up under RIG_NEG at h = 0.02 (`h ω_max ≈ 0.1`).

use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal};

const EPS: f64 = 1e-3;

/// Largest `|s| / s₀` over 400 steps, and the per-step factor `s^{n+1}/s^n` of the third step.
fn axial_growth(scheme: Scheme, h_omega: f64) -> (f64, f64) {
    let s0 = 1e-12;
    let mut b = RigidBody::new(1.0, diagonal([EPS, 1.0, 1.0]));
    b.angular_velocity = AngularVelocity::Body([s0, 0.0, 1.0]);
    let bodies = RigidBodies::from_bodies([0.0; 3], [b]).expect("valid");
    let mut st = RigidStepper::new(bodies, scheme, h_omega, 0.0).expect("valid");
    let (mut worst, mut prev, mut factor): (f64, f64, f64) = (1.0, s0, 0.0);
    for n in 1..=400 {
        st.step().expect("step");
        let s = st.bodies().angular_velocity(0)[0];
        worst = worst.max((s / s0).abs());
        if n == 3 {
            factor = s / prev;
        }
        prev = s;
        if worst > 1e6 {
            break;
        }
    }
    (worst, factor)
}

#[test]
fn rig_neg_has_the_predicted_stability_limit() {
    println!(
        "| scheme | h ω | max abs(s)/s₀ over 400 steps | s³/s² | predicted 1 − x², x = h²ω²/(4ε) |"
    );
    println!("|---|---|---|---|---|");
    for h_omega in [0.02, 0.05, 0.07, 0.08, 0.1] {
        let x = h_omega * h_omega / (4.0 * EPS);
        let predicted = 1.0 - x * x;
        for scheme in [Scheme::RigPos, Scheme::RigNeg, Scheme::rig_imp()] {
            let (worst, factor) = axial_growth(scheme, h_omega);
            println!(
                "| {} | {h_omega} | {worst:.2e} | {factor:+.3} | {} |",
                scheme.name(),
                if matches!(scheme, Scheme::RigNeg) {
                    format!("{predicted:+.3}")
                } else {
                    "—".into()
                }
            );
            match scheme {
                Scheme::RigNeg if x > 2.0_f64.sqrt() => {
                    assert!(worst > 1e6, "unstable above the limit");
                    assert!(
                        (factor - predicted).abs() < 0.05 * predicted.abs(),
                        "{factor}"
                    );
                }
                Scheme::RigNeg => {
                    assert!(worst <= 1.0 + 1e-9, "stable below the limit: {worst}");
                    assert!((factor - predicted).abs() < 0.02, "{factor} {predicted}");
                }
                _ => {
                    assert!(worst < 1.0 + 1e-6, "{}: {worst}", scheme.name());
                    assert!((factor - 1.0).abs() < 1e-6);
                }
            }
        }
    }
}
