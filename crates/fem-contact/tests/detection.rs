//! Detection manifolds: a box flat on a plane gets four points, a sphere–sphere gap is the
//! distance of the centres less the radii, a box on a box gets a face manifold, a
//! non-convex surface is refused where convexity is needed.

use fem_contact::detect::{
    DetectSettings, Obstacle, Other, PlacedShape, Placement, Shape, ShapeError, detect,
};
use nalgebra::{Matrix3, Rotation3, Vector3};

fn placed(shape: Shape, at: Vector3<f64>) -> PlacedShape {
    PlacedShape {
        shape,
        placement: Placement::at(at),
        material: 0,
    }
}

fn ground() -> Obstacle {
    Obstacle::Plane {
        point: Vector3::zeros(),
        normal: Vector3::z(),
    }
}

#[test]
fn box_flat_on_a_plane_has_four_points() {
    let half = [0.5, 0.3, 0.2];
    for gap in [-1e-4, 0.0, 1e-4] {
        let b = placed(
            Shape::cuboid(half).unwrap(),
            Vector3::new(1.0, 2.0, 0.2 + gap),
        );
        let d = detect(&[b], &[ground()], &DetectSettings { prediction: 1e-3 }).unwrap();
        assert_eq!(d.len(), 4, "gap {gap}: {d:?}");
        let mut corners: Vec<(i32, i32)> = d
            .iter()
            .map(|c| {
                assert!((c.normal - Vector3::z()).norm() < 1e-14);
                assert!((c.gap - gap).abs() < 1e-12, "{} vs {gap}", c.gap);
                assert_eq!(c.second, Other::Obstacle(0));
                assert!((c.point.z - gap / 2.0).abs() < 1e-12);
                (
                    ((c.point.x - 1.0) / half[0]).round() as i32,
                    ((c.point.y - 2.0) / half[1]).round() as i32,
                )
            })
            .collect();
        corners.sort();
        assert_eq!(corners, vec![(-1, -1), (-1, 1), (1, -1), (1, 1)]);
        // Each corner is its own feature: the four contacts have distinct identities.
        let mut ids: Vec<[u32; 4]> = d.iter().map(|c| c.features).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 4);
    }
    // Tilted by 0.1 rad about y, one edge down: two points, not four.
    let r = Rotation3::from_axis_angle(&Vector3::y_axis(), 0.1);
    let b = PlacedShape {
        shape: Shape::cuboid(half).unwrap(),
        placement: Placement {
            translation: Vector3::new(0.0, 0.0, 0.2 * 0.1f64.cos() + 0.5 * 0.1f64.sin()),
            rotation: *r.matrix(),
        },
        material: 0,
    };
    let d = detect(&[b], &[ground()], &DetectSettings { prediction: 1e-6 }).unwrap();
    assert_eq!(d.len(), 2, "{d:?}");
}

#[test]
fn sphere_sphere_gap_and_normal() {
    let (r1, r2) = (0.3, 0.5);
    let c1 = Vector3::new(0.1, 0.2, 0.3);
    let dir = Vector3::new(1.0, -2.0, 0.5).normalize();
    for gap in [-0.01, 0.0, 0.02] {
        let c2 = c1 + dir * (r1 + r2 + gap);
        let d = detect(
            &[
                placed(Shape::sphere(r1).unwrap(), c1),
                placed(Shape::sphere(r2).unwrap(), c2),
            ],
            &[],
            &DetectSettings { prediction: 0.05 },
        )
        .unwrap();
        assert_eq!(d.len(), 1);
        let c = d[0];
        assert_eq!((c.first, c.second), (0, Other::Body(1)));
        assert!((c.gap - gap).abs() < 1e-14, "{} vs {gap}", c.gap);
        // From the second into the first: −dir.
        assert!((c.normal + dir).norm() < 1e-14);
        let expected = c1 + dir * (r1 + gap / 2.0);
        assert!((c.point - expected).norm() < 1e-14);
    }
    // Beyond the prediction distance: nothing.
    let d = detect(
        &[
            placed(Shape::sphere(r1).unwrap(), c1),
            placed(Shape::sphere(r2).unwrap(), c1 + dir * 0.9),
        ],
        &[],
        &DetectSettings { prediction: 0.05 },
    )
    .unwrap();
    assert!(d.is_empty());
}

