//! The `fem` binary as a user meets it: every input runs, bad inputs are refused with exit
//! code 2 and a message naming the problem, and the output follows its documented layout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
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

fn yaml_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
            .expect("folder exists")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
    files.sort();
    files
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn every_input_is_accepted_by_check_and_runs() {
    let inputs = yaml_files("inputs");
    assert!(inputs.len() >= 2);
    for input in inputs {
        let path = input.to_str().unwrap();
        let out = fem(&["check", path]);
        assert!(out.status.success(), "fem check {path}:\n{}", text(&out));
        let dir = scratch(&format!(
            "input_{}",
            input.file_stem().unwrap().to_string_lossy()
        ));
        let out = fem(&[
            "run",
            path,
            "-o",
            dir.to_str().unwrap(),
            "--max-steps",
            "50",
            "-q",
        ]);
        assert!(out.status.success(), "fem run {path}:\n{}", text(&out));
        let stem = input.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(dir.join(format!("{stem}.pvd")).exists());
        assert!(dir.join(format!("{stem}_000000.vtu")).exists());
        assert!(dir.join("history.csv").exists());
    }
}

// The bad-input corpus (exit code 2, the file named, the expected words, no output, peak
// memory) is tests/bad_input_corpus.rs.

/// A run that fails after it started exits with code 1, says so, names the step, and leaves
/// the rows and frames written before the failure (one such input per model family).
#[test]
fn failing_runs_exit_with_code_1_and_keep_their_output() {
    let cases = yaml_files("tests/failing_runs");
    assert!(cases.len() >= 5, "one failing run per model family");
    for file in cases {
        let path = file.to_str().unwrap();
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = scratch(&format!("failing_{name}"));
        let out = fem(&["run", path, "-o", dir.to_str().unwrap(), "-q"]);
        let message = text(&out);
        assert_eq!(out.status.code(), Some(1), "fem run {path}:\n{message}");
        assert!(message.contains("run failed"), "{path}:\n{message}");
        assert!(
            message.contains("step"),
            "{path}: the step is not named:\n{message}"
        );
        assert!(!message.contains("panicked"), "{path}:\n{message}");
        let history = std::fs::read_to_string(dir.join("history.csv")).expect("history kept");
        assert!(history.lines().count() >= 2, "{path}: no row kept");
        assert!(
            !history.to_lowercase().contains("nan") && !history.contains("inf"),
            "{path}: a non-finite value was written"
        );
        assert!(
            dir.join(format!("{name}.pvd")).exists(),
            "{path}: no .pvd kept"
        );
    }
}

#[test]
fn output_layout_and_energy_of_the_plucked_string() {
    let dir = scratch("pluck_layout");
    let out = fem(&[
        "run",
        "inputs/string_pluck.yaml",
        "-o",
        dir.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    let mut lines = history.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..5],
        &["step", "t", "kinetic", "potential", "total"]
    );
    let total = header.iter().position(|c| *c == "total").unwrap();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 401, "a row per step, 0..=400");
    let e0 = rows[0][total];
    for row in &rows {
        assert!(
            (row[total] - e0).abs() <= 1e-12 * e0,
            "step {}: {} vs {e0}",
            row[0],
            row[total]
        );
    }
    // Frames: 0, 4, 8, …, 400 → 101 files, listed in the .pvd with their times.
    let pvd = std::fs::read_to_string(dir.join("string_pluck.pvd")).unwrap();
    assert_eq!(pvd.matches("<DataSet").count(), 101);
    assert!(pvd.contains("string_pluck_000100.vtu"));
    assert!(dir.join("string_pluck_000100.vtu").exists());
    assert!(!dir.join("string_pluck_000101.vtu").exists());
}

#[test]
fn mesh_summary_and_help() {
    let out = fem(&["mesh", "meshes/string_line2.msh"]);
    assert!(out.status.success());
    let s = text(&out);
    assert!(
        s.contains("line2") && s.contains("string") && s.contains("left"),
        "{s}"
    );
    let out = fem(&["mesh", "meshes/bad/truncated.msh"]);
    assert_eq!(out.status.code(), Some(2));
    let out = fem(&["--help"]);
    assert!(out.status.success());
    assert!(text(&out).contains("fem run"));
    let out = fem(&["--version"]);
    assert!(text(&out).contains(env!("CARGO_PKG_VERSION")));
}

