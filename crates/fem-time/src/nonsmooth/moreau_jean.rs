//! The Moreau–Jean theta scheme (MJ) for `M q̈ + C q̇ + K q = f(t)` with unilateral contacts.
//!
//! # The scheme (seed 002, "Moreau-Jean")
//! ```text
//! M (v^{i+1} − v^i) + Δt (θ K q^{i+1} + (1 − θ) K q^i) + Δt (θ C v^{i+1} + (1 − θ) C v^i)
//!     = Δt (θ f^{i+1} + (1 − θ) f^i) + Hᵀ λ^{i+1},
//! q^{i+1} = q^i + Δt (θ v^{i+1} + (1 − θ) v^i),                       θ ∈ (0, 1],
//! ```
//!
//! which is, with `W = M + Δt²θ²K + ΔtθC` (factored once per run),
//!
//! ```text
//! v_free  = v^i + W⁻¹ (Δt (θ f^{i+1} + (1 − θ) f^i) − Δt K q^i − (Δt²θ K + Δt C) v^i),
//! v^{i+1} = v_free + W⁻¹ Hᵀ λ^{i+1}.
//! ```
//!
//! The seed writes the load as `p^{i+1}`; here it is the theta-weighted impulse of `f` over the
//! step, which keeps `θ = ½` second-order accurate under a load.
//!
//! # Contact
//! Contact `j` is active on the step when its predicted gap, the gap at `t_{i+1}` of the
//! contact-free motion `q^i + Δt(θ v_free + (1 − θ) v^i)`, is `≤ 0`; the active contacts solve
//! `0 ≤ ẏ^{i+1} + e ẏ^i ⊥ λ ≥ 0` (see [`fem_constraints::unilateral`]). With `θ = 1` and
//! `e = 0` an active contact ends the step with `y^{i+1} ≥ y^i`, so no penetration builds up;
//! with `θ < 1` the position update still carries `(1 − θ) Δt ẏ^i`, an `O(Δt)` penetration on
//! the impact step.
//!
//! # Nonlinear systems
//! For `f_int` nonlinear the stiffness term reads `θ f_int(q^{i+1}) + (1 − θ) f_int(q^i)` (the
//! same as above for `f_int = K q`) and `v_free` is found by Newton's method, Jacobian
//! `M + Δt²θ² K_T(q^{i+1}) + ΔtθC`. Contacts need a linear system (their Delassus matrix is
//! formed once with the constant `W`): a nonlinear system with contacts is refused.
//!
//! # Prescribed motion
//! The unknown is the end velocity, so Serac's methods fix `v_c^{i+1}`: direct so that
//! `q_c^{i+1} = g(t_{i+1})`, `v_c = (g(t_{i+1}) − q_c^i − Δt(1−θ) v_c^i)/(Δtθ)`; rate and full
//! `v_c = ġ(t_{i+1})`, full also writing `q_c^{i+1} = g(t_{i+1})` back. The free rows are solved
//! with the constrained velocities' coupling on the right-hand side; contacts act on the free
//! dofs only.
//!
//! # Presets
//! [`MoreauJean::trapezoidal`] (`θ = ½`: second order, conserves `½vᵀMv + ½qᵀKq` in free
//! flight) and [`MoreauJean::backward_euler`] (`θ = 1`: first order, dissipative).

use std::borrow::Cow;

use fem_assembly::sparse;
use fem_constraints::{Enforcement, LcpSolver, UnilateralContacts};
use nalgebra_sparse::CsrMatrix;

use super::{ContactReport, ContactWork};
use crate::Clock;
use crate::control::DirichletControl;
use crate::newton::{NewtonReport, NewtonSolver, NonlinearProblem};
use crate::step_matrix::{Coefficients, StepMatrix, Terms};
use crate::stepper::{Energy, Invariant, NodalStepper, StateField, StepReport, Stepper, restored};
use crate::system::damping_csr;
use crate::{SecondOrderSystem, StepError, StepSettings, StepStart};

/// The name of the Moreau–Jean θ scheme in input files (`time.scheme: moreau_jean`).
pub const NAME: &str = "moreau_jean";

