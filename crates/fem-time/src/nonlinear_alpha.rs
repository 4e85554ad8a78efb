//! The energy-conserving nonlinear alpha scheme of Glowinski–Holmström (24)–(32), (63).
//!
//! For `M ẍ + A x + C ẋ + ∇V(x) = f(t)` (24) — a [`SecondOrderSystem`] whose internal force
//! splits into a constant part `A x` ([`SecondOrderSystem::constant_stiffness`]) and a rest
//! `g(x) = f_int(x) − A x` with a *discrete gradient* `ḡ(a, b)`:
//!
//! ```text
//! M (x^{n+1} − 2x^n + x^{n−1}) / Δt² + A (α x^{n+1} + (1 − 2α) x^n + α x^{n−1})
//!   + C (x^{n+1} − x^{n−1}) / (2Δt) + ḡ(x^{n−1/2}, x^{n+1/2}) = f^n,   x^{n±1/2} = (x^{n±1} + x^n)/2
//! ```
//!
//! For a diagonal `V = Σ Φ_i(x_i)` (25)–(26), `ḡ` is (30),
//! `2 (Φ_i(x_i^{n+1/2}) − Φ_i(x_i^{n−1/2})) / (x_i^{n+1} − x_i^{n−1})`; for the colliding strings
//! it is the time-discretized penalty (62)–(63) (both in [`crate::potential`]). A system that
//! gives no discrete gradient of its own ([`SecondOrderSystem::discrete_gradient`] returns
//! `false`) gets the *average vector field* `ḡ(a, b) = ∫₀¹ g(a + s(b − a)) ds`, integrated by
//! 3-point Gauss–Legendre: a discrete gradient exactly when `g` is a polynomial gradient of
//! degree ≤ 5 in `s` (a quartic potential, say), and a sixth-order one otherwise. It needs no
//! potential at all, so the scheme also takes forces that are not gradients (then there is
//! no energy to conserve).
//!
//! Any `ḡ` with `(ḡ(a, b), b − a) = V(b) − V(a)` makes, with `C = 0` and `f = 0`,
//!
//! ```text
//! E^{n+1/2} = ½ (M_α d^{n+1}/Δt, d^{n+1}/Δt) + ½ (A x^{n+1/2}, x^{n+1/2}) + V(x^{n+1/2}),
//! M_α = M + Δt² (α − ¼) A,   d^{n+1} = x^{n+1} − x^n                         (19) + (32)
//! ```
//!
//! constant to the Newton tolerance (multiply the scheme by `(x^{n+1} − x^{n−1})/(2Δt)`). With
//! damping and forcing, `E^{n+1/2} − E^{n−1/2} = Δt (f^n − C v^n, v^n)`,
//! `v^n = (x^{n+1} − x^{n−1})/(2Δt)`; both sums are kept in the [`Energy`].
//!
//! # As implemented
//! Each step solves for the second difference `δ = x^{n+1} − 2x^n + x^{n−1}` (as
//! [`crate::AlphaScheme`] does), multiplied through by `Δt²`:
//!
//! ```text
//! R(δ) = M δ + Δt² A (x^n + α δ) + Δt C (d^n + δ/2) + Δt² (ḡ(x^n − d^n/2, x^n + (d^n + δ)/2) − f^n)
//! J    = M + α Δt² A + Δt/2 C + Δt²/2 ∂_b ḡ
//! ```
//!
//! by [`NewtonSolver`] (sparse Cholesky, or LU for an unsymmetric tangent), from the guess `δ`
//! of the previous step. The start (64), `x^{−1} = x^1 − 2Δt x_1`, is solved for `e` in
//! `x^{±1} = x^0 ± Δt x_1 + e`:
//!
//! ```text
//! 2 M e + Δt² A (x^0 + 2α e) + Δt² C x_1 + Δt² (ḡ(x^0 + (e − Δt x_1)/2, x^0 + (e + Δt x_1)/2) − f^0) = 0.
//! ```
//!
//! Prescribed dofs fix `δ_c` as in [`crate::AlphaScheme`] (direct and full hold `x^{n+1} = g`,
//! rate `d^{n+1} = Δt ġ(t_{n+1/2})`); full control gives the free rows the exact inertia of
//! the prescribed motion (`Δt² M g̈` in place of `M δ_c`).

