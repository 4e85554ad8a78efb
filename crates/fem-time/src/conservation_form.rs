//! The conservation-form implicit scheme (40) of Glowinski–Holmström for Lagrangian systems
//! in generalized coordinates, with constraints by penalty or augmented Lagrangian.
//!
//! A system `d/dt f_j(q, q̇) + g_j(q, q̇) = Q_j(t)` (39), (41) — `f = ∂T/∂q̇` the generalized
//! momentum, `g = −∂T/∂q + ∂V/∂q`, `Q` the applied generalized forces — is a
//! [`ConservationFormSystem`]. Constraints `c(q) = 0` or `c(q) ≤ 0` (a
//! [`ConstraintFunction`]) add the force `Σ_k ψ_k'(c_k(q)) ∇c_k(q)` of a [`ConstraintSolver`]
//! to `g`. The scheme (40), with `q^{n±1/2} = (q^{n±1} + q^n)/2`,
//! `w^{n+1/2} = (q^{n+1} − q^n)/Δt`, `w^{n−1/2} = (q^n − q^{n−1})/Δt`:
//!
//! ```text
//! [f(q^{n+1/2}, w^{n+1/2}) − f(q^{n−1/2}, w^{n−1/2})] / Δt
//!   + ½ [G(q^{n+1/2}, w^{n+1/2}) + G(q^{n−1/2}, w^{n−1/2})] = Q(t_n),     G = g + constraint force
//! q^0 = q_0,   q^1 − q^{−1} = 2 Δt q̇_0.
//! ```
//!
//! # As implemented
//! Multiplied by `Δt`, the residual is solved by [`NewtonSolver`] with a dense
//! Jacobian by central differences ([`central_difference_jacobian`]; the systems are small).
//! The `n − 1/2` terms are those of the previous step, kept; the first step (`n = 0`) has
//! `q^{−1} = y − 2Δt q̇_0` and recomputes them with `y`. The unknown is the increment `z = q^{n+1} − q^n` (so that the velocity `z/Δt` carries no
//! cancellation), guessed as the previous increment.
//!
//! With an iterative solver (the augmented Lagrangian) each step runs Algorithm 1 of §1.4:
//! solve (40) with the multipliers fixed, update them by (10) with `c(q^{n+1/2})`, repeat
//! until the constraint residual at `q^{n+1/2}` is at most [`MultiplierSettings::tolerance`]
//! ("discretized in time in the same way as (40)"). The multipliers of step `n` start those
//! of step `n + 1`. The penalty method solves once per step.
//!
//! # Energy
//! The reported energy is `T + V` at the half step, `T(q^{n+1/2}, w^{n+1/2}) + V(q^{n+1/2})`
//! (the paper's Fig. 5 quantity), with the constraint energy `Σ ψ_k(c_k(q^{n+1/2}))` beside it.
//! Scheme (40) averages the forces rather than taking a discrete gradient, so unlike
//! (31) it conserves `T + V` only to `O(Δt²)`.

use std::borrow::Cow;

use fem_constraints::{ConstraintFunction, ConstraintSolver};
use nalgebra::DMatrix;

use crate::Clock;
use crate::error::check_initial;
use crate::newton::{DenseJacobian, NewtonSolver, NonlinearProblem, central_difference_jacobian};
use crate::stepper::{
    Energy, Invariant, NodalStepper, StateField, StateKind, StepReport, Stepper, restored,
};
use crate::{StepError, StepSettings};

/// The name of scheme (40) in conservation form in input files (`time.scheme: conservation_form`).
pub const NAME: &str = "conservation_form";

