//! The energy-conserving nonlinear alpha scheme of Glowinski–Holmström (24)–(32), (63).
//!
//! For `M ẍ + A x + C ẋ + ∇V(x) = f(t)` (24) with constant `M`, `A`, `C` (a
//! [`LinearSecondOrderSystem`]) and a potential `V` with a *discrete gradient* `∇̄V(a, b)`
//! (a [`DiscreteGradientPotential`]):
//!
//! ```text
//! M (x^{n+1} − 2x^n + x^{n−1}) / Δt² + A (α x^{n+1} + (1 − 2α) x^n + α x^{n−1})
//!   + C (x^{n+1} − x^{n−1}) / (2Δt) + ∇̄V(x^{n−1/2}, x^{n+1/2}) = f^n,   x^{n±1/2} = (x^{n±1} + x^n)/2
//! ```
//!
//! For a diagonal `V = Σ Φ_i(x_i)` (25)–(26), `∇̄V` is (30),
//! `2 (Φ_i(x_i^{n+1/2}) − Φ_i(x_i^{n−1/2})) / (x_i^{n+1} − x_i^{n−1})`; for the colliding strings
//! it is the time-discretized penalty (62)–(63). Any `∇̄V` with
//! `(∇̄V(a, b), b − a) = V(b) − V(a)` makes, with `C = 0` and `f = 0`,
//!
//! ```text
//! E^{n+1/2} = ½ (M_α d^{n+1}/Δt, d^{n+1}/Δt) + ½ (A x^{n+1/2}, x^{n+1/2}) + V(x^{n+1/2}),
//! M_α = M + Δt² (α − ¼) A,   d^{n+1} = x^{n+1} − x^n                         (19) + (32)
//! ```
//!
//! constant to the Newton tolerance (multiply the scheme by `(x^{n+1} − x^{n−1})/(2Δt)`). With
//! damping and forcing, `E^{n+1/2} − E^{n−1/2} = Δt (f^n − C v^n, v^n)`,
//! `v^n = (x^{n+1} − x^{n−1})/(2Δt)`; both sums are kept in [`NonlinearEnergy`].
//!
//! # As implemented
//! Each step solves for the second difference `δ = x^{n+1} − 2x^n + x^{n−1}` (as
//! [`crate::AlphaScheme`] does), multiplied through by `Δt²`:
//!
//! ```text
//! R(δ) = M δ + Δt² A (x^n + α δ) + Δt C (d^n + δ/2) + Δt² (∇̄V(x^n − d^n/2, x^n + (d^n + δ)/2) − f^n)
//! J    = M + α Δt² A + Δt/2 C + Δt²/2 ∂_b ∇̄V
//! ```
//!
//! by [`NewtonSolver`] with sparse Cholesky (the Jacobian is symmetric positive definite for a
//! convex `V`), from the guess `δ` of the previous step. The start (64),
//! `x^{−1} = x^1 − 2Δt x_1`, is solved for `e` in `x^{±1} = x^0 ± Δt x_1 + e`:
//!
//! ```text
//! 2 M e + Δt² A (x^0 + 2α e) + Δt² C x_1 + Δt² (∇̄V(x^0 + (e − Δt x_1)/2, x^0 + (e + Δt x_1)/2) − f^0) = 0.
//! ```

use fem_assembly::sparse;
use fem_constraints::{ConstraintSolver, MultiplierUpdate};
use nalgebra_sparse::{CooMatrix, CsrMatrix};

use crate::error::{check_alpha, check_dt, check_initial};
use crate::newton::{Jacobian, NewtonReport, NewtonSolver, NonlinearProblem};
use crate::{LinearSecondOrderSystem, Mass, NewtonSettings, StepError};