/// The resource limits are overridable: the same input is refused under a small
/// `FEM_MEMORY_LIMIT` / `FEM_DISK_LIMIT` with the estimate and the variable named, accepted
/// under a large one, and a limit that does not parse is an input error naming the variable.
#[test]
fn resource_limits_are_overridden_by_the_environment() {
    let run = |variable: &str, value: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_fem"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env(variable, value)
            .output()
            .expect("the fem binary runs");
        (out.status.code(), text(&out))
    };
    let check = ["check", "inputs/string_pluck.yaml"];
    let (code, message) = run("FEM_MEMORY_LIMIT", "1M", &check);
    assert_eq!(code, Some(2), "{message}");
    assert!(
        message.contains("mesh.line.cells: 100 cells would need about")
            && message.contains("of memory; FEM_MEMORY_LIMIT allows 1.0 MB"),
        "{message}"
    );
    let (code, message) = run("FEM_MEMORY_LIMIT", "1G", &check);
    assert_eq!(code, Some(0), "{message}");
    let (code, message) = run("FEM_DISK_LIMIT", "1K", &check);
    assert_eq!(code, Some(2), "{message}");
    assert!(
        message.contains("would need about") && message.contains("FEM_DISK_LIMIT allows"),
        "{message}"
    );
    let (code, message) = run("FEM_MEMORY_LIMIT", "lots", &check);
    assert_eq!(code, Some(2), "{message}");
    assert!(
        message.contains("FEM_MEMORY_LIMIT") && message.contains("'lots'"),
        "{message}"
    );
}

/// The paper's cable at N = 1000 starts with no solver setting: the default static solver is
/// Newton on the KKT system (Uzawa with its fixed r = 1e4 stalls at a residual of ≈ 1e-10 from
/// N ≈ 800 and gives up after 100 000 iterations).
#[test]
fn a_thousand_element_cable_starts_by_default() {
    let text_in = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("inputs/beam_fall_kkt.yaml"),
    )
    .unwrap();
    assert!(
        text_in.contains("elements: 20"),
        "the shipped input still has 20 elements"
    );
    assert!(!text_in.contains("solver: uzawa") && !text_in.contains("solver: newton\n"));
    let dir = scratch("cable_1000");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("cable_1000.yaml");
    std::fs::write(&input, text_in.replace("elements: 20", "elements: 1000")).unwrap();
    let out = fem(&["check", input.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("static start: Newton on the KKT system"),
        "{}",
        text(&out)
    );
}

