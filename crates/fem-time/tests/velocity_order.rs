//! Every nodal stepper gives the velocity at integer time levels to its order: on the
//! oscillator `ẍ + 4x = 0`, `x(0) = 1`, `ẋ(0) = ½`, the error of `velocity()` at `t = 1`
//! halves the step at order 2 (order 1 for backward Euler).

use fem_time::conservation_form::{ConservationFormScheme, ConservationFormSystem};
use fem_time::{
    AlphaScheme, BackwardEuler, LinearSystem, Mass, MoreauJean, NodalStepper, NonlinearAlphaScheme,
    StepSettings,
};
use nalgebra::DMatrix;

const OMEGA: f64 = 2.0;
const X0: f64 = 1.0;
const V0: f64 = 0.5;

fn exact_velocity(t: f64) -> f64 {
    -X0 * OMEGA * (OMEGA * t).sin() + V0 * (OMEGA * t).cos()
}

fn oscillator() -> LinearSystem {
    LinearSystem::new(
        Mass::Lumped(vec![1.0]),
        DMatrix::from_element(1, 1, OMEGA * OMEGA),
    )
}

/// The oscillator in the conservation form (39): `f = q̇`, `g = ω² q`.
struct Oscillator;

impl ConservationFormSystem for Oscillator {
    fn n_coordinates(&self) -> usize {
        1
    }
    fn momentum(&self, _q: &[f64], q_dot: &[f64], out: &mut [f64]) {
        out[0] = q_dot[0];
    }
    fn force(&self, q: &[f64], _q_dot: &[f64], out: &mut [f64]) {
        out[0] = OMEGA * OMEGA * q[0];
    }
    fn kinetic_energy(&self, _q: &[f64], q_dot: &[f64]) -> f64 {
        0.5 * q_dot[0] * q_dot[0]
    }
    fn potential_energy(&self, q: &[f64]) -> f64 {
        0.5 * OMEGA * OMEGA * q[0] * q[0]
    }
}

type Build = dyn Fn(f64) -> Box<dyn NodalStepper>;

fn velocity_errors(build: &Build) -> Vec<f64> {
    [0.01, 0.005, 0.0025, 0.00125]
        .iter()
        .map(|&dt| {
            let mut s = build(dt);
            for _ in 0..(1.0 / dt).round() as usize {
                s.step().unwrap();
            }
            (s.velocity_at_step()[0] - exact_velocity(s.time())).abs()
        })
        .collect()
}

#[test]
fn velocities_at_integer_time_levels_converge_at_each_schemes_order() {
    let settings = |dt: f64| StepSettings::new(dt);
    let cases: Vec<(&str, Box<Build>, f64)> = vec![
        (
            "alpha 1/4",
            Box::new(move |dt| {
                Box::new(AlphaScheme::new(oscillator(), 0.25, settings(dt), &[X0], &[V0]).unwrap())
            }),
            2.0,
        ),
        (
            "alpha 0 (central differences)",
            Box::new(move |dt| {
                Box::new(AlphaScheme::explicit(oscillator(), settings(dt), &[X0], &[V0]).unwrap())
            }),
            2.0,
        ),
        (
            "energy-conserving alpha",
            Box::new(move |dt| {
                Box::new(
                    NonlinearAlphaScheme::energy_conserving(
                        oscillator(),
                        settings(dt),
                        &[X0],
                        &[V0],
                    )
                    .unwrap(),
                )
            }),
            2.0,
        ),
        (
            "Moreau-Jean 1/2",
            Box::new(move |dt| {
                Box::new(MoreauJean::trapezoidal(oscillator(), settings(dt), &[X0], &[V0]).unwrap())
            }),
            2.0,
        ),
        (
            "conservation form (40)",
            Box::new(move |dt| {
                Box::new(
                    ConservationFormScheme::new(Oscillator, None, settings(dt), &[X0], &[V0])
                        .unwrap(),
                )
            }),
            2.0,
        ),
        (
            "backward Euler",
            Box::new(move |dt| {
                Box::new(BackwardEuler::new(oscillator(), settings(dt), &[X0], &[V0]).unwrap())
            }),
            1.0,
        ),
    ];
    for (name, build, order) in cases {
        let errors = velocity_errors(build.as_ref());
        let p: Vec<f64> = errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
        eprintln!("{name}: velocity errors {errors:?}, orders {p:.3?}");
        let last = *p.last().unwrap();
        assert!(
            (order - 0.15..order + 0.3).contains(&last),
            "{name}: orders {p:?} (expected {order})"
        );
    }
}