use std::borrow::Cow;

use fem_assembly::{Factorization, sparse};
use fem_constraints::Enforcement;
use nalgebra_sparse::CsrMatrix;

use crate::control::DirichletControl;
use crate::error::check_alpha;
use crate::newton::{NewtonReport, NewtonSolver, NonlinearProblem};
use crate::stepper::{
    Energy, Invariant, NodalStepper, StateField, StateKind, StepReport, Stepper, restored,
};
use crate::system::damping_csr;
use crate::{Clock, EvalError};
use crate::{Mass, SecondOrderSystem, StepError, StepSettings, StepStart};

/// The name of the energy-conserving alpha scheme (31)/(63) in input files (`time.scheme: energy_conserving_alpha`).
pub const NAME: &str = "energy_conserving_alpha";

/// Gauss–Legendre points on `[0, 1]` and weights, 3 points (exact to degree 5).
const AVF_POINTS: [(f64, f64); 3] = [
    (0.112_701_665_379_258_31, 5.0 / 18.0),
    (0.5, 8.0 / 18.0),
    (0.887_298_334_620_741_7, 5.0 / 18.0),
];

/// The nonlinear alpha scheme (31)/(63) on a system it owns.
///
/// Step contract: after construction (which solves the start (64)) the state is `x^0` at `t0`
/// and [`Stepper::energy`] is that of `[t_{−1}, t_0]` (with the fictitious `x^{−1}`); each
/// [`Stepper::step`] advances by one `dt`, owns the time (`t_n = t0 + n dt`) and reports
/// Newton's iterations and residual.
#[derive(Debug)]
pub struct NonlinearAlphaScheme<S: SecondOrderSystem> {
    system: S,
    alpha: f64,
    clock: Clock,
    /// `x^n`.
    x: Vec<f64>,
    /// `d^n = x^n − x^{n−1}`.
    d: Vec<f64>,
    /// Guess for the next `δ` (the last `δ`).
    delta: Vec<f64>,
    /// The initial velocity.
    v0: Vec<f64>,
    damping: Option<CsrMatrix<f64>>,
    /// `M + α Δt² A + Δt/2 C` (without the discrete gradient's part).
    base: CsrMatrix<f64>,
    /// The Jacobian's factorization (symbolic analysis kept while its pattern is).
    jacobian: Option<Factorization>,
    control: Option<DirichletControl>,
    newton: Option<NewtonSolver>,
    energy: Energy,
    has_energy: bool,
    last: NewtonReport,
    total_iterations: u64,
}

/// The residual of one step (or of the start) for [`NewtonSolver`], in the free unknowns.
struct StepEquation<'a, S: SecondOrderSystem> {
    system: &'a S,
    control: Option<&'a DirichletControl>,
    clock: Clock,
    damping: Option<&'a CsrMatrix<f64>>,
    jacobian: &'a mut Option<Factorization>,
    alpha: f64,
    dt: f64,
    x: &'a [f64],
    /// `d^n` for a step; `Δt x_1` for the start.
    d: &'a [f64],
    force: &'a [f64],
    base: &'a CsrMatrix<f64>,
    start: bool,
    /// The full unknown (constrained entries fixed).
    full: Vec<f64>,
    /// What the mass multiplies at constrained dofs (`δ_c`, or `Δt² g̈` under full control).
    mass_arg: Vec<(usize, f64)>,
    a: Vec<f64>,
    b: Vec<f64>,
    work: Vec<f64>,
    r: Vec<f64>,
}

