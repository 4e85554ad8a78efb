//! Writes small sample series (every cell kind, every compression) for `.ci/check_vtk.py`.
//!
//! `cargo run -p fem-io --example write_samples -- OUT_DIR` writes
//! `OUT_DIR/{plain,lz4,zlib}/X.pvd` with two frames each and prints the `.pvd` paths.

use std::process::ExitCode;

use fem_io::{Compression, Field, Frame, FrameSeries, VtkCells};
use fem_mesh::{CellBlock, CellKind};

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: write_samples OUT_DIR");
        return ExitCode::from(2);
    };
    match run(std::path::Path::new(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("write_samples: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(out: &std::path::Path) -> Result<(), fem_io::OutputError> {
    // A unit tet10 (Gmsh order: mid-edge nodes on (0,1),(1,2),(2,0),(0,3),(2,3),(1,3)),
    // a line3 (ends 10, 11, midpoint 12), a line2 chain and a polyline through 4096 points
    // (whole compression blocks).
    let v = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
    ];
    let mut points: Vec<[f64; 3]> = v.to_vec();
    for (a, b) in [(0, 1), (1, 2), (2, 0), (0, 3), (2, 3), (1, 3)] {
        let (p, q): ([f64; 3], [f64; 3]) = (v[a], v[b]);
        points.push([
            0.5 * (p[0] + q[0]),
            0.5 * (p[1] + q[1]),
            0.5 * (p[2] + q[2]),
        ]);
    }
    points.extend([[2.0, 0.0, 0.0], [4.0, 0.0, 0.0], [3.0, 0.5, 0.0]]);
    let chain_start = points.len();
    let n_chain = 4096 - chain_start;
    points.extend((0..n_chain).map(|i| [5.0 + i as f64 * 1e-3, 0.0, 0.0]));
    let blocks = [
        CellBlock {
            kind: CellKind::Tet10,
            connectivity: (0..10).collect(),
        },
        CellBlock {
            kind: CellKind::Tet4,
            connectivity: vec![0, 1, 2, 3],
        },
        CellBlock {
            kind: CellKind::Line3,
            connectivity: vec![10, 11, 12],
        },
        CellBlock {
            kind: CellKind::Tri3,
            connectivity: vec![0, 1, 2],
        },
        CellBlock {
            kind: CellKind::Vertex,
            connectivity: vec![12],
        },
        CellBlock {
            kind: CellKind::Line2,
            connectivity: (chain_start..points.len() - 1)
                .flat_map(|i| [i, i + 1])
                .collect(),
        },
    ];
    let mut cells = VtkCells::new();
    for b in &blocks {
        cells.push_block(b.kind, &b.connectivity);
    }
    cells.push_polyline(&(chain_start..points.len()).collect::<Vec<_>>());
    let n = points.len();
    let nc = cells.n_cells();
    for (dir, c) in [
        ("plain", Compression::None),
        ("lz4", Compression::Lz4),
        ("zlib", Compression::Zlib),
    ] {
        let mut series = FrameSeries::create(out.join(dir), "sample", c)?;
        for step in 0..2 {
            let s = step as f64;
            let u: Vec<f64> = (0..3 * n).map(|i| s * 1e-3 * (i % 11) as f64).collect();
            let vel: Vec<f64> = (0..3 * n).map(|i| s * (i % 5) as f64).collect();
            let e: Vec<f64> = (0..nc).map(|i| s + i as f64).collect();
            let frame = Frame::new(&points, &cells)
                .with_point_field(Field::vector("displacement", &u))
                .with_point_field(Field::vector("velocity", &vel))
                .with_cell_field(Field::scalar("energy", &e));
            series.write_frame(0.5 * s, &frame)?;
        }
        println!("{}", series.pvd_path().display());
    }
    Ok(())
}
