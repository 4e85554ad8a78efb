//! The mesh type: nodes, blocks of cells, physical groups; measures and validation.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::cell::CellKind;
use crate::error::MeshError;

/// Cells of one kind; connectivity is flat, 0-based node indices,
/// [`CellKind::n_nodes`] per cell, in Gmsh node order.
#[derive(Clone, Debug)]
pub struct CellBlock {
    /// The kind of every cell in the block.
    pub kind: CellKind,
    /// `n_cells() * kind.n_nodes()` node indices.
    pub connectivity: Vec<usize>,
}

impl CellBlock {
    /// An empty block of cells of `kind`.
    pub fn new(kind: CellKind) -> CellBlock {
        CellBlock {
            kind,
            connectivity: Vec::new(),
        }
    }

    /// Number of cells in the block.
    pub fn n_cells(&self) -> usize {
        self.connectivity.len() / self.kind.n_nodes()
    }

    /// Node indices of cell `i`. Panics if `i >= n_cells()`.
    pub fn cell(&self, i: usize) -> &[usize] {
        let n = self.kind.n_nodes();
        &self.connectivity[i * n..(i + 1) * n]
    }

    /// Iterator over the cells' node index slices.
    pub fn cells(&self) -> impl ExactSizeIterator<Item = &[usize]> + '_ {
        self.connectivity.chunks_exact(self.kind.n_nodes())
    }

    /// Appends a cell; `nodes.len()` must equal `kind.n_nodes()` (checked by
    /// [`Mesh::validate`], not here). Returns the new cell's index.
    pub fn push(&mut self, nodes: &[usize]) -> usize {
        self.connectivity.extend_from_slice(nodes);
        self.n_cells() - 1
    }
}

/// A Gmsh physical group (or a generator's named boundary/region).
#[derive(Clone, Debug)]
pub struct PhysicalGroup {
    /// Name of the group. Gmsh groups without a name are called `"physical_{dim}_{tag}"`.
    pub name: String,
    /// Dimension of the group's cells (0 = points, 1 = curves, 2 = surfaces, 3 = volumes).
    pub dim: usize,
    /// Gmsh physical tag (generators number their groups 1, 2, …).
    pub tag: i32,
    /// Sorted, unique, 0-based node indices of all cells in the group.
    pub nodes: Vec<usize>,
    /// `(block index, cell index within block)` of the group's cells.
    pub cells: Vec<(usize, usize)>,
}

impl PhysicalGroup {
    /// A group made of `cells` of `blocks`; `nodes` is computed from them.
    /// Panics if a cell is out of range.
    pub fn from_cells(
        name: impl Into<String>,
        dim: usize,
        tag: i32,
        cells: Vec<(usize, usize)>,
        blocks: &[CellBlock],
    ) -> PhysicalGroup {
        let mut nodes: Vec<usize> = cells
            .iter()
            .flat_map(|&(b, c)| blocks[b].cell(c).iter().copied())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        PhysicalGroup {
            name: name.into(),
            dim,
            tag,
            nodes,
            cells,
        }
    }
}

/// An unstructured mesh: node coordinates, cells grouped by kind, and named groups.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    /// Node coordinates (unused components are 0 for 1D/2D meshes).
    pub points: Vec<[f64; 3]>,
    /// Cells, one block per kind (for meshes read from Gmsh files, in order of first appearance).
    pub blocks: Vec<CellBlock>,
    /// Physical groups, sorted by `(dim, tag)` for meshes read from Gmsh files.
    pub groups: Vec<PhysicalGroup>,
}

/// Relative tolerance for degenerate cells (times the mesh size to the power of the dimension).
const DEGENERATE_EPS: f64 = 1e-12;