impl<S: SecondOrderSystem> StepEquation<'_, S> {
    fn set(&mut self, y: &[f64]) {
        match self.control {
            Some(p) => p.scatter_free(y, &mut self.full),
            None => self.full.copy_from_slice(y),
        }
    }

    /// The half-step states `a = x^{n−1/2}`, `b = x^{n+1/2}` for the current unknown.
    fn half_steps(&mut self) {
        let y = &self.full;
        for i in 0..self.x.len() {
            if self.start {
                self.a[i] = self.x[i] + 0.5 * (y[i] - self.d[i]);
                self.b[i] = self.x[i] + 0.5 * (y[i] + self.d[i]);
            } else {
                self.a[i] = self.x[i] - 0.5 * self.d[i];
                self.b[i] = self.x[i] + 0.5 * (self.d[i] + y[i]);
            }
        }
    }

    /// Writes the discrete gradient of the rest `g` at `(a, b)` into `work`.
    fn discrete_gradient(&mut self) -> Result<(), StepError> {
        if self
            .system
            .discrete_gradient(&self.a, &self.b, &mut self.work)
        {
            return Ok(());
        }
        average_vector_field(self.system, &self.a, &self.b, &mut self.work)
            .map_err(|e| self.clock.failed(e))
    }
}

/// `∫₀¹ g(a + s(b − a)) ds` by 3-point Gauss, `g = f_int − A x`, into `out`.
fn average_vector_field<S: SecondOrderSystem + ?Sized>(
    system: &S,
    a: &[f64],
    b: &[f64],
    out: &mut [f64],
) -> Result<(), EvalError> {
    let n = a.len();
    let mut xs = vec![0.0; n];
    let mut f = vec![0.0; n];
    out.fill(0.0);
    for (s, w) in AVF_POINTS {
        for i in 0..n {
            xs[i] = a[i] + s * (b[i] - a[i]);
        }
        system.internal_force(&xs, &mut f)?;
        if let Some(k) = system.constant_stiffness() {
            sparse::mul_add(1.0, &mut f, -1.0, k, &xs);
        }
        out.iter_mut().zip(&f).for_each(|(o, f)| *o += w * f);
    }
    Ok(())
}

/// `c_a ∂ḡ/∂a + c_b ∂ḡ/∂b` of the average vector field:
/// `Σ_q w_q (c_a (1 − s_q) + c_b s_q) (K_T − A)(a + s_q (b − a))`.
fn average_vector_field_jacobian<S: SecondOrderSystem + ?Sized>(
    system: &S,
    a: &[f64],
    b: &[f64],
    c_a: f64,
    c_b: f64,
) -> Result<CsrMatrix<f64>, EvalError> {
    let n = a.len();
    let mut xs = vec![0.0; n];
    let mut tangents = Vec::with_capacity(3);
    for (s, _) in AVF_POINTS {
        for i in 0..n {
            xs[i] = a[i] + s * (b[i] - a[i]);
        }
        tangents.push(system.tangent(&xs)?.to_csr().into_owned());
    }
    let mut terms: Vec<(f64, &CsrMatrix<f64>)> = AVF_POINTS
        .iter()
        .zip(&tangents)
        .map(|(&(s, w), k)| (w * (c_a * (1.0 - s) + c_b * s), k))
        .collect();
    if let Some(k) = system.constant_stiffness() {
        terms.push((-0.5 * (c_a + c_b), k));
    }
    Ok(sparse::linear_combination(&terms, None))
}

