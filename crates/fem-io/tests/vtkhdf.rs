//! The VTKHDF series read back by an independent HDF5 reader (`hdf5-pure`): every step's
//! points, cells and fields as written (bit for bit in double precision, rounded once in
//! single), a file that holds its published steps whatever a killed writer did to the rest,
//! and a resumed series bitwise equal to an uninterrupted one.

use std::path::{Path, PathBuf};

use fem_io::{Field, Frame, Precision, VtkCells, VtkHdfSeries};
use fem_mesh::CellKind;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fem-io-vtkhdf-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A 2 × 1 × 1 hex8 block (12 points, 2 cells).
fn block() -> (Vec<[f64; 3]>, VtkCells) {
    let mut points = Vec::new();
    for k in 0..2 {
        for j in 0..2 {
            for i in 0..3 {
                points.push([i as f64, j as f64, k as f64]);
            }
        }
    }
    let id = |i: usize, j: usize, k: usize| i + 3 * (j + 2 * k);
    let mut conn = Vec::new();
    for i in 0..2 {
        conn.extend([
            id(i, 0, 0),
            id(i + 1, 0, 0),
            id(i + 1, 1, 0),
            id(i, 1, 0),
            id(i, 0, 1),
            id(i + 1, 0, 1),
            id(i + 1, 1, 1),
            id(i, 1, 1),
        ]);
    }
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Hex8, &conn);
    (points, cells)
}

/// Step `k`'s data: points (moved when `moving`), a displacement and a cell scalar.
fn step_data(k: usize, moving: bool) -> (f64, Vec<[f64; 3]>, Vec<f64>, Vec<f64>) {
    let (points, _) = block();
    let t = 0.25 * k as f64 + 1.0 / 3.0;
    let moved = points
        .iter()
        .map(|p| {
            if moving {
                [p[0] + t, p[1] * t.cos(), p[2]]
            } else {
                *p
            }
        })
        .collect();
    let u = points
        .iter()
        .flat_map(|p| [t.sin() * p[0], 1e-3 / (1.0 + t), -p[2] * t / 7.0])
        .collect();
    let s = vec![t / 3.0, -t * 1e10];
    (t, moved, u, s)
}

fn write(series: &mut VtkHdfSeries, cells: &VtkCells, k: usize, moving: bool) {
    let (t, points, u, s) = step_data(k, moving);
    let frame = Frame::new(&points, cells)
        .with_point_field(Field::vector("displacement", &u))
        .with_cell_field(Field::scalar("von_mises", &s));
    series.write_frame(t, &frame).unwrap();
}

/// Reads the file with hdf5-pure and checks steps `0..n` against [`step_data`].
fn check(path: &Path, n: usize, moving: bool, precision: Precision) {
    let file = hdf5_pure::File::open(path).unwrap();
    let steps = file.group("VTKHDF/Steps").unwrap();
    let attrs = steps.attrs().unwrap();
    assert_eq!(
        attrs["NSteps"].as_i64(),
        Some(n as i64),
        "{}",
        path.display()
    );
    let values = file
        .dataset("VTKHDF/Steps/Values")
        .unwrap()
        .read_f64()
        .unwrap();
    assert_eq!(values.len(), n);
    let (ref_points, cells) = block();
    let conn = file
        .dataset("VTKHDF/Connectivity")
        .unwrap()
        .read_i64()
        .unwrap();
    assert_eq!(
        conn,
        cells
            .connectivity()
            .iter()
            .map(|&c| c as i64)
            .collect::<Vec<_>>()
    );
    let offsets = file.dataset("VTKHDF/Offsets").unwrap().read_i64().unwrap();
    assert_eq!(offsets, vec![0, 8, 16]);
    assert_eq!(
        file.dataset("VTKHDF/Types").unwrap().read_u8().unwrap(),
        vec![12, 12]
    );
    let points = file.dataset("VTKHDF/Points").unwrap().read_f64().unwrap();
    let point_offsets = file
        .dataset("VTKHDF/Steps/PointOffsets")
        .unwrap()
        .read_i64()
        .unwrap();
    let u_all = file
        .dataset("VTKHDF/PointData/displacement")
        .unwrap()
        .read_f64()
        .unwrap();
    let s_all = file
        .dataset("VTKHDF/CellData/von_mises")
        .unwrap()
        .read_f64()
        .unwrap();
    let u_offsets = file
        .dataset("VTKHDF/Steps/PointDataOffsets/displacement")
        .unwrap()
        .read_i64()
        .unwrap();
    let s_offsets = file
        .dataset("VTKHDF/Steps/CellDataOffsets/von_mises")
        .unwrap()
        .read_i64()
        .unwrap();
    let round = |v: f64| match precision {
        Precision::Double => v,
        Precision::Single => v as f32 as f64,
    };
    for k in 0..n {
        let (t, p, u, s) = step_data(k, moving);
        assert_eq!(values[k].to_bits(), t.to_bits());
        let at = point_offsets[k] as usize * 3;
        let stored: Vec<f64> = points[at..at + 3 * ref_points.len()].to_vec();
        let expected: Vec<f64> = p.iter().flatten().copied().collect();
        assert_eq!(stored, expected, "points of step {k}");
        let at = u_offsets[k] as usize * 3;
        for (a, b) in u_all[at..at + u.len()].iter().zip(&u) {
            assert_eq!(a.to_bits(), round(*b).to_bits(), "displacement of step {k}");
        }
        let at = s_offsets[k] as usize;
        for (a, b) in s_all[at..at + 2].iter().zip(&s) {
            assert_eq!(a.to_bits(), round(*b).to_bits(), "von_mises of step {k}");
        }
    }
}

