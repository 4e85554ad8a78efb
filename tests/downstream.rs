//! How a downstream code uses `fem` as a library: it defines its own small system by
//! implementing the public trait, attaches a Dirichlet set driven by an expression, and steps
//! it with each stepper. Nothing here uses the YAML front end.

use std::sync::Arc;

use fem::constraints::{
    DirichletConditions, DirichletSet, Enforcement, Prescribed, Signal, TimeFunction,
};
use fem::nalgebra::DMatrix;
use fem::time::{
    AlphaScheme, BackwardEuler, EvalError, Mass, Matrix, NewtonSettings, NodalStepper,
    SecondOrderSystem, StepSettings, Stepper, TangentKind,
};

/// Two masses on a nonlinear (stiffening) spring, the first one driven:
/// `m ẍ₁ + k(x₁ − x₂) + κ(x₁ − x₂)³ = r`, `m ẍ₂ − k(x₁ − x₂) − κ(x₁ − x₂)³ = 0`.
struct DrivenPair {
    mass: Mass,
    k: f64,
    kappa: f64,
}

impl SecondOrderSystem for DrivenPair {
    fn n_dofs(&self) -> usize {
        2
    }
    fn mass(&self) -> &Mass {
        &self.mass
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let s = x[0] - x[1];
        let spring = self.k * s + self.kappa * s.powi(3);
        f[0] = spring;
        f[1] = -spring;
        Ok(())
    }
    fn tangent_kind(&self) -> TangentKind {
        TangentKind::Symmetric
    }
    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        let s = x[0] - x[1];
        let kt = self.k + 3.0 * self.kappa * s * s;
        Ok(Matrix::Dense(DMatrix::from_row_slice(
            2,
            2,
            &[kt, -kt, -kt, kt],
        )))
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let s = x[0] - x[1];
        Some(0.5 * self.k * s * s + 0.25 * self.kappa * s.powi(4))
    }
}

fn drive(method: Enforcement) -> DirichletConditions {
    let g = Prescribed::new(TimeFunction::expression("0.2*sin(3*t)").expect("a valid expression"));
    let signal: Arc<dyn Signal> = Arc::new(g);
    DirichletConditions::new(&[DirichletSet {
        dofs: vec![0],
        signal,
        enforcement: method,
    }])
    .expect("one set cannot conflict")
}

#[test]
fn a_downstream_nonlinear_system_driven_by_an_expression() {
    for method in [Enforcement::Direct, Enforcement::Rate, Enforcement::Full] {
        let system = DrivenPair {
            mass: Mass::Lumped(vec![1.0, 2.0]),
            k: 4.0,
            kappa: 50.0,
        };
        let mut stepper = BackwardEuler::new(
            system,
            StepSettings::new(1e-3)
                .with_dirichlet(drive(method))
                .with_newton(NewtonSettings::default()),
            &[0.0, 0.0],
            &[0.0, 0.0],
        )
        .expect("valid setup");
        for _ in 0..2000 {
            stepper.step().expect("Newton converges");
        }
        let t: f64 = stepper.time();
        let g = 0.2 * (3.0 * t).sin();
        let gdot = 0.6 * (3.0 * t).cos();
        // Against the very central differences the stepper used, enforcement is exact.
        let fd = Prescribed::new(TimeFunction::expression("0.2*sin(3*t)").expect("valid"));
        match method {
            Enforcement::Rate => assert!((stepper.velocity()[0] - fd.rate(t)).abs() <= 1e-12),
            Enforcement::Full => {
                assert!((stepper.velocity()[0] - fd.rate(t)).abs() <= 1e-12);
                assert!(
                    (stepper.acceleration()[0] - fd.acceleration(t)).abs()
                        <= 1e-12 * fd.acceleration(t).abs().max(1.0)
                );
            }
            Enforcement::Direct => {}
        }
        match method {
            Enforcement::Direct => assert!((stepper.position()[0] - g).abs() < 1e-12),
            // Rate control holds the velocity exactly (to the central difference of g);
            // the position follows by integration.
            Enforcement::Rate => {
                assert!((stepper.velocity()[0] - gdot).abs() < 1e-6);
                assert!((stepper.position()[0] - g).abs() < 1e-2);
            }
            Enforcement::Full => {
                assert!((stepper.position()[0] - g).abs() < 1e-12);
                assert!((stepper.velocity()[0] - gdot).abs() < 1e-6);
            }
        }
        // The driven mass pulls the free one along.
        assert!(stepper.position()[1].abs() > 1e-3);
    }
}

#[test]
fn a_downstream_linear_system_on_the_alpha_scheme() {
    let k = DMatrix::from_row_slice(2, 2, &[4.0, -4.0, -4.0, 4.0]);
    let system = fem::time::LinearSystem::new(Mass::Lumped(vec![1.0, 2.0]), k);
    let mut scheme = AlphaScheme::new(
        system,
        0.25,
        StepSettings::new(1e-3).with_dirichlet(drive(Enforcement::Direct)),
        &[0.0, 0.0],
        &[0.0, 0.0],
    )
    .expect("valid setup");
    for _ in 0..1000 {
        scheme.step().expect("a linear step");
    }
    assert!((scheme.position()[0] - 0.2 * (3.0f64).sin()).abs() < 1e-12);
    assert_eq!(scheme.factorization_count(), 1);
}
