//! The linear algebra of one DEF_LIM step of a solid against CHOLMOD: numeric refactorization
//! of `A = M + (h²/4) K(q)` on the kept symbolic analysis, and one solve.
//!
//! The system is that of `../shared/peers/cholmod_beam.py --hex-ns 20 30` (its `hex8-def` and
//! `hex8-met` rows): the unit cube in n³ hex8 cells, 2×2×2 Gauss, E = 1, ν = 0.3, ρ = 1,
//! consistent mass, the nodes of x = 0 clamped, `A = K + M/Δt²` with `Δt = 1e-2` — here with
//! the Neo-Hookean tangent at a deformed state `u = 0.05 (X z, Y², −X²)` (material + geometric
//! part), scaled as DEF_LIM's `M + (h²/4) K` with `h = 2 Δt` (the same matrix times `h²/4`,
//! so the same pattern, conditioning and pivots up to scale). `3 n (n+1)²` unknowns: 26 460
//! for n = 20, 86 490 for n = 30.
//!
//! Before divan runs, a table compares two fill-reducing orderings on one thread
//! (`faer::Par::Seq`), medians over repeated runs, wall and thread CPU time: faer's default
//! AMD (what [`SparseCholesky`] uses; also timed through the facade), and a nested dissection
//! computed from the node coordinates and the cells' node graph (recursive median cuts, the
//! lower side's nodes next to the upper side as separator; no structured grid assumed) —
//! the kind of ordering METIS gives CHOLMOD, which on these matrices picks METIS over AMD
//! (`SOLID_IMPLICIT_SKIP_TABLE=1` skips the table). The divan benches time
//! [`SparseCholesky::refactor`] + [`SparseCholesky::solve_in_place`] (what a DEF_LIM stepper
//! calls today) and the nested-dissection variant with kept buffers.
//!
//! `RAYON_NUM_THREADS=1 cargo bench -p fem-assembly --bench solid_implicit`; then, in the same
//! session, `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 ../shared/peers/cholmod_beam.py
//! --beam-ns --hex-ns 20 30 --splu-hex-max 0` (`factor` + `solve` columns; with
//! `time.perf_counter = time.thread_time` for CPU times, see `docs/performance.md`).

use std::time::Instant;

use divan::Bencher;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::perm::PermRef;
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, LltRef, SymbolicCholesky, SymbolicCholeskyRaw, SymmetricOrdering,
    factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use fem_assembly::ordering::nested_dissection;
use fem_assembly::{CsrMatrix, DofMap, SolidOperator, SparseCholesky};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

const SIZES: [usize; 2] = [20, 30];
/// DEF_LIM step `h = 2 Δt` with the peer's `Δt = 1e-2`.
const STEP: f64 = 2e-2;

fn main() {
    if std::env::var_os("SOLID_IMPLICIT_SKIP_TABLE").is_none() {
        print_table();
    }
    divan::main();
}

/// DEF_LIM's matrix on the clamped n³ cube, and the free-dof permutation of a geometric nested
/// dissection of its nodes.
struct System {
    a: CsrMatrix<f64>,
    nested_dissection: Vec<usize>,
}

impl System {
    fn new(n: usize) -> Self {
        let mesh = box_mesh([1.0; 3], [n; 3], BoxCells::Hex8).expect("box");
        let fixed: Vec<usize> = mesh
            .group("xmin")
            .expect("xmin")
            .nodes
            .iter()
            .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
            .collect();
        let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
        let material = Material::new(MaterialModel::NeoHookean, 1.0, 0.3).expect("valid");
        let body = SolidOperator::new(
            SolidKind::Hex8,
            &mesh.points,
            &mesh.blocks[0].connectivity,
            material,
            1.0,
            SolidKind::Hex8.default_lumping(),
            &dofmap,
        )
        .expect("valid mesh");
        let u: Vec<f64> = mesh
            .points
            .iter()
            .flat_map(|p| [0.05 * p[0] * p[2], 0.05 * p[1] * p[1], -0.05 * p[0] * p[0]])
            .collect();
        let k = body.tangent(&u).expect("not inverted");
        let mut a = body.consistent_mass().expect("valid mesh");
        assert_eq!(a.col_indices(), k.col_indices(), "one pattern");
        let c = 0.25 * STEP * STEP;
        for (av, kv) in a.values_mut().iter_mut().zip(k.values()) {
            *av += c * kv;
        }
        let nested_dissection = nested_dissection(&dofmap.free_dof_points(&mesh.points), &a);
        Self {
            a,
            nested_dissection,
        }
    }

