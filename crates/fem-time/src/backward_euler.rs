//! The backward-Euler acceleration step of the Serac seed, with Dirichlet enforcement by
//! direct, rate or full control.
//!
//! For `M ẍ + C ẋ + f_int(x) = f(t)` the future state is extrapolated from the current one
//! with the acceleration at the end of the step (seed, "Unconstrained ODEs"):
//!
//! ```text
//! x(t+Δt) = x + ẋ Δt + ẍ(t+Δt) Δt²,     ẋ(t+Δt) = ẋ + ẍ(t+Δt) Δt,
//! (M + C Δt + K Δt²) ẍ(t+Δt) = f(t+Δt) − C ẋ − K (x + ẋ Δt)          (linear case)
//! ```
//!
//! With `f_int` nonlinear the same equation is solved for `a = ẍ(t+Δt)` by Newton's method,
//! `R(a) = M a + C (ẋ + a Δt) + f_int(x + ẋ Δt + a Δt²) − f(t+Δt)`, Jacobian
//! `M + C Δt + K_T Δt²`; a linear system takes one Newton step with a matrix factored once.
//!
//! Prescribed dofs `G x = g(t)` (seed, "Imposing single degree-of-freedom constraints") fix the
//! constrained accelerations `a_c` before the solve, so only the free rows are solved:
//!
//! | method | constrained rows replaced by | gives `a_c` = | written back after the step |
//! |---|---|---|---|
//! | direct | `x_c(t+Δt) = g(t+Δt)` | `(g − x_c − ẋ_c Δt)/Δt²` | `x_c = g` |
//! | rate | `ẋ_c(t+Δt) = ġ(t+Δt)` | `(ġ − ẋ_c)/Δt` | `ẋ_c = ġ` |
//! | full | `x_c, ẋ_c, ẍ_c = g, ġ, g̈` | `g̈` (with the predictor of `x_c`, `ẋ_c` set so the update lands on `g`, `ġ`) | `x_c, ẋ_c, ẍ_c = g, ġ, g̈` |
//!
//! The scheme is first-order accurate and unconditionally stable (and dissipative).

use fem_assembly::{SparseCholesky, sparse};
use fem_constraints::{DirichletConditions, Enforcement};

use crate::error::{check_dt, check_initial};
use crate::partition::Partition;
use crate::{Mass, SecondOrderSystem, StepError};

/// Newton's method settings: converged when `‖R_free‖∞ ≤ absolute + relative · scale`, with
/// `scale` the size of the forces in the step (`‖f_int(x_n)‖∞ + ‖f(t+Δt)‖∞ + ‖M a_n‖∞`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Iterations allowed per step.
    pub max_iterations: usize,
    /// Tolerance relative to the force scale.
    pub relative_tolerance: f64,
    /// Absolute tolerance.
    pub absolute_tolerance: f64,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            max_iterations: 25,
            relative_tolerance: 1e-10,
            absolute_tolerance: 1e-14,
        }
    }
}

/// What the last step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Newton iterations (1 for a linear system).
    pub iterations: usize,
    /// Final residual norm of the free rows.
    pub residual: f64,
}

/// The backward-Euler acceleration step (Serac seed) on a system it owns.
///
/// Step contract: the state `(x, ẋ, ẍ)` is at `t_n = t0 + n Δt`; [`BackwardEuler::step`]
/// advances it by one step. Prescribed dofs are set to `g(t0)`, `ġ(t0)` at construction (the
/// seed assumes the constraints consistent with the initial conditions).
#[derive(Debug)]
pub struct BackwardEuler<S: SecondOrderSystem> {
    system: S,
    dt: f64,
    t0: f64,
    step: u64,
    x: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    dirichlet: DirichletConditions,
    partition: Partition,
    newton: NewtonSettings,
    /// Factor of the free block of `M + C Δt + K Δt²` (kept for the whole run when linear).
    factor: Option<SparseCholesky>,
    stats: StepStats,
    /// Scratch.
    xp: Vec<f64>,
    vp: Vec<f64>,
    residual: Vec<f64>,
    work: Vec<f64>,
    correction: Vec<f64>,
}

