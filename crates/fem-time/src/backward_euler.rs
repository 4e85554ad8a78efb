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

use std::borrow::Cow;

use fem_assembly::sparse;
use fem_constraints::Enforcement;
use nalgebra_sparse::CsrMatrix;

use crate::control::{DirichletControl, free_inf_norm};
use crate::step_matrix::{Coefficients, StepMatrix, Terms};
use crate::stepper::{
    Energy, Invariant, NodalStepper, StateField, StateKind, StepReport, Stepper, restored,
};
use crate::system::damping_csr;
use crate::{Clock, TangentKind};
use crate::{NewtonSettings, SecondOrderSystem, StepError, StepSettings, StepStart};

/// The name of the backward-Euler acceleration step of the Serac seed in input files (`time.scheme: backward_euler`).
pub const NAME: &str = "backward_euler";

/// The backward-Euler acceleration step (Serac seed) on a system it owns.
///
/// Step contract: the state `(x, ẋ, ẍ)` is at `t_n = t0 + n Δt`; [`Stepper::step`] advances it
/// by one step and reports the Newton iterations and the final residual of the free rows
/// (`‖R_free‖∞`). Newton converges when `‖R_free‖∞ ≤ absolute + relative · scale`, `scale`
/// the size of the forces in the step (`‖f_int(x_n)‖∞ + ‖f(t+Δt)‖∞ + ‖M a_n‖∞`). Prescribed
/// dofs are set to `g(t0)`, `ġ(t0)` at construction (the seed assumes the constraints
/// consistent with the initial conditions).
#[derive(Debug)]
pub struct BackwardEuler<S: SecondOrderSystem> {
    system: S,
    clock: Clock,
    x: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    control: Option<DirichletControl>,
    newton: NewtonSettings,
    damping: Option<CsrMatrix<f64>>,
    /// The free block of `M + C Δt + K Δt²` (factored once for the run when linear).
    matrix: Option<StepMatrix>,
    last: StepReport,
    /// `Σ (f^{n+1}, x^{n+1} − x^n)`, `Σ Δt (C v^{n+1}, v^{n+1})` and the prescribed dofs'
    /// reaction work `Σ (r^{n+1}, x^{n+1} − x^n)_c` over the steps taken.
    external_work: f64,
    dissipated: f64,
    reaction_work: f64,
    /// Scratch.
    xp: Vec<f64>,
    vp: Vec<f64>,
    residual: Vec<f64>,
    work: Vec<f64>,
    correction: Vec<f64>,
}

