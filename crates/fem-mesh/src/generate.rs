//! Built-in structured mesh generators (no Gmsh needed).
//!
//! The generated meshes look like meshes read from Gmsh files: named groups
//! carry their cells in extra blocks (vertex cells for end points, quad4/tri3
//! faces for box sides), and block 0 always holds the domain cells.

use crate::cell::CellKind;
use crate::error::MeshError;
use crate::mesh::{CellBlock, Mesh, PhysicalGroup, norm};

/// Upper bound on the number of cells a generator creates (guards against
/// accidental huge allocations).
pub const MAX_CELLS: usize = 100_000_000;

fn positive(what: &'static str, value: f64) -> Result<(), MeshError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(MeshError::InvalidParameter {
            what,
            value: value.to_string(),
            expected: "a finite length > 0",
        })
    }
}

fn count(what: &'static str, value: usize) -> Result<(), MeshError> {
    if (1..=MAX_CELLS).contains(&value) {
        Ok(())
    } else {
        Err(MeshError::InvalidParameter {
            what,
            value: value.to_string(),
            expected: "a cell count from 1 to 100000000",
        })
    }
}

/// Line from the origin along `unit(direction)`: `n_cells` line2 cells of equal
/// length, `n_cells + 1` nodes numbered from the origin.
///
/// Blocks: 0 = line2 cells, 1 = two vertex cells (the end points).
/// Groups: `"left"` (dim 0, node 0), `"right"` (dim 0, last node),
/// `"domain"` (dim 1, all line cells).
pub fn line(length: f64, n_cells: usize, direction: [f64; 3]) -> Result<Mesh, MeshError> {
    positive("length", length)?;
    count("cells", n_cells)?;
    let d = norm(direction);
    if !(d.is_finite() && d > 0.0) {
        return Err(MeshError::InvalidParameter {
            what: "direction",
            value: format!("{direction:?}"),
            expected: "a finite, nonzero vector",
        });
    }
    let unit = direction.map(|c| c / d);
    let points = (0..=n_cells)
        .map(|i| {
            let s = length * i as f64 / n_cells as f64;
            unit.map(|c| s * c)
        })
        .collect();
    let mut lines = CellBlock::new(CellKind::Line2);
    for i in 0..n_cells {
        lines.push(&[i, i + 1]);
    }
    let mut ends = CellBlock::new(CellKind::Vertex);
    ends.push(&[0]);
    ends.push(&[n_cells]);
    let blocks = vec![lines, ends];
    let groups = vec![
        PhysicalGroup::from_cells("left", 0, 1, vec![(1, 0)], &blocks),
        PhysicalGroup::from_cells("right", 0, 2, vec![(1, 1)], &blocks),
        PhysicalGroup::from_cells(
            "domain",
            1,
            3,
            (0..n_cells).map(|c| (0, c)).collect(),
            &blocks,
        ),
    ];
    Ok(Mesh {
        points,
        blocks,
        groups,
    })
}

/// Cell type of [`box_mesh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoxCells {
    /// Each hexahedron split into 6 tet4 (Kuhn subdivision along its main
    /// diagonal); boundary faces are tri3.
    Tet4,
    /// Hex8 cells; boundary faces are quad4.
    Hex8,
    /// The [`BoxCells::Tet4`] mesh made second order: tet10 cells with straight edges
    /// (mid-edge nodes at the midpoints, numbered after the grid nodes in order of first
    /// appearance); boundary faces are tri6.
    Tet10,
}