/// A potential `V(x)` with a discrete gradient: the nonlinear part of (24).
pub trait DiscreteGradientPotential {
    /// Number of unknowns.
    fn n_dofs(&self) -> usize;
    /// `V(x)`.
    fn energy(&self, x: &[f64]) -> f64;
    /// Writes `∇V(x)` into `out` (overwriting it).
    fn gradient(&self, x: &[f64], out: &mut [f64]);
    /// Writes `∇̄V(a, b)` into `out` (overwriting it): `(∇̄V(a, b), b − a) = V(b) − V(a)` and
    /// `∇̄V(a, a) = ∇V(a)`.
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]);
    /// `c_a ∂∇̄V/∂a + c_b ∂∇̄V/∂b` at `(a, b)`, symmetric, with a sparsity pattern that does not
    /// depend on `a`, `b` (explicit zeros kept).
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> CsrMatrix<f64>;
}

/// A scalar function `Φ(s)` with `φ = Φ'` and `φ'`, for [`DiagonalPotential`].
pub type ScalarPotential = fn(f64) -> [f64; 3];

/// A diagonal potential `V(x) = Σ_i Φ(x_i)` (25)–(26), the same `Φ` on every component; its
/// discrete gradient is (30).
#[derive(Clone, Debug)]
pub struct DiagonalPotential {
    n: usize,
    /// Returns `[Φ(s), φ(s), φ'(s)]`.
    phi: ScalarPotential,
}

impl DiagonalPotential {
    /// `n` components, `phi(s) = [Φ(s), Φ'(s), Φ''(s)]`.
    pub fn new(n: usize, phi: ScalarPotential) -> Self {
        Self { n, phi }
    }

    fn component(&self, a: f64, b: f64) -> fem_constraints::DiscreteGradient {
        let phi = self.phi;
        fem_constraints::constraint::generic_discrete_gradient(
            |s| phi(s)[0],
            |s| phi(s)[1],
            |s| phi(s)[2],
            a,
            b,
        )
    }
}

impl DiscreteGradientPotential for DiagonalPotential {
    fn n_dofs(&self) -> usize {
        self.n
    }
    fn energy(&self, x: &[f64]) -> f64 {
        x.iter().map(|&s| (self.phi)(s)[0]).sum()
    }
    fn gradient(&self, x: &[f64], out: &mut [f64]) {
        for (o, &s) in out.iter_mut().zip(x) {
            *o = (self.phi)(s)[1];
        }
    }
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        for i in 0..self.n {
            out[i] = self.component(a[i], b[i]).value;
        }
    }
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> CsrMatrix<f64> {
        let mut coo = CooMatrix::new(self.n, self.n);
        for i in 0..self.n {
            let d = self.component(a[i], b[i]);
            coo.push(i, i, c_a * d.d_a + c_b * d.d_b);
        }
        CsrMatrix::from(&coo)
    }
}

/// Linear constraints `g(x) = G x − h` enforced by a [`ConstraintSolver`] (penalty or
/// augmented Lagrangian): `V(x) = Σ_k ψ_k(g_k(x))`, `∇̄V(a, b) = Gᵀ {Dψ_k(g_k(a), g_k(b))}`.
///
/// Because `g` is linear, `(∇̄V(a, b), b − a) = Σ_k Dψ_k (g_k(b) − g_k(a)) = V(b) − V(a)`
/// exactly: this is the time-discretized penalty (62) of the colliding strings.
#[derive(Debug)]
pub struct LinearConstraintPotential {
    g: CsrMatrix<f64>,
    offsets: Vec<f64>,
    solver: Box<dyn ConstraintSolver>,
}

impl LinearConstraintPotential {
    /// `G` (`m × n`), `h` (`m`), and the solver for the `m` constraints.
    ///
    /// # Panics
    /// If the sizes disagree (a programming error: the model builds all three).
    pub fn new(g: CsrMatrix<f64>, offsets: Vec<f64>, solver: Box<dyn ConstraintSolver>) -> Self {
        assert_eq!(g.nrows(), offsets.len(), "one offset per constraint row");
        assert_eq!(
            g.nrows(),
            solver.n_constraints(),
            "one solver entry per constraint row"
        );
        Self { g, offsets, solver }
    }

