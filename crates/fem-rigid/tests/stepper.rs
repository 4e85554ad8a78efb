//! The stepper beyond the validation cases: principal frames, determinism across threads,
//! translation (the seed's `q(t+h/2)`, `u(t+h)`, `q(t+h)`), applied loads, typed errors.

mod common;

use common::{max_abs_diff, norm, observed_orders, schemes, sub};
use fem_constraints::TimeFunction;
use fem_rigid::rotation::exp_map;
use fem_rigid::{
    AngularVelocity, RigImpSettings, RigidBodies, RigidBody, RigidError, RigidStepper, Scheme,
    diagonal,
};

type Mat3 = [[f64; 3]; 3];

fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

fn transpose(a: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| a[j][i]))
}

fn mat_vec(a: &Mat3, v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| (0..3).map(|k| a[i][k] * v[k]).sum())
}

#[test]
fn a_body_frame_that_is_not_principal_gives_the_same_motion() {
    // Body A: J = R diag(1, 2, 3) Rᵀ in its given frame. Body B: the same body described in
    // its principal frame, Λ_B = Λ_A R, Ω_B = Rᵀ Ω_A. Spatial motion must agree.
    let r = exp_map([0.4, -0.3, 0.8]);
    let d = diagonal([1.0, 2.0, 3.0]);
    let j_a = mat_mul(&mat_mul(&r, &d), &transpose(&r));
    let psi = [0.2, 0.1, -0.3];
    let w_a = [0.3, 1.0, -0.2];
    for scheme in schemes() {
        let mut a = RigidBody::new(1.0, j_a);
        a.rotation = psi;
        a.angular_velocity = AngularVelocity::Body(w_a);
        let mut b = RigidBody::new(1.0, d);
        // Λ_B = exp[ψ] R, i.e. the rotation vector of exp[ψ] R: give it through the spatial
        // angular velocity and a rotated start instead — build B's Λ directly from A's.
        b.rotation = rotation_vector(&mat_mul(&exp_map(psi), &r));
        b.angular_velocity = AngularVelocity::Body(mat_vec(&transpose(&r), w_a));
        let bodies = RigidBodies::from_bodies([0.0; 3], [a, b]).expect("valid");
        // The accessors give the body frame as given.
        let j_back = bodies.inertia(0);
        assert!(max_abs_diff(&j_back, &j_a) < 1e-14, "{j_back:?}");
        assert!(norm(sub(bodies.angular_velocity(0), w_a)) < 1e-14);
        assert!(max_abs_diff(&bodies.rotation(0), &exp_map(psi)) < 1e-15);
        let mut s = RigidStepper::new(bodies, scheme, 0.01, 0.0).expect("valid");
        for _ in 0..2000 {
            s.step().expect("step");
        }
        let bo = s.bodies();
        let la = bo.rotation(0);
        let lb = mat_mul(&bo.rotation(1), &transpose(&r));
        assert!(
            max_abs_diff(&la, &lb) < 1e-12,
            "{}: {:e}",
            scheme.name(),
            max_abs_diff(&la, &lb)
        );
        let (wa, wb) = (
            bo.spatial_angular_velocity(0),
            bo.spatial_angular_velocity(1),
        );
        assert!(norm(sub(wa, wb)) < 1e-12 * norm(wa));
        let (ma, mb) = (bo.angular_momentum(0), bo.angular_momentum(1));
        assert!(norm(sub(ma, mb)) < 1e-12 * norm(ma));
    }
}

/// The rotation vector of a rotation matrix (angle below π), for building test inputs.
fn rotation_vector(l: &Mat3) -> [f64; 3] {
    let c = ((l[0][0] + l[1][1] + l[2][2] - 1.0) / 2.0).clamp(-1.0, 1.0);
    let theta = c.acos();
    let axial = [l[2][1] - l[1][2], l[0][2] - l[2][0], l[1][0] - l[0][1]];
    let s = theta / (2.0 * theta.sin());
    axial.map(|v| v * s)
}

