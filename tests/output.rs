//! What a run writes for the eye and for large runs (issue 26), through the `fem` binary: the
//! VTKHDF file (resumed bitwise, replacing an older run's frames), the disk estimate cut by
//! `--max-steps` and printed by `fem check`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fem(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the fem binary runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("output")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn max_steps_enters_the_disk_estimate_and_check_prints_it() {
    let input = "tests/bad_inputs/solid_output_beyond_disk.yaml";
    let limit = [("FEM_DISK_LIMIT", "1G")];
    let refused = fem(&["check", input], &limit);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("of disk"), "{}", text(&refused));
    let cut = fem(&["check", input, "--max-steps", "100"], &limit);
    assert!(cut.status.success(), "{}", text(&cut));
    let said = text(&cut);
    assert!(
        said.contains("101 frames (every 1 steps, to step 100 of 10000)"),
        "{said}"
    );
    // 101 frames of the 12³ box (2197 points, 1728 hex8 cells): a few tens of MB.
    let size = said
        .lines()
        .find(|l| l.contains("output size: at most"))
        .expect("the size is printed");
    assert!(size.contains(" MB "), "{size}");
    let dir = scratch("cut_run");
    let run = fem(
        &[
            "run",
            input,
            "-o",
            dir.to_str().unwrap(),
            "--max-steps",
            "3",
            "-q",
        ],
        &limit,
    );
    assert!(run.status.success(), "{}", text(&run));
}

#[test]
fn a_vtkhdf_run_cut_short_and_resumed_is_bitwise_the_whole_run() {
    // Rigid bodies: the points move, so the file is laid out anew once they do; the solid: the
    // mesh stays.
    for (input, name, cut, end) in [
        ("inputs/rigid_top.yaml", "rigid_top", "37", "90"),
        (
            "inputs/solid_twisted_column.yaml",
            "solid_twisted_column",
            "50",
            "120",
        ),
    ] {
        let whole = scratch(&format!("whole_{name}"));
        let w = whole.to_str().unwrap();
        let out = fem(
            &[
                "run",
                input,
                "-o",
                w,
                "--max-steps",
                end,
                "--format",
                "vtkhdf",
                "-q",
            ],
            &[],
        );
        assert!(out.status.success(), "{}", text(&out));
        let parts = scratch(&format!("parts_{name}"));
        let p = parts.to_str().unwrap();
        for args in [
            vec![
                "run",
                input,
                "-o",
                p,
                "--max-steps",
                cut,
                "--format",
                "vtkhdf",
                "-q",
            ],
            vec![
                "run",
                input,
                "-o",
                p,
                "--max-steps",
                end,
                "--format",
                "vtkhdf",
                "-q",
                "--resume",
            ],
        ] {
            let out = fem(&args, &[]);
            assert!(out.status.success(), "{args:?}: {}", text(&out));
        }
        let file = format!("{name}.vtkhdf");
        let a = std::fs::read(whole.join(&file)).unwrap();
        let b = std::fs::read(parts.join(&file)).unwrap();
        assert!(a == b, "{name}: the resumed run's .vtkhdf differs");
        assert_eq!(
            std::fs::read(whole.join("history.csv")).unwrap(),
            std::fs::read(parts.join("history.csv")).unwrap()
        );
    }
}

#[test]
fn a_run_in_one_format_replaces_an_older_run_in_the_other() {
    let dir = scratch("replace");
    let d = dir.to_str().unwrap();
    let input = "inputs/string_pluck.yaml";
    let run = |format: &str| {
        let out = fem(
            &[
                "run",
                input,
                "-o",
                d,
                "--max-steps",
                "8",
                "--format",
                format,
                "-q",
            ],
            &[],
        );
        assert!(out.status.success(), "{}", text(&out));
    };
    run("pvd");
    assert!(dir.join("string_pluck.pvd").exists());
    run("vtkhdf");
    assert!(dir.join("string_pluck.vtkhdf").exists());
    assert!(!dir.join("string_pluck.pvd").exists());
    assert!(!dir.join("string_pluck_000000.vtu").exists());
    run("pvd");
    assert!(!dir.join("string_pluck.vtkhdf").exists());
    assert!(dir.join("string_pluck_000000.vtu").exists());
}