/// The ways the fields are stored: raw; shuffled and deflated on the caller's thread; the
/// same on a thread of its own.
const STORAGE: [(Option<u32>, bool); 3] = [(None, false), (Some(1), false), (Some(1), true)];

fn create(
    dir: &Path,
    precision: Precision,
    capacity: usize,
    storage: (Option<u32>, bool),
) -> VtkHdfSeries {
    let mut series = VtkHdfSeries::create(dir, "x", precision, capacity).unwrap();
    series.set_deflate(storage.0);
    series.set_background(storage.1);
    series
}

#[test]
fn every_step_reads_back_as_written() {
    for storage in STORAGE {
        for (name, moving, precision) in [
            ("static", false, Precision::Double),
            ("moving", true, Precision::Double),
            ("single", false, Precision::Single),
        ] {
            let dir = scratch(&format!("{name}-{storage:?}"));
            let (_, cells) = block();
            // Laid out for 3 frames, given 5: the file is laid out anew for more, and for
            // points that move, keeping what was written.
            let mut series = create(&dir, precision, 3, storage);
            for k in 0..5 {
                write(&mut series, &cells, k, moving);
                series.flush().unwrap();
                check(series.path(), k + 1, moving, precision);
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// A compressed file is smaller than the raw one when the fields compress (here a smooth
/// field over a larger block), and its chunks really are filtered (mask 0).
#[test]
fn compressed_fields_take_fewer_bytes() {
    let n = 40;
    let points: Vec<[f64; 3]> = (0..n * n)
        .map(|i| [(i % n) as f64, (i / n) as f64, 0.0])
        .collect();
    let mut conn = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = i + n * j;
            conn.extend([a, a + 1, a + n + 1, a + n]);
        }
    }
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Quad4, &conn);
    let mut sizes = Vec::new();
    for storage in [(None, false), (Some(1), true)] {
        let dir = scratch(&format!("size-{storage:?}"));
        let mut series = create(&dir, Precision::Double, 4, storage);
        for k in 0..4 {
            let u: Vec<f64> = points
                .iter()
                .flat_map(|p| [(p[0] / 7.0 + k as f64).sin(), 1e-3 * p[1], 0.0])
                .collect();
            let frame =
                Frame::new(&points, &cells).with_point_field(Field::vector("displacement", &u));
            series.write_frame(k as f64, &frame).unwrap();
        }
        series.flush().unwrap();
        sizes.push(std::fs::metadata(series.path()).unwrap().len());
        let file = hdf5_pure::File::open(series.path()).unwrap();
        let u = file
            .dataset("VTKHDF/PointData/displacement")
            .unwrap()
            .read_f64()
            .unwrap();
        assert_eq!(u.len(), 4 * 3 * points.len());
        assert_eq!(
            u[3 * points.len() + 3].to_bits(),
            (1.0f64 / 7.0 + 1.0).sin().to_bits()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Raw fields: 4 × 38 400 bytes; the displacement's third component is zero and its
    // second a linear ramp: shuffle + deflate take over half of them away.
    let raw_fields = (4 * 3 * 8 * points.len()) as u64;
    assert!(sizes[0] - sizes[1] > raw_fields / 2, "{sizes:?}");
}

#[test]
fn a_resumed_series_is_bitwise_the_uninterrupted_one() {
    let (_, cells) = block();
    for (moving, storage) in [false, true]
        .into_iter()
        .flat_map(|m| STORAGE.map(|s| (m, s)))
    {
        let whole = scratch(&format!("whole-{moving}-{storage:?}"));
        let mut series = create(&whole, Precision::Double, 8, storage);
        for k in 0..8 {
            write(&mut series, &cells, k, moving);
        }
        series.flush().unwrap();
        let reference = std::fs::read(series.path()).unwrap();

        // Cut short after 3 frames and a fourth one off the cadence, laid out for 4; resumed
        // from the checkpoint's 3 frames, laid out for 8.
        let cut = scratch(&format!("cut-{moving}-{storage:?}"));
        let mut series = create(&cut, Precision::Double, 4, storage);
        for k in 0..3 {
            write(&mut series, &cells, k, moving);
        }
        let (_, p, u, s) = step_data(6, moving);
        let off = Frame::new(&p, &cells)
            .with_point_field(Field::vector("displacement", &u))
            .with_cell_field(Field::scalar("von_mises", &s));
        series.write_frame(99.0, &off).unwrap();
        let times = series.times()[..3].to_vec();
        drop(series);
        let mut series = VtkHdfSeries::resume(&cut, "x", Precision::Double, 8, &times).unwrap();
        series.set_deflate(storage.0);
        series.set_background(storage.1);
        assert_eq!(series.n_frames(), 3);
        for k in 3..8 {
            write(&mut series, &cells, k, moving);
        }
        series.flush().unwrap();
        assert!(
            std::fs::read(series.path()).unwrap() == reference,
            "moving = {moving}, {storage:?}: the resumed file differs"
        );
        let _ = std::fs::remove_dir_all(&whole);
        let _ = std::fs::remove_dir_all(&cut);
    }
}

#[test]
fn a_resume_refuses_a_file_of_other_times_or_precision() {
    let dir = scratch("refuse");
    let (_, cells) = block();
    let mut series = VtkHdfSeries::create(&dir, "x", Precision::Double, 4).unwrap();
    for k in 0..2 {
        write(&mut series, &cells, k, false);
    }
    drop(series);
    let e = VtkHdfSeries::resume(&dir, "x", Precision::Double, 4, &[0.0, 1.0]).unwrap_err();
    assert!(e.to_string().contains("cannot resume"), "{e}");
    let times = [step_data(0, false).0, step_data(1, false).0];
    let mut series = VtkHdfSeries::resume(&dir, "x", Precision::Single, 4, &times).unwrap();
    let (t, p, u, s) = step_data(2, false);
    let frame = Frame::new(&p, &cells)
        .with_point_field(Field::vector("displacement", &u))
        .with_cell_field(Field::scalar("von_mises", &s));
    let e = series.write_frame(t, &frame).unwrap_err();
    assert!(e.to_string().contains("64-bit"), "{e}");
    std::fs::write(dir.join("y.vtkhdf"), b"not hdf5 at all").unwrap();
    let e = VtkHdfSeries::resume(&dir, "y", Precision::Double, 4, &times).unwrap_err();
    assert!(
        e.to_string().contains("not a VTKHDF file written by fem"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A writer killed while it writes step `k` leaves the bytes of step `k`'s slabs in any
/// state, and the publication (one write of less than a page) either done or not. Here the
/// file after step `k − 1` and after step `k` are compared: every byte that differs, but the
/// publication's, is overwritten with garbage, and the file must still read as its `k` first
/// steps, exactly (compressed: the step's chunks and the index copy it rewrites are among the
/// bytes torn).
#[test]
fn a_killed_writer_leaves_the_published_steps_readable() {
    // Compressed: in the caller's thread, so that the file can be read between two steps.
    for (moving, storage) in [false, true]
        .into_iter()
        .flat_map(|m| [(m, (None, false)), (m, (Some(1), false))])
    {
        let dir = scratch(&format!("killed-{moving}-{storage:?}"));
        let (_, cells) = block();
        let mut series = create(&dir, Precision::Double, 6, storage);
        // Step 0 and 1 first: a moving series is laid out anew at step 1.
        for k in 0..2 {
            write(&mut series, &cells, k, moving);
        }
        for k in 2..6 {
            let before = std::fs::read(series.path()).unwrap();
            write(&mut series, &cells, k, moving);
            let after = std::fs::read(series.path()).unwrap();
            assert_eq!(
                before.len(),
                after.len(),
                "the file is laid out for 6 steps"
            );
            let changed: Vec<usize> = (0..after.len())
                .filter(|&i| before[i] != after[i])
                .collect();
            // The publication is the only change below the data: one run of bytes in one page.
            let metadata_end = changed.iter().copied().filter(|&i| i < 8192).max();
            let published: Vec<usize> = changed.iter().copied().filter(|&i| i < 8192).collect();
            if let (Some(&first), Some(last)) = (published.first(), metadata_end) {
                assert_eq!(first / 4096, last / 4096, "the publication spans one page");
            }
            let mut torn = before.clone();
            for &i in &changed {
                if i >= 8192 {
                    torn[i] = 0xA5;
                }
            }
            let path = dir.join("torn.vtkhdf");
            std::fs::write(&path, &torn).unwrap();
            check(&path, k, moving, Precision::Double);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
