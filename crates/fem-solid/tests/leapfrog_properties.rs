//! DEF_EXP at its critical step runs stably for 10⁴ steps and 1.05× is refused; an affine
//! motion is reproduced exactly in one step by every element kind (the patch test, both
//! schemes); a free cube spun as a rigid body keeps its strain energy at the level of the time
//! discretization error; a restored stepper continues bit for bit.

mod common;

use std::sync::Arc;

use common::*;
use fem_constraints::{DirichletConditions, DirichletSet, Enforcement, Signal};
use fem_elements::solid::{MaterialModel, SolidKind};
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{CriticalStepCheck, DefExp, DefLim};
use fem_time::{NodalStepper, StateField, StepError, StepSettings, Stepper};

fn column() -> (SolidSystem, Vec<f64>) {
    let body = box_body([0.2, 0.2, 1.0], [1, 1, 5], SolidKind::Hex8, [0.0; 3]);
    let system = system(
        &body,
        MaterialModel::NeoHookean,
        1e5,
        0.3,
        100.0,
        &body.zmin,
        SolidMass::Lumped,
    );
    // Small amplitude (tip speed 1 cm/s): the critical step hardly changes as it moves.
    let v0 = field(&system, |x| [0.01 * x[2], 0.005 * x[2], 0.0]);
    (system, v0)
}

/// DEF_EXP's bound at `x`: the element bound refined by Lanczos (`fem_time::leapfrog::spectral`).
fn bound_at(system: &SolidSystem, x: &[f64]) -> fem_assembly::StableStep {
    DefExp::estimate(system, x).unwrap().step
}

#[test]
fn def_exp_at_its_bound_is_stable_and_above_it_is_refused() {
    let (system, v0) = column();
    let x0 = vec![0.0; v0.len()];
    let bound = bound_at(&system, &x0);
    let refused = DefExp::new(
        system.clone(),
        StepSettings::new(1.05 * bound.dt),
        &x0,
        &v0,
        CriticalStepCheck::default(),
    )
    .unwrap_err();
    let message = refused.to_string();
    eprintln!("{message}");
    assert!(matches!(refused, StepError::Unstable { bound: b, .. } if b == bound.dt));
    assert!(message.contains(&format!("{:e}", bound.dt)), "{message}");

    let mut s = DefExp::new(
        system,
        StepSettings::new(bound.dt),
        &x0,
        &v0,
        CriticalStepCheck::default(),
    )
    .unwrap();
    let e0 = s.energy().unwrap().total;
    let mut worst = 0.0f64;
    for _ in 0..10_000 {
        s.step().unwrap();
        worst = worst.max((s.energy().unwrap().total - e0).abs() / e0);
    }
    eprintln!(
        "DEF_EXP at h = 2/sqrt(lambda_max) = {:e}: 1e4 steps, energy within {worst:.3e} of its start; bound now {:e}",
        bound.dt,
        s.critical_step()
    );
    // The leap-frog's energy at integer levels oscillates (by (ωh/2)² of the kinetic energy
    // of the fastest mode) but does not grow.
    assert!(worst < 0.5, "{worst}");
    let tip = s.position().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(tip < 0.01, "tip {tip}");
}

/// The affine motion `x = X + A X + b + t (B X + c)` in one component.
#[derive(Debug)]
struct Affine {
    x: [f64; 3],
    component: usize,
}

const A: [[f64; 3]; 3] = [
    [0.02, -0.01, 0.005],
    [0.01, -0.015, 0.02],
    [0.0, 0.01, 0.03],
];
const B: [[f64; 3]; 3] = [[0.3, 0.1, -0.2], [-0.1, 0.2, 0.05], [0.1, -0.3, 0.1]];

fn affine(x: [f64; 3], t: f64) -> [f64; 3] {
    std::array::from_fn(|i| {
        (0..3).map(|j| (A[i][j] + t * B[i][j]) * x[j]).sum::<f64>() + 0.01 + 0.1 * t
    })
}

fn affine_rate(x: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| (0..3).map(|j| B[i][j] * x[j]).sum::<f64>() + 0.1)
}

impl Signal for Affine {
    fn value(&self, t: f64) -> f64 {
        affine(self.x, t)[self.component]
    }
    fn rate(&self, _: f64) -> f64 {
        affine_rate(self.x)[self.component]
    }
    fn acceleration(&self, _: f64) -> f64 {
        0.0
    }
}

