//! Time steps of the P1 string and the sparse Cholesky behind the implicit one.
//!
//! The model is a string on `[0, 1]` with both ends fixed, `ρ = τ = 1`, uniform cells,
//! `I` free nodes (`I` unknowns, one transverse component, `h = 1 / (I + 1)`), started from
//! `x⁰ = sin(π s)`, `v⁰ = 0`. Every group runs for `I = 10³, 10⁴, 10⁵, 10⁶`; counters are in
//! node-updates (`I` per step), so divan's `item/s` column is node-updates per second.
//! Run with `cargo bench --bench string_steps`; results and interpretation are in
//! `docs/performance.md`.
//!
//! | group | what is timed |
//! |---|---|
//! | `step::explicit` | 10 steps of [`AlphaScheme`] with `α = 0`, lumped mass, `Δt = h/2` (no solve) |
//! | `step::implicit` | 10 steps with `α = ¼`, lumped mass, `Δt = h/2` (one Cholesky solve per step) |
//! | `baseline::stream_state` | the memory-bandwidth baseline: one fused pass over the 8 vectors of length `I` an explicit step touches, reading all 8 and writing the 5 it writes (1 thread) |
//! | `baseline::stream_state_and_matrix` | the same pass plus one read of the stiffness CSR arrays (row offsets, column indices, values) |
//! | `parts::stiffness_product` | `A x` as the step computes it, `sparse::mul_add` (rayon-parallel over 8192-row chunks) |
//! | `parts::stiffness_product_sequential` | the same product by a plain sequential CSR loop, to isolate the cost of the parallel dispatch |
//! | `cholesky::new` | `SparseCholesky::new` on `M + Δt²/4 K`: symbolic analysis, numeric factor and the residual check |
//! | `cholesky::refactor` | `SparseCholesky::refactor` on the same matrix: numeric factor and the residual check |
//! | `cholesky::solve` | one `solve_in_place` |
//! | `setup::assemble` | `StringMatrices::assemble` (mesh and dof map built outside) |
//! | `setup::explicit_scheme` | `AlphaScheme::new` with `α = 0`: stability bound by power iteration and the start (64) |
//! | `setup::implicit_scheme` | `AlphaScheme::new` with `α = ¼`: forming `M + Δt²/4 K`, factoring it, the start (64) |
//!
//! The schemes are built outside the timed region and stepped on: the step's cost does not
//! depend on the state, and with `Δt = h/2` the explicit scheme is stable (CFL `½`).

use divan::Bencher;
use divan::counter::ItemsCount;
use fem_assembly::{CsrMatrix, DofMap, SparseCholesky, sparse};
use fem_elements::StringMaterial;
use fem_string::StringMatrices;
use fem_time::{AlphaScheme, LinearSystem, Mass, StepSettings, Stepper};

/// Numbers of free nodes `I`.
const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// Steps per timed iteration of the step groups.
const STEPS: usize = 10;

fn main() {
    divan::main();
}

/// The assembled string with `n` free nodes, and its time step `Δt = h/2`.
struct StringModel {
    matrices: StringMatrices,
    dt: f64,
    x0: Vec<f64>,
    v0: Vec<f64>,
}

/// Mesh of `[0, 1]` with `n + 1` cells and a dof map with both ends fixed.
fn mesh(n: usize) -> (Vec<[f64; 3]>, Vec<[usize; 2]>, DofMap) {
    let h = 1.0 / (n + 1) as f64;
    let points = (0..n + 2).map(|i| [i as f64 * h, 0.0, 0.0]).collect();
    let cells = (0..n + 1).map(|i| [i, i + 1]).collect();
    (points, cells, DofMap::with_fixed(n + 2, 1, [0, n + 1]))
}

const MATERIAL: StringMaterial = StringMaterial {
    density: 1.0,
    tension: 1.0,
};

impl StringModel {
    fn new(n: usize) -> Self {
        let (points, cells, dofmap) = mesh(n);
        let matrices = StringMatrices::assemble(&points, &cells, &MATERIAL, &dofmap);
        let h = 1.0 / (n + 1) as f64;
        let x0 = (1..=n)
            .map(|i| (std::f64::consts::PI * i as f64 * h).sin())
            .collect();
        Self {
            matrices,
            dt: 0.5 * h,
            x0,
            v0: vec![0.0; n],
        }
    }

