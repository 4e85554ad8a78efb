//! A solid's boundary faces as contact surfaces (issue 24 part B): the faces (tri3 of tet4
//! cells, quad4 of hex8 cells, tri6 of tet10 cells, ordered so that their normal points out of
//! the solid), and
//! the projection of a point onto a face, which gives the contact point's gap, normal and the
//! face's shape functions there (docs/theory/contact.md §10, eqs. C20–C22).
//!
//! The impulse `R` at a point `ξ` of a face goes to the face's nodes `a` with the weights
//! `N_a(ξ)`: `H = [… N_a(ξ) I₃ …]` (C21), so with DEF_EXP's lumped mass
//! `W = Σ_a N_a² / m_a I₃` for a point against a fixed party (C22).

use std::collections::HashMap;

use fem_mesh::CellKind;
use nalgebra::{Matrix2, Vector2, Vector3};

use crate::solid::SolidGroupError;

/// A boundary face: three (tri3) or four (quad4) mesh nodes, counter-clockwise seen from
/// outside, or six (tri6: the three corners so, then the mid-side nodes of the edges
/// (0, 1), (1, 2), (2, 0)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face {
    /// The mesh nodes (those past `corners` unused).
    pub nodes: [usize; 6],
    /// The number of nodes: 3, 4 or 6 (a tri6's corners and mid-sides).
    pub corners: u8,
}

impl Face {
    /// The mesh nodes.
    pub fn nodes(&self) -> &[usize] {
        &self.nodes[..self.corners as usize]
    }
}

/// The local faces of a tet4 and a hex8 cell, outward (Gmsh's node order).
const TET4: [&[usize]; 4] = [&[0, 2, 1], &[0, 1, 3], &[0, 3, 2], &[1, 2, 3]];
/// Gmsh's tet10 (mid-edge nodes 4..=9 on (0,1), (1,2), (2,0), (3,0), (3,2), (3,1),
/// `fem_elements::solid::shape::TET10_EDGES`): each face's corners as tet4's, then its
/// mid-sides.
const TET10: [&[usize]; 4] = [
    &[0, 2, 1, 6, 5, 4],
    &[0, 1, 3, 4, 9, 7],
    &[0, 3, 2, 7, 8, 6],
    &[1, 2, 3, 5, 8, 9],
];
const HEX8: [&[usize]; 6] = [
    &[0, 3, 2, 1],
    &[4, 5, 6, 7],
    &[0, 1, 5, 4],
    &[1, 2, 6, 5],
    &[2, 3, 7, 6],
    &[3, 0, 4, 7],
];

/// The boundary faces of the volume cells `connectivity` of `kind` (tet4, hex8, tet10): those
/// that belong to one cell only (a face known by its corners), in the order first met,
/// outward.
pub fn boundary_faces(
    kind: CellKind,
    connectivity: &[usize],
) -> Result<Vec<Face>, SolidGroupError> {
    let local: &[&[usize]] = match kind {
        CellKind::Tet4 => &TET4,
        CellKind::Hex8 => &HEX8,
        CellKind::Tet10 => &TET10,
        other => return Err(SolidGroupError::BoundaryOf(other.name())),
    };
    let n = kind.n_nodes();
    let mut count: HashMap<[usize; 4], (u32, usize)> = HashMap::new();
    let mut faces: Vec<Face> = Vec::new();
    for cell in connectivity.chunks_exact(n) {
        for f in local {
            let mut nodes = [usize::MAX; 6];
            for (k, &a) in f.iter().enumerate() {
                nodes[k] = cell[a];
            }
            // The corners (a tri6's mid-sides follow from them).
            let mut key = [usize::MAX; 4];
            let corners = if f.len() == 6 { 3 } else { f.len() };
            key[..corners].copy_from_slice(&nodes[..corners]);
            key.sort_unstable();
            let entry = count.entry(key).or_insert((0, faces.len()));
            if entry.0 == 0 {
                faces.push(Face {
                    nodes,
                    corners: f.len() as u8,
                });
            }
            entry.0 += 1;
        }
    }
    let mut once: Vec<(usize, Face)> = count
        .into_values()
        .filter(|(c, _)| *c == 1)
        .map(|(_, k)| (k, faces[k]))
        .collect();
    once.sort_unstable_by_key(|(k, _)| *k);
    Ok(once.into_iter().map(|(_, f)| f).collect())
}

