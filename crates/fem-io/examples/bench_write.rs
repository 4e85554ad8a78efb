//! Rough timing of one 1e6-cell `Line2` frame (1e6+1 points, a 3-component `displacement`
//! and `velocity`) for each compression:
//! `cargo run --release -p fem-io --example bench_write [-- N_CELLS [OUT_DIR]]`.

use std::time::Instant;

use fem_io::{Compression, Field, Frame, VtkCells, write_vtu};
use fem_mesh::CellKind;

fn main() -> Result<(), fem_io::OutputError> {
    let mut args = std::env::args().skip(1);
    let n_cells: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let n = n_cells + 1;
    let points: Vec<[f64; 3]> = (0..n)
        .map(|i| [i as f64 / n_cells as f64, 0.0, 0.0])
        .collect();
    let conn: Vec<usize> = (0..n_cells).flat_map(|i| [i, i + 1]).collect();
    let t0 = Instant::now();
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Line2, &conn);
    println!("build VtkCells: {:.3} s", t0.elapsed().as_secs_f64());
    let x = |i: usize| (i / 3) as f64 / n_cells as f64;
    let u: Vec<f64> = (0..3 * n).map(|i| 1e-3 * (10.0 * x(i)).sin()).collect();
    let v: Vec<f64> = (0..3 * n).map(|i| (7.0 * x(i)).cos()).collect();
    let frame = Frame::new(&points, &cells)
        .with_point_field(Field::vector("displacement", &u))
        .with_point_field(Field::vector("velocity", &v));
    for c in [Compression::None, Compression::Lz4, Compression::Zlib] {
        let path = dir.join(format!("bench_{c:?}.vtu"));
        let t = Instant::now();
        write_vtu(&path, &frame, c)?;
        let secs = t.elapsed().as_secs_f64();
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!(
            "{c:?}: {secs:.3} s, {:.1} MB -> {}",
            size as f64 / 1e6,
            path.display()
        );
    }
    Ok(())
}