    /// `g(x) = G x − h` into `out`.
    pub fn values(&self, x: &[f64], out: &mut [f64]) {
        for (o, h) in out.iter_mut().zip(&self.offsets) {
            *o = -h;
        }
        sparse::mul_add(1.0, out, 1.0, &self.g, x);
    }

    /// The constraint solver.
    pub fn solver(&self) -> &dyn ConstraintSolver {
        self.solver.as_ref()
    }

    /// Records the multipliers at `x` (see [`ConstraintSolver::update_multipliers`]).
    pub fn update_multipliers(&mut self, x: &[f64]) -> MultiplierUpdate {
        let mut g = vec![0.0; self.g.nrows()];
        self.values(x, &mut g);
        self.solver.update_multipliers(&g)
    }

    /// `Gᵀ w` into `out`.
    fn transpose_mul(&self, w: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (k, row) in self.g.row_iter().enumerate() {
            for (&j, &v) in row.col_indices().iter().zip(row.values()) {
                out[j] += v * w[k];
            }
        }
    }
}

impl DiscreteGradientPotential for LinearConstraintPotential {
    fn n_dofs(&self) -> usize {
        self.g.ncols()
    }
    fn energy(&self, x: &[f64]) -> f64 {
        let mut g = vec![0.0; self.g.nrows()];
        self.values(x, &mut g);
        self.solver.energy(&g)
    }
    fn gradient(&self, x: &[f64], out: &mut [f64]) {
        let mut g = vec![0.0; self.g.nrows()];
        self.values(x, &mut g);
        let w: Vec<f64> = (0..g.len()).map(|k| self.solver.force(k, g[k])).collect();
        self.transpose_mul(&w, out);
    }
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        let m = self.g.nrows();
        let (mut ga, mut gb) = (vec![0.0; m], vec![0.0; m]);
        self.values(a, &mut ga);
        self.values(b, &mut gb);
        let w: Vec<f64> = (0..m)
            .map(|k| self.solver.discrete_gradient(k, ga[k], gb[k]).value)
            .collect();
        self.transpose_mul(&w, out);
    }
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> CsrMatrix<f64> {
        let (m, n) = (self.g.nrows(), self.g.ncols());
        let (mut ga, mut gb) = (vec![0.0; m], vec![0.0; m]);
        self.values(a, &mut ga);
        self.values(b, &mut gb);
        let mut coo = CooMatrix::new(n, n);
        for (k, row) in self.g.row_iter().enumerate() {
            let d = self.solver.discrete_gradient(k, ga[k], gb[k]);
            let w = c_a * d.d_a + c_b * d.d_b;
            for (&i, &vi) in row.col_indices().iter().zip(row.values()) {
                for (&j, &vj) in row.col_indices().iter().zip(row.values()) {
                    coo.push(i, j, w * vi * vj);
                }
            }
        }
        CsrMatrix::from(&coo)
    }
}

/// Discrete energy (19) + (32) of the last interval `[t_{n−1}, t_n]` and the balance terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NonlinearEnergy {
    /// `½ (M_α d/Δt, d/Δt)`.
    pub kinetic: f64,
    /// `½ (A x^{n−1/2}, x^{n−1/2})`.
    pub elastic: f64,
    /// `V(x^{n−1/2})` (the penalty energy, for constraints).
    pub potential: f64,
    /// `kinetic + elastic + potential`: the scheme's discrete energy.
    pub total: f64,
    /// `Σ Δt (f^k, v^k)` over the steps taken.
    pub external_work: f64,
    /// `Σ Δt (C v^k, v^k)` over the steps taken.
    pub dissipated: f64,
}