impl<S: SecondOrderSystem> NonlinearProblem for StepEquation<'_, S> {
    fn n_unknowns(&self) -> usize {
        self.control.map_or(self.x.len(), |p| p.free().len())
    }
    fn residual(&mut self, y: &[f64], out: &mut [f64]) -> Result<(), StepError> {
        self.set(y);
        let n = self.x.len();
        let dt2 = self.dt * self.dt;
        self.half_steps();
        self.discrete_gradient()?;
        // Mass term (under full control, the exact inertia of the prescribed motion).
        let mut m_arg = Cow::Borrowed(&self.full[..]);
        if !self.mass_arg.is_empty() {
            let owned = m_arg.to_mut();
            for &(i, v) in &self.mass_arg {
                owned[i] = v;
            }
        }
        self.system.mass().mul(&m_arg, &mut self.r);
        let (c_mass, c_alpha) = if self.start { (2.0, 2.0) } else { (1.0, 1.0) };
        for i in 0..n {
            self.r[i] = c_mass * self.r[i] + dt2 * (self.work[i] - self.force[i]);
        }
        // Stiffness on x^n + α δ (step) or x^0 + 2α e (start).
        if let Some(a) = self.system.constant_stiffness() {
            let z: Vec<f64> = (0..n)
                .map(|i| self.x[i] + c_alpha * self.alpha * self.full[i])
                .collect();
            sparse::mul_add(1.0, &mut self.r, dt2, a, &z);
        }
        if let Some(c) = self.damping {
            // Step: Δt C (d^n + δ/2); start: Δt² C x_1 = Δt C d.
            let w: Vec<f64> = if self.start {
                self.d.to_vec()
            } else {
                (0..n).map(|i| self.d[i] + 0.5 * self.full[i]).collect()
            };
            sparse::mul_add(1.0, &mut self.r, self.dt, c, &w);
        }
        match self.control {
            Some(p) => {
                for (o, &i) in out.iter_mut().zip(p.free()) {
                    *o = self.r[i];
                }
            }
            None => out.copy_from_slice(&self.r),
        }
        Ok(())
    }
    fn factor_jacobian(&mut self, y: &[f64]) -> Result<(), StepError> {
        self.set(y);
        self.half_steps();
        let dt2 = self.dt * self.dt;
        let (c_a, c_b) = if self.start {
            (0.5 * dt2, 0.5 * dt2)
        } else {
            (0.0, 0.5 * dt2)
        };
        let jv = match self
            .system
            .discrete_gradient_jacobian(&self.a, &self.b, c_a, c_b)
        {
            Some(m) => m.to_csr().into_owned(),
            None => average_vector_field_jacobian(self.system, &self.a, &self.b, c_a, c_b)
                .map_err(|e| self.clock.failed(e))?,
        };
        let j = sparse::linear_combination(&[(1.0, self.base), (1.0, &jv)], None);
        let j = match self.control {
            Some(p) => p.restrict(&j),
            None => j,
        };
        let symmetry = self
            .system
            .tangent_kind()
            .symmetry()
            .ok_or(StepError::NeedsTangent {
                scheme: "the energy-conserving alpha scheme",
            })?;
        if let Some(f) = self.jacobian.as_mut() {
            match f.refactor(&j) {
                Ok(()) => return Ok(()),
                Err(e) if matches!(e.source, fem_assembly::SolverError::PatternMismatch { .. }) => {
                }
                Err(e) => return Err(e.into()),
            }
        }
        *self.jacobian = Some(Factorization::new(&j, symmetry)?);
        Ok(())
    }
    fn solve_jacobian(&self, b: &mut [f64]) {
        self.jacobian
            .as_ref()
            .expect("factored before solving")
            .solve_in_place(b);
    }
}

