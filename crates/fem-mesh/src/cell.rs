//! Cell kinds, their Gmsh numbering and their reference elements.

use std::fmt;

/// The kinds of cells fem supports.
///
/// Node ordering and reference elements are Gmsh's; see the [crate documentation](crate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellKind {
    /// A single node (Gmsh type 15), used for point groups.
    Vertex,
    /// Linear line segment (Gmsh type 1).
    Line2,
    /// Quadratic line segment, mid node last (Gmsh type 8).
    Line3,
    /// Linear triangle (Gmsh type 2).
    Tri3,
    /// Quadratic triangle, mid-edge nodes 3, 4, 5 on edges (0,1), (1,2), (2,0) (Gmsh type 9);
    /// the faces of tet10.
    Tri6,
    /// Bilinear quadrilateral (Gmsh type 3).
    Quad4,
    /// Linear tetrahedron (Gmsh type 4).
    Tet4,
    /// Quadratic tetrahedron (Gmsh type 11).
    Tet10,
    /// Trilinear hexahedron (Gmsh type 5).
    Hex8,
}

impl CellKind {
    /// All supported kinds, in order of dimension.
    pub const ALL: [CellKind; 9] = [
        CellKind::Vertex,
        CellKind::Line2,
        CellKind::Line3,
        CellKind::Tri3,
        CellKind::Tri6,
        CellKind::Quad4,
        CellKind::Tet4,
        CellKind::Tet10,
        CellKind::Hex8,
    ];

    /// Number of nodes per cell.
    pub fn n_nodes(self) -> usize {
        match self {
            CellKind::Vertex => 1,
            CellKind::Line2 => 2,
            CellKind::Line3 => 3,
            CellKind::Tri3 => 3,
            CellKind::Tri6 => 6,
            CellKind::Quad4 => 4,
            CellKind::Tet4 => 4,
            CellKind::Tet10 => 10,
            CellKind::Hex8 => 8,
        }
    }

    /// Number of corner (vertex) nodes; they come first in the connectivity.
    pub fn n_corners(self) -> usize {
        match self {
            CellKind::Line3 => 2,
            CellKind::Tri6 => 3,
            CellKind::Tet10 => 4,
            k => k.n_nodes(),
        }
    }

    /// Polynomial order of the geometry/shape functions (0 for a vertex).
    pub fn order(self) -> usize {
        match self {
            CellKind::Vertex => 0,
            CellKind::Line3 | CellKind::Tri6 | CellKind::Tet10 => 2,
            _ => 1,
        }
    }

    /// Topological dimension, 0..=3.
    pub fn dim(self) -> usize {
        match self {
            CellKind::Vertex => 0,
            CellKind::Line2 | CellKind::Line3 => 1,
            CellKind::Tri3 | CellKind::Tri6 | CellKind::Quad4 => 2,
            CellKind::Tet4 | CellKind::Tet10 | CellKind::Hex8 => 3,
        }
    }