impl Mesh {
    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.points.len()
    }

    /// Number of cells in all blocks (including boundary and vertex cells).
    pub fn n_cells(&self) -> usize {
        self.blocks.iter().map(CellBlock::n_cells).sum()
    }

    /// The group called `name`, if any (the first one, should names repeat).
    pub fn group(&self, name: &str) -> Option<&PhysicalGroup> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// Names of all groups, in order.
    pub fn group_names(&self) -> Vec<&str> {
        self.groups.iter().map(|g| g.name.as_str()).collect()
    }

    /// The blocks whose cells have topological dimension `dim`.
    pub fn blocks_of_dim(&self, dim: usize) -> impl Iterator<Item = &CellBlock> + '_ {
        self.blocks.iter().filter(move |b| b.kind.dim() == dim)
    }

    /// Indices (into [`blocks`](Self::blocks)) of the blocks whose cells have dimension `dim`.
    pub fn block_indices_of_dim(&self, dim: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.blocks.len()).filter(move |&b| self.blocks[b].kind.dim() == dim)
    }

    /// The block of cells of `kind`, if any.
    pub fn block_of_kind(&self, kind: CellKind) -> Option<&CellBlock> {
        self.blocks.iter().find(|b| b.kind == kind)
    }

    /// Highest topological dimension of any cell; 0 for a mesh without cells.
    pub fn max_dim(&self) -> usize {
        self.blocks.iter().map(|b| b.kind.dim()).max().unwrap_or(0)
    }

    /// Axis-aligned bounding box `(min, max)` of the nodes; `None` without nodes.
    pub fn bounding_box(&self) -> Option<([f64; 3], [f64; 3])> {
        let first = *self.points.first()?;
        Some(
            self.points
                .iter()
                .fold((first, first), |(mut lo, mut hi), p| {
                    for j in 0..3 {
                        lo[j] = lo[j].min(p[j]);
                        hi[j] = hi[j].max(p[j]);
                    }
                    (lo, hi)
                }),
        )
    }

    /// Coordinates of the nodes of cell `cell` of block `block`.
    pub fn cell_points(&self, block: usize, cell: usize) -> Vec<[f64; 3]> {
        self.blocks[block]
            .cell(cell)
            .iter()
            .map(|&n| self.points[n])
            .collect()
    }

    /// Length (1D), area (2D) or signed volume (3D) of a cell; 0 for a vertex.
    /// Integrated with Gauss rules exact for straight-sided cells, tet10 and hex8.
    /// Panics if the indices are out of range.
    pub fn cell_measure(&self, block: usize, cell: usize) -> f64 {
        let kind = self.blocks[block].kind;
        let x = self.cell_points(block, cell);
        let jac = |xi: [f64; 3]| jacobian(kind, &x, xi);
        match kind {
            CellKind::Vertex => 0.0,
            CellKind::Line2 | CellKind::Line3 => {
                let g = 0.6f64.sqrt();
                [(-g, 5.0 / 9.0), (0.0, 8.0 / 9.0), (g, 5.0 / 9.0)]
                    .iter()
                    .map(|&(u, w)| w * norm(col(&jac([u, 0.0, 0.0]), 0)))
                    .sum()
            }
            CellKind::Tri3 => 0.5 * norm(area_normal(&jac([0.0; 3]))),
            CellKind::Tri6 => {
                // Degree-2 rule: exact for flat tri6 (|J| is then quadratic).
                let (a, b) = (2.0 / 3.0, 1.0 / 6.0);
                [[b, b, 0.0], [a, b, 0.0], [b, a, 0.0]]
                    .iter()
                    .map(|&p| norm(area_normal(&jac(p))) / 6.0)
                    .sum()
            }
            CellKind::Quad4 => {
                let g = 1.0 / 3f64.sqrt();
                let mut a = 0.0;
                for u in [-g, g] {
                    for v in [-g, g] {
                        a += norm(area_normal(&jac([u, v, 0.0])));
                    }
                }
                a
            }
            CellKind::Tet4 => det3(&jac([0.0; 3])) / 6.0,
            CellKind::Tet10 => {
                // Keast degree-3 rule (det J of a tet10 is cubic).
                let (a, b) = (0.5, 1.0 / 6.0);
                let mut v = -2.0 / 15.0 * det3(&jac([0.25; 3]));
                for p in [[b, b, b], [a, b, b], [b, a, b], [b, b, a]] {
                    v += 3.0 / 40.0 * det3(&jac(p));
                }
                v
            }
            CellKind::Hex8 => {
                let g = 1.0 / 3f64.sqrt();
                let mut v = 0.0;
                for u in [-g, g] {
                    for s in [-g, g] {
                        for t in [-g, g] {
                            v += det3(&jac([u, s, t]));
                        }
                    }
                }
                v
            }
            CellKind::Quad8 | CellKind::Quad9 => {
                // 3×3 Gauss: exact for flat faces with straight edges.
                let mut a = 0.0;
                for (u, wu) in GAUSS3 {
                    for (v, wv) in GAUSS3 {
                        a += wu * wv * norm(area_normal(&jac([u, v, 0.0])));
                    }
                }
                a
            }
            CellKind::Hex20 | CellKind::Hex27 => {
                // 3×3×3 Gauss: exact for trilinear (and affine quadratic) geometry.
                let mut v = 0.0;
                for (u, wu) in GAUSS3 {
                    for (s, ws) in GAUSS3 {
                        for (t, wt) in GAUSS3 {
                            v += wu * ws * wt * det3(&jac([u, s, t]));
                        }
                    }
                }
                v
            }
        }
    }

    /// Sum of [`cell_measure`](Self::cell_measure) over all cells of dimension `dim`
    /// (total length, area or volume).
    pub fn measure_of_dim(&self, dim: usize) -> f64 {
        self.block_indices_of_dim(dim)
            .flat_map(|b| (0..self.blocks[b].n_cells()).map(move |c| (b, c)))
            .map(|(b, c)| self.cell_measure(b, c))
            .sum()
    }

    /// Human-readable summary used by `fem mesh FILE`: node count, cells by kind,
    /// physical groups (name, dim, tag, #nodes, #cells) and bounding box.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "nodes: {}", self.n_nodes());
        let _ = writeln!(
            s,
            "cells: {} (max dimension {})",
            self.n_cells(),
            self.max_dim()
        );
        let mut by_kind: BTreeMap<(usize, &str), usize> = BTreeMap::new();
        for b in &self.blocks {
            *by_kind.entry((b.kind.dim(), b.kind.name())).or_default() += b.n_cells();
        }
        for ((dim, name), n) in by_kind.iter().rev() {
            let _ = writeln!(s, "  {name:<8} {n:>9}  (dim {dim})");
        }
        let _ = writeln!(s, "physical groups: {}", self.groups.len());
        if !self.groups.is_empty() {
            let w = self
                .groups
                .iter()
                .map(|g| g.name.len())
                .max()
                .unwrap_or(0)
                .max(4);
            let _ = writeln!(
                s,
                "  {:<w$}  {:>3}  {:>5}  {:>9}  {:>9}",
                "name", "dim", "tag", "nodes", "cells"
            );
            for g in &self.groups {
                let _ = writeln!(
                    s,
                    "  {:<w$}  {:>3}  {:>5}  {:>9}  {:>9}",
                    g.name,
                    g.dim,
                    g.tag,
                    g.nodes.len(),
                    g.cells.len()
                );
            }
        }
        match self.bounding_box() {
            Some((lo, hi)) => {
                let _ = writeln!(
                    s,
                    "bounding box: [{}, {}, {}] .. [{}, {}, {}]",
                    lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
                );
            }
            None => {
                let _ = writeln!(s, "bounding box: (no nodes)");
            }
        }
        s
    }

    /// Checks the mesh and names the first offending node, cell or group:
    ///
    /// * node coordinates are finite;
    /// * every block's connectivity length is a multiple of its kind's node count,
    ///   and every node index is `< n_nodes()`;
    /// * lines have nonzero length (line3: the tangent points from node 0 to
    ///   node 1 at both ends and the middle);
    /// * triangles have nonzero area; quads have nonzero area and are not
    ///   folded (the corner normals agree);
    /// * tet4/tet10/hex8 have a positive Jacobian determinant (signed volume)
    ///   at the corners and the centroid, i.e. they follow Gmsh's node order
    ///   and are not inverted;
    /// * group cells and nodes exist.
    ///
    /// "Nonzero" means larger than `1e-12` times the bounding box size to the
    /// power of the cell's dimension.
    pub fn validate(&self) -> Result<(), MeshError> {
        let n_nodes = self.n_nodes();
        for (i, p) in self.points.iter().enumerate() {
            if !p.iter().all(|c| c.is_finite()) {
                return Err(MeshError::InvalidNode {
                    path: None,
                    node: i,
                    reason: format!("non-finite coordinates {p:?}"),
                });
            }
        }
        let scale = match self.bounding_box() {
            Some((lo, hi)) => (0..3).map(|j| hi[j] - lo[j]).fold(0.0, f64::max),
            None => 0.0,
        };
        let scale = if scale > 0.0 { scale } else { 1.0 };
        for (b, block) in self.blocks.iter().enumerate() {
            let kind = block.kind;
            let err = |cell: usize, reason: String| MeshError::InvalidCell {
                path: None,
                block: b,
                cell,
                kind,
                reason,
            };
            if block.connectivity.len() % kind.n_nodes() != 0 {
                return Err(err(
                    block.n_cells(),
                    format!(
                        "connectivity has {} entries, not a multiple of {} nodes per cell",
                        block.connectivity.len(),
                        kind.n_nodes()
                    ),
                ));
            }
            for (c, nodes) in block.cells().enumerate() {
                if let Some(&n) = nodes.iter().find(|&&n| n >= n_nodes) {
                    return Err(err(
                        c,
                        format!("node index {n} out of range (mesh has {n_nodes} nodes)"),
                    ));
                }
                let x: Vec<[f64; 3]> = nodes.iter().map(|&n| self.points[n]).collect();
                check_geometry(kind, &x, scale).map_err(|reason| err(c, reason))?;
            }
        }
        for g in &self.groups {
            let err = |reason: String| MeshError::InvalidGroup {
                path: None,
                group: g.name.clone(),
                reason,
            };
            for &(b, c) in &g.cells {
                if b >= self.blocks.len() || c >= self.blocks[b].n_cells() {
                    return Err(err(format!("cell ({b}, {c}) does not exist")));
                }
            }
            if let Some(&n) = g.nodes.iter().find(|&&n| n >= n_nodes) {
                return Err(err(format!("node {n} does not exist")));
            }
        }
        Ok(())
    }
}

