//! The static Newton–KKT solve: closed-form elastica and catenary, the order of the two
//! constraint-point rules, iteration counts against `N`, cables (`EI = 0`), Uzawa with an
//! automatic augmentation, and the degenerate settings refused up front.

use fem_beam::{
    Beam, BeamError, BeamOptions, BeamParameters, BeamState, ConstraintPoints, End,
    NewtonKktSettings, PointLoad, STATIC_NEWTON, StaticSolution, UzawaSettings, solve_static,
    solve_static_newton,
};

const GAUSS: ConstraintPoints = ConstraintPoints::Gauss;
const NODES: ConstraintPoints = ConstraintPoints::NodesAndMidpoints;

fn options(rule: ConstraintPoints) -> BeamOptions {
    BeamOptions {
        constraint_points: rule,
        seabed: None,
    }
}

/// `∫₀¹ g` by composite Simpson on 4000 panels (`g` smooth).
fn simpson(g: impl Fn(f64) -> f64, b: f64) -> f64 {
    let n = 4000;
    let h = b / n as f64;
    let mut s = g(0.0) + g(b);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * g(i as f64 * h);
    }
    s * h / 3.0
}

/// The cantilever elastica (clamped along `e_x` at `s = 0`, dead load `−P e_y` at the tip,
/// `L = EI = 1`, `k = P`): `½θ'² = k (sin θ − sin θ_L)`, so `√k = ∫_{θ_L}^0 dθ/√(2(sin θ −
/// sin θ_L))`, `x_L = √(−2 sin θ_L / k)`, `y_L = k^{-1/2} ∫_{θ_L}^0 sin θ dθ/√(2(sin θ − sin
/// θ_L))`; with `θ = θ_L + u²` the integrands are smooth. Returns the tip `(x_L, y_L)`.
fn elastica_tip(k: f64) -> (f64, f64) {
    let integral = |tl: f64, f: &dyn Fn(f64) -> f64| {
        let g = |u: f64| {
            let th = tl + u * u;
            let d = if u > 0.0 {
                2.0 * u / (2.0 * (th.sin() - tl.sin())).sqrt()
            } else {
                2.0 / (2.0 * tl.cos()).sqrt()
            };
            d * f(th)
        };
        simpson(g, (-tl).sqrt())
    };
    let (mut lo, mut hi) = (-std::f64::consts::FRAC_PI_2 + 1e-9, -1e-9);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        // The length integral decreases as θ_L goes down... it grows with |θ_L|.
        if integral(mid, &|_| 1.0) > k.sqrt() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let tl = 0.5 * (lo + hi);
    (
        (-2.0 * tl.sin() / k).sqrt(),
        integral(tl, &|th: f64| th.sin()) / k.sqrt(),
    )
}

fn elastica(n: usize, k: f64, rule: ConstraintPoints) -> (StaticSolution, [f64; 3]) {
    let p = BeamParameters {
        n_elements: n,
        length: 1.0,
        bending_stiffness: 1.0,
        density: 1.0,
        gravity: [0.0; 3],
        end_a: End::clamped([0.0; 3], [1.0, 0.0, 0.0]),
        end_b: End::Free,
        point_loads: vec![PointLoad {
            node: n,
            force: [0.0, -k, 0.0],
        }],
    };
    let model = Beam::with_options(p, options(rule)).unwrap();
    let guess = BeamState::straight(&model, [0.0; 3], [1.0, 0.0, 0.0]);
    let sol = solve_static_newton(
        &model,
        &guess,
        0.0,
        &STATIC_NEWTON,
        &NewtonKktSettings::default(),
    )
    .unwrap();
    let tip = sol.state.positions[n];
    (sol, tip)
}

#[test]
fn the_closed_form_elastica_is_the_classical_one() {
    // Bisshopp & Drucker (1945): tip deflection 0.3017 L at k = 1, 0.4935 at 2, 0.7138 at 5.
    for (k, y) in [(1.0, 0.30172), (2.0, 0.49346), (5.0, 0.71379)] {
        let (_, yl) = elastica_tip(k);
        assert!((yl + y).abs() < 1e-5, "k = {k}: {yl}");
    }
}

/// Tip errors at `N = 4, 8, 16, 32` and the observed orders.
fn tip_orders(k: f64, rule: ConstraintPoints) -> (Vec<f64>, Vec<f64>, usize) {
    let (xe, ye) = elastica_tip(k);
    let mut errs = Vec::new();
    let mut its = 0;
    for n in [4, 8, 16, 32] {
        let (sol, tip) = elastica(n, k, rule);
        assert!(sol.report.max_constraint_violation < 1e-10);
        its = its.max(sol.report.iterations);
        errs.push(((tip[0] - xe).powi(2) + (tip[1] - ye).powi(2)).sqrt());
    }
    let rates = errs.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
    (errs, rates, its)
}

