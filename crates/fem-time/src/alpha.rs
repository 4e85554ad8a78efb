//! The three-level alpha scheme of Glowinski–Holmström (16), from Dean et al.
//!
//! For `M ẍ + C ẋ + A x = f(t)` with constant `M`, `C`, `A`:
//!
//! ```text
//! M (x^{n+1} − 2x^n + x^{n−1}) / Δt² + A (α x^{n+1} + (1 − 2α) x^n + α x^{n−1})
//!   + C (x^{n+1} − x^{n−1}) / (2Δt) = f^n,                      0 ≤ α ≤ 1/2      (16)
//! ```
//!
//! started by (64), `x^{−1} = x^1 − 2Δt x_1` substituted into (16) at `n = 0`.
//!
//! # As implemented
//! The step is solved for the second difference `δ = x^{n+1} − 2x^n + x^{n−1}`, which is
//! `O(Δt²)` and so carries far less round-off than `x^{n+1}` itself:
//!
//! ```text
//! (M + α Δt² A + Δt/2 C) δ = Δt² (f^n − A x^n) − Δt C d^n,   d^n = x^n − x^{n−1}
//! d^{n+1} = d^n + δ,   x^{n+1} = x^n + d^{n+1}.
//! ```
//!
//! The start (64) becomes `(M + α Δt² A) e = ½ Δt² (f^0 − A x^0 − C x_1)` with
//! `x^{±1} = x^0 ± Δt x_1 + e`. The matrix of the step is factored once per run (and the start
//! matrix once more if `C ≠ 0`); with `α = 0` and a lumped mass and no damping it is diagonal
//! and the scheme is explicit: no linear solve at all.
//!
//! # Energy
//! [`Energy`] is the discrete energy (19) of the interval `[t_{n−1}, t_n]`,
//! `E^{n−1/2} = ½ (M_α d/Δt, d/Δt) + ½ (A x^{n−1/2}, x^{n−1/2})` with
//! `M_α = M + Δt² (α − ¼) A` (18). By (17), `E^{n+1/2} − E^{n−1/2} = Δt (f^n − C v^n, v^n)`,
//! `v^n = (x^{n+1} − x^{n−1}) / (2Δt)`; the two sums are accumulated as the external work and
//! the dissipated energy, so `total + dissipated − external_work` is constant to round-off.
//!
//! # Stability
//! Unconditional for `α ≥ ¼`; for `α < ¼` the step must satisfy (23),
//! `Δt < 2 / sqrt(λ_m (1 − 4α))` with `λ_m` the largest eigenvalue of `M⁻¹ A`, which
//! [`AlphaScheme::new`] estimates and enforces.

use fem_assembly::{SolverError, SparseCholesky, sparse};
use nalgebra_sparse::CsrMatrix;

pub use crate::error::StepError;
use crate::error::{check_alpha, check_dt, check_initial};
use crate::partition::Partition;
use crate::stability::{LargestEigenvalue, largest_eigenvalue};
use crate::{LinearSecondOrderSystem, Mass};
use fem_constraints::{DirichletConditions, Enforcement};

/// Discrete energy (19) of the last interval and the accumulated balance terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Energy {
    /// `½ (M_α d/Δt, d/Δt)`.
    pub kinetic: f64,
    /// `½ (A x^{n−1/2}, x^{n−1/2})`.
    pub potential: f64,
    /// `kinetic + potential`: the scheme's discrete energy (19).
    pub total: f64,
    /// `Σ Δt (f^k, v^k)` over the steps taken.
    pub external_work: f64,
    /// `Σ Δt (C v^k, v^k)` over the steps taken.
    pub dissipated: f64,
}

/// The linear solve of one step: a diagonal (explicit) or a sparse Cholesky factor.
#[derive(Debug)]
enum StepSolver {
    /// Inverse diagonal.
    Diagonal(Vec<f64>),
    /// Factored sparse matrix.
    Cholesky(Box<SparseCholesky>),
}

