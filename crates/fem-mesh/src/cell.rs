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
    /// Quadratic (serendipity) quadrilateral, mid-edge nodes 4..=7 on edges (0,1), (1,2),
    /// (2,3), (3,0) (Gmsh type 16); the faces of hex20.
    Quad8,
    /// Biquadratic quadrilateral: quad8 and the centre node 8 (Gmsh type 10); the faces of
    /// hex27.
    Quad9,
    /// Quadratic (serendipity) hexahedron, mid-edge nodes 8..=19 (Gmsh type 17).
    Hex20,
    /// Triquadratic hexahedron: hex20, face centres 20..=25 and the body centre 26 (Gmsh
    /// type 12).
    Hex27,
}

impl CellKind {
    /// All supported kinds, in order of dimension.
    pub const ALL: [CellKind; 13] = [
        CellKind::Vertex,
        CellKind::Line2,
        CellKind::Line3,
        CellKind::Tri3,
        CellKind::Tri6,
        CellKind::Quad4,
        CellKind::Quad8,
        CellKind::Quad9,
        CellKind::Tet4,
        CellKind::Tet10,
        CellKind::Hex8,
        CellKind::Hex20,
        CellKind::Hex27,
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
            CellKind::Quad8 => 8,
            CellKind::Quad9 => 9,
            CellKind::Hex20 => 20,
            CellKind::Hex27 => 27,
        }
    }

    /// Number of corner (vertex) nodes; they come first in the connectivity.
    pub fn n_corners(self) -> usize {
        match self {
            CellKind::Line3 => 2,
            CellKind::Tri6 => 3,
            CellKind::Tet10 | CellKind::Quad8 | CellKind::Quad9 => 4,
            CellKind::Hex20 | CellKind::Hex27 => 8,
            k => k.n_nodes(),
        }
    }

    /// Polynomial order of the geometry/shape functions (0 for a vertex).
    pub fn order(self) -> usize {
        match self {
            CellKind::Vertex => 0,
            CellKind::Line3
            | CellKind::Tri6
            | CellKind::Tet10
            | CellKind::Quad8
            | CellKind::Quad9
            | CellKind::Hex20
            | CellKind::Hex27 => 2,
            _ => 1,
        }
    }

    /// Topological dimension, 0..=3.
    pub fn dim(self) -> usize {
        match self {
            CellKind::Vertex => 0,
            CellKind::Line2 | CellKind::Line3 => 1,
            CellKind::Tri3
            | CellKind::Tri6
            | CellKind::Quad4
            | CellKind::Quad8
            | CellKind::Quad9 => 2,
            CellKind::Tet4
            | CellKind::Tet10
            | CellKind::Hex8
            | CellKind::Hex20
            | CellKind::Hex27 => 3,
        }
    }

    /// Lower-case name: `"vertex"`, `"line2"`, `"line3"`, `"tri3"`, `"tri6"`, `"quad4"`,
    /// `"quad8"`, `"quad9"`, `"tet4"`, `"tet10"`, `"hex8"`, `"hex20"`, `"hex27"`.
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
            CellKind::Quad8 => "quad8",
            CellKind::Quad9 => "quad9",
            CellKind::Hex20 => "hex20",
            CellKind::Hex27 => "hex27",
        }
    }

    /// Inverse of [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<CellKind> {
        CellKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Gmsh element type number: 15, 1, 8, 2, 9, 3, 16, 10, 4, 11, 5, 17, 12.
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
            CellKind::Quad8 => 16,
            CellKind::Quad9 => 10,
            CellKind::Hex20 => 17,
            CellKind::Hex27 => 12,
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
            CellKind::Hex8 => &HEX_NODES[..8],
            CellKind::Hex20 => &HEX_NODES[..20],
            CellKind::Hex27 => &HEX_NODES,
            CellKind::Quad8 => &QUAD_NODES[..8],
            CellKind::Quad9 => &QUAD_NODES,
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
            CellKind::Quad9 | CellKind::Hex27 => {
                // Tensor products of the quadratics through −1, 0, 1.
                let dim = self.dim();
                self.reference_nodes()
                    .iter()
                    .map(|p| {
                        let l: Vec<(f64, f64)> =
                            (0..dim).map(|k| lagrange_quadratic(p[k], xi[k])).collect();
                        let mut g = [0.0; 3];
                        for (k, gk) in g.iter_mut().enumerate().take(dim) {
                            *gk = (0..dim)
                                .map(|m| if m == k { l[m].1 } else { l[m].0 })
                                .product();
                        }
                        g
                    })
                    .collect()
            }
            CellKind::Quad8 | CellKind::Hex20 => {
                // Serendipity: corners ∏(1 + p_k ξ_k) (Σ p_k ξ_k − (dim − 1)) / 2^dim, mid-edge
                // (1 − ξ_m²) ∏_{k ≠ m} (1 + p_k ξ_k) / 2^(dim − 1).
                let dim = self.dim();
                self.reference_nodes()
                    .iter()
                    .map(|p| {
                        let t: Vec<f64> = (0..dim).map(|k| 1.0 + p[k] * xi[k]).collect();
                        let mut g = [0.0; 3];
                        match (0..dim).find(|&k| p[k] == 0.0) {
                            None => {
                                let scale = 0.5f64.powi(dim as i32);
                                let s = t.iter().sum::<f64>() - (2 * dim - 1) as f64;
                                for k in 0..dim {
                                    let others: f64 =
                                        (0..dim).filter(|&m| m != k).map(|m| t[m]).product();
                                    g[k] = scale * p[k] * others * (s + t[k]);
                                }
                            }
                            Some(m) => {
                                let scale = 0.5f64.powi(dim as i32 - 1);
                                let b = 1.0 - xi[m] * xi[m];
                                for k in 0..dim {
                                    let others: f64 = (0..dim)
                                        .filter(|&j| j != k && j != m)
                                        .map(|j| t[j])
                                        .product();
                                    g[k] = scale
                                        * if k == m {
                                            -2.0 * xi[m] * others
                                        } else {
                                            b * p[k] * others
                                        };
                                }
                            }
                        }
                        g
                    })
                    .collect()
            }
        }
    }
}

