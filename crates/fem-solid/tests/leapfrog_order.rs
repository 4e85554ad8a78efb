//! DEF_EXP and DEF_LIM are second order in time (against a fine-step reference of the same
//! scheme), on a clamped Neo-Hookean block set swinging by a large initial velocity; and the
//! framework's implicit steppers (alpha scheme, backward Euler with Newton) run on the solid
//! and converge to the same motion.

mod common;

use common::*;
use fem_elements::solid::{MaterialModel, SolidKind};
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{AlphaScheme, BackwardEuler, NewtonSettings, NodalStepper, StepSettings};
use fem_time::{CriticalStepCheck, DefExp, DefLim};

const T_END: f64 = 0.25;

/// A 0.2 x 0.2 x 1 column clamped at its base, swung sideways: tip speed 2 m/s, a tip
/// deflection of about 20 % of the length. Its highest frequency is about 500 rad/s: the
/// steps compared resolve it (`ω_max h ≤ 2`), as an order of convergence needs.
fn column(model: MaterialModel, mass: SolidMass) -> (SolidSystem, Vec<f64>) {
    let body = box_body([0.2, 0.2, 1.0], [1, 1, 5], SolidKind::Hex8, [0.0; 3]);
    let system = system(&body, model, 1e5, 0.3, 100.0, &body.zmin, mass);
    let v0 = field(&system, |x| [2.0 * x[2] * x[2], 0.0, 0.0]);
    (system, v0)
}

fn def_exp(dt: f64) -> Vec<f64> {
    let (system, v0) = column(MaterialModel::NeoHookean, SolidMass::Lumped);
    let x0 = vec![0.0; v0.len()];
    let mut s = DefExp::new(
        system,
        StepSettings::new(dt),
        &x0,
        &v0,
        CriticalStepCheck::default(),
    )
    .unwrap();
    run_to(&mut s, T_END);
    s.position().to_vec()
}

fn def_lim(dt: f64, mass: SolidMass) -> Vec<f64> {
    let (system, v0) = column(MaterialModel::NeoHookean, mass);
    let x0 = vec![0.0; v0.len()];
    let mut s = DefLim::new(system, 0.0, StepSettings::new(dt), &x0, &v0).unwrap();
    run_to(&mut s, T_END);
    s.position().to_vec()
}

#[test]
fn def_exp_is_second_order() {
    let (system, v0) = column(MaterialModel::NeoHookean, SolidMass::Lumped);
    let critical = system.critical_step(&vec![0.0; v0.len()]).unwrap().dt;
    // Steps below the critical step, T_END a whole multiple of each.
    let base = T_END / (T_END / critical).ceil();
    let reference = def_exp(base / 128.0);
    let errors: Vec<f64> = [2.0, 4.0, 8.0]
        .iter()
        .map(|k| max_diff(&def_exp(base / k), &reference))
        .collect();
    let orders = orders(&errors);
    eprintln!("DEF_EXP: h0 = {base:e}, errors {errors:?}, orders {orders:?}");
    assert!(orders.iter().all(|&p| (p - 2.0).abs() < 0.15), "{orders:?}");
}

#[test]
fn def_lim_is_second_order_with_lumped_and_consistent_mass() {
    for mass in [SolidMass::Lumped, SolidMass::Consistent] {
        let reference = def_lim(T_END / 8192.0, mass);
        let errors: Vec<f64> = [128.0, 256.0, 512.0]
            .iter()
            .map(|n| max_diff(&def_lim(T_END / n, mass), &reference))
            .collect();
        let orders = orders(&errors);
        // The max-norm error of a nonlinear motion is not monotone in every dof: the order
        // over the whole range, and each halving near 2.
        let overall = (errors[0] / errors[2]).log2() / 2.0;
        eprintln!("DEF_LIM {mass:?}: errors {errors:?}, orders {orders:?}, overall {overall}");
        assert!((overall - 2.0).abs() < 0.2, "{overall}");
        assert!(orders.iter().all(|&p| (p - 2.0).abs() < 0.5), "{orders:?}");
    }
}

#[test]
fn framework_implicit_steppers_run_on_the_solid() {
    let reference = def_lim(T_END / 4096.0, SolidMass::Consistent);
    let (system, v0) = column(MaterialModel::NeoHookean, SolidMass::Consistent);
    let x0 = vec![0.0; v0.len()];
    let mut errors = Vec::new();
    for n in [128.0, 256.0] {
        let mut alpha =
            AlphaScheme::new(system.clone(), 0.25, StepSettings::new(T_END / n), &x0, &v0).unwrap();
        run_to(&mut alpha, T_END);
        errors.push(max_diff(alpha.position(), &reference));
    }
    let p = orders(&errors)[0];
    eprintln!("alpha 1/4 on the solid: errors {errors:?}, order {p}");
    assert!((p - 2.0).abs() < 0.3, "alpha scheme order {p}");

    let mut errors = Vec::new();
    for n in [1024.0, 2048.0] {
        let settings = StepSettings::new(T_END / n).with_newton(NewtonSettings {
            absolute_tolerance: 1e-10,
            ..NewtonSettings::default()
        });
        let mut be = BackwardEuler::new(system.clone(), settings, &x0, &v0).unwrap();
        run_to(&mut be, T_END);
        errors.push(max_diff(be.position(), &reference));
        // Backward Euler dissipates: the energy falls.
        let e = fem_time::Stepper::energy(&be).unwrap();
        let e0 = 0.5 * fem_time::SecondOrderSystem::mass(&system).norm_squared(&v0);
        assert!(e.total < e0, "{} >= {e0}", e.total);
    }
    // First order only once ω_max² h T ≪ 1 (h ≪ 2e-5 here): at these steps it has damped
    // the column's highest modes out, so it approaches the motion slowly; it must approach it.
    eprintln!("backward Euler on the solid: errors {errors:?}");
    assert!(errors[1] < errors[0] && errors[1] < 1e-3, "{errors:?}");
}