/// The Moreau–Jean theta scheme on a second-order system it owns.
#[derive(Debug)]
pub struct MoreauJean<S: SecondOrderSystem> {
    system: S,
    theta: f64,
    clock: Clock,
    q: Vec<f64>,
    v: Vec<f64>,
    damping: Option<CsrMatrix<f64>>,
    w: StepMatrix,
    control: Option<DirichletControl>,
    newton: Option<NewtonSolver>,
    /// `W⁻¹ Hᵀ`, column-major `n × m` (empty without contacts).
    w_inv_ht: Vec<f64>,
    f_now: Vec<f64>,
    f_next: Vec<f64>,
    /// `f_int(q^i)` (nonlinear systems).
    fint_now: Vec<f64>,
    rhs: Vec<f64>,
    scratch: Vec<f64>,
    contacts: Option<ContactWork>,
    last: StepReport,
    last_contact: ContactReport,
}

impl<S: SecondOrderSystem> MoreauJean<S> {
    /// `θ = ½`.
    pub fn trapezoidal(
        system: S,
        settings: StepSettings,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 0.5, settings, q0, v0)
    }

    /// `θ = 1`.
    pub fn backward_euler(
        system: S,
        settings: StepSettings,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        Self::new(system, 1.0, settings, q0, v0)
    }

    /// The scheme with `theta` in `(0, 1]` from `q(t0) = q0`, `q̇(t0) = v0`, without contacts.
    /// Factors `W` (at `q0` for a nonlinear system).
    pub fn new(
        system: S,
        theta: f64,
        settings: StepSettings,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        if !(theta > 0.0 && theta <= 1.0) {
            return Err(StepError::InvalidParameter {
                name: "theta",
                value: theta,
                expected: "0 < theta <= 1",
            });
        }
        let n = system.n_dofs();
        let StepStart {
            clock,
            control,
            newton,
            x: q,
            v,
        } = settings.start(n, q0, v0)?;
        let (t0, dt) = (clock.t0(), clock.dt());
        let damping = damping_csr(&system);
        let symmetry = system
            .tangent_kind()
            .symmetry()
            .ok_or(StepError::NeedsTangent {
                scheme: "Moreau-Jean",
            })?;
        let k = match system.constant_stiffness() {
            Some(k) if system.is_linear() => Cow::Borrowed(k),
            _ => Cow::Owned(
                system
                    .tangent(&q)
                    .map_err(|e| clock.failed(e))?
                    .to_csr()
                    .into_owned(),
            ),
        };
        let w = StepMatrix::new(
            Terms {
                mass: system.mass(),
                damping: damping.as_ref(),
                stiffness: Some(&k),
            },
            Coefficients {
                mass: 1.0,
                damping: dt * theta,
                stiffness: dt * dt * theta * theta,
            },
            symmetry,
            control.as_ref(),
            system.dof_points(),
        )?;
        drop(k);
        let mut f_now = vec![0.0; n];
        system.external_force(t0, &mut f_now);
        let mut fint_now = vec![0.0; n];
        if !system.is_linear() {
            system
                .internal_force(&q, &mut fint_now)
                .map_err(|e| clock.failed(e))?;
        }
        Ok(Self {
            theta,
            clock,
            q,
            v,
            damping,
            w,
            control,
            newton: Some(NewtonSolver::new(newton)),
            w_inv_ht: Vec::new(),
            f_now,
            f_next: vec![0.0; n],
            fint_now,
            rhs: vec![0.0; n],
            scratch: vec![0.0; n],
            contacts: None,
            last: StepReport::default(),
            last_contact: ContactReport::default(),
            system,
        })
    }

    /// Adds unilateral contacts `y = H q − h ≥ 0` solved by `solver`; forms `W⁻¹ Hᵀ` and the
    /// Delassus matrix `H W⁻¹ Hᵀ` once (`m` solves with the kept factor). Refused for a
    /// nonlinear system.
    pub fn with_contacts(
        mut self,
        contacts: UnilateralContacts,
        solver: Box<dyn LcpSolver>,
    ) -> Result<Self, StepError> {
        let n = self.system.n_dofs();
        if contacts.n_dofs() != n {
            return Err(fem_constraints::ContactError::Columns {
                found: contacts.n_dofs(),
                expected: n,
            }
            .into());
        }
        if !self.system.is_linear() {
            return Err(StepError::NeedsLinearSystem {
                scheme: "Moreau-Jean",
                why: "with contacts (its Delassus matrix is formed once)",
            });
        }
        let m = contacts.n_contacts();
        let mut w_inv_ht = contacts.transpose_dense();
        if n > 0 {
            match &self.control {
                None => self.w.solve_many_in_place(&mut w_inv_ht, m),
                Some(c) => {
                    // Impulses move the free dofs only: W⁻¹ on the free rows, zero elsewhere.
                    let mut free = Vec::new();
                    for col in w_inv_ht.chunks_exact_mut(n) {
                        c.gather_free(col, &vec![0.0; n], &mut free);
                        self.w.solve_in_place(&mut free);
                        col.fill(0.0);
                        c.scatter_free(&free, col);
                    }
                }
            }
        }
        let delassus = contacts.delassus(&w_inv_ht);
        self.w_inv_ht = w_inv_ht;
        self.contacts = Some(ContactWork::new(
            contacts, solver, delassus, &self.q, &self.v,
        ));
        Ok(self)
    }

    /// The end velocity a prescribed dof must take (see the module documentation).
    fn prescribed_velocity(
        &self,
        dof: usize,
        method: Enforcement,
        signal: &dyn fem_constraints::Signal,
        t1: f64,
    ) -> f64 {
        let (dt, theta) = (self.clock.dt(), self.theta);
        match method {
            Enforcement::Direct => {
                (signal.value(t1) - self.q[dof] - dt * (1.0 - theta) * self.v[dof]) / (dt * theta)
            }
            Enforcement::Rate | Enforcement::Full => signal.rate(t1),
        }
    }

    /// `v_free` of a linear system into `self.scratch`.
    fn free_velocity_linear(&mut self) -> Result<(), StepError> {
        let (dt, theta) = (self.clock.dt(), self.theta);
        let n = self.q.len();
        // rhs = Δt(θ f⁺ + (1−θ) f) − Δt K (q + Δtθ v) − Δt C v
        for i in 0..n {
            self.scratch[i] = self.q[i] + dt * theta * self.v[i];
            self.rhs[i] = dt * (theta * self.f_next[i] + (1.0 - theta) * self.f_now[i]);
        }
        // K (q + Δtθ v), through the system's force (K is linear here).
        let mut kq = vec![0.0; n];
        let clock = self.clock;
        self.system
            .internal_force(&self.scratch, &mut kq)
            .map_err(|e| clock.failed(e))?;
        for (r, f) in self.rhs.iter_mut().zip(&kq) {
            *r += -dt * f;
        }
        if let Some(c) = &self.damping {
            sparse::mul_add(1.0, &mut self.rhs, -dt, c, &self.v);
        }
        match &self.control {
            None => self.w.solve_in_place(&mut self.rhs),
            Some(c) => {
                // Constrained increments Δv_c known; their coupling W_fc Δv_c moves right.
                let t1 = self.clock.time_at(self.clock.step() + 1);
                let mut dv_known = vec![0.0; n];
                for (dof, signal, method) in c.iter() {
                    dv_known[dof] = self.prescribed_velocity(dof, method, signal, t1) - self.v[dof];
                }
                let mut coupling = vec![0.0; n];
                self.system.mass().mul(&dv_known, &mut coupling);
                let mut k_dv = vec![0.0; n];
                self.system
                    .internal_force(&dv_known, &mut k_dv)
                    .map_err(|e| clock.failed(e))?;
                for (cp, kd) in coupling.iter_mut().zip(&k_dv) {
                    *cp += dt * dt * theta * theta * kd;
                }
                if let Some(cm) = &self.damping {
                    sparse::mul_add(1.0, &mut coupling, dt * theta, cm, &dv_known);
                }
                let mut reduced = Vec::new();
                c.gather_free(&self.rhs, &coupling, &mut reduced);
                self.w.solve_in_place(&mut reduced);
                c.scatter_free(&reduced, &mut self.rhs);
                for (dof, _, _) in c.iter() {
                    self.rhs[dof] = dv_known[dof];
                }
            }
        }
        // rhs now holds v_free − v^i; scratch becomes v_free.
        for i in 0..n {
            self.scratch[i] = self.v[i] + self.rhs[i];
        }
        Ok(())
    }

    /// `v_free` of a nonlinear system, by Newton, into `self.scratch`.
    fn free_velocity_newton(&mut self) -> Result<NewtonReport, StepError> {
        let dt = self.clock.dt();
        let t1 = self.clock.time_at(self.clock.step() + 1);
        let mut v_end = self.v.clone();
        if let Some(c) = &self.control {
            for (dof, signal, method) in c.iter() {
                v_end[dof] = self.prescribed_velocity(dof, method, signal, t1);
            }
        }
        let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mut mv = vec![0.0; self.v.len()];
        self.system.mass().mul(&self.v, &mut mv);
        let scale = (inf(&mv) + dt * (inf(&self.fint_now) + inf(&self.f_next) + inf(&self.f_now)))
            .max(f64::MIN_POSITIVE);
        let step = self.clock.step() + 1;
        let mut newton = self
            .newton
            .take()
            .expect("the solver is home between solves");
        let mut eq = MoreauJeanEquation::new(self, v_end);
        let mut y = eq.free_guess();
        let solved = newton.solve(&mut eq, &mut y, scale, step);
        eq.set(&y);
        let v_free = std::mem::take(&mut eq.v_end);
        self.newton = Some(newton);
        let report = solved?;
        self.scratch.copy_from_slice(&v_free);
        Ok(report)
    }

    /// Advances from `t_i` to `t_{i+1}` (see the step contract in [`super`]).
    fn advance(&mut self) -> Result<StepReport, StepError> {
        let (dt, theta) = (self.clock.dt(), self.theta);
        let t = self.time();
        let n = self.q.len();
        self.system
            .external_force(self.clock.time_at(self.clock.step() + 1), &mut self.f_next);
        let mut report = StepReport {
            iterations: 1,
            ..StepReport::default()
        };
        if self.system.is_linear() {
            self.free_velocity_linear()?;
        } else {
            let r = self.free_velocity_newton()?;
            report.iterations = r.iterations;
            report.residual = r.residual;
        }
        let mut contact = ContactReport {
            min_gap: f64::INFINITY,
            ..ContactReport::default()
        };
        let v_free = &mut self.scratch;
        if let Some(c) = &mut self.contacts {
            c.set.rates(v_free, &mut c.free_rate);
            for j in 0..c.predicted.len() {
                c.predicted[j] =
                    c.gap[j] + dt * (theta * c.free_rate[j] + (1.0 - theta) * c.rate[j]);
            }
            let impact = c.impact(self.clock.step(), t, theta * dt)?;
            for (j, &l) in c.lambda.iter().enumerate() {
                if l != 0.0 {
                    let col = &self.w_inv_ht[j * n..(j + 1) * n];
                    v_free.iter_mut().zip(col).for_each(|(v, w)| *v += l * w);
                }
            }
            contact.n_active = impact.n_active;
            contact.lcp_iterations = impact.lcp.iterations;
            contact.lcp_residual = impact.lcp.residual;
        }
        for i in 0..n {
            self.q[i] += dt * (theta * v_free[i] + (1.0 - theta) * self.v[i]);
        }
        std::mem::swap(&mut self.v, &mut self.scratch);
        std::mem::swap(&mut self.f_now, &mut self.f_next);
        self.clock.advance();
        if let Some(c) = &self.control {
            let t1 = self.time();
            for (dof, signal, method) in c.iter() {
                if method == Enforcement::Full {
                    self.q[dof] = signal.value(t1);
                }
            }
        }
        if !self.system.is_linear() {
            let clock = self.clock;
            self.system
                .internal_force(&self.q, &mut self.fint_now)
                .map_err(|e| StepError::Evaluation {
                    step: clock.step(),
                    t: clock.time(),
                    source: e,
                })?;
        }
        if let Some(c) = &mut self.contacts {
            c.update_state(&self.q, &self.v);
            contact.min_gap = c.min_gap();
            report.constraint_violation = (-contact.min_gap).max(0.0);
        }
        if self.v.iter().chain(&self.q).any(|x| !x.is_finite()) {
            return Err(StepError::NonFinite {
                step: self.clock.step(),
                t: self.time(),
            });
        }
        self.last = report;
        self.last_contact = contact;
        Ok(report)
    }

    /// The system being stepped.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The scheme's theta.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// Contact impulses of the last step (empty without contacts).
    pub fn impulses(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.lambda)
    }

    /// Gaps `y^i = H q^i − h` (empty without contacts).
    pub fn gaps(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.gap)
    }

    /// What the contact solve of the last step did.
    pub fn last_contact(&self) -> ContactReport {
        self.last_contact
    }
}