impl<S: SecondOrderSystem> BackwardEuler<S> {
    /// The stepper from `x(t0) = x0`, `ẋ(t0) = v0` with step `dt` and the given conditions.
    pub fn new(
        system: S,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
        dirichlet: DirichletConditions,
        newton: NewtonSettings,
    ) -> Result<Self, StepError> {
        check_dt(dt)?;
        let n = system.n_dofs();
        check_initial(n, x0, v0)?;
        let partition = Partition::new(n, &dirichlet)?;
        let mut x = x0.to_vec();
        let mut v = v0.to_vec();
        let mut a = vec![0.0; n];
        for (dof, signal, _) in dirichlet.iter() {
            x[dof] = signal.value(t0);
            v[dof] = signal.rate(t0);
            a[dof] = signal.acceleration(t0);
        }
        let mut stepper = Self {
            system,
            dt,
            t0,
            step: 0,
            x,
            v,
            a,
            dirichlet,
            partition,
            newton,
            factor: None,
            stats: StepStats::default(),
            xp: vec![0.0; n],
            vp: vec![0.0; n],
            residual: vec![0.0; n],
            work: vec![0.0; n],
            correction: Vec::new(),
        };
        if stepper.system.is_linear() {
            let x = stepper.x.clone();
            stepper.refactor(&x)?;
        }
        Ok(stepper)
    }

    /// Factors the free block of `M + C Δt + K_T(x) Δt²`.
    fn refactor(&mut self, x: &[f64]) -> Result<(), StepError> {
        let dt = self.dt;
        let k = self.system.tangent_stiffness(x);
        let mut terms = vec![(dt * dt, &k)];
        if let Some(c) = self.system.damping() {
            terms.push((dt, c));
        }
        let full = match self.system.mass() {
            Mass::Lumped(m) => sparse::linear_combination(&terms, Some((1.0, m))),
            Mass::Consistent(m) => {
                terms.push((1.0, m));
                sparse::linear_combination(&terms, None)
            }
        };
        let block = self.partition.restrict(&full);
        match &mut self.factor {
            Some(f) => f.refactor(&block)?,
            None => self.factor = Some(SparseCholesky::new(&block)?),
        }
        Ok(())
    }

    /// `R(a) = M a + C (vp + a Δt) + f_int(xp + a Δt²) − f`, into `self.residual`; returns
    /// `‖R_free‖∞`. `self.work` must hold `f(t+Δt)`.
    fn evaluate_residual(&mut self) -> f64 {
        let dt = self.dt;
        let n = self.x.len();
        let mut x_end = vec![0.0; n];
        for i in 0..n {
            x_end[i] = self.xp[i] + dt * dt * self.a[i];
        }
        self.system.internal_force(&x_end, &mut self.residual);
        let mut ma = vec![0.0; n];
        self.system.mass().mul(&self.a, &mut ma);
        for i in 0..n {
            self.residual[i] += ma[i] - self.work[i];
        }
        if let Some(c) = self.system.damping() {
            let v_end: Vec<f64> = (0..n).map(|i| self.vp[i] + dt * self.a[i]).collect();
            sparse::mul_add(1.0, &mut self.residual, 1.0, c, &v_end);
        }
        self.partition
            .free()
            .iter()
            .fold(0.0f64, |m, &i| m.max(self.residual[i].abs()))
    }

