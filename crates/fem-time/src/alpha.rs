//! The three-level alpha scheme of Glowinski–Holmström (16), from Dean et al.
//!
//! For `M ẍ + C ẋ + f_int(x) = f(t)`:
//!
//! ```text
//! M (x^{n+1} − 2x^n + x^{n−1}) / Δt² + α f_int(x^{n+1}) + (1 − 2α) f_int(x^n) + α f_int(x^{n−1})
//!   + C (x^{n+1} − x^{n−1}) / (2Δt) = f^n,                      0 ≤ α ≤ 1/2      (16)
//! ```
//!
//! started by (64), `x^{−1} = x^1 − 2Δt x_1` substituted into (16) at `n = 0`. For a linear
//! system, `f_int(x) = A x`, this is the paper's (16) exactly; for a nonlinear one it is its
//! natural extension (the weights act on the forces). With `α = 0` it is the explicit central
//! difference (leap-frog) method.
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
//! `x^{±1} = x^0 ± Δt x_1 + e`. For a linear system (or any system with `α = 0`, where `δ`
//! enters linearly) the matrix is factored once per run (and the start matrix once more if
//! `C ≠ 0`); with `α = 0`, a lumped mass and no damping it is diagonal and the scheme is
//! explicit: no linear solve at all. For a nonlinear system with `α > 0` each step (and the
//! start) is solved by Newton's method on
//!
//! ```text
//! R(δ) = M δ + Δt² (α f_int(x^n + d^n + δ) + (1 − 2α) f_int(x^n) + α f_int(x^{n−1}) − f^n)
//!        + Δt C (d^n + δ/2),          J = M + α Δt² K_T(x^{n+1}) + Δt/2 C
//! ```
//!
//! (Cholesky or LU as the system's tangent is symmetric or not).
//!
//! # Energy
//! [`Energy`] is the discrete energy (19) of the interval `[t_{n−1}, t_n]`,
//! `E^{n−1/2} = ½ (M_α d/Δt, d/Δt) + ½ (A x^{n−1/2}, x^{n−1/2})` with
//! `M_α = M + Δt² (α − ¼) A` (18). By (17), `E^{n+1/2} − E^{n−1/2} = Δt (f^n − C v^n, v^n)`,
//! `v^n = (x^{n+1} − x^{n−1}) / (2Δt)`; the two sums are accumulated as the external work and
//! the dissipated energy, so `total + dissipated − external_work` is constant to round-off.
//! For a nonlinear system the potential part is `V(x^{n−1/2})` (where the system has a
//! potential; no energy otherwise) and `(A d, d)` in `M_α` is the secant
//! `(f_int(x^n) − f_int(x^{n−1}), d)`: the balance then holds to the truncation error, and the
//! energy-conserving variant is [`crate::NonlinearAlphaScheme`].
//!
//! # Velocity
//! The velocity at `t_n` is `(3x^n − 4x^{n−1} + x^{n−2}) / (2Δt) = (d^n + δ/2)/Δt`, second
//! order (the initial velocity at `n = 0`).
//!
//! # Stability
//! Unconditional for `α ≥ ¼`; for `α < ¼` the step must satisfy (23),
//! `Δt < 2 / sqrt(λ_m (1 − 4α))` with `λ_m` the largest eigenvalue of `M⁻¹ A`, which
//! [`AlphaScheme::new`] estimates (at the initial state for a nonlinear system) and enforces.

use std::borrow::Cow;

use fem_assembly::{SparseCholesky, sparse};
use fem_constraints::Enforcement;
use nalgebra_sparse::CsrMatrix;

use crate::Clock;
use crate::control::DirichletControl;
use crate::error::check_alpha;
use crate::newton::{NewtonReport, NewtonSolver, NonlinearProblem};
use crate::stability::{LargestEigenvalue, largest_eigenvalue, largest_eigenvalue_of};
use crate::step_matrix::{Coefficients, StepMatrix, Terms};
use crate::stepper::{
    Energy, Invariant, NodalStepper, StateField, StateKind, StepReport, Stepper, restored,
};
use crate::system::damping_csr;
use crate::{Mass, SecondOrderSystem, StepError, StepSettings, StepStart, TangentKind};

/// The name of the alpha scheme (16) in input files (`time.scheme: alpha`).
pub const NAME: &str = "alpha";