impl<S: SecondOrderSystem> BackwardEuler<S> {
    /// The stepper from `x(t0) = x0`, `ẋ(t0) = v0`.
    pub fn new(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        if system.tangent_kind() == TangentKind::NotProvided {
            return Err(StepError::NeedsTangent {
                scheme: "backward Euler",
            });
        }
        let n = system.n_dofs();
        let StepStart {
            clock,
            control,
            newton,
            x,
            v,
        } = settings.start(n, x0, v0)?;
        let t0 = clock.t0();
        let mut a = vec![0.0; n];
        if let Some(c) = &control {
            for (dof, signal, _) in c.iter() {
                a[dof] = signal.acceleration(t0);
            }
        }
        let damping = damping_csr(&system);
        let mut stepper = Self {
            system,
            clock,
            x,
            v,
            a,
            control,
            newton,
            damping,
            matrix: None,
            last: StepReport::default(),
            external_work: 0.0,
            dissipated: 0.0,
            reaction_work: 0.0,
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
        let dt = self.clock.dt();
        let clock = self.clock;
        match &mut self.matrix {
            Some(m) => {
                let k = m.stiffness_mut().expect("the matrix has a stiffness term");
                self.system
                    .tangent_into(x, k)
                    .map_err(|e| clock.failed(e))?;
                m.refactor()?;
            }
            None => {
                let k = self.system.tangent(x).map_err(|e| clock.failed(e))?;
                let symmetry = self
                    .system
                    .tangent_kind()
                    .symmetry()
                    .expect("checked when built");
                self.matrix = Some(StepMatrix::new(
                    Terms {
                        mass: self.system.mass(),
                        damping: self.damping.as_ref(),
                        stiffness: Some(&k.to_csr()),
                    },
                    Coefficients {
                        mass: 1.0,
                        damping: dt,
                        stiffness: dt * dt,
                    },
                    symmetry,
                    self.control.as_ref(),
                    self.system.dof_points(),
                )?)
            }
        }
        Ok(())
    }

    /// `R(a) = M a + C (vp + a Δt) + f_int(xp + a Δt²) − f`, into `self.residual`; returns
    /// `‖R_free‖∞`. `self.work` must hold `f(t+Δt)`.
    fn evaluate_residual(&mut self) -> Result<f64, StepError> {
        let dt = self.clock.dt();
        let n = self.x.len();
        let mut x_end = vec![0.0; n];
        for i in 0..n {
            x_end[i] = self.xp[i] + dt * dt * self.a[i];
        }
        let clock = self.clock;
        self.system
            .internal_force(&x_end, &mut self.residual)
            .map_err(|e| clock.failed(e))?;
        let mut ma = vec![0.0; n];
        self.system.mass().mul(&self.a, &mut ma);
        for i in 0..n {
            self.residual[i] += ma[i] - self.work[i];
        }
        if let Some(c) = &self.damping {
            let v_end: Vec<f64> = (0..n).map(|i| self.vp[i] + dt * self.a[i]).collect();
            sparse::mul_add(1.0, &mut self.residual, 1.0, c, &v_end);
        }
        Ok(free_inf_norm(self.control.as_ref(), &self.residual))
    }

    /// Advances from `t_n` to `t_{n+1}`.
    fn advance(&mut self) -> Result<StepReport, StepError> {
        let dt = self.clock.dt();
        let t1 = self.clock.time_at(self.clock.step() + 1);
        let n = self.x.len();
        // Predictor and the constrained accelerations.
        for i in 0..n {
            self.xp[i] = self.x[i] + dt * self.v[i];
            self.vp[i] = self.v[i];
        }
        if let Some(c) = &self.control {
            for (dof, signal, method) in c.iter() {
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
        }
        self.system.external_force(t1, &mut self.work);
        // Force scale for the Newton tolerance.
        let mut scratch = vec![0.0; n];
        let clock = self.clock;
        self.system
            .internal_force(&self.x, &mut scratch)
            .map_err(|e| clock.failed(e))?;
        let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, e| m.max(e.abs()));
        let mut ma = vec![0.0; n];
        self.system.mass().mul(&self.a, &mut ma);
        let scale = inf(&scratch) + inf(&self.work) + inf(&ma);
        let tolerance = self.newton.absolute_tolerance + self.newton.relative_tolerance * scale;

        let linear = self.system.is_linear();
        let mut residual = self.evaluate_residual()?;
        let mut iterations = 0;
        while iterations < self.newton.max_iterations && (iterations == 0 || residual > tolerance) {
            if !linear {
                let x_end: Vec<f64> = (0..n).map(|i| self.xp[i] + dt * dt * self.a[i]).collect();
                self.refactor(&x_end)?;
            }
            self.correction.clear();
            match &self.control {
                Some(c) => self
                    .correction
                    .extend(c.free().iter().map(|&i| -self.residual[i])),
                None => self.correction.extend(self.residual.iter().map(|r| -r)),
            }
            self.matrix
                .as_ref()
                .expect("factored")
                .solve_in_place(&mut self.correction);
            match &self.control {
                Some(c) => {
                    for (&i, da) in c.free().iter().zip(&self.correction) {
                        self.a[i] += da;
                    }
                }
                None => {
                    for (a, da) in self.a.iter_mut().zip(&self.correction) {
                        *a += da;
                    }
                }
            }
            iterations += 1;
            residual = self.evaluate_residual()?;
            if linear {
                break;
            }
        }
        if !residual.is_finite() || (!linear && residual > tolerance) {
            return Err(StepError::NewtonDiverged {
                step: self.clock.step() + 1,
                iterations,
                residual,
                tolerance,
            });
        }
        let mut work = 0.0;
        let x_old: Vec<(usize, f64)> = match &self.control {
            Some(c) => c
                .conditions()
                .dofs()
                .iter()
                .map(|&d| (d, self.x[d]))
                .collect(),
            None => Vec::new(),
        };
        for i in 0..n {
            let x_new = self.xp[i] + dt * dt * self.a[i];
            work += self.work[i] * (x_new - self.x[i]);
            self.x[i] = x_new;
            self.v[i] = self.vp[i] + dt * self.a[i];
        }
        // Constrained dofs written back by index, on every path.
        if let Some(c) = &self.control {
            for (dof, signal, method) in c.iter() {
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
        }
        self.external_work += work;
        // The reaction at a prescribed dof is its row of R (the free rows are zero).
        for (d, x0) in x_old {
            self.reaction_work += self.residual[d] * (self.x[d] - x0);
        }
        if let Some(c) = &self.damping {
            self.dissipated += dt * sparse::bilinear(c, &self.v, &self.v);
        }
        self.clock.advance();
        if self.x.iter().chain(&self.v).any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                step: self.clock.step(),
                t: t1,
            });
        }
        self.last = StepReport {
            iterations,
            residual,
            constraint_violation: 0.0,
        };
        Ok(self.last)
    }

    /// The system being stepped.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// Acceleration.
    pub fn acceleration(&self) -> &[f64] {
        &self.a
    }

    /// The Dirichlet conditions (none when the stepper has no prescribed dofs).
    pub fn has_dirichlet(&self) -> bool {
        self.control.is_some()
    }

    /// Numeric factorizations so far (1 for a linear system, whatever the number of steps).
    pub fn factorization_count(&self) -> usize {
        self.matrix.as_ref().map_or(0, StepMatrix::factorizations)
    }

    /// Iterations and residual of the last step.
    pub fn last_step(&self) -> StepReport {
        self.last
    }
}

