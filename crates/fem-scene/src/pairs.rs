//! Contact on a solid's faces (issue 24 part B; docs/theory/contact.md §10): one solid's
//! contact nodes against another solid's boundary faces, and a rigid body's shape against a
//! solid's faces.
//!
//! **Solid against solid: one pass, node to face.** For each pair of solids the nodes of
//! the *slave* — the one whose contact faces are finer (smaller mean size), the first on a
//! tie — are projected onto the faces of the *master* (closest point, [`project`]); a node
//! whose projection falls inside a face, within the prediction distance in front of it and
//! less than half the face's size behind it, is a contact point with the master's outward
//! normal, the node on the first side and the face point, with its shape functions, on the
//! second. Why one pass and not two (symmetric): on matching meshes (two bars head on) every
//! node of one surface sits on a node of the other, and the second pass would add the same
//! constraint again, mirrored: `W` singular, the impulse split between the two copies
//! arbitrarily, NSGS slower. The price is the classical one: the master's nodes may cross
//! the slave's faces by what the slave's mesh does not resolve, which the finer-slave rule
//! keeps small. Solfec's point contacts from face pairs (clipping two faces' polygons) are
//! not built: the clipped points move over both faces as the bodies slide, where the node is
//! a material point of the slave.
//!
//! **A shape against a solid's faces.** For each convex shape of another group (a rigid
//! body) near a face, parry's `contact` query against the face's triangles (a quad is split
//! in two, a tri6 in its four flat sub-triangles) gives the nearest points; the point on the face, with the face's shape functions,
//! is the solid's side. A point at a face's corner is left to the node's own contact (the
//! node's ball meets the shape already), so a box lying on a solid is not held twice.

use nalgebra::Vector3;

use fem_contact::detect::{PlacedShape, box_pairs, shape_against_triangle};

use crate::group::{SurfaceContact, SurfaceParty};
use crate::solid::SolidBody;
use crate::solid_faces::project;

/// How far outside a face (reference coordinates) a projection still belongs to it: the
/// rounding of a node exactly on the face's edge.
const ON_FACE: f64 = 1e-9;

/// An axis-aligned box: lower and upper corners.
type Bounds = (Vector3<f64>, Vector3<f64>);

/// The boxes of a body's faces, grown by `grow` plus half the face's size (a point behind
/// a face is found to that depth).
fn face_boxes(b: &SolidBody, grow: f64) -> Vec<(Vector3<f64>, Vector3<f64>)> {
    let s = &b.surface;
    (0..s.faces.len())
        .map(|f| {
            let (x, n) = s.corners(f);
            let mut lo = x[0];
            let mut hi = x[0];
            for p in &x[1..n] {
                lo = lo.inf(p);
                hi = hi.sup(p);
            }
            let g = Vector3::repeat(grow + 0.5 * s.face_size[f]);
            (lo - g, hi + g)
        })
        .collect()
}

fn mean_face_size(b: &SolidBody) -> f64 {
    let s = &b.surface.face_size;
    if s.is_empty() {
        f64::INFINITY
    } else {
        s.iter().sum::<f64>() / s.len() as f64
    }
}

