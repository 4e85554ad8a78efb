//! Issue 27's bench: the 20 lowest modes of a ~10⁵-dof hex8 model (a steel cantilever
//! 5 × 1 × 1 m of 100 × 18 × 18 hex8, clamped at x = 0, lumped mass: 108 300 free dofs), by
//! fem's shift-invert Lanczos and by SciPy's `eigsh` (ARPACK, shift-invert, its sparse LU) on the
//! same matrices, in the same run, interleaved; wall time of the solve (factorization
//! included, reading the matrices not) and peak resident memory of each process
//! (`/usr/bin/time -f %M`, the whole process: reading included).
//!
//! `cargo bench -p fem-assembly --bench modes_eigsh` (release profile). Rounds:
//! `FEM_BENCH_ROUNDS` (default 3). The matrices are written once, as raw little-endian arrays,
//! into `target/modes_eigsh/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fem_assembly::modes::{MassMatrix, ModeSettings, lowest_modes};
use fem_assembly::{CsrMatrix, DofMap, SolidOperator};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

const COUNT: usize = 20;
const CELLS: [usize; 3] = [100, 18, 18];

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
fn write_model(dir: &Path) {
    let lengths = [5.0, 1.0, 1.0];
    let mesh = box_mesh(lengths, CELLS, BoxCells::Hex8).unwrap();
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
d = sys.argv[1]
indptr = np.fromfile(d + "/indptr.bin", dtype="<u8").astype(np.int64)
indices = np.fromfile(d + "/indices.bin", dtype="<u8").astype(np.int64)
data = np.fromfile(d + "/data.bin", dtype="<f8")
m = np.fromfile(d + "/mass.bin", dtype="<f8")
n = m.size
K = sp.csr_matrix((data, indices, indptr), shape=(n, n)).tocsc()
M = sp.diags(m).tocsc()
sigma = -1e-9 * np.max(np.abs(K.diagonal()) / m)
t = time.perf_counter()
vals = sla.eigsh(K, k=int(sys.argv[2]), M=M, sigma=sigma, which="LM", tol=0,
                 return_eigenvectors=True)[0]
s = time.perf_counter() - t
print(s, n, 0, " ".join(repr(float(v)) for v in np.sort(vals)))
"#;

/// Runs `cmd` under `/usr/bin/time -f %M`: (its stdout's first line, peak RSS in KiB).
fn measured(program: &str, args: &[&str]) -> (String, f64) {
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{program}: {stderr}");
    let kib: f64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap();
    (stdout.lines().next().unwrap_or("").to_string(), kib)
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
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/modes_eigsh");
    if !dir.join("points.bin").exists() {
        let t = Instant::now();
        write_model(&dir);
        println!("model written in {:.1} s", t.elapsed().as_secs_f64());
    }
    let script = dir.join("eigsh_bench.py");
    std::fs::write(&script, SCIPY).unwrap();
    let exe = std::env::current_exe().unwrap();
    let rounds: usize = std::env::var("FEM_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
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
    println!("round  fem s  fem MiB  solves  eigsh s  eigsh MiB  max rel diff omega^2");
    for round in 0..rounds {
        let (a, a_kib) = measured(exe.to_str().unwrap(), &["--ours", d]);
        let (b, b_kib) = measured("python3", &[script.to_str().unwrap(), d, &count]);
        let (ta, n, solves, la) = parse(&a);
        let (tb, _, _, lb) = parse(&b);
        let diff = la
            .iter()
            .zip(&lb)
            .map(|(x, y)| ((x - y) / y).abs())
            .fold(0.0, f64::max);
        println!(
            "{round:5}  {ta:5.2}  {:7.0}  {solves:6}  {tb:7.2}  {:9.0}  {diff:.1e}   (n = {n})",
            a_kib / 1024.0,
            b_kib / 1024.0
        );
    }
}
