//! The mass properties and surfaces of shapes (used by a scene to mass and draw its bodies):
//! a sphere, a box, and the convex hull of a box's corners shifted off the origin, against
//! closed forms.

use fem_contact::detect::Shape;
use nalgebra::{Matrix3, Vector3};

#[test]
fn sphere_box_and_hull_have_their_closed_form_mass_properties() {
    let rho = 7.0;
    let s = Shape::sphere(0.5).unwrap().mass_properties(rho).unwrap();
    let m = rho * 4.0 / 3.0 * std::f64::consts::PI * 0.125;
    assert!((s.mass - m).abs() < 1e-12 * m);
    assert!(s.centre.norm() < 1e-15);
    assert!((s.inertia - Matrix3::identity() * (0.4 * m * 0.25)).norm() < 1e-12 * m);

    let (a, b, c) = (1.0, 2.0, 3.0);
    let bx = Shape::cuboid([a / 2.0, b / 2.0, c / 2.0])
        .unwrap()
        .mass_properties(rho)
        .unwrap();
    let m = rho * a * b * c;
    let j = Vector3::new(b * b + c * c, a * a + c * c, a * a + b * b) * (m / 12.0);
    assert!((bx.mass - m).abs() < 1e-12 * m);
    assert!((bx.inertia - Matrix3::from_diagonal(&j)).norm() < 1e-12 * m);

    // The hull of the corners, centred at (1, −2, 0.5): the same box, its centre there.
    let centre = Vector3::new(1.0, -2.0, 0.5);
    let corners: Vec<Vector3<f64>> = (0..8)
        .map(|k| {
            centre
                + Vector3::new(
                    if k & 1 == 0 { -a } else { a },
                    if k & 2 == 0 { -b } else { b },
                    if k & 4 == 0 { -c } else { c },
                ) * 0.5
        })
        .collect();
    let hull = Shape::convex_hull(&corners).unwrap();
    let h = hull.mass_properties(rho).unwrap();
    assert!((h.mass - m).abs() < 1e-12 * m, "{}", h.mass);
    assert!((h.centre - centre).norm() < 1e-12);
    assert!(
        (h.inertia - Matrix3::from_diagonal(&j)).norm() < 1e-10 * m,
        "{}",
        h.inertia
    );
    // Its surface: 12 triangles over the 8 corners; its bounding radius about the origin.
    let (points, triangles) = hull.triangles(8);
    assert_eq!((points.len(), triangles.len()), (8, 12));
    let far = corners.iter().map(|p| p.norm()).fold(0.0, f64::max);
    assert!(hull.bounding_radius() >= far - 1e-12);
    // A ball's is its radius (not the corner of its box, √3 times it).
    assert!((Shape::sphere(0.05).unwrap().bounding_radius() - 0.05).abs() < 1e-15);
    let (p, t) = Shape::sphere(1.0).unwrap().triangles(6);
    assert!(!t.is_empty() && p.iter().all(|x| (x.norm() - 1.0).abs() < 1e-12));
}
