//! The static problem against closed-form solutions (docs/theory/inextensible_beam.md).

use fem_beam::{
    Beam, BeamParameters, BeamState, End, UzawaSettings, solve_static, solve_static_at,
};

fn params(n: usize, length: f64, ei: f64, end_a: End, end_b: End) -> BeamParameters {
    BeamParameters {
        n_elements: n,
        length,
        bending_stiffness: ei,
        density: 1.0,
        gravity: [0.0; 3],
        end_a,
        end_b,
        point_loads: Vec::new(),
    }
}

/// A circular arc of radius R clamped at both ends with its own end tangents, no load:
/// the exact solution is the arc, with the constant tension T = −EI/R². Returns the max nodal
/// position error, the max tension error and the max constraint violation.
fn clamped_arc(n: usize) -> (f64, f64, f64) {
    let (length, ei, theta) = (2.0, 3.0, 2.0); // turning angle θ = L/R
    let radius = length / theta;
    let exact = |s: f64| {
        let phi = s / radius;
        (
            [radius * phi.sin(), radius * (1.0 - phi.cos()), 0.0],
            [phi.cos(), phi.sin(), 0.0],
        )
    };
    let (xb, tb) = exact(length);
    let model = Beam::new(params(
        n,
        length,
        ei,
        End::clamped([0.0; 3], [1.0, 0.0, 0.0]),
        End::clamped(xb, tb),
    ))
    .unwrap();
    // Start from a deliberately wrong, non-planar guess: a shallow arc bulging along z.
    let guess = BeamState::arc(&model, [0.0; 3], xb, [0.0, 0.3, 1.0]);
    let sol = solve_static(&model, &guess, &UzawaSettings::anderson(100.0)).unwrap();
    assert_eq!(sol.factorization_count, 1);
    let mut err: f64 = 0.0;
    for (i, &s) in model.node_arc_lengths().iter().enumerate() {
        let (x, t) = exact(s);
        for c in 0..3 {
            err = err
                .max((sol.state.positions[i][c] - x[c]).abs())
                .max((sol.state.tangents[i][c] - t[c]).abs() * radius / n as f64);
        }
    }
    let t_exact = -ei / (radius * radius);
    let t_err = sol
        .tensions()
        .iter()
        .fold(0.0f64, |m, t| m.max((t - t_exact).abs()));
    (
        err,
        t_err / t_exact.abs(),
        sol.report.max_constraint_violation,
    )
}

#[test]
fn clamped_arc_converges_at_fourth_order_and_holds_the_constraint() {
    let ns = [2, 4, 8, 16];
    let results: Vec<(f64, f64, f64)> = ns.iter().map(|&n| clamped_arc(n)).collect();
    for (n, r) in ns.iter().zip(&results) {
        eprintln!(
            "N = {n:3}: position error {:.3e}, relative tension error {:.3e}, max |x'-p| {:.1e}",
            r.0, r.1, r.2
        );
        assert!(r.2 < 1e-9, "constraint violated at N = {n}");
    }
    for w in results.windows(2) {
        let rate = (w[0].0 / w[1].0).log2();
        assert!(rate > 3.7, "position convergence rate {rate}");
        // The pointwise multiplier converges at first order only (measured 1.7, 0.8, 0.9).
        let rate_t = (w[0].1 / w[1].1).log2();
        assert!(rate_t > 0.7, "tension convergence rate {rate_t}");
    }
}

#[test]
fn hanging_clamped_beam_is_straight_with_linear_tension() {
    // Clamped at the top with a vertical tangent, free at the bottom, under gravity: the
    // exact solution x(s) = −s e_y lies in the Hermite space; T(s) = ρ g (L − s).
    let (n, length, rho, g) = (6, 3.0, 2.0, 9.81);
    let mut p = params(
        n,
        length,
        5.0,
        End::clamped([0.0; 3], [0.0, -1.0, 0.0]),
        End::Free,
    );
    p.density = rho;
    p.gravity = [0.0, -g, 0.0];
    let model = Beam::new(p).unwrap();
    // Guess: tilted and in the wrong plane.
    let guess = BeamState::straight(&model, [0.0; 3], [0.3, -1.0, 0.2]);
    let sol = solve_static(&model, &guess, &UzawaSettings::anderson(1e3)).unwrap();
    for (i, &s) in model.node_arc_lengths().iter().enumerate() {
        let x = sol.state.positions[i];
        assert!((x[0]).abs() < 1e-8 && (x[1] + s).abs() < 1e-8 && x[2].abs() < 1e-8);
    }
    for (t, s) in sol.tensions().iter().zip(model.point_arc_lengths()) {
        let exact = rho * g * (length - s);
        assert!(
            (t - exact).abs() < 1e-6 * rho * g * length,
            "T({s}) = {t}, exact {exact}"
        );
    }
}

