//! The bad-input corpus through the built `fem` binary (issue 12, "one exit-code contract"):
//! every file of `tests/bad_inputs/` under `fem check` and `fem run`, every mesh of
//! `meshes/bad/` under `fem mesh`, and the cases that need a file system rather than a file
//! (`/dev/zero`, sparse 8 GiB files, an input with 100 000 contact points, output locations
//! that cannot be written). Each case must
//!
//! - exit with code 2 (never 101, never a signal), and write no output;
//! - name the file it refuses, and the words of its `# expect:` first line;
//! - use no library words (type, constant or option names: [`LIBRARY_WORDS`]);
//! - peak under [`PEAK_LIMIT_KB`] of resident memory.
//!
//! The peak is the children's `ru_maxrss` (`getrusage(RUSAGE_CHILDREN)`): the largest peak of
//! any child waited for so far. This test is the only one in its binary and runs its cases
//! one after the other, so a case that raises that maximum above the limit is the case that
//! used the memory; the figure is read after every case.
//!
//! The corpus runs with `FEM_MEMORY_LIMIT=150M` and `FEM_DISK_LIMIT=1G`, so that what is
//! refused does not depend on the machine running the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nix::sys::resource::{UsageWho, getrusage};

/// The largest resident memory a refused case may reach, in KiB (200 MB).
const PEAK_LIMIT_KB: i64 = 200_000;