#[test]
fn plots_of_the_history_are_written_on_request_and_by_fem_plot() {
    let dir = scratch("plots");
    let d = dir.to_str().unwrap();
    // inputs/rigid_top.yaml asks for plots (output.plots: true).
    let out = fem(
        &["run", "inputs/rigid_top.yaml", "-o", d, "--max-steps", "40"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "plots of the history: {}",
            dir.join("plots").display()
        )),
        "{}",
        text(&out)
    );
    for name in ["energy", "invariant", "iterations"] {
        for ext in ["png", "svg"] {
            let path = dir.join("plots").join(format!("{name}.{ext}"));
            let bytes =
                std::fs::read(&path).unwrap_or_else(|_| panic!("{} missing", path.display()));
            assert!(bytes.len() > 2000, "{} is nearly empty", path.display());
        }
    }
    let png = std::fs::read(dir.join("plots/energy.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = std::fs::read_to_string(dir.join("plots/energy.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("kinetic"),
        "the legend names the series"
    );
    // fem plot DIR on the same run, and on a folder without a history (exit 2, naming it).
    std::fs::remove_dir_all(dir.join("plots")).unwrap();
    let out = fem(&["plot", d], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.join("plots/invariant.png").exists());
    let empty = scratch("plots_none");
    std::fs::create_dir_all(&empty).unwrap();
    let out = fem(&["plot", empty.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("history.csv"), "{}", text(&out));
}

#[test]
fn a_run_writes_its_view_with_the_models_choices_and_scene() {
    let dir = scratch("view");
    let d = dir.to_str().unwrap();
    let out = fem(
        &[
            "run",
            "inputs/cable_seabed.yaml",
            "-o",
            d,
            "--max-steps",
            "3",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let view = dir.join("cable_seabed_view.py");
    assert!(
        text(&out).contains(&format!("view: paraview --script={}", view.display())),
        "{}",
        text(&out)
    );
    let script = std::fs::read_to_string(&view).unwrap();
    // The beam is drawn where it is (no warp), across its plane (x, y), gravity down.
    for line in [
        "SERIES = \"cable_seabed.pvd\"",
        "SCENE = \"cable_seabed_scene.vtp\"",
        "LOOK_ALONG = [0.0, 0.0, -1.0]",
        "UP = [-0.0, 1.0, -0.0]",
        "WARP_BY = None",
        "COLOR_BY = \"tension\"",
    ] {
        assert!(script.contains(line), "{line} not in the view:\n{script}");
    }
    // The scene: the seabed (one quad at the seabed's level) and the fixed anchor.
    let scene = vtkio::Vtk::import(dir.join("cable_seabed_scene.vtp")).unwrap();
    let vtkio::model::DataSet::PolyData { pieces, .. } = scene.data else {
        panic!("not poly data")
    };
    let piece = pieces[0].load_piece_data(None).unwrap();
    let count = |v: &Option<vtkio::model::VertexNumbers>| v.as_ref().map_or(0, |v| v.num_cells());
    assert_eq!(count(&piece.polys), 1, "the seabed");
    assert!(count(&piece.verts) >= 1, "the anchor");
    // A solid: warped by its displacement, coloured by von Mises, no scene.
    let solid = scratch("view_solid");
    let s = solid.to_str().unwrap();
    let out = fem(
        &[
            "run",
            "inputs/solid_twisted_column.yaml",
            "-o",
            s,
            "--max-steps",
            "2",
            "-q",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let script = std::fs::read_to_string(solid.join("solid_twisted_column_view.py")).unwrap();
    assert!(script.contains("WARP_BY = \"displacement\""));
    assert!(script.contains("COLOR_BY = \"von_mises\""));
    assert!(script.contains("SCENE = None"));
    assert!(!solid.join("solid_twisted_column_scene.vtp").exists());
}
