//! The step split around a contact solve (`fem_rigid::contact`): without impulses it is
//! bitwise the whole step; each body's `H` maps its dofs to the velocity of its material
//! points (checked against the motion of a point by finite differences); an impulse changes
//! the velocity by `A⁻¹ p`, and RIG_NEG and RIG_IMP take its angular part into the angular
//! momentum balance exactly.

use fem_constraints::TimeFunction;
use fem_contact::body::{ContactBody, PointMap};
use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal};
use nalgebra::Vector3;

mod common;

/// Free bodies, one with a non-principal body frame and one with applied loads.
fn bodies() -> RigidBodies {
    let mut a = RigidBody::new(2.0, diagonal([1.0, 2.0, 3.0]));
    a.position = [0.1, -0.2, 1.0];
    a.rotation = [0.3, -0.1, 0.2];
    a.velocity = [0.5, 0.1, -0.3];
    a.angular_velocity = AngularVelocity::Body([1.0, -2.0, 0.5]);
    let mut b = RigidBody::new(1.5, [[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]]);
    b.position = [1.0, 2.0, 0.0];
    b.angular_velocity = AngularVelocity::Spatial([0.2, 3.0, -1.0]);
    let mut c = RigidBody::new(0.7, diagonal([0.2, 0.3, 0.4]));
    c.angular_velocity = AngularVelocity::Body([4.0, 0.0, 1.0]);
    c.force = Some([
        TimeFunction::Constant(1.0),
        TimeFunction::Constant(0.0),
        TimeFunction::Constant(-2.0),
    ]);
    c.torque = Some([
        TimeFunction::Constant(0.0),
        TimeFunction::Constant(0.3),
        TimeFunction::Constant(0.1),
    ]);
    RigidBodies::from_bodies([0.0, 0.0, -9.81], [a, b, c]).unwrap()
}

fn state(s: &RigidStepper) -> Vec<u64> {
    let b = s.bodies();
    let mut out = Vec::new();
    for i in 0..b.len() {
        out.extend(b.positions()[i].map(f64::to_bits));
        out.extend(b.velocities()[i].map(f64::to_bits));
        out.extend(b.rotation(i).as_flattened().iter().map(|v| v.to_bits()));
        out.extend(b.angular_velocity(i).map(f64::to_bits));
    }
    out.push(s.external_work().to_bits());
    out
}

#[test]
fn without_impulses_the_split_step_is_the_whole_step() {
    for scheme in common::schemes() {
        let mut whole = RigidStepper::new(bodies(), scheme, 1e-2, 0.0).unwrap();
        let mut split = RigidStepper::new(bodies(), scheme, 1e-2, 0.0).unwrap();
        for _ in 0..200 {
            whole.step().unwrap();
            split.begin_contact_step().unwrap();
            split.end_contact_step().unwrap();
        }
        assert_eq!(state(&whole), state(&split), "{}", scheme.name());
        assert_eq!(split.step_index(), 200);
    }
}

#[test]
fn the_point_map_gives_the_velocity_of_a_material_point() {
    let mut s = RigidStepper::new(bodies(), Scheme::RigPos, 1e-2, 0.0).unwrap();
    s.begin_contact_step().unwrap();
    for i in 0..3 {
        let body = &s.contact_bodies()[i];
        let (x, lambda) = s.mid_step_placement(i);
        let b_point = [0.3, -0.4, 0.25];
        let p = Vector3::from(x)
            + nalgebra::Matrix3::from_fn(|r, c| lambda[r][c]) * Vector3::from(b_point);
        let mut h = PointMap::new();
        body.point_map(&p, &mut h);
        // The velocity the map gives for the start velocity, against the body's own
        // v + ω × (p − x) at the mid-step rotation: ω = Λ_half Ω in the stored frame is what
        // the map uses, so compare with the spatial angular velocity Λ_half Ω^t.
        let u = body.start_velocity();
        let mapped = h
            .iter()
            .fold(Vector3::zeros(), |acc, &(d, v)| acc + v * u[d]);
        // Finite differences of the point's motion under the mid-step rotation turning at
        // the start angular velocity: x + Λ exp[τ Ω] B.
        let omega_body = s.bodies().angular_velocity(i);
        let tau = 1e-6;
        let at = |t: f64| {
            let e = fem_rigid::rotation::exp_map(omega_body.map(|w| w * t));
            let rb = nalgebra::Matrix3::from_fn(|r, c| lambda[r][c])
                * nalgebra::Matrix3::from_fn(|r, c| e[r][c])
                * Vector3::from(b_point);
            Vector3::from(x) + Vector3::from(s.bodies().velocities()[i]) * t + rb
        };
        let fd = (at(tau) - at(-tau)) / (2.0 * tau);
        assert!(
            (mapped - fd).norm() < 1e-8 * fd.norm().max(1.0),
            "body {i}: {mapped} {fd}"
        );
        // A⁻¹Hᵀ: linear 1/m, angular J⁻¹ (principal moments).
        let mut g = PointMap::new();
        body.inverse_inertia_map(&h, &mut g);
        let m = s.bodies().mass(i);
        for (&(d, hv), &(dg, gv)) in h.iter().zip(&g) {
            assert_eq!(d, dg);
            if d < 3 {
                assert!((gv * m - hv).norm() < 1e-15);
            } else {
                let j = s.bodies().principal_moments(i)[d - 3];
                assert!((gv * j - hv).norm() < 1e-14 * hv.norm().max(1.0));
            }
        }
    }
    s.end_contact_step().unwrap();
}

