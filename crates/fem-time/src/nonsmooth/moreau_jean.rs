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
//! # Presets
//! [`MoreauJean::trapezoidal`] (`θ = ½`: second order, conserves `½vᵀMv + ½qᵀKq` in free
//! flight) and [`MoreauJean::backward_euler`] (`θ = 1`: first order, dissipative).

use fem_assembly::{SparseCholesky, sparse};
use fem_constraints::{LcpSolver, UnilateralContacts};

use super::{ContactWork, NonsmoothError, StepReport, check_dt, check_vec};
use crate::{LinearSecondOrderSystem, Mass};

/// Energy of the MJ state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MoreauJeanEnergy {
    /// `½ vᵀ M v`.
    pub kinetic: f64,
    /// `½ qᵀ K q`.
    pub potential: f64,
    /// `kinetic + potential`.
    pub total: f64,
}

/// The Moreau–Jean theta scheme on a linear second-order system it owns.
#[derive(Debug)]
pub struct MoreauJean<S: LinearSecondOrderSystem> {
    system: S,
    theta: f64,
    dt: f64,
    t0: f64,
    step: u64,
    q: Vec<f64>,
    v: Vec<f64>,
    w: SparseCholesky,
    /// `W⁻¹ Hᵀ`, column-major `n × m` (empty without contacts).
    w_inv_ht: Vec<f64>,
    f_now: Vec<f64>,
    f_next: Vec<f64>,
    rhs: Vec<f64>,
    scratch: Vec<f64>,
    contacts: Option<ContactWork>,
}