fn many_bodies(n: usize, scheme: Scheme) -> RigidStepper {
    let mut set = RigidBodies::with_capacity([0.0, 0.0, -9.81], n).expect("valid");
    for i in 0..n {
        let x = i as f64;
        let mut b = RigidBody::new(1.0 + 0.001 * x, diagonal([1.0, 1.5 + 1e-4 * x, 2.0]));
        b.position = [x, 0.0, 0.0];
        b.velocity = [0.0, 0.1, 1.0];
        b.rotation = [0.001 * x, 0.2, -0.1];
        b.angular_velocity = AngularVelocity::Body([0.3, (0.01 * x).sin(), 0.2]);
        if i % 97 == 0 {
            b.fixed_point = Some([x, 0.0, 1.0]);
            b.velocity = [0.0; 3];
        }
        if i % 89 == 0 {
            b.torque = Some([
                TimeFunction::expression("sin(t)").expect("expression"),
                TimeFunction::Constant(0.1),
                TimeFunction::Constant(0.0),
            ]);
        }
        set.push(b).expect("valid body");
    }
    RigidStepper::new(set, scheme, 0.01, 0.0).expect("valid")
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    for scheme in schemes() {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            pool.install(|| {
                let mut s = many_bodies(10_000, scheme);
                for _ in 0..20 {
                    s.step().expect("step");
                }
                (s.observables(), s.bodies().clone())
            })
        };
        let (o1, b1) = run(1);
        let (o2, b2) = run(2);
        assert_eq!(o1, o2, "{}", scheme.name());
        for i in 0..b1.len() {
            assert_eq!(b1.rotation(i), b2.rotation(i));
            assert_eq!(b1.positions()[i], b2.positions()[i]);
            assert_eq!(b1.angular_velocity(i), b2.angular_velocity(i));
        }
    }
}

#[test]
fn free_fall_is_the_exact_parabola() {
    // Half drift, kick, half drift is exact for a constant acceleration; along the exact
    // parabola ½ m v² − m g·x is constant.
    let g = [0.0, -1.0, -9.81];
    let [x0, v0] = [[1.0, 2.0, 3.0], [0.5, 4.0, 10.0]];
    let mut b = RigidBody::new(3.0, diagonal([1.0, 1.0, 1.0]));
    b.position = x0;
    b.velocity = v0;
    let bodies = RigidBodies::from_bodies(g, [b]).expect("valid");
    let mut s = RigidStepper::new(bodies, Scheme::RigPos, 0.01, 0.0).expect("valid");
    let (p0, e0) = (s.observables().linear_momentum, s.total_energy());
    for _ in 0..1000 {
        s.step().expect("step");
    }
    let t = s.time();
    let exact = [0, 1, 2].map(|k| x0[k] + v0[k] * t + 0.5 * g[k] * t * t);
    assert!(norm(sub(s.bodies().positions()[0], exact)) < 1e-11);
    let p = s.observables().linear_momentum;
    let expected = [0, 1, 2].map(|k| p0[k] + 3.0 * g[k] * t);
    assert!(norm(sub(p, expected)) < 1e-11);
    assert!((s.total_energy() - e0).abs() < 1e-10 * e0.abs());
}

#[test]
fn time_dependent_force_converges_at_second_order() {
    // m ẍ = F(t) = (sin t, 0, 0) with x(0) = 0, v(0) = 0: x(t) = (t − sin t)/m.
    let m = 2.0;
    let t_end = 2.0;
    let exact = (t_end - f64::sin(t_end)) / m;
    let mut errors = Vec::new();
    for h in [0.04, 0.02, 0.01, 0.005] {
        let mut b = RigidBody::new(m, diagonal([1.0, 1.0, 1.0]));
        b.force = Some([
            TimeFunction::expression("sin(t)").expect("expression"),
            TimeFunction::Constant(0.0),
            TimeFunction::Constant(0.0),
        ]);
        let mut s = RigidStepper::new(
            RigidBodies::from_bodies([0.0; 3], [b]).expect("valid"),
            Scheme::RigNeg,
            h,
            0.0,
        )
        .expect("valid");
        for _ in 0..(t_end / h).round() as usize {
            s.step().expect("step");
        }
        errors.push((s.bodies().positions()[0][0] - exact).abs());
    }
    for p in observed_orders(&errors) {
        assert!((1.9..2.1).contains(&p), "{errors:?}");
    }
}