/// 3-point Gauss–Legendre rule on `[-1, 1]`: `(point, weight)`.
const GAUSS3: [(f64, f64); 3] = [
    (-0.774_596_669_241_483_4, 5.0 / 9.0),
    (0.0, 8.0 / 9.0),
    (0.774_596_669_241_483_4, 5.0 / 9.0),
];

/// Geometric checks of one cell with node coordinates `x`; `Err(reason)` if it fails.
fn check_geometry(kind: CellKind, x: &[[f64; 3]], scale: f64) -> Result<(), String> {
    let eps = DEGENERATE_EPS;
    match kind {
        CellKind::Vertex => Ok(()),
        CellKind::Line2 | CellKind::Line3 => {
            let chord = sub(x[1], x[0]);
            let len = norm(chord);
            if len.partial_cmp(&(eps * scale)) != Some(std::cmp::Ordering::Greater) {
                return Err(format!("zero length ({len:e})"));
            }
            if kind == CellKind::Line3 {
                for u in [-1.0, 0.0, 1.0] {
                    let t = col(&jacobian(kind, x, [u, 0.0, 0.0]), 0);
                    if dot(t, chord) / len <= eps * scale {
                        return Err(format!(
                            "mid node (node 2) folds the curve back at reference point {u} \
                             (Gmsh line3 order is end, end, middle)"
                        ));
                    }
                }
            }
            Ok(())
        }
        CellKind::Tri3 => {
            let a = 0.5 * norm(area_normal(&jacobian(kind, x, [0.0; 3])));
            if a > eps * scale * scale {
                Ok(())
            } else {
                Err(format!("zero area ({a:e})"))
            }
        }
        CellKind::Quad4 | CellKind::Tri6 | CellKind::Quad8 | CellKind::Quad9 => {
            let normals: Vec<[f64; 3]> = kind
                .reference_nodes()
                .iter()
                .map(|&xi| area_normal(&jacobian(kind, x, xi)))
                .collect();
            let total = normals.iter().fold([0.0; 3], |s, n| add(s, *n));
            let tn = norm(total);
            // The corner normals are each about area/4 in size.
            if tn.partial_cmp(&(eps * scale * scale)) != Some(std::cmp::Ordering::Greater) {
                return Err(format!("zero area ({:e})", tn));
            }
            for (i, n) in normals.iter().enumerate() {
                if dot(*n, total) / tn <= eps * scale * scale {
                    return Err(format!(
                        "degenerate or folded at node {i} (nodes not in Gmsh's \
                         counter-clockwise order, a non-convex quad, or a mid-edge node \
                         that folds the face)"
                    ));
                }
            }
            Ok(())
        }
        CellKind::Tet4 | CellKind::Tet10 | CellKind::Hex8 | CellKind::Hex20 | CellKind::Hex27 => {
            let tol = eps * scale * scale * scale;
            // Corners and centroid; for the quadratic hexahedra every node (a misplaced
            // mid-edge or face node folds the cell there first).
            let n_check = match kind {
                CellKind::Hex20 | CellKind::Hex27 => kind.n_nodes(),
                _ => kind.n_corners(),
            };
            let mut points: Vec<[f64; 3]> = kind.reference_nodes()[..n_check].to_vec();
            points.push(kind.reference_centroid());
            for xi in points {
                let d = det3(&jacobian(kind, x, xi));
                if !d.is_finite() {
                    return Err(format!(
                        "the cell is too large to compute with: its Jacobian determinant (the \
                         volume scale) at reference point ({}, {}, {}) is {d}, not a finite \
                         number; use coordinates of a moderate size",
                        xi[0], xi[1], xi[2]
                    ));
                }
                if d.partial_cmp(&tol) != Some(std::cmp::Ordering::Greater) {
                    return Err(format!(
                        "non-positive Jacobian determinant {d:.3e} at reference point \
                         ({}, {}, {}): the cell is inverted or degenerate (expected Gmsh's \
                         node order with positive volume)",
                        xi[0], xi[1], xi[2]
                    ));
                }
            }
            Ok(())
        }
    }
}