impl<S: LinearSecondOrderSystem> MoreauJean<S> {
    /// `θ = ½`.
    pub fn trapezoidal(
        system: S,
        dt: f64,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, NonsmoothError> {
        Self::new(system, 0.5, dt, t0, q0, v0)
    }

    /// `θ = 1`.
    pub fn backward_euler(
        system: S,
        dt: f64,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, NonsmoothError> {
        Self::new(system, 1.0, dt, t0, q0, v0)
    }

    /// The scheme with `theta` in `(0, 1]` and step `dt` from `q(t0) = q0`, `q̇(t0) = v0`,
    /// without contacts. Factors `W`.
    pub fn new(
        system: S,
        theta: f64,
        dt: f64,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, NonsmoothError> {
        if !(theta > 0.0 && theta <= 1.0) {
            return Err(NonsmoothError::InvalidParameter {
                name: "theta",
                value: theta,
                expected: "0 < theta <= 1",
            });
        }
        check_dt(dt)?;
        let n = system.n_dofs();
        check_vec("initial position", q0, n)?;
        check_vec("initial velocity", v0, n)?;
        let k = system.stiffness();
        let mut terms = vec![(dt * dt * theta * theta, k)];
        if let Some(c) = system.damping() {
            terms.push((dt * theta, c));
        }
        let w = match system.mass() {
            Mass::Lumped(d) => sparse::linear_combination(&terms, Some((1.0, d))),
            Mass::Consistent(m) => {
                terms.push((1.0, m));
                sparse::linear_combination(&terms, None)
            }
        };
        let w = SparseCholesky::new(&w)?;
        let mut f_now = vec![0.0; n];
        system.external_force(t0, &mut f_now);
        Ok(Self {
            theta,
            dt,
            t0,
            step: 0,
            q: q0.to_vec(),
            v: v0.to_vec(),
            w,
            w_inv_ht: Vec::new(),
            f_now,
            f_next: vec![0.0; n],
            rhs: vec![0.0; n],
            scratch: vec![0.0; n],
            contacts: None,
            system,
        })
    }

    /// Adds unilateral contacts `y = H q − h ≥ 0` solved by `solver`; forms `W⁻¹ Hᵀ` and the
    /// Delassus matrix `H W⁻¹ Hᵀ` once (`m` solves with the kept factor).
    pub fn with_contacts(
        mut self,
        contacts: UnilateralContacts,
        solver: Box<dyn LcpSolver>,
    ) -> Result<Self, NonsmoothError> {
        let n = self.system.n_dofs();
        if contacts.n_dofs() != n {
            return Err(fem_constraints::ContactError::Columns {
                found: contacts.n_dofs(),
                expected: n,
            }
            .into());
        }
        let mut w_inv_ht = contacts.transpose_dense();
        if n > 0 {
            self.w
                .solve_many_in_place(&mut w_inv_ht, contacts.n_contacts());
        }
        let delassus = contacts.delassus(&w_inv_ht);
        self.w_inv_ht = w_inv_ht;
        self.contacts = Some(ContactWork::new(
            contacts, solver, delassus, &self.q, &self.v,
        ));
        Ok(self)
    }

    /// Advances from `t_i` to `t_{i+1}` (see the step contract in [`super`]).
    pub fn step(&mut self) -> Result<StepReport, NonsmoothError> {
        let (dt, theta) = (self.dt, self.theta);
        let t = self.time();
        let n = self.q.len();
        self.system
            .external_force(self.t0 + dt * (self.step + 1) as f64, &mut self.f_next);
        // rhs = Δt(θ f⁺ + (1−θ) f) − Δt K (q + Δtθ v) − Δt C v
        for i in 0..n {
            self.scratch[i] = self.q[i] + dt * theta * self.v[i];
            self.rhs[i] = dt * (theta * self.f_next[i] + (1.0 - theta) * self.f_now[i]);
        }
        sparse::mul_add(
            1.0,
            &mut self.rhs,
            -dt,
            self.system.stiffness(),
            &self.scratch,
        );
        if let Some(c) = self.system.damping() {
            sparse::mul_add(1.0, &mut self.rhs, -dt, c, &self.v);
        }
        self.w.solve_in_place(&mut self.rhs);
        // rhs now holds v_free − v^i; scratch becomes v_free.
        for i in 0..n {
            self.scratch[i] = self.v[i] + self.rhs[i];
        }
        let mut report = StepReport {
            min_gap: f64::INFINITY,
            ..StepReport::default()
        };
        let v_free = &mut self.scratch;
        if let Some(c) = &mut self.contacts {
            c.set.rates(v_free, &mut c.free_rate);
            for j in 0..c.predicted.len() {
                c.predicted[j] =
                    c.gap[j] + dt * (theta * c.free_rate[j] + (1.0 - theta) * c.rate[j]);
            }
            let impact = c.impact(self.step, t, theta * dt)?;
            for (j, &l) in c.lambda.iter().enumerate() {
                if l != 0.0 {
                    let col = &self.w_inv_ht[j * n..(j + 1) * n];
                    v_free.iter_mut().zip(col).for_each(|(v, w)| *v += l * w);
                }
            }
            report.n_active = impact.n_active;
            report.lcp_iterations = impact.lcp.iterations;
            report.lcp_residual = impact.lcp.residual;
        }
        for i in 0..n {
            self.q[i] += dt * (theta * v_free[i] + (1.0 - theta) * self.v[i]);
        }
        std::mem::swap(&mut self.v, &mut self.scratch);
        std::mem::swap(&mut self.f_now, &mut self.f_next);
        self.step += 1;
        if let Some(c) = &mut self.contacts {
            c.update_state(&self.q, &self.v);
            report.min_gap = c.min_gap();
        }
        if self.v.iter().chain(&self.q).any(|x| !x.is_finite()) {
            return Err(NonsmoothError::NonFinite {
                step: self.step,
                t: self.time(),
            });
        }
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

    /// The time step.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Steps taken.
    pub fn step_index(&self) -> u64 {
        self.step
    }

    /// `t_i = t0 + i Δt`.
    pub fn time(&self) -> f64 {
        self.t0 + self.dt * self.step as f64
    }

    /// `q^i`.
    pub fn position(&self) -> &[f64] {
        &self.q
    }

    /// `v^i`.
    pub fn velocity(&self) -> &[f64] {
        &self.v
    }

    /// Contact impulses of the last step (empty without contacts).
    pub fn impulses(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.lambda)
    }

    /// Gaps `y^i = H q^i − h` (empty without contacts).
    pub fn gaps(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.gap)
    }

    /// `½ vᵀMv + ½ qᵀKq` at `t_i`.
    pub fn energy(&self) -> MoreauJeanEnergy {
        let kinetic = 0.5 * self.system.mass().norm_squared(&self.v);
        let potential = 0.5 * sparse::bilinear(self.system.stiffness(), &self.q, &self.q);
        MoreauJeanEnergy {
            kinetic,
            potential,
            total: kinetic + potential,
        }
    }
}