/// The faces all of whose nodes are in `nodes` (sorted): the faces of a named surface.
pub fn faces_within(faces: &[Face], nodes: &[usize]) -> Vec<Face> {
    faces
        .iter()
        .filter(|f| f.nodes().iter().all(|n| nodes.binary_search(n).is_ok()))
        .copied()
        .collect()
}

/// A point projected onto a face.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    /// The face's shape functions at the projection point (node order; 0 past the face's
    /// nodes).
    pub weights: [f64; 6],
    /// The projection point (the nearest point of the face).
    pub point: Vector3<f64>,
    /// The face's unit outward normal there.
    pub normal: Vector3<f64>,
    /// The signed distance of the point along the normal (`< 0` behind the face).
    pub gap: f64,
    /// How far (in reference coordinates: barycentric or `|ξ| − 1`) the unconstrained
    /// projection lies outside the face; 0 inside.
    pub outside: f64,
}

/// The projection of `p` onto the face with node positions `x` (3, 4 or 6, outward order):
/// closest point of a triangle; Gauss–Newton on the bilinear quad `x(ξ, η) = Σ N_a x_a`
/// (C20), clamped to `[−1, 1]²`; Newton on the quadratic triangle (C23), clamped to it.
pub fn project(x: &[Vector3<f64>], p: &Vector3<f64>) -> Projection {
    match x.len() {
        3 => project_triangle(x, p),
        6 => project_tri6(x, p),
        _ => project_quad(x, p),
    }
}

fn project_triangle(x: &[Vector3<f64>], p: &Vector3<f64>) -> Projection {
    let (e1, e2) = (x[1] - x[0], x[2] - x[0]);
    let n = e1.cross(&e2);
    let normal = n.normalize();
    // Barycentric coordinates of the projection onto the plane.
    let m = Matrix2::new(e1.dot(&e1), e1.dot(&e2), e1.dot(&e2), e2.dot(&e2));
    let r = p - x[0];
    let s = m.try_inverse().map_or(Vector2::zeros(), |inv| {
        inv * Vector2::new(e1.dot(&r), e2.dot(&r))
    });
    let mut w = [1.0 - s.x - s.y, s.x, s.y];
    let outside = w.iter().map(|&c| (-c).max(0.0)).fold(0.0, f64::max);
    if outside > 0.0 {
        // The nearest point of the nearest edge.
        let mut best = (f64::INFINITY, [0.0; 3]);
        for (a, b) in [(0, 1), (1, 2), (2, 0)] {
            let d = x[b] - x[a];
            let t = ((p - x[a]).dot(&d) / d.dot(&d)).clamp(0.0, 1.0);
            let q = x[a] + t * d;
            let dist = (p - q).norm_squared();
            if dist < best.0 {
                let mut wt = [0.0; 3];
                wt[a] = 1.0 - t;
                wt[b] = t;
                best = (dist, wt);
            }
        }
        w = best.1;
    }
    let point = w[0] * x[0] + w[1] * x[1] + w[2] * x[2];
    Projection {
        weights: [w[0], w[1], w[2], 0.0, 0.0, 0.0],
        point,
        normal,
        gap: normal.dot(&(p - point)),
        outside,
    }
}

/// The corners of the reference square, in the face's node order.
const CORNERS: [(f64, f64); 4] = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];

