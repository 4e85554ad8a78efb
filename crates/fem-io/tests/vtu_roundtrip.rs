//! Write `.vtu` files and read them back with vtkio's own reader.

mod common;

use common::{all_kinds_cells, all_kinds_mesh, fresh_dir};
use fem_io::{Compression, Field, Frame, OutputError, VtkCells, write_vtu};
use fem_mesh::CellKind;
use vtkio::Vtk;
use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, UnstructuredGridPiece, VertexNumbers};

const ALL: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zlib];

fn read_piece(path: &std::path::Path) -> UnstructuredGridPiece {
    let vtk = Vtk::import(path).unwrap_or_else(|e| panic!("import {}: {e}", path.display()));
    match vtk.data {
        DataSet::UnstructuredGrid { mut pieces, .. } => {
            assert_eq!(pieces.len(), 1);
            match pieces.remove(0) {
                Piece::Inline(p) => *p,
                other => panic!("unexpected piece {other:?}"),
            }
        }
        other => panic!("not an unstructured grid: {other:?}"),
    }
}

fn f64s(buf: &IOBuffer) -> Vec<f64> {
    match buf {
        IOBuffer::F64(v) => v.clone(),
        other => panic!("expected Float64 data, got {:?}", other.scalar_type()),
    }
}

/// (name, num_comp, values) of every data-array attribute.
fn arrays(attrs: &[Attribute]) -> Vec<(String, usize, Vec<f64>)> {
    attrs
        .iter()
        .map(|a| match a {
            Attribute::DataArray(d) => (d.name.clone(), d.num_comp(), f64s(&d.data)),
            Attribute::Field { name, .. } => panic!("unexpected field attribute {name}"),
        })
        .collect()
}

