//! Checkpoint and restart: a run cut short and resumed, or interrupted by a signal and
//! resumed, writes bitwise the history, probes and frames of a run that was never stopped —
//! for every shipped input (every model and scheme); a damaged or foreign checkpoint is refused
//! with exit code 2 and the reason.

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

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn inputs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("inputs"))
            .expect("inputs/")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
    files.sort();
    files
}

/// Every file of `a` but the checkpoint equals `b`'s, byte for byte.
fn same_files(a: &Path, b: &Path) -> Result<usize, String> {
    let mut names: Vec<String> = std::fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "checkpoint.fem")
        .collect();
    names.sort();
    let mut other: Vec<String> = std::fs::read_dir(b)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "checkpoint.fem")
        .collect();
    other.sort();
    if names != other {
        let only_a: Vec<&String> = names.iter().filter(|n| !other.contains(n)).collect();
        let only_b: Vec<&String> = other.iter().filter(|n| !names.contains(n)).collect();
        return Err(format!(
            "{} against {} files; only in the first: {only_a:?}; only in the second: {only_b:?}",
            names.len(),
            other.len()
        ));
    }
    let mut count = 0;
    for n in &names {
        if a.join(n).is_dir() {
            // A folder of the run (plots/): the same files in it.
            count += same_files(&a.join(n), &b.join(n)).map_err(|e| format!("{n}/: {e}"))?;
            continue;
        }
        if std::fs::read(a.join(n)).unwrap() != std::fs::read(b.join(n)).unwrap() {
            return Err(format!("{n} differs"));
        }
        count += 1;
    }
    Ok(count)
}

