//! `fem modes`' frequencies against SciPy's `eigsh` (ARPACK, shift-invert) on the same
//! matrices, to 1e-10: `tests/reference/modes/NAME.csv` holds eigsh's `ω²`, computed by
//! `tests/reference/modes/eigsh_reference.py` from the matrices the ignored test
//! [`write_matrix_market`] writes (`K` and `M` on the free dofs, Matrix Market).

use std::io::Write;
use std::path::{Path, PathBuf};

use fem::time::Mass;

/// The inputs compared, and how many modes.
const CASES: [(&str, &str, usize); 3] = [
    ("string_100", "tests/modes/string_100_consistent.yaml", 12),
    ("cantilever_hex8", "tests/modes/cantilever_hex8.yaml", 12),
    ("column_tet10", "tests/modes/column_tet10.yaml", 12),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("modes_scipy")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `(mode, ω²)` of a reference file.
fn reference(name: &str) -> Vec<f64> {
    let path = root().join(format!("tests/reference/modes/{name}.csv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("mode,omega_squared"));
    lines
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn frequencies_equal_scipy_eigsh_to_1e_10() {
    for (name, file, count) in CASES {
        let expected = reference(name);
        assert_eq!(expected.len(), count, "{name}");
        let options = fem::modes::ModesOptions {
            count,
            shift: None,
            out_dir: scratch(name),
            base: name.into(),
        };
        let summary =
            fem::modes::modes::<fem::input::ModelInput>(&root().join(file), &options).unwrap();
        for (j, (row, theirs)) in summary.rows.iter().zip(&expected).enumerate() {
            let ours = row.omega_squared;
            assert!(
                (ours - theirs).abs() <= 1e-10 * theirs.abs(),
                "{name} mode {}: {ours:e} against eigsh's {theirs:e} ({:.1e})",
                j + 1,
                (ours - theirs) / theirs
            );
        }
    }
}

/// Writes `K` and `M` of each case on the free dofs as `NAME_K.mtx`, `NAME_M.mtx` into
/// `FEM_MODES_MTX` (the reference script sets it; `FEM_MODES_CASE` names another input).
#[test]
#[ignore = "run by tests/reference/modes/eigsh_reference.py"]
fn write_matrix_market() {
    let dir = PathBuf::from(std::env::var("FEM_MODES_MTX").expect("FEM_MODES_MTX names a folder"));
    std::fs::create_dir_all(&dir).unwrap();
    // `FEM_MODES_CASE=NAME:FILE:K` writes that input's matrices instead (the bench's).
    let case = std::env::var("FEM_MODES_CASE").ok();
    let one: Vec<(String, String, usize)> = case
        .as_deref()
        .map(|c| {
            let parts: Vec<&str> = c.split(':').collect();
            vec![(
                parts[0].to_string(),
                parts[1].to_string(),
                parts[2].parse().unwrap(),
            )]
        })
        .unwrap_or_default();
    let cases: Vec<(String, String, usize)> = if one.is_empty() {
        CASES
            .iter()
            .map(|(n, f, k)| (n.to_string(), f.to_string(), *k))
            .collect()
    } else {
        one
    };
    for (name, file, count) in cases {
        let problem =
            fem::modes::eigenproblem::<fem::input::ModelInput>(&root().join(file), None).unwrap();
        write_mtx(&dir.join(format!("{name}_K.mtx")), &problem.stiffness);
        let m = match &problem.mass {
            Mass::Lumped(d) => {
                let mut coo = fem::nalgebra_sparse::CooMatrix::new(d.len(), d.len());
                for (i, v) in d.iter().enumerate() {
                    coo.push(i, i, *v);
                }
                fem::nalgebra_sparse::CsrMatrix::from(&coo)
            }
            Mass::Consistent(m) => m.clone(),
        };
        write_mtx(&dir.join(format!("{name}_M.mtx")), &m);
        std::fs::write(dir.join(format!("{name}.k")), count.to_string()).unwrap();
    }
}

/// A general real coordinate Matrix Market file, values in shortest round-trip form.
fn write_mtx(path: &Path, a: &fem::nalgebra_sparse::CsrMatrix<f64>) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "%%MatrixMarket matrix coordinate real general").unwrap();
    writeln!(out, "{} {} {}", a.nrows(), a.ncols(), a.nnz()).unwrap();
    for (i, j, v) in a.triplet_iter() {
        writeln!(out, "{} {} {v:e}", i + 1, j + 1).unwrap();
    }
}
