//! Behaviour is preserved: every shipped input, run as CI runs it (`--max-steps 2000`), writes
//! a `history.csv` (and `probes.csv`) that agrees with the one stored in `tests/reference/`
//! (written before the framework refactor) to 1e-12 relative to each column's scale.
//! Columns renamed since are mapped below; columns added since have no reference.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `(input, old column, new column)`: columns renamed by the one history convention.
const RENAMED: [(&str, &str, &str); 3] = [
    ("string_obstacle_", "energy", "total"),
    ("beam_fall_", "energy", "total"),
    ("pendulum_", "energy", "mechanical_energy"),
];

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|c| {
                    if c.is_empty() {
                        f64::NAN
                    } else {
                        c.parse().expect("a number")
                    }
                })
                .collect()
        })
        .collect();
    (header, rows)
}

fn new_name<'a>(input: &str, old: &'a str) -> &'a str {
    RENAMED
        .iter()
        .find(|(prefix, from, _)| input.starts_with(prefix) && *from == old)
        .map_or(old, |(_, _, to)| to)
}

fn compare(input: &str, reference: &Path, fresh: &Path) -> Vec<String> {
    let (ref_header, ref_rows) = read_csv(reference);
    let (header, rows) = read_csv(fresh);
    let mut failures = Vec::new();
    if ref_rows.len() != rows.len() {
        failures.push(format!(
            "{input}: {} rows, reference {}",
            rows.len(),
            ref_rows.len()
        ));
        return failures;
    }
    if let Some(r) = rows.iter().position(|r| r.iter().any(|v| v.is_nan())) {
        failures.push(format!("{input}: row {r} has an empty or non-finite cell"));
    }
    for (j, old) in ref_header.iter().enumerate() {
        let name = new_name(input, old);
        let Some(k) = header.iter().position(|h| h == name) else {
            failures.push(format!("{input}: column '{old}' ('{name}') is missing"));
            continue;
        };
        if ref_rows.iter().any(|r| !r[j].is_finite()) {
            failures.push(format!(
                "{input}: the reference's column '{old}' is not finite"
            ));
            continue;
        }
        let scale = ref_rows.iter().fold(0.0f64, |m, r| m.max(r[j].abs()));
        let worst = ref_rows
            .iter()
            .zip(&rows)
            .map(|(a, b)| (a[j] - b[k]).abs())
            .fold(0.0f64, f64::max);
        if worst > 1e-12 * scale || worst.is_nan() {
            failures.push(format!(
                "{input}: column '{old}' differs by {worst:e} (scale {scale:e})"
            ));
        }
    }
    failures
}

#[test]
fn every_shipped_input_reproduces_its_stored_history() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(root.join("inputs"))
        .expect("inputs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    inputs.sort();
    let mut failures = Vec::new();
    let mut compared = 0;
    for input in &inputs {
        let name = input.file_stem().unwrap().to_string_lossy().into_owned();
        let reference = root.join("tests/reference").join(&name);
        assert!(
            reference.join("history.csv").exists(),
            "{name}: no stored reference history (tests/reference/README.md says how to add one)"
        );
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reference_{name}"));
        let _ = std::fs::remove_dir_all(&out);
        let status = Command::new(env!("CARGO_BIN_EXE_fem"))
            .args(["run", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(["--max-steps", "2000", "-q"])
            .current_dir(root)
            .status()
            .expect("fem runs");
        assert!(status.success(), "{name}: fem run failed");
        for file in ["history.csv", "probes.csv"] {
            if reference.join(file).exists() {
                failures.extend(compare(&name, &reference.join(file), &out.join(file)));
                compared += 1;
            }
        }
    }
    assert!(compared > inputs.len(), "{compared} files compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