/// The stability bound (23) of the alpha scheme on a system: `None` for `α ≥ ¼`
/// (unconditionally stable), else the bound and the eigenvalue estimate it came from (with the
/// tangent at `x` for a nonlinear system, or, for a system without a tangent, the tangent's
/// action by central differences of the internal force).
pub fn stability_bound<S: SecondOrderSystem + ?Sized>(
    system: &S,
    alpha: f64,
    x: &[f64],
) -> Result<Option<(f64, LargestEigenvalue)>, StepError> {
    if alpha >= 0.25 {
        return Ok(None);
    }
    let factor = match system.mass() {
        Mass::Consistent(m) => Some(SparseCholesky::new(m)?),
        Mass::Lumped(_) => None,
    };
    let failed = |e| StepError::Evaluation {
        step: 0,
        t: f64::NAN,
        source: e,
    };
    let k = match system.constant_stiffness() {
        Some(k) if system.is_linear() => Some(Cow::Borrowed(k)),
        _ if system.tangent_kind() == TangentKind::NotProvided => None,
        _ => Some(Cow::Owned(
            system.tangent(x).map_err(failed)?.to_csr().into_owned(),
        )),
    };
    let lambda = match k {
        Some(k) => largest_eigenvalue(system.mass(), factor.as_ref(), &k, 1e-10, 5000),
        None => {
            let action = crate::check::TangentAction::new(system, x).map_err(failed)?;
            largest_eigenvalue_of(
                system.mass(),
                factor.as_ref(),
                |y, ky| action.apply(y, ky),
                1e-10,
                5000,
            )
            .map_err(failed)?
        }
    };
    let bound = 2.0 / (lambda.value * (1.0 - 4.0 * alpha)).sqrt();
    Ok(Some((bound, lambda)))
}

/// How a step is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Solution {
    /// One linear solve with the matrix factored once (linear system, or `α = 0`).
    Linear,
    /// Newton's method on `R(δ)` (nonlinear system, `α > 0`).
    Newton,
}

/// The alpha scheme (16) on a system it owns.
///
/// Step contract: after construction the state is `x^0` at `t0`; each [`Stepper::step`]
/// advances by one `dt` and owns the time (`t_n = t0 + n dt`, from the index). The energy
/// reported after step `n` is that of the interval `[t_{n−1}, t_n]` (at `n = 0`, of
/// `[t_{−1}, t_0]` with the fictitious `x^{−1}` of the start (64)).
#[derive(Debug)]
pub struct AlphaScheme<S: SecondOrderSystem> {
    system: S,
    alpha: f64,
    clock: Clock,
    solution: Solution,
    /// `x^n`.
    x: Vec<f64>,
    /// `d^n = x^n − x^{n−1}`.
    d: Vec<f64>,
    /// `f_int(x^n)`.
    ax: Vec<f64>,
    /// `δ` of the last step (for the velocity at `t_n`).
    delta: Vec<f64>,
    /// The initial velocity (the velocity before the first step).
    v0: Vec<f64>,
    /// The stiffness `A` of a linear system, when the system does not lend its own.
    own_stiffness: Option<CsrMatrix<f64>>,
    /// `C` in CSR form.
    damping: Option<CsrMatrix<f64>>,
    matrix: StepMatrix,
    start_factorizations: usize,
    energy: Energy,
    has_energy: bool,
    stability: Option<(f64, LargestEigenvalue)>,
    /// Newton's method (taken out while a solve borrows the scheme).
    newton: Option<NewtonSolver>,
    last: StepReport,
    /// Scratch: force, right-hand side, `f_int(x^{n−1})`, `C d`.
    force: Vec<f64>,
    rhs: Vec<f64>,
    ax_next: Vec<f64>,
    cd: Vec<f64>,
    /// Prescribed dofs, when there are any.
    control: Option<DirichletControl>,
}

