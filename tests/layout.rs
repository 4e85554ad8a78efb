//! The project's layout as its docs and facade present it: every workspace crate has a row in
//! docs/architecture.md's table of crates and is re-exported by the `fem` facade (src/lib.rs),
//! so a crate cannot be added without a word on its concern or be unreachable from `fem`.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's crates: the folders of `crates/` with a `Cargo.toml`.
fn crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/ exists")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    names
}

#[test]
fn every_crate_has_a_row_in_the_architecture_table() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    let missing: Vec<String> = crates()
        .into_iter()
        .filter(|c| !rows.iter().any(|r| r.starts_with(&format!("| `{c}`"))))
        .collect();
    assert!(
        missing.is_empty(),
        "crates without a row in docs/architecture.md's table: {missing:?}"
    );
}

#[test]
fn every_crate_is_reexported_by_the_facade() {
    let facade = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let missing: Vec<String> = crates()
        .into_iter()
        .filter(|c| {
            let module = c.replace('-', "_");
            !facade.contains(&format!("pub use {module} as "))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "crates the facade (src/lib.rs) does not re-export: {missing:?}"
    );
}