impl StepSolver {
    /// Factors `c_m M + c_k A (+ c_c C)`, diagonally when that is possible.
    /// `partition` restricts the matrix to the free dofs (Dirichlet conditions).
    fn new(
        mass: &Mass,
        c_k: f64,
        a: &CsrMatrix<f64>,
        c_c: f64,
        c: Option<&CsrMatrix<f64>>,
        partition: Option<&Partition>,
    ) -> Result<Self, SolverError> {
        let damping = c.filter(|_| c_c != 0.0);
        if let (Mass::Lumped(d), 0.0, None) = (mass, c_k, damping) {
            let inverse = match partition {
                Some(p) => p.free().iter().map(|&i| 1.0 / d[i]).collect(),
                None => d.iter().map(|m| 1.0 / m).collect(),
            };
            return Ok(StepSolver::Diagonal(inverse));
        }
        let mut terms: Vec<(f64, &CsrMatrix<f64>)> = vec![(c_k, a)];
        if let Some(c) = damping {
            terms.push((c_c, c));
        }
        let matrix = match mass {
            Mass::Lumped(d) => sparse::linear_combination(&terms, Some((1.0, d))),
            Mass::Consistent(m) => {
                terms.push((1.0, m));
                sparse::linear_combination(&terms, None)
            }
        };
        let matrix = match partition {
            Some(p) => p.restrict(&matrix),
            None => matrix,
        };
        Ok(StepSolver::Cholesky(Box::new(SparseCholesky::new(
            &matrix,
        )?)))
    }

    fn solve_in_place(&self, b: &mut [f64]) {
        match self {
            StepSolver::Diagonal(inv) => b.iter_mut().zip(inv).for_each(|(bi, di)| *bi *= di),
            StepSolver::Cholesky(chol) => chol.solve_in_place(b),
        }
    }

    fn factorizations(&self) -> usize {
        match self {
            StepSolver::Diagonal(_) => 0,
            StepSolver::Cholesky(chol) => chol.factorization_count(),
        }
    }
}

/// The stability bound (23) of the alpha scheme on a system: `None` for `α ≥ ¼`
/// (unconditionally stable), else the bound and the eigenvalue estimate it came from.
pub fn stability_bound<S: LinearSecondOrderSystem>(
    system: &S,
    alpha: f64,
) -> Result<Option<(f64, LargestEigenvalue)>, SolverError> {
    if alpha >= 0.25 {
        return Ok(None);
    }
    let factor = match system.mass() {
        Mass::Consistent(m) => Some(SparseCholesky::new(m)?),
        Mass::Lumped(_) => None,
    };
    let lambda = largest_eigenvalue(
        system.mass(),
        factor.as_ref(),
        system.stiffness(),
        1e-10,
        5000,
    );
    let bound = 2.0 / (lambda.value * (1.0 - 4.0 * alpha)).sqrt();
    Ok(Some((bound, lambda)))
}

/// The alpha scheme (16) on a linear system it owns.
///
/// Step contract: after construction the state is `x^0` at `t0`; each [`AlphaScheme::step`]
/// advances by one `dt` and owns the time (`t_n = t0 + n dt`, from the index). The energy
/// reported after step `n` is that of the interval `[t_{n−1}, t_n]` (at `n = 0`, of
/// `[t_{−1}, t_0]` with the fictitious `x^{−1}` of the start (64)).
#[derive(Debug)]
pub struct AlphaScheme<S: LinearSecondOrderSystem> {
    system: S,
    alpha: f64,
    dt: f64,
    t0: f64,
    step: u64,
    /// `x^n`.
    x: Vec<f64>,
    /// `d^n = x^n − x^{n−1}`.
    d: Vec<f64>,
    /// `A x^n`.
    ax: Vec<f64>,
    solver: StepSolver,
    start_factorizations: usize,
    energy: Energy,
    stability: Option<(f64, LargestEigenvalue)>,
    /// Scratch: force, right-hand side, `A x^{n+1}`, `C d`.
    force: Vec<f64>,
    rhs: Vec<f64>,
    ax_next: Vec<f64>,
    cd: Vec<f64>,
    /// Prescribed dofs, and the free/constrained split when there are any.
    dirichlet: DirichletConditions,
    partition: Option<Partition>,
}

