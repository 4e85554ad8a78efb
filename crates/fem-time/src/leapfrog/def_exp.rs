//! DEF_EXP: Solfec's explicit leap-frog (seed `004`, equations `q(t+h/2)`, `u(t+h)`,
//! `q(t+h)` with `A = M` (`Aexp`); Koziara's thesis §5.1): half drift, kick, half drift, on a
//! lumped mass, no solve.
//!
//! It is the central difference method written in velocities, so it is stable for
//! `h ≤ 2/ω_max`. The critical step is estimated as `2/sqrt(λ)` with `λ` the body's largest
//! eigenvalue of `M⁻¹K(q)` by Lanczos, capped by the system's own bound
//! ([`LeapFrogSystem::critical_step`]: for a solid the largest generalized eigenvalue of the
//! elements, `K_e(q) φ = λ M_e φ`, an upper bound on the global `ω_max²`) ([`super::spectral`]),
//! at the start — where a step above it is refused with the bound in the message — and again as
//! the body deforms ([`CriticalStepCheck`]): the run stops when the deformed body's bound falls
//! below the step by more than [`CriticalStepCheck::tolerance`].
//!
//! A re-check is three power iterations from the last estimate's mode (six internal-force
//! evaluations; Lanczos and the element bound again only if the limiting mode has moved); the
//! element bound alone cost about nine (an element tangent and a 24 × 24 eigenvalue per hex8),
//! and checking every 10 steps made a DEF_EXP run 2.6 times slower than stepping alone. By
//! default the re-checks are spaced by how fast the bound moves: the next
//! one comes when, at the drift measured between the last two, the bound would have used a
//! quarter of its remaining headroom over the step — every step when the step is at the bound
//! and the bound falls, doubling the interval (from 10, at most
//! [`CriticalStepCheck::recheck_every`]) while it holds.
//!
//! **Massless dofs** (a zero lumped mass, a redistributed one: issue 24): stepped by the body's
//! static equilibrium ([`super::massless`], docs/theory/contact.md §9.1, eqs. C26–C29); the
//! critical step is then the massive dofs' with the massless ones held ([`super::spectral`]).

use std::borrow::Cow;

use super::massless::Massless;
use super::spectral::{self, CriticalStep};
use super::{LeapFrog, LeapFrogSystem, check_critical};
use crate::{
    Clock, Energy, Invariant, Mass, NodalStepper, StateField, StateKind, StepError, StepReport,
    StepSettings, Stepper, restored,
};

/// The name of Solfec's DEF_EXP in input files (`time.scheme: def_exp`).
pub const NAME: &str = "def_exp";

/// How the critical step is checked while the body deforms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CriticalStepCheck {
    /// Recompute the bound every this many steps (0: only at the start); when
    /// [`adaptive`](Self::adaptive), at most this many steps apart.
    pub recheck_every: u64,
    /// Space the re-checks by the bound's drift (see the module documentation).
    pub adaptive: bool,
    /// A re-check stops the run when `h > (1 + tolerance) · bound`.
    pub tolerance: f64,
}

impl Default for CriticalStepCheck {
    /// Adaptive, at most 100 steps apart, 1 % tolerance.
    fn default() -> Self {
        Self {
            recheck_every: 100,
            adaptive: true,
            tolerance: 0.01,
        }
    }
}

impl CriticalStepCheck {
    /// Every `steps` steps, whatever the bound does (0: only at the start).
    pub fn every(steps: u64) -> Self {
        Self {
            recheck_every: steps,
            adaptive: false,
            ..Self::default()
        }
    }
}

/// The first adaptive re-check comes this many steps after the start (or fewer, if the
/// largest interval is smaller).
const FIRST_INTERVAL: u64 = 10;

/// When the bound is checked next, and what the last check found.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RecheckSchedule {
    /// The step after which the next check runs (`u64::MAX`: never).
    next: u64,
    /// The interval that led to it.
    interval: u64,
    /// The step and bound of the last check (the start's estimate at first).
    last_step: u64,
    last_bound: f64,
}