    /// Advances from `t_n` to `t_{n+1}`.
    pub fn step(&mut self) -> Result<StepStats, StepError> {
        let dt = self.dt;
        let t1 = self.t0 + dt * (self.step + 1) as f64;
        let n = self.x.len();
        // Predictor and the constrained accelerations.
        for i in 0..n {
            self.xp[i] = self.x[i] + dt * self.v[i];
            self.vp[i] = self.v[i];
        }
        for (dof, signal, method) in self.dirichlet.iter() {
            self.a[dof] = match method {
                Enforcement::Direct => {
                    (signal.value(t1) - self.x[dof] - dt * self.v[dof]) / (dt * dt)
                }
                Enforcement::Rate => (signal.rate(t1) - self.v[dof]) / dt,
                Enforcement::Full => {
                    let g2 = signal.acceleration(t1);
                    self.xp[dof] = signal.value(t1) - dt * dt * g2;
                    self.vp[dof] = signal.rate(t1) - dt * g2;
                    g2
                }
            };
        }
        self.system.external_force(t1, &mut self.work);
        // Force scale for the Newton tolerance.
        let mut scratch = vec![0.0; n];
        self.system.internal_force(&self.x, &mut scratch);
        let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, e| m.max(e.abs()));
        let mut ma = vec![0.0; n];
        self.system.mass().mul(&self.a, &mut ma);
        let scale = inf(&scratch) + inf(&self.work) + inf(&ma);
        let tolerance = self.newton.absolute_tolerance + self.newton.relative_tolerance * scale;

        let linear = self.system.is_linear();
        let mut residual = self.evaluate_residual();
        let mut iterations = 0;
        while iterations < self.newton.max_iterations && (iterations == 0 || residual > tolerance) {
            if !linear {
                let x_end: Vec<f64> = (0..n).map(|i| self.xp[i] + dt * dt * self.a[i]).collect();
                self.refactor(&x_end)?;
            }
            self.correction.clear();
            self.correction
                .extend(self.partition.free().iter().map(|&i| -self.residual[i]));
            self.factor
                .as_ref()
                .expect("factored")
                .solve_in_place(&mut self.correction);
            for (&i, da) in self.partition.free().iter().zip(&self.correction) {
                self.a[i] += da;
            }
            iterations += 1;
            residual = self.evaluate_residual();
            if linear {
                break;
            }
        }
        if !residual.is_finite() || (!linear && residual > tolerance) {
            return Err(StepError::NewtonDiverged {
                step: self.step + 1,
                iterations,
                residual,
                tolerance,
            });
        }
        for i in 0..n {
            self.x[i] = self.xp[i] + dt * dt * self.a[i];
            self.v[i] = self.vp[i] + dt * self.a[i];
        }
        // Constrained dofs written back by index, on every path.
        for (dof, signal, method) in self.dirichlet.iter() {
            match method {
                Enforcement::Direct => self.x[dof] = signal.value(t1),
                Enforcement::Rate => self.v[dof] = signal.rate(t1),
                Enforcement::Full => {
                    self.x[dof] = signal.value(t1);
                    self.v[dof] = signal.rate(t1);
                    self.a[dof] = signal.acceleration(t1);
                }
            }
        }
        self.step += 1;
        self.stats = StepStats {
            iterations,
            residual,
        };
        Ok(self.stats)
    }

    /// The system being stepped.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// Current time.
    pub fn time(&self) -> f64 {
        self.t0 + self.dt * self.step as f64
    }

    /// Steps taken.
    pub fn step_index(&self) -> u64 {
        self.step
    }

    /// Position.
    pub fn position(&self) -> &[f64] {
        &self.x
    }

    /// Velocity.
    pub fn velocity(&self) -> &[f64] {
        &self.v
    }

    /// Acceleration.
    pub fn acceleration(&self) -> &[f64] {
        &self.a
    }

    /// The Dirichlet conditions.
    pub fn dirichlet(&self) -> &DirichletConditions {
        &self.dirichlet
    }

    /// Kinetic `½ ẋᵀ M ẋ` and potential `V(x)` energy of the current state.
    pub fn energy(&self) -> (f64, f64) {
        (
            0.5 * self.system.mass().norm_squared(&self.v),
            self.system.potential_energy(&self.x),
        )
    }

    /// Numeric factorizations so far (1 for a linear system, whatever the number of steps).
    pub fn factorization_count(&self) -> usize {
        self.factor.as_ref().map_or(0, |f| f.factorization_count())
    }

    /// Iterations and residual of the last step.
    pub fn last_step(&self) -> StepStats {
        self.stats
    }
}
