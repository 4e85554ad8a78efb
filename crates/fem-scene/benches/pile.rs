//! A pile of 10⁴ rigid bodies settling on a plane, through the scene's whole step (bodies'
//! begin and end, detection, rule (R), assembly, the warm-started NSGS with its polish, the
//! impulses back): contact updates per core-second (contact points × steps / CPU seconds, on
//! one thread) and the share of the step in each part. The baseline, measured in the same run,
//! is the same bodies three sizes apart falling freely (no obstacle, no contact: the bodies'
//! own step and an empty detection).
//!
//! 20 × 20 columns of 25 bodies, spheres and cubes alternating, each body resting on the one
//! below with a gap of 1e-4 of its size (the pile settles by that much in the first steps),
//! friction 0.5, h = 1e-3, RIG_POS, the scene's default solver settings.
//!
//! `cargo bench -p fem-scene --bench pile [-- STEPS [NX NY NZ]]` (default 20 steps, 20 × 20 × 25;
//! the size lets `benches/siconos_pile.py` run Siconos on the same pile).

use std::time::Instant;

use fem_contact::detect::{MaterialTable, Obstacle, Shape};
use fem_contact::{NsgsSettings, SurfaceMaterial};
use fem_rigid::{RigidBodies, RigidStepper, Scheme};
use fem_scene::rigid::{RigidGroup, body_of_shape};
use fem_scene::{BodyGroup, Prediction, SceneSettings, SceneStepper};
use fem_time::Stepper;
use nalgebra::Vector3;

/// The pile (`touching`), or the same bodies three sizes apart with no floor (nothing to
/// meet: the baseline).
fn pile(touching: bool, (nx, ny, nz): (usize, usize, usize)) -> SceneStepper {
    let a = 0.1;
    let gap = if touching { 1e-4 * a } else { 2.0 * a };
    let mut set = RigidBodies::new([0.0, 0.0, -9.81]).unwrap();
    let mut shapes = Vec::new();
    let sphere = Shape::sphere(a / 2.0).unwrap();
    let cube = Shape::cuboid([a / 2.0; 3]).unwrap();
    for i in 0..nx {
        for j in 0..ny {
            for k in 0..nz {
                let shape = if (i + j + k) % 2 == 0 { &sphere } else { &cube };
                let mut b = body_of_shape(shape, 1000.0).unwrap();
                b.position = [
                    i as f64 * 1.5 * a,
                    j as f64 * 1.5 * a,
                    a / 2.0 + gap + k as f64 * (a + gap),
                ];
                set.push(b).unwrap();
                shapes.push(shape.clone());
            }
        }
    }
    let n = shapes.len();
    let stepper = RigidStepper::new(set, Scheme::RigPos, 1e-3, 0.0).unwrap();
    let group = RigidGroup::new(stepper, shapes, vec![0; n]).unwrap();
    let obstacles = if touching {
        vec![Obstacle::Plane {
            point: Vector3::zeros(),
            normal: Vector3::z(),
        }]
    } else {
        Vec::new()
    };
    let materials = MaterialTable {
        default: SurfaceMaterial::new(0.5, 0.0).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0; obstacles.len()],
    };
    SceneStepper::new(
        vec![Box::new(group) as Box<dyn BodyGroup>],
        obstacles,
        materials,
        &[],
        SceneSettings {
            solver: NsgsSettings {
                polish_after: Some(10),
                ..Default::default()
            },
            prediction: Prediction::Auto,
        },
    )
    .unwrap()
}

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let steps = numbers.first().copied().unwrap_or(20);
    let size = match numbers[..] {
        [_, nx, ny, nz, ..] => (nx, ny, nz),
        _ => (20, 20, 25),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap();
    // Baseline: the same bodies falling freely.
    let mut free = pile(false, size);
    let start = Instant::now();
    for _ in 0..steps {
        free.step().unwrap();
    }
    let free_seconds = start.elapsed().as_secs_f64();
    // The pile.
    let mut s = pile(true, size);
    let (mut contact_steps, mut sweeps, mut worst_error) = (0usize, 0u64, 0.0f64);
    let start = Instant::now();
    for _ in 0..steps {
        s.step().unwrap();
        let last = s.last_solve();
        contact_steps += last.contacts;
        sweeps += last.report.sweeps;
        worst_error = worst_error.max(last.report.error);
    }
    let seconds = start.elapsed().as_secs_f64();
    let t = s.timing();
    let total = (t.bodies + t.detection + t.assembly + t.solve + t.update).as_secs_f64();
    let share = |d: std::time::Duration| 100.0 * d.as_secs_f64() / total;
    println!(
        "pile of {} bodies, {steps} steps on one thread: {:.3} s ({:.1} ms a step), {} contact points in the last step",
        s.n_bodies(),
        seconds,
        1e3 * seconds / steps as f64,
        s.last_solve().contacts
    );
    println!(
        "contact updates per core-second: {:.3e} ({} contact points × steps)",
        contact_steps as f64 / seconds,
        contact_steps
    );
    println!(
        "share of the step: bodies {:.0} %, detection {:.0} %, assembly {:.0} %, solver {:.0} %, impulses back {:.0} %",
        share(t.bodies),
        share(t.detection),
        share(t.assembly),
        share(t.solve),
        share(t.update)
    );
    println!(
        "sweeps per step {:.1}, largest final error {worst_error:.1e}",
        sweeps as f64 / steps as f64
    );
    println!(
        "baseline, the bodies falling freely apart ({} contact points): {:.3} s ({:.2} ms a step); the pile's step is {:.1} times that",
        free.last_solve().contacts,
        free_seconds,
        1e3 * free_seconds / steps as f64,
        seconds / free_seconds
    );
}