impl RecheckSchedule {
    /// The schedule after the start's estimate `bound` at step `step` for the step `h`.
    fn start(check: &CriticalStepCheck, step: u64, bound: f64, h: f64) -> Self {
        let interval = match (check.recheck_every, check.adaptive) {
            (0, _) => 0,
            (k, false) => k,
            (_, true) => adaptive_interval(check, bound, h, 0.0, FIRST_INTERVAL),
        };
        Self {
            next: if interval == 0 {
                u64::MAX
            } else {
                step.saturating_add(interval)
            },
            interval,
            last_step: step,
            last_bound: bound,
        }
    }

    /// The schedule after a check at `step` found `bound` for the step `h`: the same interval
    /// when fixed; when adaptive, [`adaptive_interval`] from the rate at which the bound fell
    /// since the last check.
    fn after_check(&self, check: &CriticalStepCheck, step: u64, bound: f64, h: f64) -> Self {
        let interval = if check.adaptive {
            let steps = step.saturating_sub(self.last_step).max(1) as f64;
            let fall_per_step = ((self.last_bound - bound) / self.last_bound).max(0.0) / steps;
            adaptive_interval(
                check,
                bound,
                h,
                fall_per_step,
                self.interval.saturating_mul(2),
            )
        } else {
            self.interval
        };
        Self {
            next: step.saturating_add(interval),
            interval,
            last_step: step,
            last_bound: bound,
        }
    }

    /// As a state field: `[next, interval, last_step, last_bound]` (step counts below 2⁵³
    /// are exact in an `f64`; "never" is stored as -1).
    fn to_array(self) -> [f64; 4] {
        let step = |s: u64| if s == u64::MAX { -1.0 } else { s as f64 };
        [
            step(self.next),
            self.interval as f64,
            self.last_step as f64,
            self.last_bound,
        ]
    }

    /// From [`to_array`](Self::to_array).
    fn from_slice(v: &[f64]) -> Self {
        let step = |x: f64| if x < 0.0 { u64::MAX } else { x as u64 };
        Self {
            next: step(v[0]),
            interval: v[1] as u64,
            last_step: v[2] as u64,
            last_bound: v[3],
        }
    }
}

/// The fall of the bound per step an adaptive schedule assumes when it measured less: a
/// steady bound is no promise that a contact or a buckle will not stiffen the body next.
const ASSUMED_FALL_PER_STEP: f64 = 1e-3;

/// The adaptive interval: the steps in which the bound, falling by `fall_per_step` (relative,
/// at least [`ASSUMED_FALL_PER_STEP`]), would use a quarter of its headroom
/// `1 − h/((1 + tol) bound)` over the step `h`; at most `longest`, between 1 and
/// `recheck_every`.
fn adaptive_interval(
    check: &CriticalStepCheck,
    bound: f64,
    h: f64,
    fall_per_step: f64,
    longest: u64,
) -> u64 {
    let headroom = (1.0 - h / ((1.0 + check.tolerance) * bound)).max(0.0);
    let by_fall = 0.25 * headroom / fall_per_step.max(ASSUMED_FALL_PER_STEP);
    // (`as` saturates; a fraction of a step rounds down, to at least one step.)
    let interval = (by_fall as u64).min(longest);
    interval.clamp(1, check.recheck_every.max(1))
}

/// The name of the schedule's state field.
const SCHEDULE: &str = "critical_step_check";

/// The name of the state field of the critical-step estimate's mode (the next re-check starts
/// from it).
const MODE: &str = "critical_step_mode";

/// The name of the bound in messages.
pub const DEF_EXP_BOUND: &str = "of DEF_EXP, 2/sqrt(lambda_max) with lambda_max the largest eigenvalue of M^-1 K(q) (Lanczos, at most the largest element eigenvalue)";