#[test]
fn paper_static_start_is_independent_of_r_and_acceleration() {
    // The static start of experiment (95): pinned at (0,0) and (20,0), L = 32.6 m.
    let model = Beam::new(BeamParameters::paper_95()).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let mut sags = Vec::new();
    for s in [
        UzawaSettings::anderson(1e3),
        UzawaSettings::anderson(1e4),
        UzawaSettings::plain(1e4),
    ] {
        let sol = solve_static(&model, &guess, &s).unwrap();
        assert!(sol.report.max_constraint_violation < 1e-9);
        // Stretch |x'| = 1 at every constraint point.
        let mut d = vec![[0.0; 3]; model.n_points()];
        model.tangents_at_points(&sol.state.to_columns(), &mut d);
        for v in d {
            let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            assert!((n - 1.0).abs() < 1e-9);
        }
        // Symmetric sag at mid-span; the pinned ends held exactly.
        assert_eq!(sol.state.positions[0], [0.0; 3]);
        assert_eq!(sol.state.positions[20], [20.0, 0.0, 0.0]);
        assert!((sol.state.positions[10][0] - 10.0).abs() < 1e-6);
        sags.push(sol.state.positions[10][1]);
    }
    for s in &sags {
        assert!((s - sags[0]).abs() < 1e-6, "{sags:?}");
    }
    assert!((sags[0] + 11.6102).abs() < 1e-3, "sag {}", sags[0]);
}

#[test]
fn moving_end_is_followed_by_the_static_solution() {
    // A clamped-pinned beam whose pinned end is a function of time, solved at t = 1.
    let p = params(
        8,
        2.0,
        1.0,
        End::clamped([0.0; 3], [1.0, 0.0, 0.0]),
        End::Pinned(fem_beam::Placement::moving(|t| [1.5, 0.2 * t, 0.1 * t])),
    );
    let model = Beam::new(p).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [1.5, 0.2, 0.1], [0.0, 1.0, 0.0]);
    let sol = solve_static_at(&model, &guess, None, 1.0, &UzawaSettings::anderson(100.0)).unwrap();
    assert_eq!(sol.state.positions[8], [1.5, 0.2, 0.1]);
    assert_eq!(sol.state.tangents[0], [1.0, 0.0, 0.0]);
    assert!(sol.report.max_constraint_violation < 1e-9);
}

#[test]
fn bad_input_is_refused() {
    let free = params(4, 1.0, 1.0, End::Free, End::Free);
    let model = Beam::new(free).unwrap();
    let guess = BeamState::straight(&model, [0.0; 3], [1.0, 0.0, 0.0]);
    assert!(matches!(
        solve_static(&model, &guess, &UzawaSettings::plain(1.0)),
        Err(fem_beam::BeamError::NoSupport)
    ));
    assert!(Beam::new(params(0, 1.0, 1.0, End::Free, End::Free)).is_err());
    assert!(Beam::new(params(3, -1.0, 1.0, End::Free, End::Free)).is_err());
    assert!(solve_static(&model, &guess, &UzawaSettings::plain(-1.0)).is_err());
}

#[test]
fn sampling_interpolates_the_hermite_field() {
    let model = Beam::new(params(5, 2.0, 1.0, End::Free, End::Free)).unwrap();
    let arc = BeamState::arc(&model, [0.0; 3], [1.5, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let samples = model.sample(&arc, 4);
    assert_eq!(samples.len(), 4 * 5 + 1);
    assert_eq!(samples[0].position, arc.positions[0]);
    let last = samples.last().unwrap();
    for c in 0..3 {
        assert!((last.position[c] - arc.positions[5][c]).abs() < 1e-14);
    }
    assert!((last.s - 2.0).abs() < 1e-14);
    for s in &samples {
        let n = s.tangent.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(
            (n - 1.0).abs() < 1e-2,
            "the arc interpolant is nearly unit speed"
        );
    }
}