/// Box `[0,lx] x [0,ly] x [0,lz]` divided into `nx * ny * nz` hexahedra
/// (or `6 nx ny nz` tetrahedra, linear or quadratic), all with positive volume. The tet mesh is
/// conforming: every face of a hex is split along the diagonal from its
/// lowest to its highest corner, from both sides.
///
/// Node `(i, j, k)` (at `(i lx/nx, j ly/ny, k lz/nz)`) has index
/// `i + (nx+1) (j + (ny+1) k)`.
///
/// Blocks: 0 = hex8/tet4/tet10 cells, 1 = quad4/tri3/tri6 boundary faces, oriented with
/// outward normals (counter-clockwise seen from outside).
/// Groups (tags 1..=7): `"xmin"`, `"xmax"`, `"ymin"`, `"ymax"`, `"zmin"`,
/// `"zmax"` (dim 2, boundary faces), `"domain"` (dim 3, all volume cells).
pub fn box_mesh(lengths: [f64; 3], n: [usize; 3], cells: BoxCells) -> Result<Mesh, MeshError> {
    if cells == BoxCells::Tet10 {
        let mut mesh = box_mesh(lengths, n, BoxCells::Tet4)?;
        make_second_order(&mut mesh);
        return Ok(mesh);
    }
    for (what, l) in ["lengths[0]", "lengths[1]", "lengths[2]"]
        .into_iter()
        .zip(lengths)
    {
        positive(what, l)?;
    }
    for (what, k) in ["cells[0]", "cells[1]", "cells[2]"].into_iter().zip(n) {
        count(what, k)?;
    }
    let n_hex = n[0]
        .checked_mul(n[1])
        .and_then(|v| v.checked_mul(n[2]))
        .filter(|&v| v <= MAX_CELLS)
        .ok_or(MeshError::InvalidParameter {
            what: "cells",
            value: format!("{} x {} x {}", n[0], n[1], n[2]),
            expected: "at most 100000000 cells in total",
        })?;

    let id = |p: [usize; 3]| p[0] + (n[0] + 1) * (p[1] + (n[1] + 1) * p[2]);
    let mut points = Vec::with_capacity((n[0] + 1) * (n[1] + 1) * (n[2] + 1));
    for k in 0..=n[2] {
        for j in 0..=n[1] {
            for i in 0..=n[0] {
                let ijk = [i, j, k];
                points.push(std::array::from_fn(|a| {
                    lengths[a] * ijk[a] as f64 / n[a] as f64
                }));
            }
        }
    }

    let (volume_kind, face_kind) = match cells {
        BoxCells::Hex8 => (CellKind::Hex8, CellKind::Quad4),
        BoxCells::Tet4 | BoxCells::Tet10 => (CellKind::Tet4, CellKind::Tri3),
    };
    let mut volume = CellBlock::new(volume_kind);
    volume
        .connectivity
        .reserve(n_hex * if cells == BoxCells::Hex8 { 8 } else { 24 });
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let c = |d: [usize; 3]| id([i + d[0], j + d[1], k + d[2]]);
                match cells {
                    BoxCells::Hex8 => {
                        volume.push(&HEX_CORNERS.map(c));
                    }
                    BoxCells::Tet4 | BoxCells::Tet10 => {
                        for (perm, positive) in KUHN_PERMUTATIONS {
                            let mut v = [[0usize; 3]; 4];
                            for s in 0..3 {
                                v[s + 1] = v[s];
                                v[s + 1][perm[s]] = 1;
                            }
                            if !positive {
                                v.swap(2, 3);
                            }
                            volume.push(&v.map(c));
                        }
                    }
                }
            }
        }
    }

    // Boundary faces. Axes (a, b, c) are cyclic, so e_b x e_c = e_a.
    let mut faces = CellBlock::new(face_kind);
    let mut face_groups = Vec::with_capacity(6);
    for a in 0..3 {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        for side in 0..2 {
            let mut group_cells = Vec::with_capacity(n[b] * n[c] * 2);
            for ic in 0..n[c] {
                for ib in 0..n[b] {
                    // Local corner (db, dc) of the face -> node index.
                    let node = |(db, dc): (usize, usize)| {
                        let mut p = [0; 3];
                        p[a] = side * n[a];
                        p[b] = ib + db;
                        p[c] = ic + dc;
                        id(p)
                    };
                    // Counter-clockwise in (b, c) gives normal +e_a (outward on the max side).
                    let local: &[&[(usize, usize)]] = match (cells, side) {
                        (BoxCells::Hex8, 1) => &[&[(0, 0), (1, 0), (1, 1), (0, 1)]],
                        (BoxCells::Hex8, _) => &[&[(0, 0), (0, 1), (1, 1), (1, 0)]],
                        (BoxCells::Tet4 | BoxCells::Tet10, 1) => {
                            &[&[(0, 0), (1, 0), (1, 1)], &[(0, 0), (1, 1), (0, 1)]]
                        }
                        (BoxCells::Tet4 | BoxCells::Tet10, _) => {
                            &[&[(0, 0), (1, 1), (1, 0)], &[(0, 0), (0, 1), (1, 1)]]
                        }
                    };
                    for f in local {
                        let nodes: Vec<usize> = f.iter().map(|&l| node(l)).collect();
                        group_cells.push((1, faces.push(&nodes)));
                    }
                }
            }
            let name = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"][2 * a + side];
            face_groups.push((name, group_cells));
        }
    }

    let n_volume = volume.n_cells();
    let blocks = vec![volume, faces];
    let mut groups: Vec<PhysicalGroup> = face_groups
        .into_iter()
        .zip(1..)
        .map(|((name, cells), tag)| PhysicalGroup::from_cells(name, 2, tag, cells, &blocks))
        .collect();
    groups.push(PhysicalGroup::from_cells(
        "domain",
        3,
        7,
        (0..n_volume).map(|c| (0, c)).collect(),
        &blocks,
    ));
    Ok(Mesh {
        points,
        blocks,
        groups,
    })
}