/// Words of the libraries under the input layer that must not reach a user: matched as whole
/// words (`enum`, not `enumerate`).
const LIBRARY_WORDS: [&str; 6] = ["variant", "enum", "u64", "usize", "serde", "untagged"];
/// The same, matched anywhere in a message.
const LIBRARY_FRAGMENTS: [&str; 3] = ["DuplicateKeyPolicy", "MAX_", "from_str"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("bad_input_corpus")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn files(dir: &str, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .expect("folder exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    files
}

/// The `# expect: WORDS` first line of a bad input, if any.
fn expected_words(file: &Path) -> Option<String> {
    let text = String::from_utf8(std::fs::read(file).ok()?).ok()?;
    let first = text.lines().next()?;
    first.strip_prefix("# expect: ").map(str::to_string)
}

/// One refused case: the arguments of `fem`, the file name its message must hold, the words
/// it must hold, and an output folder that must not appear.
struct Case {
    args: Vec<String>,
    names: String,
    expect: Option<String>,
    no_output: Option<PathBuf>,
}

impl Case {
    fn new(args: &[&str], names: &str) -> Self {
        Self {
            args: args.iter().map(|s| s.to_string()).collect(),
            names: names.to_string(),
            expect: None,
            no_output: None,
        }
    }

    fn expect(mut self, words: &str) -> Self {
        self.expect = Some(words.to_string());
        self
    }
}

fn fem(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .current_dir(root())
        .env("FEM_MEMORY_LIMIT", "150M")
        .env("FEM_DISK_LIMIT", "1G")
        .output()
        .expect("the fem binary runs")
}

/// The children's largest resident memory so far, in KiB.
fn children_peak_kb() -> i64 {
    getrusage(UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage")
        .max_rss()
}

/// What is wrong with the outcome of `case`, if anything.
fn check(case: &Case, out: &Output) -> Option<String> {
    let message = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() != Some(2) {
        return Some(format!("exit status {} (expected code 2)", out.status));
    }
    if message.contains("panicked") {
        return Some("a panic".into());
    }
    if !message.contains(&case.names) {
        return Some(format!("the message does not name {}", case.names));
    }
    if let Some(expect) = &case.expect
        && !message.contains(expect.as_str())
    {
        return Some(format!("'{expect}' is not in the message"));
    }
    // The user's own words (file names, the input's text quoted back) are not the library's.
    let own = message.replace(&case.names, "");
    let words: Vec<&str> = own
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    for word in LIBRARY_WORDS {
        if words.iter().any(|w| w.eq_ignore_ascii_case(word)) {
            return Some(format!("the library word '{word}' is in the message"));
        }
    }
    for fragment in LIBRARY_FRAGMENTS {
        if own.contains(fragment) {
            return Some(format!("the library word '{fragment}' is in the message"));
        }
    }
    if let Some(dir) = &case.no_output
        && dir.exists()
    {
        return Some(format!("it wrote {}", dir.display()));
    }
    None
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// The corpus of `tests/bad_inputs/` under `check` and `run`.
fn input_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for file in files("tests/bad_inputs", "yaml") {
        let path = file.to_string_lossy().into_owned();
        let name = file_name(&file);
        let expect = expected_words(&file);
        let mut check = Case::new(&["check", &path], &name);
        check.expect = expect.clone();
        cases.push(check);
        let dir = scratch(&format!("run_{name}"));
        let mut run = Case::new(&["run", &path, "-o", dir.to_str().unwrap(), "-q"], &name);
        run.expect = expect;
        run.no_output = Some(dir);
        cases.push(run);
    }
    cases
}

/// The meshes of `meshes/bad/` under `fem mesh`.
fn mesh_cases() -> Vec<Case> {
    files("meshes/bad", "msh")
        .into_iter()
        .map(|file| Case::new(&["mesh", file.to_str().unwrap()], &file_name(&file)))
        .collect()
}

/// Cases made here: devices, sparse files too large to commit, an input too large to commit,
/// output locations.
fn made_cases() -> Vec<Case> {
    let dir = scratch("made");
    std::fs::create_dir_all(&dir).unwrap();
    let at = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let mut cases = vec![
        Case::new(&["check", "/dev/zero"], "/dev/zero").expect("character device"),
        Case::new(&["mesh", "/dev/zero"], "/dev/zero").expect("character device"),
        Case::new(
            &["run", "/dev/zero", "-o", &at("out_dev_zero")],
            "/dev/zero",
        ),
        Case::new(&["check", "/"], "/").expect("a folder"),
    ];

    // Sparse files of 8 GiB (no disk used): refused by their size before they are read.
    let sparse = |name: &str| {
        let path = dir.join(name);
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(8 << 30).unwrap();
        path.to_string_lossy().into_owned()
    };
    let big_yaml = sparse("sparse_8GiB.yaml");
    let big_msh = sparse("sparse_8GiB.msh");
    cases.push(Case::new(&["check", &big_yaml], "sparse_8GiB.yaml").expect("at most"));
    cases.push(Case::new(&["mesh", &big_msh], "sparse_8GiB.msh").expect("more than"));
    // A sparse mesh under the size cap: refused by its first bytes, not read whole.
    let zeros = dir.join("zeros_1GiB.msh");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    cases.push(
        Case::new(&["mesh", zeros.to_str().unwrap()], "zeros_1GiB.msh").expect("$MeshFormat"),
    );
    for (name, mesh) in [
        ("mesh_sparse.yaml", "sparse_8GiB.msh"),
        ("mesh_zeros.yaml", "zeros_1GiB.msh"),
    ] {
        std::fs::write(
            dir.join(name),
            format!(
                "mesh: {{ file: {mesh} }}\nmodel:\n  string: {{ density: 1.0, tension: 1.0 }}\n\
                 time: {{ scheme: alpha, dt: 0.01, t_end: 1.0 }}\n"
            ),
        )
        .unwrap();
        cases.push(Case::new(&["check", &at(name)], name).expect(mesh));
    }

    // 100 000 contact points on a modal string (issue 12: 150 s of validation, then more
    // than 4 GiB): refused by the memory estimate.
    let positions: Vec<String> = (0..100_000)
        .map(|i| format!("{:.6}", 0.001 + 0.99 * i as f64 / 1e5))
        .collect();
    std::fs::write(
        dir.join("modal_1e5_contact_points.yaml"),
        format!(
            "model:\n  modal_string: {{ length: 1.002, tension: 180.5, density: 1.17e-3, modes: 100 }}\n\
             contact:\n  obstacles:\n    - {{ positions: [{}], height: 0.0 }}\n  solver: lemke\n\
             initial:\n  displacement: {{ pluck: {{ position: 0.501, amplitude: 1.5e-3 }} }}\n\
             time: {{ scheme: modal_moreau_jean, dt: 2.0e-4, t_end: 0.5 }}\n",
            positions.join(", ")
        ),
    )
    .unwrap();
    let modal = at("modal_1e5_contact_points.yaml");
    cases.push(
        Case::new(&["check", &modal], "modal_1e5_contact_points.yaml")
            .expect("100000 contact points"),
    );
    cases.push(
        Case::new(
            &["run", &modal, "-o", &at("out_modal"), "-q"],
            "modal_1e5_contact_points.yaml",
        )
        .expect("would need about"),
    );

    // 300 000 numbers: beyond what the YAML reader holds for one input (which bounds the
    // memory of parsing a file of at most 64 MiB).
    let zeros = vec!["0"; 300_000].join(",");
    std::fs::write(
        dir.join("yaml_300000_values.yaml"),
        format!(
            "mesh: {{ line: {{ length: 1.0, cells: 10 }} }}\nmodel:\n  string: {{ density: 1, tension: 1 }}\n\
             output: {{ probes: [{zeros}] }}\ntime: {{ scheme: alpha, dt: 0.01, t_end: 1.0 }}\n"
        ),
    )
    .unwrap();
    cases.push(
        Case::new(
            &["check", &at("yaml_300000_values.yaml")],
            "yaml_300000_values.yaml",
        )
        .expect("a CSV file"),
    );

    // An expression of 3 million terms (issue 28: 1.8 GB and not done in 400 s): refused by
    // its length before it is built.
    std::fs::write(
        dir.join("expression_3e6_terms.yaml"),
        format!(
            "mesh: {{ line: {{ length: 1.0, cells: 10 }} }}\nmodel:\n  string: {{ density: 1, tension: 1 }}\n\
             dirichlet:\n  - {{ nodes: [0], value: \"{}\" }}\nfixed:\n  - {{ nodes: [10] }}\n\
             time: {{ scheme: alpha, dt: 0.01, t_end: 1.0 }}\n",
            vec!["t"; 3_000_000].join("+")
        ),
    )
    .unwrap();
    cases.push(
        Case::new(
            &["check", &at("expression_3e6_terms.yaml")],
            "expression_3e6_terms.yaml",
        )
        .expect("at most 4096"),
    );

    // 70 MiB of comments around a valid input (issue 28: the reader refused what the size
    // limit let through, as "larger than an input file may be"): refused by its size, 64 MiB
    // (67 MB).
    {
        let mut text = String::from(
            "mesh: { line: { length: 1.0, cells: 10 } }\nmodel:\n  string: { density: 1, tension: 1 }\n\
             time: { scheme: alpha, dt: 0.01, t_end: 1.0 }\n",
        );
        let line = format!("# {}\n", "x".repeat(1022));
        while text.len() < 70 << 20 {
            text.push_str(&line);
        }
        std::fs::write(dir.join("comments_70MiB.yaml"), text).unwrap();
    }
    cases.push(
        Case::new(
            &["check", &at("comments_70MiB.yaml")],
            "comments_70MiB.yaml",
        )
        .expect("at most 67 MB"),
    );

    // Output locations that cannot be written: exit 2, the run has not started.
    let good = root()
        .join("inputs/string_pluck.yaml")
        .to_string_lossy()
        .into_owned();
    let file = dir.join("a_file");
    std::fs::write(&file, "not a folder").unwrap();
    let under = file.join("out");
    for place in [file.clone(), under] {
        let place = place.to_string_lossy().into_owned();
        cases.push(Case::new(&["run", &good, "-o", &place, "-q"], "a_file"));
    }
    cases.push(Case::new(
        &["run", &good, "-o", "/proc/fem_output", "-q"],
        "/proc/fem_output",
    ));
    // A read-only folder (only where permissions hold: not for root, which may write anyway).
    let read_only = dir.join("read_only");
    std::fs::create_dir_all(&read_only).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    if std::fs::create_dir(read_only.join("probe")).is_err() {
        let place = read_only.join("out").to_string_lossy().into_owned();
        cases.push(Case::new(&["run", &good, "-o", &place, "-q"], "read_only"));
    }
    cases
}

#[test]
fn every_bad_input_exits_with_2_in_the_users_words_within_200_mb() {
    let mut cases = input_cases();
    assert!(cases.len() >= 150, "the corpus has {} cases", cases.len());
    cases.extend(mesh_cases());
    cases.extend(made_cases());
    let mut failures = Vec::new();
    let mut peak = children_peak_kb();
    let mut largest = (0, String::new());
    for case in &cases {
        let out = fem(&case.args);
        let after = children_peak_kb();
        if after > peak {
            largest = (after, case.args.join(" "));
        }
        if after > PEAK_LIMIT_KB && peak <= PEAK_LIMIT_KB {
            failures.push(format!(
                "fem {}: a peak of {} MB (at most {} MB)",
                case.args.join(" "),
                after / 1000,
                PEAK_LIMIT_KB / 1000
            ));
        }
        peak = after;
        if let Some(problem) = check(case, &out) {
            failures.push(format!(
                "fem {}: {problem}\n{}{}",
                case.args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    println!(
        "{} cases; the largest peak, {} MB, was fem {}",
        cases.len(),
        largest.0 / 1000,
        largest.1
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
