//! The Newton–KKT solver of each dynamic step against the Uzawa loop on the paper's (95).

use fem_beam::{
    AugmentedLagrangianStepper, Beam, BeamParameters, BeamState, End, NewtonKktSettings,
    NewtonKktStepper, StaticSolution, UzawaSettings, solve_static,
};
use fem_time::StepSettings;

fn paper_start(n: usize) -> (Beam, StaticSolution) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let model = Beam::new(p).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let sol = solve_static(&model, &guess, &UzawaSettings::anderson(1e4)).unwrap();
    let released = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
    (released, sol)
}

#[test]
fn newton_kkt_and_uzawa_reach_the_same_steps() {
    let (model, sol) = paper_start(20);
    let time = StepSettings::new(0.01);
    let mut al = AugmentedLagrangianStepper::new(
        model.clone(),
        &sol.state,
        None,
        Some(&sol.multipliers),
        0.25,
        time.clone(),
        UzawaSettings::anderson(1e5),
    )
    .unwrap();
    let mut nk = NewtonKktStepper::new(
        model,
        &sol.state,
        None,
        Some(&sol.multipliers),
        0.25,
        time,
        NewtonKktSettings::default(),
    )
    .unwrap();
    let (mut dx, mut dl, mut its) = (0.0f64, 0.0f64, Vec::new());
    for _ in 0..30 {
        let ra = al.step().unwrap();
        let rn = nk.step().unwrap();
        its.push(rn.iterations);
        assert!(rn.max_stretch_error < 1e-10, "{rn:?}");
        assert!(
            (ra.energy - rn.energy).abs() < 1e-4 * ra.energy.abs(),
            "{ra:?} {rn:?}"
        );
        let (sa, sn) = (al.state(), nk.state());
        for (a, b) in sa.positions.iter().zip(&sn.positions) {
            for c in 0..3 {
                dx = dx.max((a[c] - b[c]).abs());
            }
        }
        for (a, b) in al.multipliers().iter().zip(nk.multipliers()) {
            for c in 0..3 {
                dl = dl.max((a[c] - b[c]).abs());
            }
        }
    }
    let tmax = nk.tensions().iter().fold(0.0f64, |m, t| m.max(t.abs()));
    eprintln!("max position difference {dx:.2e} m, multiplier {dl:.2e} N (max |T| {tmax:.0} N)");
    eprintln!("Newton iterations per step: {its:?}");
    assert!(dx < 1e-7, "positions differ by {dx}");
    assert!(dl < 1e-5 * tmax, "multipliers differ by {dl}");
    assert!(its.iter().all(|&k| k <= 5), "{its:?}");
    assert_eq!(nk.factorization_count(), its.iter().sum::<usize>());
}

#[test]
fn newton_kkt_iterations_do_not_grow_with_n() {
    let mut mean = Vec::new();
    for n in [20, 200, 2000] {
        let mut p = BeamParameters::paper_95();
        p.n_elements = n;
        let model = Beam::new(p).unwrap();
        let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
        let released = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
        let mut st = NewtonKktStepper::new(
            released,
            &x0,
            None,
            None,
            0.25,
            StepSettings::new(0.01),
            NewtonKktSettings::default(),
        )
        .unwrap();
        let mut its = 0;
        for _ in 0..5 {
            let r = st
                .step()
                .unwrap_or_else(|e| panic!("N = {n}: {e} {:?}", st.kkt_report()));
            assert!(r.max_stretch_error < 1e-10);
            its += r.iterations;
        }
        mean.push(its as f64 / 5.0);
    }
    eprintln!("mean Newton iterations per step at N = 20, 200, 2000: {mean:?}");
    assert!(mean.iter().all(|&m| m <= 6.0), "{mean:?}");
}