    /// Lower-case name: `"vertex"`, `"line2"`, `"line3"`, `"tri3"`, `"tri6"`, `"quad4"`, `"tet4"`,
    /// `"tet10"`, `"hex8"`.
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Vertex => "vertex",
            CellKind::Line2 => "line2",
            CellKind::Line3 => "line3",
            CellKind::Tri3 => "tri3",
            CellKind::Tri6 => "tri6",
            CellKind::Quad4 => "quad4",
            CellKind::Tet4 => "tet4",
            CellKind::Tet10 => "tet10",
            CellKind::Hex8 => "hex8",
        }
    }

    /// Inverse of [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<CellKind> {
        CellKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Gmsh element type number: 15, 1, 8, 2, 9, 3, 4, 11, 5.
    pub fn gmsh_type(self) -> i32 {
        match self {
            CellKind::Vertex => 15,
            CellKind::Line2 => 1,
            CellKind::Line3 => 8,
            CellKind::Tri3 => 2,
            CellKind::Tri6 => 9,
            CellKind::Quad4 => 3,
            CellKind::Tet4 => 4,
            CellKind::Tet10 => 11,
            CellKind::Hex8 => 5,
        }
    }

    /// The kind with Gmsh element type number `t`, if supported.
    pub fn from_gmsh_type(t: i32) -> Option<CellKind> {
        CellKind::ALL.into_iter().find(|k| k.gmsh_type() == t)
    }

    /// Human-readable list of the supported kinds with their Gmsh type numbers,
    /// for error messages: `"vertex (15), line2 (1), …"`.
    pub fn supported_list() -> String {
        CellKind::ALL
            .iter()
            .map(|k| format!("{} ({})", k.name(), k.gmsh_type()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Node coordinates of Gmsh's reference element, in connectivity order
    /// (unused components are 0). Lines and quads/hexes live on `[-1, 1]^d`,
    /// triangles and tetrahedra on the unit simplex.
    pub fn reference_nodes(self) -> &'static [[f64; 3]] {
        match self {
            CellKind::Vertex => &[[0.0; 3]],
            CellKind::Line2 => &[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
            CellKind::Line3 => &[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
            CellKind::Tri3 => &TRI_NODES[..3],
            CellKind::Tri6 => &TRI_NODES,
            CellKind::Quad4 => &[
                [-1.0, -1.0, 0.0],
                [1.0, -1.0, 0.0],
                [1.0, 1.0, 0.0],
                [-1.0, 1.0, 0.0],
            ],
            CellKind::Tet4 => &TET_NODES[..4],
            CellKind::Tet10 => &TET_NODES,
            CellKind::Hex8 => &[
                [-1.0, -1.0, -1.0],
                [1.0, -1.0, -1.0],
                [1.0, 1.0, -1.0],
                [-1.0, 1.0, -1.0],
                [-1.0, -1.0, 1.0],
                [1.0, -1.0, 1.0],
                [1.0, 1.0, 1.0],
                [-1.0, 1.0, 1.0],
            ],
        }
    }

    /// Centroid of the reference element.
    pub fn reference_centroid(self) -> [f64; 3] {
        match self {
            CellKind::Tri3 | CellKind::Tri6 => [1.0 / 3.0, 1.0 / 3.0, 0.0],
            CellKind::Tet4 | CellKind::Tet10 => [0.25; 3],
            _ => [0.0; 3],
        }
    }

    /// Gradients of the shape functions with respect to the reference
    /// coordinates at `xi`: `grad[a][j] = dN_a / dxi_j`, `grad.len() == n_nodes()`.
    pub fn shape_gradients(self, xi: [f64; 3]) -> Vec<[f64; 3]> {
        let [u, v, w] = xi;
        match self {
            CellKind::Vertex => vec![[0.0; 3]],
            CellKind::Line2 => vec![[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]],
            CellKind::Line3 => vec![
                [u - 0.5, 0.0, 0.0],
                [u + 0.5, 0.0, 0.0],
                [-2.0 * u, 0.0, 0.0],
            ],
            CellKind::Tri3 => vec![[-1.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            CellKind::Tri6 => {
                let l = [1.0 - u - v, u, v];
                let dl = [[-1.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
                let mut g = Vec::with_capacity(6);
                for a in 0..3 {
                    let f = 4.0 * l[a] - 1.0;
                    g.push([f * dl[a][0], f * dl[a][1], 0.0]);
                }
                for &(a, b) in &TRI6_EDGES {
                    g.push([
                        4.0 * (dl[a][0] * l[b] + l[a] * dl[b][0]),
                        4.0 * (dl[a][1] * l[b] + l[a] * dl[b][1]),
                        0.0,
                    ]);
                }
                g
            }
            CellKind::Quad4 => self
                .reference_nodes()
                .iter()
                .map(|p| {
                    [
                        0.25 * p[0] * (1.0 + p[1] * v),
                        0.25 * p[1] * (1.0 + p[0] * u),
                        0.0,
                    ]
                })
                .collect(),
            CellKind::Tet4 => vec![
                [-1.0, -1.0, -1.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            CellKind::Tet10 => {
                // Barycentric coordinates and their (constant) gradients.
                let l = [1.0 - u - v - w, u, v, w];
                let dl = [
                    [-1.0, -1.0, -1.0],
                    [1.0, 0.0, 0.0],
                    [0.0, 1.0, 0.0],
                    [0.0, 0.0, 1.0],
                ];
                let mut g = Vec::with_capacity(10);
                for a in 0..4 {
                    let f = 4.0 * l[a] - 1.0;
                    g.push([f * dl[a][0], f * dl[a][1], f * dl[a][2]]);
                }
                for &(a, b) in &TET10_EDGES {
                    g.push([
                        4.0 * (dl[a][0] * l[b] + l[a] * dl[b][0]),
                        4.0 * (dl[a][1] * l[b] + l[a] * dl[b][1]),
                        4.0 * (dl[a][2] * l[b] + l[a] * dl[b][2]),
                    ]);
                }
                g
            }
            CellKind::Hex8 => self
                .reference_nodes()
                .iter()
                .map(|p| {
                    [
                        0.125 * p[0] * (1.0 + p[1] * v) * (1.0 + p[2] * w),
                        0.125 * p[1] * (1.0 + p[0] * u) * (1.0 + p[2] * w),
                        0.125 * p[2] * (1.0 + p[0] * u) * (1.0 + p[1] * v),
                    ]
                })
                .collect(),
        }
    }
}

/// Gmsh's tet10 mid-edge nodes 4..=9 sit on these corner pairs.
pub(crate) const TET10_EDGES: [(usize, usize); 6] =
    [(0, 1), (1, 2), (2, 0), (3, 0), (3, 2), (3, 1)];

/// Gmsh's tri6 mid-edge nodes 3..=5 sit on these corner pairs.
pub(crate) const TRI6_EDGES: [(usize, usize); 3] = [(0, 1), (1, 2), (2, 0)];

const TRI_NODES: [[f64; 3]; 6] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.5, 0.0, 0.0],
    [0.5, 0.5, 0.0],
    [0.0, 0.5, 0.0],
];

const TET_NODES: [[f64; 3]; 10] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [0.5, 0.0, 0.0],
    [0.5, 0.5, 0.0],
    [0.0, 0.5, 0.0],
    [0.0, 0.0, 0.5],
    [0.0, 0.5, 0.5],
    [0.5, 0.0, 0.5],
];

impl fmt::Display for CellKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmsh_numbers_round_trip() {
        let expected = [15, 1, 8, 2, 9, 3, 4, 11, 5];
        for (k, t) in CellKind::ALL.into_iter().zip(expected) {
            assert_eq!(k.gmsh_type(), t);
            assert_eq!(CellKind::from_gmsh_type(t), Some(k));
            assert_eq!(CellKind::from_name(k.name()), Some(k));
            assert_eq!(k.reference_nodes().len(), k.n_nodes());
        }
        assert_eq!(CellKind::from_gmsh_type(6), None);
        assert_eq!(CellKind::from_gmsh_type(0), None);
    }

    #[test]
    fn tri6_edges_match_reference_nodes() {
        let p = CellKind::Tri6.reference_nodes();
        for (i, &(a, b)) in TRI6_EDGES.iter().enumerate() {
            for j in 0..3 {
                assert_eq!(p[3 + i][j], 0.5 * (p[a][j] + p[b][j]));
            }
        }
    }

    #[test]
    fn tet10_edges_match_reference_nodes() {
        let p = CellKind::Tet10.reference_nodes();
        for (i, &(a, b)) in TET10_EDGES.iter().enumerate() {
            for j in 0..3 {
                assert_eq!(p[4 + i][j], 0.5 * (p[a][j] + p[b][j]));
            }
        }
    }

    /// Shape function gradients sum to zero (partition of unity) and
    /// reproduce the identity map: sum_a x_a (x) grad N_a = I.
    #[test]
    fn shape_gradients_reproduce_linear_fields() {
        for k in CellKind::ALL.into_iter().filter(|k| k.dim() > 0) {
            let nodes = k.reference_nodes();
            for xi in [k.reference_centroid(), nodes[0], [0.1, 0.2, 0.3]] {
                let g = k.shape_gradients(xi);
                for i in 0..k.dim() {
                    for j in 0..k.dim() {
                        let s: f64 = (0..k.n_nodes()).map(|a| nodes[a][i] * g[a][j]).sum();
                        let want = if i == j { 1.0 } else { 0.0 };
                        assert!((s - want).abs() < 1e-12, "{k} {xi:?} {i} {j} {s}");
                    }
                    let sum: f64 = g.iter().map(|ga| ga[i]).sum();
                    assert!(sum.abs() < 1e-12);
                }
            }
        }
    }
}
