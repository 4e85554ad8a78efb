//! Dirichlet enforcement by direct, rate and full control (Serac seed) in the backward-Euler
//! acceleration step: what each method holds, and the observed order 1 against an
//! independently computed reference.

use std::sync::Arc;

use fem_constraints::{DirichletConditions, DirichletSet, Enforcement, Signal};
use fem_time::{BackwardEuler, LinearSystem, Mass, Matrix, NewtonSettings, SecondOrderSystem};
use fem_time::{EvalError, NodalStepper, StepSettings, Stepper as _, TangentKind};
use nalgebra::{DMatrix, DVector};
use nalgebra_sparse::{CooMatrix, CsrMatrix};

/// `g(t) = A sin(ω t)` with exact derivatives.
#[derive(Debug)]
struct Sine {
    amplitude: f64,
    omega: f64,
}

impl Signal for Sine {
    fn value(&self, t: f64) -> f64 {
        self.amplitude * (self.omega * t).sin()
    }
    fn rate(&self, t: f64) -> f64 {
        self.amplitude * self.omega * (self.omega * t).cos()
    }
    fn acceleration(&self, t: f64) -> f64 {
        -self.amplitude * self.omega * self.omega * (self.omega * t).sin()
    }
}

const N: usize = 4;

fn csr(dense: &DMatrix<f64>) -> CsrMatrix<f64> {
    let mut coo = CooMatrix::new(dense.nrows(), dense.ncols());
    for i in 0..dense.nrows() {
        for j in 0..dense.ncols() {
            if dense[(i, j)] != 0.0 {
                coo.push(i, j, dense[(i, j)]);
            }
        }
    }
    CsrMatrix::from(&coo)
}

/// A 4-dof chain with a consistent (non-diagonal) mass, springs and Rayleigh damping.
fn matrices() -> (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>) {
    let mut m = DMatrix::zeros(N, N);
    let mut k = DMatrix::zeros(N, N);
    for e in 0..N - 1 {
        let (i, j) = (e, e + 1);
        let stiffness = 10.0 + 5.0 * e as f64;
        let mass = 1.0 + 0.5 * e as f64;
        m[(i, i)] += mass / 3.0;
        m[(j, j)] += mass / 3.0;
        m[(i, j)] += mass / 6.0;
        m[(j, i)] += mass / 6.0;
        k[(i, i)] += stiffness;
        k[(j, j)] += stiffness;
        k[(i, j)] -= stiffness;
        k[(j, i)] -= stiffness;
    }
    k[(N - 1, N - 1)] += 7.0; // a spring to ground at the far end
    let c = &m * 0.1 + &k * 0.01;
    (m, c, k)
}

/// A cubic spring to ground at every dof on top of the chain: f_int = K x + κ x³.
struct CubicChain {
    mass: Mass,
    damping: Matrix,
    stiffness: CsrMatrix<f64>,
    kappa: f64,
}

impl SecondOrderSystem for CubicChain {
    fn n_dofs(&self) -> usize {
        N
    }
    fn mass(&self) -> &Mass {
        &self.mass
    }
    fn damping(&self) -> Option<&Matrix> {
        Some(&self.damping)
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        fem_assembly::sparse::mul_add(0.0, f, 1.0, &self.stiffness, x);
        for (fi, xi) in f.iter_mut().zip(x) {
            *fi += self.kappa * xi.powi(3);
        }
        Ok(())
    }
    fn tangent_kind(&self) -> TangentKind {
        TangentKind::Symmetric
    }
    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        let diagonal: Vec<f64> = x.iter().map(|xi| 3.0 * self.kappa * xi * xi).collect();
        Ok(Matrix::Sparse(fem_assembly::sparse::linear_combination(
            &[(1.0, &self.stiffness)],
            Some((1.0, &diagonal)),
        )))
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        Some(
            0.5 * fem_assembly::sparse::bilinear(&self.stiffness, x, x)
                + 0.25 * self.kappa * x.iter().map(|v| v.powi(4)).sum::<f64>(),
        )
    }
}