#[test]
fn box_on_box_face_contact() {
    let lower = placed(Shape::cuboid([1.0, 1.0, 0.5]).unwrap(), Vector3::zeros());
    let upper = placed(
        Shape::cuboid([0.4, 0.3, 0.2]).unwrap(),
        Vector3::new(0.1, -0.2, 0.7),
    );
    let d = detect(&[lower, upper], &[], &DetectSettings { prediction: 1e-6 }).unwrap();
    assert_eq!(d.len(), 4, "{d:?}");
    for c in &d {
        assert!(c.gap.abs() < 1e-12);
        // First = lower (0), second = upper (1): the normal points from the upper into the
        // lower box, −z.
        assert!((c.normal + Vector3::z()).norm() < 1e-12, "{:?}", c.normal);
        assert!((c.point.z - 0.5).abs() < 1e-12);
    }
}

#[test]
fn convex_hull_rests_like_its_shape() {
    // The hull of a box's corners and of interior points is the box.
    let mut pts = Vec::new();
    for sx in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sz in [-1.0, 1.0] {
                pts.push(Vector3::new(0.5 * sx, 0.3 * sy, 0.2 * sz));
            }
        }
    }
    pts.push(Vector3::new(0.1, 0.0, 0.05));
    let hull = Shape::convex_hull(&pts).unwrap();
    let d = detect(
        &[placed(hull, Vector3::new(0.0, 0.0, 0.2))],
        &[ground()],
        &DetectSettings { prediction: 1e-6 },
    )
    .unwrap();
    assert_eq!(d.len(), 4, "{d:?}");
    assert!(matches!(
        Shape::convex_hull(&pts[..3]),
        Err(ShapeError::Flat(3))
    ));
}

/// A non-convex closed surface is refused as a convex body, naming a vertex outside a face;
/// as a triangle mesh it is accepted and meets a convex body.
#[test]
fn non_convex_surface_is_refused_where_convexity_is_needed() {
    // An octahedron with one vertex pushed inward (a dent).
    let mut v = vec![
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(-1.0, 0.0, 0.0),
        Vector3::new(0.0, 1.0, 0.0),
        Vector3::new(0.0, -1.0, 0.0),
        Vector3::new(0.0, 0.0, 1.0),
        Vector3::new(0.0, 0.0, -1.0),
    ];
    let t: Vec<[u32; 3]> = vec![
        [0, 2, 4],
        [2, 1, 4],
        [1, 3, 4],
        [3, 0, 4],
        [2, 0, 5],
        [1, 2, 5],
        [3, 1, 5],
        [0, 3, 5],
    ];
    assert!(Shape::convex_surface(&v, &t).is_ok());
    v[4] = Vector3::new(0.0, 0.0, -0.2);
    let e = Shape::convex_surface(&v, &t).unwrap_err();
    assert!(matches!(e, ShapeError::NotConvex { .. }), "{e:?}");
    assert!(e.to_string().contains("not convex"));
    let mesh = Shape::triangle_mesh(&v, &t).unwrap();
    assert!(!mesh.is_convex());
    let ball = placed(Shape::sphere(0.1).unwrap(), Vector3::new(0.0, 0.0, -1.1));
    let d = detect(
        &[ball],
        &[Obstacle::Fixed {
            shape: mesh,
            placement: Placement {
                translation: Vector3::zeros(),
                rotation: Matrix3::identity(),
            },
        }],
        &DetectSettings { prediction: 0.01 },
    )
    .unwrap();
    assert!(!d.is_empty());
    assert!(
        d.iter()
            .all(|c| c.gap.abs() < 1e-12 && (c.normal + Vector3::z()).norm() < 1e-9),
        "{d:?}"
    );
}

