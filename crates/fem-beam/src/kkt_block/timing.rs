//! Phase timings of the block engine, by hand (ignored tests; docs/performance.md).

use super::*;
use crate::model::{BeamOptions, BeamParameters, BeamState, ConstraintPoints, End};

/// The CPU time of the calling thread (ns; Linux `schedstat`, 0 elsewhere).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The CPU time of each thread of the process (ns by thread id; Linux `schedstat`).
fn task_cpu_ns() -> std::collections::HashMap<String, u64> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|t| {
                let t = t.ok()?;
                let ns = std::fs::read_to_string(t.path().join("schedstat"))
                    .ok()?
                    .split_whitespace()
                    .next()?
                    .parse::<u64>()
                    .ok()?;
                Some((t.file_name().to_string_lossy().into_owned(), ns))
            })
            .collect()
        })
        .unwrap_or_default()
}

/// The process's CPU time since `before` (the threads alive now).
fn process_cpu_since(before: &std::collections::HashMap<String, u64>) -> u64 {
    task_cpu_ns()
        .iter()
        .map(|(t, ns)| ns - before.get(t).copied().unwrap_or(0))
        .sum()
}

/// A rayon pool of `n` threads.
fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

/// Phase timings of one Newton iteration of the energy-conserving form at N = 1e4
/// (minimum over repetitions), for the Gauss points and for nodes and midpoints, for
/// profiling by hand: `cargo test --release -p fem-beam kkt_block::timing -- --ignored
/// --nocapture` (`KKT_TIMING_REPS` sets the repetitions, 15 by default). The phases are
/// those of the serial path; then the whole iteration on the serial path and on the
/// twisted one in a pool of 1 and of 2 threads, and on 2 threads called from outside the
/// pool (as a stepper on the main thread does), with the process's CPU time.
#[test]
#[ignore = "timing by hand"]
fn phases() {
    let n = 10_000;
    let reps: usize = std::env::var("KKT_TIMING_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    {
        // The set-up of `benches/cable_vs_moordyn.rs`: the model and the static start.
        let (mut t_model, mut t_static) = (f64::INFINITY, f64::INFINITY);
        let mut its = 0;
        let cpu0 = thread_cpu_ns();
        for _ in 0..reps.min(10) {
            let t = std::time::Instant::now();
            let mut p = BeamParameters::paper_95();
            p.n_elements = n;
            let options = BeamOptions {
                constraint_points: ConstraintPoints::NodesAndMidpoints,
                seabed: None,
            };
            let m = Beam::with_options(p, options).unwrap();
            t_model = t_model.min(t.elapsed().as_secs_f64());
            let t = std::time::Instant::now();
            let guess =
                BeamState::try_arc(&m, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]).unwrap();
            let sol = crate::solve_static_newton(
                &m,
                &guess,
                0.0,
                &crate::STATIC_NEWTON,
                &crate::NewtonKktSettings::default(),
            )
            .unwrap();
            t_static = t_static.min(t.elapsed().as_secs_f64());
            its = sol.factorization_count;
        }
        let cpu = (thread_cpu_ns() - cpu0) as f64 * 1e-9 / reps.min(10) as f64;
        eprintln!(
            "set-up at N = {n}: min wall: model {t_model:.4} s, static start {t_static:.4} s \
             ({its} factorizations); mean CPU of both {cpu:.4} s"
        );
    }
    if std::env::var("KKT_TIMING_SETUP_ONLY").is_ok() {
        return;
    }
    for points in [ConstraintPoints::Gauss, ConstraintPoints::NodesAndMidpoints] {
        let mut p = BeamParameters::paper_95();
        p.n_elements = n;
        let options = BeamOptions {
            constraint_points: points,
            seabed: None,
        };
        let model = Beam::with_options(p, options).unwrap();
        let model = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
        let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
        let x = x0.to_columns();
        let tension = vec![100.0; model.n_points()];
        let mut kkt = BlockKkt::new(&model);
        kkt.twisted_min_blocks = usize::MAX;
        let form = midpoint_residual(&x);
        let jac = MIDPOINT_JACOBIAN;
        // (minimum wall time, mean CPU time of the thread) per element.
        let time = |f: &mut dyn FnMut()| {
            let mut best = f64::INFINITY;
            let cpu0 = thread_cpu_ns();
            for _ in 0..reps {
                let t = std::time::Instant::now();
                f();
                best = best.min(t.elapsed().as_secs_f64());
            }
            let cpu = (thread_cpu_ns() - cpu0) as f64 / reps as f64;
            (best * 1e9 / n as f64, cpu / n as f64)
        };
        let t_res = time(&mut || kkt.residual(&model, &form, &x, &tension));
        let t_fac = time(&mut || {
            assert!(pulp::Arch::new().dispatch(Factorize {
                kkt: &mut kkt,
                model: &model,
                jac: &jac,
                tension: &tension,
            }));
        });
        let t_sol = time(&mut || pulp::Arch::new().dispatch(Solve(&mut kkt)));
        // A whole iteration as `newton` does it: residual, norms, assembly, factorization,
        // solve, update, nodal normalization, constraint at the trial point. (min wall,
        // mean CPU of the process) per element.
        let (mut xi, mut ti) = (x.clone(), tension.clone());
        let mut trial = vec![[0.0; 3]; model.n_points()];
        let mut whole = |kkt: &mut BlockKkt| {
            let mut best = f64::INFINITY;
            let cpu0 = task_cpu_ns();
            for _ in 0..reps {
                let t = std::time::Instant::now();
                xi.copy_from_slice(&x);
                ti.copy_from_slice(&tension);
                kkt.residual(&model, &form, &xi, &ti);
                std::hint::black_box(kkt.residual_norms(&model));
                assert!(kkt.factor_solve(&model, &jac, &ti).unwrap());
                std::hint::black_box(kkt.apply_update(&model, &mut xi, &mut ti));
                model.normalize_nodal_tangents(&mut xi);
                model.tangents_at_points(&xi, &mut trial);
                best = best.min(t.elapsed().as_secs_f64());
            }
            let cpu = process_cpu_since(&cpu0) as f64 / reps as f64;
            (best * 1e9 / n as f64, cpu / n as f64)
        };
        let t_it = whole(&mut kkt);
        kkt.twisted_min_blocks = 0;
        let (one, two) = (pool(1), pool(2));
        let t_one = one.install(|| whole(&mut kkt));
        let t_two = two.install(|| whole(&mut kkt));
        // On the test thread: each `rayon::join` is injected into the global pool (2
        // threads on a 2-core machine).
        let t_out = whole(&mut kkt);
        let t_tw = |p: &rayon::ThreadPool, kkt: &mut BlockKkt| {
            p.install(|| {
                time(&mut || {
                    assert!(kkt.twisted_factor_solve(&model, &jac, &tension));
                })
            })
        };
        let (t_tw1, t_tw2) = (t_tw(&one, &mut kkt), t_tw(&two, &mut kkt));
        kkt.twisted_min_blocks = usize::MAX;
        eprintln!(
            "{points:?}: ns per element (min wall / mean CPU): residual {:.0} / {:.0}, \
             assembly + factorization + forward substitution {:.0} / {:.0}, back \
             substitution {:.0} / {:.0}; whole iteration {:.0} / {:.0}",
            t_res.0, t_res.1, t_fac.0, t_fac.1, t_sol.0, t_sol.1, t_it.0, t_it.1
        );
        eprintln!(
            "{points:?}: twisted assembly + factorization + solve (min wall / mean CPU of \
             the calling thread): 1 thread {:.0} / {:.0}, 2 threads {:.0} / {:.0}",
            t_tw1.0, t_tw1.1, t_tw2.0, t_tw2.1
        );
        eprintln!(
            "{points:?}: whole iteration, ns per element (min wall / mean process CPU): \
             serial {:.0} / {:.0}, twisted on 1 thread {:.0} / {:.0}, on 2 threads {:.0} \
             / {:.0}, on 2 threads called from outside the pool {:.0} / {:.0}",
            t_it.0, t_it.1, t_one.0, t_one.1, t_two.0, t_two.1, t_out.0, t_out.1
        );
    }
}

