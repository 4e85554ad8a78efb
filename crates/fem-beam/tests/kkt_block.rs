//! The block-tridiagonal factorization of the Newton–KKT matrix against faer's sparse LU: the
//! same steps to round-off, on the paper's (95) and on the released arc up to `N = 1e5`.

use fem_beam::{
    Beam, BeamParameters, BeamState, End, KktFactorization, NewtonKktSettings, NewtonKktStepper,
    UzawaSettings, solve_static,
};
use fem_time::StepSettings;

fn settings(f: KktFactorization) -> NewtonKktSettings {
    NewtonKktSettings {
        factorization: f,
        ..NewtonKktSettings::default()
    }
}

/// Runs `steps` steps with both factorizations; returns the largest position difference
/// relative to the largest coordinate and the largest element-mean tension difference
/// relative to the largest tension.
fn compare(
    model: Beam,
    x0: &BeamState,
    multipliers: Option<&[[f64; 3]]>,
    steps: usize,
) -> (f64, f64) {
    let time = StepSettings::new(0.01);
    let make = |f| {
        NewtonKktStepper::new(
            model.clone(),
            x0,
            None,
            multipliers,
            0.25,
            time.clone(),
            settings(f),
        )
        .unwrap()
    };
    let mut bt = make(KktFactorization::BlockTridiagonal);
    let mut lu = make(KktFactorization::SparseLu);
    assert!(bt.solver().has_block_factorization());
    let (mut dx, mut dt) = (0.0f64, 0.0f64);
    for _ in 0..steps {
        let rb = bt.step().unwrap();
        let rl = lu.step().unwrap();
        assert!(rb.max_stretch_error < 1e-10, "{rb:?}");
        assert!(rl.max_stretch_error < 1e-10, "{rl:?}");
        let xmax = lu
            .state()
            .positions
            .iter()
            .flatten()
            .fold(1.0f64, |m, v| m.max(v.abs()));
        for (a, b) in bt.state().positions.iter().zip(&lu.state().positions) {
            for c in 0..3 {
                dx = dx.max((a[c] - b[c]).abs() / xmax);
            }
        }
        let (ta, tb) = (bt.tensions(), lu.tensions());
        let tmax = tb.iter().fold(1.0f64, |m, t| m.max(t.abs()));
        for e in 0..ta.len() / 2 {
            let (ma, mb) = (
                0.5 * (ta[2 * e] + ta[2 * e + 1]),
                0.5 * (tb[2 * e] + tb[2 * e + 1]),
            );
            dt = dt.max((ma - mb).abs() / tmax);
        }
    }
    assert_eq!(bt.solver().sparse_factorization_count(), 0);
    assert_eq!(
        lu.solver().sparse_factorization_count(),
        lu.factorization_count()
    );
    (dx, dt)
}

fn released_arc(n: usize) -> (Beam, BeamState) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let model = Beam::new(p).unwrap();
    let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let released = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
    (released, x0)
}

#[test]
fn block_tridiagonal_matches_sparse_lu_on_paper_95() {
    let mut p = BeamParameters::paper_95();
    p.n_elements = 20;
    let model = Beam::new(p).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let sol = solve_static(&model, &guess, &UzawaSettings::anderson(1e4)).unwrap();
    let released = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
    let (dx, dt) = compare(released, &sol.state, Some(&sol.multipliers), 30);
    eprintln!("N = 20, (95): positions {dx:.2e}, mean tensions {dt:.2e} (relative)");
    assert!(dx < 1e-12, "{dx}");
    assert!(dt < 1e-8, "{dt}");
}

#[test]
fn block_tridiagonal_matches_sparse_lu_on_the_released_arc() {
    for n in [20, 200, 2000] {
        let (model, x0) = released_arc(n);
        let (dx, dt) = compare(model, &x0, None, 5);
        eprintln!("N = {n}: positions {dx:.2e}, mean tensions {dt:.2e} (relative)");
        assert!(dx < 1e-11, "{dx}");
        assert!(dt < 1e-6, "{dt}");
    }
}

/// `cargo test -p fem-beam --release --test kkt_block -- --ignored`.
#[test]
#[ignore = "N = 1e5: slow in debug builds"]
fn block_tridiagonal_matches_sparse_lu_at_1e5() {
    let (model, x0) = released_arc(100_000);
    let (dx, dt) = compare(model, &x0, None, 3);
    eprintln!("N = 1e5: positions {dx:.2e}, mean tensions {dt:.2e} (relative)");
    assert!(dx < 1e-10, "{dx}");
    assert!(dt < 1e-3, "{dt}");
}