impl<S: SecondOrderSystem> AlphaScheme<S> {
    /// `α = ¼`: unconditionally stable, and for a linear system the discrete energy (19) is
    /// exactly the continuous form (14) at the half step.
    pub fn energy_conserving(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 0.25, settings, x0, v0)
    }

    /// `α = 0`: the central difference method, explicit with a lumped mass (and no damping),
    /// stable for `Δt < 2/sqrt(λ_m)`.
    pub fn explicit(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 0.0, settings, x0, v0)
    }

    /// The scheme with parameter `alpha` in `[0, ½]` from `x(t0) = x0`, `ẋ(t0) = v0`.
    /// Checks the stability bound (23) for `α < ¼`, factors the step matrix and performs the
    /// start (64). Prescribed entries of `x0`, `v0` are replaced by `g(t0)`, `ġ(t0)`; direct and
    /// full control hold `x^{n+1} = g(t_{n+1})`, rate control the half-step velocity
    /// `(x^{n+1} − x^n)/Δt = ġ(t_{n+1/2})`, and full control gives the free rows the exact
    /// inertia of the prescribed motion.
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
        let dt = clock.dt();
        let linear = system.is_linear();
        let solution = if linear || alpha == 0.0 {
            Solution::Linear
        } else {
            Solution::Newton
        };
        // The bound of the full system bounds that of the free one (interlacing).
        let stability = stability_bound(&system, alpha, &x0)?;
        if let Some((bound, lambda)) = stability
            && dt > bound
        {
            return Err(StepError::Unstable {
                which: if alpha == 0.0 {
                    "(23) of the explicit alpha scheme (alpha = 0)"
                } else {
                    "(23) of the alpha scheme with alpha < 1/4"
                },
                dt,
                bound,
                lambda_max: lambda.value,
                advice: "reduce dt below the bound or use alpha = 0.25 (unconditionally stable)",
            });
        }
        let needs_tangent = linear || alpha != 0.0;
        let symmetry = match (system.tangent_kind().symmetry(), needs_tangent) {
            (Some(symmetry), _) => symmetry,
            (None, false) => fem_assembly::Symmetry::Symmetric,
            (None, true) => {
                return Err(StepError::NeedsTangent {
                    scheme: "the alpha scheme with alpha > 0 (or on a linear system)",
                });
            }
        };
        let own_stiffness = match system.constant_stiffness() {
            Some(_) if linear => None,
            _ if linear => Some(
                system
                    .tangent(&x0)
                    .map_err(|e| clock.failed(e))?
                    .to_csr()
                    .into_owned(),
            ),
            _ => None,
        };
        let damping = damping_csr(&system);
        let dt2 = dt * dt;
        let tangent0;
        let a_matrix: Option<&CsrMatrix<f64>> = match solution {
            Solution::Linear if alpha == 0.0 && !linear => None,
            Solution::Linear => Some(match &own_stiffness {
                Some(k) => k,
                None => system
                    .constant_stiffness()
                    .expect("a linear system lends its K"),
            }),
            Solution::Newton => {
                tangent0 = system
                    .tangent(&x0)
                    .map_err(|e| clock.failed(e))?
                    .to_csr()
                    .into_owned();
                Some(&tangent0)
            }
        };
        let matrix = StepMatrix::new(
            Terms {
                mass: system.mass(),
                damping: damping.as_ref(),
                stiffness: a_matrix,
            },
            Coefficients {
                mass: 1.0,
                damping: 0.5 * dt,
                stiffness: alpha * dt2,
            },
            symmetry,
            control.as_ref(),
            system.dof_points(),
        )?;

        let mut scheme = Self {
            alpha,
            clock,
            solution,
            x: x0,
            d: vec![0.0; n],
            ax: vec![0.0; n],
            delta: vec![0.0; n],
            v0: Vec::new(),
            own_stiffness,
            damping,
            matrix,
            start_factorizations: 0,
            energy: Energy::default(),
            has_energy: true,
            stability,
            newton: Some(NewtonSolver::new(newton)),
            last: StepReport::default(),
            force: vec![0.0; n],
            rhs: vec![0.0; n],
            ax_next: vec![0.0; n],
            cd: vec![0.0; n],
            control,
            system,
        };
        let e = match solution {
            Solution::Linear => scheme.linear_start(&v0)?,
            Solution::Newton => scheme.newton_start(&v0)?,
        };
        scheme.d = v0.iter().zip(&e).map(|(v, e)| dt * v - e).collect();
        let x_prev: Vec<f64> = scheme.x.iter().zip(&scheme.d).map(|(x, d)| x - d).collect();
        let mut ax_prev = vec![0.0; n];
        scheme
            .system
            .internal_force(&x_prev, &mut ax_prev)
            .map_err(|e| clock.failed(e))?;
        let (kinetic, potential) = scheme.interval_energy(&ax_prev);
        scheme.has_energy = potential.is_some();
        let potential = potential.unwrap_or(0.0);
        scheme.energy = Energy {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: 0.0,
            dissipated: 0.0,
            reaction_work: 0.0,
        };
        scheme.ax_next = ax_prev;
        scheme.v0 = v0;
        Ok(scheme)
    }

    /// The stiffness for the reactions: `A` when it enters the step (`α ≠ 0`).
    fn stiffness_for_reactions(&self) -> Option<&CsrMatrix<f64>> {
        (self.alpha != 0.0).then(|| self.stiffness())
    }

    /// The stiffness `A` of a linear system.
    fn stiffness(&self) -> &CsrMatrix<f64> {
        match &self.own_stiffness {
            Some(k) => k,
            None => self
                .system
                .constant_stiffness()
                .expect("a linear system lends its K"),
        }
    }

    /// The start (64) with one linear solve: returns `e`; sets `f^0` and `f_int(x^0)`.
    fn linear_start(&mut self, v0: &[f64]) -> Result<Vec<f64>, StepError> {
        let (dt, t0, alpha) = (self.clock.dt(), self.clock.t0(), self.alpha);
        let dt2 = dt * dt;
        let n = self.x.len();
        // (M + α Δt² A) e = ½ Δt² (f⁰ − A x⁰ − C x₁), x^{±1} = x⁰ ± Δt x₁ + e.
        self.system.external_force(t0, &mut self.force);
        self.system
            .internal_force(&self.x, &mut self.ax)
            .map_err(|e| self.clock.failed(e))?;
        let mut e: Vec<f64> = self
            .force
            .iter()
            .zip(&self.ax)
            .map(|(f, q)| 0.5 * dt2 * (f - q))
            .collect();
        if let Some(c) = &self.damping {
            sparse::mul_add(1.0, &mut e, -0.5 * dt2, c, v0);
        }
        let start_matrix;
        let start = if self.damping.is_none() {
            &self.matrix
        } else {
            let a = (alpha != 0.0).then(|| self.stiffness());
            start_matrix = StepMatrix::new(
                Terms {
                    mass: self.system.mass(),
                    damping: None,
                    stiffness: a,
                },
                Coefficients {
                    mass: 1.0,
                    damping: 0.0,
                    stiffness: alpha * dt2,
                },
                self.matrix.symmetry(),
                self.control.as_ref(),
                self.system.dof_points(),
            )?;
            self.start_factorizations = start_matrix.factorizations();
            &start_matrix
        };
        match &self.control {
            None => start.solve_in_place(&mut e),
            Some(p) => {
                // Constrained e from the history each method holds; the free rows then see
                // the coupling (direct, rate) or the exact ½ Δt² M g̈(t0) (full).
                let mut e_known = vec![0.0; n];
                let mut g2 = vec![0.0; n];
                for (dof, signal, method) in p.iter() {
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
                self.system.mass().mul(&m_arg, &mut coupling);
                if alpha != 0.0 {
                    sparse::mul_add(1.0, &mut coupling, alpha * dt2, self.stiffness(), &e_known);
                }
                let mut reduced = Vec::new();
                p.gather_free(&e, &coupling, &mut reduced);
                start.solve_in_place(&mut reduced);
                p.scatter_free(&reduced, &mut e);
            }
        }
        Ok(e)
    }

    /// The start (64) by Newton's method (nonlinear system, `α > 0`): returns `e`.
    fn newton_start(&mut self, v0: &[f64]) -> Result<Vec<f64>, StepError> {
        let (dt, t0) = (self.clock.dt(), self.clock.t0());
        let n = self.x.len();
        self.system.external_force(t0, &mut self.force);
        self.system
            .internal_force(&self.x, &mut self.ax)
            .map_err(|e| self.clock.failed(e))?;
        // Constrained e as in the linear start (the full-control coupling aside).
        let mut e = vec![0.0; n];
        let mut fixed = Vec::new();
        if let Some(p) = &self.control {
            for (dof, signal, method) in p.iter() {
                let d0 = match method {
                    Enforcement::Direct | Enforcement::Full => {
                        signal.value(t0) - signal.value(t0 - dt)
                    }
                    Enforcement::Rate => dt * signal.rate(t0 - 0.5 * dt),
                };
                e[dof] = dt * v0[dof] - d0;
                fixed.push(dof);
            }
        }
        let dx1: Vec<f64> = v0.iter().map(|v| dt * v).collect();
        let scale = self.force_scale(&dx1);
        let mut newton = self
            .newton
            .take()
            .expect("the solver is home between solves");
        let mut eq = AlphaEquation::new(self, &dx1, true, e);
        let mut y = eq.free_guess();
        let solved = newton.solve(&mut eq, &mut y, scale, 0);
        let e = eq.finish(&y);
        let factorizations = eq.factorizations;
        self.newton = Some(newton);
        let report = solved?;
        self.start_factorizations = factorizations;
        self.last.iterations = report.iterations;
        Ok(e)
    }

    /// `‖M d‖∞ + Δt² (‖f_int(x)‖∞ + ‖f‖∞)`: the size of the terms of `R`.
    fn force_scale(&self, d: &[f64]) -> f64 {
        let n = d.len();
        let mut md = vec![0.0; n];
        self.system.mass().mul(d, &mut md);
        let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        (inf(&md) + self.clock.dt() * self.clock.dt() * (inf(&self.ax) + inf(&self.force)))
            .max(f64::MIN_POSITIVE)
    }

    /// Advances from `t_n` to `t_{n+1}` with the solution method of the system.
    fn advance(&mut self) -> Result<StepReport, StepError> {
        let dt = self.clock.dt();
        let dt2 = dt * dt;
        let t = self.time();
        let forced = self.system.has_external_force();
        if forced {
            self.system.external_force(t, &mut self.force);
        }
        let mut report = StepReport {
            iterations: usize::from(!self.matrix.is_diagonal()),
            ..StepReport::default()
        };
        match self.solution {
            Solution::Linear => {
                // rhs = Δt² (f − A x) − Δt C d
                for ((r, f), q) in self.rhs.iter_mut().zip(&self.force).zip(&self.ax) {
                    *r = dt2 * (f - q);
                }
                if let Some(c) = &self.damping {
                    sparse::mul_add(0.0, &mut self.cd, 1.0, c, &self.d);
                    self.rhs
                        .iter_mut()
                        .zip(&self.cd)
                        .for_each(|(r, cd)| *r -= dt * cd);
                }
                if self.control.is_some() {
                    self.solve_constrained();
                } else {
                    self.matrix.solve_in_place(&mut self.rhs);
                }
            }
            Solution::Newton => {
                let r = self.newton_step()?;
                report.iterations = r.iterations;
                report.residual = r.residual;
            }
        }
        let delta = &self.rhs;

        // The reactions of prescribed dofs, r_c = [(16) × Δt²]_c / Δt², and their work
        // Δt (r, v^n)_c, v^n = (δ + 2d)/(2Δt): with it the balance (17) holds for the whole
        // system.
        if self.solution == Solution::Linear
            && let Some(p) = &self.control
        {
            let a = self.stiffness_for_reactions();
            let mut work = 0.0;
            for &c in p.conditions().dofs() {
                let mut residual =
                    mass_row(self.system.mass(), c, delta) - dt2 * self.force[c] + dt2 * self.ax[c];
                if let Some(a) = a {
                    residual += self.alpha * dt2 * row_dot(a, c, delta);
                }
                if let Some(cm) = &self.damping {
                    residual += dt * (row_dot(cm, c, &self.d) + 0.5 * row_dot(cm, c, delta));
                }
                work += residual / dt2 * 0.5 * (delta[c] + 2.0 * self.d[c]);
            }
            self.energy.reaction_work += work;
        }

        // Balance terms with v^n = (δ + 2 d) / (2Δt).
        if forced {
            let mut work = 0.0;
            for ((f, dl), d) in self.force.iter().zip(delta).zip(&self.d) {
                work += f * (dl + 2.0 * d);
            }
            self.energy.external_work += 0.5 * work;
        }
        if let Some(c) = &self.damping {
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
        if let Some(p) = &self.control {
            let t1 = t + dt;
            for (dof, signal, method) in p.iter() {
                let x_old = self.x[dof] - self.d[dof];
                let d_old = self.d[dof] - self.rhs[dof];
                match method {
                    Enforcement::Direct | Enforcement::Full => self.x[dof] = signal.value(t1),
                    Enforcement::Rate => self.x[dof] = x_old + dt * signal.rate(t + 0.5 * dt),
                }
                self.d[dof] = self.x[dof] - x_old;
                self.rhs[dof] = self.d[dof] - d_old;
            }
        }
        // The last δ is kept for the velocity; the rhs buffer is free for the next step.
        std::mem::swap(&mut self.rhs, &mut self.delta);
        std::mem::swap(&mut self.ax, &mut self.ax_next);
        // now ax_next holds f_int(x^n); recompute ax = f_int(x^{n+1})
        let clock = self.clock;
        self.system
            .internal_force(&self.x, &mut self.ax)
            .map_err(|e| clock.failed(e))?;
        let ax_prev = std::mem::take(&mut self.ax_next);
        let (kinetic, potential) = self.interval_energy(&ax_prev);
        self.ax_next = ax_prev;
        let potential = potential.unwrap_or(0.0);
        self.energy.kinetic = kinetic;
        self.energy.potential = potential;
        self.energy.total = kinetic + potential;
        self.clock.advance();
        if !self.energy.total.is_finite() || self.x.iter().any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                step: self.clock.step(),
                t: self.time(),
            });
        }
        self.last = report;
        Ok(report)
    }

    /// Solves the step with prescribed dofs: `self.rhs` holds `Δt² (f − A x) − Δt C d` on
    /// entry and `δ` on exit (prescribed entries included).
    fn solve_constrained(&mut self) {
        let partition = self.control.as_ref().expect("constrained");
        let n = self.x.len();
        let dt = self.clock.dt();
        let dt2 = dt * dt;
        let t = self.time();
        // δ̄: known δ of direct/rate dofs; g̈, ġ at full dofs; d with full dofs zeroed.
        let mut delta_known = vec![0.0; n];
        let mut g1 = vec![0.0; n];
        let mut g2 = vec![0.0; n];
        let mut d_full = vec![0.0; n];
        let mut delta_c = Vec::with_capacity(partition.conditions().len());
        for (dof, signal, method) in partition.iter() {
            let delta = Self::constrain(method, signal, t, dt, self.x[dof], self.d[dof]);
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
        if self.alpha != 0.0 {
            sparse::mul_add(
                1.0,
                &mut coupling,
                self.alpha * dt2,
                self.stiffness(),
                &delta_known,
            );
        }
        if let Some(c) = &self.damping {
            let c_arg: Vec<f64> = (0..n)
                .map(|i| 0.5 * dt * delta_known[i] + dt2 * g1[i] - dt * d_full[i])
                .collect();
            sparse::mul_add(1.0, &mut coupling, 1.0, c, &c_arg);
        }
        let mut reduced = Vec::new();
        partition.gather_free(&self.rhs, &coupling, &mut reduced);
        self.matrix.solve_in_place(&mut reduced);
        partition.scatter_free(&reduced, &mut self.rhs);
        for (k, &dof) in partition.conditions().dofs().iter().enumerate() {
            self.rhs[dof] = delta_c[k];
        }
    }

    /// The prescribed `δ` of a constrained dof at `x^n`, `d^n` (Serac's three methods in this
    /// scheme): direct and full hold the position, `x^{n+1} = g(t_{n+1})`; rate holds the
    /// half-step velocity, `d^{n+1} = Δt ġ(t_{n+1/2})`. Full control moreover gives the free
    /// rows the exact inertia and damping of the prescribed motion (`Δt² M g̈`, `Δt² C ġ`).
    fn constrain(
        method: Enforcement,
        signal: &dyn fem_constraints::Signal,
        t: f64,
        dt: f64,
        x: f64,
        d: f64,
    ) -> f64 {
        match method {
            Enforcement::Direct | Enforcement::Full => signal.value(t + dt) - x - d,
            Enforcement::Rate => dt * signal.rate(t + 0.5 * dt) - d,
        }
    }

    /// One Newton solve of `R(δ) = 0` into `self.rhs` (nonlinear system, `α > 0`).
    fn newton_step(&mut self) -> Result<NewtonReport, StepError> {
        let n = self.x.len();
        let t = self.time();
        let dt = self.clock.dt();
        // Guess: the last δ; constrained entries prescribed.
        let mut delta = self.delta.clone();
        if let Some(p) = &self.control {
            for (dof, signal, method) in p.iter() {
                delta[dof] = Self::constrain(method, signal, t, dt, self.x[dof], self.d[dof]);
            }
        }
        let d = self.d.clone();
        let scale = self.force_scale(&d);
        let step = self.clock.step() + 1;
        let mut newton = self
            .newton
            .take()
            .expect("the solver is home between solves");
        let mut eq = AlphaEquation::new(self, &d, false, delta);
        let mut y = eq.free_guess();
        let solved = newton.solve(&mut eq, &mut y, scale, step);
        let delta = eq.finish(&y);
        self.newton = Some(newton);
        let report = solved?;
        self.rhs.copy_from_slice(&delta);
        debug_assert_eq!(self.rhs.len(), n);
        Ok(report)
    }

    /// Kinetic and potential parts of (19) on `[t_{n−1}, t_n]`, given `f_int(x^{n−1})`.
    fn interval_energy(&self, ax_prev: &[f64]) -> (f64, Option<f64>) {
        let dt = self.clock.dt();
        let mut potential = 0.0;
        let mut a_dd = 0.0;
        for (((x, d), q), p) in self.x.iter().zip(&self.d).zip(&self.ax).zip(ax_prev) {
            potential += (x - 0.5 * d) * 0.5 * (q + p);
            a_dd += (q - p) * d;
        }
        let m_dd = self.system.mass().norm_squared(&self.d);
        let kinetic = 0.5 * (m_dd + dt * dt * (self.alpha - 0.25) * a_dd) / (dt * dt);
        let potential = if self.system.is_linear() {
            Some(0.5 * potential)
        } else {
            let mid: Vec<f64> = self
                .x
                .iter()
                .zip(&self.d)
                .map(|(x, d)| x - 0.5 * d)
                .collect();
            self.system.potential_energy(&mid)
        };
        (kinetic, potential)
    }

    /// The system being stepped.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The system, mutably (to update a model's own state between steps).
    pub fn system_mut(&mut self) -> &mut S {
        &mut self.system
    }

    /// The scheme's alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The half-step velocity `(x^n − x^{n−1}) / Δt`, the one in the energy (19).
    pub fn half_step_velocity(&self) -> Vec<f64> {
        self.d.iter().map(|d| d / self.clock.dt()).collect()
    }

    /// Numeric factorizations done for this run (0 when explicit).
    pub fn factorization_count(&self) -> usize {
        self.matrix.factorizations() + self.start_factorizations
    }

    /// Whether each step is explicit (diagonal matrix, no linear solve).
    pub fn is_explicit(&self) -> bool {
        self.matrix.is_diagonal()
    }

    /// The stability bound (23) and the eigenvalue estimate, for `α < ¼`.
    pub fn stability(&self) -> Option<(f64, LargestEigenvalue)> {
        self.stability
    }
}

