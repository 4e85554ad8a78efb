//! Refactoring a sparse Cholesky on a kept pattern, against the numeric factorization alone,
//! on the Hermite-beam matrix of `../shared/peers/cholmod_beam.py` (its `3d` variant: three
//! components interleaved per node, `A = M/Δt² + EI K_b + K_1/ε` with `h = 1e-2`, `EI = 1`,
//! `ε = 1e-2`, `ρA = 1`, `Δt = 1e-3`, no Dirichlet conditions) — so the same run can time
//! CHOLMOD's `cholesky_inplace` on the same matrix.
//!
//! | bench | what is timed |
//! |---|---|
//! | `numeric_only` | faer's `Llt::try_new_with_symbolic` on the kept symbolic analysis |
//! | `refactor` | [`SparseCholesky::refactor`] as the steppers call it (no check: the default) |
//! | `refactor_checked` | the same with [`CheckPolicy::EveryFactorization`] (the old behaviour) |
//! | `solve` | one solve with the factor |
//!
//! Before divan's timings the bench prints a table of **CPU** seconds of the timing thread per
//! operation (median of 7 rounds, the four operations interleaved, from
//! `/proc/thread-self/schedstat`), which a shared, busy machine does not inflate;
//! `cargo bench -p fem-assembly --bench factor -- nothing` prints only the table.
//! `cargo bench -p fem-assembly --bench factor`; then, in the same session,
//! `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 ../shared/peers/cholmod_beam.py
//! --beam-ns 1000 10000 100000 1000000`. Single-threaded (`RAYON_NUM_THREADS=1`, faer's
//! parallelism follows rayon's global pool) to compare with the peer.

use std::time::Instant;

use divan::Bencher;
use faer::Side;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use fem_assembly::{CheckPolicy, CsrMatrix, SparseCholesky};
use nalgebra_sparse::CooMatrix;

fn main() {
    print_table();
    divan::main();
}