fn bilinear(
    x: &[Vector3<f64>],
    xi: f64,
    eta: f64,
) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>, [f64; 4]) {
    let mut pos = Vector3::zeros();
    let mut dxi = Vector3::zeros();
    let mut deta = Vector3::zeros();
    let mut w = [0.0; 4];
    for (a, &(sa, ta)) in CORNERS.iter().enumerate() {
        w[a] = 0.25 * (1.0 + sa * xi) * (1.0 + ta * eta);
        pos += w[a] * x[a];
        dxi += 0.25 * sa * (1.0 + ta * eta) * x[a];
        deta += 0.25 * ta * (1.0 + sa * xi) * x[a];
    }
    (pos, dxi, deta, w)
}

fn project_quad(x: &[Vector3<f64>], p: &Vector3<f64>) -> Projection {
    let (mut xi, mut eta) = (0.0, 0.0);
    for _ in 0..20 {
        let (pos, a, b, _) = bilinear(x, xi, eta);
        let r = pos - p;
        let m = Matrix2::new(a.dot(&a), a.dot(&b), a.dot(&b), b.dot(&b));
        let Some(inv) = m.try_inverse() else { break };
        let d = inv * Vector2::new(-a.dot(&r), -b.dot(&r));
        // Far outside the face the bilinear map folds: stay within a band around it.
        xi = (xi + d.x).clamp(-3.0, 3.0);
        eta = (eta + d.y).clamp(-3.0, 3.0);
        if d.norm() < 1e-14 {
            break;
        }
    }
    let outside = (xi.abs() - 1.0).max(eta.abs() - 1.0).max(0.0);
    let (xi, eta) = (xi.clamp(-1.0, 1.0), eta.clamp(-1.0, 1.0));
    let (point, a, b, w) = bilinear(x, xi, eta);
    let normal = a.cross(&b).normalize();
    Projection {
        weights: [w[0], w[1], w[2], w[3], 0.0, 0.0],
        point,
        normal,
        gap: normal.dot(&(p - point)),
        outside,
    }
}

/// The tri6's shape functions at `(s, t)` (`L = (1 − s − t, s, t)`): corners
/// `N_a = L_a (2 L_a − 1)`, mid-sides `N = 4 L_a L_b` of the edges (0, 1), (1, 2), (2, 0)
/// (C23), their first derivatives by `s` and `t`, and their second derivatives (constant)
/// `∂ss, ∂st, ∂tt`.
pub fn tri6_shape(s: f64, t: f64) -> ([f64; 6], [f64; 6], [f64; 6]) {
    let l = [1.0 - s - t, s, t];
    let n = [
        l[0] * (2.0 * l[0] - 1.0),
        l[1] * (2.0 * l[1] - 1.0),
        l[2] * (2.0 * l[2] - 1.0),
        4.0 * l[0] * l[1],
        4.0 * l[1] * l[2],
        4.0 * l[2] * l[0],
    ];
    let ds = [
        1.0 - 4.0 * l[0],
        4.0 * l[1] - 1.0,
        0.0,
        4.0 * (l[0] - l[1]),
        4.0 * l[2],
        -4.0 * l[2],
    ];
    let dt = [
        1.0 - 4.0 * l[0],
        0.0,
        4.0 * l[2] - 1.0,
        -4.0 * l[1],
        4.0 * l[1],
        4.0 * (l[0] - l[2]),
    ];
    (n, ds, dt)
}

/// `∂²N/∂s², ∂²N/∂s∂t, ∂²N/∂t²` of the tri6 (constant).
const TRI6_SS: [f64; 6] = [4.0, 4.0, 0.0, -8.0, 0.0, 0.0];
const TRI6_ST: [f64; 6] = [4.0, 0.0, 0.0, -4.0, 4.0, -4.0];
const TRI6_TT: [f64; 6] = [4.0, 0.0, 4.0, 0.0, 0.0, -8.0];

fn combine(w: &[f64; 6], x: &[Vector3<f64>]) -> Vector3<f64> {
    w.iter().zip(x).map(|(w, x)| *w * x).sum()
}