/// The DEF_EXP stepper on a system with a lumped mass.
#[derive(Debug)]
pub struct DefExp<S> {
    system: S,
    state: LeapFrog,
    /// `1/m_i` (0 on a massless dof).
    inverse_mass: Vec<f64>,
    /// The massless dofs' equilibrium (issue 24, [`super::massless`]), if any.
    massless: Option<Box<Massless>>,
    check: CriticalStepCheck,
    schedule: RecheckSchedule,
    /// The latest critical step estimate.
    critical: f64,
    /// The estimate it comes from (its mode starts the next re-check).
    estimate: CriticalStep,
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
    /// its step from it: [`spectral::refine`]): it is reused when the start state is `x0` itself (no prescribed
    /// value at `t0` moves a dof), which saves a pass over every cell (for a 10⁶-cell body,
    /// half a minute on one core). Collective on a distributed system.
    pub fn with_bound_at(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
        check: CriticalStepCheck,
        bound_at_x0: CriticalStep,
    ) -> Result<Self, StepError> {
        Self::build(system, settings, x0, v0, check, Some(bound_at_x0))
    }

    fn build(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
        check: CriticalStepCheck,
        bound_at_x0: Option<CriticalStep>,
    ) -> Result<Self, StepError> {
        let n = system.n_dofs();
        let state = LeapFrog::new(n, settings, x0, v0)?;
        let inverse_mass = match system.mass() {
            Mass::Lumped(m) => {
                // A zero entry (a redistributed mass, fem_scene::redistribute) is a massless
                // dof ([`super::massless`]); a negative or infinite one is refused.
                if let Some(&bad) = m.iter().find(|m| !(**m >= 0.0 && m.is_finite())) {
                    return Err(StepError::InvalidParameter {
                        name: "lumped mass",
                        value: bad,
                        expected: "a non-negative finite lumped mass on every dof",
                    });
                }
                m.iter()
                    .map(|&m| if m == 0.0 { 0.0 } else { 1.0 / m })
                    .collect::<Vec<f64>>()
            }
            Mass::Consistent(_) => {
                return Err(StepError::NeedsLumpedMass { scheme: "DEF_EXP" });
            }
        };
        // Zero masses need the tangent (super::massless). A system that gives none — the
        // distributed solid — refuses them on every process together (a collective call),
        // before the collective estimate below: a process that failed alone would leave the
        // others waiting in it.
        let none_here = match system.mass() {
            Mass::Lumped(m) => !m.contains(&0.0),
            Mass::Consistent(_) => true,
        };
        if system.tangent_kind().symmetry().is_none() && !system.all_agree(none_here) {
            return Err(StepError::NeedsTangent {
                scheme: "DEF_EXP with massless dofs (a zero lumped mass, here or on another process)",
            });
        }
        let massless = match system.mass() {
            Mass::Lumped(m) => Massless::new(
                &system,
                m,
                |d| state.control.is_prescribed(d),
                &state.q,
                state.clock,
            )?
            .map(Box::new),
            Mass::Consistent(_) => None,
        };
        if let Mass::Lumped(m) = system.mass()
            && m.iter().all(|&v| v == 0.0)
        {
            return Err(StepError::InvalidParameter {
                name: "lumped mass",
                value: 0.0,
                expected: "some dof with a positive lumped mass (DEF_EXP steps the massive dofs)",
            });
        }
        let known = bound_at_x0.filter(|_| system.all_agree(state.q == x0));
        let estimate = match known {
            Some(b) => b,
            None => Self::estimate(&system, &state.q).map_err(|e| state.clock.failed(e))?,
        };
        let bound = estimate.step;
        let dt = state.clock.dt();
        check_critical(dt, &bound, DEF_EXP_BOUND)?;
        let schedule = RecheckSchedule::start(&check, 0, bound.dt, dt);
        let n_prescribed = state.control.dofs().len();
        Ok(Self {
            system,
            state,
            inverse_mass,
            massless,
            check,
            schedule,
            critical: bound.dt,
            estimate,
            reactions: vec![0.0; n_prescribed],
        })
    }

    /// The critical step at `x`: the system's bound refined by [`spectral::refine`].
    pub fn estimate(system: &S, x: &[f64]) -> Result<CriticalStep, crate::EvalError> {
        let element = system.critical_step(x)?;
        spectral::refine(system, x, element)
    }

    /// `safety · 2/sqrt(λ_max)` at `x0`: the step `dt: auto` takes (Solfec uses 0.5).
    pub fn auto_step(system: &S, x0: &[f64], safety: f64) -> Result<f64, crate::EvalError> {
        Ok(safety * Self::estimate(system, x0)?.step.dt)
    }

