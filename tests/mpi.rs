//! The explicit solid on MPI (feature `mpi`; `.ci/run` runs it): `mpirun -np P fem run` for
//! P = 1, 2, 3, 4 writes a history byte for byte the serial run's and frames whose every value
//! is bitwise the serial frame's at the same global node and cell; a run cut short and resumed
//! on the same P is the uninterrupted run, file for file, and so is a run stopped by a signal
//! to one of its ranks and resumed; with `--format vtkhdf` one `.vtkhdf` file holds a part per
//! rank, value for value the `.vtu` pieces of the same run, and resumes bit for bit; an input
//! error is reported once and every rank exits 2; a failure on one rank (an inverted cell, a
//! piece that cannot be written) stops every rank with exit 1, naming the rank.
//!
//! The launcher is `mpirun` (MPICH's Hydra runs 4 processes on 2 cores as they are);
//! `FEM_MPIRUN` replaces it, e.g. `FEM_MPIRUN="mpirun --oversubscribe"` for Open MPI.
#![cfg(feature = "mpi")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vtkio::Vtk;
use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, UnstructuredGridPiece};

const BOX: &str = "tests/mpi/box.yaml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("mpi")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn serial(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the fem binary runs")
}

/// `mpirun -np p fem` (the launcher from `FEM_MPIRUN` if set), in the repository's root.
fn mpirun_command(p: usize) -> Command {
    let launcher = std::env::var("FEM_MPIRUN").unwrap_or_else(|_| "mpirun".into());
    let mut words = launcher.split_whitespace();
    let mut command = Command::new(words.next().expect("a launcher"));
    command
        .args(words)
        .args(["-np", &p.to_string(), env!("CARGO_BIN_EXE_fem")])
        .current_dir(root());
    command
}

fn mpirun(p: usize, args: &[&str]) -> Output {
    mpirun_command(p).args(args).output().unwrap_or_else(|e| {
        panic!("mpirun runs (an MPI installation is needed for the feature mpi): {e}")
    })
}