impl<S: LinearSecondOrderSystem> AlphaScheme<S> {
    /// `α = ¼`: unconditionally stable, and the discrete energy (19) is exactly the
    /// continuous form (14) at the half step.
    pub fn energy_conserving(
        system: S,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 0.25, dt, t0, x0, v0)
    }

    /// `α = 0`: explicit with a lumped mass (and no damping), stable for `Δt < 2/sqrt(λ_m)`.
    pub fn explicit(
        system: S,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 0.0, dt, t0, x0, v0)
    }

    /// The scheme with parameter `alpha` in `[0, ½]`, step `dt`, from `x(t0) = x0`,
    /// `ẋ(t0) = v0`. Checks the stability bound (23) for `α < ¼`, factors the step matrix and
    /// performs the start (64).
    pub fn new(
        system: S,
        alpha: f64,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::with_dirichlet(system, alpha, dt, t0, x0, v0, DirichletConditions::none())
    }

    /// [`AlphaScheme::new`] with prescribed dofs (see the module documentation for what
    /// direct, rate and full control hold in this three-level scheme). Prescribed entries of
    /// `x0`, `v0` are replaced by `g(t0)`, `ġ(t0)`.
    pub fn with_dirichlet(
        system: S,
        alpha: f64,
        dt: f64,
        t0: f64,
        x0: &[f64],
        v0: &[f64],
        dirichlet: DirichletConditions,
    ) -> Result<Self, StepError> {
        check_alpha(alpha)?;
        check_dt(dt)?;
        let n = system.n_dofs();
        check_initial(n, x0, v0)?;
        let partition = if dirichlet.is_empty() {
            None
        } else {
            Some(Partition::new(n, &dirichlet)?)
        };
        // The bound of the full system bounds that of the free one (interlacing).
        let stability = stability_bound(&system, alpha)?;
        if let Some((bound, lambda)) = stability
            && dt > bound
        {
            return Err(StepError::Unstable {
                dt,
                bound,
                lambda_max: lambda.value,
                alpha,
            });
        }
        let dt2 = dt * dt;
        let a = system.stiffness();
        let solver = StepSolver::new(
            system.mass(),
            alpha * dt2,
            a,
            0.5 * dt,
            system.damping(),
            partition.as_ref(),
        )?;

        let mut x0 = x0.to_vec();
        let mut v0 = v0.to_vec();
        for (dof, signal, _) in dirichlet.iter() {
            x0[dof] = signal.value(t0);
            v0[dof] = signal.rate(t0);
        }

        // Start (64): (M + α Δt² A) e = ½ Δt² (f⁰ − A x⁰ − C x₁), x^{±1} = x⁰ ± Δt x₁ + e.
        let mut force = vec![0.0; n];
        system.external_force(t0, &mut force);
        let ax = sparse::mul(a, &x0);
        let mut e: Vec<f64> = force
            .iter()
            .zip(&ax)
            .map(|(f, q)| 0.5 * dt2 * (f - q))
            .collect();
        if let Some(c) = system.damping() {
            sparse::mul_add(1.0, &mut e, -0.5 * dt2, c, &v0);
        }
        let mut start_factorizations = 0;
        let start_solver;
        let start = if system.damping().is_none() {
            &solver
        } else {
            start_solver =
                StepSolver::new(system.mass(), alpha * dt2, a, 0.0, None, partition.as_ref())?;
            start_factorizations = start_solver.factorizations();
            &start_solver
        };
        match &partition {
            None => start.solve_in_place(&mut e),
            Some(p) => {
                // Constrained e from the history each method holds; the free rows then see
                // the coupling (direct, rate) or the exact ½ Δt² M g̈(t0) (full).
                let mut e_known = vec![0.0; n];
                let mut g2 = vec![0.0; n];
                for (dof, signal, method) in dirichlet.iter() {
                    let d0 = match method {
                        Enforcement::Direct | Enforcement::Full => {
                            signal.value(t0) - signal.value(t0 - dt)
                        }
                        Enforcement::Rate => dt * signal.rate(t0 - 0.5 * dt),
                    };
                    let e_c = dt * v0[dof] - d0;
                    match method {
                        Enforcement::Full => g2[dof] = signal.acceleration(t0),
                        _ => e_known[dof] = e_c,
                    }
                    e[dof] = e_c;
                }
                let mut coupling = vec![0.0; n];
                let m_arg: Vec<f64> = (0..n).map(|i| e_known[i] + 0.5 * dt2 * g2[i]).collect();
                system.mass().mul(&m_arg, &mut coupling);
                sparse::mul_add(1.0, &mut coupling, alpha * dt2, a, &e_known);
                let mut reduced: Vec<f64> = p.free().iter().map(|&i| e[i] - coupling[i]).collect();
                start.solve_in_place(&mut reduced);
                for (&i, v) in p.free().iter().zip(&reduced) {
                    e[i] = *v;
                }
            }
        }
        let d: Vec<f64> = v0.iter().zip(&e).map(|(v, e)| dt * v - e).collect();
        let x_prev: Vec<f64> = x0.iter().zip(&d).map(|(x, d)| x - d).collect();
        let ax_prev = sparse::mul(a, &x_prev);

        let mut scheme = Self {
            alpha,
            dt,
            t0,
            step: 0,
            x: x0,
            d,
            ax,
            solver,
            start_factorizations,
            energy: Energy::default(),
            stability,
            force,
            rhs: vec![0.0; n],
            ax_next: vec![0.0; n],
            cd: vec![0.0; n],
            dirichlet,
            partition,
            system,
        };
        let (kinetic, potential) = scheme.interval_energy(&ax_prev);
        scheme.energy = Energy {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: 0.0,
            dissipated: 0.0,
        };
        Ok(scheme)
    }

    /// Advances from `t_n` to `t_{n+1}`.
    pub fn step(&mut self) -> Result<(), StepError> {
        let dt = self.dt;
        let dt2 = dt * dt;
        let t = self.time();
        let forced = self.system.has_external_force();
        if forced {
            self.system.external_force(t, &mut self.force);
        }
        // rhs = Δt² (f − A x) − Δt C d
        for ((r, f), q) in self.rhs.iter_mut().zip(&self.force).zip(&self.ax) {
            *r = dt2 * (f - q);
        }
        if let Some(c) = self.system.damping() {
            sparse::mul_add(0.0, &mut self.cd, 1.0, c, &self.d);
            self.rhs
                .iter_mut()
                .zip(&self.cd)
                .for_each(|(r, cd)| *r -= dt * cd);
        }
        if self.partition.is_some() {
            self.solve_constrained();
        } else {
            self.solver.solve_in_place(&mut self.rhs);
        }
        let delta = &self.rhs;

        // Balance terms with v^n = (δ + 2 d) / (2Δt).
        if forced {
            let mut work = 0.0;
            for ((f, dl), d) in self.force.iter().zip(delta).zip(&self.d) {
                work += f * (dl + 2.0 * d);
            }
            self.energy.external_work += 0.5 * work;
        }
        if let Some(c) = self.system.damping() {
            let v: Vec<f64> = delta
                .iter()
                .zip(&self.d)
                .map(|(dl, d)| (dl + 2.0 * d) / (2.0 * dt))
                .collect();
            self.energy.dissipated += dt * sparse::bilinear(c, &v, &v);
        }

        for ((x, d), dl) in self.x.iter_mut().zip(self.d.iter_mut()).zip(delta) {
            *d += dl;
            *x += *d;
        }
        // Prescribed dofs written back by index.
        let t1 = t + dt;
        for (dof, signal, method) in self.dirichlet.iter() {
            let x_old = self.x[dof] - self.d[dof];
            match method {
                Enforcement::Direct | Enforcement::Full => self.x[dof] = signal.value(t1),
                Enforcement::Rate => self.x[dof] = x_old + dt * signal.rate(t + 0.5 * dt),
            }
            self.d[dof] = self.x[dof] - x_old;
        }
        std::mem::swap(&mut self.ax, &mut self.ax_next);
        // now ax_next holds A x^n; recompute ax = A x^{n+1}
        sparse::mul_add(0.0, &mut self.ax, 1.0, self.system.stiffness(), &self.x);
        let ax_prev = std::mem::take(&mut self.ax_next);
        let (kinetic, potential) = self.interval_energy(&ax_prev);
        self.ax_next = ax_prev;
        self.energy.kinetic = kinetic;
        self.energy.potential = potential;
        self.energy.total = kinetic + potential;
        self.step += 1;
        if !self.energy.total.is_finite() {
            return Err(StepError::NonFinite {
                step: self.step,
                t: self.time(),
            });
        }
        Ok(())
    }

    /// Solves the step with prescribed dofs: `self.rhs` holds `Δt² (f − A x) − Δt C d` on
    /// entry and `δ` on exit (prescribed entries included).
    fn solve_constrained(&mut self) {
        let partition = self.partition.as_ref().expect("constrained");
        let n = self.x.len();
        let dt = self.dt;
        let dt2 = dt * dt;
        let t = self.time();
        // δ̄: known δ of direct/rate dofs; g̈, ġ at full dofs; d with full dofs zeroed.
        let mut delta_known = vec![0.0; n];
        let mut g1 = vec![0.0; n];
        let mut g2 = vec![0.0; n];
        let mut d_full = vec![0.0; n];
        let mut delta_c = Vec::with_capacity(self.dirichlet.len());
        for (dof, signal, method) in self.dirichlet.iter() {
            let delta = match method {
                Enforcement::Direct | Enforcement::Full => {
                    signal.value(t + dt) - self.x[dof] - self.d[dof]
                }
                Enforcement::Rate => dt * signal.rate(t + 0.5 * dt) - self.d[dof],
            };
            delta_c.push(delta);
            match method {
                Enforcement::Full => {
                    g1[dof] = signal.rate(t);
                    g2[dof] = signal.acceleration(t);
                    d_full[dof] = self.d[dof];
                }
                _ => delta_known[dof] = delta,
            }
        }
        // rhs −= M (δ̄ + Δt² g̈) + α Δt² A δ̄ + C (Δt/2 δ̄ + Δt² ġ − Δt d_full)
        // (the last term takes back the −Δt C d of full dofs, whose coupling is exact).
        let mut coupling = vec![0.0; n];
        let m_arg: Vec<f64> = (0..n).map(|i| delta_known[i] + dt2 * g2[i]).collect();
        self.system.mass().mul(&m_arg, &mut coupling);
        sparse::mul_add(
            1.0,
            &mut coupling,
            self.alpha * dt2,
            self.system.stiffness(),
            &delta_known,
        );
        if let Some(c) = self.system.damping() {
            let c_arg: Vec<f64> = (0..n)
                .map(|i| 0.5 * dt * delta_known[i] + dt2 * g1[i] - dt * d_full[i])
                .collect();
            sparse::mul_add(1.0, &mut coupling, 1.0, c, &c_arg);
        }
        let mut reduced: Vec<f64> = partition
            .free()
            .iter()
            .map(|&i| self.rhs[i] - coupling[i])
            .collect();
        self.solver.solve_in_place(&mut reduced);
        for (&i, v) in partition.free().iter().zip(&reduced) {
            self.rhs[i] = *v;
        }
        for (k, &dof) in self.dirichlet.dofs().iter().enumerate() {
            self.rhs[dof] = delta_c[k];
        }
    }

    /// Kinetic and potential parts of (19) on `[t_{n−1}, t_n]`, given `A x^{n−1}`.
    fn interval_energy(&self, ax_prev: &[f64]) -> (f64, f64) {
        let dt = self.dt;
        let mut potential = 0.0;
        let mut a_dd = 0.0;
        for (((x, d), q), p) in self.x.iter().zip(&self.d).zip(&self.ax).zip(ax_prev) {
            potential += (x - 0.5 * d) * 0.5 * (q + p);
            a_dd += (q - p) * d;
        }
        let m_dd = self.system.mass().norm_squared(&self.d);
        let kinetic = 0.5 * (m_dd + dt * dt * (self.alpha - 0.25) * a_dd) / (dt * dt);
        (kinetic, 0.5 * potential)
    }

    /// The system being stepped.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The scheme's alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The time step.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Steps taken.
    pub fn step_index(&self) -> u64 {
        self.step
    }

    /// Current time `t_n = t0 + n Δt`.
    pub fn time(&self) -> f64 {
        self.t0 + self.dt * self.step as f64
    }

    /// `x^n`.
    pub fn position(&self) -> &[f64] {
        &self.x
    }

    /// The half-step velocity `(x^n − x^{n−1}) / Δt`, the one in the energy (19).
    pub fn velocity(&self) -> Vec<f64> {
        self.d.iter().map(|d| d / self.dt).collect()
    }

    /// Discrete energy (19) of `[t_{n−1}, t_n]` and the accumulated balance terms.
    pub fn energy(&self) -> Energy {
        self.energy
    }

    /// Numeric factorizations done for this run (0 when explicit).
    pub fn factorization_count(&self) -> usize {
        self.solver.factorizations() + self.start_factorizations
    }

    /// Whether each step is explicit (diagonal matrix, no linear solve).
    pub fn is_explicit(&self) -> bool {
        matches!(self.solver, StepSolver::Diagonal(_))
    }

    /// The stability bound (23) and the eigenvalue estimate, for `α < ¼`.
    pub fn stability(&self) -> Option<(f64, LargestEigenvalue)> {
        self.stability
    }
}
