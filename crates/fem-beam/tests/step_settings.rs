//! The beam steppers on the common step settings (`fem_time::StepSettings`): the clock starts
//! at `t0`, a bad step or initial state is the common error, prescribed dofs are refused (the
//! supports are the model's ends), and `settings.newton` is what the KKT and penalty Newton
//! iterate with (cap and tolerance), the defaults being the ones the stored histories use.

use std::sync::Arc;

use fem_beam::{
    AugmentedLagrangianStepper, Beam, BeamError, BeamParameters, BeamState, End,
    EnergyConservingStepper, NewtonKktSettings, NewtonKktStepper, PenaltySettings, PenaltyStepper,
    StaticSolution, UzawaSettings, solve_static,
};
use fem_constraints::{DirichletConditions, DirichletSet, Enforcement, Signal, SystemDof};
use fem_time::{NewtonSettings, StepError, StepSettings, Stepper};

/// The paper's (95) at `N = 10`: the static start between A and B, then B released.
fn released() -> (Beam, StaticSolution) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = 10;
    let model = Beam::new(p).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let sol = solve_static(&model, &guess, &UzawaSettings::anderson(1e4)).unwrap();
    let released = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
    (released, sol)
}

#[derive(Debug)]
struct Zero;

impl Signal for Zero {
    fn value(&self, _t: f64) -> f64 {
        0.0
    }
    fn rate(&self, _t: f64) -> f64 {
        0.0
    }
    fn acceleration(&self, _t: f64) -> f64 {
        0.0
    }
}

/// The four steppers built from one state with `settings`, each one's result reduced to
/// `Ok(())` or its error.
fn build_all(settings: &StepSettings) -> Vec<(&'static str, Result<(), BeamError>)> {
    let (model, sol) = released();
    let (x0, m) = (&sol.state, Some(sol.multipliers.as_slice()));
    let kkt = NewtonKktSettings::default();
    vec![
        (
            "augmented Lagrangian",
            AugmentedLagrangianStepper::new(
                model.clone(),
                x0,
                None,
                m,
                0.25,
                settings.clone(),
                UzawaSettings::anderson(1e5),
            )
            .map(|_| ()),
        ),
        (
            "Newton-KKT",
            NewtonKktStepper::new(model.clone(), x0, None, m, 0.25, settings.clone(), kkt)
                .map(|_| ()),
        ),
        (
            "penalty",
            PenaltyStepper::new(
                model.clone(),
                x0,
                None,
                0.25,
                settings.clone(),
                PenaltySettings::new(1.5e-4),
            )
            .map(|_| ()),
        ),
        (
            "energy-conserving",
            EnergyConservingStepper::new(model, x0, None, m, settings.clone(), kkt).map(|_| ()),
        ),
    ]
}

