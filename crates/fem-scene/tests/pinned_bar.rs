//! Solfec's pinned bar (its test `pinned-bar.py`): a rigid bar 0.1 × 0.1 × 1 held by two fixed
//! points on the axis `y` through `(0, 0, 0.75)`, released at 30° from the vertical under
//! `g = 9.8`, `h = 1e-3`. At the bottom (centre of mass at `x = 0`) Solfec's reference is
//! `ω = 2.121 rad/s`, the slender rod's `√(2 m g l (1 − cos 30°)/J_p)` with `J_p = m L²/12 + m l²`
//! (2.12168); the prism's own inertia `m (a² + L²)/12` gives 2.11565. Within 0.5 % of the first,
//! and to 1e-6 of the second; the fixed points drift from their place by `O(h²)` (the links'
//! velocity rows hold the mid-step velocity; their drift correction the position).

mod common;

use common::{Body, materials, rigid, scene, tight};
use fem_contact::detect::Shape;
use fem_rigid::Scheme;
use fem_scene::{Link, LinkKind};
use fem_time::Stepper;
use nalgebra::{Matrix3, Vector3};

const G: f64 = 9.8;
const A: f64 = 0.1;
const LEN: f64 = 1.0;
const L: f64 = 0.25;

/// |ω| at the bottom, the largest distance of a fixed point from its place, the largest
/// change of the energy balance.
fn swing(scheme: Scheme, h: f64) -> (f64, f64, f64) {
    let phi: f64 = -30f64.to_radians();
    let pivot = Vector3::new(0.0, 0.0, 0.75);
    let centre = pivot + Vector3::new(-L * phi.sin(), 0.0, -L * phi.cos());
    let mut bar = Body::new(
        Shape::cuboid([A / 2.0, A / 2.0, LEN / 2.0]).unwrap(),
        1.0,
        centre.into(),
    );
    bar.rotation = [0.0, phi, 0.0];
    let points: Vec<Vector3<f64>> = [-0.05, 0.05]
        .iter()
        .map(|&y| Vector3::new(0.0, y, 0.75))
        .collect();
    let links: Vec<Link> = points
        .iter()
        .map(|&p| Link {
            kind: LinkKind::FixedPoint,
            body: 0,
            point: p,
            other: None,
            other_point: p,
        })
        .collect();
    let mut s = scene(
        vec![bar],
        [0.0, 0.0, -G],
        vec![],
        materials(0.0, 0.0, 0),
        &links,
        scheme,
        h,
        tight(1e-10),
    );
    let rotation0 = fem_rigid::rotation::exp_map([0.0, phi, 0.0]);
    let r0 = Matrix3::from_fn(|i, j| rotation0[i][j]);
    let body_points: Vec<Vector3<f64>> = points
        .iter()
        .map(|p| r0.transpose() * (p - centre))
        .collect();
    let e0 = s.energy().unwrap().balance();
    let (mut drift, mut balance) = (0.0f64, 0.0f64);
    let mut prev = (centre.x, 0.0);
    loop {
        s.step().unwrap();
        balance = balance.max((s.energy().unwrap().balance() - e0).abs());
        let b = rigid(&s).stepper().bodies();
        let r = b.rotation(0);
        let r = Matrix3::from_fn(|i, j| r[i][j]);
        for (p, bp) in points.iter().zip(&body_points) {
            drift = drift.max((Vector3::from(b.positions()[0]) + r * bp - p).norm());
        }
        let x = b.positions()[0][0];
        let w = b.spatial_angular_velocity(0)[1];
        if x <= 0.0 {
            // Interpolated to x = 0 between the last two steps.
            let f = prev.0 / (prev.0 - x);
            return ((prev.1 + f * (w - prev.1)).abs(), drift, balance);
        }
        prev = (x, w);
    }
}

#[test]
fn the_bar_reaches_the_bottom_at_solfecs_angular_velocity() {
    let c = 2.0 * G * L * (1.0 - 30f64.to_radians().cos());
    let thin = (c / (LEN * LEN / 12.0 + L * L)).sqrt();
    let prism = (c / ((A * A + LEN * LEN) / 12.0 + L * L)).sqrt();
    for scheme in [
        Scheme::RigPos,
        Scheme::RigNeg,
        Scheme::RigImp(Default::default()),
    ] {
        let (omega, drift, balance) = swing(scheme, 1e-3);
        let (_, drift_half, _) = swing(scheme, 5e-4);
        println!(
            "{}: |ω| at the bottom {omega:.6} (Solfec's 2.121, slender rod {thin:.6}: {:.3} %; prism {prism:.6}: {:.1e} rel); fixed points within {drift:.1e} ({drift_half:.1e} at h/2); balance {balance:.1e}",
            scheme.name(),
            100.0 * (omega - thin).abs() / thin,
            (omega - prism).abs() / prism
        );
        assert!((omega - thin).abs() / thin < 5e-3);
        assert!((omega - prism).abs() / prism < 1e-6);
        assert!(
            drift < 1e-6 && drift_half < drift / 3.0,
            "{drift:e} {drift_half:e}"
        );
    }
}