#[test]
fn affine_motion_is_reproduced_in_one_explicit_and_one_linearly_implicit_step() {
    for kind in [SolidKind::Tet4, SolidKind::Hex8, SolidKind::Tet10] {
        let mut body = box_body([1.0, 1.0, 1.0], [2, 2, 2], kind, [0.0; 3]);
        // Move the interior nodes off the grid, so that the cells are irregular (the tet10
        // mid-edge nodes put back at the midpoints of their moved edges).
        for (n, p) in body.points.iter_mut().enumerate() {
            let inside = p.iter().all(|&c| c > 1e-9 && c < 1.0 - 1e-9);
            if inside {
                let s = (n as f64 * 0.37).sin();
                *p = [p[0] + 0.05 * s, p[1] - 0.04 * s, p[2] + 0.03 * s];
            }
        }
        if kind == SolidKind::Tet10 {
            for cell in body.connectivity.chunks_exact(10) {
                for (e, (a, b)) in fem_elements::solid::shape::TET10_EDGES
                    .into_iter()
                    .enumerate()
                {
                    let (pa, pb) = (body.points[cell[a]], body.points[cell[b]]);
                    body.points[cell[4 + e]] = std::array::from_fn(|i| 0.5 * (pa[i] + pb[i]));
                }
            }
        }
        let boundary: Vec<bool> = body
            .points
            .iter()
            .map(|p| p.iter().any(|&c| !(1e-9..=1.0 - 1e-9).contains(&c)))
            .collect();
        for material in [
            MaterialModel::SaintVenantKirchhoff,
            MaterialModel::NeoHookean,
        ] {
            let system = system(&body, material, 1e6, 0.3, 1000.0, &[], SolidMass::Lumped);
            let n_free = system.operator().dofmap().n_free();
            let sets: Vec<DirichletSet> = (0..n_free)
                .filter(|&g| boundary[g / 3])
                .map(|g| DirichletSet {
                    dofs: vec![fem_constraints::SystemDof::new(g)],
                    signal: Arc::new(Affine {
                        x: body.points[g / 3],
                        component: g % 3,
                    }),
                    enforcement: Enforcement::Full,
                })
                .collect();
            let conditions = DirichletConditions::new(&sets).unwrap();
            let x0 = field(&system, |x| affine(x, 0.0));
            let v0 = field(&system, affine_rate);
            let h = 0.5 * system.critical_step(&x0).unwrap().dt;
            let exact = field(&system, |x| affine(x, h));
            let settings = StepSettings::new(h).with_dirichlet(conditions);
            let mut exp = DefExp::new(
                system.clone(),
                settings.clone(),
                &x0,
                &v0,
                CriticalStepCheck::default(),
            )
            .unwrap();
            let mut lim = DefLim::new(system.clone(), 0.0, settings, &x0, &v0).unwrap();
            exp.step().unwrap();
            lim.step().unwrap();
            for (name, s) in [("DEF_EXP", &exp as &dyn NodalStepper), ("DEF_LIM", &lim)] {
                let e = max_diff(s.position(), &exact);
                let ev = max_diff(&s.velocity_at_step(), &v0);
                assert!(
                    e < 1e-12 && ev < 1e-12,
                    "{kind} {material:?} {name}: {e:e} {ev:e}"
                );
            }
        }
    }
}

#[test]
fn a_spun_free_cube_keeps_its_strain_energy_at_the_time_discretization_error() {
    // A unit cube (one hex8) about its centre, ω = 10 rad/s about a skew axis, 2 turns.
    let body = box_body([1.0; 3], [1, 1, 1], SolidKind::Hex8, [-0.5; 3]);
    let system = system(
        &body,
        MaterialModel::NeoHookean,
        1e6,
        0.3,
        1000.0,
        &[],
        SolidMass::Lumped,
    );
    // It stretches (centrifugally) and breathes as it turns; over two turns the phase of that
    // breathing makes the error erratic until h ≲ 1e-3 (at t = 0.2 s it is order 2 from
    // h = 4e-4 on): the steps compared are below that.
    let w = [6.0, 0.0, 8.0];
    let v0 = field(&system, |x| {
        [
            w[1] * x[2] - w[2] * x[1],
            w[2] * x[0] - w[0] * x[2],
            w[0] * x[1] - w[1] * x[0],
        ]
    });
    let x0 = vec![0.0; v0.len()];
    let kinetic = 0.5 * fem_time::SecondOrderSystem::mass(&system).norm_squared(&v0);
    let t_end = 2.0 * 2.0 * std::f64::consts::PI / 10.0;
    let strain = |n: f64| {
        let settings = StepSettings::new(t_end / n);
        let check = CriticalStepCheck::default();
        let mut s = DefExp::new(system.clone(), settings, &x0, &v0, check).unwrap();
        run_to(&mut s, t_end);
        system.strain_energy(s.position())
    };
    let reference = strain(65536.0);
    let steps = [2048.0, 4096.0, 8192.0];
    let errors: Vec<f64> = steps
        .iter()
        .map(|&n| (strain(n) - reference).abs())
        .collect();
    let orders = orders(&errors);
    eprintln!(
        "spun cube: kinetic {kinetic:.4e} J, strain energy of the fine reference {reference:.4e} J (centrifugal stretch), errors {errors:?}, orders {orders:?}"
    );
    assert!(errors[0] < 1e-3 * kinetic, "{errors:?}");
    assert!(orders.iter().all(|&p| (p - 2.0).abs() < 0.3), "{orders:?}");
}