impl<S: SecondOrderSystem> Stepper for MoreauJean<S> {
    fn step(&mut self) -> Result<StepReport, StepError> {
        self.advance()
    }
    fn clock(&self) -> Clock {
        self.clock
    }
    /// `½ vᵀMv + V(q)` at `t_i` (no balance terms).
    fn energy(&self) -> Option<Energy> {
        let potential = self.system.potential_energy(&self.q)?;
        Some(Energy::new(
            0.5 * self.system.mass().norm_squared(&self.v),
            potential,
        ))
    }
    fn invariant(&self) -> Invariant {
        if self.theta == 0.5 && self.system.is_linear() && self.contacts.is_none() {
            Invariant::RoundOff
        } else {
            Invariant::None
        }
    }
    fn state(&self) -> Vec<StateField<'_>> {
        let mut fields = vec![
            StateField::dofs("position", &self.q),
            StateField::dofs("velocity", &self.v),
            StateField::dofs("external_force", &self.f_now),
            StateField::dofs("internal_force", &self.fint_now),
        ];
        if let Some(c) = &self.contacts {
            fields.extend(c.state());
        }
        fields
    }
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.q.len();
        self.q.copy_from_slice(restored(fields, "position", n)?);
        self.v.copy_from_slice(restored(fields, "velocity", n)?);
        self.f_now
            .copy_from_slice(restored(fields, "external_force", n)?);
        self.fint_now
            .copy_from_slice(restored(fields, "internal_force", n)?);
        if let Some(c) = &mut self.contacts {
            c.restore(fields)?;
        }
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl<S: SecondOrderSystem> NodalStepper for MoreauJean<S> {
    fn position(&self) -> &[f64] {
        &self.q
    }
    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.v)
    }
}

