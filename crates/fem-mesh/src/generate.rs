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
    /// Each hexahedron split into 24 tet4: every face into 4 triangles about a node at its
    /// centre (shared with the neighbour), each joined to a node at the hexahedron's centre.
    /// The split has every symmetry of the cube, so the mesh has the box's: a square section
    /// bends alike about both axes, with no cross motion. Boundary faces are tri3.
    Tet4,
    /// Hex8 cells; boundary faces are quad4.
    Hex8,
    /// The [`BoxCells::Tet4`] mesh made second order: tet10 cells with straight edges
    /// (mid-edge nodes at the midpoints, numbered after the other nodes in order of first
    /// appearance); boundary faces are tri6.
    Tet10,
    /// The [`BoxCells::Hex8`] mesh made second order: hex20 (serendipity) cells, mid-edge
    /// nodes at the edge midpoints; boundary faces are quad8.
    Hex20,
    /// The [`BoxCells::Hex8`] mesh made triquadratic: hex27 cells with mid-edge, face-centre
    /// and body-centre nodes; boundary faces are quad9.
    Hex27,
}

/// Box `[0,lx] x [0,ly] x [0,lz]` divided into `nx * ny * nz` hexahedra (hex8, hex20 or
/// hex27), or `24 nx ny nz` tetrahedra (tet4 or tet10; see [`BoxCells::Tet4`]), all with
/// positive volume. The tet mesh is conforming.
///
/// Node `(i, j, k)` of the grid (at `(i lx/nx, j ly/ny, k lz/nz)`) has index
/// `i + (nx+1) (j + (ny+1) k)`. The tet meshes then number the face-centre nodes (in order of
/// first appearance) and the hexahedra's centres; the second-order meshes their new nodes in
/// order of first appearance (edges, then faces, then cell centres for hex27).
///
/// Blocks: 0 = the volume cells, 1 = the boundary faces (quad4/tri3/tri6/quad8/quad9), oriented
/// with outward normals (counter-clockwise seen from outside).
/// Groups (tags 1..=7): `"xmin"`, `"xmax"`, `"ymin"`, `"ymax"`, `"zmin"`,
/// `"zmax"` (dim 2, boundary faces), `"domain"` (dim 3, all volume cells).
pub fn box_mesh(lengths: [f64; 3], n: [usize; 3], cells: BoxCells) -> Result<Mesh, MeshError> {
    match cells {
        BoxCells::Tet10 => {
            let mut mesh = box_mesh(lengths, n, BoxCells::Tet4)?;
            make_second_order(&mut mesh);
            return Ok(mesh);
        }
        BoxCells::Hex20 | BoxCells::Hex27 => {
            let mut mesh = box_mesh(lengths, n, BoxCells::Hex8)?;
            make_second_order_hex(&mut mesh, cells == BoxCells::Hex27);
            return Ok(mesh);
        }
        BoxCells::Tet4 | BoxCells::Hex8 => {}
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

    let tets = cells == BoxCells::Tet4;
    let (volume_kind, face_kind) = if tets {
        (CellKind::Tet4, CellKind::Tri3)
    } else {
        (CellKind::Hex8, CellKind::Quad4)
    };
    // The centre node of each face of the grid (tets only), keyed by its sorted corners.
    let mut face_centres: std::collections::HashMap<[usize; 4], usize> =
        std::collections::HashMap::new();
    let mut face_centre = |corners: [usize; 4], points: &mut Vec<[f64; 3]>| -> usize {
        let mut key = corners;
        key.sort_unstable();
        *face_centres.entry(key).or_insert_with(|| {
            let c =
                std::array::from_fn(|a| corners.iter().map(|&v| points[v][a]).sum::<f64>() / 4.0);
            points.push(c);
            points.len() - 1
        })
    };
    let mut volume = CellBlock::new(volume_kind);
    volume
        .connectivity
        .reserve(n_hex * if tets { 96 } else { 8 });
    let mut tet_cells: Vec<[usize; 4]> = Vec::new();
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let c = |d: [usize; 3]| id([i + d[0], j + d[1], k + d[2]]);
                let hex = HEX_CORNERS.map(c);
                if !tets {
                    volume.push(&hex);
                    continue;
                }
                for face in HEX_FACES {
                    let corners = face.map(|a| hex[a]);
                    let fc = face_centre(corners, &mut points);
                    // A face edge a → b runs counter-clockwise seen from outside, so the
                    // triangle (b, a, face centre) faces inwards, towards the hexahedron's
                    // centre: the tet (b, a, face centre, centre) has positive volume. The
                    // centre is numbered after every face centre (set below).
                    for e in 0..4 {
                        tet_cells.push([corners[(e + 1) % 4], corners[e], fc, usize::MAX]);
                    }
                }
            }
        }
    }
    if tets {
        // Hexahedron centres, numbered after the face centres in cell order.
        let first_centre = points.len();
        let mut cell = 0;
        for k in 0..n[2] {
            for j in 0..n[1] {
                for i in 0..n[0] {
                    let c = |d: [usize; 3]| id([i + d[0], j + d[1], k + d[2]]);
                    let hex = HEX_CORNERS.map(c);
                    points.push(std::array::from_fn(|a| {
                        hex.iter().map(|&v| points[v][a]).sum::<f64>() / 8.0
                    }));
                    for t in &mut tet_cells[24 * cell..24 * (cell + 1)] {
                        t[3] = first_centre + cell;
                    }
                    cell += 1;
                }
            }
        }
        for t in &tet_cells {
            volume.push(t);
        }
    }

    // Boundary faces. Axes (a, b, c) are cyclic, so e_b x e_c = e_a.
    let mut faces = CellBlock::new(face_kind);
    let mut face_groups = Vec::with_capacity(6);
    for a in 0..3 {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        for side in 0..2 {
            let mut group_cells = Vec::with_capacity(n[b] * n[c] * if tets { 4 } else { 1 });
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
                    let quad = match side {
                        1 => [(0, 0), (1, 0), (1, 1), (0, 1)],
                        _ => [(0, 0), (0, 1), (1, 1), (1, 0)],
                    }
                    .map(node);
                    if tets {
                        let centre = face_centre(quad, &mut points);
                        for e in 0..4 {
                            group_cells
                                .push((1, faces.push(&[quad[e], quad[(e + 1) % 4], centre])));
                        }
                    } else {
                        group_cells.push((1, faces.push(&quad)));
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
    regroup(mesh);
}

/// Turns hex8 and quad4 blocks into hex20 and quad8 (mid-edge nodes), or with `lagrange` into
/// hex27 and quad9 (also face-centre and body-centre nodes), at the midpoints and centres of
/// the straight edges and flat faces; nodes shared as [`make_second_order`] shares them.
fn make_second_order_hex(mesh: &mut Mesh, lagrange: bool) {
    use crate::cell::{HEX20_EDGES, HEX27_FACES, QUAD8_EDGES};
    let mut shared: std::collections::HashMap<Vec<usize>, usize> = std::collections::HashMap::new();
    let points = &mut mesh.points;
    let mut centre_node = |corners: &[usize]| {
        let mut key = corners.to_vec();
        key.sort_unstable();
        *shared.entry(key).or_insert_with(|| {
            let c = std::array::from_fn(|i| {
                corners.iter().map(|&v| points[v][i]).sum::<f64>() / corners.len() as f64
            });
            points.push(c);
            points.len() - 1
        })
    };
    for block in &mut mesh.blocks {
        let kind = match (block.kind, lagrange) {
            (CellKind::Hex8, false) => CellKind::Hex20,
            (CellKind::Hex8, true) => CellKind::Hex27,
            (CellKind::Quad4, false) => CellKind::Quad8,
            (CellKind::Quad4, true) => CellKind::Quad9,
            _ => continue,
        };
        let mut quadratic = CellBlock::new(kind);
        quadratic
            .connectivity
            .reserve(block.n_cells() * kind.n_nodes());
        for cell in block.cells() {
            let mut nodes = cell.to_vec();
            if kind.dim() == 3 {
                nodes.extend(
                    HEX20_EDGES
                        .iter()
                        .map(|&(a, b)| centre_node(&[cell[a], cell[b]])),
                );
                if lagrange {
                    nodes.extend(HEX27_FACES.iter().map(|f| centre_node(&f.map(|a| cell[a]))));
                    nodes.push(centre_node(cell));
                }
            } else {
                nodes.extend(
                    QUAD8_EDGES
                        .iter()
                        .map(|&(a, b)| centre_node(&[cell[a], cell[b]])),
                );
                if lagrange {
                    nodes.push(centre_node(cell));
                }
            }
            debug_assert_eq!(nodes.len(), kind.n_nodes());
            quadratic.push(&nodes);
        }
        *block = quadratic;
    }
    regroup(mesh);
}

/// Recomputes the groups' node lists from their cells.
fn regroup(mesh: &mut Mesh) {
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

/// The six faces of a hex8 (Gmsh corner numbers), each counter-clockwise seen from outside.
const HEX_FACES: [[usize; 4]; 6] = [
    [0, 3, 2, 1],
    [4, 5, 6, 7],
    [0, 1, 5, 4],
    [2, 3, 7, 6],
    [0, 4, 7, 3],
    [1, 2, 6, 5],
];

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
        // Grid nodes; the tet split adds a node per face of the grid and per hexahedron.
        let faces = 4 * 2 * 4 + 3 * 3 * 4 + 3 * 2 * 5;
        let n_nodes = 4 * 3 * 5 + if per_hex == 24 { faces + 24 } else { 0 };
        assert_eq!(m.n_nodes(), n_nodes);
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
            let centres = if per_hex == 24 { nb * nc } else { 0 };
            assert_eq!(g.nodes.len(), (nb + 1) * (nc + 1) + centres, "{name}");
            for &p in &g.nodes {
                assert_eq!(m.points[p][axis], coord, "{name}");
            }
            assert_eq!(g.cells.len(), nb * nc * if per_hex == 24 { 4 } else { 1 });
            for &(b, c) in &g.cells {
                let x = m.cell_points(b, c);
                let normal = cross(sub(x[1], x[0]), sub(x[2], x[0]));
                let sign = if at_max { 1.0 } else { -1.0 };
                assert!(sign * normal[axis] > 0.0, "{name} face {c} points inwards");
            }
        }
        let d = m.group("domain").unwrap();
        assert_eq!(
            (d.dim, d.cells.len(), d.nodes.len()),
            (3, per_hex * 24, n_nodes)
        );
    }

    #[test]
    fn box_hex8() {
        check_box(BoxCells::Hex8, 1, CellKind::Quad4);
    }

    #[test]
    fn box_tet4() {
        check_box(BoxCells::Tet4, 24, CellKind::Tri3);
    }

    /// The tet mesh is mapped onto itself by the box's symmetries: the mirror planes through
    /// its centre, and swapping two axes of equal length and cell count.
    #[test]
    fn box_tet4_has_the_symmetries_of_the_box() {
        let (l, n) = ([3.0, 1.0, 1.0], [3, 1, 1]);
        let m = box_mesh(l, n, BoxCells::Tet4).unwrap();
        let key = |p: [f64; 3]| p.map(|c| (c * 1e9).round() as i64);
        let sorted_cells = |map: &dyn Fn([f64; 3]) -> [f64; 3]| {
            let mut cells: Vec<Vec<[i64; 3]>> = m.blocks[0]
                .cells()
                .map(|t| {
                    let mut v: Vec<[i64; 3]> = t.iter().map(|&a| key(map(m.points[a]))).collect();
                    v.sort_unstable();
                    v
                })
                .collect();
            cells.sort_unstable();
            cells
        };
        let identity = sorted_cells(&|p| p);
        let mirrors: [&dyn Fn([f64; 3]) -> [f64; 3]; 4] = [
            &|p| [l[0] - p[0], p[1], p[2]],
            &|p| [p[0], l[1] - p[1], p[2]],
            &|p| [p[0], p[1], l[2] - p[2]],
            &|p| [p[0], p[2], p[1]],
        ];
        for (i, map) in mirrors.iter().enumerate() {
            assert_eq!(sorted_cells(map), identity, "symmetry {i}");
        }
    }

    #[test]
    fn box_hex20_and_hex27() {
        let (l, n) = ([2.0, 0.5, 1.5], [3, 2, 4]);
        for (cells, kind, face, per_node) in [
            (BoxCells::Hex20, CellKind::Hex20, CellKind::Quad8, false),
            (BoxCells::Hex27, CellKind::Hex27, CellKind::Quad9, true),
        ] {
            let m = box_mesh(l, n, cells).unwrap();
            m.validate().unwrap();
            assert_eq!((m.blocks[0].kind, m.blocks[1].kind), (kind, face));
            assert_eq!(m.blocks[0].n_cells(), 24);
            // Grid nodes keep their indices; one node per edge (and per face and cell).
            let edges = 3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4;
            let faces = 4 * 2 * 4 + 3 * 3 * 4 + 3 * 2 * 5;
            let extra = if per_node { faces + 24 } else { 0 };
            assert_eq!(m.n_nodes(), 60 + edges + extra);
            assert!(close(m.measure_of_dim(3), 2.0 * 0.5 * 1.5));
            assert!(close(
                m.measure_of_dim(2),
                2.0 * (2.0 * 0.5 + 2.0 * 1.5 + 0.5 * 1.5)
            ));
            let xmax = m.group("xmax").unwrap();
            let face_nodes = (2 * 2 + 1) * (2 * 4 + 1) - if per_node { 0 } else { 2 * 4 };
            assert_eq!(xmax.nodes.len(), face_nodes);
            assert!(xmax.nodes.iter().all(|&p| m.points[p][0] == 2.0));
            // Every node of a cell sits at the trilinear image of its reference position.
            let refs = kind.reference_nodes();
            for (c, cell) in m.blocks[0].cells().enumerate() {
                let p0 = m.points[cell[0]];
                let p6 = m.points[cell[6]];
                for (a, &node) in cell.iter().enumerate() {
                    for i in 0..3 {
                        let want = p0[i] + 0.5 * (refs[a][i] + 1.0) * (p6[i] - p0[i]);
                        assert!(close(m.points[node][i], want), "cell {c} node {a}");
                    }
                }
            }
        }
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
        assert_eq!(m.blocks[0].n_cells(), 24 * 24);
        // The tet4 mesh's nodes keep their indices; one new node per edge: the grid's edges,
        // 4 from each face centre to the face's corners, 14 from each hexahedron's centre.
        let n_linear = linear.n_nodes();
        assert_eq!(&m.points[..n_linear], &linear.points[..]);
        let faces = 4 * 2 * 4 + 3 * 3 * 4 + 3 * 2 * 5;
        let edges = (3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4) + 4 * faces + 14 * 24;
        assert_eq!(m.n_nodes(), n_linear + edges);
        assert!(close(m.measure_of_dim(3), 2.0 * 0.5 * 1.5));
        assert!(close(
            m.measure_of_dim(2),
            2.0 * (2.0 * 0.5 + 2.0 * 1.5 + 0.5 * 1.5)
        ));
        // Faces are the tet10 faces: each tri6 mid-edge node is shared with a tet10.
        let d = m.group("domain").unwrap();
        assert_eq!(d.nodes.len(), m.n_nodes());
        let xmax = m.group("xmax").unwrap();
        // Grid nodes and face centres of the xmax side, and the mid-edge nodes of its tri6.
        let (corner, centres) = (3 * 5, 2 * 4);
        let face_edges = 2 * 5 + 3 * 4 + 4 * centres;
        assert_eq!(xmax.nodes.len(), corner + centres + face_edges);
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
