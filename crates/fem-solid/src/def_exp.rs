//! DEF_EXP: Solfec's explicit leap-frog (seed `004`, equations `q(t+h/2)`, `u(t+h)`,
//! `q(t+h)` with `A = M` (`Aexp`); Koziara's thesis §5.1): half drift, kick, half drift, on a
//! lumped mass, no solve.
//!
//! It is the central difference method written in velocities, so it is stable for
//! `h ≤ 2/ω_max`. The critical step is estimated as `2/sqrt(λ_max)` with `λ_max` the largest
//! generalized eigenvalue of the elements (`K_e(q) φ = λ M_e φ`, an upper bound on the global
//! `ω_max²`), at the start — where a step above it is refused with the bound in the message —
//! and again every [`CriticalStepCheck::recheck_every`] steps as the body deforms: the run
//! stops when the deformed body's bound falls below the step by more than
//! [`CriticalStepCheck::tolerance`].

use fem_assembly::StableStep;
use std::borrow::Cow;

use fem_time::{
    Energy, Invariant, Mass, NodalStepper, StateField, StepError, StepReport, StepSettings, Stepper,
};

use crate::leapfrog::{LeapFrog, LeapFrogSystem, check_critical};

/// How the critical step is checked while the body deforms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CriticalStepCheck {
    /// Recompute the bound every this many steps (0: only at the start).
    pub recheck_every: u64,
    /// A re-check stops the run when `h > (1 + tolerance) · bound`.
    pub tolerance: f64,
}

impl Default for CriticalStepCheck {
    /// Every 10 steps, 1 % tolerance.
    fn default() -> Self {
        Self {
            recheck_every: 10,
            tolerance: 0.01,
        }
    }
}

/// The name of the bound in messages.
pub const DEF_EXP_BOUND: &str = "of DEF_EXP, 2/sqrt(lambda_max) with lambda_max the largest element eigenvalue of K_e(q) phi = lambda M_e phi";

/// The DEF_EXP stepper on a system with a lumped mass.
#[derive(Debug)]
pub struct DefExp<S> {
    system: S,
    state: LeapFrog,
    /// `1/m_i`.
    inverse_mass: Vec<f64>,
    check: CriticalStepCheck,
    /// The latest critical step estimate.
    critical: f64,
    /// The reactions of the prescribed dofs.
    reactions: Vec<f64>,
}

impl<S: LeapFrogSystem> DefExp<S> {
    /// The stepper from `x(t0) = x0`, `ẋ(t0) = v0`. Refuses a consistent mass and a step above
    /// the critical step at `x0` (the message gives the bound).
    pub fn new(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
        check: CriticalStepCheck,
    ) -> Result<Self, StepError> {
        Self::build(system, settings, x0, v0, check, None)
    }

    /// [`new`](Self::new) with the critical step at `x0` already known (a set-up that chose
    /// its step from it): it is reused when the start state is `x0` itself (no prescribed
    /// value at `t0` moves a dof), which saves a pass over every cell (for a 10⁶-cell body,
    /// half a minute on one core). Collective on a distributed system.
    pub fn with_bound_at(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
        check: CriticalStepCheck,
        bound_at_x0: StableStep,
    ) -> Result<Self, StepError> {
        Self::build(system, settings, x0, v0, check, Some(bound_at_x0))
    }

    fn build(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
        check: CriticalStepCheck,
        bound_at_x0: Option<StableStep>,
    ) -> Result<Self, StepError> {
        let n = system.n_dofs();
        let state = LeapFrog::new(n, settings, x0, v0)?;
        let inverse_mass = match system.mass() {
            Mass::Lumped(m) => m.iter().map(|m| 1.0 / m).collect(),
            Mass::Consistent(_) => {
                return Err(StepError::Failed {
                    step: 0,
                    t: state.t0,
                    message: "DEF_EXP needs a lumped mass (it does not solve): use mass: lumped"
                        .into(),
                });
            }
        };
        let known = bound_at_x0.filter(|_| system.all_agree(state.q == x0));
        let bound = match known {
            Some(b) => b,
            None => system
                .critical_step(&state.q)
                .map_err(|message| StepError::Failed {
                    step: 0,
                    t: state.t0,
                    message,
                })?,
        };
        check_critical(state.dt, &bound, DEF_EXP_BOUND)?;
        let n_prescribed = state.control.dofs().len();
        Ok(Self {
            system,
            state,
            inverse_mass,
            check,
            critical: bound.dt,
            reactions: vec![0.0; n_prescribed],
        })
    }

    /// `safety · 2/sqrt(λ_max)` at `x0`: the step `dt: auto` takes (Solfec uses 0.5).
    pub fn auto_step(system: &S, x0: &[f64], safety: f64) -> Result<f64, String> {
        Ok(safety * system.critical_step(x0)?.dt)
    }

    /// The system.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The latest critical step estimate `2/sqrt(λ_max)`.
    pub fn critical_step(&self) -> f64 {
        self.critical
    }
}

impl<S: LeapFrogSystem> Stepper for DefExp<S> {
    /// Half drift, kick, half drift (seed `q(t+h/2)`, `u(t+h)` with `A = M`, `q(t+h)`).
    fn step(&mut self) -> Result<StepReport, StepError> {
        let s = &mut self.state;
        let h = s.dt;
        s.half_drift_and_force(&self.system)?;
        for i in 0..s.u.len() {
            s.u_new[i] = s.u[i] + h * self.inverse_mass[i] * s.force[i];
        }
        if !s.no_prescribed() {
            let t1 = s.time() + h;
            s.control.end_velocity(t1, h, &s.q_half, &mut s.u_new);
            // Reaction r_c = m_c (u_c^{t+h} − u_c^t)/h − f_c.
            for (r, &d) in self.reactions.iter_mut().zip(s.control.dofs()) {
                *r = (s.u_new[d] - s.u[d]) / (h * self.inverse_mass[d]) - s.force[d];
            }
        }
        s.finish(&self.system, &self.reactions);
        if !self
            .system
            .all_agree(s.q.iter().chain(&s.u).all(|v| v.is_finite()))
        {
            return Err(StepError::NonFinite {
                step: s.step,
                t: s.time(),
            });
        }
        if self.check.recheck_every > 0 && s.step.is_multiple_of(self.check.recheck_every) {
            let bound = self
                .system
                .critical_step(&s.q)
                .map_err(|message| StepError::Failed {
                    step: s.step,
                    t: s.time(),
                    message,
                })?;
            self.critical = bound.dt;
            if h > (1.0 + self.check.tolerance) * bound.dt {
                return Err(StepError::Unstable {
                    which: DEF_EXP_BOUND,
                    dt: h,
                    bound: bound.dt,
                    lambda_max: bound.lambda_max,
                    advice: "the deformed body's critical step fell below the step: reduce time.dt or model.solid.auto_dt",
                });
            }
        }
        Ok(StepReport::default())
    }

    fn time(&self) -> f64 {
        self.state.time()
    }

    fn step_index(&self) -> u64 {
        self.state.step
    }

    fn dt(&self) -> f64 {
        self.state.dt
    }

    fn energy(&self) -> Option<Energy> {
        self.state.energy(&self.system)
    }

    fn invariant(&self) -> Invariant {
        Invariant::Truncation
    }

    fn state(&self) -> Vec<StateField<'_>> {
        self.state.state()
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        self.state.restore(step_index, fields)
    }
}

impl<S: LeapFrogSystem> NodalStepper for DefExp<S> {
    fn position(&self) -> &[f64] {
        &self.state.q
    }

    fn velocity(&self) -> Cow<'_, [f64]> {
        self.state.velocity()
    }
}