    /// The system.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The latest critical step estimate `2/sqrt(λ_max)`.
    pub fn critical_step(&self) -> f64 {
        self.critical
    }

    /// The scheduled re-check of the critical step at the deformed state: stops the run when
    /// the step is above the bound by more than the tolerance.
    fn recheck(&mut self) -> Result<(), StepError> {
        let s = &self.state;
        let h = s.clock.dt();
        self.estimate = spectral::recheck(&self.system, &s.q, &self.estimate).map_err(|e| {
            StepError::Evaluation {
                step: s.clock.step(),
                t: s.time(),
                source: e,
            }
        })?;
        let bound = self.estimate.step;
        self.critical = bound.dt;
        self.schedule = self
            .schedule
            .after_check(&self.check, s.clock.step(), bound.dt, h);
        if h > (1.0 + self.check.tolerance) * bound.dt {
            return Err(StepError::Unstable {
                which: DEF_EXP_BOUND,
                dt: h,
                bound: bound.dt,
                lambda_max: bound.lambda_max,
                advice: "the deformed body's critical step fell below the step: reduce the time step or the safety factor that chose it",
            });
        }
        Ok(())
    }
}

impl<S: LeapFrogSystem> DefExp<S> {
    /// The first half of a step split around contact impulses (issue 24; Solfec's
    /// `TL_dynamic_step_begin`): the half drift `q^{t+h/2}` and the free velocity
    /// `u_free = u^t + h M⁻¹ f(q^{t+h/2})` (eq. `u(t+h)` without `Hᵀ R`), prescribed dofs at
    /// their end velocity. The state at `t` is untouched until
    /// [`end_contact_step`](Self::end_contact_step).
    pub fn begin_contact_step(&mut self) -> Result<(), StepError> {
        let s = &mut self.state;
        let h = s.clock.dt();
        s.half_drift_and_force(&self.system)?;
        for i in 0..s.u.len() {
            s.u_new[i] = s.u[i] + h * self.inverse_mass[i] * s.force[i];
        }
        if !s.no_prescribed() {
            s.prescribe_end_velocity();
        }
        if let Some(c) = &mut self.massless {
            // u_c,free: the equilibrium (C26) without an impulse.
            c.solve(
                &self.system,
                s.clock,
                &s.q_half,
                &mut s.u_new,
                &s.f_ext,
                &[],
            )?;
        }
        Ok(())
    }

    /// The second half of a split step: `u^{t+h} = u_free + M⁻¹ p` for the generalized
    /// impulse `p` (one value per dof, or empty for none; on a prescribed dof the impulse goes
    /// to its reaction), the drift `q^{t+h}`, the work of the loads and reactions, the clock.
    pub fn end_contact_step(&mut self, impulse: &[f64]) -> Result<StepReport, StepError> {
        let s = &mut self.state;
        let h = s.clock.dt();
        for ((u, m), p) in s.u_new.iter_mut().zip(&self.inverse_mass).zip(impulse) {
            *u += m * p;
        }
        if !s.no_prescribed() {
            s.prescribe_end_velocity();
            // Reaction r_c = m_c (u_c^{t+h} − u_c^t)/h − f_c − p_c/h (no inertia on a
            // massless prescribed dof).
            for (r, &d) in self.reactions.iter_mut().zip(s.control.dofs()) {
                let p = impulse.get(d).copied().unwrap_or(0.0);
                let inv = self.inverse_mass[d];
                let inertia = if inv > 0.0 {
                    (s.u_new[d] - s.u[d]) / (h * inv)
                } else {
                    0.0
                };
                *r = inertia - s.force[d] - p / h;
            }
        }
        if let Some(c) = &mut self.massless
            && impulse.iter().any(|&p| p != 0.0)
        {
            let massive = impulse
                .iter()
                .enumerate()
                .any(|(d, &p)| p != 0.0 && c.index(d).is_none() && self.inverse_mass[d] > 0.0);
            if massive {
                // The massive dofs' final positions moved: the equilibrium (C26) again, with
                // the impulse.
                c.solve(
                    &self.system,
                    s.clock,
                    &s.q_half,
                    &mut s.u_new,
                    &s.f_ext,
                    impulse,
                )?;
            } else {
                // Impulses on massless dofs only: (C28), the velocity the contact solver
                // predicted with this map, so that a position-level contact (C17) ends on
                // the obstacle (re-solving the nonlinear (C26) would move it off by the
                // tangent's change over the impulse's displacement).
                let mut b: Vec<f64> = c
                    .dofs()
                    .iter()
                    .map(|&d| impulse.get(d).copied().unwrap_or(0.0))
                    .collect();
                c.apply_inverse_inertia(h, &mut b, 1);
                for (du, &d) in b.iter().zip(c.dofs()) {
                    s.u_new[d] += du;
                }
            }
        }
        if let Some(c) = &mut self.massless {
            c.end_step(h, &s.q_half, &s.u_new);
        }
        s.finish(&self.system, &self.reactions);
        if let Some(c) = &self.massless {
            // A massless dof's velocity is the step's mean rate (q_c^{t+h} − q_c^t)/h
            // (C29). (After `finish`, `u` holds u^{t+h}, `u_new` u^t.)
            for &d in c.dofs() {
                s.u[d] = 0.5 * (s.u[d] + s.u_new[d]);
            }
        }
        s.check_state(&self.system)?;
        if s.clock.step() >= self.schedule.next {
            self.recheck()?;
        }
        Ok(StepReport::default())
    }