/// The free-flight equation of a Moreau–Jean step on a nonlinear system, in the free
/// velocities: `R(v) = M (v − v^i) + Δt (θ f_int(q^{i+1}) + (1−θ) f_int(q^i))
/// + Δt C (θ v + (1−θ) v^i) − Δt (θ f^{i+1} + (1−θ) f^i)`, `q^{i+1} = q^i + Δt(θ v + (1−θ) v^i)`.
struct MoreauJeanEquation<'a, S: SecondOrderSystem> {
    scheme: &'a mut MoreauJean<S>,
    v_end: Vec<f64>,
    q1: Vec<f64>,
    f1: Vec<f64>,
    r: Vec<f64>,
    work: Vec<f64>,
}

impl<'a, S: SecondOrderSystem> MoreauJeanEquation<'a, S> {
    fn new(scheme: &'a mut MoreauJean<S>, v_end: Vec<f64>) -> Self {
        let n = v_end.len();
        Self {
            scheme,
            v_end,
            q1: vec![0.0; n],
            f1: vec![0.0; n],
            r: vec![0.0; n],
            work: vec![0.0; n],
        }
    }

    fn free_guess(&self) -> Vec<f64> {
        match &self.scheme.control {
            Some(p) => p.free().iter().map(|&i| self.v_end[i]).collect(),
            None => self.v_end.clone(),
        }
    }