#[test]
fn sizes_are_checked() {
    assert!(matches!(Shape::sphere(0.0), Err(ShapeError::Size { .. })));
    assert!(matches!(
        Shape::sphere(f64::NAN),
        Err(ShapeError::Size { .. })
    ));
    assert!(matches!(
        Shape::cuboid([1.0, -1.0, 1.0]),
        Err(ShapeError::Size { .. })
    ));
    assert!(matches!(
        Shape::convex_hull(&[Vector3::new(f64::INFINITY, 0.0, 0.0)]),
        Err(ShapeError::NotFinite(0))
    ));
}

/// Many bodies: the same contacts, in the same order, on 1 and 2 threads; each pair found
/// by the BVH equals what a brute-force all-pairs test finds.
#[test]
fn broad_phase_finds_every_pair_deterministically() {
    let mut bodies = Vec::new();
    for i in 0..6 {
        for j in 0..6 {
            for k in 0..3 {
                let c = Vector3::new(i as f64 * 0.59, j as f64 * 0.61, 0.3 + k as f64 * 0.58);
                let s = if (i + j + k) % 2 == 0 {
                    Shape::sphere(0.3).unwrap()
                } else {
                    Shape::cuboid([0.3, 0.3, 0.3]).unwrap()
                };
                bodies.push(placed(s, c));
            }
        }
    }
    let settings = DetectSettings { prediction: 0.05 };
    let run = || detect(&bodies, &[ground()], &settings).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(run);
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(run);
    assert_eq!(one, two);
    assert!(one.len() > 100);
    // Brute force over pairs of bodies.
    let mut brute = 0;
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            brute += detect(&[bodies[i].clone(), bodies[j].clone()], &[], &settings)
                .unwrap()
                .len();
        }
    }
    let found = one
        .iter()
        .filter(|c| matches!(c.second, Other::Body(_)))
        .count();
    assert_eq!(found, brute);
}

#[test]
fn a_ball_against_a_plane_takes_the_planes_normal_even_with_its_centre_on_it() {
    // A solid's node is detected as a tiny ball (docs/theory/contact.md §9); a node that
    // starts exactly on the plane has its centre on the half-space's boundary. The normal of
    // a ball against a plane is the plane's wherever the centre is: the gap is the centre's
    // signed distance less the radius, the point the midpoint of the ball's lowest point and
    // the centre's projection. (Parry's ball–convex manifold takes, for a centre on the
    // boundary, the direction from the plane's anchor point to the centre: a lateral normal.)
    let r = 1e-9;
    let tilted = Vector3::new(0.3, -0.2, 1.0).normalize();
    let anchor = Vector3::new(0.5, -0.25, 0.125);
    for (normal, point) in [(Vector3::z(), Vector3::zeros()), (tilted, anchor)] {
        let plane = Obstacle::Plane { point, normal };
        // A direction in the plane, to place centres on it away from the anchor.
        let along = normal.cross(&Vector3::x()).normalize();
        for (offset, height) in [
            (0.0, 0.0),
            (0.1, 0.0),
            (0.05, 0.0),
            (0.1, 0.5 * r),
            (0.1, -0.5 * r),
            (0.1, 2.0 * r),
        ] {
            let centre = point + along * offset + normal * height;
            let d = detect(
                &[placed(Shape::sphere(r).unwrap(), centre)],
                std::slice::from_ref(&plane),
                &DetectSettings {
                    prediction: 4.0 * r,
                },
            )
            .unwrap();
            assert_eq!(d.len(), 1, "offset {offset}, height {height}: {d:?}");
            let c = &d[0];
            assert!(
                (c.normal - normal).norm() < 1e-12,
                "offset {offset}, height {height}: normal {:?}, the plane's {normal:?}",
                c.normal
            );
            assert!(
                (c.gap - (height - r)).abs() < 1e-12 * (1.0 + offset),
                "offset {offset}, height {height}: gap {} against {}",
                c.gap,
                height - r
            );
            let expected = centre - normal * (0.5 * (height + r));
            assert!(
                (c.point - expected).norm() < 1e-12,
                "offset {offset}, height {height}: point {:?} against {expected:?}",
                c.point
            );
        }
    }
}
