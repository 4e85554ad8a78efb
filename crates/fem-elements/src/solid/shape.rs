//! Reference elements of solids and of their boundary faces, in **Gmsh node order**.
//!
//! | element | nodes | reference cell | shape functions |
//! |---|---|---|---|
//! | [`Tet4`] | 4 | unit tetrahedron | barycentric `λ₀ = 1 − u − v − w, λ₁ = u, λ₂ = v, λ₃ = w` |
//! | [`Tet10`] | 10 | unit tetrahedron | corners `λ_a (2λ_a − 1)`, mid-edge `4 λ_a λ_b` |
//! | [`Hex8`] | 8 | `[-1, 1]³` | `⅛ (1 + ξ_a ξ)(1 + η_a η)(1 + ζ_a ζ)` |
//! | [`Tri3`] | 3 | unit triangle | `1 − u − v, u, v` |
//! | [`Tri6`] | 6 | unit triangle | corners `λ_a (2λ_a − 1)`, mid-edge `4 λ_a λ_b` |
//! | [`Quad4`] | 4 | `[-1, 1]²` | `¼ (1 + ξ_a ξ)(1 + η_a η)` |
//! | [`Hex20`] | 20 | `[-1, 1]³` | serendipity: corners `⅛ (1 + ξ_aξ)(1 + η_aη)(1 + ζ_aζ)(ξ_aξ + η_aη + ζ_aζ − 2)`, mid-edge `¼ (1 − ξ²)(1 + η_aη)(1 + ζ_aζ)` (and permutations) |
//! | [`Hex27`] | 27 | `[-1, 1]³` | Lagrange: `ℓ_a(ξ) ℓ_a(η) ℓ_a(ζ)`, `ℓ` the quadratics through −1, 0, 1 |
//! | [`Quad8`] | 8 | `[-1, 1]²` | serendipity: corners `¼ (1 + ξ_aξ)(1 + η_aη)(ξ_aξ + η_aη − 1)`, mid-edge `½ (1 − ξ²)(1 + η_aη)` |
//! | [`Quad9`] | 9 | `[-1, 1]²` | Lagrange: `ℓ_a(ξ) ℓ_a(η)` |
//!
//! Node numbering is Gmsh's (the pictures are in `fem_mesh`'s crate documentation): corners
//! first; tet10 mid-edge nodes 4..=9 sit on the corner pairs (0,1), (1,2), (2,0), (3,0), (3,2),
//! (3,1); tri6 mid-edge nodes 3, 4, 5 on (0,1), (1,2), (2,0); hex8 corners run
//! counter-clockwise on `ζ = −1`, then on `ζ = +1`; hex20 mid-edge nodes 8..=19 sit on
//! [`HEX20_EDGES`], hex27 then has the face centres 20..=25 of [`HEX27_FACES`] and the body
//! centre 26; quad8 mid-edge nodes 4..=7 on (0,1), (1,2), (2,3), (3,0), quad9 then the centre 8.
//! VTK order appears only in `fem-io`'s writer.
//!
//! Each element is a unit type implementing [`ReferenceElement`] with its node count as a const
//! parameter, so kernels can be monomorphized on it; [`SolidKind`] and [`FaceKind`] are the
//! runtime tags that dispatch to them.

/// A reference element with `N` nodes.
pub trait ReferenceElement<const N: usize> {
    /// Topological dimension: 3 for solids, 2 for faces.
    const DIM: usize;
    /// Reference coordinates of the nodes, in Gmsh order (unused components are 0).
    const NODES: [[f64; 3]; N];
    /// Shape function values `N_a(ξ)`.
    fn values(xi: [f64; 3]) -> [f64; N];
    /// Reference gradients `∂N_a/∂ξ_k(ξ)` (components beyond [`Self::DIM`] are 0).
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; N];
}

/// Linear tetrahedron (Gmsh type 4).
#[derive(Clone, Copy, Debug)]
pub struct Tet4;
/// Quadratic tetrahedron (Gmsh type 11).
#[derive(Clone, Copy, Debug)]
pub struct Tet10;
/// Trilinear hexahedron (Gmsh type 5).
#[derive(Clone, Copy, Debug)]
pub struct Hex8;
/// Linear triangle (Gmsh type 2), a face of [`Tet4`].
#[derive(Clone, Copy, Debug)]
pub struct Tri3;
/// Quadratic triangle (Gmsh type 9), a face of [`Tet10`].
#[derive(Clone, Copy, Debug)]
pub struct Tri6;
/// Bilinear quadrilateral (Gmsh type 3), a face of [`Hex8`].
#[derive(Clone, Copy, Debug)]
pub struct Quad4;