#[test]
fn a_resumed_run_is_bitwise_the_uninterrupted_run_for_every_input() {
    let mut failures = Vec::new();
    for input in inputs() {
        let path = input.to_str().unwrap();
        let name = input.file_stem().unwrap().to_string_lossy().into_owned();
        let straight = scratch(&format!("restart_{name}_straight"));
        let resumed = scratch(&format!("restart_{name}_resumed"));
        let run = |dir: &Path, args: &[&str]| {
            let mut all = vec!["run", path, "-o", dir.to_str().unwrap(), "-q"];
            all.extend_from_slice(args);
            let out = fem(&all);
            assert!(out.status.success(), "fem {all:?}:\n{}", text(&out));
        };
        run(&straight, &["--max-steps", "400"]);
        // Cut at step 150, or at step 20 for an input that ends before 150 (scene_hertz: 40).
        run(&resumed, &["--max-steps", "150"]);
        if !resumed.join("checkpoint.fem").exists() {
            let _ = std::fs::remove_dir_all(&resumed);
            run(&resumed, &["--max-steps", "20"]);
        }
        assert!(
            resumed.join("checkpoint.fem").exists(),
            "{name}: a run cut short leaves a checkpoint"
        );
        run(&resumed, &["--max-steps", "400", "--resume"]);
        match same_files(&straight, &resumed) {
            Ok(n) => assert!(n >= 3, "{name}: {n} files"),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_interrupted_run_resumes_to_the_same_result() {
    let input = "inputs/string_obstacle_point.yaml";
    let straight = scratch("interrupt_straight");
    let out = fem(&[
        "run",
        input,
        "-o",
        straight.to_str().unwrap(),
        "-q",
        "--max-steps",
        "3000",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let dir = scratch("interrupt_resumed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fem"))
        .args([
            "run",
            input,
            "-o",
            dir.to_str().unwrap(),
            "-q",
            "--max-steps",
            "3000",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .spawn()
        .expect("fem starts");
    // Interrupt once some rows are written.
    let history = dir.join("history.csv");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&history).map_or(0, |h| h.lines().count()) < 50 {
        assert!(started.elapsed().as_secs() < 60, "the run did not start");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().expect("fem ends");
    if status.success() {
        // The run finished before the signal arrived: nothing to resume, and it is complete.
        same_files(&straight, &dir).unwrap();
        return;
    }
    assert_eq!(status.code(), Some(1), "an interrupted run exits 1");
    assert!(
        dir.join("checkpoint.fem").exists(),
        "an interrupted run leaves a checkpoint"
    );
    let out = fem(&[
        "run",
        input,
        "-o",
        dir.to_str().unwrap(),
        "-q",
        "--max-steps",
        "3000",
        "--resume",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    same_files(&straight, &dir).unwrap();
}

#[test]
fn damaged_or_foreign_checkpoints_are_refused_with_exit_code_2() {
    let input = "inputs/string_pluck.yaml";
    let dir = scratch("restart_refused");
    let d = dir.to_str().unwrap();
    // No checkpoint yet.
    let out = fem(&["run", input, "-o", d, "-q", "--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no checkpoint"), "{}", text(&out));
    let out = fem(&["run", input, "-o", d, "-q", "--max-steps", "20"]);
    assert!(out.status.success());
    let checkpoint = dir.join("checkpoint.fem");
    let good = std::fs::read(&checkpoint).unwrap();
    // Another input.
    let out = fem(&["run", "inputs/string_gmsh.yaml", "-o", d, "-q", "--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("another input"), "{}", text(&out));
    // Truncated.
    std::fs::write(&checkpoint, &good[..good.len() / 2]).unwrap();
    let out = fem(&["run", input, "-o", d, "-q", "--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("truncated"), "{}", text(&out));
    // Corrupt.
    let mut bad = good.clone();
    let k = bad.len() - 10;
    bad[k] ^= 1;
    std::fs::write(&checkpoint, &bad).unwrap();
    let out = fem(&["run", input, "-o", d, "-q", "--resume"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("checksum"), "{}", text(&out));
    assert!(!text(&out).contains("panicked"));
}

#[test]
fn a_fresh_run_replaces_an_older_run_in_the_same_directory() {
    let dir = scratch("replace_older");
    let d = dir.to_str().unwrap();
    let long = fem(&[
        "run",
        "inputs/string_pluck.yaml",
        "-o",
        d,
        "-q",
        "--max-steps",
        "40",
    ]);
    assert!(long.status.success());
    let frames = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "vtu")
            })
            .count()
    };
    assert_eq!(frames(&dir), 11);
    let short = fem(&[
        "run",
        "inputs/string_pluck.yaml",
        "-o",
        d,
        "-q",
        "--max-steps",
        "8",
    ]);
    assert!(short.status.success());
    assert_eq!(frames(&dir), 3, "the older run's later frames are gone");
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    assert_eq!(history.lines().count(), 1 + 9);
}

/// What a resumed run finds in its output folder is checked before anything runs (exit 2): a
/// pipe standing as the checkpoint or the history, a frame the checkpoint lists that is gone,
/// a history shorter than the checkpoint says, and restored values that are not numbers.
#[test]
fn a_resumed_runs_folder_and_values_are_checked_with_exit_code_2() {
    let input = "inputs/string_pluck.yaml";
    let dir = scratch("restart_folder_checked");
    let d = dir.to_str().unwrap();
    let fresh = |dir: &str| {
        let out = fem(&["run", input, "-o", dir, "-q", "--max-steps", "20"]);
        assert!(out.status.success(), "{}", text(&out));
    };
    let refused = |words: &str| {
        let out = fem(&["run", input, "-o", d, "-q", "--resume"]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{words}: {said}");
        assert!(said.contains(words), "{words}: {said}");
        assert!(!said.contains("panicked"), "{said}");
    };
    let mkfifo = |path: &Path| {
        let _ = std::fs::remove_file(path);
        let ok = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(ok.success());
    };
    fresh(d);
    let checkpoint = dir.join("checkpoint.fem");
    let good = std::fs::read(&checkpoint).unwrap();
    mkfifo(&checkpoint);
    refused("not a regular file");
    std::fs::remove_file(&checkpoint).unwrap();
    std::fs::write(&checkpoint, &good).unwrap();
    let history = dir.join("history.csv");
    let rows = std::fs::read(&history).unwrap();
    mkfifo(&history);
    refused("not a regular file");
    std::fs::remove_file(&history).unwrap();
    std::fs::write(&history, &rows[..rows.len() / 3]).unwrap();
    refused("fewer than");
    std::fs::write(&history, &rows).unwrap();
    std::fs::remove_file(dir.join("string_pluck_000001.vtu")).unwrap();
    refused("missing");
    fresh(d);
    // A frame time that is not a number, in a checkpoint otherwise intact.
    let mut c = fem::io::Checkpoint::read(&checkpoint, fingerprint(input)).unwrap();
    let times = c
        .arrays
        .iter_mut()
        .find(|a| a.name == "drive:frame_times")
        .unwrap();
    times.values[0] = f64::NAN;
    c.write(&checkpoint).unwrap();
    refused("not a number");
}

/// The fingerprint `fem run` gives `input` (the checkpoint is refused without it).
fn fingerprint(input: &str) -> u32 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(input);
    let parsed = fem::load(&path).unwrap();
    fem::input_fingerprint(&path, &parsed).unwrap()
}
