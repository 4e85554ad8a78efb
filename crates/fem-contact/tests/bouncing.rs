//! The contact layer in a time step: a ball dropped on a plane, stepped by Solfec's scheme
//! for a point mass (`q^{t+h/2} = q^t + (h/2)u^t`, `u^{t+h} = u^t + h g + A⁻¹Hᵀr`,
//! `q^{t+h} = q^{t+h/2} + (h/2)u^{t+h}`), detection at the mid-step configuration, Newton
//! restitution `e = 0.8`. The apex heights of the first bounces are `h₀ e^{2k}`; the error
//! shrinks with the step (first order: the impact happens within a step).

mod common;

use common::Particle;
use fem_contact::body::{AssemblySettings, ContactBody, assemble};
use fem_contact::detect::{
    DetectSettings, MaterialTable, Obstacle, PlacedShape, Placement, Shape, constraints_of, detect,
};
use fem_contact::{NsgsSettings, SurfaceMaterial, solve};
use nalgebra::Vector3;

/// Apex heights (of the ball's bottom) after each of the first `bounces` bounces.
fn apexes(h: f64, bounces: usize) -> Vec<f64> {
    let (radius, h0, g, e) = (0.1, 1.0, 9.81, 0.8);
    let materials = MaterialTable {
        default: SurfaceMaterial::new(0.0, e).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0],
    };
    let plane = [Obstacle::Plane {
        point: Vector3::zeros(),
        normal: Vector3::z(),
    }];
    let mut q = Vector3::new(0.0, 0.0, radius + h0);
    let mut u = Vector3::zeros();
    let mut out = Vec::new();
    let mut top = f64::NEG_INFINITY;
    let mut rising = false;
    let settings = NsgsSettings {
        tolerance: 1e-12,
        ..Default::default()
    };
    for _ in 0..(20.0 / h) as usize {
        let mid = q + u * (h / 2.0);
        let free = u + Vector3::new(0.0, 0.0, -g * h);
        let shapes = [PlacedShape {
            shape: Shape::sphere(radius).unwrap(),
            placement: Placement::at(mid),
            material: 0,
        }];
        let found = detect(&shapes, &plane, &DetectSettings { prediction: 0.0 }).unwrap();
        let cs = constraints_of(&found, &shapes, &materials);
        let mut ball = Particle::new(1.0, mid, u.into(), free.into());
        let a = assemble(
            &cs,
            &[&ball as &dyn ContactBody],
            &AssemblySettings::default(),
        )
        .unwrap();
        let mut r = vec![Vector3::zeros(); cs.len()];
        assert!(solve(&a.problem, &mut r, &settings).unwrap().converged);
        a.apply(&r, &mut [&mut ball as &mut dyn ContactBody]);
        u = Vector3::from_column_slice(&ball.velocity);
        q = mid + u * (h / 2.0);
        if !cs.is_empty() {
            rising = true;
            top = f64::NEG_INFINITY;
        }
        if rising {
            let z = q.z - radius;
            if z > top {
                top = z;
            } else if u.z < 0.0 {
                out.push(top);
                rising = false;
                if out.len() == bounces {
                    break;
                }
            }
        }
    }
    out
}

#[test]
fn apex_heights_follow_e_to_the_2k_at_first_order() {
    let bounces = 4;
    let exact: Vec<f64> = (1..=bounces).map(|k| 0.8f64.powi(2 * k as i32)).collect();
    let mut errors = Vec::new();
    for h in [2e-3, 1e-3, 5e-4, 2.5e-4] {
        let a = apexes(h, bounces);
        assert_eq!(a.len(), bounces, "h = {h}: {a:?}");
        let err = a
            .iter()
            .zip(&exact)
            .map(|(x, y)| (x - y).abs() / y)
            .fold(0.0, f64::max);
        errors.push(err);
    }
    // Measured (docs/validation.md): 9.3e-3, 3.7e-3, 2.5e-3, 1.8e-3 — decreasing with every
    // halving, order 0.80 over the three: first order, made erratic by where in its step
    // each impact falls (the ball penetrates by up to h·v before the impulse acts).
    for w in errors.windows(2) {
        assert!(w[1] < w[0], "{errors:?}");
    }
    let order = (errors[0] / errors[3]).log2() / 3.0;
    assert!(order > 0.7 && errors[3] < 2e-3, "{errors:?}");
}