    fn pattern(&self) -> SymbolicSparseColMatRef<'_, usize> {
        let n = self.a.nrows();
        // Symmetric: the CSR arrays are the CSC arrays of the same matrix.
        SymbolicSparseColMatRef::new_checked(n, n, self.a.row_offsets(), None, self.a.col_indices())
    }

    fn matrix(&self) -> SparseColMatRef<'_, usize, f64> {
        SparseColMatRef::new(self.pattern(), self.a.values())
    }

    fn rhs(&self) -> Vec<f64> {
        vec![1.0; self.a.nrows()]
    }
}

/// A numeric `L Lᵀ` on a kept symbolic analysis, with its buffers (no allocation per step).
struct Factor {
    symbolic: SymbolicCholesky<usize>,
    values: Vec<f64>,
    factor_buffer: MemBuffer,
    solve_buffer: MemBuffer,
    par: Par,
}

impl Factor {
    fn new(
        system: &System,
        ordering: SymmetricOrdering<'_, usize>,
        kind: SupernodalThreshold,
        par: Par,
    ) -> Self {
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: kind,
            ..Default::default()
        };
        let symbolic = factorize_symbolic_cholesky(system.pattern(), Side::Lower, ordering, params)
            .expect("symbolic");
        let values = vec![0.0; symbolic.len_val()];
        let factor_buffer =
            MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
        let solve_buffer = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, par));
        Self {
            symbolic,
            values,
            factor_buffer,
            solve_buffer,
            par,
        }
    }

    fn refactor(&mut self, system: &System) {
        self.symbolic
            .factorize_numeric_llt(
                &mut self.values,
                system.matrix(),
                Side::Lower,
                LltRegularization::default(),
                self.par,
                MemStack::new(&mut self.factor_buffer),
                Default::default(),
            )
            .expect("positive definite");
    }

    fn solve(&mut self, x: &mut [f64]) {
        let n = x.len();
        LltRef::new(&self.symbolic, &self.values).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(x, n, 1),
            self.par,
            MemStack::new(&mut self.solve_buffer),
        );
    }

    fn is_supernodal(&self) -> bool {
        matches!(self.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_))
    }
}

/// `‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)`, as the peer computes it.
fn backward_error(a: &CsrMatrix<f64>, x: &[f64], b: &[f64]) -> f64 {
    let r = fem_assembly::sparse::mul(a, x);
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    let a_norm = a
        .row_iter()
        .map(|row| row.values().iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let diff: Vec<f64> = r.iter().zip(b).map(|(ri, bi)| ri - bi).collect();
    inf(&diff) / (a_norm * inf(x) + inf(b))
}

/// CPU time of the calling thread (s), from `/proc/thread-self/schedstat` (Linux), 0 elsewhere.
fn thread_cpu_time() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns * 1e-9)
}

/// Median wall and CPU seconds of `reps` runs of `f` (after one warm-up run).
fn median(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let (mut wall, mut cpu): (Vec<f64>, Vec<f64>) = (0..reps)
        .map(|_| {
            let (t0, c0) = (Instant::now(), thread_cpu_time());
            f();
            (t0.elapsed().as_secs_f64(), thread_cpu_time() - c0)
        })
        .unzip();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    (wall[reps / 2], cpu[reps / 2])
}