#[test]
fn an_impulse_changes_the_momenta_by_itself() {
    // One free body without loads: an impulse P at a point p changes the linear momentum by P
    // and, for RIG_NEG and RIG_IMP, the spatial angular momentum about the origin by
    // x^{t+h/2} × P + (p − x^{t+h/2}) × P = p × P exactly (to round-off, resp. the Newton
    // tolerance); the end velocity of the point is what the contact layer saw (RIG_POS).
    for scheme in common::schemes() {
        let mut one = RigidBody::new(2.0, diagonal([1.0, 2.0, 3.0]));
        one.position = [0.1, -0.2, 1.0];
        one.rotation = [0.3, -0.1, 0.2];
        one.velocity = [0.5, 0.1, -0.3];
        one.angular_velocity = AngularVelocity::Body([1.0, -2.0, 0.5]);
        let set = RigidBodies::from_bodies([0.0; 3], [one]).unwrap();
        let mut s = RigidStepper::new(set, scheme, 1e-2, 0.0).unwrap();
        let before = s.observables();
        s.begin_contact_step().unwrap();
        let (x, _) = s.mid_step_placement(0);
        let p = Vector3::new(x[0] + 0.2, x[1] - 0.1, x[2] + 0.3);
        let impulse = Vector3::new(0.3, -0.2, 0.7);
        let mut h = PointMap::new();
        s.contact_bodies()[0].point_map(&p, &mut h);
        let mut generalized = [0.0; 6];
        for &(d, v) in &h {
            generalized[d] = v.dot(&impulse);
        }
        s.contact_bodies_mut()[0].apply_impulse(&generalized);
        let seen = {
            let u = s.contact_bodies()[0].velocity();
            h.iter()
                .fold(Vector3::zeros(), |acc, &(d, v)| acc + v * u[d])
        };
        s.end_contact_step().unwrap();
        let after = s.observables();
        for k in 0..3 {
            let dl = after.linear_momentum[k] - before.linear_momentum[k];
            assert!((dl - impulse[k]).abs() < 1e-14, "{}: {dl}", scheme.name());
        }
        let moment = p.cross(&impulse);
        if !matches!(scheme, Scheme::RigPos) {
            for k in 0..3 {
                let dh = after.angular_momentum[k] - before.angular_momentum[k];
                assert!(
                    (dh - moment[k]).abs() < 1e-13,
                    "{}: {dh} {moment}",
                    scheme.name()
                );
            }
        }
        if matches!(scheme, Scheme::RigPos) {
            // The end velocity of the body is the one the contact layer computed.
            let b = s.bodies();
            let v = Vector3::from(b.velocities()[0]);
            let w = s.contact_bodies()[0].velocity();
            assert!((v - Vector3::new(w[0], w[1], w[2])).norm() < 1e-15);
            assert!(seen.norm() > 0.0);
        }
    }
}

#[test]
fn a_body_on_a_kinematic_fixed_point_is_refused() {
    let mut s = common::heavy_top(Scheme::RigPos, 1e-3);
    let e = s.begin_contact_step().unwrap_err();
    assert!(e.to_string().contains("fixed-point constraint"), "{e}");
    let mut t = RigidStepper::new(bodies(), Scheme::RigPos, 1e-2, 0.0).unwrap();
    assert!(t.end_contact_step().is_err());
}