/// Quadratic hexahedron, serendipity (Gmsh type 17).
#[derive(Clone, Copy, Debug)]
pub struct Hex20;
/// Triquadratic hexahedron, Lagrange (Gmsh type 12).
#[derive(Clone, Copy, Debug)]
pub struct Hex27;
/// Quadratic quadrilateral, serendipity (Gmsh type 16), a face of [`Hex20`].
#[derive(Clone, Copy, Debug)]
pub struct Quad8;
/// Biquadratic quadrilateral, Lagrange (Gmsh type 10), a face of [`Hex27`].
#[derive(Clone, Copy, Debug)]
pub struct Quad9;

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
/// Gmsh's hex27 face-centre nodes 20..=25 sit at the centres of these faces (corner nodes);
/// node 26 is the body centre.
pub const HEX27_FACES: [[usize; 4]; 6] = [
    [0, 3, 2, 1],
    [0, 1, 5, 4],
    [0, 4, 7, 3],
    [1, 2, 6, 5],
    [2, 3, 7, 6],
    [4, 5, 6, 7],
];
/// Gmsh's quad8/quad9 mid-edge nodes 4..=7 sit on these corner pairs (quad9's node 8 is the
/// centre).
pub const QUAD8_EDGES: [(usize, usize); 4] = [(0, 1), (1, 2), (2, 3), (3, 0)];

/// Gmsh's tet10 mid-edge nodes 4..=9 sit on these corner pairs.
pub const TET10_EDGES: [(usize, usize); 6] = [(0, 1), (1, 2), (2, 0), (3, 0), (3, 2), (3, 1)];
/// Gmsh's tri6 mid-edge nodes 3..=5 sit on these corner pairs.
pub const TRI6_EDGES: [(usize, usize); 3] = [(0, 1), (1, 2), (2, 0)];