/// Turns tet4 and tri3 blocks into tet10 and tri6 with a mid-edge node at the midpoint of
/// every edge (one node per edge, shared by all cells on it; new nodes are numbered after the
/// existing ones in order of first appearance), and recomputes the groups' node lists.
fn make_second_order(mesh: &mut Mesh) {
    let mut edge_nodes: std::collections::HashMap<(usize, usize), usize> =
        std::collections::HashMap::new();
    let points = &mut mesh.points;
    let mut mid_node = |a: usize, b: usize| {
        let key = (a.min(b), a.max(b));
        *edge_nodes.entry(key).or_insert_with(|| {
            let (p, q) = (points[a], points[b]);
            points.push(std::array::from_fn(|i| 0.5 * (p[i] + q[i])));
            points.len() - 1
        })
    };
    for block in &mut mesh.blocks {
        let (kind, edges): (CellKind, &[(usize, usize)]) = match block.kind {
            CellKind::Tet4 => (CellKind::Tet10, &crate::cell::TET10_EDGES),
            CellKind::Tri3 => (CellKind::Tri6, &crate::cell::TRI6_EDGES),
            _ => continue,
        };
        let corners = block.kind.n_nodes();
        let mut quadratic = CellBlock::new(kind);
        quadratic
            .connectivity
            .reserve(block.n_cells() * kind.n_nodes());
        for cell in block.cells() {
            let mut nodes = cell.to_vec();
            nodes.extend(edges.iter().map(|&(a, b)| mid_node(cell[a], cell[b])));
            debug_assert_eq!(nodes.len(), corners + edges.len());
            quadratic.push(&nodes);
        }
        *block = quadratic;
    }
    let blocks = &mesh.blocks;
    for g in &mut mesh.groups {
        *g = PhysicalGroup::from_cells(
            g.name.clone(),
            g.dim,
            g.tag,
            std::mem::take(&mut g.cells),
            blocks,
        );
    }
}

/// Hex8 corners in Gmsh order as offsets from the lowest corner.
const HEX_CORNERS: [[usize; 3]; 8] = [
    [0, 0, 0],
    [1, 0, 0],
    [1, 1, 0],
    [0, 1, 0],
    [0, 0, 1],
    [1, 0, 1],
    [1, 1, 1],
    [0, 1, 1],
];