    /// The system with the lumped mass, no damping, no force.
    fn system(&self) -> LinearSystem {
        LinearSystem {
            mass: Mass::Lumped(self.matrices.lumped_mass.clone()),
            stiffness: self.matrices.stiffness.clone(),
            damping: None,
            force: None,
            stiffness_kind: fem_time::TangentKind::Symmetric,
        }
    }

    fn scheme(&self, alpha: f64) -> AlphaScheme<LinearSystem> {
        AlphaScheme::new(
            self.system(),
            alpha,
            StepSettings::new(self.dt),
            &self.x0,
            &self.v0,
        )
        .expect("the string scheme starts")
    }

    /// `M + Δt²/4 K`, the matrix the `α = ¼` scheme factors.
    fn implicit_matrix(&self) -> CsrMatrix<f64> {
        let m = &self.matrices;
        sparse::linear_combination(
            &[(0.25 * self.dt * self.dt, &m.stiffness)],
            Some((1.0, &m.lumped_mass)),
        )
    }
}

mod step {
    use super::*;

    fn bench_steps(bencher: Bencher, n: usize, alpha: f64) {
        let mut scheme = StringModel::new(n).scheme(alpha);
        assert_eq!(scheme.is_explicit(), alpha == 0.0);
        bencher.counter(ItemsCount::new(n * STEPS)).bench_local(|| {
            for _ in 0..STEPS {
                scheme.step().expect("stable step");
            }
        });
    }

    /// `α = 0`, lumped mass: explicit, no linear solve.
    #[divan::bench(args = SIZES, max_time = 10)]
    fn explicit(bencher: Bencher, n: usize) {
        bench_steps(bencher, n, 0.0);
    }

    /// `α = ¼`, lumped mass: one Cholesky solve per step (factored once, outside the timing).
    #[divan::bench(args = SIZES, max_time = 10)]
    fn implicit(bencher: Bencher, n: usize) {
        bench_steps(bencher, n, 0.25);
    }
}

mod baseline {
    use super::*;

    /// The 8 vectors of length `I` the explicit step reads (`x`, `d`, `A x^n`, `A x^{n−1}`,
    /// right-hand side, force, inverse mass, lumped mass); the first 5 are also written.
    struct State {
        arrays: [Vec<f64>; 8],
    }

    impl State {
        fn new(n: usize) -> Self {
            Self {
                arrays: std::array::from_fn(|k| {
                    (0..n).map(|i| 1.0 + ((i + k) % 7) as f64 * 0.125).collect()
                }),
            }
        }

        /// One pass: every array read once, the first 5 written once
        /// (`y ← ½ y + 10⁻³ Σ` over the 8 values of the row; the values stay bounded).
        fn stream(&mut self) {
            let [w0, w1, w2, w3, w4, r0, r1, r2] = &mut self.arrays;
            let n = w0.len();
            let (w0, w1, w2, w3, w4) = (
                &mut w0[..n],
                &mut w1[..n],
                &mut w2[..n],
                &mut w3[..n],
                &mut w4[..n],
            );
            let (r0, r1, r2) = (&r0[..n], &r1[..n], &r2[..n]);
            for i in 0..n {
                let s = 1e-3 * (w0[i] + w1[i] + w2[i] + w3[i] + w4[i] + r0[i] + r1[i] + r2[i]);
                w0[i] = 0.5 * w0[i] + s;
                w1[i] = 0.5 * w1[i] + s;
                w2[i] = 0.5 * w2[i] + s;
                w3[i] = 0.5 * w3[i] + s;
                w4[i] = 0.5 * w4[i] + s;
            }
        }
    }

    /// Reads the CSR arrays of `a` once, sequentially.
    fn stream_csr(a: &CsrMatrix<f64>) -> f64 {
        let (offsets, cols, vals) = a.csr_data();
        let mut sum = offsets.iter().fold(0usize, |s, &o| s ^ o) as f64;
        for (&c, &v) in cols.iter().zip(vals) {
            sum += v * c as f64;
        }
        sum
    }

    /// One pass over the state vectors of an explicit step (1 thread).
    #[divan::bench(args = SIZES, max_time = 10)]
    fn stream_state(bencher: Bencher, n: usize) {
        let mut state = State::new(n);
        bencher
            .counter(ItemsCount::new(n))
            .bench_local(|| state.stream());
    }

    /// One pass over the state vectors and one read of the stiffness matrix (1 thread).
    #[divan::bench(args = SIZES, max_time = 10)]
    fn stream_state_and_matrix(bencher: Bencher, n: usize) {
        let mut state = State::new(n);
        let stiffness = StringModel::new(n).matrices.stiffness;
        bencher.counter(ItemsCount::new(n)).bench_local(|| {
            state.stream();
            divan::black_box(stream_csr(&stiffness))
        });
    }
}