/// A whole Newton iteration (as in [`phases`]) on the serial path against the twisted one
/// on 2 threads, called from the test thread (the global pool) as the steppers do, by the
/// number of elements (min wall per element over repetitions): the measurement behind
/// [`TWISTED_MIN_BLOCKS`].
/// `cargo test --release -p fem-beam kkt_block::timing::threshold -- --ignored --nocapture`
#[test]
#[ignore = "timing by hand"]
fn threshold() {
    let reps: usize = std::env::var("KKT_TIMING_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    for n in [50, 100, 200, 300, 500, 700, 1000, 2000, 5000] {
        let mut p = BeamParameters::paper_95();
        p.n_elements = n;
        let model = Beam::new(p).unwrap();
        let model = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
        let x = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]).to_columns();
        let tension = vec![100.0; model.n_points()];
        let form = midpoint_residual(&x);
        let jac = MIDPOINT_JACOBIAN;
        let mut kkt = BlockKkt::new(&model);
        let (mut xi, mut ti) = (x.clone(), tension.clone());
        let mut trial = vec![[0.0; 3]; model.n_points()];
        let mut time = |from: usize| {
            kkt.twisted_min_blocks = from;
            let mut best = f64::INFINITY;
            for _ in 0..reps {
                let t = std::time::Instant::now();
                xi.copy_from_slice(&x);
                ti.copy_from_slice(&tension);
                kkt.residual(&model, &form, &xi, &ti);
                std::hint::black_box(kkt.residual_norms(&model));
                assert!(kkt.factor_solve(&model, &jac, &ti).unwrap());
                std::hint::black_box(kkt.apply_update(&model, &mut xi, &mut ti));
                model.normalize_nodal_tangents(&mut xi);
                model.tangents_at_points(&xi, &mut trial);
                best = best.min(t.elapsed().as_secs_f64());
            }
            best * 1e9 / n as f64
        };
        let (a, b) = (time(usize::MAX), time(0));
        let (c, d) = (time(usize::MAX), time(0));
        eprintln!(
            "N = {n}: whole iteration, ns per element (min wall): serial {:.0}, twisted {:.0} \
             (ratio {:.2})",
            a.min(c),
            b.min(d),
            b.min(d) / a.min(c)
        );
    }
}
