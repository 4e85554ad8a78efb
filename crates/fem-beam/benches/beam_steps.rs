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

use fem_beam::{
    AugmentedLagrangianStepper, BeamModel, BeamParameters, BeamState, End, TimeSettings,
    UzawaSettings,
};

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

fn stepper(n: usize) -> AugmentedLagrangianStepper {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let model = BeamModel::new(p).expect("valid parameters");
    let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let released = model
        .with_ends(End::pinned([0.0; 3]), End::Free)
        .expect("valid ends");
    AugmentedLagrangianStepper::new(
        released,
        &x0,
        None,
        None,
        TimeSettings::energy_conserving(0.01),
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

fn main() {
    table();
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
