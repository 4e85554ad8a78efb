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
//! `cargo bench -p fem-assembly --bench factor`; then, in the same session,
//! `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 ../shared/peers/cholmod_beam.py
//! --beam-ns 1000 10000 100000 1000000`. Single-threaded (`RAYON_NUM_THREADS=1`, faer's
//! parallelism follows rayon's global pool) to compare with the peer.

use divan::Bencher;
use faer::Side;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use fem_assembly::{CheckPolicy, CsrMatrix, SparseCholesky};
use nalgebra_sparse::CooMatrix;

fn main() {
    divan::main();
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
