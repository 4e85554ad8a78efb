//! Per-step cost of the dynamic augmented-Lagrangian scheme (97) against the cost of one
//! three-right-hand-side solve with the factored matrix, for N = 20 … 1e5 elements.
//!
//! The beam is the paper's (95) (L = 32.6 m, EI = 700, ρ = 7.67, Δt = 0.01) with N elements,
//! started from a circular arc between (0,0) and (20,0) with end B released; Uzawa with
//! Anderson acceleration (memory 8) and r = 10 ρ h²/Δt² ·… (see `augmentation`).
//!
//! Before divan runs, a table is printed: per-step time, mean Uzawa iterations, one solve,
//! and the ratio (step) / (iterations × solve), the loop's overhead over its linear solves.
//! Steps for N above `BEAM_BENCH_MAX_N` (default 10 000; a step at N = 1e5 takes tens of
//! seconds) are left out of the table and of the `al_step` bench.
//!
//! A second table and the `newton_kkt_step` group time the same steps solved by Newton on the
//! KKT system ([`fem_beam::NewtonKktStepper`]), for every size including 1e5
//! (`BEAM_BENCH_SKIP_UZAWA=1` skips the Uzawa table).

use fem_beam::{
    AugmentedLagrangianStepper, Beam, BeamParameters, BeamState, End, NewtonKktSettings,
    NewtonKktStepper, UzawaSettings,
};
use fem_time::StepSettings;

const SIZES: [usize; 5] = [20, 100, 1_000, 10_000, 100_000];

/// The augmentation used at each size (found by hand, see docs/theory/inextensible_beam.md).
fn augmentation(n: usize) -> f64 {
    match n {
        0..=20 => 1e5,
        21..=100 => 1e5,
        101..=1_000 => 1e6,
        1_001..=10_000 => 1e7,
        _ => 1e8,
    }
}

/// The released (95) beam with `n` elements and its circular-arc start.
fn start(n: usize) -> (Beam, BeamState) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let model = Beam::new(p).expect("valid parameters");
    let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let released = model
        .with_ends(End::pinned([0.0; 3]), End::Free)
        .expect("valid ends");
    (released, x0)
}

fn stepper(n: usize) -> AugmentedLagrangianStepper {
    let (released, x0) = start(n);
    AugmentedLagrangianStepper::new(
        released,
        &x0,
        None,
        None,
        0.25,
        StepSettings::new(0.01),
        UzawaSettings::anderson(augmentation(n)),
    )
    .expect("stepper")
}

fn max_n() -> usize {
    std::env::var("BEAM_BENCH_MAX_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn table() {
    eprintln!("N        step (s)    Uzawa its   one 3-rhs solve (s)   step/(its x solve)");
    for n in SIZES {
        let mut st = stepper(n);
        let nf = st.solver().n_free();
        let mut rhs = vec![1.0; 3 * nf];
        let reps = (200_000 / n).clamp(3, 1000);
        let t = std::time::Instant::now();
        for _ in 0..reps {
            st.solver().solve_free(&mut rhs);
        }
        let solve = t.elapsed().as_secs_f64() / reps as f64;
        if n > max_n() {
            eprintln!("{n:<8} (skipped)   -           {solve:<21.3e} -");
            continue;
        }
        let steps = if n <= 1_000 { 5 } else { 1 };
        let t = std::time::Instant::now();
        let mut its = 0;
        for _ in 0..steps {
            its += st.step().expect("step").iterations;
        }
        let step = t.elapsed().as_secs_f64() / steps as f64;
        let mean = its as f64 / steps as f64;
        eprintln!(
            "{n:<8} {step:<11.3e} {mean:<11.1} {solve:<21.3e} {:.1}",
            step / (mean * solve)
        );
    }
}

fn newton_stepper(n: usize) -> NewtonKktStepper {
    let (released, x0) = start(n);
    NewtonKktStepper::new(
        released,
        &x0,
        None,
        None,
        0.25,
        StepSettings::new(0.01),
        NewtonKktSettings::default(),
    )
    .expect("stepper")
}

/// The same table for the Newton–KKT stepper: per-step time, Newton iterations (= numeric
/// factorizations of the KKT matrix) and the time per iteration. All sizes, `1e5` included.
fn newton_table() {
    eprintln!(
        "Newton-KKT: N   KKT unknowns  nnz        setup (s)   step (s)    its/step  s/iteration"
    );
    for n in SIZES {
        let t = std::time::Instant::now();
        let mut st = newton_stepper(n);
        let setup = t.elapsed().as_secs_f64();
        let steps = if n <= 10_000 { 5 } else { 3 };
        let t = std::time::Instant::now();
        let mut its = 0;
        for _ in 0..steps {
            its += st.step().expect("step").iterations;
        }
        let step = t.elapsed().as_secs_f64() / steps as f64;
        let mean = its as f64 / steps as f64;
        eprintln!(
            "{n:<15} {:<13} {:<10} {setup:<11.3e} {step:<11.3e} {mean:<9.1} {:.3e}",
            st.solver().n_unknowns(),
            st.solver().nnz(),
            step / mean
        );
    }
}

fn main() {
    if std::env::var("BEAM_BENCH_SKIP_UZAWA").is_err() {
        table();
    }
    newton_table();
    divan::main();
}

/// One three-right-hand-side solve with the factored matrix.
#[divan::bench(args = SIZES, sample_count = 10)]
fn three_rhs_solve(bencher: divan::Bencher, n: usize) {
    let st = stepper(n);
    let mut rhs = vec![1.0; 3 * st.solver().n_free()];
    bencher.bench_local(|| st.solver().solve_free(divan::black_box(&mut rhs)));
}

/// One dynamic step (successive steps of one run).
#[divan::bench(args = [20, 100, 1_000], sample_count = 5, sample_size = 1)]
fn al_step(bencher: divan::Bencher, n: usize) {
    if n > max_n() {
        return;
    }
    let mut st = stepper(n);
    bencher.bench_local(|| st.step().expect("step"));
}

/// One dynamic step solved by Newton on the KKT system (successive steps of one run).
#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn newton_kkt_step(bencher: divan::Bencher, n: usize) {
    let mut st = newton_stepper(n);
    bencher.bench_local(|| st.step().expect("step"));
}
