//! `.pvd` collections, frame series and CSV histories.

mod common;

use std::path::Path;

use common::{all_kinds_cells, all_kinds_mesh, fresh_dir};
use fem_io::{
    Compression, Field, Frame, FrameSeries, HistoryWriter, OutputError, PvdWriter, VtkCells,
};
use fem_mesh::CellKind;

/// (timestep, file) of every `<DataSet>` line; also checks the surrounding structure.
fn pvd_entries(path: &Path) -> Vec<(f64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n"
    ));
    assert!(text.ends_with("  </Collection>\n</VTKFile>\n"));
    text.lines()
        .filter(|l| l.trim_start().starts_with("<DataSet"))
        .map(|l| {
            let attr = |name: &str| {
                let start = l.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                let len = l[start..].find('"').unwrap();
                l[start..start + len].to_string()
            };
            assert_eq!(attr("group"), "");
            assert_eq!(attr("part"), "0");
            (attr("timestep").parse().unwrap(), attr("file"))
        })
        .collect()
}

fn no_tmp_files(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name();
        assert!(
            !name.to_string_lossy().ends_with(".tmp"),
            "{name:?} left behind"
        );
    }
}

#[test]
fn pvd_lists_every_added_frame_with_exact_times() {
    let dir = fresh_dir("pvd");
    let path = dir.join("run.pvd");
    let mut pvd = PvdWriter::create(&path).unwrap();
    assert!(pvd_entries(&path).is_empty());
    let times = [0.0, 0.1 + 0.2, 1.0 / 3.0];
    for (i, &t) in times.iter().enumerate() {
        pvd.add(t, &format!("run_{i:06}.vtu")).unwrap();
        assert_eq!(pvd_entries(&path).len(), i + 1);
    }
    let entries = pvd_entries(&path);
    assert_eq!(entries.len(), 3);
    for (i, (t, f)) in entries.iter().enumerate() {
        assert_eq!(t.to_bits(), times[i].to_bits());
        assert_eq!(f, &format!("run_{i:06}.vtu"));
    }
    assert_eq!(pvd.len(), 3);
    no_tmp_files(&dir);

    let err = pvd.add(f64::NAN, "x.vtu").unwrap_err();
    assert!(matches!(err, OutputError::InvalidData { .. }));
    assert_eq!(pvd_entries(&path).len(), 3);
}

#[test]
fn pvd_escapes_file_names() {
    let dir = fresh_dir("pvd_escape");
    let path = dir.join("e.pvd");
    let mut pvd = PvdWriter::create(&path).unwrap();
    pvd.add(1.0, "a&b\"<c>.vtu").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("file=\"a&amp;b&quot;&lt;c&gt;.vtu\""),
        "{text}"
    );
}

#[test]
fn pvd_in_a_missing_directory_names_the_path() {
    let dir = fresh_dir("pvd_missing");
    let err = PvdWriter::create(dir.join("nope").join("x.pvd")).unwrap_err();
    assert!(matches!(err, OutputError::Io { .. }));
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn frame_series_writes_numbered_files_and_keeps_the_pvd_in_sync() {
    let root = fresh_dir("series");
    let dir = root.join("out").join("nested");
    let mesh = all_kinds_mesh();
    let cells = all_kinds_cells(&mesh);
    let mut series = FrameSeries::create(&dir, "beam", Compression::Lz4).unwrap();
    assert_eq!(series.pvd_path(), dir.join("beam.pvd"));
    let n = mesh.points.len();
    for step in 0..3 {
        let u: Vec<f64> = (0..3 * n).map(|i| (step * i) as f64 * 1e-3).collect();
        let frame =
            Frame::new(&mesh.points, &cells).with_point_field(Field::vector("displacement", &u));
        let path = series.write_frame(step as f64 * 0.5, &frame).unwrap();
        assert_eq!(path, dir.join(format!("beam_{step:06}.vtu")));
        assert!(path.exists());
    }
    assert_eq!(series.n_frames(), 3);
    let entries = pvd_entries(series.pvd_path());
    assert_eq!(
        entries,
        vec![
            (0.0, "beam_000000.vtu".to_string()),
            (0.5, "beam_000001.vtu".to_string()),
            (1.0, "beam_000002.vtu".to_string()),
        ]
    );
    no_tmp_files(&dir);

    // A failing frame is neither listed nor counted.
    let bad_u = [0.0; 2];
    let bad =
        Frame::new(&mesh.points, &cells).with_point_field(Field::vector("displacement", &bad_u));
    let err = series.write_frame(1.5, &bad).unwrap_err();
    assert!(err.to_string().contains("beam_000003.vtu"), "{err}");
    assert_eq!(series.n_frames(), 3);
    assert_eq!(pvd_entries(series.pvd_path()).len(), 3);

    assert!(FrameSeries::create(&dir, "a/b", Compression::None).is_err());
    assert!(FrameSeries::create(&dir, "", Compression::None).is_err());
}

#[test]
fn history_writes_header_and_flushed_shortest_rows() {
    let dir = fresh_dir("history");
    let path = dir.join("h.csv");
    let mut h = HistoryWriter::create(&path, &["step", "time", "energy, total"]).unwrap();
    // The header is on disk before any row, and each row right after write_row (no drop).
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "step,time,\"energy, total\"\n"
    );
    h.write_row(&[0.0, 0.0, 1.0 / 3.0]).unwrap();
    h.write_row(&[1.0, 1e-7, -2.5e20]).unwrap();
    h.write_row(&[2.0, 0.1 + 0.2, f64::NAN]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "step,time,\"energy, total\"\n\
         0,0,0.3333333333333333\n\
         1,1e-7,-2.5e20\n\
         2,0.30000000000000004,NaN\n"
    );
    let err = h.write_row(&[1.0, 2.0]).unwrap_err();
    assert!(matches!(err, OutputError::InvalidData { .. }));
    assert!(err.to_string().contains("h.csv"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn history_in_a_missing_directory_names_the_path() {
    let dir = fresh_dir("history_missing");
    let err = HistoryWriter::create(dir.join("nope").join("h.csv"), &["t"]).unwrap_err();
    let OutputError::Io { op, path, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*op, "create");
    assert!(path.ends_with("nope/h.csv"));
    assert!(err.to_string().contains("h.csv"));
}

#[test]
fn empty_polyline_is_reported_at_write_time() {
    let dir = fresh_dir("empty_polyline");
    let points = [[0.0; 3]];
    let mut cells = VtkCells::new();
    cells.push_block(CellKind::Vertex, &[0]);
    cells.push_polyline(&[]);
    let err = fem_io::write_vtu(
        dir.join("p.vtu"),
        &Frame::new(&points, &cells),
        Compression::None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("polyline"), "{err}");
}