    /// `q^{t+h/2}` between [`begin_contact_step`](Self::begin_contact_step) and
    /// [`end_contact_step`](Self::end_contact_step).
    pub fn mid_step_position(&self) -> &[f64] {
        &self.state.q_half
    }

    /// `u_free` between the two halves of a split step.
    pub fn free_velocity(&self) -> &[f64] {
        &self.state.u_new
    }

    /// `u^t`.
    pub fn velocity(&self) -> &[f64] {
        &self.state.u
    }

    /// `M⁻¹` (lumped), per dof (0 on a massless dof: see
    /// [`solve_massless`](Self::solve_massless)).
    pub fn inverse_mass(&self) -> &[f64] {
        &self.inverse_mass
    }

    /// The massless dofs that are not prescribed (ascending; empty when every dof has a
    /// mass).
    pub fn massless_dofs(&self) -> &[usize] {
        self.massless.as_ref().map_or(&[], |c| c.dofs())
    }

    /// What the massless dofs' equilibrium (C26, C28) cost so far; `None` without massless
    /// dofs.
    pub fn massless_statistics(&self) -> Option<super::massless::MasslessStatistics> {
        self.massless.as_ref().map(|c| c.statistics())
    }

    /// Whether the massless dofs' Newton keeps `K_cc`'s factorization while it contracts
    /// ([`super::massless::REUSE_CONTRACTION`], the default) or renews it at every iteration.
    pub fn set_massless_reuse(&mut self, reuse: bool) {
        if let Some(c) = &mut self.massless {
            c.set_reuse(reuse);
        }
    }

    /// Dof `d`'s index among [`massless_dofs`](Self::massless_dofs).
    pub fn massless_index(&self, d: usize) -> Option<usize> {
        self.massless.as_ref().and_then(|c| c.index(d))
    }

    /// `b ← A_c⁻¹ b = (2/h²) K_cc⁻¹ b` on the massless block (C28), for `n_rhs` columns of
    /// [`massless_dofs`](Self::massless_dofs)`.len()` values each, with the tangent of the
    /// step begun: the velocity a massless dof's impulse gives the massless dofs.
    pub fn solve_massless(&self, b: &mut [f64], n_rhs: usize) {
        if let Some(c) = &self.massless {
            c.apply_inverse_inertia(self.state.clock.dt(), b, n_rhs);
        }
    }

    /// Whether dof `d` is prescribed.
    pub fn is_prescribed(&self, d: usize) -> bool {
        self.state.control.is_prescribed(d)
    }
}

impl<S: LeapFrogSystem> Stepper for DefExp<S> {
    /// Half drift, kick, half drift (seed `q(t+h/2)`, `u(t+h)` with `A = M`, `q(t+h)`): the
    /// two halves of a split step without an impulse.
    fn step(&mut self) -> Result<StepReport, StepError> {
        self.begin_contact_step()?;
        self.end_contact_step(&[])
    }