/// `initial.static.solver: uzawa` chooses its augmentation from the model, so the same
/// thousand-element cable starts by Uzawa too (a fixed r = 1e4 stalled).
#[test]
fn a_thousand_element_cable_starts_by_uzawa() {
    let text_in = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("inputs/beam_fall_kkt.yaml"),
    )
    .unwrap();
    let dir = scratch("cable_1000_uzawa");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("cable_1000_uzawa.yaml");
    let text_in = text_in
        .replace("elements: 20", "elements: 1000")
        .replace("      static:\n", "      static:\n        solver: uzawa\n");
    assert!(text_in.contains("solver: uzawa"));
    std::fs::write(&input, text_in).unwrap();
    let out = fem(&["check", input.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Uzawa iterations"), "{}", text(&out));
}

/// A long set-up says what it is doing (issue 28, item 13: `fem check` of 10⁶ beam elements or
/// of 10⁴ modes against 10⁴ contact points computed for minutes without a word). Phases are
/// told on standard error once the set-up has taken 2 s; `FEM_PROGRESS_AFTER=0` tells every
/// one (so this test need not wait), and `-q` none.
#[test]
fn a_slow_set_up_says_what_it_is_doing() {
    let check = |input: &str, quiet: bool| {
        let mut args = vec!["check", input];
        if quiet {
            args.insert(0, "-q");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_fem"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("FEM_PROGRESS_AFTER", "0")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let beam = check("inputs/beam_fall_kkt.yaml", false);
    assert!(
        beam.contains("fem: the beam's static start: Newton on the KKT system on 20 elements"),
        "{beam}"
    );
    let modal = check("inputs/string_obstacle_point.yaml", false);
    assert!(
        modal.contains("the modal string's contact matrices: 1 contact points over 1000 modes"),
        "{modal}"
    );
    let solid = check("inputs/solid_rotating_bar.yaml", false);
    assert!(solid.contains("the solid's critical step"), "{solid}");
    assert!(check("inputs/beam_fall_kkt.yaml", true).is_empty());
}

/// `fem check` reports in a person's terms (issue 28, item 14): no Rust `Debug` text
/// (`AugmentedLagrangian { augmentation: 100000.0, … }`, `Ellipse(EllipseConstraint { … })`)
/// and numbers rounded to at most six significant digits (not `9.000000000000001e-3`).
#[test]
fn check_reports_have_no_debug_text_and_rounded_numbers() {
    for file in yaml_files("inputs") {
        let out = fem(&["check", file.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        for debug in ["{", "}", "::", "Some(", "None", "(Ellipse", "Constraint"] {
            assert!(
                !report.contains(debug),
                "{}: '{debug}' in\n{report}",
                file.display()
            );
        }
        for token in report.split(|c: char| !(c.is_ascii_alphanumeric() || ".-+".contains(c))) {
            let t = token.trim_matches(|c: char| c == '.' || c == '-' || c == '+');
            if !(t.contains('.') || t.contains('e')) || t.parse::<f64>().is_err() {
                continue;
            }
            let mantissa = t.split(['e', 'E']).next().unwrap_or("");
            let digits = mantissa
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>();
            let significant = digits.trim_start_matches('0').len();
            assert!(
                significant <= 6,
                "{}: the number {t} in\n{report}",
                file.display()
            );
        }
    }
}

/// A second run into a folder where a live run writes is refused (exit 2, the lock named);
/// a lock left by a run that no longer runs is taken over.
#[test]
fn a_folder_in_use_by_a_live_run_is_refused() {
    let dir = scratch("folder_in_use");
    std::fs::create_dir_all(&dir).unwrap();
    let mut live = Command::new("sleep").arg("60").spawn().expect("sleep runs");
    std::fs::write(dir.join(".fem.lock"), format!("{}\n", live.id())).unwrap();
    let out = fem(&[
        "run",
        "inputs/string_pluck.yaml",
        "-o",
        dir.to_str().unwrap(),
        "--max-steps",
        "5",
        "-q",
    ]);
    let _ = live.kill();
    let _ = live.wait();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("in use by another run") && said.contains(".fem.lock"),
        "{said}"
    );
    assert!(!dir.join("history.csv").exists(), "nothing was written");
    // The same lock, its process gone: the run takes the folder and releases it.
    let out = fem(&[
        "run",
        "inputs/string_pluck.yaml",
        "-o",
        dir.to_str().unwrap(),
        "--max-steps",
        "5",
        "-q",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.join("history.csv").exists());
    assert!(!dir.join(".fem.lock").exists(), "the lock is released");
}

/// This build has no MPI: started by an MPI launcher on several processes it refuses, rather
/// than run copies of the same run into the same folder.
#[cfg(not(feature = "mpi"))]
#[test]
fn the_serial_build_under_an_mpi_launcher_refuses() {
    let dir = scratch("serial_under_mpirun");
    let out = Command::new(env!("CARGO_BIN_EXE_fem"))
        .args([
            "run",
            "inputs/string_pluck.yaml",
            "-o",
            dir.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PMI_RANK", "1")
        .env("PMI_SIZE", "2")
        .output()
        .expect("the fem binary runs");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("built without MPI support"), "{said}");
    assert!(!dir.exists(), "nothing was written");
}