fn check_round_trip(
    path: &std::path::Path,
    points: &[[f64; 3]],
    cells: &VtkCells,
    point_fields: &[(&str, usize, Vec<f64>)],
    cell_fields: &[(&str, usize, Vec<f64>)],
) {
    let piece = read_piece(path);
    let flat: Vec<f64> = points.iter().flatten().copied().collect();
    assert_eq!(f64s(&piece.points), flat, "points of {}", path.display());
    let (conn, offs) = match piece.cells.cell_verts {
        VertexNumbers::XML {
            connectivity,
            offsets,
        } => (connectivity, offsets),
        legacy => legacy.into_xml(),
    };
    assert_eq!(conn, cells.connectivity());
    assert_eq!(offs, cells.offsets());
    let types: Vec<u8> = piece.cells.types.iter().map(|&t| t as u8).collect();
    assert_eq!(types, cells.type_codes());
    let expect = |fs: &[(&str, usize, Vec<f64>)]| {
        fs.iter()
            .map(|(n, c, v)| (n.to_string(), *c, v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(arrays(&piece.data.point), expect(point_fields));
    assert_eq!(arrays(&piece.data.cell), expect(cell_fields));
}

#[test]
fn all_cell_kinds_and_fields_round_trip_for_every_compression() {
    let dir = fresh_dir("all_kinds");
    let mesh = all_kinds_mesh();
    let cells = all_kinds_cells(&mesh);
    assert_eq!(
        cells.n_cells(),
        mesh.blocks.iter().map(|b| b.n_cells()).sum::<usize>() + 1
    );
    let n = mesh.points.len();
    let nc = cells.n_cells();
    let disp: Vec<f64> = (0..3 * n).map(|i| 1e-3 * i as f64 - 0.01).collect();
    let temp: Vec<f64> = (0..n).map(|i| (i as f64).sqrt()).collect();
    let stress: Vec<f64> = (0..9 * n).map(|i| (i as f64) * 1e6 + 0.1).collect();
    let id: Vec<f64> = (0..nc).map(|i| i as f64).collect();
    let flux: Vec<f64> = (0..3 * nc).map(|i| -(i as f64) / 7.0).collect();
    let two: Vec<f64> = (0..2 * nc).map(|i| i as f64 * 0.5).collect();
    for c in ALL {
        let path = dir.join(format!("all_{c:?}.vtu"));
        let frame = Frame::new(&mesh.points, &cells)
            .with_point_field(Field::vector("displacement", &disp))
            .with_point_field(Field::scalar("temperature", &temp))
            .with_point_field(Field::tensor("stress", &stress))
            .with_cell_field(Field::scalar("block", &id))
            .with_cell_field(Field::vector("flux", &flux))
            .with_cell_field(Field::new("pair", 2, &two));
        write_vtu(&path, &frame, c).unwrap();
        assert!(!dir.join(format!("all_{c:?}.vtu.tmp")).exists());
        check_round_trip(
            &path,
            &mesh.points,
            &cells,
            &[
                ("displacement", 3, disp.clone()),
                ("temperature", 1, temp.clone()),
                ("stress", 9, stress.clone()),
            ],
            &[
                ("block", 1, id.clone()),
                ("flux", 3, flux.clone()),
                ("pair", 2, two.clone()),
            ],
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("NumberOfComponents=\"3\""));
        match c {
            Compression::None => assert!(!text.contains("compressor")),
            Compression::Lz4 => assert!(text.contains("vtkLZ4DataCompressor")),
            Compression::Zlib => assert!(text.contains("vtkZLibDataCompressor")),
        }
    }
}

#[test]
fn arrays_of_exactly_whole_compression_blocks_round_trip() {
    // 4096 points x 3 x 8 bytes = 3 x 32768: vtkio's compressor block size exactly.
    let dir = fresh_dir("whole_blocks");
    let n = 4096;
    let points: Vec<[f64; 3]> = (0..n).map(|i| [i as f64, (i % 7) as f64, 0.25]).collect();
    let mut cells = VtkCells::new();
    let conn: Vec<usize> = (0..n - 1).flat_map(|i| [i, i + 1]).collect();
    cells.push_block(CellKind::Line2, &conn);
    let u: Vec<f64> = (0..3 * n).map(|i| (i as f64).sin()).collect();
    for c in ALL {
        let path = dir.join(format!("blocks_{c:?}.vtu"));
        let frame = Frame::new(&points, &cells).with_point_field(Field::vector("u", &u));
        write_vtu(&path, &frame, c).unwrap();
        check_round_trip(&path, &points, &cells, &[("u", 3, u.clone())], &[]);
    }
}

#[test]
fn rewriting_replaces_the_file_and_invalid_data_keeps_the_old_one() {
    let dir = fresh_dir("replace");
    let path = dir.join("f.vtu");
    let points = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Line2, &[0, 1]);
    write_vtu(&path, &Frame::new(&points, &cells), Compression::Lz4).unwrap();
    let moved = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
    write_vtu(&path, &Frame::new(&moved, &cells), Compression::Lz4).unwrap();
    check_round_trip(&path, &moved, &cells, &[], &[]);

    let short = [1.0];
    let bad = Frame::new(&moved, &cells).with_point_field(Field::scalar("s", &short));
    let err = write_vtu(&path, &bad, Compression::Lz4).unwrap_err();
    assert!(matches!(err, OutputError::InvalidData { .. }), "{err}");
    check_round_trip(&path, &moved, &cells, &[], &[]);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f.vtu"]);
}

#[test]
fn writing_into_a_missing_directory_names_the_path() {
    let dir = fresh_dir("missing_dir");
    let path = dir.join("no_such_dir").join("f.vtu");
    let points = [[0.0; 3]];
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Vertex, &[0]);
    let err = write_vtu(&path, &Frame::new(&points, &cells), Compression::None).unwrap_err();
    let OutputError::Io { op, .. } = &err else {
        panic!("expected an I/O error, got {err}")
    };
    assert_eq!(*op, "create");
    let msg = err.to_string();
    assert!(msg.contains("no_such_dir"), "{msg}");
    assert!(msg.contains("f.vtu"), "{msg}");
    assert!(err.path().starts_with(dir.join("no_such_dir")));
}

#[test]
fn gmsh_reference_nodes_land_on_vtk_edges() {
    // fem-mesh's reference nodes are in Gmsh order; after the permutation, every VTK mid-edge
    // node must be the midpoint of the VTK edge it belongs to.
    let mid = |a: [f64; 3], b: [f64; 3]| {
        [
            0.5 * (a[0] + b[0]),
            0.5 * (a[1] + b[1]),
            0.5 * (a[2] + b[2]),
        ]
    };
    let vtk_nodes = |kind: CellKind| {
        let (_, perm) = fem_io::vtu::gmsh_to_vtk(kind);
        let gmsh = kind.reference_nodes();
        perm.iter().map(|&g| gmsh[g]).collect::<Vec<_>>()
    };
    let tet = vtk_nodes(CellKind::Tet10);
    // vtkQuadraticTetra: nodes 4..9 on edges (0,1), (1,2), (2,0), (0,3), (1,3), (2,3).
    for (k, (a, b)) in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(tet[4 + k], mid(tet[a], tet[b]), "tet10 VTK node {}", 4 + k);
    }
    // vtkQuadraticTriangle: nodes 3, 4, 5 on edges (0,1), (1,2), (2,0).
    let tri = vtk_nodes(CellKind::Tri6);
    for (k, (a, b)) in [(0, 1), (1, 2), (2, 0)].into_iter().enumerate() {
        assert_eq!(tri[3 + k], mid(tri[a], tri[b]), "tri6 VTK node {}", 3 + k);
    }
    // vtkQuadraticEdge: ends 0, 1, midpoint 2.
    let edge = vtk_nodes(CellKind::Line3);
    assert_eq!(edge[2], mid(edge[0], edge[1]));
    // Linear kinds are passed through unchanged.
    for kind in [
        CellKind::Line2,
        CellKind::Tri3,
        CellKind::Quad4,
        CellKind::Tet4,
        CellKind::Hex8,
    ] {
        assert_eq!(vtk_nodes(kind), kind.reference_nodes(), "{kind:?}");
    }
}
