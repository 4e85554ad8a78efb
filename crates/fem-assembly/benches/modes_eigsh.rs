//! Issue 27's bench (the project's one driver of it): the 20 lowest modes of a ~10⁵-dof hex8
//! model (a steel cantilever 5 × 1 × 1 m of 100 × 18 × 18 hex8, clamped at x = 0, lumped mass:
//! 108 300 free dofs), by fem's shift-invert Lanczos and by SciPy's `eigsh` (ARPACK,
//! shift-invert) on the same matrices, in the same run, interleaved; wall time of the solve
//! (factorization included, reading the matrices not) and peak resident memory of each process
//! (`/usr/bin/time -f %M`, the whole process: reading included).
//!
//! `cargo bench -p fem-assembly --bench modes_eigsh` (release profile). Settings, by
//! environment:
//! - `FEM_BENCH_ROUNDS`: rounds (default 3);
//! - `FEM_BENCH_CELLS`: the box's cells `nx,ny,nz` (default `100,18,18`; the box stays
//!   5 × 1 × 1 m);
//! - `FEM_EIGSH_FACTOR`: eigsh's factorization of `K − σM`, a comma-separated list run one
//!   after the other in each round: `superlu` (eigsh's own, SuperLU with its default COLAMD
//!   column order), `mmd` (SuperLU with `permc_spec='MMD_AT_PLUS_A'`, a minimum degree order
//!   of `Aᵀ + A`, passed as `OPinv`), `cholmod` (scikit-sparse's CHOLMOD Cholesky, its default
//!   ordering, passed as `OPinv`; skipped when scikit-sparse is not installed). Default `mmd,cholmod`;
//! - `FEM_EIGSH_TIMEOUT`: seconds after which an eigsh run is stopped (default 1200); its
//!   peak memory up to then is reported.
//!
//! The matrices are written once per size, as raw little-endian arrays, into
//! `target/modes_eigsh/NX_NY_NZ/`. Never run in CI.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fem_assembly::modes::{MassMatrix, ModeSettings, lowest_modes};
use fem_assembly::{CsrMatrix, DofMap, SolidOperator};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

const COUNT: usize = 20;
const CELLS: [usize; 3] = [100, 18, 18];

/// `FEM_BENCH_CELLS` (`nx,ny,nz`) or [`CELLS`].
fn cells() -> [usize; 3] {
    std::env::var("FEM_BENCH_CELLS")
        .ok()
        .and_then(|v| {
            let n: Vec<usize> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            <[usize; 3]>::try_from(n).ok()
        })
        .unwrap_or(CELLS)
}

fn write_f64(path: &Path, v: &[f64]) {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn write_u64(path: &Path, v: &[usize]) {
    let bytes: Vec<u8> = v.iter().flat_map(|x| (*x as u64).to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn read_f64(path: &Path) -> Vec<f64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn read_u64(path: &Path) -> Vec<usize> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()) as usize)
        .collect()
}

/// Assembles the model and writes K (CSR: indptr, indices, data), the lumped mass and the dof
/// points.
fn write_model(dir: &Path, cells: [usize; 3]) {
    let lengths = [5.0, 1.0, 1.0];
    let mesh = box_mesh(lengths, cells, BoxCells::Hex8).unwrap();
    let fixed: Vec<usize> = mesh
        .group("xmin")
        .unwrap()
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let op = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        Material::new(MaterialModel::SaintVenantKirchhoff, 210e9, 0.3).unwrap(),
        7850.0,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .unwrap();
    let k = op.tangent(&vec![0.0; op.dofmap().n_dofs()]).unwrap();
    let points = op.dofmap().free_dof_points(&mesh.points);
    std::fs::create_dir_all(dir).unwrap();
    write_u64(&dir.join("indptr.bin"), k.row_offsets());
    write_u64(&dir.join("indices.bin"), k.col_indices());
    write_f64(&dir.join("data.bin"), k.values());
    write_f64(&dir.join("mass.bin"), op.lumped_mass());
    let flat: Vec<f64> = points.iter().flat_map(|p| *p).collect();
    write_f64(&dir.join("points.bin"), &flat);
}

/// The solve in this process: prints `seconds n omega2_1 .. omega2_20`.
fn ours(dir: &Path) {
    let indptr = read_u64(&dir.join("indptr.bin"));
    let indices = read_u64(&dir.join("indices.bin"));
    let data = read_f64(&dir.join("data.bin"));
    let mass = read_f64(&dir.join("mass.bin"));
    let flat = read_f64(&dir.join("points.bin"));
    let points: Vec<[f64; 3]> = flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    let n = mass.len();
    let k = CsrMatrix::try_from_csr_data(n, n, indptr, indices, data).unwrap();
    let t = Instant::now();
    let modes = lowest_modes(
        &k,
        MassMatrix::Lumped(&mass),
        &ModeSettings::lowest(COUNT).with_dof_points(points),
    )
    .unwrap();
    let seconds = t.elapsed().as_secs_f64();
    let values: Vec<String> = modes
        .eigenvalues()
        .iter()
        .map(|v| format!("{v:.17e}"))
        .collect();
    println!("{seconds} {n} {} {}", modes.solves(), values.join(" "));
}