/// The nonlinear alpha scheme (31)/(63) on a linear system and a potential it owns.
///
/// Step contract: after construction (which solves the start (64)) the state is `x^0` at `t0`
/// and [`NonlinearAlphaScheme::energy`] is that of `[t_{−1}, t_0]` (with the fictitious
/// `x^{−1}`); each [`NonlinearAlphaScheme::step`] advances by one `dt`, owns the time
/// (`t_n = t0 + n dt`) and returns Newton's report for the step.
#[derive(Debug)]
pub struct NonlinearAlphaScheme<S: LinearSecondOrderSystem, P: DiscreteGradientPotential> {
    system: S,
    potential: P,
    alpha: f64,
    dt: f64,
    t0: f64,
    step: u64,
    /// `x^n`.
    x: Vec<f64>,
    /// `d^n = x^n − x^{n−1}`.
    d: Vec<f64>,
    /// Guess for the next `δ`.
    delta: Vec<f64>,
    /// `M + α Δt² A + Δt/2 C` (without the potential).
    base: CsrMatrix<f64>,
    newton: NewtonSolver,
    energy: NonlinearEnergy,
    last: NewtonReport,
    total_iterations: u64,
}

/// The residual of one step (or of the start) for [`NewtonSolver`].
struct StepEquation<'a, S: LinearSecondOrderSystem, P: DiscreteGradientPotential> {
    system: &'a S,
    potential: &'a P,
    alpha: f64,
    dt: f64,
    x: &'a [f64],
    /// `d^n` for a step; `Δt x_1` for the start.
    d: &'a [f64],
    force: &'a [f64],
    base: &'a CsrMatrix<f64>,
    start: bool,
    a: Vec<f64>,
    b: Vec<f64>,
    work: Vec<f64>,
}

impl<S: LinearSecondOrderSystem, P: DiscreteGradientPotential> StepEquation<'_, S, P> {
    /// The half-step states `a = x^{n−1/2}`, `b = x^{n+1/2}` for unknown `y`.
    fn half_steps(&mut self, y: &[f64]) {
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
}

impl<S: LinearSecondOrderSystem, P: DiscreteGradientPotential> NonlinearProblem
    for StepEquation<'_, S, P>
{
    fn n_unknowns(&self) -> usize {
        self.x.len()
    }
    fn residual(&mut self, y: &[f64], r: &mut [f64]) {
        let n = self.x.len();
        let dt2 = self.dt * self.dt;
        self.half_steps(y);
        let (a, b) = (std::mem::take(&mut self.a), std::mem::take(&mut self.b));
        self.potential.discrete_gradient(&a, &b, &mut self.work);
        self.a = a;
        self.b = b;
        // Mass term.
        self.system.mass().mul(y, r);
        let (c_mass, c_alpha) = if self.start { (2.0, 2.0) } else { (1.0, 1.0) };
        for i in 0..n {
            r[i] = c_mass * r[i] + dt2 * (self.work[i] - self.force[i]);
        }
        // Stiffness on x^n + α δ (step) or x^0 + 2α e (start).
        let z: Vec<f64> = (0..n)
            .map(|i| self.x[i] + c_alpha * self.alpha * y[i])
            .collect();
        sparse::mul_add(1.0, r, dt2, self.system.stiffness(), &z);
        if let Some(c) = self.system.damping() {
            // Step: Δt C (d^n + δ/2); start: Δt² C x_1 = Δt C d.
            let w: Vec<f64> = if self.start {
                self.d.to_vec()
            } else {
                (0..n).map(|i| self.d[i] + 0.5 * y[i]).collect()
            };
            sparse::mul_add(1.0, r, self.dt, c, &w);
        }
    }
    fn jacobian(&mut self, y: &[f64]) -> Jacobian {
        self.half_steps(y);
        let dt2 = self.dt * self.dt;
        let jv = if self.start {
            self.potential
                .discrete_gradient_jacobian(&self.a, &self.b, 0.5 * dt2, 0.5 * dt2)
        } else {
            self.potential
                .discrete_gradient_jacobian(&self.a, &self.b, 0.0, 0.5 * dt2)
        };
        Jacobian::SymmetricSparse(sparse::linear_combination(
            &[(1.0, self.base), (1.0, &jv)],
            None,
        ))
    }
}