fn signal() -> Arc<dyn Signal> {
    Arc::new(Sine {
        amplitude: 0.5,
        omega: 3.0,
    })
}

fn conditions(signal: &Arc<dyn Signal>, method: Enforcement) -> DirichletConditions {
    DirichletConditions::new(&[DirichletSet {
        dofs: vec![fem_constraints::SystemDof::new(0)],
        signal: signal.clone(),
        enforcement: method,
    }])
    .unwrap()
}

/// Reference: the free dofs' ODE `M_uu ü + C_uu u̇ + f_int,u(u, g) = −M_uc g̈ − C_uc ġ` by RK4
/// with a step 1e-4 (error ~1e-15), from u = 0, u̇ = 0.
fn reference(kappa: f64, t_end: f64) -> DVector<f64> {
    let (m, c, k) = matrices();
    let g = Sine {
        amplitude: 0.5,
        omega: 3.0,
    };
    let muu = m.view((1, 1), (N - 1, N - 1)).into_owned();
    let muu_inv = muu.try_inverse().unwrap();
    let rhs = |t: f64, u: &DVector<f64>, v: &DVector<f64>| -> DVector<f64> {
        let mut x = DVector::zeros(N);
        let mut xd = DVector::zeros(N);
        let mut xdd = DVector::zeros(N);
        x[0] = g.value(t);
        xd[0] = g.rate(t);
        xdd[0] = g.acceleration(t);
        for i in 1..N {
            x[i] = u[i - 1];
            xd[i] = v[i - 1];
        }
        let mut force = &m * &xdd + &c * &xd + &k * &x;
        for i in 0..N {
            force[i] += kappa * x[i].powi(3);
        }
        -(&muu_inv * force.rows(1, N - 1))
    };
    let h = 1e-4;
    let steps = (t_end / h).round() as usize;
    let mut u = DVector::zeros(N - 1);
    let mut v = DVector::zeros(N - 1);
    for s in 0..steps {
        let t = s as f64 * h;
        let (k1u, k1v) = (v.clone(), rhs(t, &u, &v));
        let (k2u, k2v) = (
            &v + &k1v * (h / 2.0),
            rhs(
                t + h / 2.0,
                &(&u + &k1u * (h / 2.0)),
                &(&v + &k1v * (h / 2.0)),
            ),
        );
        let (k3u, k3v) = (
            &v + &k2v * (h / 2.0),
            rhs(
                t + h / 2.0,
                &(&u + &k2u * (h / 2.0)),
                &(&v + &k2v * (h / 2.0)),
            ),
        );
        let (k4u, k4v) = (
            &v + &k3v * h,
            rhs(t + h, &(&u + &k3u * h), &(&v + &k3v * h)),
        );
        u += (&k1u + &k2u * 2.0 + &k3u * 2.0 + &k4u) * (h / 6.0);
        v += (&k1v + &k2v * 2.0 + &k3v * 2.0 + &k4v) * (h / 6.0);
    }
    u
}

fn linear_system() -> LinearSystem {
    let (m, c, k) = matrices();
    LinearSystem {
        mass: Mass::Consistent(csr(&m)),
        stiffness: csr(&k),
        damping: Some(Matrix::from(csr(&c))),
        force: None,
        stiffness_kind: fem_time::TangentKind::Symmetric,
    }
}

fn cubic_system() -> CubicChain {
    let (m, c, k) = matrices();
    CubicChain {
        mass: Mass::Consistent(csr(&m)),
        damping: Matrix::from(csr(&c)),
        stiffness: csr(&k),
        kappa: 40.0,
    }
}