/// A Lagrangian system in the conservation form (39): `d/dt f(q, q̇) + g(q, q̇) = Q(t)`.
pub trait ConservationFormSystem {
    /// Number of generalized coordinates.
    fn n_coordinates(&self) -> usize;
    /// Writes the generalized momentum `f(q, q̇) = ∂T/∂q̇` into `out`.
    fn momentum(&self, q: &[f64], q_dot: &[f64], out: &mut [f64]);
    /// Writes `g(q, q̇) = −∂T/∂q + ∂V/∂q` into `out`.
    fn force(&self, q: &[f64], q_dot: &[f64], out: &mut [f64]);
    /// Writes the applied generalized forces `Q(t)` into `out` (zero by default).
    fn applied_force(&self, t: f64, out: &mut [f64]) {
        let _ = t;
        out.fill(0.0);
    }
    /// Kinetic energy `T(q, q̇)`.
    fn kinetic_energy(&self, q: &[f64], q_dot: &[f64]) -> f64;
    /// Potential energy `V(q)`.
    fn potential_energy(&self, q: &[f64]) -> f64;
}

/// A constraint function with the solver that enforces it.
#[derive(Debug)]
pub struct EnforcedConstraint {
    /// `c(q)` and its gradient.
    pub function: Box<dyn ConstraintFunction>,
    /// Penalty or augmented Lagrangian.
    pub solver: Box<dyn ConstraintSolver>,
    /// The multiplier iteration's stopping rule (augmented Lagrangian only).
    pub multipliers: MultiplierSettings,
}

impl EnforcedConstraint {
    /// `c(q)` into `c`, `∇c` (row-major) into `grad`.
    fn evaluate(&self, q: &[f64], c: &mut Vec<f64>, grad: &mut Vec<f64>) {
        let m = self.function.n_constraints();
        c.resize(m, 0.0);
        grad.resize(m * q.len(), 0.0);
        self.function.evaluate(q, c, grad);
    }

    /// Adds `Σ_k ψ_k'(c_k(q)) ∇c_k(q)` to `out`.
    fn add_force(&self, q: &[f64], out: &mut [f64]) {
        let (mut c, mut grad) = (Vec::new(), Vec::new());
        self.evaluate(q, &mut c, &mut grad);
        let n = q.len();
        for k in 0..c.len() {
            let w = self.solver.force(k, c[k]);
            for j in 0..n {
                out[j] += w * grad[k * n + j];
            }
        }
    }
}

/// Stopping rule of the multiplier iteration (augmented Lagrangian).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultiplierSettings {
    /// Converged when the constraint residual at `q^{n+1/2}` is at most this.
    pub tolerance: f64,
    /// Multiplier updates allowed per step.
    pub max_iterations: usize,
}

impl Default for MultiplierSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 500,
        }
    }
}

/// What one step of (40) did and where it ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConservationStepReport {
    /// Step index `n` after the step (`q^n` is the new state).
    pub step: u64,
    /// `t_n`.
    pub t: f64,
    /// Newton iterations summed over the multiplier iterations.
    pub newton_iterations: usize,
    /// Multiplier iterations (1 for the penalty method or without constraints).
    pub multiplier_iterations: usize,
    /// `c(q^n)` at the new node.
    pub constraint: Vec<f64>,
    /// `c(q^{n−1/2})` at the half step just solved for.
    pub constraint_half_step: Vec<f64>,
    /// The multipliers after the step.
    pub multipliers: Vec<f64>,
    /// `T` at `q^{n−1/2}`, `w^{n−1/2}`.
    pub kinetic: f64,
    /// `V` at `q^{n−1/2}`.
    pub potential: f64,
    /// `T + V` at `q^{n−1/2}`, `w^{n−1/2}`.
    pub energy: f64,
    /// `Σ ψ_k(c_k(q^{n−1/2}))`.
    pub constraint_energy: f64,
    /// Work of the applied forces `Q` since `t0`: `Σ_n Q(t_n)·(q^{n+1/2} − q^{n−1/2})` over
    /// the steps taken (`q^{−1/2}` read as `q^0`, where the first energy is taken), so that
    /// `T + V − external_work` is conserved to the scheme's truncation error.
    pub external_work: f64,
}