/// Axis orders of the 6 Kuhn tetrahedra and whether the permutation is even
/// (the tet `0, e_p0, e_p0+e_p1, (1,1,1)` then has positive volume).
const KUHN_PERMUTATIONS: [([usize; 3], bool); 6] = [
    ([0, 1, 2], true),
    ([1, 2, 0], true),
    ([2, 0, 1], true),
    ([0, 2, 1], false),
    ([2, 1, 0], false),
    ([1, 0, 2], false),
];

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::mesh::{cross, sub};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn line_nodes_and_groups() {
        let m = line(2.0, 4, [0.0, 3.0, 4.0]).unwrap();
        m.validate().unwrap();
        assert_eq!(m.n_nodes(), 5);
        assert_eq!(m.blocks[0].kind, CellKind::Line2);
        assert_eq!(m.blocks[0].n_cells(), 4);
        assert_eq!(m.max_dim(), 1);
        assert_eq!(m.points[4], [0.0, 2.0 * 0.6, 2.0 * 0.8]);
        assert_eq!(m.group("left").unwrap().nodes, vec![0]);
        assert_eq!(m.group("right").unwrap().nodes, vec![4]);
        let d = m.group("domain").unwrap();
        assert_eq!((d.dim, d.cells.len(), d.nodes.len()), (1, 4, 5));
        assert!(close(m.measure_of_dim(1), 2.0));
    }

    #[test]
    fn line_rejects_bad_parameters() {
        for (l, n, d) in [
            (0.0, 3, [1.0, 0.0, 0.0]),
            (-1.0, 3, [1.0, 0.0, 0.0]),
            (f64::NAN, 3, [1.0, 0.0, 0.0]),
            (1.0, 0, [1.0, 0.0, 0.0]),
            (1.0, 3, [0.0, 0.0, 0.0]),
            (1.0, 3, [f64::INFINITY, 0.0, 0.0]),
        ] {
            assert!(matches!(
                line(l, n, d),
                Err(MeshError::InvalidParameter { .. })
            ));
        }
    }

    #[test]
    fn box_rejects_bad_parameters() {
        assert!(box_mesh([1.0, 0.0, 1.0], [1, 1, 1], BoxCells::Hex8).is_err());
        assert!(box_mesh([1.0, 1.0, 1.0], [1, 0, 1], BoxCells::Tet4).is_err());
        let e = box_mesh([1.0; 3], [usize::MAX, 2, 2], BoxCells::Tet4).unwrap_err();
        assert!(e.to_string().contains("100000000"), "{e}");
        let e = box_mesh([1.0; 3], [100_000, 100_000, 2], BoxCells::Hex8).unwrap_err();
        assert!(
            e.to_string().contains("at most 100000000 cells in total"),
            "{e}"
        );
    }

    fn check_box(cells: BoxCells, per_hex: usize, face_kind: CellKind) {
        let (l, n) = ([2.0, 0.5, 1.5], [3, 2, 4]);
        let m = box_mesh(l, n, cells).unwrap();
        m.validate().unwrap();
        assert_eq!(m.n_nodes(), 4 * 3 * 5);
        assert_eq!(m.blocks[0].n_cells(), per_hex * 24);
        assert_eq!(m.blocks[1].kind, face_kind);
        assert_eq!(m.max_dim(), 3);

        // Total volume from positive cell volumes.
        for c in 0..m.blocks[0].n_cells() {
            assert!(m.cell_measure(0, c) > 0.0);
        }
        assert!(close(m.measure_of_dim(3), 2.0 * 0.5 * 1.5));
        // Surface area.
        assert!(close(
            m.measure_of_dim(2),
            2.0 * (2.0 * 0.5 + 2.0 * 1.5 + 0.5 * 1.5)
        ));

        // Groups: names, nodes on the right plane, outward normals.
        let names = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax", "domain"];
        assert_eq!(m.group_names(), names);
        for (g, name) in m.groups.iter().zip(names).take(6) {
            assert_eq!(g.name, name);
            assert_eq!(g.dim, 2);
            let axis = (g.tag as usize - 1) / 2;
            let at_max = g.tag % 2 == 0;
            let coord = if at_max { l[axis] } else { 0.0 };
            let (nb, nc) = (n[(axis + 1) % 3], n[(axis + 2) % 3]);
            assert_eq!(g.nodes.len(), (nb + 1) * (nc + 1), "{name}");
            for &p in &g.nodes {
                assert_eq!(m.points[p][axis], coord, "{name}");
            }
            assert_eq!(g.cells.len(), nb * nc * if per_hex == 6 { 2 } else { 1 });
            for &(b, c) in &g.cells {
                let x = m.cell_points(b, c);
                let normal = cross(sub(x[1], x[0]), sub(x[2], x[0]));
                let sign = if at_max { 1.0 } else { -1.0 };
                assert!(sign * normal[axis] > 0.0, "{name} face {c} points inwards");
            }
        }
        let d = m.group("domain").unwrap();
        assert_eq!((d.dim, d.cells.len(), d.nodes.len()), (3, per_hex * 24, 60));
    }

    #[test]
    fn box_hex8() {
        check_box(BoxCells::Hex8, 1, CellKind::Quad4);
    }

    #[test]
    fn box_tet4() {
        check_box(BoxCells::Tet4, 6, CellKind::Tri3);
    }

    #[test]
    fn box_tet10() {
        let (l, n) = ([2.0, 0.5, 1.5], [3, 2, 4]);
        let linear = box_mesh(l, n, BoxCells::Tet4).unwrap();
        let m = box_mesh(l, n, BoxCells::Tet10).unwrap();
        m.validate().unwrap();
        assert_eq!(
            (m.blocks[0].kind, m.blocks[1].kind),
            (CellKind::Tet10, CellKind::Tri6)
        );
        assert_eq!(m.blocks[0].n_cells(), 6 * 24);
        // Grid nodes keep their indices; one new node per edge: (4·3·5 grid nodes) plus the
        // edges of the Kuhn mesh (3 axis + 3 face-diagonal + 1 body-diagonal families).
        assert_eq!(&m.points[..60], &linear.points[..]);
        let edges = 3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4 // axis-parallel
            + 3 * 2 * 5 + 3 * 3 * 4 + 4 * 2 * 4 // face diagonals
            + 3 * 2 * 4; // body diagonals
        assert_eq!(m.n_nodes(), 60 + edges);
        assert!(close(m.measure_of_dim(3), 2.0 * 0.5 * 1.5));
        assert!(close(
            m.measure_of_dim(2),
            2.0 * (2.0 * 0.5 + 2.0 * 1.5 + 0.5 * 1.5)
        ));
        // Faces are the tet10 faces: each tri6 mid-edge node is shared with a tet10.
        let d = m.group("domain").unwrap();
        assert_eq!(d.nodes.len(), m.n_nodes());
        let xmax = m.group("xmax").unwrap();
        assert_eq!(xmax.nodes.len(), (2 * 2 + 1) * (2 * 4 + 1));
        assert!(xmax.nodes.iter().all(|&p| m.points[p][0] == 2.0));
    }

    /// Conformity: each triangle of the tet mesh is shared by two tets, or is
    /// a boundary face (then exactly one tet, and it is in the boundary block).
    #[test]
    fn box_tet4_is_conforming() {
        let m = box_mesh([1.0, 2.0, 3.0], [3, 3, 2], BoxCells::Tet4).unwrap();
        let mut count: HashMap<[usize; 3], usize> = HashMap::new();
        for t in m.blocks[0].cells() {
            for skip in 0..4 {
                let mut f: Vec<usize> = (0..4).filter(|&i| i != skip).map(|i| t[i]).collect();
                f.sort_unstable();
                *count.entry([f[0], f[1], f[2]]).or_default() += 1;
            }
        }
        let mut boundary: Vec<[usize; 3]> = m.blocks[1]
            .cells()
            .map(|f| {
                let mut f = f.to_vec();
                f.sort_unstable();
                [f[0], f[1], f[2]]
            })
            .collect();
        boundary.sort_unstable();
        let mut once: Vec<[usize; 3]> = count
            .iter()
            .filter(|&(_, &c)| c == 1)
            .map(|(f, _)| *f)
            .collect();
        once.sort_unstable();
        assert!(count.values().all(|&c| c == 1 || c == 2));
        assert_eq!(once, boundary);
    }
}