    fn set(&mut self, y: &[f64]) {
        match &self.scheme.control {
            Some(p) => p.scatter_free(y, &mut self.v_end),
            None => self.v_end.copy_from_slice(y),
        }
        let s = &*self.scheme;
        for i in 0..self.q1.len() {
            self.q1[i] =
                s.q[i] + s.clock.dt() * (s.theta * self.v_end[i] + (1.0 - s.theta) * s.v[i]);
        }
    }
}

impl<S: SecondOrderSystem> NonlinearProblem for MoreauJeanEquation<'_, S> {
    fn n_unknowns(&self) -> usize {
        self.scheme
            .control
            .as_ref()
            .map_or(self.v_end.len(), |p| p.free().len())
    }

    fn residual(&mut self, y: &[f64], out: &mut [f64]) -> Result<(), StepError> {
        self.set(y);
        let s = &*self.scheme;
        let (dt, theta) = (s.clock.dt(), s.theta);
        s.system
            .internal_force(&self.q1, &mut self.f1)
            .map_err(|e| s.clock.failed(e))?;
        for i in 0..self.work.len() {
            self.work[i] = self.v_end[i] - s.v[i];
        }
        s.system.mass().mul(&self.work, &mut self.r);
        for i in 0..self.r.len() {
            self.r[i] += dt
                * (theta * self.f1[i] + (1.0 - theta) * s.fint_now[i]
                    - theta * s.f_next[i]
                    - (1.0 - theta) * s.f_now[i]);
        }
        if let Some(c) = &s.damping {
            for i in 0..self.work.len() {
                self.work[i] = theta * self.v_end[i] + (1.0 - theta) * s.v[i];
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
        let s = &mut *self.scheme;
        let clock = s.clock;
        let k = s.w.stiffness_mut().expect("W has a stiffness term");
        s.system
            .tangent_into(&self.q1, k)
            .map_err(|e| clock.failed(e))?;
        s.w.refactor()
    }

    fn solve_jacobian(&self, b: &mut [f64]) {
        self.scheme.w.solve_in_place(b);
    }
}