/// CPU time of the calling thread (s), from `/proc/thread-self/schedstat` (Linux); `None`
/// elsewhere.
fn thread_cpu_time() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Median CPU seconds (wall seconds where the CPU clock is missing) per call of each of
/// `ops`, over 7 rounds; in each round every operation runs one block of repeated calls
/// (~0.2 s), so all of them see the same load on a shared machine.
fn median_cpu(ops: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let reps: Vec<usize> = ops
        .iter_mut()
        .map(|op| {
            op();
            let t0 = Instant::now();
            op();
            let once = t0.elapsed().as_secs_f64().max(1e-7);
            ((0.2 / once) as usize).clamp(1, 100_000)
        })
        .collect();
    let mut per_call = vec![Vec::new(); ops.len()];
    for _ in 0..7 {
        for ((op, &reps), times) in ops.iter_mut().zip(&reps).zip(&mut per_call) {
            let (wall, cpu) = (Instant::now(), thread_cpu_time());
            for _ in 0..reps {
                op();
            }
            times.push(match (cpu, thread_cpu_time()) {
                (Some(c0), Some(c1)) => (c1 - c0) / reps as f64,
                _ => wall.elapsed().as_secs_f64() / reps as f64,
            });
        }
    }
    per_call
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

fn print_table() {
    println!(
        "CPU seconds per call (median of 7 interleaved rounds), beam matrix '3d' of cholmod_beam.py"
    );
    println!(
        "{:>9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "elements", "dofs", "numeric", "refactor", "checked", "solve", "ref/num", "chk/num"
    );
    for n in SIZES {
        let a = beam_matrix(n);
        let size = a.nrows();
        let pattern = SymbolicSparseColMatRef::new_checked(
            size,
            size,
            a.row_offsets(),
            None,
            a.col_indices(),
        );
        let symbolic = SymbolicLlt::try_new(pattern, Side::Lower).expect("analysed");
        let mut chol = SparseCholesky::new(&a).expect("factored");
        let mut checked = SparseCholesky::new(&a)
            .expect("factored")
            .with_check_policy(CheckPolicy::EveryFactorization);
        let solver = SparseCholesky::new(&a).expect("factored");
        let (b, mut x) = (vec![1.0; size], vec![0.0; size]);
        let times = median_cpu(&mut [
            &mut || {
                let matrix = SparseColMatRef::new(pattern, a.values());
                let factor = Llt::try_new_with_symbolic(symbolic.clone(), matrix, Side::Lower);
                std::hint::black_box(factor.expect("factored"));
            },
            &mut || chol.refactor(&a).expect("refactored"),
            &mut || checked.refactor(&a).expect("refactored"),
            &mut || {
                x.copy_from_slice(&b);
                solver.solve_in_place(std::hint::black_box(&mut x));
            },
        ]);
        let [numeric, refactor, refactor_checked, solve] = times[..] else {
            unreachable!("four operations timed")
        };
        println!(
            "{n:>9} {size:>9} {numeric:>11.3e} {refactor:>11.3e} {refactor_checked:>11.3e} {solve:>11.3e} {:>9.2} {:>9.2}",
            refactor / numeric,
            refactor_checked / numeric
        );
    }
}

const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// The peer's beam matrix, three components per node.
fn beam_matrix(n: usize) -> CsrMatrix<f64> {
    let (h, ei, eps, rho_a, dt): (f64, f64, f64, f64, f64) = (1e-2, 1.0, 1e-2, 1.0, 1e-3);
    let kb = [
        [12.0, 6.0 * h, -12.0, 6.0 * h],
        [6.0 * h, 4.0 * h * h, -6.0 * h, 2.0 * h * h],
        [-12.0, -6.0 * h, 12.0, -6.0 * h],
        [6.0 * h, 2.0 * h * h, -6.0 * h, 4.0 * h * h],
    ];
    let k1 = [
        [36.0, 3.0 * h, -36.0, 3.0 * h],
        [3.0 * h, 4.0 * h * h, -3.0 * h, -h * h],
        [-36.0, -3.0 * h, 36.0, -3.0 * h],
        [3.0 * h, -h * h, -3.0 * h, 4.0 * h * h],
    ];
    let m = [
        [156.0, 22.0 * h, 54.0, -13.0 * h],
        [22.0 * h, 4.0 * h * h, 13.0 * h, -3.0 * h * h],
        [54.0, 13.0 * h, 156.0, -22.0 * h],
        [-13.0 * h, -3.0 * h * h, -22.0 * h, 4.0 * h * h],
    ];
    let mut ke = [[0.0; 4]; 4];
    for a in 0..4 {
        for b in 0..4 {
            ke[a][b] = rho_a * h / 420.0 * m[a][b] / (dt * dt)
                + ei / (h * h * h) * kb[a][b]
                + k1[a][b] / (30.0 * h) / eps;
        }
    }
    let nd = 6;
    let size = (n + 1) * nd;
    let mut coo = CooMatrix::new(size, size);
    for e in 0..n {
        for c in 0..3 {
            let g = |a: usize| (e + a / 2) * nd + 2 * c + a % 2;
            for a in 0..4 {
                for b in 0..4 {
                    coo.push(g(a), g(b), ke[a][b]);
                }
            }
        }
    }
    CsrMatrix::from(&coo)
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 20)]
fn numeric_only(bencher: Bencher, n: usize) {
    let a = beam_matrix(n);
    let size = a.nrows();
    let pattern =
        SymbolicSparseColMatRef::new_checked(size, size, a.row_offsets(), None, a.col_indices());
    let symbolic = SymbolicLlt::try_new(pattern, Side::Lower).expect("analysed");
    bencher.bench_local(|| {
        let matrix = SparseColMatRef::new(pattern, a.values());
        Llt::try_new_with_symbolic(symbolic.clone(), matrix, Side::Lower).expect("factored")
    });
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 20)]
fn refactor(bencher: Bencher, n: usize) {
    let a = beam_matrix(n);
    let mut chol = SparseCholesky::new(&a).expect("factored");
    bencher.bench_local(|| chol.refactor(&a).expect("refactored"));
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 20)]
fn refactor_checked(bencher: Bencher, n: usize) {
    let a = beam_matrix(n);
    let mut chol = SparseCholesky::new(&a)
        .expect("factored")
        .with_check_policy(CheckPolicy::EveryFactorization);
    bencher.bench_local(|| chol.refactor(&a).expect("refactored"));
}

#[divan::bench(args = SIZES, sample_count = 10, max_time = 20)]
fn solve(bencher: Bencher, n: usize) {
    let a = beam_matrix(n);
    let chol = SparseCholesky::new(&a).expect("factored");
    let b = vec![1.0; a.nrows()];
    bencher.bench_local(|| {
        let mut x = b.clone();
        chol.solve_in_place(&mut x);
        x
    });
}
