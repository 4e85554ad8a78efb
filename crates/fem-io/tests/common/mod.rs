//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use fem_io::VtkCells;
use fem_mesh::{CellBlock, CellKind, Mesh};

/// A fresh, empty directory under Cargo's per-target temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("fem-io-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test dir");
    dir
}

/// A small mesh with one block of every cell kind (Gmsh ordering), 20 points.
pub fn all_kinds_mesh() -> Mesh {
    let mut points = Vec::new();
    // 0..4: unit tet vertices; 4..10: tet10 mid-edge nodes in Gmsh order
    let v = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
    ];
    points.extend_from_slice(&v);
    let mid = |a: usize, b: usize| {
        [
            0.5 * (v[a][0] + v[b][0]),
            0.5 * (v[a][1] + v[b][1]),
            0.5 * (v[a][2] + v[b][2]),
        ]
    };
    for (a, b) in [(0, 1), (1, 2), (2, 0), (0, 3), (2, 3), (1, 3)] {
        points.push(mid(a, b));
    }
    // 10..18: a hexahedron at x in [2,3]
    for [x, y, z] in [
        [2.0, 0.0, 0.0],
        [3.0, 0.0, 0.0],
        [3.0, 1.0, 0.0],
        [2.0, 1.0, 0.0],
        [2.0, 0.0, 1.0],
        [3.0, 0.0, 1.0],
        [3.0, 1.0, 1.0],
        [2.0, 1.0, 1.0],
    ] {
        points.push([x, y, z]);
    }
    // 18, 19: extra points for a quadratic line
    points.push([4.0, 0.0, 0.0]);
    points.push([5.0, 0.0, 0.0]);
    let blocks = vec![
        CellBlock {
            kind: CellKind::Vertex,
            connectivity: vec![0],
        },
        CellBlock {
            kind: CellKind::Line2,
            connectivity: vec![0, 1, 1, 2],
        },
        CellBlock {
            kind: CellKind::Line3,
            connectivity: vec![18, 19, 1],
        },
        CellBlock {
            kind: CellKind::Tri3,
            connectivity: vec![0, 1, 2],
        },
        CellBlock {
            kind: CellKind::Tri6,
            connectivity: vec![0, 1, 2, 4, 5, 6],
        },
        CellBlock {
            kind: CellKind::Quad4,
            connectivity: vec![10, 11, 12, 13],
        },
        CellBlock {
            kind: CellKind::Tet4,
            connectivity: vec![0, 1, 2, 3],
        },
        CellBlock {
            kind: CellKind::Tet10,
            connectivity: (0..10).collect(),
        },
        CellBlock {
            kind: CellKind::Hex8,
            connectivity: (10..18).collect(),
        },
    ];
    Mesh {
        points,
        blocks,
        groups: Vec::new(),
    }
}

/// Cells of [`all_kinds_mesh`] plus one polyline.
pub fn all_kinds_cells(mesh: &Mesh) -> VtkCells {
    let mut cells = VtkCells::from_mesh(mesh);
    cells.push_polyline(&[10, 11, 18, 19]);
    cells
}