fn print_table() {
    let par = Par::Seq;
    println!("DEF_LIM step linear algebra, A = M + h²/4 K (Neo-Hookean, deformed), one thread");
    println!("(median over repeats; cpu = CPU time of the thread, immune to time-sharing)");
    println!(
        "{:>3} {:>6} {:>8} {:<32} {:>6} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "n",
        "dofs",
        "nnz(A)",
        "ordering / kernel",
        "kind",
        "L values",
        "analyse",
        "factor",
        "fac cpu",
        "solve",
        "sol cpu",
        "bwd err"
    );
    for n in SIZES {
        let system = System::new(n);
        let b = system.rhs();
        let reps = if n <= 20 { 7 } else { 5 };
        let inverse = inverse_permutation(&system.nested_dissection);
        let nd = PermRef::new_checked(&system.nested_dissection, &inverse, system.a.nrows());
        let variants = [
            ("AMD (faer's default)", SymmetricOrdering::Amd),
            (
                "nested dissection (coordinates)",
                SymmetricOrdering::Custom(nd),
            ),
        ];
        for (name, ordering) in variants {
            let t0 = Instant::now();
            let mut f = Factor::new(&system, ordering, SupernodalThreshold::AUTO, par);
            let analyse = t0.elapsed().as_secs_f64();
            let factor = median(reps, || f.refactor(&system));
            let mut x = b.clone();
            let solve = median(reps, || {
                x.copy_from_slice(&b);
                f.solve(&mut x);
            });
            println!(
                "{n:>3} {:>6} {:>8} {name:<32} {:>6} {:>10} {analyse:>8.3} {:>8.3} {:>8.3} {:>8.4} {:>8.4} {:>8.1e}",
                system.a.nrows(),
                system.a.nnz(),
                if f.is_supernodal() { "super" } else { "simpl" },
                f.values.len(),
                factor.0,
                factor.1,
                solve.0,
                solve.1,
                backward_error(&system.a, &x, &b),
            );
        }
        // The facade: with AMD, and with the nested dissection DEF_LIM's step matrix now
        // asks for (`SparseCholesky::with_order`, what `fem_solid`'s DEF_LIM calls).
        for (name, chol) in [
            ("SparseCholesky (AMD)", SparseCholesky::new(&system.a)),
            (
                "SparseCholesky::with_order (ND)",
                SparseCholesky::with_order(&system.a, &system.nested_dissection),
            ),
        ] {
            let mut chol = chol.expect("factored");
            let factor = median(reps, || chol.refactor(&system.a).expect("refactored"));
            let mut x = b.clone();
            let solve = median(reps, || {
                x.copy_from_slice(&b);
                chol.solve_in_place(&mut x);
            });
            println!(
                "{n:>3} {:>6} {:>8} {name:<32} {:>6} {:>10} {:>8} {:>8.3} {:>8.3} {:>8.4} {:>8.4} {:>8.1e}",
                system.a.nrows(),
                system.a.nnz(),
                "-",
                "-",
                "-",
                factor.0,
                factor.1,
                solve.0,
                solve.1,
                backward_error(&system.a, &x, &b),
            );
        }
    }
}

fn inverse_permutation(forward: &[usize]) -> Vec<usize> {
    let mut inverse = vec![0; forward.len()];
    for (new, &old) in forward.iter().enumerate() {
        inverse[old] = new;
    }
    inverse
}

/// [`SparseCholesky::refactor`] and one solve: the linear algebra of a DEF_LIM step.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1, max_time = 60)]
fn refactor_and_solve(bencher: Bencher, n: usize) {
    let system = System::new(n);
    let b = system.rhs();
    let mut chol = SparseCholesky::new(&system.a).expect("factored");
    bencher.bench_local(|| {
        chol.refactor(&system.a).expect("refactored");
        let mut x = b.clone();
        chol.solve_in_place(&mut x);
        x
    });
}

/// The same with the nested-dissection ordering and kept buffers.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1, max_time = 60)]
fn refactor_and_solve_nested_dissection(bencher: Bencher, n: usize) {
    let system = System::new(n);
    let b = system.rhs();
    let inverse = inverse_permutation(&system.nested_dissection);
    let perm = PermRef::new_checked(&system.nested_dissection, &inverse, system.a.nrows());
    let mut f = Factor::new(
        &system,
        SymmetricOrdering::Custom(perm),
        SupernodalThreshold::AUTO,
        faer::get_global_parallelism(),
    );
    bencher.bench_local(|| {
        f.refactor(&system);
        let mut x = b.clone();
        f.solve(&mut x);
        x
    });
}