/// Gradients of the tetrahedron's barycentric coordinates (constant).
const TET_BARY_GRAD: [[f64; 3]; 4] = [
    [-1.0, -1.0, -1.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
];
/// Gradients of the triangle's barycentric coordinates (constant).
const TRI_BARY_GRAD: [[f64; 3]; 3] = [[-1.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

impl ReferenceElement<4> for Tet4 {
    const DIM: usize = 3;
    const NODES: [[f64; 3]; 4] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
    ];
    fn values(xi: [f64; 3]) -> [f64; 4] {
        [1.0 - xi[0] - xi[1] - xi[2], xi[0], xi[1], xi[2]]
    }
    fn gradients(_: [f64; 3]) -> [[f64; 3]; 4] {
        TET_BARY_GRAD
    }
}

impl ReferenceElement<10> for Tet10 {
    const DIM: usize = 3;
    const NODES: [[f64; 3]; 10] = [
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
    fn values(xi: [f64; 3]) -> [f64; 10] {
        let l = Tet4::values(xi);
        let mut n = [0.0; 10];
        for a in 0..4 {
            n[a] = l[a] * (2.0 * l[a] - 1.0);
        }
        for (e, &(a, b)) in TET10_EDGES.iter().enumerate() {
            n[4 + e] = 4.0 * l[a] * l[b];
        }
        n
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 10] {
        let l = Tet4::values(xi);
        let dl = TET_BARY_GRAD;
        let mut g = [[0.0; 3]; 10];
        for a in 0..4 {
            let f = 4.0 * l[a] - 1.0;
            g[a] = dl[a].map(|d| f * d);
        }
        for (e, &(a, b)) in TET10_EDGES.iter().enumerate() {
            g[4 + e] = std::array::from_fn(|k| 4.0 * (dl[a][k] * l[b] + l[a] * dl[b][k]));
        }
        g
    }
}

impl ReferenceElement<8> for Hex8 {
    const DIM: usize = 3;
    const NODES: [[f64; 3]; 8] = [
        [-1.0, -1.0, -1.0],
        [1.0, -1.0, -1.0],
        [1.0, 1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [1.0, -1.0, 1.0],
        [1.0, 1.0, 1.0],
        [-1.0, 1.0, 1.0],
    ];
    fn values(xi: [f64; 3]) -> [f64; 8] {
        Self::NODES
            .map(|p| 0.125 * (1.0 + p[0] * xi[0]) * (1.0 + p[1] * xi[1]) * (1.0 + p[2] * xi[2]))
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 8] {
        Self::NODES.map(|p| {
            let (a, b, c) = (1.0 + p[0] * xi[0], 1.0 + p[1] * xi[1], 1.0 + p[2] * xi[2]);
            [
                0.125 * p[0] * b * c,
                0.125 * p[1] * a * c,
                0.125 * p[2] * a * b,
            ]
        })
    }
}

impl ReferenceElement<3> for Tri3 {
    const DIM: usize = 2;
    const NODES: [[f64; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    fn values(xi: [f64; 3]) -> [f64; 3] {
        [1.0 - xi[0] - xi[1], xi[0], xi[1]]
    }
    fn gradients(_: [f64; 3]) -> [[f64; 3]; 3] {
        TRI_BARY_GRAD
    }
}

impl ReferenceElement<6> for Tri6 {
    const DIM: usize = 2;
    const NODES: [[f64; 3]; 6] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.5, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.0, 0.5, 0.0],
    ];
    fn values(xi: [f64; 3]) -> [f64; 6] {
        let l = Tri3::values(xi);
        let mut n = [0.0; 6];
        for a in 0..3 {
            n[a] = l[a] * (2.0 * l[a] - 1.0);
        }
        for (e, &(a, b)) in TRI6_EDGES.iter().enumerate() {
            n[3 + e] = 4.0 * l[a] * l[b];
        }
        n
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 6] {
        let l = Tri3::values(xi);
        let dl = TRI_BARY_GRAD;
        let mut g = [[0.0; 3]; 6];
        for a in 0..3 {
            let f = 4.0 * l[a] - 1.0;
            g[a] = dl[a].map(|d| f * d);
        }
        for (e, &(a, b)) in TRI6_EDGES.iter().enumerate() {
            g[3 + e] = std::array::from_fn(|k| 4.0 * (dl[a][k] * l[b] + l[a] * dl[b][k]));
        }
        g
    }
}

impl ReferenceElement<4> for Quad4 {
    const DIM: usize = 2;
    const NODES: [[f64; 3]; 4] = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];
    fn values(xi: [f64; 3]) -> [f64; 4] {
        Self::NODES.map(|p| 0.25 * (1.0 + p[0] * xi[0]) * (1.0 + p[1] * xi[1]))
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 4] {
        Self::NODES.map(|p| {
            [
                0.25 * p[0] * (1.0 + p[1] * xi[1]),
                0.25 * p[1] * (1.0 + p[0] * xi[0]),
                0.0,
            ]
        })
    }
}

/// The reference nodes of a hex8 followed by its mid-edge nodes (hex20), face centres and
/// body centre (hex27): the first `N` of them.
const fn hex_nodes<const N: usize>() -> [[f64; 3]; N] {
    const CORNERS: [[f64; 3]; 8] = [
        [-1.0, -1.0, -1.0],
        [1.0, -1.0, -1.0],
        [1.0, 1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [1.0, -1.0, 1.0],
        [1.0, 1.0, 1.0],
        [-1.0, 1.0, 1.0],
    ];
    let mut out = [[0.0; 3]; N];
    let mut a = 0;
    while a < N {
        if a < 8 {
            out[a] = CORNERS[a];
        } else if a < 20 {
            let (p, q) = HEX20_EDGES[a - 8];
            let mut k = 0;
            while k < 3 {
                out[a][k] = 0.5 * (CORNERS[p][k] + CORNERS[q][k]);
                k += 1;
            }
        } else if a < 26 {
            let face = HEX27_FACES[a - 20];
            let mut k = 0;
            while k < 3 {
                out[a][k] = 0.25
                    * (CORNERS[face[0]][k]
                        + CORNERS[face[1]][k]
                        + CORNERS[face[2]][k]
                        + CORNERS[face[3]][k]);
                k += 1;
            }
        }
        a += 1;
    }
    out
}

/// The reference nodes of a quad4 followed by its mid-edge nodes (quad8) and centre (quad9).
const fn quad_nodes<const N: usize>() -> [[f64; 3]; N] {
    const CORNERS: [[f64; 3]; 4] = [
        [-1.0, -1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 0.0],
    ];
    let mut out = [[0.0; 3]; N];
    let mut a = 0;
    while a < N {
        if a < 4 {
            out[a] = CORNERS[a];
        } else if a < 8 {
            let (p, q) = QUAD8_EDGES[a - 4];
            out[a][0] = 0.5 * (CORNERS[p][0] + CORNERS[q][0]);
            out[a][1] = 0.5 * (CORNERS[p][1] + CORNERS[q][1]);
        }
        a += 1;
    }
    out
}

/// The quadratic Lagrange polynomial through `−1, 0, 1` that is 1 at `node` and its
/// derivative, at `s`.
#[inline]
fn lagrange_quadratic(node: f64, s: f64) -> (f64, f64) {
    if node < -0.5 {
        (0.5 * s * (s - 1.0), s - 0.5)
    } else if node > 0.5 {
        (0.5 * s * (s + 1.0), s + 0.5)
    } else {
        (1.0 - s * s, -2.0 * s)
    }
}

impl ReferenceElement<27> for Hex27 {
    const DIM: usize = 3;
    const NODES: [[f64; 3]; 27] = hex_nodes::<27>();
    fn values(xi: [f64; 3]) -> [f64; 27] {
        Self::NODES.map(|p| (0..3).map(|k| lagrange_quadratic(p[k], xi[k]).0).product())
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 27] {
        Self::NODES.map(|p| {
            let l: [(f64, f64); 3] = std::array::from_fn(|k| lagrange_quadratic(p[k], xi[k]));
            [
                l[0].1 * l[1].0 * l[2].0,
                l[0].0 * l[1].1 * l[2].0,
                l[0].0 * l[1].0 * l[2].1,
            ]
        })
    }
}

impl ReferenceElement<20> for Hex20 {
    const DIM: usize = 3;
    const NODES: [[f64; 3]; 20] = hex_nodes::<20>();
    fn values(xi: [f64; 3]) -> [f64; 20] {
        Self::NODES.map(|p| {
            let t: [f64; 3] = std::array::from_fn(|k| 1.0 + p[k] * xi[k]);
            match p.iter().position(|&c| c == 0.0) {
                // Corner.
                None => 0.125 * t[0] * t[1] * t[2] * (t[0] + t[1] + t[2] - 5.0),
                // Mid-edge along axis m.
                Some(m) => {
                    let (k1, k2) = ((m + 1) % 3, (m + 2) % 3);
                    0.25 * (1.0 - xi[m] * xi[m]) * t[k1] * t[k2]
                }
            }
        })
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 20] {
        Self::NODES.map(|p| {
            let t: [f64; 3] = std::array::from_fn(|k| 1.0 + p[k] * xi[k]);
            match p.iter().position(|&c| c == 0.0) {
                None => {
                    let s = t[0] + t[1] + t[2] - 5.0;
                    std::array::from_fn(|k| {
                        let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
                        0.125 * p[k] * t[k1] * t[k2] * (s + t[k])
                    })
                }
                Some(m) => {
                    let (k1, k2) = ((m + 1) % 3, (m + 2) % 3);
                    let b = 1.0 - xi[m] * xi[m];
                    let mut g = [0.0; 3];
                    g[m] = -0.5 * xi[m] * t[k1] * t[k2];
                    g[k1] = 0.25 * b * p[k1] * t[k2];
                    g[k2] = 0.25 * b * t[k1] * p[k2];
                    g
                }
            }
        })
    }
}

impl ReferenceElement<9> for Quad9 {
    const DIM: usize = 2;
    const NODES: [[f64; 3]; 9] = quad_nodes::<9>();
    fn values(xi: [f64; 3]) -> [f64; 9] {
        Self::NODES.map(|p| lagrange_quadratic(p[0], xi[0]).0 * lagrange_quadratic(p[1], xi[1]).0)
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 9] {
        Self::NODES.map(|p| {
            let (a, b) = (
                lagrange_quadratic(p[0], xi[0]),
                lagrange_quadratic(p[1], xi[1]),
            );
            [a.1 * b.0, a.0 * b.1, 0.0]
        })
    }
}

impl ReferenceElement<8> for Quad8 {
    const DIM: usize = 2;
    const NODES: [[f64; 3]; 8] = quad_nodes::<8>();
    fn values(xi: [f64; 3]) -> [f64; 8] {
        Self::NODES.map(|p| {
            let t = [1.0 + p[0] * xi[0], 1.0 + p[1] * xi[1]];
            if p[0] == 0.0 {
                0.5 * (1.0 - xi[0] * xi[0]) * t[1]
            } else if p[1] == 0.0 {
                0.5 * t[0] * (1.0 - xi[1] * xi[1])
            } else {
                0.25 * t[0] * t[1] * (t[0] + t[1] - 3.0)
            }
        })
    }
    fn gradients(xi: [f64; 3]) -> [[f64; 3]; 8] {
        Self::NODES.map(|p| {
            let t = [1.0 + p[0] * xi[0], 1.0 + p[1] * xi[1]];
            if p[0] == 0.0 {
                [-xi[0] * t[1], 0.5 * (1.0 - xi[0] * xi[0]) * p[1], 0.0]
            } else if p[1] == 0.0 {
                [0.5 * p[0] * (1.0 - xi[1] * xi[1]), -xi[1] * t[0], 0.0]
            } else {
                let s = t[0] + t[1] - 3.0;
                [
                    0.25 * p[0] * t[1] * (s + t[0]),
                    0.25 * p[1] * t[0] * (s + t[1]),
                    0.0,
                ]
            }
        })
    }
}

/// The solid element kinds (runtime tag for [`Tet4`], [`Hex8`], [`Tet10`], [`Hex20`],
/// [`Hex27`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SolidKind {
    /// Linear tetrahedron, 4 nodes.
    Tet4,
    /// Trilinear hexahedron, 8 nodes.
    Hex8,
    /// Quadratic tetrahedron, 10 nodes.
    Tet10,
    /// Quadratic (serendipity) hexahedron, 20 nodes.
    Hex20,
    /// Triquadratic (Lagrange) hexahedron, 27 nodes.
    Hex27,
}

/// The boundary face kinds that carry surface tractions (runtime tag for [`Tri3`],
/// [`Quad4`], [`Tri6`], [`Quad8`], [`Quad9`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaceKind {
    /// Linear triangle, 3 nodes (faces of tet4).
    Tri3,
    /// Bilinear quadrilateral, 4 nodes (faces of hex8).
    Quad4,
    /// Quadratic triangle, 6 nodes (faces of tet10).
    Tri6,
    /// Quadratic (serendipity) quadrilateral, 8 nodes (faces of hex20).
    Quad8,
    /// Biquadratic quadrilateral, 9 nodes (faces of hex27).
    Quad9,
}

/// The largest node count of a solid element (hex27).
pub const MAX_NODES: usize = 27;
/// The largest node count of a face (quad9).
pub const MAX_FACE_NODES: usize = 9;

/// Writes `f(ξ)` (an array) into a runtime-sized slice.
fn copy_into<const N: usize, T: Copy>(from: [T; N], out: &mut [T]) {
    out.copy_from_slice(&from);
}

impl SolidKind {
    /// All solid kinds.
    pub const ALL: [SolidKind; 5] = [
        SolidKind::Tet4,
        SolidKind::Hex8,
        SolidKind::Tet10,
        SolidKind::Hex20,
        SolidKind::Hex27,
    ];

    /// Number of nodes.
    pub fn n_nodes(self) -> usize {
        match self {
            SolidKind::Tet4 => 4,
            SolidKind::Hex8 => 8,
            SolidKind::Tet10 => 10,
            SolidKind::Hex20 => 20,
            SolidKind::Hex27 => 27,
        }
    }

    /// Lower-case name, as `fem_mesh::CellKind::name`: `"tet4"`, `"hex8"`, `"tet10"`,
    /// `"hex20"`, `"hex27"`.
    pub fn name(self) -> &'static str {
        match self {
            SolidKind::Tet4 => "tet4",
            SolidKind::Hex8 => "hex8",
            SolidKind::Tet10 => "tet10",
            SolidKind::Hex20 => "hex20",
            SolidKind::Hex27 => "hex27",
        }
    }

    /// Polynomial order of the shape functions (and of the geometry).
    pub fn order(self) -> usize {
        match self {
            SolidKind::Tet10 | SolidKind::Hex20 | SolidKind::Hex27 => 2,
            _ => 1,
        }
    }

    /// Whether the reference cell is the cube `[-1, 1]³` (hex8, hex20, hex27).
    pub fn is_hexahedron(self) -> bool {
        matches!(self, SolidKind::Hex8 | SolidKind::Hex20 | SolidKind::Hex27)
    }

    /// The kind of its boundary faces.
    pub fn face_kind(self) -> FaceKind {
        match self {
            SolidKind::Tet4 => FaceKind::Tri3,
            SolidKind::Hex8 => FaceKind::Quad4,
            SolidKind::Tet10 => FaceKind::Tri6,
            SolidKind::Hex20 => FaceKind::Quad8,
            SolidKind::Hex27 => FaceKind::Quad9,
        }
    }

    /// Reference node coordinates, Gmsh order.
    pub fn reference_nodes(self) -> &'static [[f64; 3]] {
        match self {
            SolidKind::Tet4 => &<Tet4 as ReferenceElement<4>>::NODES,
            SolidKind::Hex8 => &<Hex8 as ReferenceElement<8>>::NODES,
            SolidKind::Tet10 => &<Tet10 as ReferenceElement<10>>::NODES,
            SolidKind::Hex20 => &<Hex20 as ReferenceElement<20>>::NODES,
            SolidKind::Hex27 => &<Hex27 as ReferenceElement<27>>::NODES,
        }
    }

    /// Shape function values at `xi` into `out` (length [`n_nodes`](Self::n_nodes)).
    pub fn values_into(self, xi: [f64; 3], out: &mut [f64]) {
        match self {
            SolidKind::Tet4 => copy_into(Tet4::values(xi), out),
            SolidKind::Hex8 => copy_into(Hex8::values(xi), out),
            SolidKind::Tet10 => copy_into(Tet10::values(xi), out),
            SolidKind::Hex20 => copy_into(Hex20::values(xi), out),
            SolidKind::Hex27 => copy_into(Hex27::values(xi), out),
        }
    }

    /// Reference gradients at `xi` into `out` (length [`n_nodes`](Self::n_nodes)).
    pub fn gradients_into(self, xi: [f64; 3], out: &mut [[f64; 3]]) {
        match self {
            SolidKind::Tet4 => copy_into(Tet4::gradients(xi), out),
            SolidKind::Hex8 => copy_into(Hex8::gradients(xi), out),
            SolidKind::Tet10 => copy_into(Tet10::gradients(xi), out),
            SolidKind::Hex20 => copy_into(Hex20::gradients(xi), out),
            SolidKind::Hex27 => copy_into(Hex27::gradients(xi), out),
        }
    }
}

