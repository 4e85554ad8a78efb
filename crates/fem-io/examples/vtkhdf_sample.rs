//! Writes small VTKHDF series (and the same frames as `.pvd`/`.vtu`) for VTK to read in CI:
//! `cargo run -p fem-io --example vtkhdf_sample -- OUT_DIR [FRAMES [DELAY_MS [NX [CASES]]]]`
//! (`NX` cells along an edge of the block, default 3; `CASES` a comma-separated subset of
//! `static,moving,single,parts,deflate,deflate_moving`).
//!
//! `OUT_DIR/static` holds a hex8 block whose points stay (the mesh stored once),
//! `OUT_DIR/moving` one whose points move (the points stored per step), `OUT_DIR/single` the
//! static block in single precision, and `OUT_DIR/parts` the block in two parts with ghost
//! flags; `OUT_DIR/deflate` and `OUT_DIR/deflate_moving` are `static` and `moving` with the
//! fields shuffled and deflated, written on the series' own thread. With `DELAY_MS`, each step waits that long after it is published, so that a test can
//! kill the process between (or during) steps.

use fem_io::{Compression, Field, Frame, FrameSeries, Precision, VtkCells, VtkHdfSeries};
use fem_mesh::CellKind;

fn block(nx: usize, x0: f64) -> (Vec<[f64; 3]>, VtkCells) {
    let n = nx + 1;
    let id = |i: usize, j: usize, k: usize| i + n * (j + n * k);
    let mut points = Vec::new();
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                points.push([x0 + i as f64, j as f64, k as f64]);
            }
        }
    }
    let mut conn = Vec::new();
    for k in 0..nx {
        for j in 0..nx {
            for i in 0..nx {
                conn.extend([
                    id(i, j, k),
                    id(i + 1, j, k),
                    id(i + 1, j + 1, k),
                    id(i, j + 1, k),
                    id(i, j, k + 1),
                    id(i + 1, j, k + 1),
                    id(i + 1, j + 1, k + 1),
                    id(i, j + 1, k + 1),
                ]);
            }
        }
    }
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Hex8, &conn);
    (points, cells)
}

fn main() -> Result<(), fem_io::OutputError> {
    let mut args = std::env::args().skip(1);
    let out = std::path::PathBuf::from(args.next().unwrap_or_else(|| "out/vtkhdf".into()));
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let delay: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let nx: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let cases = args
        .next()
        .unwrap_or_else(|| "static,moving,single,parts,deflate,deflate_moving".into());
    for case in cases.split(',') {
        let dir = out.join(case);
        let precision = if case == "single" {
            Precision::Single
        } else {
            Precision::Double
        };
        let mut hdf = VtkHdfSeries::create(&dir, case, precision, frames)?;
        if case.starts_with("deflate") {
            hdf.set_deflate(Some(1));
        }
        let mut pvd = FrameSeries::create(&dir, case, Compression::Lz4)?;
        let pieces: Vec<(Vec<[f64; 3]>, VtkCells)> = if case == "parts" {
            vec![
                block(nx.div_ceil(2), 0.0),
                block(nx.div_ceil(2), nx.div_ceil(2) as f64),
            ]
        } else {
            vec![block(nx, 0.0)]
        };
        for step in 0..frames {
            let t = 0.1 * step as f64;
            let mut owned = Vec::new();
            for (p, (points, cells)) in pieces.iter().enumerate() {
                let moved: Vec<[f64; 3]> = points
                    .iter()
                    .map(|q| {
                        if case.ends_with("moving") {
                            [q[0] + t, q[1], q[2] + 0.1 * t * q[0]]
                        } else {
                            *q
                        }
                    })
                    .collect();
                let u: Vec<f64> = points
                    .iter()
                    .flat_map(|q| [0.01 * t * q[2], 0.0, -0.02 * t * q[0] * q[0]])
                    .collect();
                let s: Vec<f64> = (0..cells.n_cells())
                    .map(|c| (c as f64 + 1.0) * (1.0 + t) / 3.0)
                    .collect();
                let ghost: Vec<u8> = points
                    .iter()
                    .map(|q| u8::from(p == 1 && q[0] == nx.div_ceil(2) as f64))
                    .collect();
                owned.push((moved, u, s, ghost, cells));
            }
            let parts: Vec<Frame<'_>> = owned
                .iter()
                .map(|(points, u, s, ghost, cells)| {
                    let f = Frame::new(points, cells)
                        .with_point_field(Field::vector("displacement", u))
                        .with_cell_field(Field::scalar("von_mises", s));
                    if case == "parts" {
                        f.with_ghost_points(ghost)
                    } else {
                        f
                    }
                })
                .collect();
            hdf.write_parts(t, &parts)?;
            if case != "parts" {
                pvd.write_frame(t, &parts[0])?;
            }
            if delay > 0 {
                std::thread::sleep(std::time::Duration::from_millis(delay));
            }
        }
        hdf.flush()?;
        println!("{}: {} steps", hdf.path().display(), hdf.n_frames());
    }
    Ok(())
}