#[test]
fn elastica_tip_is_second_order_with_gauss_points_and_fourth_with_nodes_and_midpoints() {
    for k in [1.0, 2.0, 5.0] {
        let (eg, rg, ig) = tip_orders(k, GAUSS);
        let (en, rn, in_) = tip_orders(k, NODES);
        eprintln!(
            "k = {k}: Gauss {eg:?} rates {rg:.2?} ({ig} its); nodes {en:?} rates {rn:.2?} ({in_} its)"
        );
        for r in &rg {
            assert!((1.9..2.2).contains(r), "Gauss rate {r} at k = {k}");
        }
        for r in &rn[1..] {
            assert!(*r > 3.9, "nodes-and-midpoints rate {r} at k = {k}");
        }
        // At equal N the fourth-order rule is 100–2000 times more accurate here.
        assert!(en[3] < 1e-2 * eg[3]);
        assert!(ig <= 10 && in_ <= 12, "iterations {ig}, {in_}");
    }
}

/// The paper's static start with `N` elements: pinned (0,0), (20,0), `L = 32.6`, `ρ = 7.67`.
fn paper_start(n: usize, ei: f64, rule: ConstraintPoints) -> (Beam, StaticSolution) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    p.bending_stiffness = ei;
    let model = Beam::with_options(p, options(rule)).unwrap();
    let guess = BeamState::try_arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]).unwrap();
    let sol = solve_static_newton(
        &model,
        &guess,
        0.0,
        &STATIC_NEWTON,
        &NewtonKktSettings::default(),
    )
    .unwrap();
    (model, sol)
}

/// The mid-span sag from 2 samples per element (an even `N` puts a node at mid-span).
fn sag(model: &Beam, sol: &StaticSolution) -> f64 {
    -model
        .sample(&sol.state, 2)
        .iter()
        .map(|q| q.position[1])
        .fold(f64::INFINITY, f64::min)
}

/// The inextensible catenary between (0,0) and (20,0) of length 32.6: `y = c cosh(x/c) + y₀`
/// about mid-span, `L = 2c sinh(10/c)` solved for `c` by bisection, sag `c (cosh(10/c) − 1)`.
fn catenary_sag() -> f64 {
    let (mut lo, mut hi) = (1.0f64, 100.0f64);
    for _ in 0..200 {
        let c = 0.5 * (lo + hi);
        if 2.0 * c * (10.0 / c).sinh() > 32.6 {
            lo = c;
        } else {
            hi = c;
        }
    }
    let c = 0.5 * (lo + hi);
    c * ((10.0 / c).cosh() - 1.0)
}

#[test]
fn a_cable_converges_to_the_catenary_at_fourth_order() {
    let exact = catenary_sag();
    assert!((exact - 11.6535337).abs() < 1e-7, "{exact}");
    let mut errs = Vec::new();
    for n in [16, 32, 64, 128] {
        let (model, sol) = paper_start(n, 0.0, NODES);
        assert!(sol.report.max_constraint_violation < 1e-10);
        assert!(
            sol.report.iterations <= 8,
            "{} iterations",
            sol.report.iterations
        );
        // Tension: positive everywhere (a hanging cable), the fairlead's ρg(c + 0) at the
        // supports of a level catenary: T = ρ g c cosh(10/c) = H + ρ g sag.
        assert!(sol.tensions().iter().all(|t| *t > 0.0));
        errs.push((sag(&model, &sol) - exact).abs());
    }
    eprintln!("catenary sag errors {errs:?}");
    for w in errs.windows(2) {
        assert!((w[0] / w[1]).log2() > 3.8, "{errs:?}");
    }
    assert!(errs[3] < 3e-8);
}

#[test]
fn a_cable_with_gauss_points_is_refused() {
    let mut p = BeamParameters::paper_95();
    p.bending_stiffness = 0.0;
    assert!(matches!(
        Beam::new(p),
        Err(BeamError::CableNeedsNodalPoints)
    ));
}

#[test]
fn iteration_counts_do_not_grow_with_n() {
    let mut counts = Vec::new();
    for n in [4, 16, 64, 256, 1000] {
        for (ei, rule) in [(700.0, GAUSS), (700.0, NODES), (0.0, NODES)] {
            let (_, sol) = paper_start(n, ei, rule);
            counts.push(sol.report.iterations);
        }
        for k in [1.0, 5.0] {
            counts.push(elastica(n, k, GAUSS).0.report.iterations);
        }
    }
    eprintln!("iterations {counts:?}");
    assert!(counts.iter().all(|&c| c <= 18), "{counts:?}");
}