/// The contact points on the faces of `bodies` (module documentation).
pub(crate) fn surface_contacts(
    bodies: &[SolidBody],
    shapes: &[PlacedShape],
    foreign: &[bool],
    prediction: f64,
) -> Vec<SurfaceContact> {
    let mut out = Vec::new();
    let boxes: Vec<Vec<(Vector3<f64>, Vector3<f64>)>> = bodies
        .iter()
        .map(|b| face_boxes(b, 0.5 * prediction))
        .collect();
    let mut shape_start = 0;
    let starts: Vec<usize> = bodies
        .iter()
        .map(|b| {
            let s = shape_start;
            shape_start += b.contact_nodes().len();
            s
        })
        .collect();
    // Solid against solid.
    for a in 0..bodies.len() {
        for m in a + 1..bodies.len() {
            // (Equal meshes placed apart differ in the rounding of their sizes: a tie.)
            let finer = mean_face_size(&bodies[m]) < (1.0 - 1e-9) * mean_face_size(&bodies[a]);
            let (slave, master) = if finer { (m, a) } else { (a, m) };
            nodes_on_faces(
                bodies,
                slave,
                master,
                &boxes[master],
                starts[slave],
                prediction,
                &mut out,
            );
        }
    }
    // Shapes of other groups against every solid's faces.
    let queries: Vec<(usize, Bounds)> = shapes
        .iter()
        .enumerate()
        .filter(|(s, sh)| foreign.get(*s).copied().unwrap_or(false) && sh.shape.is_convex())
        .map(|(s, sh)| {
            let r = Vector3::repeat(sh.shape.bounding_radius() + 0.5 * prediction);
            let c = sh.placement.translation;
            (s, (c - r, c + r))
        })
        .collect();
    if queries.is_empty() {
        return out;
    }
    let query_boxes: Vec<(Vector3<f64>, Vector3<f64>)> = queries.iter().map(|q| q.1).collect();
    for (b, body) in bodies.iter().enumerate() {
        let same = 1e-9 * body.size();
        let mut found: Vec<(usize, Vector3<f64>)> = Vec::new();
        for (q, f) in box_pairs(&boxes[b], &query_boxes) {
            let s = queries[q].0;
            let (x, n) = body.surface.corners(f);
            // A tri6 is queried as its four flat sub-triangles (corners and mid-sides), the
            // point then projected onto the curved face.
            let triangles: &[[usize; 3]] = match n {
                3 => &[[0, 1, 2]],
                6 => &[[0, 3, 5], [3, 1, 4], [5, 4, 2], [3, 4, 5]],
                _ => &[[0, 1, 2], [0, 2, 3]],
            };
            for t in triangles {
                let tri = [x[t[0]], x[t[1]], x[t[2]]];
                let Some(c) = shape_against_triangle(&shapes[s], &tri, prediction) else {
                    continue;
                };
                let proj = project(&x[..n], &c.on_triangle);
                if c.normal.dot(&proj.normal) <= 0.0
                    || proj.weights.iter().any(|&w| w > 1.0 - 1e-9)
                    || found
                        .iter()
                        .any(|(s2, p)| *s2 == s && (p - proj.point).norm() <= same)
                {
                    continue;
                }
                found.push((s, proj.point));
                body.surface.hand_out(&proj.point, f, proj.weights);
                out.push(SurfaceContact {
                    first: SurfaceParty::Shape(s),
                    second: b,
                    point: proj.point,
                    point_second: proj.point,
                    normal: c.normal,
                    gap: c.gap,
                    materials: (shapes[s].material, body.material()),
                });
            }
        }
    }
    out
}

/// The slave's contact nodes against the master's faces: of the faces near a node that
/// face it (the face's normal against the node's), the nearest.
fn nodes_on_faces(
    bodies: &[SolidBody],
    slave: usize,
    master: usize,
    boxes: &[(Vector3<f64>, Vector3<f64>)],
    shape_start: usize,
    prediction: f64,
    out: &mut Vec<SurfaceContact>,
) {
    let (sb, mb) = (&bodies[slave], &bodies[master]);
    let surface = &sb.surface;
    let normals = surface.node_normals();
    let half = Vector3::repeat(0.5 * prediction);
    let queries: Vec<(Vector3<f64>, Vector3<f64>)> = surface
        .placed
        .iter()
        .map(|p| (p - half, p + half))
        .collect();
    let pairs = box_pairs(boxes, &queries);
    let mut i = 0;
    while i < pairs.len() {
        let j = pairs[i].0;
        let p = surface.placed[j];
        let mut best: Option<(f64, usize, crate::solid_faces::Projection)> = None;
        while i < pairs.len() && pairs[i].0 == j {
            let f = pairs[i].1;
            i += 1;
            let (x, n) = mb.surface.corners(f);
            let proj = project(&x[..n], &p);
            if proj.outside > ON_FACE || proj.normal.dot(&normals[j]) >= 0.0 {
                continue;
            }
            let d = (p - proj.point).norm();
            if best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
                best = Some((d, f, proj));
            }
        }
        let (Some((_, f, proj)), Some(k)) = (best, surface.contact[j]) else {
            continue;
        };
        if proj.gap > prediction || proj.gap < -0.5 * mb.surface.face_size[f] {
            continue;
        }
        mb.surface.hand_out(&proj.point, f, proj.weights);
        out.push(SurfaceContact {
            first: SurfaceParty::Own {
                body: slave,
                shape: shape_start + k,
            },
            second: master,
            point: sb.placed_nodes()[k],
            point_second: proj.point,
            normal: proj.normal,
            gap: proj.gap,
            materials: (sb.material(), mb.material()),
        });
    }
}
