//! `RigidStepper` as a `fem_time::Stepper`: the energy balance with the work of applied loads,
//! the invariant it reports, and a bitwise restart from its state.

mod common;

use std::borrow::Cow;

use common::{heavy_top, schemes};
use fem_constraints::TimeFunction;
use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal};
use fem_time::{Invariant, StateField, StateKind, Stepper};

fn loaded_body(torque: [f64; 3], omega: [f64; 3]) -> RigidBody {
    let mut b = RigidBody::new(2.0, diagonal([1.0, 2.0, 3.0]));
    b.position = [0.3, -0.2, 1.0];
    b.velocity = [0.5, 0.0, 2.0];
    b.rotation = [0.0, 0.0, 0.4];
    b.angular_velocity = AngularVelocity::Body(omega);
    b.force = Some([
        TimeFunction::Constant(1.0),
        TimeFunction::expression("3*sin(2*t)").expect("expression"),
        TimeFunction::Constant(-0.5),
    ]);
    b.torque = Some(torque.map(TimeFunction::Constant));
    b
}

/// The largest change of `total − external_work` over `steps` steps of size `h`, relative to
/// the largest of `|kinetic|`, `|potential|` and `|external_work|` in the run.
fn balance_error(scheme: Scheme, body: RigidBody, h: f64, steps: usize) -> f64 {
    let set = RigidBodies::from_bodies([0.0, 0.0, -9.81], [body]).expect("valid");
    let mut s = RigidStepper::new(set, scheme, h, 0.0).expect("valid");
    let b0 = Stepper::energy(&s).expect("an energy").balance();
    let (mut worst, mut scale): (f64, f64) = (0.0, 0.0);
    for _ in 0..steps {
        Stepper::step(&mut s).expect("step");
        let e = Stepper::energy(&s).unwrap();
        worst = worst.max((e.balance() - b0).abs());
        scale = scale.max(
            e.kinetic
                .abs()
                .max(e.potential.abs())
                .max(e.external_work.abs()),
        );
    }
    assert!(s.external_work() != 0.0);
    worst / scale
}

/// Translation (drift–kick–drift) and rotation about a fixed principal axis take from the
/// applied loads exactly the work the stepper accumulates: the balance holds to round-off.
#[test]
fn the_work_of_applied_loads_closes_the_balance() {
    for scheme in schemes() {
        // Torque and spin about the principal axis z: planar rotation.
        let e = balance_error(
            scheme,
            loaded_body([0.0, 0.0, 0.7], [0.0, 0.0, 1.5]),
            0.01,
            2000,
        );
        eprintln!("{}: planar, relative balance error {e:.2e}", scheme.name());
        assert!(e < 3e-13, "{}: {e:e}", scheme.name());
    }
    // A general torque: the torque's work is exact to the truncation error, second order.
    for scheme in schemes() {
        let body = || loaded_body([0.3, -0.2, 0.7], [0.4, 1.0, -0.3]);
        let coarse = balance_error(scheme, body(), 0.01, 200);
        let fine = balance_error(scheme, body(), 0.005, 400);
        let order = (coarse / fine).log2();
        eprintln!(
            "{}: general torque, relative balance error {coarse:.2e} (h = 0.01), {fine:.2e} (h = 0.005), order {order:.2}",
            scheme.name()
        );
        assert!(
            coarse < 1e-3 && (1.8..2.3).contains(&order),
            "{}: {coarse:e} {fine:e} {order}",
            scheme.name()
        );
    }
}

/// The heavy top's energy is what the observables say; the invariant is the truncation error
/// for every scheme; the step report carries RIG_IMP's Newton iterations.
#[test]
fn energy_invariant_and_report() {
    for scheme in schemes() {
        let mut s = heavy_top(scheme, 0.009);
        assert_eq!(s.invariant(), Invariant::Truncation);
        let e = Stepper::energy(&s).expect("an energy");
        let o = s.observables();
        assert_eq!(
            (e.kinetic, e.potential, e.total),
            (o.kinetic, o.potential, o.total)
        );
        assert!((e.total - 1_269.975_005_207_9).abs() < 1e-9);
        let report = Stepper::step(&mut s).expect("step");
        assert_eq!(report.constraint_violation, 0.0);
        match scheme {
            Scheme::RigImp(_) => {
                assert!((1..=3).contains(&report.iterations), "{report:?}");
                assert!(report.residual <= 1e-14, "{report:?}");
            }
            _ => assert_eq!((report.iterations, report.residual), (0, 0.0)),
        }
        assert_eq!((Stepper::step_index(&s), Stepper::time(&s)), (1, 0.009));
    }
}

/// Restoring the state saved at step 100 and stepping on gives bitwise the run that never
/// stopped, for a body whose inertia is not diagonal (its state is kept in principal axes).
#[test]
fn restore_resumes_bitwise() {
    let r = fem_rigid::rotation::exp_map([0.3, 0.5, -0.2]);
    let d = diagonal([1.0, 2.0, 3.0]);
    let j: [[f64; 3]; 3] =
        [0, 1, 2].map(|a| [0, 1, 2].map(|b| (0..3).map(|k| r[a][k] * d[k][k] * r[b][k]).sum()));
    let j = [0, 1, 2].map(|a| [0, 1, 2].map(|b| 0.5 * (j[a][b] + j[b][a])));
    let make = |scheme| {
        let mut b = loaded_body([0.3, -0.2, 0.7], [0.4, 1.0, -0.3]);
        b.inertia = j;
        let mut top = RigidBody::new(1.0, diagonal([4.0, 4.0, 1.0]));
        top.position = [0.0, 0.0, 1.0];
        top.fixed_point = Some([0.0; 3]);
        top.angular_velocity = AngularVelocity::Body([0.1, 0.0, 20.0]);
        let set = RigidBodies::from_bodies([0.0, 0.0, -9.81], [b, top]).expect("valid");
        RigidStepper::new(set, scheme, 0.01, 0.5).expect("valid")
    };
    for scheme in schemes() {
        let mut a = make(scheme);
        for _ in 0..100 {
            Stepper::step(&mut a).expect("step");
        }
        let saved: Vec<StateField<'static>> = a
            .state()
            .into_iter()
            .map(|f| StateField {
                name: Cow::Owned(f.name.into_owned()),
                kind: f.kind,
                values: Cow::Owned(f.values.into_owned()),
            })
            .collect();
        assert!(
            saved
                .iter()
                .any(|f| f.kind == StateKind::Rotations && f.values.len() == 18)
        );
        for _ in 0..100 {
            Stepper::step(&mut a).expect("step");
        }
        let mut b = make(scheme);
        b.restore(100, &saved).expect("restored");
        assert_eq!(Stepper::time(&b), 0.5 + 100.0 * 0.01);
        for _ in 0..100 {
            Stepper::step(&mut b).expect("step");
        }
        assert_eq!(a.state(), b.state(), "{}", scheme.name());
        // A state of the wrong size is refused.
        let mut short = saved.clone();
        short[0].values.to_mut().pop();
        assert!(make(scheme).restore(100, &short).is_err());
    }
}
