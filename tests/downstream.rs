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
        dofs: vec![fem::constraints::SystemDof::new(0)],
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
            Enforcement::Rate => {
                assert!((stepper.velocity_at_step()[0] - fd.rate(t)).abs() <= 1e-12)
            }
            Enforcement::Full => {
                assert!((stepper.velocity_at_step()[0] - fd.rate(t)).abs() <= 1e-12);
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
                assert!((stepper.velocity_at_step()[0] - gdot).abs() < 1e-6);
                assert!((stepper.position()[0] - g).abs() < 1e-2);
            }
            Enforcement::Full => {
                assert!((stepper.position()[0] - g).abs() < 1e-12);
                assert!((stepper.velocity_at_step()[0] - gdot).abs() < 1e-6);
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

/// The downstream program of `examples/downstream_stepper.rs`: a stepper and a model written
/// outside `fem`, on its public parts only.
#[path = "../examples/downstream_stepper.rs"]
mod downstream_stepper;

/// The downstream Störmer–Verlet is second order and keeps the energy of an oscillator without
/// drift: the time layer's public parts (clock, Dirichlet control, the stepper interface) are
/// enough to write a correct stepper outside `fem`.
#[test]
fn a_downstream_stepper_is_second_order_and_symplectic() {
    use downstream_stepper::StormerVerlet;
    use fem::time::{LinearSystem, NodalStepper, StepSettings, Stepper};
    let omega = 3.0;
    let oscillator = || {
        LinearSystem::new(
            Mass::Lumped(vec![1.0]),
            DMatrix::from_element(1, 1, omega * omega),
        )
    };
    let error_at = |dt: f64| {
        let mut s =
            StormerVerlet::new(oscillator(), StepSettings::new(dt), &[1.0], &[0.0]).unwrap();
        let steps = (2.0 / dt).round() as u64;
        for _ in 0..steps {
            s.step().unwrap();
        }
        (s.position()[0] - (omega * s.time()).cos()).abs()
    };
    let (coarse, fine) = (error_at(0.01), error_at(0.005));
    let order = (coarse / fine).log2();
    assert!((order - 2.0).abs() < 0.05, "order {order}");
    // 10⁴ steps: the energy oscillates within O(dt²) and does not drift.
    let mut s = StormerVerlet::new(oscillator(), StepSettings::new(0.01), &[1.0], &[0.0]).unwrap();
    let e0 = s.energy().unwrap().total;
    let mut worst: f64 = 0.0;
    for _ in 0..10_000 {
        s.step().unwrap();
        worst = worst.max((s.energy().unwrap().total - e0).abs() / e0);
    }
    assert!(worst < 1e-3, "energy error {worst}");
}

/// The downstream model and stepper are selected from YAML, refused settings named, and a run
/// resumed from a checkpoint is the uninterrupted run: fem's run loop drives the downstream
/// stepper like its own.
#[test]
fn a_downstream_model_and_stepper_run_from_yaml() {
    use fem::input::ModelRegistry;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/chain.yaml");
    let input = fem::load_with::<downstream_stepper::Models>(&path).unwrap();
    assert_eq!(input.model.name(), "chain");
    let (_, mut model) = fem::prepare_with::<downstream_stepper::Models>(&path, None).unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("downstream_chain");
    let _ = std::fs::remove_dir_all(&dir);
    let options = fem::drive::RunOptions::new(&dir, "chain");
    let summary = fem::drive::drive(model.as_mut(), &options).unwrap();
    assert_eq!(summary.steps, 2500);
    let energy = summary.energy.unwrap();
    assert!(energy.relative_change() < 1e-4, "{energy:?}");
    // A scheme the model does not offer, and a setting its scheme does not read.
    for (text, key) in [
        ("scheme: stormer_verlet", "scheme: newmark"),
        (
            "scheme: stormer_verlet",
            "scheme: stormer_verlet, alpha: 0.25",
        ),
    ] {
        let yaml = std::fs::read_to_string(&path).unwrap().replace(text, key);
        let parsed = fem::parse_with::<downstream_stepper::Models>(&yaml, &path).unwrap();
        let Err(err) = parsed.build(&path) else {
            panic!("{key} was accepted")
        };
        let err = err.to_string();
        assert!(err.contains("time."), "{err}");
    }
}
