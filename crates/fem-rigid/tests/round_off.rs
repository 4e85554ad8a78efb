//! `Λ` stays orthonormal to round-off over 10⁶ steps, without re-orthonormalisation.
//!
//! Each step rounds `Λ` once (`Λ + Λ D`, see `fem_rigid::scheme`), an error of at most half
//! an ulp per entry, of either sign; `ΛᵀΛ − I` then does a random walk, of size ~`√N ε` after
//! `N` steps — 2.2e-13 for N = 10⁶ — where a systematic error would grow like `N ε` (2.2e-10).
//! Four bodies are stepped together by each scheme: a free tumbling body, a free body whose
//! inertia is not diagonal (stepped in its principal frame), the heavy top on its fixed point,
//! and a body under a time-varying torque.
//!
//! Run with `--nocapture` for the table in docs/validation.md.

use fem_constraints::TimeFunction;
use fem_rigid::rotation::exp_map;
use fem_rigid::{
    AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal, inertia_about_centre,
};

fn four_bodies(scheme: Scheme) -> RigidStepper {
    let mut tumbling = RigidBody::new(1.0, diagonal([1.0, 2.0, 3.0]));
    tumbling.rotation = [0.3, -0.2, 0.1];
    tumbling.angular_velocity = AngularVelocity::Body([0.05, 1.0, 0.05]);

    let mut skewed = RigidBody::new(2.0, [[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]]);
    skewed.position = [5.0, 0.0, 0.0];
    skewed.velocity = [0.0, 1.0, 0.0];
    skewed.angular_velocity = AngularVelocity::Spatial([0.7, -0.4, 1.1]);

    let mut top = RigidBody::new(
        1.0,
        inertia_about_centre(diagonal([5.0, 5.0, 1.0]), 1.0, [0.0, 0.0, 1.0]),
    );
    top.rotation = [0.05, 0.0, 0.0];
    top.position = exp_map(top.rotation).map(|row| row[2]);
    top.fixed_point = Some([0.0; 3]);
    top.angular_velocity = AngularVelocity::Body([0.0, 0.0, 50.0]);

    let mut driven = RigidBody::new(1.0, diagonal([1.0, 1.5, 2.0]));
    driven.position = [-5.0, 0.0, 0.0];
    driven.angular_velocity = AngularVelocity::Body([0.2, 0.1, 0.3]);
    driven.torque = Some([
        TimeFunction::expression("0.1*sin(t)").expect("expression"),
        TimeFunction::Constant(0.0),
        TimeFunction::expression("0.05*cos(0.5*t)").expect("expression"),
    ]);

    let bodies = RigidBodies::from_bodies([0.0, 0.0, -20.0], [tumbling, skewed, top, driven])
        .expect("valid bodies");
    RigidStepper::new(bodies, scheme, 0.005, 0.0).expect("valid stepper")
}

#[test]
fn rotations_stay_orthonormal_over_a_million_steps() {
    let bound = 1e3 * f64::EPSILON; // √N ε for N = 10⁶
    println!("| scheme | max abs(ΛᵀΛ − I) up to 1e4 steps | up to 1e5 | up to 1e6 | bound √N ε |");
    println!("|---|---|---|---|---|");
    for scheme in [Scheme::RigPos, Scheme::RigNeg, Scheme::rig_imp()] {
        let mut s = four_bodies(scheme);
        let mut worst: f64 = 0.0;
        let mut at = Vec::new();
        for k in 1..=1_000_000u64 {
            s.step().expect("step");
            if k % 1000 == 0 {
                worst = worst.max(s.observables().orthonormality_defect);
            }
            if k == 10_000 || k == 100_000 || k == 1_000_000 {
                at.push(worst);
            }
        }
        println!(
            "| {} | {:.2e} | {:.2e} | {:.2e} | {bound:.2e} |",
            scheme.name(),
            at[0],
            at[1],
            at[2]
        );
        assert!(at[2] <= bound, "{}: {:e}", scheme.name(), at[2]);
        // The user-facing Λ = (Λ R) Rᵀ of the skewed body is as orthonormal.
        let lam = s.bodies().rotation(1);
        assert!(fem_rigid::rotation::orthonormality_defect(&lam) <= bound);
    }
}