impl<S: SecondOrderSystem> NonlinearAlphaScheme<S> {
    /// `α = ¼`, the energy-conserving member used in §3 of the paper.
    pub fn energy_conserving(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 0.25, settings, x0, v0)
    }

    /// The scheme with `alpha` in `[0, ½]` from `x(t0) = x0`, `ẋ(t0) = v0`; solves the start
    /// (64). No stability check is made for `α < ¼` (the bound (23) of the linear part does
    /// not cover `V`).
    pub fn new(
        system: S,
        alpha: f64,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        check_alpha(alpha)?;
        let n = system.n_dofs();
        let StepStart {
            clock,
            control,
            newton,
            x: x0,
            v: v0,
        } = settings.start(n, x0, v0)?;
        let (t0, dt) = (clock.t0(), clock.dt());
        let damping = damping_csr(&system);
        let dt2 = dt * dt;
        let base = step_matrix(&system, damping.as_ref(), alpha * dt2, 0.5 * dt, 1.0);
        let start_matrix = step_matrix(&system, damping.as_ref(), 2.0 * alpha * dt2, 0.0, 2.0);
        let mut newton = NewtonSolver::new(newton);
        let mut jacobian = None;
        // Start (64): solve for e.
        let dx1: Vec<f64> = v0.iter().map(|v| dt * v).collect();
        let mut force = vec![0.0; n];
        system.external_force(t0, &mut force);
        let mut e = vec![0.0; n];
        let mut mass_arg = Vec::new();
        if let Some(p) = &control {
            for (dof, signal, method) in p.iter() {
                let d0 = match method {
                    Enforcement::Direct | Enforcement::Full => {
                        signal.value(t0) - signal.value(t0 - dt)
                    }
                    Enforcement::Rate => dt * signal.rate(t0 - 0.5 * dt),
                };
                e[dof] = dt * v0[dof] - d0;
                if method == Enforcement::Full {
                    mass_arg.push((dof, 0.5 * dt2 * signal.acceleration(t0)));
                }
            }
        }
        let scale = force_scale(&system, &x0, &dx1, &force, dt).map_err(|e| clock.failed(e))?;
        let e = {
            let mut eq = StepEquation {
                system: &system,
                control: control.as_ref(),
                clock,
                damping: damping.as_ref(),
                jacobian: &mut jacobian,
                alpha,
                dt,
                x: &x0,
                d: &dx1,
                force: &force,
                base: &start_matrix,
                start: true,
                full: e,
                mass_arg,
                a: vec![0.0; n],
                b: vec![0.0; n],
                work: vec![0.0; n],
                r: vec![0.0; n],
            };
            let mut y = free_part(control.as_ref(), &eq.full);
            newton.solve(&mut eq, &mut y, scale, 0)?;
            eq.set(&y);
            eq.full
        };
        let d: Vec<f64> = (0..n).map(|i| dx1[i] - e[i]).collect();
        let mut scheme = Self {
            system,
            alpha,
            clock,
            x: x0,
            d,
            delta: e.iter().map(|e| 2.0 * e).collect(),
            v0,
            damping,
            base,
            jacobian: None,
            control,
            newton: Some(newton),
            energy: Energy::default(),
            has_energy: true,
            last: NewtonReport::default(),
            total_iterations: 0,
        };
        scheme.energy = scheme.interval_energy();
        Ok(scheme)
    }

    /// Energy of the interval ending at `x^n` with increment `d^n`; sets `has_energy`.
    fn interval_energy(&mut self) -> Energy {
        let n = self.x.len();
        let dt = self.clock.dt();
        let mid: Vec<f64> = (0..n).map(|i| self.x[i] - 0.5 * self.d[i]).collect();
        let vel: Vec<f64> = self.d.iter().map(|di| di / dt).collect();
        let correction = self.system.constant_stiffness().map_or(0.0, |a| {
            dt * dt * (self.alpha - 0.25) * sparse::bilinear(a, &vel, &vel)
        });
        let kinetic = 0.5 * (self.system.mass().norm_squared(&vel) + correction);
        let potential = self.system.potential_energy(&mid);
        self.has_energy = potential.is_some();
        let potential = potential.unwrap_or(0.0);
        Energy {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: self.energy.external_work,
            dissipated: self.energy.dissipated,
            reaction_work: self.energy.reaction_work,
        }
    }

    /// Advances one step.
    fn advance(&mut self) -> Result<StepReport, StepError> {
        let n = self.x.len();
        let dt = self.clock.dt();
        let t = self.time();
        let mut force = vec![0.0; n];
        self.system.external_force(t, &mut force);
        let scale = force_scale(&self.system, &self.x, &self.d, &force, dt)
            .map_err(|e| self.clock.failed(e))?;
        let mut delta = self.delta.clone();
        let mut mass_arg = Vec::new();
        if let Some(p) = &self.control {
            for (dof, signal, method) in p.iter() {
                delta[dof] = match method {
                    Enforcement::Direct | Enforcement::Full => {
                        signal.value(t + dt) - self.x[dof] - self.d[dof]
                    }
                    Enforcement::Rate => dt * signal.rate(t + 0.5 * dt) - self.d[dof],
                };
                if method == Enforcement::Full {
                    mass_arg.push((dof, dt * dt * signal.acceleration(t)));
                }
            }
        }
        let mut newton = self
            .newton
            .take()
            .expect("the solver is home between solves");
        let solved = {
            let mut eq = StepEquation {
                system: &self.system,
                control: self.control.as_ref(),
                clock: self.clock,
                damping: self.damping.as_ref(),
                jacobian: &mut self.jacobian,
                alpha: self.alpha,
                dt,
                x: &self.x,
                d: &self.d,
                force: &force,
                base: &self.base,
                start: false,
                full: delta,
                mass_arg,
                a: vec![0.0; n],
                b: vec![0.0; n],
                work: vec![0.0; n],
                r: vec![0.0; n],
            };
            let mut y = free_part(self.control.as_ref(), &eq.full);
            let solved = newton.solve(&mut eq, &mut y, scale, self.clock.step() + 1);
            eq.set(&y);
            solved.map(|r| (r, eq.full))
        };
        self.newton = Some(newton);
        let (report, delta) = solved?;
        // Balance terms: Δt (f^n − C v^n, v^n), v^n = (2 d^n + δ)/(2Δt).
        let v: Vec<f64> = (0..n)
            .map(|i| (2.0 * self.d[i] + delta[i]) / (2.0 * dt))
            .collect();
        let work: f64 = force.iter().zip(&v).map(|(f, v)| f * v).sum();
        let dissipated = self
            .damping
            .as_ref()
            .map_or(0.0, |c| sparse::bilinear(c, &v, &v));
        self.energy.external_work += dt * work;
        self.energy.dissipated += dt * dissipated;
        for i in 0..n {
            self.d[i] += delta[i];
            self.x[i] += self.d[i];
        }
        if let Some(p) = &self.control {
            // Direct and full hold x^{n+1} = g(t_{n+1}) exactly (the increment carries
            // round-off).
            for (dof, signal, method) in p.iter() {
                if method != Enforcement::Rate {
                    let x_old = self.x[dof] - self.d[dof];
                    self.x[dof] = signal.value(t + dt);
                    self.d[dof] = self.x[dof] - x_old;
                }
            }
        }
        if self.x.iter().any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                step: self.clock.step() + 1,
                t: self.clock.t0() + (self.clock.step() + 1) as f64 * dt,
            });
        }
        self.delta = delta;
        self.clock.advance();
        self.energy = self.interval_energy();
        self.last = report;
        self.total_iterations += report.iterations as u64;
        Ok(StepReport {
            iterations: report.iterations,
            residual: report.residual,
            constraint_violation: 0.0,
        })
    }

    /// The backward difference `(x^n − x^{n−1}) / Δt`, the velocity in the energy.
    pub fn half_step_velocity(&self) -> Vec<f64> {
        self.d.iter().map(|d| d / self.clock.dt()).collect()
    }
    /// `d^n = x^n − x^{n−1}`.
    pub fn previous_increment(&self) -> &[f64] {
        &self.d
    }
    /// The scheme's parameter α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Newton's report of the last step.
    pub fn last_newton(&self) -> NewtonReport {
        self.last
    }
    /// Newton iterations summed over all steps (the start excluded).
    pub fn total_newton_iterations(&self) -> u64 {
        self.total_iterations
    }
    /// The system.
    pub fn system(&self) -> &S {
        &self.system
    }
    /// The system, mutably (to update a model's multipliers between steps, say).
    pub fn system_mut(&mut self) -> &mut S {
        &mut self.system
    }
}