impl<S: SecondOrderSystem> Stepper for BackwardEuler<S> {
    fn step(&mut self) -> Result<StepReport, StepError> {
        self.advance()
    }
    fn clock(&self) -> Clock {
        self.clock
    }
    /// Kinetic `½ ẋᵀ M ẋ` and potential `V(x)` of the current state, with the work of the
    /// applied forces `Σ (f^{n+1}, x^{n+1} − x^n)` and the damping's `Σ Δt (C v^{n+1}, v^{n+1})`;
    /// the balance changes by the scheme's own (first-order) dissipation.
    fn energy(&self) -> Option<Energy> {
        let potential = self.system.potential_energy(&self.x)?;
        let mut e = Energy::new(0.5 * self.system.mass().norm_squared(&self.v), potential);
        e.external_work = self.external_work;
        e.dissipated = self.dissipated;
        e.reaction_work = self.reaction_work;
        Some(e)
    }
    fn invariant(&self) -> Invariant {
        Invariant::None
    }
    fn state(&self) -> Vec<StateField<'_>> {
        vec![
            StateField::dofs("position", &self.x),
            StateField::dofs("velocity", &self.v),
            StateField::dofs("acceleration", &self.a),
            StateField::owned(
                "balance",
                StateKind::Other,
                vec![self.external_work, self.dissipated, self.reaction_work],
            ),
        ]
    }
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.x.len();
        self.x.copy_from_slice(restored(fields, "position", n)?);
        self.v.copy_from_slice(restored(fields, "velocity", n)?);
        self.a.copy_from_slice(restored(fields, "acceleration", n)?);
        let b = restored(fields, "balance", 3)?;
        (self.external_work, self.dissipated, self.reaction_work) = (b[0], b[1], b[2]);
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl<S: SecondOrderSystem> NodalStepper for BackwardEuler<S> {
    fn position(&self) -> &[f64] {
        &self.x
    }
    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.v)
    }
}