/// Scheme (40) on a system it owns, with an optional enforced constraint.
///
/// Step contract: after construction the state is `q^0` at `t0`; each
/// [`ConservationFormScheme::step`] computes `q^{n+1}` (the first one by the start of (40)) and
/// owns the time `t_n = t0 + n Δt`.
#[derive(Debug)]
pub struct ConservationFormScheme<S: ConservationFormSystem> {
    system: S,
    constraint: Option<EnforcedConstraint>,
    clock: Clock,
    q: Vec<f64>,
    /// `d^n = q^n − q^{n−1}`.
    d: Vec<f64>,
    /// `q̇_0`, until the first step is taken.
    start_velocity: Option<Vec<f64>>,
    /// `f` and `g` (without the constraint force) at `n − 1/2`.
    prev_momentum: Vec<f64>,
    prev_force: Vec<f64>,
    newton: NewtonSolver,
    multiplier: MultiplierSettings,
    /// `d^{n−1}` (for the velocity at `t_n`).
    d_prev: Vec<f64>,
    /// The report of the last step (of the initial state before the first).
    last: ConservationStepReport,
}

/// The residual of (40) times `Δt` in `y = q^{n+1}`.
struct Equation<'a, S: ConservationFormSystem> {
    system: &'a S,
    constraint: Option<&'a EnforcedConstraint>,
    dt: f64,
    q: &'a [f64],
    start_velocity: Option<&'a [f64]>,
    /// `q^n − q^{n−1}` (unused at the start).
    d: &'a [f64],
    prev_momentum: &'a [f64],
    prev_force: &'a [f64],
    applied: &'a [f64],
    jacobian: DenseJacobian,
}

impl<S: ConservationFormSystem> Equation<'_, S> {
    /// `f` and `G` at the half step `q + z/2` with velocity `z/Δt` (increments kept exact:
    /// forming `q^{n+1} − q^n` from positions would lose `|q| ε_mach / Δt` in the velocity).
    fn half_step(&self, z: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let n = z.len();
        let mid: Vec<f64> = (0..n).map(|i| self.q[i] + 0.5 * z[i]).collect();
        let w: Vec<f64> = z.iter().map(|z| z / self.dt).collect();
        let mut p = vec![0.0; n];
        let mut g = vec![0.0; n];
        self.system.momentum(&mid, &w, &mut p);
        self.system.force(&mid, &w, &mut g);
        if let Some(c) = self.constraint {
            c.add_force(&mid, &mut g);
        }
        (p, g)
    }

    /// The residual for the increment `z = q^{n+1} − q^n`.
    fn eval(&self, z: &[f64], r: &mut [f64]) {
        let n = z.len();
        let (pp, gp) = self.half_step(z);
        let (pm, gm) = match self.start_velocity {
            Some(v0) => {
                // q^{−1} = q^1 − 2Δt q̇_0: q^{−1/2} = q^0 + (z − 2Δt q̇_0)/2 and
                // w^{−1/2} = (q^0 − q^{−1})/Δt = (2Δt q̇_0 − z)/Δt.
                let mid: Vec<f64> = (0..n)
                    .map(|i| self.q[i] + 0.5 * (z[i] - 2.0 * self.dt * v0[i]))
                    .collect();
                let w: Vec<f64> = (0..n).map(|i| 2.0 * v0[i] - z[i] / self.dt).collect();
                let mut p = vec![0.0; n];
                let mut g = vec![0.0; n];
                self.system.momentum(&mid, &w, &mut p);
                self.system.force(&mid, &w, &mut g);
                if let Some(c) = self.constraint {
                    c.add_force(&mid, &mut g);
                }
                (p, g)
            }
            None => {
                // The system's terms at n − 1/2 are kept from the previous step; the
                // constraint force is re-evaluated with the current multipliers.
                let mut g = self.prev_force.to_vec();
                if let Some(c) = self.constraint {
                    let mid: Vec<f64> = (0..n).map(|i| self.q[i] - 0.5 * self.d[i]).collect();
                    c.add_force(&mid, &mut g);
                }
                (self.prev_momentum.to_vec(), g)
            }
        };
        for i in 0..n {
            r[i] = pp[i] - pm[i] + 0.5 * self.dt * (gp[i] + gm[i]) - self.dt * self.applied[i];
        }
    }
}