impl<S: SecondOrderSystem> Stepper for NonlinearAlphaScheme<S> {
    fn step(&mut self) -> Result<StepReport, StepError> {
        self.advance()
    }
    fn clock(&self) -> Clock {
        self.clock
    }
    /// The discrete energy (19) + (32) of the last interval and the balance terms.
    fn energy(&self) -> Option<Energy> {
        self.has_energy.then_some(self.energy)
    }
    fn invariant(&self) -> Invariant {
        Invariant::SolverTolerance
    }
    fn state(&self) -> Vec<StateField<'_>> {
        vec![
            StateField::dofs("position", &self.x),
            StateField::dofs("previous_increment", &self.d),
            StateField::dofs("second_difference", &self.delta),
            StateField::owned("energy", StateKind::Other, self.energy.to_array().to_vec()),
        ]
    }
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.x.len();
        self.x.copy_from_slice(restored(fields, "position", n)?);
        self.d
            .copy_from_slice(restored(fields, "previous_increment", n)?);
        self.delta
            .copy_from_slice(restored(fields, "second_difference", n)?);
        self.energy = Energy::from_slice(restored(fields, "energy", 6)?);
        self.has_energy = self.system.potential_energy(&self.x).is_some();
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl<S: SecondOrderSystem> NodalStepper for NonlinearAlphaScheme<S> {
    fn position(&self) -> &[f64] {
        &self.x
    }
    /// `(d^n + δ/2)/Δt = (3x^n − 4x^{n−1} + x^{n−2})/(2Δt)`, second order (`ẋ(t0)` at the start).
    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        if self.clock.step() == 0 {
            return Cow::Borrowed(&self.v0);
        }
        Cow::Owned(
            self.d
                .iter()
                .zip(&self.delta)
                .map(|(d, dl)| (d + 0.5 * dl) / self.clock.dt())
                .collect(),
        )
    }
}