#[test]
fn prescribed_dofs_are_refused_by_every_beam_stepper() {
    let dirichlet = DirichletConditions::new(&[DirichletSet {
        dofs: vec![SystemDof::new(0), SystemDof::new(1)],
        signal: Arc::new(Zero),
        enforcement: Enforcement::Direct,
    }])
    .unwrap();
    let settings = StepSettings::new(0.01).with_dirichlet(dirichlet);
    for (name, result) in build_all(&settings) {
        match result {
            Err(e @ BeamError::PrescribedDofs { count: 2 }) => {
                let message = e.to_string();
                assert!(
                    message.contains("constraints of its KKT system"),
                    "{name}: {message}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn a_bad_step_is_the_common_error() {
    for dt in [0.0, -0.01, f64::NAN] {
        for (name, result) in build_all(&StepSettings::new(dt)) {
            assert!(
                matches!(
                    result,
                    Err(BeamError::Step(StepError::InvalidParameter {
                        name: "dt",
                        ..
                    }))
                ),
                "{name}, dt = {dt}: {result:?}"
            );
        }
    }
    let settings = StepSettings::new(0.01).starting_at(f64::INFINITY);
    for (name, result) in build_all(&settings) {
        assert!(
            matches!(
                result,
                Err(BeamError::Step(StepError::InvalidParameter {
                    name: "t0",
                    ..
                }))
            ),
            "{name}: {result:?}"
        );
    }
}

#[test]
fn the_clock_starts_at_t0_and_the_moving_end_is_read_there() {
    // A 2 m beam hanging from an end shaken as a(t) = (0.2 sin 3t, 0, 0), started at
    // t0 = 0.5 with the end's velocity: the first step puts the end at a(0.505).
    let p = BeamParameters {
        n_elements: 8,
        length: 2.0,
        bending_stiffness: 0.5,
        density: 1.0,
        gravity: [0.0, -9.81, 0.0],
        end_a: End::Pinned(fem_beam::Placement::moving(|t| {
            [0.2 * (3.0 * t).sin(), 0.0, 0.0]
        })),
        end_b: End::Free,
        point_loads: Vec::new(),
    };
    let model = Beam::new(p).unwrap();
    let t0 = 0.5f64;
    let x0 = BeamState::straight(&model, [0.2 * (3.0 * t0).sin(), 0.0, 0.0], [0.0, -1.0, 0.0]);
    let mut v0 = x0.clone();
    let speed = 0.6 * (3.0 * t0).cos();
    v0.positions.iter_mut().for_each(|v| *v = [speed, 0.0, 0.0]);
    v0.tangents.iter_mut().for_each(|v| *v = [0.0; 3]);
    let mut st = AugmentedLagrangianStepper::new(
        model,
        &x0,
        Some(&v0),
        None,
        0.25,
        StepSettings::new(0.005).starting_at(t0),
        UzawaSettings::anderson(1e2),
    )
    .unwrap();
    assert_eq!(st.clock().t0(), t0);
    assert_eq!(st.clock().time(), t0);
    for n in 1..=10u64 {
        st.step().unwrap();
        assert_eq!(st.clock().step(), n);
        assert_eq!(st.clock().time(), t0 + 0.005 * n as f64);
        let a = st.state().positions[0];
        let expected = 0.2 * (3.0 * st.clock().time()).sin();
        assert!((a[0] - expected).abs() < 1e-14, "{a:?} vs {expected}");
    }
}

/// The KKT-specific tolerances loose enough that the position update decides when Newton
/// stops (the defaults' multiplier and constraint tolerances would decide first).
const LOOSE_KKT: NewtonKktSettings = NewtonKktSettings {
    multiplier_tolerance: 1e-2,
    constraint_tolerance: 1e-3,
    factorization: fem_beam::KktFactorization::BlockTridiagonal,
    assembly: fem_beam::KktAssembly::Csc,
};

/// Newton–KKT iterations over 20 steps of the released (95) with `newton` and `kkt`, or the
/// error.
fn kkt_iterations_with(newton: NewtonSettings, kkt: NewtonKktSettings) -> Result<usize, BeamError> {
    let (model, sol) = released();
    let mut st = NewtonKktStepper::new(
        model,
        &sol.state,
        None,
        Some(&sol.multipliers),
        0.25,
        StepSettings::new(0.01).with_newton(newton),
        kkt,
    )?;
    let mut its = 0;
    for _ in 0..20 {
        its += st.step()?.iterations;
    }
    Ok(its)
}

/// [`kkt_iterations_with`] the default KKT-specific settings.
fn kkt_iterations(newton: NewtonSettings) -> Result<usize, BeamError> {
    kkt_iterations_with(newton, NewtonKktSettings::default())
}

#[test]
fn the_settings_newton_drives_the_kkt_newton() {
    let default = kkt_iterations(NewtonSettings::default()).unwrap();
    // The cap: one iteration does not reach the tolerance, and the error says so.
    let one = NewtonSettings {
        max_iterations: 1,
        ..NewtonSettings::default()
    };
    match kkt_iterations(one) {
        Err(BeamError::NewtonDiverged {
            step: 1,
            iterations: 1,
            tolerance,
            ..
        }) => assert_eq!(tolerance, 1e-10),
        other => panic!("{other:?}"),
    }
    // The tolerance: with the KKT-specific tolerances loose, a looser relative tolerance
    // stops earlier; an absolute tolerance below the relative one (m, against
    // max(1, |x|) ≥ 1 m) changes nothing; one above it is read.
    let strict = kkt_iterations_with(NewtonSettings::default(), LOOSE_KKT).unwrap();
    let loose = NewtonSettings {
        relative_tolerance: 1e-3,
        ..NewtonSettings::default()
    };
    let loose = kkt_iterations_with(loose, LOOSE_KKT).unwrap();
    assert!(loose < strict, "{loose} vs {strict}");
    let tiny_absolute = NewtonSettings {
        absolute_tolerance: 1e-12,
        ..NewtonSettings::default()
    };
    assert_eq!(kkt_iterations(tiny_absolute).unwrap(), default);
    let absolute = NewtonSettings {
        absolute_tolerance: 1e-1,
        ..NewtonSettings::default()
    };
    let absolute = kkt_iterations_with(absolute, LOOSE_KKT).unwrap();
    assert!(absolute < strict, "{absolute} vs {strict}");
    // Settings Newton cannot use are refused before anything is built.
    let zero = NewtonSettings {
        max_iterations: 0,
        ..NewtonSettings::default()
    };
    assert!(matches!(
        kkt_iterations(zero),
        Err(BeamError::InvalidParameter {
            name: "max_iterations",
            ..
        })
    ));
}

#[test]
fn the_settings_newton_drives_the_penalty_newton() {
    let run = |newton: NewtonSettings| -> Result<usize, BeamError> {
        let (model, sol) = released();
        let mut st = PenaltyStepper::new(
            model,
            &sol.state,
            None,
            0.25,
            StepSettings::new(0.01).with_newton(newton),
            PenaltySettings::new(1.5e-4),
        )?;
        let mut its = 0;
        for _ in 0..10 {
            its += st.step()?.iterations;
        }
        Ok(its)
    };
    let default = run(NewtonSettings::default()).unwrap();
    let one = NewtonSettings {
        max_iterations: 1,
        ..NewtonSettings::default()
    };
    assert!(matches!(
        run(one),
        Err(BeamError::NewtonDiverged {
            step: 1,
            iterations: 1,
            ..
        })
    ));
    let loose = NewtonSettings {
        relative_tolerance: 1e-4,
        ..NewtonSettings::default()
    };
    let loose = run(loose).unwrap();
    assert!(loose < default, "{loose} vs {default}");
}

#[test]
fn the_energy_conserving_scheme_halves_then_reports_the_cap() {
    // One iteration per (sub)step never converges: after four halvings the step fails with
    // the cap of the settings, not a constant of the crate.
    let (model, sol) = released();
    let mut st = EnergyConservingStepper::new(
        model,
        &sol.state,
        None,
        Some(&sol.multipliers),
        StepSettings::new(0.01).with_newton(NewtonSettings {
            max_iterations: 1,
            ..NewtonSettings::default()
        }),
        NewtonKktSettings::default(),
    )
    .unwrap();
    assert!(matches!(
        st.step(),
        Err(BeamError::NewtonDiverged {
            step: 1,
            iterations: 1,
            ..
        })
    ));
}