fn run<S: SecondOrderSystem>(
    system: S,
    method: Enforcement,
    dt: f64,
    t_end: f64,
    check_each_step: bool,
) -> (Vec<f64>, usize) {
    let g = signal();
    let zero = vec![0.0; N];
    let mut stepper = BackwardEuler::new(
        system,
        StepSettings::new(dt)
            .with_dirichlet(conditions(&g, method))
            .with_newton(NewtonSettings::default()),
        &zero,
        &zero,
    )
    .unwrap();
    let steps = (t_end / dt).round() as usize;
    let mut max_iterations = 0;
    for _ in 0..steps {
        let stats = stepper.step().unwrap();
        max_iterations = max_iterations.max(stats.iterations);
        if check_each_step {
            let t = stepper.time();
            let scale = 1.0;
            let (x, v, a) = (
                stepper.position()[0],
                stepper.velocity_at_step()[0],
                stepper.acceleration()[0],
            );
            match method {
                Enforcement::Direct => assert!((x - g.value(t)).abs() <= 1e-12 * scale),
                Enforcement::Rate => assert!((v - g.rate(t)).abs() <= 1e-12 * scale),
                Enforcement::Full => {
                    assert!((x - g.value(t)).abs() <= 1e-12 * scale);
                    assert!((v - g.rate(t)).abs() <= 1e-12 * scale);
                    assert!((a - g.acceleration(t)).abs() <= 1e-12 * scale);
                }
            }
        }
    }
    (stepper.position()[1..].to_vec(), max_iterations)
}

fn orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}

#[test]
fn each_method_holds_what_it_promises_at_every_step() {
    for method in [Enforcement::Direct, Enforcement::Rate, Enforcement::Full] {
        run(linear_system(), method, 0.01, 2.0, true);
        run(cubic_system(), method, 0.01, 2.0, true);
    }
}

#[test]
fn first_order_with_each_method_linear_and_nonlinear() {
    let t_end = 1.0;
    for kappa in [0.0, 40.0] {
        let exact = reference(kappa, t_end);
        for method in [Enforcement::Direct, Enforcement::Rate, Enforcement::Full] {
            let mut errors = Vec::new();
            let mut newton = 0;
            for dt in [0.004, 0.002, 0.001, 0.0005, 0.00025] {
                let (u, iterations) = if kappa == 0.0 {
                    run(linear_system(), method, dt, t_end, false)
                } else {
                    run(cubic_system(), method, dt, t_end, false)
                };
                newton = newton.max(iterations);
                let error = u
                    .iter()
                    .zip(exact.iter())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                errors.push(error);
            }
            let p = orders(&errors);
            eprintln!("kappa={kappa} {method:?}: errors {errors:?} orders {p:?} newton<={newton}");
            for q in &p[1..] {
                assert!(
                    (q - 1.0).abs() < 0.1,
                    "kappa={kappa} {method:?}: errors {errors:?} orders {p:?}"
                );
            }
            if kappa == 0.0 {
                assert_eq!(newton, 1, "a linear system takes one solve per step");
            }
        }
    }
}

#[test]
fn newton_iterates_on_the_nonlinear_system_and_reports_divergence() {
    let g = signal();
    let zero = vec![0.0; N];
    let mut s = BackwardEuler::new(
        cubic_system(),
        StepSettings::new(0.05)
            .with_dirichlet(conditions(&g, Enforcement::Direct))
            .with_newton(NewtonSettings::default()),
        &zero,
        &zero,
    )
    .unwrap();
    let mut most = 0;
    for _ in 0..40 {
        most = most.max(s.step().unwrap().iterations);
        assert!(s.last_step().residual.is_finite());
    }
    assert!(most >= 2, "Newton took at most {most} iterations");
    // One iteration allowed is not enough: a clear error naming the step.
    let tight = NewtonSettings {
        max_iterations: 1,
        ..NewtonSettings::default()
    };
    let mut s = BackwardEuler::new(
        cubic_system(),
        StepSettings::new(0.05)
            .with_dirichlet(conditions(&g, Enforcement::Direct))
            .with_newton(tight),
        &zero,
        &zero,
    )
    .unwrap();
    let failure = (0..40).find_map(|_| s.step().err()).expect("a step fails");
    assert!(
        matches!(
            failure,
            fem_time::StepError::NewtonDiverged { iterations: 1, .. }
        ),
        "{failure}"
    );
}