impl<S: ConservationFormSystem> NonlinearProblem for Equation<'_, S> {
    fn n_unknowns(&self) -> usize {
        self.q.len()
    }
    fn residual(&mut self, y: &[f64], r: &mut [f64]) -> Result<(), StepError> {
        self.eval(y, r);
        Ok(())
    }
    fn factor_jacobian(&mut self, y: &[f64]) -> Result<(), StepError> {
        let j: DMatrix<f64> = central_difference_jacobian(y.len(), y, |y, r| self.eval(y, r));
        self.jacobian.factor(j)
    }
    fn solve_jacobian(&self, b: &mut [f64]) {
        self.jacobian.solve(b);
    }
}

impl<S: ConservationFormSystem> ConservationFormScheme<S> {
    /// The scheme from `q(t0) = q0`, `q̇(t0) = v0`, with an optional enforced constraint.
    /// `settings` gives `dt`, `t0` and Newton's method; prescribed dofs are not supported by
    /// this scheme (generalized coordinates have none) and are refused.
    pub fn new(
        system: S,
        constraint: Option<EnforcedConstraint>,
        settings: StepSettings,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        let StepSettings {
            dt,
            t0,
            dirichlet,
            newton,
        } = settings;
        let clock = Clock::new(t0, dt)?;
        if !dirichlet.is_empty() {
            return Err(StepError::BadData {
                what: "prescribed dofs (scheme (40) takes none)",
                found: dirichlet.len(),
                expected: 0,
            });
        }
        let n = system.n_coordinates();
        check_initial(n, q0, v0)?;
        let multiplier = constraint
            .as_ref()
            .map_or(MultiplierSettings::default(), |c| c.multipliers);
        if let Some(c) = &constraint
            && (c.function.n_dofs() != n || c.function.n_constraints() != c.solver.n_constraints())
        {
            return Err(StepError::BadData {
                what: "constraint",
                found: c.function.n_dofs(),
                expected: n,
            });
        }
        let mut last = ConservationStepReport {
            t: t0,
            kinetic: system.kinetic_energy(q0, v0),
            potential: system.potential_energy(q0),
            ..ConservationStepReport::default()
        };
        last.energy = last.kinetic + last.potential;
        if let Some(c) = &constraint {
            let (mut cv, mut grad) = (Vec::new(), Vec::new());
            c.evaluate(q0, &mut cv, &mut grad);
            last.constraint_energy = c.solver.energy(&cv);
            last.constraint_half_step = cv.clone();
            last.constraint = cv;
            last.multipliers = c.solver.multipliers().to_vec();
        }
        Ok(Self {
            system,
            constraint,
            clock,
            q: q0.to_vec(),
            d: v0.iter().map(|v| dt * v).collect(),
            d_prev: v0.iter().map(|v| dt * v).collect(),
            last,
            start_velocity: Some(v0.to_vec()),
            prev_momentum: vec![0.0; n],
            prev_force: vec![0.0; n],
            newton: NewtonSolver::new(newton),
            multiplier,
        })
    }

