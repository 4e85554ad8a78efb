//! How a downstream code uses `fem` as a library: it defines its own small system by
//! implementing the public trait, attaches a Dirichlet set driven by an expression, and steps
//! it with each stepper. Nothing here uses the YAML front end.

use std::sync::Arc;

use fem::constraints::{
    DirichletConditions, DirichletSet, Enforcement, Prescribed, Signal, TimeFunction,
};
use fem::time::{AlphaScheme, BackwardEuler, Mass, NewtonSettings, SecondOrderSystem};
use nalgebra_sparse::{CooMatrix, CsrMatrix};

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
    fn internal_force(&self, x: &[f64], f: &mut [f64]) {
        let s = x[0] - x[1];
        let spring = self.k * s + self.kappa * s.powi(3);
        f[0] = spring;
        f[1] = -spring;
    }
    fn tangent_stiffness(&self, x: &[f64]) -> CsrMatrix<f64> {
        let s = x[0] - x[1];
        let kt = self.k + 3.0 * self.kappa * s * s;
        let mut coo = CooMatrix::new(2, 2);
        coo.push(0, 0, kt);
        coo.push(0, 1, -kt);
        coo.push(1, 0, -kt);
        coo.push(1, 1, kt);
        CsrMatrix::from(&coo)
    }
    fn potential_energy(&self, x: &[f64]) -> f64 {
        let s = x[0] - x[1];
        0.5 * self.k * s * s + 0.25 * self.kappa * s.powi(4)
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
            1e-3,
            0.0,
            &[0.0, 0.0],
            &[0.0, 0.0],
            drive(method),
            NewtonSettings::default(),
        )
        .expect("valid setup");
        for _ in 0..2000 {
            stepper.step().expect("Newton converges");
        }
        let t = stepper.time();
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
    let mut k = CooMatrix::new(2, 2);
    for (i, j, v) in [(0, 0, 4.0), (0, 1, -4.0), (1, 0, -4.0), (1, 1, 4.0)] {
        k.push(i, j, v);
    }
    let system = fem::time::LinearSystem {
        mass: Mass::Lumped(vec![1.0, 2.0]),
        stiffness: CsrMatrix::from(&k),
        damping: None,
        force: None,
    };
    let mut scheme = AlphaScheme::with_dirichlet(
        system,
        0.25,
        1e-3,
        0.0,
        &[0.0, 0.0],
        &[0.0, 0.0],
        drive(Enforcement::Direct),
    )
    .expect("valid setup");
    for _ in 0..1000 {
        scheme.step().expect("a linear step");
    }
    assert!((scheme.position()[0] - 0.2 * (3.0f64).sin()).abs() < 1e-12);
    assert_eq!(scheme.factorization_count(), 1);
}