#[test]
fn a_linear_system_is_factored_once_per_run() {
    let g = signal();
    let zero = vec![0.0; N];
    let mut s = BackwardEuler::new(
        linear_system(),
        StepSettings::new(0.01)
            .with_dirichlet(conditions(&g, Enforcement::Full))
            .with_newton(NewtonSettings::default()),
        &zero,
        &zero,
    )
    .unwrap();
    for _ in 0..100 {
        s.step().unwrap();
    }
    assert_eq!(s.factorization_count(), 1);
}

#[test]
fn rate_control_drift_is_first_order_and_bounded_for_a_sine() {
    // x_c(t+Δt) = x_c + Δt ġ(t+Δt): a right-endpoint rule for ∫ġ, so the drift of x_c from g is
    // O(Δt) and, for a periodic g, does not grow.
    let g = signal();
    let zero = vec![0.0; N];
    let mut drifts = Vec::new();
    for dt in [0.01, 0.005] {
        let mut s = BackwardEuler::new(
            linear_system(),
            StepSettings::new(dt)
                .with_dirichlet(conditions(&g, Enforcement::Rate))
                .with_newton(NewtonSettings::default()),
            &zero,
            &zero,
        )
        .unwrap();
        let mut worst: f64 = 0.0;
        let steps = (100.0 / dt) as usize;
        for _ in 0..steps {
            s.step().unwrap();
            worst = worst.max((s.position()[0] - g.value(s.time())).abs());
        }
        eprintln!("rate control, dt = {dt}: max |x_c - g| over t in [0, 100] = {worst:e}");
        drifts.push(worst);
    }
    assert!(drifts[0] > 1e-4, "rate control should drift measurably");
    let ratio = drifts[0] / drifts[1];
    assert!((ratio - 2.0).abs() < 0.2, "drift ratio {ratio}");
}

/// The alpha scheme (α = ¼) with each method: what it holds at every step, and order 2.
fn run_alpha(method: Enforcement, dt: f64, t_end: f64, check_each_step: bool) -> Vec<f64> {
    let g = signal();
    let zero = vec![0.0; N];
    let mut scheme = fem_time::AlphaScheme::new(
        linear_system(),
        0.25,
        StepSettings::new(dt).with_dirichlet(conditions(&g, method)),
        &zero,
        &zero,
    )
    .unwrap();
    let steps = (t_end / dt).round() as usize;
    for _ in 0..steps {
        scheme.step().unwrap();
        if check_each_step {
            let t = scheme.time();
            let x = scheme.position()[0];
            // Rate control holds the half-step velocity, (x^n − x^{n−1})/Δt at t − Δt/2.
            let v = scheme.half_step_velocity()[0];
            match method {
                Enforcement::Direct | Enforcement::Full => {
                    assert!((x - g.value(t)).abs() <= 1e-12, "{method:?} t={t}")
                }
                Enforcement::Rate => assert!(
                    (v - g.rate(t - 0.5 * dt)).abs() <= 1e-12,
                    "{method:?} t={t}"
                ),
            }
        }
    }
    scheme.position()[1..].to_vec()
}

