//! A block on an incline (a box resting flat on a tilted plane, four contact points): it
//! sticks when `tan θ < μ` (displacement below 1e-12 over 1 s), and slides with
//! `a = g (sin θ − μ cos θ)` to 1e-10 relative when `tan θ > μ`. And a box resting flat on a
//! level plane keeps its four contacts and neither rocks nor drifts.

mod common;

use common::{Body, materials, plane, rigid, scene, tight};
use fem_contact::detect::Shape;
use fem_rigid::Scheme;
use fem_scene::ContactState;
use fem_time::Stepper;
use nalgebra::Vector3;

const G: f64 = 9.81;
const A: f64 = 0.2;

/// A cube of side `A` resting on the plane through the origin tilted by `theta` about `y`,
/// friction `mu`; returns (displacement along the downhill direction, its velocity) at each
/// step, and the contact states of the last step.
fn run(theta: f64, mu: f64, steps: usize, h: f64) -> (Vec<(f64, f64)>, Vec<ContactState>) {
    let n = Vector3::new(-theta.sin(), 0.0, theta.cos());
    let downhill = Vector3::new(-theta.cos(), 0.0, -theta.sin());
    let c0 = n * (A / 2.0);
    let mut body = Body::new(Shape::cuboid([A / 2.0; 3]).unwrap(), 500.0, c0.into());
    body.rotation = [0.0, -theta, 0.0];
    let mut s = scene(
        vec![body],
        [0.0, 0.0, -G],
        vec![plane([0.0; 3], n.into())],
        materials(mu, 0.0, 1),
        &[],
        Scheme::RigPos,
        h,
        tight(1e-13),
    );
    let mut out = Vec::new();
    for _ in 0..steps {
        s.step().unwrap();
        let b = rigid(&s).stepper().bodies();
        let x = Vector3::from(b.positions()[0]) - c0;
        let v = Vector3::from(b.velocities()[0]);
        out.push((x.dot(&downhill), v.dot(&downhill)));
        assert_eq!(s.contacts().len(), 4, "four corners");
    }
    (out, s.contacts().iter().map(|c| c.state).collect())
}

#[test]
fn a_block_sticks_below_the_friction_angle() {
    let theta = 20f64.to_radians();
    let mu = 0.5;
    assert!(theta.tan() < mu);
    let (track, states) = run(theta, mu, 1000, 1e-3);
    let worst = track.iter().map(|(x, _)| x.abs()).fold(0.0, f64::max);
    println!("stick: largest displacement over 1 s {worst:.2e}");
    assert!(worst < 1e-12, "{worst:e}");
    assert!(
        states.iter().all(|s| *s == ContactState::Stick),
        "{states:?}"
    );
}

#[test]
fn a_block_slides_with_the_closed_form_acceleration() {
    let theta = 30f64.to_radians();
    let mu = 0.3;
    let a = G * (theta.sin() - mu * theta.cos());
    let h = 1e-3;
    let (track, states) = run(theta, mu, 1000, h);
    let (x, v) = track[track.len() - 1];
    let t = 1.0;
    let (ev, ex) = (
        (v - a * t).abs() / (a * t),
        (x - 0.5 * a * t * t).abs() / (0.5 * a * t * t),
    );
    println!("slide: a = {a:.10}, v(1) = {v:.12} ({ev:.1e} rel), x(1) = {x:.12} ({ex:.1e} rel)");
    assert!(ev < 1e-10 && ex < 1e-10, "{ev:e} {ex:e}");
    assert!(
        states.iter().all(|s| *s == ContactState::Slip),
        "{states:?}"
    );
}

#[test]
fn a_box_resting_flat_keeps_four_contacts_without_rocking_or_drift() {
    let c0 = [0.3, -0.2, A / 2.0];
    let mut s = scene(
        vec![Body::new(Shape::cuboid([A / 2.0; 3]).unwrap(), 500.0, c0)],
        [0.0, 0.0, -G],
        vec![plane([0.0; 3], [0.0, 0.0, 1.0])],
        materials(0.5, 0.3, 1),
        &[],
        Scheme::RigImp(Default::default()),
        1e-3,
        tight(1e-12),
    );
    let mut worst_x = 0.0f64;
    let mut worst_r = 0.0f64;
    for _ in 0..2000 {
        s.step().unwrap();
        assert_eq!(s.contacts().len(), 4);
        assert!(s.contacts().iter().all(|c| c.state == ContactState::Stick));
        let b = rigid(&s).stepper().bodies();
        let x = b.positions()[0];
        worst_x = worst_x.max((0..3).map(|k| (x[k] - c0[k]).abs()).fold(0.0, f64::max));
        let r = b.rotation(0);
        for i in 0..3 {
            for j in 0..3 {
                let e = if i == j { 1.0 } else { 0.0 };
                worst_r = worst_r.max((r[i][j] - e).abs());
            }
        }
    }
    // The four corners carry the weight together, with no moment about the centre (how they
    // share it is not unique: four points for three conditions).
    let m = 500.0 * A * A * A;
    let total: f64 = s.contacts().iter().map(|c| c.normal_force).sum();
    assert!((total - m * G).abs() < 1e-9 * m * G, "{total}");
    let centre = Vector3::from(c0);
    let moment = s
        .contacts()
        .iter()
        .map(|c| (c.point - centre).cross(&(c.normal * c.normal_force)))
        .sum::<Vector3<f64>>();
    assert!(moment.norm() < 1e-9 * m * G * A, "{moment}");
    println!("box at rest: drift {worst_x:.1e}, rotation {worst_r:.1e}");
    assert!(
        worst_x < 1e-12 && worst_r < 1e-12,
        "{worst_x:e} {worst_r:e}"
    );
}