#[test]
fn a_torque_changes_the_angular_momentum_by_its_midpoint_impulse() {
    // RIG_NEG and RIG_IMP balance Λ^{t+h} J Ω^{t+h} = Λ^t J Ω^t + h t(t + h/2) exactly.
    let torque = ["0.3*cos(2*t)", "0.1", "-0.2*t"];
    for scheme in [Scheme::RigNeg, Scheme::rig_imp()] {
        let mut b = RigidBody::new(1.0, [[2.0, 0.1, 0.0], [0.1, 1.0, 0.0], [0.0, 0.0, 1.5]]);
        b.angular_velocity = AngularVelocity::Body([0.4, -0.3, 1.0]);
        b.torque = Some(torque.map(|e| TimeFunction::expression(e).expect("expression")));
        let h = 0.01;
        let mut s = RigidStepper::new(
            RigidBodies::from_bodies([0.0; 3], [b]).expect("valid"),
            scheme,
            h,
            0.0,
        )
        .expect("valid");
        let mut expected = s.observables().angular_momentum;
        for n in 0..5000 {
            let t_half = (n as f64 + 0.5) * h;
            expected = [
                expected[0] + h * 0.3 * (2.0 * t_half).cos(),
                expected[1] + h * 0.1,
                expected[2] - h * 0.2 * t_half,
            ];
            s.step().expect("step");
        }
        let l = s.observables().angular_momentum;
        assert!(
            norm(sub(l, expected)) < 1e-12 * norm(expected),
            "{}: {l:?} {expected:?}",
            scheme.name()
        );
    }
}