/// The quadratic through −1, 0, 1 that is 1 at `node`, and its derivative, at `s`.
fn lagrange_quadratic(node: f64, s: f64) -> (f64, f64) {
    if node < -0.5 {
        (0.5 * s * (s - 1.0), s - 0.5)
    } else if node > 0.5 {
        (0.5 * s * (s + 1.0), s + 0.5)
    } else {
        (1.0 - s * s, -2.0 * s)
    }
}

/// Gmsh's hex20/hex27 mid-edge nodes 8..=19 sit on these corner pairs.
pub const HEX20_EDGES: [(usize, usize); 12] = [
    (0, 1),
    (0, 3),
    (0, 4),
    (1, 2),
    (1, 5),
    (2, 3),
    (2, 6),
    (3, 7),
    (4, 5),
    (4, 7),
    (5, 6),
    (6, 7),
];

/// Gmsh's hex27 face-centre nodes 20..=25 sit at the centres of these faces (node 26 is the
/// body centre).
pub const HEX27_FACES: [[usize; 4]; 6] = [
    [0, 3, 2, 1],
    [0, 1, 5, 4],
    [0, 4, 7, 3],
    [1, 2, 6, 5],
    [2, 3, 7, 6],
    [4, 5, 6, 7],
];

/// Gmsh's quad8/quad9 mid-edge nodes 4..=7 sit on these corner pairs (node 8 is the centre).
pub const QUAD8_EDGES: [(usize, usize); 4] = [(0, 1), (1, 2), (2, 3), (3, 0)];

const HEX_NODES: [[f64; 3]; 27] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
    [0.0, -1.0, -1.0],
    [-1.0, 0.0, -1.0],
    [-1.0, -1.0, 0.0],
    [1.0, 0.0, -1.0],
    [1.0, -1.0, 0.0],
    [0.0, 1.0, -1.0],
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
    [0.0, -1.0, 1.0],
    [-1.0, 0.0, 1.0],
    [1.0, 0.0, 1.0],
    [0.0, 1.0, 1.0],
    [0.0, 0.0, -1.0],
    [0.0, -1.0, 0.0],
    [-1.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
    [0.0, 0.0, 0.0],
];

const QUAD_NODES: [[f64; 3]; 9] = [
    [-1.0, -1.0, 0.0],
    [1.0, -1.0, 0.0],
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
    [0.0, -1.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [-1.0, 0.0, 0.0],
    [0.0, 0.0, 0.0],
];

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
        let expected = [15, 1, 8, 2, 9, 3, 16, 10, 4, 11, 5, 17, 12];
        for (k, t) in CellKind::ALL.into_iter().zip(expected) {
            assert_eq!(k.gmsh_type(), t);
            assert_eq!(CellKind::from_gmsh_type(t), Some(k));
            assert_eq!(CellKind::from_name(k.name()), Some(k));
            assert_eq!(k.reference_nodes().len(), k.n_nodes());
        }
        assert_eq!(CellKind::from_gmsh_type(6), None);
        assert_eq!(CellKind::from_gmsh_type(18), None);
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
    fn second_order_hex_nodes_sit_on_their_edges_and_faces() {
        let p = CellKind::Hex27.reference_nodes();
        for (i, &(a, b)) in HEX20_EDGES.iter().enumerate() {
            for j in 0..3 {
                assert_eq!(p[8 + i][j], 0.5 * (p[a][j] + p[b][j]));
            }
        }
        for (i, face) in HEX27_FACES.iter().enumerate() {
            for j in 0..3 {
                let c: f64 = face.iter().map(|&a| p[a][j]).sum::<f64>() / 4.0;
                assert_eq!(p[20 + i][j], c);
            }
        }
        let q = CellKind::Quad9.reference_nodes();
        for (i, &(a, b)) in QUAD8_EDGES.iter().enumerate() {
            for j in 0..3 {
                assert_eq!(q[4 + i][j], 0.5 * (q[a][j] + q[b][j]));
            }
        }
    }

    /// Partition of unity in the gradients: `Σ_a ∇N_a = 0`; and the central differences of
    /// `Σ_a f(X_a) N_a` for a field the element reproduces, against the gradients.
    #[test]
    fn second_order_quad_and_hex_gradients_integrate_to_their_fields() {
        for k in [
            CellKind::Quad8,
            CellKind::Quad9,
            CellKind::Hex20,
            CellKind::Hex27,
        ] {
            let nodes = k.reference_nodes();
            let xi = [0.3, -0.2, 0.45];
            let g = k.shape_gradients(xi);
            // f = x² + x y (in both spaces); ∇f = (2x + y, x, 0).
            let f = |p: [f64; 3]| p[0] * p[0] + p[0] * p[1];
            let grad_f = [2.0 * xi[0] + xi[1], xi[0], 0.0];
            for j in 0..k.dim() {
                let s: f64 = (0..k.n_nodes()).map(|a| f(nodes[a]) * g[a][j]).sum();
                assert!(
                    (s - grad_f[j]).abs() < 1e-13,
                    "{k} {j}: {s} vs {}",
                    grad_f[j]
                );
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