impl std::fmt::Display for SolidKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FaceKind {
    /// All face kinds.
    pub const ALL: [FaceKind; 5] = [
        FaceKind::Tri3,
        FaceKind::Quad4,
        FaceKind::Tri6,
        FaceKind::Quad8,
        FaceKind::Quad9,
    ];

    /// Number of nodes.
    pub fn n_nodes(self) -> usize {
        match self {
            FaceKind::Tri3 => 3,
            FaceKind::Quad4 => 4,
            FaceKind::Tri6 => 6,
            FaceKind::Quad8 => 8,
            FaceKind::Quad9 => 9,
        }
    }

    /// Lower-case name: `"tri3"`, `"quad4"`, `"tri6"`, `"quad8"`, `"quad9"`.
    pub fn name(self) -> &'static str {
        match self {
            FaceKind::Tri3 => "tri3",
            FaceKind::Quad4 => "quad4",
            FaceKind::Tri6 => "tri6",
            FaceKind::Quad8 => "quad8",
            FaceKind::Quad9 => "quad9",
        }
    }

    /// Reference node coordinates, Gmsh order (third component 0).
    pub fn reference_nodes(self) -> &'static [[f64; 3]] {
        match self {
            FaceKind::Tri3 => &<Tri3 as ReferenceElement<3>>::NODES,
            FaceKind::Quad4 => &<Quad4 as ReferenceElement<4>>::NODES,
            FaceKind::Tri6 => &<Tri6 as ReferenceElement<6>>::NODES,
            FaceKind::Quad8 => &<Quad8 as ReferenceElement<8>>::NODES,
            FaceKind::Quad9 => &<Quad9 as ReferenceElement<9>>::NODES,
        }
    }

    /// Shape function values at `xi` into `out` (length [`n_nodes`](Self::n_nodes)).
    pub fn values_into(self, xi: [f64; 3], out: &mut [f64]) {
        match self {
            FaceKind::Tri3 => copy_into(Tri3::values(xi), out),
            FaceKind::Quad4 => copy_into(Quad4::values(xi), out),
            FaceKind::Tri6 => copy_into(Tri6::values(xi), out),
            FaceKind::Quad8 => copy_into(Quad8::values(xi), out),
            FaceKind::Quad9 => copy_into(Quad9::values(xi), out),
        }
    }

    /// Reference gradients at `xi` into `out` (third component 0).
    pub fn gradients_into(self, xi: [f64; 3], out: &mut [[f64; 3]]) {
        match self {
            FaceKind::Tri3 => copy_into(Tri3::gradients(xi), out),
            FaceKind::Quad4 => copy_into(Quad4::gradients(xi), out),
            FaceKind::Tri6 => copy_into(Tri6::gradients(xi), out),
            FaceKind::Quad8 => copy_into(Quad8::gradients(xi), out),
            FaceKind::Quad9 => copy_into(Quad9::gradients(xi), out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points inside (and on the boundary of) each reference cell.
    fn sample_points(dim: usize, simplex: bool) -> Vec<[f64; 3]> {
        let z = if dim == 3 { 1.0 } else { 0.0 };
        if simplex {
            vec![
                [0.1, 0.2, 0.3 * z],
                [0.25, 0.25, 0.25 * z],
                [0.6, 0.1, 0.05 * z],
                [0.0, 0.0, 0.0],
            ]
        } else {
            vec![[0.1, -0.7, 0.3 * z], [0.9, 0.4, -0.2 * z], [-1.0, 1.0, z]]
        }
    }

    /// Partition of unity, the Kronecker property at the nodes, reproduction of linear
    /// fields (`Σ_a X_a N_a = ξ` and `Σ_a X_a ⊗ ∇N_a = I`) and gradients against central
    /// differences of the values.
    fn check<E: ReferenceElement<N>, const N: usize>(simplex: bool) {
        for (a, &node) in E::NODES.iter().enumerate() {
            let n = E::values(node);
            for b in 0..N {
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((n[b] - want).abs() < 1e-15, "N_{b}(node {a}) = {}", n[b]);
            }
        }
        for xi in sample_points(E::DIM, simplex) {
            let n = E::values(xi);
            let g = E::gradients(xi);
            assert!((n.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            for i in 0..E::DIM {
                let x: f64 = (0..N).map(|a| E::NODES[a][i] * n[a]).sum();
                assert!((x - xi[i]).abs() < 1e-14);
                assert!(g.iter().map(|ga| ga[i]).sum::<f64>().abs() < 1e-14);
                for j in 0..E::DIM {
                    let s: f64 = (0..N).map(|a| E::NODES[a][i] * g[a][j]).sum();
                    assert!((s - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
                }
            }
            let h = 1e-6;
            for k in 0..3 {
                let (mut p, mut m) = (xi, xi);
                p[k] += h;
                m[k] -= h;
                let (np, nm) = (E::values(p), E::values(m));
                for a in 0..N {
                    let fd = (np[a] - nm[a]) / (2.0 * h);
                    // The shape functions are at most quadratic in each variable, so the
                    // central difference is exact up to round-off.
                    assert!(
                        (fd - g[a][k]).abs() < 1e-9,
                        "node {a} dir {k}: {fd} vs {}",
                        g[a][k]
                    );
                }
            }
        }
    }

    #[test]
    fn shape_functions_of_every_element() {
        check::<Tet4, 4>(true);
        check::<Tet10, 10>(true);
        check::<Hex8, 8>(false);
        check::<Tri3, 3>(true);
        check::<Tri6, 6>(true);
        check::<Quad4, 4>(false);
        check::<Hex20, 20>(false);
        check::<Hex27, 27>(false);
        check::<Quad8, 8>(false);
        check::<Quad9, 9>(false);
    }

    #[test]
    fn second_order_hexahedra_reproduce_their_polynomials() {
        // Serendipity hex20 and quad8 reproduce x² + y z − 2 x y z... up to the serendipity
        // space (no ξ²η²); hex27/quad9 reproduce the full triquadratic space.
        let xi = [0.15, -0.3, 0.7];
        let f20 = |p: [f64; 3]| p[0] * p[0] + p[1] * p[2] - 2.0 * p[0] * p[1] + p[2] * p[2] * p[0];
        let n = Hex20::values(xi);
        let interp: f64 = (0..20).map(|a| n[a] * f20(Hex20::NODES[a])).sum();
        assert!((interp - f20(xi)).abs() < 1e-14, "{interp} vs {}", f20(xi));
        let f27 = |p: [f64; 3]| p[0] * p[0] * p[1] * p[1] * p[2] * p[2] + p[0] * p[1] - p[2];
        let n = Hex27::values(xi);
        let interp: f64 = (0..27).map(|a| n[a] * f27(Hex27::NODES[a])).sum();
        assert!((interp - f27(xi)).abs() < 1e-14);
        let g8 = |p: [f64; 3]| p[0] * p[0] + p[0] * p[1] * p[1] - p[1];
        let n = Quad8::values(xi);
        let interp: f64 = (0..8).map(|a| n[a] * g8(Quad8::NODES[a])).sum();
        assert!((interp - g8(xi)).abs() < 1e-14);
        let g9 = |p: [f64; 3]| p[0] * p[0] * p[1] * p[1] - p[1];
        let n = Quad9::values(xi);
        let interp: f64 = (0..9).map(|a| n[a] * g9(Quad9::NODES[a])).sum();
        assert!((interp - g9(xi)).abs() < 1e-14);
        // Node positions: mid-edge nodes at edge midpoints, face centres at face centres.
        assert_eq!(Hex27::NODES[8], [0.0, -1.0, -1.0]);
        assert_eq!(Hex27::NODES[19], [0.0, 1.0, 1.0]);
        assert_eq!(Hex27::NODES[20], [0.0, 0.0, -1.0]);
        assert_eq!(Hex27::NODES[22], [-1.0, 0.0, 0.0]);
        assert_eq!(Hex27::NODES[26], [0.0, 0.0, 0.0]);
        assert_eq!(Quad9::NODES[7], [-1.0, 0.0, 0.0]);
    }

    #[test]
    fn quadratic_elements_reproduce_quadratic_fields() {
        // x² + yz interpolated at the nodes is reproduced everywhere by tet10 (and x² + y by tri6).
        let f = |p: [f64; 3]| p[0] * p[0] + p[1] * p[2];
        let xi = [0.15, 0.3, 0.2];
        let n = Tet10::values(xi);
        let interp: f64 = (0..10).map(|a| n[a] * f(Tet10::NODES[a])).sum();
        assert!((interp - f(xi)).abs() < 1e-15);
        let g = |p: [f64; 3]| p[0] * p[0] + p[1] - p[0] * p[1];
        let n = Tri6::values(xi);
        let interp: f64 = (0..6).map(|a| n[a] * g(Tri6::NODES[a])).sum();
        assert!((interp - g(xi)).abs() < 1e-15);
    }

    #[test]
    fn runtime_tags_dispatch_to_the_elements() {
        let xi = [0.2, 0.1, 0.3];
        for kind in SolidKind::ALL {
            let n = kind.n_nodes();
            assert_eq!(kind.reference_nodes().len(), n);
            let mut v = vec![0.0; n];
            let mut g = vec![[0.0; 3]; n];
            kind.values_into(xi, &mut v);
            kind.gradients_into(xi, &mut g);
            assert!((v.iter().sum::<f64>() - 1.0).abs() < 1e-14, "{kind}");
        }
        for kind in FaceKind::ALL {
            let n = kind.n_nodes();
            assert_eq!(kind.reference_nodes().len(), n);
            let mut v = vec![0.0; n];
            let mut g = vec![[0.0; 3]; n];
            kind.values_into(xi, &mut v);
            kind.gradients_into(xi, &mut g);
            assert!(
                (v.iter().sum::<f64>() - 1.0).abs() < 1e-14,
                "{}",
                kind.name()
            );
        }
    }
}