/// The closest point of the quadratic triangle `x(s, t) = Σ N_a(s, t) x_a` (C23) to `p`:
/// Newton on `min ½|x(s, t) − p|²` from the flat corner triangle's projection (Gauss–Newton
/// where the Hessian is not positive), kept within a band around the face, then clamped to
/// it (`s, t ≥ 0`, `s + t ≤ 1`; `outside` says by how much it lay out, the largest `−L_a`).
fn project_tri6(x: &[Vector3<f64>], p: &Vector3<f64>) -> Projection {
    let flat = project_triangle(&x[..3], p);
    let (mut s, mut t) = (flat.weights[1], flat.weights[2]);
    for _ in 0..30 {
        let (n, ds, dt) = tri6_shape(s, t);
        let r = combine(&n, x) - p;
        let (a, b) = (combine(&ds, x), combine(&dt, x));
        let gn = Matrix2::new(a.dot(&a), a.dot(&b), a.dot(&b), b.dot(&b));
        let curvature = Matrix2::new(
            r.dot(&combine(&TRI6_SS, x)),
            r.dot(&combine(&TRI6_ST, x)),
            r.dot(&combine(&TRI6_ST, x)),
            r.dot(&combine(&TRI6_TT, x)),
        );
        let newton = gn + curvature;
        let m = if newton.determinant() > 0.0 && newton[(0, 0)] > 0.0 {
            newton
        } else {
            gn
        };
        let Some(inv) = m.try_inverse() else { break };
        let d = inv * Vector2::new(-a.dot(&r), -b.dot(&r));
        s = (s + d.x).clamp(-1.0, 2.0);
        t = (t + d.y).clamp(-1.0, 2.0);
        if d.norm() < 1e-15 {
            break;
        }
    }
    let outside = [1.0 - s - t, s, t]
        .iter()
        .map(|&c| (-c).max(0.0))
        .fold(0.0, f64::max);
    let (mut s, mut t) = (s.max(0.0), t.max(0.0));
    if s + t > 1.0 {
        let sum = s + t;
        s /= sum;
        t /= sum;
    }
    let (n, ds, dt) = tri6_shape(s, t);
    let point = combine(&n, x);
    let normal = combine(&ds, x).cross(&combine(&dt, x)).normalize();
    Projection {
        weights: n,
        point,
        normal,
        gap: normal.dot(&(p - point)),
        outside,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_quad(z: f64) -> Vec<Vector3<f64>> {
        vec![
            Vector3::new(0.0, 0.0, z),
            Vector3::new(1.0, 0.0, z),
            Vector3::new(1.0, 1.0, z),
            Vector3::new(0.0, 1.0, z),
        ]
    }

    #[test]
    fn the_faces_of_a_box_of_hex8_point_out_and_are_counted_once() {
        let mesh = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 1.0],
            [2, 2, 2],
            fem_mesh::generate::BoxCells::Hex8,
        )
        .unwrap();
        let faces = boundary_faces(CellKind::Hex8, &mesh.blocks[0].connectivity).unwrap();
        assert_eq!(faces.len(), 24);
        let centre = Vector3::new(0.5, 0.5, 0.5);
        for f in &faces {
            let x: Vec<Vector3<f64>> = f
                .nodes()
                .iter()
                .map(|&n| Vector3::from(mesh.points[n]))
                .collect();
            let c = x.iter().sum::<Vector3<f64>>() / 4.0;
            let proj = project(&x, &c);
            assert!(proj.normal.dot(&(c - centre)) > 0.0, "{f:?} points in");
        }
        let mesh = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 1.0],
            [1, 1, 1],
            fem_mesh::generate::BoxCells::Tet4,
        )
        .unwrap();
        let faces = boundary_faces(CellKind::Tet4, &mesh.blocks[0].connectivity).unwrap();
        // 24 tets about the face centres: 4 triangles per face of the cube.
        assert_eq!(faces.len(), 24);
        for f in &faces {
            let x: Vec<Vector3<f64>> = f
                .nodes()
                .iter()
                .map(|&n| Vector3::from(mesh.points[n]))
                .collect();
            let c = x.iter().sum::<Vector3<f64>>() / 3.0;
            assert!(project(&x, &c).normal.dot(&(c - centre)) > 0.0);
        }
    }

    #[test]
    fn a_point_above_a_quad_projects_to_its_bilinear_weights() {
        let x = unit_quad(0.0);
        let p = Vector3::new(0.25, 0.75, 0.3);
        let proj = project(&x, &p);
        assert!((proj.gap - 0.3).abs() < 1e-14);
        assert!((proj.point - Vector3::new(0.25, 0.75, 0.0)).norm() < 1e-14);
        // N_a(ξ = −0.5, η = 0.5).
        let expected = [0.1875, 0.0625, 0.1875, 0.5625];
        for (w, e) in proj.weights.iter().zip(expected) {
            assert!((w - e).abs() < 1e-14, "{:?}", proj.weights);
        }
        assert_eq!(proj.outside, 0.0);
        // Behind the face: a negative gap.
        assert!((project(&x, &Vector3::new(0.5, 0.5, -0.1)).gap + 0.1).abs() < 1e-14);
        // Outside the face: clamped to its edge, and said how far.
        let out = project(&x, &Vector3::new(1.5, 0.5, 0.0));
        assert!((out.point - Vector3::new(1.0, 0.5, 0.0)).norm() < 1e-12);
        assert!((out.outside - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_warped_quad_is_projected_orthogonally() {
        let mut x = unit_quad(0.0);
        x[2].z = 0.2;
        let p = Vector3::new(0.6, 0.4, 0.5);
        let proj = project(&x, &p);
        let (_, a, b, _) = {
            // The tangents at the projection point, from its weights' (ξ, η).
            let xi = 2.0 * (proj.weights[1] + proj.weights[2]) - 1.0;
            let eta = 2.0 * (proj.weights[2] + proj.weights[3]) - 1.0;
            bilinear(&x, xi, eta)
        };
        let r = p - proj.point;
        assert!(r.dot(&a).abs() < 1e-12 && r.dot(&b).abs() < 1e-12, "{r}");
        assert!((proj.weights.iter().sum::<f64>() - 1.0).abs() < 1e-14);
    }

    #[test]
    fn a_point_above_a_triangle_gets_its_barycentric_weights() {
        let x = [Vector3::zeros(), Vector3::x(), Vector3::y()];
        let proj = project(&x, &Vector3::new(0.2, 0.3, 0.1));
        assert!((proj.weights[0] - 0.5).abs() < 1e-14);
        assert!((proj.weights[1] - 0.2).abs() < 1e-14);
        assert!((proj.weights[2] - 0.3).abs() < 1e-14);
        assert!((proj.gap - 0.1).abs() < 1e-14);
        let out = project(&x, &Vector3::new(-0.5, 0.5, 0.0));
        assert!((out.point - Vector3::new(0.0, 0.5, 0.0)).norm() < 1e-14);
        assert!(out.outside > 0.0);
    }

    /// A flat tri6 (mid-sides at the edges' middles) with corners `x`.
    fn flat_tri6(x: [Vector3<f64>; 3]) -> Vec<Vector3<f64>> {
        vec![
            x[0],
            x[1],
            x[2],
            0.5 * (x[0] + x[1]),
            0.5 * (x[1] + x[2]),
            0.5 * (x[2] + x[0]),
        ]
    }

    #[test]
    fn a_point_above_a_flat_tri6_gets_its_quadratic_shape_functions() {
        let x = flat_tri6([Vector3::zeros(), Vector3::x(), Vector3::y()]);
        let proj = project(&x, &Vector3::new(0.2, 0.3, 0.1));
        // (s, t) = (0.2, 0.3): N of (C23), closed form.
        let l = [0.5, 0.2, 0.3];
        let expected = [
            l[0] * (2.0 * l[0] - 1.0),
            l[1] * (2.0 * l[1] - 1.0),
            l[2] * (2.0 * l[2] - 1.0),
            4.0 * l[0] * l[1],
            4.0 * l[1] * l[2],
            4.0 * l[2] * l[0],
        ];
        for (w, e) in proj.weights.iter().zip(expected) {
            assert!((w - e).abs() < 1e-14, "{:?}", proj.weights);
        }
        assert!((proj.gap - 0.1).abs() < 1e-14);
        assert!((proj.normal - Vector3::z()).norm() < 1e-14);
        assert_eq!(proj.outside, 0.0);
        // Outside the face: said how far (−s at s = −0.5), clamped onto it.
        let out = project(&x, &Vector3::new(-0.5, 0.5, 0.0));
        assert!((out.outside - 0.5).abs() < 1e-12, "{}", out.outside);
        assert!(out.point.x.abs() < 1e-14);
    }

    #[test]
    fn a_curved_tri6_is_projected_orthogonally() {
        // The mid-sides lifted: a dome over the corner triangle.
        let mut x = flat_tri6([Vector3::zeros(), Vector3::x(), Vector3::y()]);
        for m in &mut x[3..] {
            m.z = 0.05;
        }
        for p in [
            Vector3::new(0.3, 0.25, 0.4),
            Vector3::new(0.1, 0.6, -0.02),
            Vector3::new(0.45, 0.45, 0.2),
        ] {
            let proj = project(&x, &p);
            assert_eq!(proj.outside, 0.0);
            // The point is x(s, t) of its weights, the weights a partition of unity, and the
            // residual orthogonal to both tangents there ((s, t) is the point's (x, y): only
            // the height of the face is curved).
            assert!((proj.weights.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            let on: Vector3<f64> = proj.weights.iter().zip(&x).map(|(w, x)| *w * x).sum();
            assert!((on - proj.point).norm() < 1e-14);
            let (s, t) = (proj.point.x, proj.point.y);
            let (_, ds, dt) = tri6_shape(s, t);
            let a: Vector3<f64> = ds.iter().zip(&x).map(|(w, x)| *w * x).sum();
            let b: Vector3<f64> = dt.iter().zip(&x).map(|(w, x)| *w * x).sum();
            let r = p - proj.point;
            assert!(r.dot(&a).abs() < 1e-12 && r.dot(&b).abs() < 1e-12, "{r}");
            assert!((proj.gap - r.norm() * r.dot(&proj.normal).signum()).abs() < 1e-12);
        }
    }

    #[test]
    fn the_faces_of_a_box_of_tet10_are_tri6_pointing_out() {
        let mesh = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 1.0],
            [1, 1, 1],
            fem_mesh::generate::BoxCells::Tet10,
        )
        .unwrap();
        let faces = boundary_faces(CellKind::Tet10, &mesh.blocks[0].connectivity).unwrap();
        assert_eq!(faces.len(), 24);
        let centre = Vector3::new(0.5, 0.5, 0.5);
        for f in &faces {
            assert_eq!(f.corners, 6);
            let x: Vec<Vector3<f64>> = f
                .nodes()
                .iter()
                .map(|&n| Vector3::from(mesh.points[n]))
                .collect();
            // Mid-sides at the middles of the edges (0, 1), (1, 2), (2, 0).
            for (m, (a, b)) in [(3, (0, 1)), (4, (1, 2)), (5, (2, 0))] {
                assert!((x[m] - 0.5 * (x[a] + x[b])).norm() < 1e-14, "{f:?}");
            }
            let c = (x[0] + x[1] + x[2]) / 3.0;
            assert!(project(&x, &c).normal.dot(&(c - centre)) > 0.0, "{f:?}");
        }
    }
}