/// `J[i][j] = d x_i / d xi_j` at reference point `xi`.
fn jacobian(kind: CellKind, x: &[[f64; 3]], xi: [f64; 3]) -> [[f64; 3]; 3] {
    let g = kind.shape_gradients(xi);
    let mut j = [[0.0; 3]; 3];
    for (xa, ga) in x.iter().zip(&g) {
        for r in 0..3 {
            for c in 0..3 {
                j[r][c] += xa[r] * ga[c];
            }
        }
    }
    j
}

fn col(j: &[[f64; 3]; 3], c: usize) -> [f64; 3] {
    [j[0][c], j[1][c], j[2][c]]
}

/// Cross product of the first two Jacobian columns (surface normal times area scale).
fn area_normal(j: &[[f64; 3]; 3]) -> [f64; 3] {
    cross(col(j, 0), col(j, 1))
}

pub(crate) fn det3(j: &[[f64; 3]; 3]) -> f64 {
    dot(col(j, 0), cross(col(j, 1), col(j, 2)))
}

pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(crate) fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(kind: CellKind, points: Vec<[f64; 3]>) -> Mesh {
        let n = points.len();
        Mesh {
            points,
            blocks: vec![CellBlock {
                kind,
                connectivity: (0..n).collect(),
            }],
            groups: vec![],
        }
    }

    const UNIT_TET: [[f64; 3]; 4] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
    ];

    #[test]
    fn tet4_volume_and_validate() {
        let m = single(CellKind::Tet4, UNIT_TET.to_vec());
        assert!((m.cell_measure(0, 0) - 1.0 / 6.0).abs() < 1e-15);
        m.validate().unwrap();
    }

    #[test]
    fn validate_catches_inverted_tet4() {
        let mut p = UNIT_TET.to_vec();
        p.swap(1, 2);
        let m = single(CellKind::Tet4, p);
        assert!(m.cell_measure(0, 0) < 0.0);
        match m.validate() {
            Err(MeshError::InvalidCell {
                block: 0,
                cell: 0,
                kind: CellKind::Tet4,
                ref reason,
                ..
            }) => assert!(reason.contains("Jacobian"), "{reason}"),
            other => panic!("expected InvalidCell, got {other:?}"),
        }
    }

    fn tet10_points() -> Vec<[f64; 3]> {
        CellKind::Tet10
            .reference_nodes()
            .iter()
            .map(|p| [2.0 * p[0], 3.0 * p[1], p[2]])
            .collect()
    }

    #[test]
    fn tet10_volume_and_inverted_mid_node() {
        let m = single(CellKind::Tet10, tet10_points());
        assert!((m.cell_measure(0, 0) - 1.0).abs() < 1e-14);
        m.validate().unwrap();
        // Curved but valid: move a mid-edge node a little.
        let mut p = tet10_points();
        p[4][1] += 0.1;
        single(CellKind::Tet10, p).validate().unwrap();
        // Mid-edge node pulled past a corner: the Jacobian flips at that corner.
        let mut p = tet10_points();
        p[4] = [2.5, 0.0, 0.0];
        assert!(matches!(
            single(CellKind::Tet10, p).validate(),
            Err(MeshError::InvalidCell { .. })
        ));
    }

    #[test]
    fn hex8_volume_and_inverted() {
        let p: Vec<[f64; 3]> = CellKind::Hex8
            .reference_nodes()
            .iter()
            .map(|p| [p[0] + 1.0, 0.5 * (p[1] + 1.0), 1.5 * (p[2] + 1.0)])
            .collect();
        let m = single(CellKind::Hex8, p.clone());
        assert!((m.cell_measure(0, 0) - 2.0 * 1.0 * 3.0).abs() < 1e-12);
        m.validate().unwrap();
        let mut q = p;
        q.swap(0, 4);
        q.swap(1, 5);
        q.swap(2, 6);
        q.swap(3, 7);
        assert!(single(CellKind::Hex8, q).validate().is_err());
    }

    #[test]
    fn degenerate_2d_and_1d_cells() {
        let line = single(CellKind::Line2, vec![[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]);
        assert!(matches!(
            line.validate(),
            Err(MeshError::InvalidCell { .. })
        ));
        let tri = single(
            CellKind::Tri3,
            vec![[0.0; 3], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]],
        );
        assert!(tri.validate().is_err());
        let bowtie = single(
            CellKind::Quad4,
            vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
        );
        assert!(bowtie.validate().is_err());
        let quad = single(
            CellKind::Quad4,
            vec![[0.0; 3], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
        );
        quad.validate().unwrap();
        assert!((quad.cell_measure(0, 0) - 2.0).abs() < 1e-14);
        let line3 = single(
            CellKind::Line3,
            vec![[0.0; 3], [2.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
        );
        line3.validate().unwrap();
        assert!((line3.cell_measure(0, 0) - 2.0).abs() < 1e-14);
        let folded = single(
            CellKind::Line3,
            vec![[0.0; 3], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]],
        );
        assert!(folded.validate().is_err());
    }

    #[test]
    fn validate_catches_bad_indices_and_coordinates() {
        let mut m = single(CellKind::Tet4, UNIT_TET.to_vec());
        m.blocks[0].connectivity[3] = 4;
        assert!(matches!(
            m.validate(),
            Err(MeshError::InvalidCell { cell: 0, .. })
        ));
        let mut m = single(CellKind::Tet4, UNIT_TET.to_vec());
        m.points[2][1] = f64::NAN;
        assert!(matches!(
            m.validate(),
            Err(MeshError::InvalidNode { node: 2, .. })
        ));
        let mut m = single(CellKind::Tet4, UNIT_TET.to_vec());
        m.blocks[0].connectivity.pop();
        assert!(m.validate().is_err());
        let mut m = single(CellKind::Tet4, UNIT_TET.to_vec());
        m.groups.push(PhysicalGroup {
            name: "g".into(),
            dim: 3,
            tag: 1,
            nodes: vec![0],
            cells: vec![(0, 1)],
        });
        assert!(matches!(m.validate(), Err(MeshError::InvalidGroup { .. })));
    }

    #[test]
    fn summary_mentions_everything() {
        let mut m = single(CellKind::Tet4, UNIT_TET.to_vec());
        m.groups.push(PhysicalGroup::from_cells(
            "solid",
            3,
            7,
            vec![(0, 0)],
            &m.blocks,
        ));
        let s = m.summary();
        for word in ["nodes: 4", "tet4", "solid", "bounding box"] {
            assert!(s.contains(word), "{s}");
        }
        assert_eq!(m.group("solid").unwrap().nodes, vec![0, 1, 2, 3]);
    }
}