    /// Computes `q^{n+1}`.
    fn advance(&mut self) -> Result<ConservationStepReport, StepError> {
        let n = self.q.len();
        let dt = self.clock.dt();
        let t = self.time();
        let mut applied = vec![0.0; n];
        self.system.applied_force(t, &mut applied);
        let mut z = self.d.clone();
        let iterative = self
            .constraint
            .as_ref()
            .is_some_and(|c| c.solver.is_iterative());
        let mut report = ConservationStepReport {
            step: self.clock.step() + 1,
            t: t + dt,
            ..Default::default()
        };
        let (mut c, mut grad) = (Vec::new(), Vec::new());
        loop {
            report.multiplier_iterations += 1;
            let eq = Equation {
                system: &self.system,
                constraint: self.constraint.as_ref(),
                dt,
                q: &self.q,
                start_velocity: self.start_velocity.as_deref(),
                d: &self.d,
                prev_momentum: &self.prev_momentum,
                prev_force: &self.prev_force,
                applied: &applied,
                jacobian: DenseJacobian::default(),
            };
            let scale = {
                let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let mut r0 = vec![0.0; n];
                eq.eval(&vec![0.0; n], &mut r0);
                inf(&self.prev_momentum) + dt * (inf(&self.prev_force) + inf(&applied)) + inf(&r0)
            };
            let mut eq = eq;
            let newton = self
                .newton
                .solve(&mut eq, &mut z, scale, self.clock.step() + 1)?;
            report.newton_iterations += newton.iterations;
            let Some(constraint) = self.constraint.as_mut() else {
                break;
            };
            let mid: Vec<f64> = (0..n).map(|i| self.q[i] + 0.5 * z[i]).collect();
            constraint.evaluate(&mid, &mut c, &mut grad);
            let update = constraint.solver.update_multipliers(&c);
            if !iterative || update.residual <= self.multiplier.tolerance {
                break;
            }
            if report.multiplier_iterations >= self.multiplier.max_iterations {
                return Err(StepError::MultipliersNotConverged {
                    step: self.clock.step() + 1,
                    iterations: report.multiplier_iterations,
                    residual: update.residual,
                    tolerance: self.multiplier.tolerance,
                });
            }
        }
        // The system's n + 1/2 terms become the n − 1/2 terms of the next step.
        let mid: Vec<f64> = (0..n).map(|i| self.q[i] + 0.5 * z[i]).collect();
        let w: Vec<f64> = z.iter().map(|z| z / dt).collect();
        let y: Vec<f64> = (0..n).map(|i| self.q[i] + z[i]).collect();
        self.system.momentum(&mid, &w, &mut self.prev_momentum);
        self.system.force(&mid, &w, &mut self.prev_force);
        if let Some(constraint) = &self.constraint {
            constraint.evaluate(&mid, &mut c, &mut grad);
            report.constraint_half_step = c.clone();
            report.constraint_energy = 0.0;
            report.constraint_energy = constraint.solver.energy(&c);
            report.multipliers = constraint.solver.multipliers().to_vec();
            constraint.evaluate(&y, &mut c, &mut grad);
            report.constraint = c.clone();
        }
        report.kinetic = self.system.kinetic_energy(&mid, &w);
        report.potential = self.system.potential_energy(&mid);
        report.energy = report.kinetic + report.potential;
        // The applied forces' work from the previous energy's point (the half step n − 1/2,
        // or q^0 at the start) to this one's (n + 1/2).
        let start = self.start_velocity.is_some();
        report.external_work = self.last.external_work
            + (0..n)
                .map(|i| applied[i] * (0.5 * z[i] + if start { 0.0 } else { 0.5 * self.d[i] }))
                .sum::<f64>();
        if y.iter().any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                step: self.clock.step() + 1,
                t: t + dt,
            });
        }
        self.q = y;
        self.d_prev = std::mem::replace(&mut self.d, z);
        self.start_velocity = None;
        self.clock.advance();
        self.last = report.clone();
        Ok(report)
    }

    /// The report of the last step (of the initial state before the first step).
    pub fn last_report(&self) -> &ConservationStepReport {
        &self.last
    }

    /// The backward difference `(q^n − q^{n−1}) / Δt` (after construction: `q̇_0`), the
    /// velocity of the half step `n − 1/2`.
    pub fn half_step_velocity(&self) -> Vec<f64> {
        self.d.iter().map(|d| d / self.clock.dt()).collect()
    }
    /// The system.
    pub fn system(&self) -> &S {
        &self.system
    }
    /// The enforced constraint, if any.
    pub fn constraint(&self) -> Option<&EnforcedConstraint> {
        self.constraint.as_ref()
    }
}