impl<S: LinearSecondOrderSystem, P: DiscreteGradientPotential> NonlinearAlphaScheme<S, P> {
    /// `α = ¼`, the energy-conserving member used in §3 of the paper.
    pub fn energy_conserving(
        system: S,
        potential: P,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
        newton: NewtonSettings,
    ) -> Result<Self, StepError> {
        Self::new(system, potential, 0.25, dt, t0, x0, v0, newton)
    }

    /// The scheme with `alpha` in `[0, ½]` and step `dt` from `x(t0) = x0`, `ẋ(t0) = v0`;
    /// solves the start (64). No stability check is made for `α < ¼` (the bound (23) of the
    /// linear part does not cover `V`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        system: S,
        potential: P,
        alpha: f64,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
        newton: NewtonSettings,
    ) -> Result<Self, StepError> {
        check_alpha(alpha)?;
        check_dt(dt)?;
        let n = system.n_dofs();
        check_initial(n, x0, v0)?;
        if potential.n_dofs() != n {
            return Err(StepError::BadInitialData {
                what: "potential",
                found: potential.n_dofs(),
                expected: n,
            });
        }
        let dt2 = dt * dt;
        let base = step_matrix(&system, alpha * dt2, 0.5 * dt, 1.0);
        let start_matrix = step_matrix(&system, 2.0 * alpha * dt2, 0.0, 2.0);
        let mut newton = NewtonSolver::new(newton);
        // Start (64): solve for e.
        let dx1: Vec<f64> = v0.iter().map(|v| dt * v).collect();
        let mut force = vec![0.0; n];
        system.external_force(t0, &mut force);
        let mut e = vec![0.0; n];
        let scale = force_scale(&system, x0, &dx1, &force, dt);
        {
            let mut eq = StepEquation {
                system: &system,
                potential: &potential,
                alpha,
                dt,
                x: x0,
                d: &dx1,
                force: &force,
                base: &start_matrix,
                start: true,
                a: vec![0.0; n],
                b: vec![0.0; n],
                work: vec![0.0; n],
            };
            newton.solve(&mut eq, &mut e, scale, 0)?;
        }
        let d: Vec<f64> = (0..n).map(|i| dx1[i] - e[i]).collect();
        let mut scheme = Self {
            system,
            potential,
            alpha,
            dt,
            t0,
            step: 0,
            x: x0.to_vec(),
            d,
            delta: e.iter().map(|e| 2.0 * e).collect(),
            base,
            newton,
            energy: NonlinearEnergy::default(),
            last: NewtonReport::default(),
            total_iterations: 0,
        };
        scheme.energy = scheme.interval_energy(&scheme.x.clone(), &scheme.d.clone());
        Ok(scheme)
    }

    /// Energy of the interval ending at `x` with increment `d`.
    fn interval_energy(&self, x: &[f64], d: &[f64]) -> NonlinearEnergy {
        let n = x.len();
        let dt = self.dt;
        let mid: Vec<f64> = (0..n).map(|i| x[i] - 0.5 * d[i]).collect();
        let vel: Vec<f64> = d.iter().map(|di| di / dt).collect();
        let a = self.system.stiffness();
        let kinetic = 0.5
            * (self.system.mass().norm_squared(&vel)
                + dt * dt * (self.alpha - 0.25) * sparse::bilinear(a, &vel, &vel));
        let elastic = 0.5 * sparse::bilinear(a, &mid, &mid);
        let potential = self.potential.energy(&mid);
        NonlinearEnergy {
            kinetic,
            elastic,
            potential,
            total: kinetic + elastic + potential,
            external_work: self.energy.external_work,
            dissipated: self.energy.dissipated,
        }
    }

    /// Advances one step; returns Newton's report.
    pub fn step(&mut self) -> Result<NewtonReport, StepError> {
        let n = self.x.len();
        let dt = self.dt;
        let t = self.time();
        let mut force = vec![0.0; n];
        self.system.external_force(t, &mut force);
        let scale = force_scale(&self.system, &self.x, &self.d, &force, dt);
        let mut delta = self.delta.clone();
        let report = {
            let mut eq = StepEquation {
                system: &self.system,
                potential: &self.potential,
                alpha: self.alpha,
                dt,
                x: &self.x,
                d: &self.d,
                force: &force,
                base: &self.base,
                start: false,
                a: vec![0.0; n],
                b: vec![0.0; n],
                work: vec![0.0; n],
            };
            self.newton
                .solve(&mut eq, &mut delta, scale, self.step + 1)?
        };
        // Balance terms: Δt (f^n − C v^n, v^n), v^n = (2 d^n + δ)/(2Δt).
        let v: Vec<f64> = (0..n)
            .map(|i| (2.0 * self.d[i] + delta[i]) / (2.0 * dt))
            .collect();
        let work: f64 = force.iter().zip(&v).map(|(f, v)| f * v).sum();
        let dissipated = self
            .system
            .damping()
            .map_or(0.0, |c| sparse::bilinear(c, &v, &v));
        self.energy.external_work += dt * work;
        self.energy.dissipated += dt * dissipated;
        for i in 0..n {
            self.d[i] += delta[i];
            self.x[i] += self.d[i];
        }
        if self.x.iter().any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                step: self.step + 1,
                t: self.t0 + (self.step + 1) as f64 * dt,
            });
        }
        self.delta = delta;
        self.step += 1;
        self.energy = self.interval_energy(&self.x.clone(), &self.d.clone());
        self.last = report;
        self.total_iterations += report.iterations as u64;
        Ok(report)
    }

    /// `x^n`.
    pub fn position(&self) -> &[f64] {
        &self.x
    }
    /// `(x^n − x^{n−1}) / Δt`, the backward difference velocity.
    pub fn velocity(&self) -> Vec<f64> {
        self.d.iter().map(|d| d / self.dt).collect()
    }
    /// `t_n = t0 + n Δt`.
    pub fn time(&self) -> f64 {
        self.t0 + self.step as f64 * self.dt
    }
    /// The step index `n`.
    pub fn step_index(&self) -> u64 {
        self.step
    }
    /// The time step.
    pub fn dt(&self) -> f64 {
        self.dt
    }
    /// The scheme's parameter α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Discrete energy of the last interval (see the module documentation).
    pub fn energy(&self) -> NonlinearEnergy {
        self.energy
    }
    /// Newton's report of the last step.
    pub fn last_step(&self) -> NewtonReport {
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
    /// The potential.
    pub fn potential(&self) -> &P {
        &self.potential
    }
    /// The potential, mutably (to update multipliers, say).
    pub fn potential_mut(&mut self) -> &mut P {
        &mut self.potential
    }
}

/// `c_m M + c_k A + c_c C`.
fn step_matrix<S: LinearSecondOrderSystem>(
    system: &S,
    c_k: f64,
    c_c: f64,
    c_m: f64,
) -> CsrMatrix<f64> {
    let mut terms: Vec<(f64, &CsrMatrix<f64>)> = vec![(c_k, system.stiffness())];
    if let (Some(c), true) = (system.damping(), c_c != 0.0) {
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

/// The size of the terms of `R`: `‖M d‖∞ + Δt² (‖A x‖∞ + ‖f‖∞)`, at least `f64::MIN_POSITIVE`.
fn force_scale<S: LinearSecondOrderSystem>(
    system: &S,
    x: &[f64],
    d: &[f64],
    f: &[f64],
    dt: f64,
) -> f64 {
    let n = x.len();
    let mut md = vec![0.0; n];
    system.mass().mul(d, &mut md);
    let ax = sparse::mul(system.stiffness(), x);
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    (inf(&md) + dt * dt * (inf(&ax) + inf(f))).max(f64::MIN_POSITIVE)
}
