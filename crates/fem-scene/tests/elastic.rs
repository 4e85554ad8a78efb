//! Elastic impacts (`e = 1`, `μ = 0`): a cube bouncing and spinning inside a closed box holds
//! its kinetic energy to the solver's tolerance over 10⁴ steps, and a row of equal spheres
//! (Newton's cradle) keeps momentum and energy to the solver's tolerance — with the outcome the
//! velocity-level law gives: a sequence of two-body impacts when the spheres stand apart (the
//! last leaves with the first one's velocity), one simultaneous impact when they touch (the
//! struck chain leaves together at `2v/n`, the striker returns at `(2 − n) v/n`;
//! docs/theory/contact.md §8).

mod common;

use common::{Body, materials, plane, rigid, scene, tight};
use fem_contact::detect::Shape;
use fem_rigid::Scheme;
use fem_time::Stepper;

#[test]
fn a_cube_bouncing_in_a_box_keeps_its_energy() {
    let walls = [
        ([-0.5, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ([0.5, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ([0.0, -0.5, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.5, 0.0], [0.0, -1.0, 0.0]),
        ([0.0, 0.0, -0.5], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 0.5], [0.0, 0.0, -1.0]),
    ];
    let mut cube = Body::new(Shape::cuboid([0.1; 3]).unwrap(), 800.0, [0.05, -0.1, 0.2]);
    cube.velocity = [1.3, -0.7, 0.9];
    cube.angular_velocity = [2.0, -1.0, 3.0];
    cube.rotation = [0.3, 0.2, -0.1];
    let tolerance = 1e-12;
    let mut s = scene(
        vec![cube],
        [0.0; 3],
        walls.iter().map(|(p, n)| plane(*p, *n)).collect(),
        materials(0.0, 1.0, walls.len()),
        &[],
        Scheme::RigPos,
        1e-3,
        tight(tolerance),
    );
    let e0 = s.energy().unwrap().total;
    let (mut worst, mut impacts, mut active_steps) = (0.0f64, 0.0f64, 0);
    let mut inside = 0.0f64;
    for _ in 0..10_000 {
        s.step().unwrap();
        worst = worst.max((s.energy().unwrap().total - e0).abs() / e0);
        impacts = impacts.max(s.dissipated_impact().abs() / e0);
        if s.last_solve().active > 0 {
            active_steps += 1;
        }
        let b = rigid(&s).stepper().bodies();
        let x = b.positions()[0];
        inside = inside.max(x.iter().map(|c| c.abs()).fold(0.0, f64::max));
    }
    println!(
        "cube in a box: {active_steps} steps with impacts, energy within {worst:.2e} relative, impact work {impacts:.1e}, centre within {inside:.4}"
    );
    assert!(active_steps >= 20, "{active_steps}");
    // Never out of the box: the centre is at most half a diagonal from the walls.
    assert!(inside < 0.5 - 0.1, "{inside}");
    // e = 1: every active point leaves as fast as it came (U_N⁺ = −U_N⁻), so the impulses do
    // no work; what remains is the solver's tolerance.
    assert!(worst < 1e3 * tolerance, "{worst:e}");
}

/// A row of `n` spheres of radius `r` on the `x` axis, `gap` apart, the first moving at `v`
/// toward the others; the velocities after `t`, the largest momentum and energy changes.
fn cradle(n: usize, gap: f64, v: f64, t: f64, h: f64) -> (Vec<f64>, f64, f64) {
    let r = 0.05;
    let bodies = (0..n)
        .map(|i| {
            let mut b = Body::new(
                Shape::sphere(r).unwrap(),
                7800.0,
                [i as f64 * (2.0 * r + gap), 0.0, 0.0],
            );
            if i == 0 {
                b.velocity = [v, 0.0, 0.0];
            }
            b
        })
        .collect();
    let tolerance = 1e-13;
    let mut s = scene(
        bodies,
        [0.0; 3],
        vec![],
        materials(0.0, 1.0, 0),
        &[],
        Scheme::RigPos,
        h,
        tight(tolerance),
    );
    let momentum = |s: &fem_scene::SceneStepper| {
        rigid(s)
            .stepper()
            .bodies()
            .velocities()
            .iter()
            .map(|u| u[0])
            .sum::<f64>()
    };
    let (p0, e0) = (momentum(&s), s.energy().unwrap().total);
    let (mut dp, mut de) = (0.0f64, 0.0f64);
    for _ in 0..(t / h).round() as usize {
        s.step().unwrap();
        dp = dp.max((momentum(&s) - p0).abs() / p0.abs());
        de = de.max((s.energy().unwrap().total - e0).abs() / e0);
    }
    let vx = rigid(&s)
        .stepper()
        .bodies()
        .velocities()
        .iter()
        .map(|u| u[0])
        .collect();
    (vx, dp, de)
}

#[test]
fn newtons_cradle_apart_passes_the_velocity_along() {
    let (n, v) = (5, 1.0);
    let (vx, dp, de) = cradle(n, 1e-3, v, 0.1, 1e-4);
    println!("cradle, spheres apart: velocities {vx:?}, momentum {dp:.1e}, energy {de:.1e}");
    for (i, u) in vx.iter().enumerate() {
        let expected = if i == n - 1 { v } else { 0.0 };
        assert!((u - expected).abs() < 1e-9, "sphere {i}: {u}");
    }
    assert!(dp < 1e-12 && de < 1e-11, "{dp:e} {de:e}");
}

#[test]
fn newtons_cradle_touching_is_one_simultaneous_impact() {
    let (n, v) = (5, 1.0);
    let (vx, dp, de) = cradle(n, 0.0, v, 0.02, 1e-4);
    println!("cradle, spheres touching: velocities {vx:?}, momentum {dp:.1e}, energy {de:.1e}");
    let w = 2.0 * v / n as f64;
    assert!((vx[0] - (w - v)).abs() < 1e-9, "{vx:?}");
    for u in &vx[1..] {
        assert!((u - w).abs() < 1e-9, "{vx:?}");
    }
    assert!(dp < 1e-12 && de < 1e-11, "{dp:e} {de:e}");
}