impl<S: SecondOrderSystem> Stepper for AlphaScheme<S> {
    fn step(&mut self) -> Result<StepReport, StepError> {
        self.advance()
    }
    fn clock(&self) -> Clock {
        self.clock
    }
    fn energy(&self) -> Option<Energy> {
        self.has_energy.then_some(self.energy)
    }
    /// Round-off for a linear system, counting the reactions' work; full control couples the
    /// free dofs to the exact `g̈` rather than to the scheme's own increment, which the balance
    /// then holds to the truncation error only, as it does for a nonlinear system.
    fn invariant(&self) -> Invariant {
        let full = self.control.as_ref().is_some_and(|c| c.has_full());
        if self.system.is_linear() && !full {
            Invariant::RoundOff
        } else {
            Invariant::Truncation
        }
    }
    fn state(&self) -> Vec<StateField<'_>> {
        vec![
            StateField::dofs("position", &self.x),
            StateField::dofs("previous_increment", &self.d),
            StateField::dofs("second_difference", &self.delta),
            StateField::dofs("internal_force", &self.ax),
            StateField::dofs("previous_internal_force", &self.ax_next),
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
        self.ax
            .copy_from_slice(restored(fields, "internal_force", n)?);
        self.ax_next
            .copy_from_slice(restored(fields, "previous_internal_force", n)?);
        self.energy = Energy::from_slice(restored(fields, "energy", 6)?);
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl<S: SecondOrderSystem> NodalStepper for AlphaScheme<S> {
    fn position(&self) -> &[f64] {
        &self.x
    }
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

/// The equation of one Newton step (or of the start) of the alpha scheme on a nonlinear
/// system, in the free unknowns.
struct AlphaEquation<'a, S: SecondOrderSystem> {
    scheme: &'a mut AlphaScheme<S>,
    /// `d^n` for a step; `Δt x_1` for the start.
    d: &'a [f64],
    start: bool,
    /// The full unknown (`δ` or `e`), constrained entries fixed.
    full: Vec<f64>,
    /// Scratch.
    x1: Vec<f64>,
    xm: Vec<f64>,
    f1: Vec<f64>,
    fm: Vec<f64>,
    r: Vec<f64>,
    work: Vec<f64>,
    factorizations: usize,
}

impl<'a, S: SecondOrderSystem> AlphaEquation<'a, S> {
    fn new(scheme: &'a mut AlphaScheme<S>, d: &'a [f64], start: bool, full: Vec<f64>) -> Self {
        let n = full.len();
        Self {
            scheme,
            d,
            start,
            full,
            x1: vec![0.0; n],
            xm: vec![0.0; n],
            f1: vec![0.0; n],
            fm: vec![0.0; n],
            r: vec![0.0; n],
            work: vec![0.0; n],
            factorizations: 0,
        }
    }

    fn free_guess(&self) -> Vec<f64> {
        match &self.scheme.control {
            Some(p) => p.free().iter().map(|&i| self.full[i]).collect(),
            None => self.full.clone(),
        }
    }

    fn set(&mut self, y: &[f64]) {
        match &self.scheme.control {
            Some(p) => p.scatter_free(y, &mut self.full),
            None => self.full.copy_from_slice(y),
        }
    }

    fn finish(&mut self, y: &[f64]) -> Vec<f64> {
        self.set(y);
        std::mem::take(&mut self.full)
    }

    /// The states where the step evaluates `f_int` with weight `α`: `x^{n+1}` and `x^{n−1}`
    /// (a step), or `x^1` and `x^{−1}` (the start).
    fn states(&mut self) {
        let s = &*self.scheme;
        for i in 0..s.x.len() {
            if self.start {
                self.x1[i] = s.x[i] + self.d[i] + self.full[i];
                self.xm[i] = s.x[i] - self.d[i] + self.full[i];
            } else {
                self.x1[i] = s.x[i] + self.d[i] + self.full[i];
                self.xm[i] = s.x[i] - self.d[i];
            }
        }
    }
}

impl<S: SecondOrderSystem> NonlinearProblem for AlphaEquation<'_, S> {
    fn n_unknowns(&self) -> usize {
        self.scheme
            .control
            .as_ref()
            .map_or(self.full.len(), |p| p.free().len())
    }

    fn residual(&mut self, y: &[f64], out: &mut [f64]) -> Result<(), StepError> {
        self.set(y);
        self.states();
        let s = &*self.scheme;
        let (alpha, dt) = (s.alpha, s.clock.dt());
        let dt2 = dt * dt;
        let failed = |e| s.clock.failed(e);
        s.system
            .internal_force(&self.x1, &mut self.f1)
            .map_err(failed)?;
        s.system
            .internal_force(&self.xm, &mut self.fm)
            .map_err(failed)?;
        // Step: M δ + Δt² (α f(x^{n+1}) + (1−2α) f(x^n) + α f(x^{n−1}) − f) + Δt C (d + δ/2).
        // Start: 2 M e + Δt² (α f(x^1) + (1−2α) f(x^0) + α f(x^{−1}) − f) + Δt² C x_1.
        s.system.mass().mul(&self.full, &mut self.r);
        let c_m = if self.start { 2.0 } else { 1.0 };
        for i in 0..self.r.len() {
            self.r[i] = c_m * self.r[i]
                + dt2
                    * (alpha * (self.f1[i] + self.fm[i]) + (1.0 - 2.0 * alpha) * s.ax[i]
                        - s.force[i]);
        }
        if let Some(c) = &s.damping {
            for i in 0..self.work.len() {
                self.work[i] = if self.start {
                    self.d[i]
                } else {
                    self.d[i] + 0.5 * self.full[i]
                };
            }
            sparse::mul_add(1.0, &mut self.r, dt, c, &self.work);
        }
        match &s.control {
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
        self.states();
        let s = &mut *self.scheme;
        // The start's Jacobian, 2M + α Δt² (K(x^1) + K(x^{−1})), is approximated by the step
        // matrix at x^1 times 2 (an inexact Newton: it converges linearly, at a rate O(Δt)).
        let k = s.matrix.stiffness_mut().ok_or(StepError::PatternMismatch {
            what: "a Newton step of the alpha scheme on a matrix without its tangent",
        })?;
        let clock = s.clock;
        s.system
            .tangent_into(&self.x1, k)
            .map_err(|e| clock.failed(e))?;
        s.matrix.refactor()?;
        self.factorizations += 1;
        Ok(())
    }

    fn solve_jacobian(&self, b: &mut [f64]) {
        self.scheme.matrix.solve_in_place(b);
        if self.start {
            b.iter_mut().for_each(|v| *v *= 0.5);
        }
    }
}

/// `(A x)_row` for one row of a CSR matrix.
pub(crate) fn row_dot(a: &CsrMatrix<f64>, row: usize, x: &[f64]) -> f64 {
    let r = a.row(row);
    r.col_indices()
        .iter()
        .zip(r.values())
        .map(|(&j, v)| v * x[j])
        .sum()
}

/// `(M x)_row`.
pub(crate) fn mass_row(mass: &Mass, row: usize, x: &[f64]) -> f64 {
    match mass {
        Mass::Lumped(d) => d[row] * x[row],
        Mass::Consistent(m) => row_dot(m, row, x),
    }
}
