//! A column of bodies resting on each other on a plane: one step of gravity, the impulses
//! hold every body (the closed form: each contact carries the weight above it times h).

mod common;

use common::Rigid;
use fem_contact::body::{AssemblySettings, ContactBody, assemble};
use fem_contact::detect::{
    DetectSettings, MaterialTable, Obstacle, PlacedShape, Placement, Shape, constraints_of, detect,
};
use fem_contact::{NsgsSettings, SurfaceMaterial, solve};
use nalgebra::Vector3;

#[test]
fn stack_of_ten_boxes_holds_its_weight() {
    let (m, g, h, n) = (2.0, 9.81, 1e-3, 10);
    let shapes: Vec<PlacedShape> = (0..n)
        .map(|k| PlacedShape {
            shape: Shape::cuboid([0.5, 0.5, 0.5]).unwrap(),
            placement: Placement::at(Vector3::new(0.0, 0.0, 0.5 + k as f64)),
            material: 0,
        })
        .collect();
    let mut bodies: Vec<Rigid> = (0..n)
        .map(|k| {
            Rigid::cuboid(
                m,
                [0.5; 3],
                Vector3::new(0.0, 0.0, 0.5 + k as f64),
                [0.0; 6],
                [0.0, 0.0, -g * h, 0.0, 0.0, 0.0],
            )
        })
        .collect();
    let found = detect(
        &shapes,
        &[Obstacle::Plane {
            point: Vector3::zeros(),
            normal: Vector3::z(),
        }],
        &DetectSettings { prediction: 1e-6 },
    )
    .unwrap();
    assert_eq!(found.len(), 4 * n);
    let materials = MaterialTable {
        default: SurfaceMaterial::new(0.5, 0.0).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0],
    };
    let cs = constraints_of(&found, &shapes, &materials);
    let refs: Vec<&dyn ContactBody> = bodies.iter().map(|b| b as &dyn ContactBody).collect();
    let a = assemble(&cs, &refs, &AssemblySettings::default()).unwrap();
    // NSGS alone needs tens of thousands of sweeps here (69 102 to 1e-10 measured: the four
    // corners of a face are redundant, W is singular and strongly coupled through the
    // rotations); the global Newton polish after 50 sweeps finishes in a few iterations.
    let alone = solve(
        &a.problem,
        &mut vec![Vector3::zeros(); cs.len()],
        &NsgsSettings {
            tolerance: 1e-10,
            max_sweeps: 2000,
            polish_after: None,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!alone.converged);
    let mut r = vec![Vector3::zeros(); cs.len()];
    let rep = solve(
        &a.problem,
        &mut r,
        &NsgsSettings {
            tolerance: 1e-10,
            polish_after: Some(50),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        rep.converged && rep.sweeps == 50 && rep.polish_iterations <= 10,
        "{rep:?}"
    );
    // Warm-started from its own solution: one sweep.
    let again = solve(
        &a.problem,
        &mut r.clone(),
        &NsgsSettings {
            tolerance: 1e-10,
            check_every: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(again.sweeps, 1);
    let mut muts: Vec<&mut dyn ContactBody> = bodies
        .iter_mut()
        .map(|b| b as &mut dyn ContactBody)
        .collect();
    a.apply(&r, &mut muts);
    for b in &bodies {
        assert!(
            b.velocity.iter().all(|v| v.abs() < 1e-8 * g * h),
            "{:?}",
            b.velocity
        );
    }
    // The four points under body k carry (n − k) m g h together.
    for k in 0..n {
        let total: f64 = cs
            .iter()
            .zip(&r)
            .filter(|(c, _)| {
                let z = c.point.z;
                (z - k as f64).abs() < 1e-9
            })
            .map(|(_, x)| x[0])
            .sum();
        assert!(
            (total - (n - k) as f64 * m * g * h).abs() < 1e-8 * m * g * h * n as f64,
            "level {k}: {total}"
        );
    }
}
