//! Contact pressure as a surface field of a solid's frames (issue 24 scope item 3;
//! docs/theory/contact.md §9.3): the nodal contact force over the node's tributary area on
//! the boundary,
//!
//! ```text
//! p_a = |f_a| / A_a,      Σ_a p_a A_a = Σ_a |f_a|                                  (C30)
//! ```
//!
//! (`f_a` the node's contact force `r/h` of the step; the traction's magnitude, the pressure
//! when friction is off). `A_a` is the node's share of the boundary's reference area (C31):
//!
//! - tri3: a third of the triangle each corner;
//! - quad4: `∫ N_a dA` (2 × 2 Gauss; a quarter each on a parallelogram);
//! - tri6: the face cut into its four sub-triangles by the mid-side nodes, a third of each
//!   sub-triangle to each of its three nodes (`A/12` a corner, `A/4` a mid-side node on a
//!   flat face) — the consistent `∫ N_a dA` of a tri6 corner is zero, which would make its
//!   pressure infinite.
//!
//! The areas sum to the boundary's area (the tri6 sub-triangles' flat area: a curved face's
//! chord area).

use fem_mesh::CellKind;
use nalgebra::Vector3;

use crate::solid::SolidGroupError;

/// The tributary area (C31) of every mesh node on the boundary of the cells `connectivity` of
/// `kind` (tet4, hex8, tet10) with reference coordinates `points`; zero off the boundary.
pub fn tributary_areas(
    kind: CellKind,
    connectivity: &[usize],
    points: &[[f64; 3]],
) -> Result<Vec<f64>, SolidGroupError> {
    let mut area = vec![0.0; points.len()];
    let x = |n: usize| Vector3::from(points[n]);
    let triangle = |a: usize, b: usize, c: usize| 0.5 * (x(b) - x(a)).cross(&(x(c) - x(a))).norm();
    for face in crate::solid_faces::boundary_faces(kind, connectivity)? {
        let n = face.nodes();
        if let &[c0, c1, c2, m01, m12, m20] = n {
            // tri6 sub-triangles: each corner with its two mid-sides, and the mid-sides' own.
            for [a, b, c] in [
                [c0, m01, m20],
                [c1, m12, m01],
                [c2, m20, m12],
                [m01, m12, m20],
            ] {
                let share = triangle(a, b, c) / 3.0;
                for n in [a, b, c] {
                    area[n] += share;
                }
            }
        } else if n.len() == 3 {
            let share = triangle(n[0], n[1], n[2]) / 3.0;
            for &k in n {
                area[k] += share;
            }
        } else {
            // ∫ N_a dA by 2 × 2 Gauss points of the bilinear quad.
            let g = 1.0 / 3.0_f64.sqrt();
            for (s, t) in [(-g, -g), (g, -g), (g, g), (-g, g)] {
                let shape = [
                    0.25 * (1.0 - s) * (1.0 - t),
                    0.25 * (1.0 + s) * (1.0 - t),
                    0.25 * (1.0 + s) * (1.0 + t),
                    0.25 * (1.0 - s) * (1.0 + t),
                ];
                let ds = 0.25 * ((x(n[1]) - x(n[0])) * (1.0 - t) + (x(n[2]) - x(n[3])) * (1.0 + t));
                let dt = 0.25 * ((x(n[3]) - x(n[0])) * (1.0 - s) + (x(n[2]) - x(n[1])) * (1.0 + s));
                let jacobian = ds.cross(&dt).norm();
                for (k, &a) in n.iter().enumerate() {
                    area[a] += shape[k] * jacobian;
                }
            }
        }
    }
    Ok(area)
}

/// The pressure (C30) of the nodal contact forces `force` (3 per node) over `areas`: zero
/// where the area is (off the boundary, or no force).
pub fn contact_pressure(force: &[f64], areas: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend(areas.iter().enumerate().map(|(n, &a)| {
        let f = Vector3::new(force[3 * n], force[3 * n + 1], force[3 * n + 2]).norm();
        if a > 0.0 && f > 0.0 { f / a } else { 0.0 }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use fem_mesh::generate::{BoxCells, box_mesh};

    /// The tributary areas of a box's boundary sum to its surface area, and only boundary
    /// nodes carry one; on the flat faces of a tet10 box a corner takes a third of a
    /// mid-side node's share of the same sub-triangles.
    #[test]
    fn tributary_areas_sum_to_the_boundary_area() {
        let size = [1.0, 2.0, 3.0];
        let surface = 2.0 * (size[0] * size[1] + size[1] * size[2] + size[0] * size[2]);
        for cells in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10] {
            let mesh = box_mesh(size, [2, 3, 4], cells).unwrap();
            let kind = mesh.blocks[0].kind;
            let areas = tributary_areas(kind, &mesh.blocks[0].connectivity, &mesh.points).unwrap();
            let total: f64 = areas.iter().sum();
            assert!((total / surface - 1.0).abs() < 1e-12, "{cells:?}: {total}");
            for (n, p) in mesh.points.iter().enumerate() {
                let on_face = (0..3).any(|k| p[k].abs() < 1e-12 || (p[k] - size[k]).abs() < 1e-12);
                assert_eq!(areas[n] > 0.0, on_face, "{cells:?} node {n}");
            }
        }
    }

    #[test]
    fn pressure_times_area_is_the_force() {
        let areas = [0.5, 0.0, 0.25];
        let force = [0.0, 0.0, 2.0, 1.0, 1.0, 1.0, 3.0, 4.0, 0.0];
        let mut p = Vec::new();
        contact_pressure(&force, &areas, &mut p);
        assert_eq!(p, vec![4.0, 0.0, 20.0]);
    }
}
