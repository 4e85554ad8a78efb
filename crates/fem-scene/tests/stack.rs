//! A stack of ten cubes resting on a plane for 10 s: every cube stays where it was put to
//! within a millionth of its size, and the warm-started solver needs at most 50 sweeps a step.

mod common;

use common::{Body, materials, plane, rigid, scene};
use fem_contact::NsgsSettings;
use fem_contact::detect::Shape;
use fem_rigid::Scheme;
use fem_time::Stepper;

struct Outcome {
    drift: f64,
    most_sweeps: u64,
    mean_sweeps: f64,
    steps_over_50: usize,
    contacts: (usize, usize),
}

/// Ten cubes of side `a` stacked, cube `k` turned by `twist(k)` about the vertical and
/// shrunk by `shrink^k`.
fn stack(twist: impl Fn(usize) -> f64, shrink: f64, seconds: f64, solver: NsgsSettings) -> Outcome {
    let a = 0.1;
    let n = 10;
    let mut z = 0.0;
    let bodies: Vec<Body> = (0..n)
        .map(|k| {
            let side = a * shrink.powi(k as i32);
            let mut b = Body::new(
                Shape::cuboid([side / 2.0; 3]).unwrap(),
                1000.0,
                [0.0, 0.0, z + side / 2.0],
            );
            z += side;
            b.rotation = [0.0, 0.0, twist(k)];
            b
        })
        .collect();
    let start: Vec<[f64; 3]> = bodies.iter().map(|b| b.position).collect();
    let h = 1e-3;
    let mut s = scene(
        bodies,
        [0.0, 0.0, -9.81],
        vec![plane([0.0; 3], [0.0, 0.0, 1.0])],
        materials(0.5, 0.0, 1),
        &[],
        Scheme::RigPos,
        h,
        solver,
    );
    let mut o = Outcome {
        drift: 0.0,
        most_sweeps: 0,
        mean_sweeps: 0.0,
        steps_over_50: 0,
        contacts: (usize::MAX, 0),
    };
    let steps = (seconds / h) as usize;
    for k in 0..steps {
        s.step().unwrap();
        let sweeps = s.last_solve().report.sweeps;
        o.mean_sweeps += sweeps as f64 / steps as f64;
        if k > 0 {
            o.most_sweeps = o.most_sweeps.max(sweeps);
            o.steps_over_50 += usize::from(sweeps > 50);
        }
        let c = s.last_solve().contacts;
        o.contacts = (o.contacts.0.min(c), o.contacts.1.max(c));
        let b = rigid(&s).stepper().bodies();
        for (x, x0) in b.positions().iter().zip(&start) {
            o.drift = o
                .drift
                .max((0..3).map(|c| (x[c] - x0[c]).abs()).fold(0.0, f64::max));
        }
    }
    println!(
        "drift {:.2e} of a side, at most {} sweeps a step after the first ({:.1} on average, {} steps over 50), contacts {:?}",
        o.drift / a,
        o.most_sweeps,
        o.mean_sweeps,
        o.steps_over_50,
        o.contacts
    );
    o
}

#[test]
fn a_stack_of_ten_cubes_stays_at_rest() {
    // The global Newton polish after 10 sweeps (fem-contact's default is 100): four corner
    // points per face make W singular and a column of ten a long chain for Gauss–Seidel; a
    // step's change of q (the gap term of points a round-off above the surface) at the
    // tolerance's level would otherwise take hundreds of sweeps (measured: 231 of 10⁴ steps
    // over 50 sweeps with the polish after 100, none with it after 10).
    let solver = NsgsSettings {
        polish_after: Some(10),
        ..Default::default()
    };
    let o = stack(|_| 0.0, 1.0, 10.0, solver);
    assert!(o.drift < 1e-6 * 0.1, "{:e}", o.drift);
    assert!(o.most_sweeps <= 50, "{}", o.most_sweeps);
    assert_eq!(o.contacts, (40, 40), "four corners on each face");
}

/// The same stack with every other cube turned by 0.1 rad about the vertical (eight points on
/// each face): the drift is as small, but the warm-started solve is not always that quick —
/// recorded, not a goal met (docs/validation.md).
#[test]
fn a_twisted_stack_stays_at_rest() {
    let solver = NsgsSettings {
        polish_after: Some(10),
        ..Default::default()
    };
    let o = stack(|k| if k % 2 == 1 { 0.1 } else { 0.0 }, 1.0, 2.0, solver);
    assert!(o.drift < 1e-6 * 0.1, "{:e}", o.drift);
    assert_eq!(o.contacts, (76, 76));
}