impl<S: ConservationFormSystem> Stepper for ConservationFormScheme<S> {
    fn step(&mut self) -> Result<StepReport, StepError> {
        let r = self.advance()?;
        Ok(StepReport {
            iterations: r.newton_iterations,
            residual: 0.0,
            constraint_violation: r.constraint.iter().fold(0.0f64, |m, c| m.max(c.abs())),
        })
    }
    fn clock(&self) -> Clock {
        self.clock
    }
    /// `T` and `V` plus the constraint's energy, at the half step `n − 1/2` (at `t0` before
    /// the first step).
    fn energy(&self) -> Option<Energy> {
        let r = &self.last;
        let mut e = Energy::new(r.kinetic, r.potential + r.constraint_energy);
        e.external_work = r.external_work;
        Some(e)
    }
    fn invariant(&self) -> Invariant {
        Invariant::Truncation
    }
    fn state(&self) -> Vec<StateField<'_>> {
        let mut fields = vec![
            StateField::dofs("position", &self.q),
            StateField::dofs("previous_increment", &self.d),
            StateField::dofs("increment_before", &self.d_prev),
            StateField::dofs("previous_momentum", &self.prev_momentum),
            StateField::dofs("previous_force", &self.prev_force),
            StateField::owned(
                "last_energy",
                StateKind::Other,
                vec![
                    self.last.kinetic,
                    self.last.potential,
                    self.last.energy,
                    self.last.constraint_energy,
                    self.last.external_work,
                ],
            ),
        ];
        if let Some(c) = &self.constraint {
            fields.push(StateField::other("multipliers", c.solver.multipliers()));
        }
        fields
    }
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.q.len();
        if step_index == 0 {
            return Ok(());
        }
        self.q.copy_from_slice(restored(fields, "position", n)?);
        self.d
            .copy_from_slice(restored(fields, "previous_increment", n)?);
        self.d_prev
            .copy_from_slice(restored(fields, "increment_before", n)?);
        self.prev_momentum
            .copy_from_slice(restored(fields, "previous_momentum", n)?);
        self.prev_force
            .copy_from_slice(restored(fields, "previous_force", n)?);
        // Five numbers; four in a checkpoint written before the applied forces' work was kept.
        let four = fields
            .iter()
            .any(|f| f.name == "last_energy" && f.values.len() == 4);
        let e = restored(fields, "last_energy", if four { 4 } else { 5 })?;
        self.last.kinetic = e[0];
        self.last.potential = e[1];
        self.last.energy = e[2];
        self.last.constraint_energy = e[3];
        self.last.external_work = e.get(4).copied().unwrap_or(0.0);
        if let Some(c) = &mut self.constraint {
            let m = c.solver.multipliers().len();
            c.solver
                .set_multipliers(restored(fields, "multipliers", m)?);
        }
        self.start_velocity = None;
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl<S: ConservationFormSystem> NodalStepper for ConservationFormScheme<S> {
    fn position(&self) -> &[f64] {
        &self.q
    }
    /// `(3q^n − 4q^{n−1} + q^{n−2}) / (2Δt)`, second order (`q̇_0` at the start).
    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        if self.clock.step() == 0 {
            return Cow::Owned(self.start_velocity.clone().unwrap_or_default());
        }
        Cow::Owned(
            self.d
                .iter()
                .zip(&self.d_prev)
                .map(|(d, dp)| (1.5 * d - 0.5 * dp) / self.clock.dt())
                .collect(),
        )
    }
}