#[test]
fn alpha_scheme_holds_each_method_and_is_second_order() {
    let t_end = 1.0;
    let exact = reference(0.0, t_end);
    for method in [Enforcement::Direct, Enforcement::Rate, Enforcement::Full] {
        run_alpha(method, 0.01, 2.0, true);
        let errors: Vec<f64> = [0.02, 0.01, 0.005, 0.0025, 0.00125]
            .iter()
            .map(|&dt| {
                let u = run_alpha(method, dt, t_end, false);
                u.iter()
                    .zip(exact.iter())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        let p = orders(&errors);
        eprintln!("alpha = 1/4, {method:?}: errors {errors:?} orders {p:?}");
        for q in &p[1..] {
            assert!(
                (q - 2.0).abs() < 0.1,
                "{method:?}: errors {errors:?} orders {p:?}"
            );
        }
    }
}

#[test]
fn alpha_scheme_energy_balance_holds_with_constraints_removed_from_the_free_system() {
    // A prescribed dof held at a constant moves nothing: the free system is then an ordinary
    // conservative one and (19) must be conserved (C = 0, f = 0, g = const ≠ 0).
    #[derive(Debug)]
    struct Constant(f64);
    impl Signal for Constant {
        fn value(&self, _: f64) -> f64 {
            self.0
        }
        fn rate(&self, _: f64) -> f64 {
            0.0
        }
        fn acceleration(&self, _: f64) -> f64 {
            0.0
        }
    }
    let (m, _, k) = matrices();
    let g: Arc<dyn Signal> = Arc::new(Constant(0.3));
    for method in [Enforcement::Direct, Enforcement::Rate, Enforcement::Full] {
        let system = LinearSystem {
            mass: Mass::Consistent(csr(&m)),
            stiffness: csr(&k),
            damping: None,
            force: None,
            stiffness_kind: fem_time::TangentKind::Symmetric,
        };
        let x0 = vec![0.3, 0.1, -0.2, 0.05];
        let mut s = fem_time::AlphaScheme::new(
            system,
            0.25,
            StepSettings::new(0.01).with_dirichlet(conditions(&g, method)),
            &x0,
            &[0.0; N],
        )
        .unwrap();
        let e0 = s.energy().unwrap().total;
        for _ in 0..2000 {
            s.step().unwrap();
            assert!(
                (s.energy().unwrap().total - e0).abs() <= 1e-12 * e0,
                "{method:?}: {} vs {e0}",
                s.energy().unwrap().total
            );
            assert_eq!(s.position()[0], 0.3);
        }
    }
}

/// Ramp and hold with the kink between grid points: g = min(t/T, 1)·h.
#[derive(Debug)]
struct RampHold {
    kink: f64,
    height: f64,
}

impl Signal for RampHold {
    fn value(&self, t: f64) -> f64 {
        self.height * (t / self.kink).clamp(0.0, 1.0)
    }
    fn rate(&self, t: f64) -> f64 {
        if (0.0..self.kink).contains(&t) {
            self.height / self.kink
        } else {
            0.0
        }
    }
    fn acceleration(&self, _: f64) -> f64 {
        0.0
    }
}

#[test]
fn ramp_and_hold_rate_control_keeps_an_offset_full_control_does_not() {
    let g: Arc<dyn Signal> = Arc::new(RampHold {
        kink: 0.2522,
        height: 0.02,
    });
    let zero = vec![0.0; N];
    for dt in [0.01, 0.005] {
        let mut offsets = Vec::new();
        for method in [Enforcement::Rate, Enforcement::Full] {
            let mut be = BackwardEuler::new(
                linear_system(),
                StepSettings::new(dt)
                    .with_dirichlet(conditions(&g, method))
                    .with_newton(NewtonSettings::default()),
                &zero,
                &zero,
            )
            .unwrap();
            let mut alpha = fem_time::AlphaScheme::new(
                linear_system(),
                0.25,
                StepSettings::new(dt).with_dirichlet(conditions(&g, method)),
                &zero,
                &zero,
            )
            .unwrap();
            for _ in 0..(1.0 / dt).round() as usize {
                be.step().unwrap();
                alpha.step().unwrap();
            }
            let be_offset = (be.position()[0] - 0.02).abs();
            let alpha_offset = (alpha.position()[0] - 0.02).abs();
            eprintln!(
                "ramp-hold dt={dt} {method:?}: |x_c(1) - g| backward Euler {be_offset:e}, alpha {alpha_offset:e}"
            );
            offsets.push((be_offset, alpha_offset));
        }
        // Rate control integrates ġ across the kink with a one-step rule: a lasting offset of
        // order Δt·ġ; full control holds x_c = g exactly.
        assert!(offsets[0].0 > 0.1 * dt * 0.02 / 0.2522 && offsets[0].1 > 1e-6);
        assert!(offsets[1].0 < 1e-15 && offsets[1].1 < 1e-15);
    }
}

/// A stepper of the chain with prescribed dof 0, built for a step and the conditions.
type Build = dyn Fn(f64, DirichletConditions) -> Box<dyn NodalStepper>;

/// The free dofs at `t_end`, and the prescribed dof's position and velocity error at every
/// step for the methods that hold them.
fn run_any(build: &Build, method: Enforcement, dt: f64, t_end: f64) -> Vec<f64> {
    let g = signal();
    let mut s = build(dt, conditions(&g, method));
    let steps = (t_end / dt).round() as usize;
    for _ in 0..steps {
        s.step().unwrap();
        let t = s.time();
        if method != Enforcement::Rate {
            assert!(
                (s.position()[0] - g.value(t)).abs() <= 1e-12,
                "{method:?}: x_c = {} against g = {} at t = {t}",
                s.position()[0],
                g.value(t)
            );
        }
    }
    s.position()[1..].to_vec()
}

/// Observed orders of the free dofs' error at t = 1 against the RK4 reference, dt halving.
fn observed_orders(build: &Build, method: Enforcement, kappa: f64) -> (Vec<f64>, Vec<f64>) {
    let exact = reference(kappa, 1.0);
    let errors: Vec<f64> = [0.02, 0.01, 0.005, 0.0025]
        .iter()
        .map(|&dt| {
            run_any(build, method, dt, 1.0)
                .iter()
                .zip(exact.iter())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        })
        .collect();
    let p = orders(&errors);
    (errors, p)
}

/// Each of direct, rate and full control in every second-order nodal stepper: the prescribed
/// dof holds what the method promises, and the free dofs converge at order 2 (the alpha
/// scheme's Newton path and the energy-conserving variant on the cubic chain, Moreau–Jean
/// θ = ½ on the linear and the cubic chain).
#[test]
fn every_second_order_stepper_holds_each_method_at_order_two() {
    let zero = vec![0.0; N];
    let alpha_newton: Box<Build> = Box::new(move |dt, d| {
        Box::new(
            fem_time::AlphaScheme::new(
                cubic_system(),
                0.25,
                StepSettings::new(dt).with_dirichlet(d),
                &[0.0; N],
                &[0.0; N],
            )
            .unwrap(),
        )
    });
    let energy_conserving: Box<Build> = Box::new(move |dt, d| {
        Box::new(
            fem_time::NonlinearAlphaScheme::energy_conserving(
                cubic_system(),
                StepSettings::new(dt).with_dirichlet(d),
                &[0.0; N],
                &[0.0; N],
            )
            .unwrap(),
        )
    });
    let mj_linear: Box<Build> = Box::new(move |dt, d| {
        Box::new(
            fem_time::MoreauJean::trapezoidal(
                linear_system(),
                StepSettings::new(dt).with_dirichlet(d),
                &[0.0; N],
                &[0.0; N],
            )
            .unwrap(),
        )
    });
    let mj_cubic: Box<Build> = Box::new(move |dt, d| {
        Box::new(
            fem_time::MoreauJean::trapezoidal(
                cubic_system(),
                StepSettings::new(dt).with_dirichlet(d),
                &[0.0; N],
                &[0.0; N],
            )
            .unwrap(),
        )
    });
    let _ = zero;
    for (name, build, kappa) in [
        ("alpha scheme, Newton (cubic)", &alpha_newton, 40.0),
        ("energy-conserving alpha (cubic)", &energy_conserving, 40.0),
        ("Moreau-Jean 1/2 (linear)", &mj_linear, 0.0),
        ("Moreau-Jean 1/2 (cubic)", &mj_cubic, 40.0),
    ] {
        for method in [Enforcement::Direct, Enforcement::Rate, Enforcement::Full] {
            let (errors, p) = observed_orders(build.as_ref(), method, kappa);
            eprintln!("{name}, {method:?}: errors {errors:?} orders {p:.3?}");
            let last = *p.last().unwrap();
            assert!(
                (1.8..2.3).contains(&last),
                "{name}, {method:?}: orders {p:?} (errors {errors:?})"
            );
        }
    }
}