/// The free entries of a full vector.
fn free_part(control: Option<&DirichletControl>, full: &[f64]) -> Vec<f64> {
    match control {
        Some(p) => p.free().iter().map(|&i| full[i]).collect(),
        None => full.to_vec(),
    }
}

/// `c_m M + c_k A + c_c C` (`A` the constant stiffness, if any).
fn step_matrix<S: SecondOrderSystem>(
    system: &S,
    damping: Option<&CsrMatrix<f64>>,
    c_k: f64,
    c_c: f64,
    c_m: f64,
) -> CsrMatrix<f64> {
    let mut terms: Vec<(f64, &CsrMatrix<f64>)> = Vec::new();
    if let Some(a) = system.constant_stiffness() {
        terms.push((c_k, a));
    }
    if let (Some(c), true) = (damping, c_c != 0.0) {
        terms.push((c_c, c));
    }
    match system.mass() {
        Mass::Lumped(d) => sparse::linear_combination(&terms, Some((c_m, d))),
        Mass::Consistent(m) => {
            terms.push((c_m, m));
            sparse::linear_combination(&terms, None)
        }
    }
}

/// The size of the terms of `R`: `‖M d‖∞ + Δt² (‖A x‖∞ + ‖f‖∞)` (with `f_int(x)` for `A x`
/// when the system has no constant stiffness), at least `f64::MIN_POSITIVE`.
fn force_scale<S: SecondOrderSystem>(
    system: &S,
    x: &[f64],
    d: &[f64],
    f: &[f64],
    dt: f64,
) -> Result<f64, EvalError> {
    let n = x.len();
    let mut md = vec![0.0; n];
    system.mass().mul(d, &mut md);
    let ax = match system.constant_stiffness() {
        Some(a) => sparse::mul(a, x),
        None => {
            let mut fx = vec![0.0; n];
            system.internal_force(x, &mut fx)?;
            fx
        }
    };
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    Ok((inf(&md) + dt * dt * (inf(&ax) + inf(f))).max(f64::MIN_POSITIVE))
}