/// Every file of `whole` (at least `at_least` of them) is byte for byte the same in `other`.
fn assert_same_files(whole: &Path, other: &Path, at_least: usize, after: &str) {
    let mut names: Vec<_> = std::fs::read_dir(whole)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(names.len() >= at_least, "{names:?}");
    for name in names {
        let a = std::fs::read(whole.join(&name)).unwrap();
        let b = std::fs::read(other.join(&name)).unwrap();
        assert!(a == b, "{name:?} differs after {after}");
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run_ok(out: Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", text(&out));
}

fn read_piece(path: &Path) -> UnstructuredGridPiece {
    let vtk = Vtk::import(path).unwrap_or_else(|e| panic!("import {}: {e}", path.display()));
    match vtk.data {
        DataSet::UnstructuredGrid { mut pieces, .. } => match pieces.remove(0) {
            Piece::Inline(p) => *p,
            other => panic!("unexpected piece {other:?}"),
        },
        other => panic!("not an unstructured grid: {other:?}"),
    }
}

fn f64s(buf: &IOBuffer) -> Vec<f64> {
    match buf {
        IOBuffer::F64(v) => v.clone(),
        IOBuffer::U8(v) => v.iter().map(|&b| f64::from(b)).collect(),
        other => panic!("expected Float64 data, got {:?}", other.scalar_type()),
    }
}

/// name → (components, values) of every array.
fn arrays(attrs: &[Attribute]) -> HashMap<String, (usize, Vec<f64>)> {
    attrs
        .iter()
        .filter_map(|a| match a {
            Attribute::DataArray(d) => Some((d.name.clone(), (d.num_comp(), f64s(&d.data)))),
            Attribute::Field { .. } => None,
        })
        .collect()
}

/// Compares frame `index` of the distributed run in `dir` (P pieces) with the serial frame,
/// value by value at the same global node and cell, bitwise. Returns the values compared.
fn compare_frame(serial_dir: &Path, dir: &Path, index: usize, p: usize) -> usize {
    let s = read_piece(&serial_dir.join(format!("box_{index:06}.vtu")));
    let s_points = f64s(&s.points);
    let s_point = arrays(&s.data.point);
    let s_cell = arrays(&s.data.cell);
    let n_cells = s_cell["J"].1.len();
    let mut seen_cells = vec![0usize; n_cells];
    let mut owners = vec![0usize; s_points.len() / 3];
    let mut compared = 0;
    for rank in 0..p {
        let piece = read_piece(&dir.join(format!("box_{index:06}_{rank}.vtu")));
        let points = f64s(&piece.points);
        let point = arrays(&piece.data.point);
        let cell = arrays(&piece.data.cell);
        let nodes: Vec<usize> = point["global_node"].1.iter().map(|&v| v as usize).collect();
        let cells: Vec<usize> = cell["global_cell"].1.iter().map(|&v| v as usize).collect();
        let ghost = &point["vtkGhostType"].1;
        for (l, &g) in nodes.iter().enumerate() {
            owners[g] += usize::from(ghost[l] == 0.0);
            for k in 0..3 {
                assert_eq!(points[3 * l + k].to_bits(), s_points[3 * g + k].to_bits());
            }
            for (name, (nc, values)) in &s_point {
                let got = &point[name].1;
                for k in 0..*nc {
                    assert_eq!(
                        got[nc * l + k].to_bits(),
                        values[nc * g + k].to_bits(),
                        "P = {p}, frame {index}, {name} at node {g}: {} vs serial {}",
                        got[nc * l + k],
                        values[nc * g + k]
                    );
                    compared += 1;
                }
            }
        }
        for (l, &g) in cells.iter().enumerate() {
            seen_cells[g] += 1;
            for (name, (nc, values)) in &s_cell {
                let got = &cell[name].1;
                for k in 0..*nc {
                    assert_eq!(
                        got[nc * l + k].to_bits(),
                        values[nc * g + k].to_bits(),
                        "P = {p}, frame {index}, {name} at cell {g}"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(seen_cells.iter().all(|&n| n == 1), "each cell in one piece");
    assert!(
        owners.iter().all(|&n| n == 1),
        "each node is a ghost (vtkGhostType 1) in every piece but one"
    );
    compared
}

#[test]
fn history_and_frames_are_bitwise_the_serial_runs_on_1_to_4_processes() {
    let base = scratch("bitwise");
    let serial_dir = base.join("serial");
    run_ok(
        serial(&["run", BOX, "-o", serial_dir.to_str().unwrap(), "-q"]),
        "serial",
    );
    let history = std::fs::read(serial_dir.join("history.csv")).unwrap();
    let n_frames = std::fs::read_dir(&serial_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "vtu")
        })
        .count();
    assert!(n_frames >= 3 && history.split(|&b| b == b'\n').count() > 10);
    for p in 1..=4 {
        let dir = base.join(format!("p{p}"));
        run_ok(
            mpirun(p, &["run", BOX, "-o", dir.to_str().unwrap(), "-q"]),
            &format!("P = {p}"),
        );
        assert!(
            std::fs::read(dir.join("history.csv")).unwrap() == history,
            "P = {p}: history.csv differs from the serial one"
        );
        let mut compared = 0;
        for index in 0..n_frames {
            assert!(dir.join(format!("box_{index:06}.pvtu")).exists());
            compared += compare_frame(&serial_dir, &dir, index, p);
        }
        assert!(compared > 1000, "P = {p}: {compared} values compared");
        let pvd = std::fs::read_to_string(dir.join("box.pvd")).unwrap();
        assert_eq!(pvd.matches(".pvtu").count(), n_frames);
    }
}

#[test]
fn a_resumed_run_is_the_uninterrupted_run_file_for_file() {
    let base = scratch("restart");
    let whole = base.join("whole");
    let cut = base.join("cut");
    let (w, c) = (whole.to_str().unwrap(), cut.to_str().unwrap());
    run_ok(mpirun(3, &["run", BOX, "-o", w, "-q"]), "uninterrupted");
    run_ok(
        mpirun(3, &["run", BOX, "-o", c, "-q", "--max-steps", "20"]),
        "cut short",
    );
    assert!(cut.join("checkpoint_2_of_3.fem").exists());
    run_ok(
        mpirun(3, &["run", BOX, "-o", c, "-q", "--resume"]),
        "resumed",
    );
    assert_same_files(&whole, &cut, 11, "the restart");
    // Another process count cannot resume it (nothing is run: exit 2).
    let out = mpirun(2, &["run", BOX, "-o", c, "-q", "--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn checkpoints_of_different_interruptions_are_refused_before_any_file_is_touched() {
    let base = scratch("mixed_cuts");
    let (early, late) = (base.join("early"), base.join("late"));
    let (e, l) = (early.to_str().unwrap(), late.to_str().unwrap());
    run_ok(
        mpirun(3, &["run", BOX, "-o", e, "-q", "--max-steps", "20"]),
        "cut at 20",
    );
    run_ok(
        mpirun(3, &["run", BOX, "-o", l, "-q", "--max-steps", "40"]),
        "cut at 40",
    );
    // Rank 1's checkpoint from the later interruption among the earlier one's.
    std::fs::copy(
        late.join("checkpoint_1_of_3.fem"),
        early.join("checkpoint_1_of_3.fem"),
    )
    .unwrap();
    let history = std::fs::read(early.join("history.csv")).unwrap();
    let started = std::time::Instant::now();
    let out = mpirun(3, &["run", BOX, "-o", e, "-q", "--resume"]);
    let t = text(&out);
    assert!(started.elapsed().as_secs() < 60, "no hang: {t}");
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert_eq!(t.matches("error:").count(), 1, "reported once: {t}");
    assert!(t.contains("rank 1") && t.contains("step 40"), "{t}");
    assert_eq!(
        std::fs::read(early.join("history.csv")).unwrap(),
        history,
        "the history was not touched"
    );
}

/// The process ids of the ranks (`fem` itself, not the launcher) whose arguments name `dir`.
fn rank_pids(dir: &Path) -> Vec<u32> {
    let exe = env!("CARGO_BIN_EXE_fem");
    let dir = dir.to_str().unwrap();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if args.first() == Some(&exe.as_bytes()) && args.contains(&dir.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn a_signal_to_one_rank_stops_every_rank_with_checkpoints_that_resume_to_the_uninterrupted_run() {
    let base = scratch("signal");
    // Long enough to be signalled mid-run (8 000 steps of ~0.2 ms; the signal comes after
    // 1000), with few files.
    let input = variant(&base, "t_end: 0.08", "t_end: 1.0");
    let text_in = std::fs::read_to_string(&input)
        .unwrap()
        .replace("auto_dt: 0.5", "auto_dt: 0.02");
    let quiet_output = "output: { every: 2000, history_every: 50 }";
    std::fs::write(
        &input,
        text_in.replace(
            "output: { every: 40, history_every: 3, checkpoint_every: 50 }",
            quiet_output,
        ),
    )
    .unwrap();
    let input = input.to_str().unwrap();
    let (whole, cut) = (base.join("whole"), base.join("cut"));
    let steps = "8000";
    let args = |dir: &Path| -> Vec<String> {
        [
            "run",
            input,
            "-o",
            dir.to_str().unwrap(),
            "-q",
            "--max-steps",
            steps,
        ]
        .map(String::from)
        .to_vec()
    };
    let whole_args = args(&whole);
    let whole_refs: Vec<&str> = whole_args.iter().map(String::as_str).collect();
    run_ok(mpirun(2, &whole_refs), "uninterrupted");

    let child = mpirun_command(2)
        .args(args(&cut))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let history = cut.join("history.csv");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&history).map_or(0, |h| h.lines().count()) < 20 {
        assert!(started.elapsed().as_secs() < 120, "the run did not start");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let pids = rank_pids(&cut);
    assert_eq!(pids.len(), 2, "two ranks found: {pids:?}");
    // One rank only: the other learns of it through the agreement after the step.
    let _ = Command::new("kill")
        .args(["-TERM", &pids[0].to_string()])
        .status();
    let out = child.wait_with_output().expect("mpirun ends");
    let said = text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an interrupted run exits 1: {said}"
    );
    assert_eq!(
        said.matches("interrupted at step").count(),
        1,
        "said once: {said}"
    );
    let rows = std::fs::read_to_string(&history).unwrap().lines().count();
    assert!(rows < 8_000 / 50, "stopped early: {rows} rows");
    for rank in 0..2 {
        let c = cut.join(format!("checkpoint_{rank}_of_2.fem"));
        assert!(c.exists(), "rank {rank} left its checkpoint");
    }
    let mut resume = args(&cut);
    resume.push("--resume".into());
    let refs: Vec<&str> = resume.iter().map(String::as_str).collect();
    run_ok(mpirun(2, &refs), "resumed");
    assert_same_files(&whole, &cut, 6, "the interruption and restart");
}

#[test]
fn progress_and_the_summary_are_reported_once() {
    let dir = scratch("progress");
    let out = mpirun(3, &["run", BOX, "-o", dir.to_str().unwrap()]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches("(100 %)").count(), 1, "rank 0 only: {said}");
    // Every progress line once (one rank speaks), and some of them between the ends.
    let progress: Vec<&str> = said.lines().filter(|l| l.starts_with("step ")).collect();
    let distinct: std::collections::BTreeSet<&str> = progress.iter().copied().collect();
    assert!(progress.len() >= 3, "progress reported: {said}");
    assert_eq!(distinct.len(), progress.len(), "rank 0 only: {said}");
    assert_eq!(said.matches("on 3 MPI processes").count(), 1, "{said}");
    // The energy balance, once, sampled at the history rows; DEF_EXP holds it to its
    // truncation error (the box's serial run: 1e-4 of its largest energy or better).
    let line = said
        .lines()
        .find(|l| l.starts_with("energy balance"))
        .unwrap_or_else(|| panic!("no energy line: {said}"));
    assert_eq!(said.matches("energy balance").count(), 1, "{said}");
    assert!(line.contains("history rows of this run"), "{line}");
    let relative: f64 = line
        .split(" = ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no relative change in: {line}"));
    assert!(relative.is_finite() && relative < 1e-2, "{line}");
}

/// A run into a directory where older runs of the same name left frames (a serial run's, a
/// longer run's on more ranks) leaves only its own: every frame file there is listed by its
/// `.pvd` or by one of its `.pvtu` files.
#[test]
fn a_run_replaces_what_an_older_run_of_the_same_name_left() {
    let dir = scratch("older_runs");
    let out = dir.to_str().unwrap();
    // Older runs cut short leave their checkpoints: a serial one, then one per rank of 3.
    run_ok(
        serial(&["run", BOX, "-o", out, "-q", "--max-steps", "40"]),
        "serial, 40 steps",
    );
    run_ok(
        mpirun(3, &["run", BOX, "-o", out, "-q", "--max-steps", "40"]),
        "3 ranks, 40 steps",
    );
    assert!(dir.join("checkpoint_2_of_3.fem").exists());
    run_ok(
        mpirun(2, &["run", BOX, "-o", out, "-q", "--max-steps", "30"]),
        "2 ranks, 30 steps",
    );
    let pvd = std::fs::read_to_string(dir.join("box.pvd")).unwrap();
    let mut listed: Vec<String> = Vec::new();
    for pvtu in pvd
        .split("file=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
    {
        listed.push(pvtu.to_string());
        let text = std::fs::read_to_string(dir.join(pvtu)).unwrap();
        for piece in text
            .split("Source=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
        {
            listed.push(piece.to_string());
        }
    }
    // Frames 0 and 30 (the last step of a run cut short): two .pvtu, two pieces each; the
    // 3-rank run before wrote frames 0 and 40 of three pieces each, the serial run two .vtu.
    assert_eq!(listed.len(), 2 * 3, "{listed:?}");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".vtu") || n.ends_with(".pvtu"))
        .collect();
    found.sort();
    listed.sort();
    assert_eq!(found, listed);
    // Only this run's checkpoints are left: the older runs' could only resume those runs.
    let mut checkpoints: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fem"))
        .collect();
    checkpoints.sort();
    assert_eq!(
        checkpoints,
        ["checkpoint_0_of_2.fem", "checkpoint_1_of_2.fem"]
    );
}

/// The box input with `from` replaced by `to`, written into `dir`.
fn variant(dir: &Path, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join(BOX)).unwrap();
    assert!(text.contains(from));
    let path = dir.join("box.yaml");
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path
}

#[test]
fn an_input_error_is_reported_once_and_every_rank_exits_2() {
    let dir = scratch("input_error");
    let input = variant(&dir, "poisson: 0.3", "poisson: 0.5");
    let out = mpirun(
        3,
        &[
            "run",
            input.to_str().unwrap(),
            "-o",
            dir.join("out").to_str().unwrap(),
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert_eq!(t.matches("error:").count(), 1, "reported once: {t}");
    assert!(t.contains("model.solid.material.poisson"), "{t}");
}

/// The `.vtkhdf` of a distributed run in `dir` against the `.vtu` pieces of the same run in
/// `pieces` (P parts): every step's part `r` holds piece `r`'s points, cells and arrays, bit for
/// bit. Returns the values compared.
fn compare_vtkhdf(dir: &Path, pieces: &Path, p: usize) -> usize {
    let file = hdf5_pure::File::open(dir.join("box.vtkhdf")).expect("the .vtkhdf opens");
    let i64s = |name: &str| {
        file.dataset(&format!("VTKHDF/{name}"))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .read_i64()
            .unwrap()
    };
    let f64s_of = |name: &str| {
        file.dataset(&format!("VTKHDF/{name}"))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .read_f64()
            .unwrap()
    };
    let n_steps = file.group("VTKHDF/Steps").unwrap().attrs().unwrap()["NSteps"]
        .as_i64()
        .unwrap() as usize;
    let pvd = std::fs::read_to_string(pieces.join("box.pvd")).unwrap();
    assert_eq!(n_steps, pvd.matches(".pvtu").count(), "a step per frame");
    let times = f64s_of("Steps/Values");
    for (k, t) in times.iter().enumerate() {
        assert!(
            pvd.contains(&format!("timestep=\"{}\"", fem::io::format_f64(*t))),
            "time {k}"
        );
    }
    let (n_points, n_cells, n_ids) = (
        i64s("NumberOfPoints"),
        i64s("NumberOfCells"),
        i64s("NumberOfConnectivityIds"),
    );
    assert_eq!(
        (n_points.len(), n_cells.len(), n_ids.len()),
        (p, p, p),
        "a part per rank"
    );
    let (points, types, offsets, connectivity) = (
        f64s_of("Points"),
        file.dataset("VTKHDF/Types").unwrap().read_u8().unwrap(),
        i64s("Offsets"),
        i64s("Connectivity"),
    );
    let ghost = file
        .dataset("VTKHDF/PointData/vtkGhostType")
        .unwrap()
        .read_u8()
        .unwrap();
    let point_offsets = i64s("Steps/PointOffsets");
    let mut compared = 0;
    for k in 0..n_steps {
        let (mut point0, mut cell0, mut id0) = (0usize, 0usize, 0usize);
        for r in 0..p {
            let piece = read_piece(&pieces.join(format!("box_{k:06}_{r}.vtu")));
            let (np, nc, ni) = (n_points[r] as usize, n_cells[r] as usize, n_ids[r] as usize);
            let at = 3 * (point_offsets[k] as usize + point0);
            let want = f64s(&piece.points);
            assert_eq!(want.len(), 3 * np, "step {k}, part {r}: points");
            for (a, b) in points[at..at + 3 * np].iter().zip(&want) {
                assert_eq!(a.to_bits(), b.to_bits(), "step {k}, part {r}: points");
            }
            let (c, o) = piece.cells.cell_verts.clone().into_xml();
            assert_eq!(
                &connectivity[id0..id0 + ni],
                &c.iter().map(|&v| v as i64).collect::<Vec<_>>()[..],
                "step {k}, part {r}: connectivity"
            );
            let part_offsets = &offsets[cell0 + r..cell0 + r + nc + 1];
            assert_eq!(part_offsets[0], 0);
            assert_eq!(
                &part_offsets[1..],
                &o.iter().map(|&v| v as i64).collect::<Vec<_>>()[..],
                "step {k}, part {r}: offsets"
            );
            assert_eq!(
                &types[cell0..cell0 + nc],
                &piece
                    .cells
                    .types
                    .iter()
                    .map(|&t| t as u8)
                    .collect::<Vec<_>>()[..],
                "step {k}, part {r}: cell types"
            );
            for (kind, attrs, n, first) in [
                ("PointData", &piece.data.point, np, point0),
                ("CellData", &piece.data.cell, nc, cell0),
            ] {
                let arrays = arrays(attrs);
                assert!(!arrays.is_empty());
                for (name, (nc, want)) in arrays {
                    if name == "vtkGhostType" {
                        let got: Vec<f64> = ghost[first..first + n]
                            .iter()
                            .map(|&g| f64::from(g))
                            .collect();
                        assert_eq!(got, want, "step {k}, part {r}: vtkGhostType");
                        continue;
                    }
                    let all = f64s_of(&format!("{kind}/{name}"));
                    let start = i64s(&format!("Steps/{kind}Offsets/{name}"))[k] as usize + first;
                    let got = &all[nc * start..nc * (start + n)];
                    assert_eq!(got.len(), want.len(), "step {k}, part {r}: {name}");
                    for (a, b) in got.iter().zip(&want) {
                        assert_eq!(a.to_bits(), b.to_bits(), "step {k}, part {r}: {name}");
                        compared += 1;
                    }
                }
            }
            point0 += np;
            cell0 += nc;
            id0 += ni;
        }
    }
    compared
}

#[test]
fn a_distributed_vtkhdf_file_holds_the_pieces_value_for_value_and_resumes_bit_for_bit() {
    let base = scratch("vtkhdf");
    let (pieces, whole, cut) = (base.join("pieces"), base.join("whole"), base.join("cut"));
    let (w, c) = (whole.to_str().unwrap(), cut.to_str().unwrap());
    let vtkhdf = ["--format", "vtkhdf", "-q"];
    run_ok(
        mpirun(3, &["run", BOX, "-o", pieces.to_str().unwrap(), "-q"]),
        "pieces",
    );
    run_ok(
        mpirun(3, &[&["run", BOX, "-o", w][..], &vtkhdf].concat()),
        "vtkhdf",
    );
    // One file; rank 0 writes it, no rank writes pieces.
    let names: Vec<String> = std::fs::read_dir(&whole)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".vtu") || n.ends_with(".pvd")),
        "{names:?}"
    );
    assert_eq!(
        std::fs::read(whole.join("history.csv")).unwrap(),
        std::fs::read(pieces.join("history.csv")).unwrap()
    );
    let compared = compare_vtkhdf(&whole, &pieces, 3);
    assert!(compared > 1000, "{compared} values compared");

    // Cut short and resumed: the same file, byte for byte.
    run_ok(
        mpirun(
            3,
            &[&["run", BOX, "-o", c, "--max-steps", "20"][..], &vtkhdf].concat(),
        ),
        "cut short",
    );
    run_ok(
        mpirun(
            3,
            &[&["run", BOX, "-o", c, "--resume"][..], &vtkhdf].concat(),
        ),
        "resumed",
    );
    assert_same_files(&whole, &cut, 2, "the restart");

    // A .pvd run into the same folder replaces the .vtkhdf, and the other way round.
    run_ok(
        mpirun(2, &["run", BOX, "-o", w, "-q"]),
        "pieces over vtkhdf",
    );
    assert!(!whole.join("box.vtkhdf").exists());
    run_ok(
        mpirun(2, &[&["run", BOX, "-o", w][..], &vtkhdf].concat()),
        "vtkhdf over pieces",
    );
    let left: Vec<String> = std::fs::read_dir(&whole)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".vtu") || n.ends_with(".pvtu") || n.ends_with(".pvd"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_inverted_cell_on_one_rank_stops_every_rank_with_exit_1_naming_rank_and_cell() {
    let dir = scratch("inverted");
    let input = variant(&dir, "auto_dt: 0.5", "auto_dt: 0.5\n    recheck_every: 0");
    let input_text = std::fs::read_to_string(&input).unwrap();
    std::fs::write(
        &input,
        input_text.replace("gravity: [0, 0, -9.81]", "gravity: [0, 0, -3e6]"),
    )
    .unwrap();
    let out = mpirun(
        3,
        &[
            "run",
            input.to_str().unwrap(),
            "-o",
            dir.join("out").to_str().unwrap(),
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert_eq!(t.matches("error:").count(), 1, "reported once: {t}");
    assert!(
        t.contains("rank ") && t.contains("cell ") && t.contains("inverted"),
        "{t}"
    );
}

#[test]
fn a_piece_that_cannot_be_written_stops_every_rank_with_exit_1_naming_the_rank() {
    let dir = scratch("unwritable");
    let out_dir = dir.join("out");
    // Frame 1's piece of rank 1 is in the way as a directory.
    std::fs::create_dir_all(out_dir.join("box_000001_1.vtu").join("x")).unwrap();
    let out = mpirun(2, &["run", BOX, "-o", out_dir.to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert_eq!(t.matches("error:").count(), 1, "reported once: {t}");
    assert!(
        t.contains("rank 1:") && t.contains("box_000001_1.vtu"),
        "{t}"
    );
}

#[test]
fn the_hourglass_energy_of_one_point_cells_is_the_whole_bodys_on_2_and_3_processes() {
    let base = scratch("hourglass");
    std::fs::create_dir_all(&base).unwrap();
    let input = variant(
        &base,
        "    auto_dt: 0.5\n",
        "    auto_dt: 0.5\n    element: one_point\n",
    );
    let serial_dir = base.join("serial");
    run_ok(
        serial(&[
            "run",
            input.to_str().unwrap(),
            "-o",
            serial_dir.to_str().unwrap(),
            "-q",
        ]),
        "serial",
    );
    let history = std::fs::read_to_string(serial_dir.join("history.csv")).unwrap();
    let header = history.lines().next().unwrap();
    let column = header.split(',').position(|c| c == "hourglass_energy");
    let column = column.unwrap_or_else(|| panic!("no hourglass_energy in '{header}'"));
    // The hourglass modes are excited (the twist and the traction): a column that is not zero.
    let last: f64 = history
        .lines()
        .last()
        .unwrap()
        .split(',')
        .nth(column)
        .unwrap()
        .parse()
        .unwrap();
    assert!(last > 0.0, "{last}");
    for p in [2, 3] {
        let dir = base.join(format!("p{p}"));
        run_ok(
            mpirun(
                p,
                &[
                    "run",
                    input.to_str().unwrap(),
                    "-o",
                    dir.to_str().unwrap(),
                    "-q",
                ],
            ),
            &format!("P = {p}"),
        );
        let theirs = std::fs::read_to_string(dir.join("history.csv")).unwrap();
        assert!(
            theirs == history,
            "P = {p}: history.csv differs from the serial one"
        );
    }
}