#[test]
fn newton_failure_names_the_step_and_the_residual() {
    let mut b = RigidBody::new(1.0, diagonal([1.0, 2.0, 3.0]));
    b.angular_velocity = AngularVelocity::Body([10.0, 20.0, 5.0]);
    let bodies = RigidBodies::from_bodies([0.0; 3], [RigidBody::new(1.0, diagonal([1.0; 3])), b])
        .expect("valid");
    let settings = RigImpSettings {
        tolerance: 1e-15,
        max_iterations: 1,
        ..RigImpSettings::default()
    };
    let mut s = RigidStepper::new(bodies, Scheme::RigImp(settings), 0.1, 0.0).expect("valid");
    let err = s.step().unwrap_err();
    match &err {
        RigidError::NewtonNotConverged {
            step,
            body,
            iterations,
            residual,
            ..
        } => {
            assert_eq!((*step, *body, *iterations), (1, 1, 1));
            assert!(*residual > 1e-15);
        }
        other => panic!("{other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("step 1") && message.contains("body 1") && message.contains("residual"),
        "{message}"
    );
    // Default settings converge on the same problem.
    let mut b = RigidBody::new(1.0, diagonal([1.0, 2.0, 3.0]));
    b.angular_velocity = AngularVelocity::Body([10.0, 20.0, 5.0]);
    let mut s = RigidStepper::new(
        RigidBodies::from_bodies([0.0; 3], [b]).expect("valid"),
        Scheme::rig_imp(),
        0.1,
        0.0,
    )
    .expect("valid");
    assert!(s.step().expect("converges").newton_iterations <= 6);
}

#[test]
fn a_non_finite_load_stops_the_step_with_a_typed_error() {
    let mut b = RigidBody::new(1.0, diagonal([1.0; 3]));
    b.force = Some([
        TimeFunction::Constant(0.0),
        TimeFunction::expression("sqrt(1 - t)").expect("expression"),
        TimeFunction::Constant(0.0),
    ]);
    let mut s = RigidStepper::new(
        RigidBodies::from_bodies([0.0; 3], [b]).expect("valid"),
        Scheme::RigPos,
        0.5,
        0.0,
    )
    .expect("valid");
    // Loads are evaluated at t + h/2: 0.25 and 0.75 are fine, 1.25 is not.
    s.step().expect("finite");
    s.step().expect("finite");
    let err = s.step().unwrap_err();
    assert!(
        matches!(
            err,
            RigidError::NonFiniteState {
                step: 3,
                body: 0,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(s.step_index(), 2);
}

#[test]
fn bad_parameters_are_refused() {
    let bodies = RigidBodies::new([0.0; 3]).expect("valid");
    assert!(matches!(
        RigidStepper::new(bodies.clone(), Scheme::RigPos, 0.0, 0.0),
        Err(RigidError::InvalidTime { .. })
    ));
    assert!(matches!(
        RigidStepper::new(bodies.clone(), Scheme::RigPos, 0.01, f64::NAN),
        Err(RigidError::InvalidTime { .. })
    ));
    let bad = RigImpSettings {
        tolerance: 0.0,
        max_iterations: 10,
        ..RigImpSettings::default()
    };
    assert!(matches!(
        RigidStepper::new(bodies, Scheme::RigImp(bad), 0.01, 0.0),
        Err(RigidError::InvalidNewtonSettings { .. })
    ));
    // A non-positive-definite inertia names the body and its eigenvalues.
    let mut set = RigidBodies::new([0.0; 3]).expect("valid");
    set.push(RigidBody::new(1.0, diagonal([1.0; 3])))
        .expect("valid");
    let err = set
        .push(RigidBody::new(
            1.0,
            [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        ))
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("body 1")
            && message.contains("not positive definite")
            && message.contains("-1"),
        "{message}"
    );
}

#[test]
fn the_fixed_point_stays_fixed() {
    // The heavy top's tip is the body point −X_c = −e₃ from its centre: it stays at the
    // origin with zero velocity, and the centre stays at distance l = 1.
    for scheme in schemes() {
        let mut top = common::heavy_top(scheme, 0.003);
        for _ in 0..1000 {
            top.step().expect("step");
        }
        let b = top.bodies();
        let (tip, tip_velocity) = b.material_point(0, [0.0, 0.0, -1.0]);
        assert!(norm(tip) < 1e-14, "{tip:?}");
        assert!(norm(tip_velocity) < 1e-12, "{tip_velocity:?}");
        assert!((norm(b.positions()[0]) - 1.0).abs() < 1e-14);
        assert_eq!(b.fixed_point(0), Some([0.0; 3]));
    }
}

/// A restored state whose rotation is not one (a damaged or crafted checkpoint) is refused.
#[test]
fn a_restored_rotation_that_is_not_orthonormal_is_refused() {
    let b = RigidBody::new(1.0, diagonal([1.0, 2.0, 3.0]));
    let bodies = RigidBodies::from_bodies([0.0; 3], [b]).expect("valid");
    let mut s = RigidStepper::new(bodies, Scheme::RigPos, 0.01, 0.0).expect("valid");
    s.step().expect("a step");
    let owned: Vec<(String, fem_time::StateKind, Vec<f64>)> = fem_time::Stepper::state(&s)
        .into_iter()
        .map(|f| (f.name.into_owned(), f.kind, f.values.into_owned()))
        .collect();
    let fields = |scale: f64| -> Vec<fem_time::StateField<'static>> {
        owned
            .iter()
            .map(|(name, kind, values)| {
                let mut values = values.clone();
                if name == "rotation" {
                    values[0] *= scale;
                }
                fem_time::StateField {
                    name: name.clone().into(),
                    kind: *kind,
                    values: values.into(),
                }
            })
            .collect()
    };
    assert!(fem_time::Stepper::restore(&mut s, 1, &fields(1.0)).is_ok());
    let err = fem_time::Stepper::restore(&mut s, 1, &fields(1.5)).unwrap_err();
    assert!(err.to_string().contains("orthonormal"), "{err}");
}