const SCIPY: &str = r#"
import sys, time
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as sla
d, k, factor = sys.argv[1], int(sys.argv[2]), sys.argv[3]
indptr = np.fromfile(d + "/indptr.bin", dtype="<u8").astype(np.int64)
indices = np.fromfile(d + "/indices.bin", dtype="<u8").astype(np.int64)
data = np.fromfile(d + "/data.bin", dtype="<f8")
m = np.fromfile(d + "/mass.bin", dtype="<f8")
n = m.size
K = sp.csr_matrix((data, indices, indptr), shape=(n, n)).tocsc()
M = sp.diags(m).tocsc()
# fem's default shift (ModeSettings::lowest): a small negative multiple of the largest K_ii/M_ii.
sigma = -1e-9 * np.max(np.abs(K.diagonal()) / m)
t = time.perf_counter()
if factor == "superlu":
    vals = sla.eigsh(K, k=k, M=M, sigma=sigma, which="LM", tol=0)[0]
else:
    A = (K - sigma * M).tocsc()
    if factor == "mmd":
        lu = sla.splu(A, permc_spec="MMD_AT_PLUS_A")
        solve = lu.solve
    elif factor == "cholmod":
        from sksparse.cholmod import cholesky
        f = cholesky(A)
        solve = f
    else:
        raise SystemExit("unknown factor " + factor)
    op = sla.LinearOperator(K.shape, matvec=solve, dtype=float)
    vals = sla.eigsh(K, k=k, M=M, sigma=sigma, which="LM", tol=0, OPinv=op)[0]
s = time.perf_counter() - t
print(s, n, 0, " ".join(repr(float(v)) for v in np.sort(vals)))
"#;

/// Runs `program` under `/usr/bin/time -f %M` (and `timeout`, when given): (its stdout's first
/// line, or `None` when it was stopped by the timeout, and its peak RSS in KiB).
fn measured(program: &str, args: &[&str], timeout: Option<u64>) -> (Option<String>, f64) {
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-f").arg("%M");
    if let Some(s) = timeout {
        cmd.arg("timeout").arg(s.to_string());
    }
    let out = cmd.arg(program).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let kib: f64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(f64::NAN);
    if timeout.is_some() && out.status.code() == Some(124) {
        return (None, kib);
    }
    assert!(out.status.success(), "{program}: {stderr}");
    (Some(stdout.lines().next().unwrap_or("").to_string()), kib)
}

/// Whether scikit-sparse's CHOLMOD imports.
fn has_cholmod() -> bool {
    Command::new("python3")
        .args(["-c", "import sksparse.cholmod"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--ours") {
        ours(Path::new(&args[i + 1]));
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let cells = cells();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/modes_eigsh")
        .join(format!("{}_{}_{}", cells[0], cells[1], cells[2]));
    if !dir.join("points.bin").exists() {
        let t = Instant::now();
        write_model(&dir, cells);
        println!("model written in {:.1} s", t.elapsed().as_secs_f64());
    }
    let script = dir.join("eigsh_bench.py");
    std::fs::write(&script, SCIPY).unwrap();
    let exe = std::env::current_exe().unwrap();
    let rounds: usize = std::env::var("FEM_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let timeout: u64 = std::env::var("FEM_EIGSH_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1200);
    let cholmod = has_cholmod();
    let factors: Vec<String> = std::env::var("FEM_EIGSH_FACTOR")
        .unwrap_or_else(|_| "mmd,cholmod".into())
        .split(',')
        .map(|f| f.trim().to_string())
        .filter(|f| {
            let keep = f != "cholmod" || cholmod;
            if !keep {
                println!("cholmod skipped: scikit-sparse is not installed");
            }
            keep
        })
        .collect();
    let d = dir.to_str().unwrap();
    let count = COUNT.to_string();
    let parse = |line: &str| -> (f64, usize, usize, Vec<f64>) {
        let f: Vec<&str> = line.split_whitespace().collect();
        (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3..].iter().map(|v| v.parse().unwrap()).collect(),
        )
    };
    let uptime = || {
        Command::new("uptime")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    println!("cells {cells:?}, {COUNT} modes; {}", uptime());
    println!("round  solver        s        MiB  solves  time ratio fem/it  max rel diff omega^2");
    for round in 0..rounds {
        let (a, a_kib) = measured(exe.to_str().unwrap(), &["--ours", d], None);
        let (ta, n, solves, la) = parse(&a.unwrap());
        println!(
            "{round:5}  fem       {ta:9.2}  {:7.0}  {solves:6}  (n = {n})",
            a_kib / 1024.0
        );
        for factor in &factors {
            let args = [script.to_str().unwrap(), d, &count, factor];
            let (b, b_kib) = measured("python3", &args, Some(timeout));
            let Some(b) = b else {
                println!(
                    "{round:5}  eigsh/{factor:7} stopped after {timeout} s, peak {:.0} MiB",
                    b_kib / 1024.0
                );
                continue;
            };
            let (tb, _, _, lb) = parse(&b);
            let diff = la
                .iter()
                .zip(&lb)
                .map(|(x, y)| ((x - y) / y).abs())
                .fold(0.0, f64::max);
            println!(
                "{round:5}  eigsh/{factor:7} {tb:7.2}  {:7.0}          {:.2}               {diff:.1e}",
                b_kib / 1024.0,
                ta / tb
            );
        }
        println!("       {}", uptime());
    }
}