    fn clock(&self) -> Clock {
        self.state.clock
    }

    fn energy(&self) -> Option<Energy> {
        self.state.energy(&self.system)
    }

    fn invariant(&self) -> Invariant {
        Invariant::Truncation
    }

    fn state(&self) -> Vec<StateField<'_>> {
        let mut fields = self.state.state();
        fields.push(StateField::owned(
            SCHEDULE,
            StateKind::Other,
            self.schedule.to_array().to_vec(),
        ));
        fields.push(StateField::dofs(MODE, &self.estimate.mode));
        fields
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        self.state.restore(step_index, fields)?;
        // A checkpoint written before the schedule was saved: re-checks resume from the
        // restored step as from a start (they never change the state, only when a run stops).
        self.schedule = match fields.iter().any(|f| f.name == SCHEDULE) {
            true => RecheckSchedule::from_slice(restored(fields, SCHEDULE, 4)?),
            false => RecheckSchedule::start(
                &self.check,
                step_index,
                self.critical,
                self.state.clock.dt(),
            ),
        };
        // The mode the next re-check starts from; a checkpoint without it (written before the
        // spectral estimate) gets a fresh estimate at the restored state.
        if fields.iter().any(|f| f.name == MODE) {
            let mode = restored(fields, MODE, self.state.q.len())?;
            self.estimate.mode.clear();
            self.estimate.mode.extend_from_slice(mode);
        } else {
            self.estimate = Self::estimate(&self.system, &self.state.q)
                .map_err(|e| self.state.clock.failed(e))?;
        }
        Ok(())
    }
}

impl<S: LeapFrogSystem> NodalStepper for DefExp<S> {
    fn position(&self) -> &[f64] {
        &self.state.q
    }

    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        self.state.velocity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The intervals an adaptive schedule takes for a bound that follows `bound(step)`.
    fn intervals(check: CriticalStepCheck, h: f64, bound: impl Fn(u64) -> f64) -> Vec<u64> {
        let mut s = RecheckSchedule::start(&check, 0, bound(0), h);
        let mut out = vec![s.interval];
        for _ in 0..7 {
            let step = s.next;
            s = s.after_check(&check, step, bound(step), h);
            out.push(s.interval);
        }
        out
    }

    #[test]
    fn a_steady_bound_far_from_the_step_is_checked_ever_less_often() {
        let check = CriticalStepCheck::default();
        assert_eq!(
            intervals(check, 0.5, |_| 1.0),
            [10, 20, 40, 80, 100, 100, 100, 100]
        );
        // Fixed intervals stay fixed; 0 never re-checks.
        assert_eq!(intervals(CriticalStepCheck::every(7), 0.5, |_| 1.0), [7; 8]);
        let never = RecheckSchedule::start(&CriticalStepCheck::every(0), 0, 1.0, 0.5);
        assert_eq!(never.next, u64::MAX);
        // A round trip through the state field.
        let s = RecheckSchedule::start(&check, 40, 1.0, 0.5).after_check(&check, 50, 0.9, 0.5);
        assert_eq!(RecheckSchedule::from_slice(&s.to_array()), s);
        assert_eq!(RecheckSchedule::from_slice(&never.to_array()), never);
    }

    #[test]
    fn a_step_close_to_the_bound_or_a_falling_bound_is_checked_often() {
        let check = CriticalStepCheck::default();
        // h at 0.97 of a steady bound: a quarter of the 4 % headroom at the assumed 0.1 % a
        // step.
        assert_eq!(intervals(check, 0.97, |_| 1.0), [9; 8]);
        // Far from the bound but falling by 1 % a step: the intervals shrink with the
        // headroom (10, 11, 10, 8, 6, 5, 4, 3), where a steady bound doubled them to 100.
        let falling = intervals(check, 0.5, |s| 0.99f64.powi(s as i32));
        assert!(falling[1] <= 12, "{falling:?}");
        assert!(falling[2..].windows(2).all(|w| w[1] <= w[0]), "{falling:?}");
        assert!(*falling.last().unwrap() <= 3, "{falling:?}");
    }
}