mod parts {
    use super::*;

    /// `y = A x` by one sequential pass over the CSR rows.
    fn mul_sequential(a: &CsrMatrix<f64>, x: &[f64], y: &mut [f64]) {
        let (offsets, cols, vals) = a.csr_data();
        for (row, yi) in y.iter_mut().enumerate() {
            let range = offsets[row]..offsets[row + 1];
            *yi = vals[range.clone()]
                .iter()
                .zip(&cols[range])
                .map(|(v, &j)| v * x[j])
                .sum();
        }
    }

    /// `A x` with `sparse::mul_add`, the call the step makes (alpha.rs, `step`).
    #[divan::bench(args = SIZES, max_time = 10)]
    fn stiffness_product(bencher: Bencher, n: usize) {
        let model = StringModel::new(n);
        let a = &model.matrices.stiffness;
        let mut y = vec![0.0; n];
        bencher
            .counter(ItemsCount::new(n))
            .bench_local(|| sparse::mul_add(0.0, &mut y, 1.0, a, &model.x0));
    }

    /// `A x` by a sequential loop (1 thread, no task dispatch).
    #[divan::bench(args = SIZES, max_time = 10)]
    fn stiffness_product_sequential(bencher: Bencher, n: usize) {
        let model = StringModel::new(n);
        let a = &model.matrices.stiffness;
        let mut y = vec![0.0; n];
        bencher
            .counter(ItemsCount::new(n))
            .bench_local(|| mul_sequential(a, &model.x0, &mut y));
    }
}

mod cholesky {
    use super::*;

    /// Symbolic analysis, numeric factorization and residual check.
    #[divan::bench(args = SIZES, max_time = 10)]
    fn new(bencher: Bencher, n: usize) {
        let a = StringModel::new(n).implicit_matrix();
        bencher
            .counter(ItemsCount::new(n))
            .bench_local(|| SparseCholesky::new(&a).expect("SPD"));
    }

    /// Numeric factorization on the kept symbolic analysis, and residual check.
    #[divan::bench(args = SIZES, max_time = 10)]
    fn refactor(bencher: Bencher, n: usize) {
        let a = StringModel::new(n).implicit_matrix();
        let mut chol = SparseCholesky::new(&a).expect("SPD");
        bencher
            .counter(ItemsCount::new(n))
            .bench_local(|| chol.refactor(&a).expect("SPD"));
    }

    /// One forward and backward substitution (the right-hand side is copied outside the timing).
    #[divan::bench(args = SIZES, max_time = 10)]
    fn solve(bencher: Bencher, n: usize) {
        let model = StringModel::new(n);
        let chol = SparseCholesky::new(&model.implicit_matrix()).expect("SPD");
        let b = sparse::mul(&model.matrices.stiffness, &model.x0);
        bencher
            .counter(ItemsCount::new(n))
            .with_inputs(|| b.clone())
            .bench_local_refs(|rhs| chol.solve_in_place(rhs));
    }
}

mod setup {
    use super::*;

    /// Element matrices, pattern and parallel assembly of mass, lumped mass and stiffness.
    #[divan::bench(args = SIZES, max_time = 10)]
    fn assemble(bencher: Bencher, n: usize) {
        let (points, cells, dofmap) = mesh(n);
        bencher
            .counter(ItemsCount::new(n))
            .bench_local(|| StringMatrices::assemble(&points, &cells, &MATERIAL, &dofmap));
    }

    fn bench_new(bencher: Bencher, n: usize, alpha: f64) {
        let model = StringModel::new(n);
        bencher
            .counter(ItemsCount::new(n))
            .with_inputs(|| model.system())
            .bench_local_values(|system| {
                AlphaScheme::new(
                    system,
                    alpha,
                    StepSettings::new(model.dt),
                    &model.x0,
                    &model.v0,
                )
                .expect("the string scheme starts")
            });
    }

    /// `α = 0`: power iteration for the stability bound (23), inverse mass, start (64).
    #[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
    fn explicit_scheme(bencher: Bencher, n: usize) {
        bench_new(bencher, n, 0.0);
    }

    /// `α = ¼`: `M + Δt²/4 K`, its Cholesky factor (with check), start (64).
    #[divan::bench(args = SIZES, sample_count = 10, max_time = 10)]
    fn implicit_scheme(bencher: Bencher, n: usize) {
        bench_new(bencher, n, 0.25);
    }
}