/// Steps until the stepper fails (at most `max` steps): the failing step and the error.
fn run_until_failure(s: &mut DefExp<SolidSystem>, max: usize) -> Option<(u64, StepError)> {
    for _ in 0..max {
        if let Err(e) = s.step() {
            return Some((s.step_index(), e));
        }
    }
    None
}

#[test]
fn a_body_whose_bound_falls_below_the_step_is_stopped_as_soon_as_by_checks_every_step() {
    // The column squashed by an initial velocity -8 z m/s (a quarter of its wave speed at the
    // top): Neo-Hookean stiffens in compression, so the critical step falls below a step
    // taken at 0.97 of the start's bound.
    let (system, _) = column();
    let v0 = field(&system, |x| [0.0, 0.0, -8.0 * x[2]]);
    let x0 = vec![0.0; v0.len()];
    let h = 0.97 * bound_at(&system, &x0).dt;
    let stopped = |check: CriticalStepCheck| {
        let mut s = DefExp::new(system.clone(), StepSettings::new(h), &x0, &v0, check).unwrap();
        run_until_failure(&mut s, 20_000)
    };
    let (every_step, e1) = stopped(CriticalStepCheck::every(1)).expect("stopped");
    assert!(matches!(e1, StepError::Unstable { .. }), "{e1}");
    let (adaptive, e2) = stopped(CriticalStepCheck::default()).expect("stopped");
    assert!(matches!(e2, StepError::Unstable { .. }), "{e2}");
    let (every_10, _) = stopped(CriticalStepCheck::every(10)).expect("stopped");
    eprintln!(
        "h = 0.97 bound: stopped at step {every_step} (checks every step), {adaptive} (adaptive), {every_10} (every 10)"
    );
    // The adaptive schedule closes in as the bound falls (3 % in 18 steps here, from a
    // standing start): it stops with the same clear error a few steps after the first step
    // a check could, about when checks every 10 steps do.
    assert!(
        adaptive >= every_step && adaptive <= every_step + 5,
        "{adaptive} vs {every_step}"
    );
    assert!(adaptive <= every_10 + 5);
    assert!(
        every_step > 10,
        "the bound falls during the run, not at its start"
    );
}

#[test]
fn a_restored_leapfrog_stepper_continues_bit_for_bit() {
    let (system, v0) = column();
    let x0 = vec![0.0; v0.len()];
    let dt = 0.5 * bound_at(&system, &x0).dt;
    let build: [Box<dyn Fn() -> Box<dyn NodalStepper>>; 2] = [
        Box::new(|| {
            Box::new(
                DefExp::new(
                    system.clone(),
                    StepSettings::new(dt),
                    &x0,
                    &v0,
                    CriticalStepCheck::default(),
                )
                .unwrap(),
            )
        }),
        Box::new(|| {
            Box::new(
                DefLim::new(system.clone(), 0.01, StepSettings::new(4.0 * dt), &x0, &v0).unwrap(),
            )
        }),
    ];
    for make in &build {
        let mut a = make();
        for _ in 0..13 {
            a.step().unwrap();
        }
        let saved: Vec<StateField<'static>> = a
            .state()
            .into_iter()
            .map(|f| StateField {
                name: std::borrow::Cow::Owned(f.name.into_owned()),
                kind: f.kind,
                values: std::borrow::Cow::Owned(f.values.into_owned()),
            })
            .collect();
        for _ in 0..17 {
            a.step().unwrap();
        }
        let mut b = make();
        b.restore(13, &saved).unwrap();
        for _ in 0..17 {
            b.step().unwrap();
        }
        assert_eq!(a.step_index(), b.step_index());
        assert_eq!(
            a.state(),
            b.state(),
            "the whole state, re-check schedule included"
        );
        assert!(
            a.position()
                .iter()
                .zip(b.position())
                .all(|(x, y)| x.to_bits() == y.to_bits())
        );
        assert_eq!(a.energy(), b.energy());
    }
}
