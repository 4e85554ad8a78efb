//! The constraint-solver interface: penalty and augmented Lagrangian potentials, their
//! discrete gradients (30)/(62) and the Hestenes–Powell update (10).

use fem_constraints::{
    AugmentedLagrangian, ConstraintError, ConstraintKind, ConstraintSolver, Penalty,
    constraint::generic_discrete_gradient,
};

fn solvers() -> Vec<Box<dyn ConstraintSolver>> {
    let kinds = vec![ConstraintKind::Equality, ConstraintKind::Inequality];
    let mut al = AugmentedLagrangian::new(0.1, kinds.clone()).unwrap();
    al.set_multipliers(&[0.7, 0.3]);
    vec![Box::new(Penalty::new(0.1, kinds).unwrap()), Box::new(al)]
}

#[test]
fn force_and_stiffness_are_derivatives_of_the_potential() {
    for s in solvers() {
        for i in 0..2 {
            for g in [-0.9, -0.2, 0.05, 0.4, 1.3] {
                let h = 1e-6;
                let fd = (s.potential(i, g + h) - s.potential(i, g - h)) / (2.0 * h);
                assert!((fd - s.force(i, g)).abs() < 1e-6, "{} {i} {g}", s.name());
                let fd2 = (s.force(i, g + h) - s.force(i, g - h)) / (2.0 * h);
                assert!(
                    (fd2 - s.stiffness(i, g)).abs() < 1e-4,
                    "{} {i} {g}",
                    s.name()
                );
            }
        }
    }
}

#[test]
fn discrete_gradient_is_exact_and_matches_its_derivatives() {
    let pairs = [
        (-0.5, -0.1),
        (-0.3, 0.2),
        (0.2, -0.3),
        (0.1, 0.6),
        (0.3, 0.3),
        (-1e-12, 1e-12),
        (-0.1, -0.1),
    ];
    for s in solvers() {
        for i in 0..2 {
            for &(a, b) in &pairs {
                let d = s.discrete_gradient(i, a, b);
                if (b - a).abs() > 1e-6 {
                    // (A difference quotient over a tinier interval would test round-off.)
                    let exact = (s.potential(i, b) - s.potential(i, a)) / (b - a);
                    assert!(
                        (d.value - exact).abs() < 1e-9 * (1.0 + exact.abs()),
                        "{a} {b}"
                    );
                } else {
                    let mid = s.force(i, 0.5 * (a + b));
                    assert!((d.value - mid).abs() < 1e-9 * (1.0 + mid.abs()), "{a} {b}");
                }
                let h = 1e-7;
                let db = (s.discrete_gradient(i, a, b + h).value
                    - s.discrete_gradient(i, a, b - h).value)
                    / (2.0 * h);
                let da = (s.discrete_gradient(i, a + h, b).value
                    - s.discrete_gradient(i, a - h, b).value)
                    / (2.0 * h);
                // The kink of (g⁺)² at 0 makes one-sided pairs non-smooth in a, b only there.
                if a.abs() > 1e-6 && b.abs() > 1e-6 {
                    assert!((db - d.d_b).abs() < 1e-4 * (1.0 + db.abs()), "{a} {b}");
                    assert!((da - d.d_a).abs() < 1e-4 * (1.0 + da.abs()), "{a} {b}");
                }
            }
        }
    }
}

#[test]
fn generic_discrete_gradient_takes_the_midpoint_limit() {
    let psi = |s: f64| s.powi(4);
    let d = generic_discrete_gradient(psi, |s| 4.0 * s.powi(3), |s| 12.0 * s * s, 1.0, 1.0 + 1e-9);
    assert!((d.value - 4.0).abs() < 1e-7);
    let d = generic_discrete_gradient(psi, |s| 4.0 * s.powi(3), |s| 12.0 * s * s, 1.0, 2.0);
    assert!((d.value - 15.0).abs() < 1e-12);
}

#[test]
fn hestenes_powell_update_converges_on_a_quadratic_program() {
    // min ½|x|² subject to x_0 + x_1 − 1 = 0: x* = (½, ½), λ* = −½.
    let mut al = AugmentedLagrangian::equalities(0.5, 1).unwrap();
    let mut last = f64::INFINITY;
    for _ in 0..60 {
        // min ½|x|² + ψ(x_0 + x_1 − 1): x_i = −ψ' ⇒ x_0 = x_1 = s, s = −(λ + (2s − 1)/ε).
        let (l, e) = (al.multipliers()[0], al.epsilon());
        let s = (1.0 / e - l) / (1.0 + 2.0 / e);
        let update = al.update_multipliers(&[2.0 * s - 1.0]);
        assert!(update.residual <= last + 1e-15);
        last = update.residual;
    }
    assert!(last < 1e-12);
    assert!((al.multipliers()[0] + 0.5).abs() < 1e-10);
    // The penalty at the same ε leaves a violation ε/(ε + 2) ... of order ε.
    let p = Penalty::equalities(0.5, 1).unwrap();
    assert_eq!(p.name(), "penalty");
    assert!(!p.is_iterative());
}

#[test]
fn inequality_multipliers_stay_nonnegative() {
    let mut al = AugmentedLagrangian::inequalities(1.0, 1).unwrap();
    al.update_multipliers(&[-3.0]);
    assert_eq!(al.multipliers()[0], 0.0);
    al.update_multipliers(&[0.5]);
    assert_eq!(al.multipliers()[0], 0.5);
    let r = al.update_multipliers(&[-0.25]);
    assert_eq!(al.multipliers()[0], 0.25);
    assert_eq!(r.residual, 0.25); // complementarity |min(λ, −g)|
}

#[test]
fn bad_epsilon_is_refused() {
    for e in [0.0, -1e-6, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Penalty::inequalities(e, 1),
            Err(ConstraintError::InvalidParameter {
                name: "epsilon",
                ..
            })
        ));
        assert!(AugmentedLagrangian::equalities(e, 1).is_err());
    }
}