#[test]
#[ignore = "N = 1e4, a few seconds in a debug build"]
fn the_paper_start_and_the_catenary_converge_at_ten_thousand_elements() {
    for (ei, rule) in [(700.0, GAUSS), (700.0, NODES), (0.0, NODES)] {
        let (model, sol) = paper_start(10_000, ei, rule);
        eprintln!(
            "N = 1e4, EI = {ei}, {rule:?}: {} iterations, sag {:.10}",
            sol.report.iterations,
            sag(&model, &sol)
        );
        assert!(sol.report.iterations <= 12);
    }
}

#[test]
fn newton_and_uzawa_reach_the_same_static_start() {
    let model = Beam::new(BeamParameters::paper_95()).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let uz = solve_static(&model, &guess, &UzawaSettings::anderson(1e4)).unwrap();
    let nk = solve_static_newton(
        &model,
        &guess,
        0.0,
        &STATIC_NEWTON,
        &NewtonKktSettings::default(),
    )
    .unwrap();
    let mut dx = 0.0f64;
    for (a, b) in uz.state.positions.iter().zip(&nk.state.positions) {
        for c in 0..3 {
            dx = dx.max((a[c] - b[c]).abs());
        }
    }
    let tmax = nk.tensions().iter().fold(0.0f64, |m, t| m.max(t.abs()));
    let dt = uz
        .tensions()
        .iter()
        .zip(nk.tensions())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    eprintln!(
        "Uzawa vs Newton: positions {dx:.2e} m, tensions {:.2e} relative",
        dt / tmax
    );
    assert!(dx < 1e-7, "{dx}");
    assert!(dt < 1e-5 * tmax, "{dt}");
}

#[test]
fn uzawa_with_the_automatic_augmentation_starts_any_length() {
    // A fixed r = 1e4 stalls at N = 1000 (the issue); the automatic r does not.
    for n in [20, 1000] {
        let mut p = BeamParameters::paper_95();
        p.n_elements = n;
        let model = Beam::new(p).unwrap();
        let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
        let settings = UzawaSettings::automatic(&model, None);
        let uz = solve_static(&model, &guess, &settings).unwrap();
        let nk = solve_static_newton(
            &model,
            &guess,
            0.0,
            &STATIC_NEWTON,
            &NewtonKktSettings::default(),
        )
        .unwrap();
        let mid = n / 2;
        eprintln!(
            "N = {n}: r = {:.3e}, {} Uzawa iterations, sag {} vs Newton {}",
            settings.augmentation,
            uz.report.iterations,
            uz.state.positions[mid][1],
            nk.state.positions[mid][1]
        );
        assert!((uz.state.positions[mid][1] - nk.state.positions[mid][1]).abs() < 1e-6);
    }
}

#[test]
fn degenerate_settings_are_refused_up_front() {
    let model = Beam::new(BeamParameters::paper_95()).unwrap();
    assert!(matches!(
        BeamState::try_arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0; 3]),
        Err(BeamError::DegenerateSagDirection { .. })
    ));
    assert!(matches!(
        BeamState::try_arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        Err(BeamError::DegenerateSagDirection { .. })
    ));
    let far = model
        .with_ends(End::pinned([0.0; 3]), End::pinned([40.0, 0.0, 0.0]))
        .unwrap();
    let guess = BeamState::straight(&far, [0.0; 3], [1.0, 0.0, 0.0]);
    assert!(matches!(
        BeamState::try_arc(&far, [0.0; 3], [40.0, 0.0, 0.0], [0.0, -1.0, 0.0]),
        Err(BeamError::SupportsOutOfReach { .. })
    ));
    let settings = NewtonKktSettings::default();
    match solve_static_newton(&far, &guess, 0.0, &STATIC_NEWTON, &settings) {
        Err(BeamError::SupportsOutOfReach { span, length }) => {
            assert!(
                span == 40.0 && (length - 32.6).abs() < 1e-12,
                "{span} {length}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        solve_static(&far, &guess, &UzawaSettings::anderson(1e4)),
        Err(BeamError::SupportsOutOfReach { .. })
    ));
    let free = model.with_ends(End::Free, End::Free).unwrap();
    assert!(matches!(
        solve_static_newton(&free, &guess, 0.0, &STATIC_NEWTON, &settings),
        Err(BeamError::NoSupport)
    ));
}
