//! What DEF_EXP and DEF_LIM share: the leap-frog state (positions and velocities at integer
//! time levels), the half drifts `q(t+h/2)` and `q(t+h)` of the seed, the energy bookkeeping
//! and the state for restarts.
//!
//! One step of either scheme (Solfec, `fem.c: TL_dynamic_step_begin/end`; seed equations
//! `q(t+h/2)`, `u(t+h)`, `q(t+h)`):
//!
//! ```text
//! q^{t+h/2} = q^t + h/2 u^t                                   (q(t+h/2))
//! u^{t+h}   = u^t + A⁻¹ h f(q^{t+h/2}, u^t)                    (u(t+h))
//! q^{t+h}   = q^{t+h/2} + h/2 u^{t+h}                          (q(t+h))
//! ```
//!
//! with `f = f_ext(t+h/2) − f_int(q^{t+h/2})` (minus the damping `η K u^t` in DEF_LIM).
//! Because `q^{t+h} − q^t = h (u^t + u^{t+h})/2`, the work of a force over a step is its
//! value times that increment; the external work, the reactions' work and the dissipation are
//! accumulated so.

//!
//! Prescribed dofs (a [`DirichletControl`]): the leap-frog has positions at `t`, `t + h/2`,
//! `t + h` and velocities at `t`, `t + h`. A prescribed dof `g(t)`:
//! - **direct** holds the positions, `q = g` at every level, and takes the velocity the drift
//!   (`q(t+h)`) implies, `u^{t+h} = 2 (g(t+h) − g(t+h/2)) / h`;
//! - **rate** holds the velocity, `u^{t+h} = ġ(t+h)`, and lets the positions drift with it;
//! - **full** holds both, `q = g` and `u = ġ`.

pub mod def_exp;
pub mod def_lim;
pub mod massless;
pub mod spectral;

pub use def_exp::{CriticalStepCheck, DEF_EXP_BOUND, DefExp};
pub use def_lim::DefLim;
pub use spectral::CriticalStep;

use std::borrow::Cow;
use std::sync::Mutex;

use fem_assembly::{ExactSum, StableStep};
use fem_constraints::Enforcement;

use crate::{
    Clock, DirichletControl, Energy, EvalError, Mass, SecondOrderSystem, StateField, StateKind,
    StepError, StepSettings, StepStart, restored,
};

/// A system the leap-frog steppers can run: a [`SecondOrderSystem`] that also gives its
/// explicit critical step, and — for a body split over several processes — sums over its dofs
/// and agrees on a condition collectively.
pub trait LeapFrogSystem: SecondOrderSystem {
    /// The critical step of the central difference at `x`, `2/sqrt(λ_max)`.
    fn critical_step(&self, x: &[f64]) -> Result<StableStep, EvalError>;
    /// The sum over the body of per-dof terms `(dof, value)`, exactly rounded
    /// ([`ExactSum`]), so that it does not depend on how the terms are ordered or split. A
    /// serial system sums every term; a subdomain of a distributed body sums the terms of the
    /// dofs it owns and combines the sums of all subdomains (a collective call).
    fn sum_over_dofs(&self, terms: &mut dyn Iterator<Item = (usize, f64)>) -> f64 {
        ExactSum::of(terms.map(|(_, v)| v))
    }
    /// Whether `ok` holds everywhere: a serial system returns it; the subdomains of a
    /// distributed body agree on it (a collective call), so that every rank fails a step
    /// together and none waits for a message that will not come.
    fn all_agree(&self, ok: bool) -> bool {
        ok
    }
    /// The internal force and tangent of the system on the block of dofs `dofs` (ascending),
    /// evaluated on the part of the system that acts on them only (a solid: the cells touching
    /// them), with the same values as the whole system's — or `None` (the default), and the
    /// caller evaluates the whole system. DEF_EXP's massless dofs use it
    /// ([`massless::DofBlock`]).
    fn dof_block(&self, dofs: &[usize]) -> Option<Box<dyn massless::DofBlock>> {
        let _ = dofs;
        None
    }
}

/// Positions at a level `t` of the scheme: `q = g(t)` under direct and full control.
fn hold_positions(control: &DirichletControl, t: f64, q: &mut [f64]) {
    for (d, s, e) in control.iter() {
        if e != Enforcement::Rate {
            q[d] = s.value(t);
        }
    }
}

/// The end velocity `u^{t+h}` of each prescribed dof, from the half-step position `q_half`
/// (at `t + h/2`) and the end time `t1 = t + h`.
fn end_velocity(control: &DirichletControl, t1: f64, h: f64, q_half: &[f64], u: &mut [f64]) {
    for (d, s, e) in control.iter() {
        u[d] = match e {
            Enforcement::Direct => 2.0 * (s.value(t1) - q_half[d]) / h,
            Enforcement::Rate | Enforcement::Full => s.rate(t1),
        };
    }
}

/// The state of a leap-frog stepper and its scratch vectors.
#[derive(Debug)]
pub(crate) struct LeapFrog {
    pub clock: Clock,
    /// `q^t` (positions at the current level).
    pub q: Vec<f64>,
    /// `u^t`.
    pub u: Vec<f64>,
    pub external_work: f64,
    pub reaction_work: f64,
    pub dissipated: f64,
    pub control: DirichletControl,
    /// `q^{t+h/2}`.
    pub q_half: Vec<f64>,
    /// `f_ext(t+h/2)`.
    pub f_ext: Vec<f64>,
    /// `f_int(q^{t+h/2})`.
    pub f_int: Vec<f64>,
    /// `f(q^{t+h/2}, u^t)`.
    pub force: Vec<f64>,
    /// `u^{t+h}`.
    pub u_new: Vec<f64>,
    /// Scratch for `q^{t+h}`.
    q_new: Vec<f64>,
    /// [`LeapFrog::energy`] at the current level, once asked: the run loop, the history row
    /// and the model's own columns all ask for it, and the strain energy is a pass over every
    /// cell (as dear as the internal force). Emptied when a step starts and on restore.
    energy_memo: Mutex<Option<Energy>>,
}

const BALANCE: &str = "balance";

impl LeapFrog {
    /// The state at `t0` from `x0`, `v0` (prescribed entries replaced by `g(t0)`, `ġ(t0)`).
    pub fn new(
        n: usize,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        let StepStart {
            clock,
            control,
            x: q,
            v: u,
            ..
        } = settings.start(n, x0, v0)?;
        let control = control.unwrap_or_else(|| DirichletControl::none(n));
        Ok(Self {
            clock,
            q,
            u,
            external_work: 0.0,
            reaction_work: 0.0,
            dissipated: 0.0,
            control,
            q_half: vec![0.0; n],
            f_ext: vec![0.0; n],
            f_int: vec![0.0; n],
            force: vec![0.0; n],
            u_new: vec![0.0; n],
            q_new: vec![0.0; n],
            energy_memo: Mutex::new(None),
        })
    }

    /// The prescribed dofs' conditions are empty.
    pub fn no_prescribed(&self) -> bool {
        self.control.is_empty()
    }

    /// `t_n = t0 + n h`.
    pub fn time(&self) -> f64 {
        self.clock.time()
    }

    /// The first half drift (`q(t+h/2)`) and the force `f = f_ext(t+h/2) − f_int(q^{t+h/2})`
    /// into `self.force`. Fails (on every process of a distributed body together) when the
    /// force cannot be evaluated or is not finite.
    pub fn half_drift_and_force<S: LeapFrogSystem>(&mut self, system: &S) -> Result<(), StepError> {
        self.forget_energy();
        let h = self.clock.dt();
        let t_half = self.time() + 0.5 * h;
        for ((qh, q), u) in self.q_half.iter_mut().zip(&self.q).zip(&self.u) {
            *qh = q + 0.5 * h * u;
        }
        hold_positions(&self.control, t_half, &mut self.q_half);
        let evaluated = system.internal_force(&self.q_half, &mut self.f_int);
        // (Without an external force `f_ext` stays the zeros it was made with.)
        if system.has_external_force() {
            system.external_force(t_half, &mut self.f_ext);
        }
        for ((f, fe), fi) in self.force.iter_mut().zip(&self.f_ext).zip(&self.f_int) {
            *f = fe - fi;
        }
        let evaluated =
            evaluated.and_then(|()| EvalError::check_finite("force at t + h/2", &self.force));
        if !system.all_agree(evaluated.is_ok()) {
            return Err(self
                .clock
                .failed(evaluated.err().unwrap_or(EvalError::Elsewhere)));
        }
        Ok(())
    }

    /// The second half drift (`q(t+h)`) from `u^{t+h}` (in `self.u_new`, prescribed entries
    /// set), the work of `f_ext(t+h/2)` and of the reactions `reactions` (one per prescribed
    /// dof, in the order of their dofs) over the step, and the clock.
    pub fn finish<S: LeapFrogSystem>(&mut self, system: &S, reactions: &[f64]) {
        let h = self.clock.dt();
        let t1 = self.time() + h;
        for ((qn, qh), un) in self.q_new.iter_mut().zip(&self.q_half).zip(&self.u_new) {
            *qn = qh + 0.5 * h * un;
        }
        hold_positions(&self.control, t1, &mut self.q_new);
        let (q0, q1) = (&self.q, &self.q_new);
        // (No external force: no work, and no exact sum over the dofs.)
        let external_work = if system.has_external_force() {
            system.sum_over_dofs(
                &mut (self.f_ext.iter().enumerate()).map(|(i, f)| (i, f * (q1[i] - q0[i]))),
            )
        } else {
            0.0
        };
        let reaction_work = system.sum_over_dofs(
            &mut (self.control.dofs().iter().zip(reactions))
                .map(|(&d, r)| (d, r * (q1[d] - q0[d]))),
        );
        std::mem::swap(&mut self.q, &mut self.q_new);
        std::mem::swap(&mut self.u, &mut self.u_new);
        self.external_work += external_work;
        self.reaction_work += reaction_work;
        self.clock.advance();
    }

    /// The end velocities of the prescribed dofs into `self.u_new`, for the step from the
    /// current level.
    pub fn prescribe_end_velocity(&mut self) {
        let h = self.clock.dt();
        let t1 = self.time() + h;
        end_velocity(&self.control, t1, h, &self.q_half, &mut self.u_new);
    }

    /// Fails (on every process together) when the new state is not finite.
    pub fn check_state<S: LeapFrogSystem>(&self, system: &S) -> Result<(), StepError> {
        let finite = self.q.iter().chain(&self.u).all(|v| v.is_finite());
        if !system.all_agree(finite) {
            return Err(StepError::NonFinite {
                step: self.clock.step(),
                t: self.time(),
            });
        }
        Ok(())
    }

    /// Kinetic energy `½ uᵀ M u` (a lumped mass's `Σ m_i u_i²` summed exactly, see
    /// [`LeapFrogSystem::sum_over_dofs`]), strain energy `V(q)` and the balance terms.
    pub fn energy<S: LeapFrogSystem>(&self, system: &S) -> Option<Energy> {
        let mut memo = self
            .energy_memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if memo.is_none() {
            *memo = self.evaluate_energy(system);
        }
        *memo
    }

    /// Empties the memo of [`energy`](Self::energy) (the state is about to change).
    fn forget_energy(&mut self) {
        *self
            .energy_memo
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// [`energy`](Self::energy), evaluated.
    fn evaluate_energy<S: LeapFrogSystem>(&self, system: &S) -> Option<Energy> {
        let potential = system.potential_energy(&self.q);
        let twice_kinetic = match system.mass() {
            Mass::Lumped(m) => system.sum_over_dofs(
                &mut (m.iter().zip(&self.u).enumerate()).map(|(i, (m, u))| (i, m * u * u)),
            ),
            consistent => consistent.norm_squared(&self.u),
        };
        let mut e = Energy::new(0.5 * twice_kinetic, potential?);
        e.external_work = self.external_work;
        e.reaction_work = self.reaction_work;
        e.dissipated = self.dissipated;
        Some(e)
    }

    /// Positions, velocities and the accumulated balance terms.
    pub fn state(&self) -> Vec<StateField<'_>> {
        vec![
            StateField::dofs("position", &self.q),
            StateField::dofs("velocity", &self.u),
            StateField::owned(
                BALANCE,
                StateKind::Other,
                vec![self.external_work, self.reaction_work, self.dissipated],
            ),
        ]
    }

    /// Sets the state saved by [`state`](Self::state) at `step_index`.
    pub fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.q.len();
        let q = restored(fields, "position", n)?;
        let u = restored(fields, "velocity", n)?;
        let b = restored(fields, BALANCE, 3)?;
        self.forget_energy();
        self.q.copy_from_slice(q);
        self.u.copy_from_slice(u);
        (self.external_work, self.reaction_work, self.dissipated) = (b[0], b[1], b[2]);
        self.clock.set_step(step_index);
        Ok(())
    }

    /// The velocity at the current level, as a [`crate::NodalStepper`] gives it.
    pub fn velocity(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.u)
    }
}

/// The relative accuracy of a critical step from [`spectral::refine`]: the finite
/// difference (S1) that gives `K v` loses `ε_machine / ε` of its value to rounding (`ε` the
/// perturbation's strain, `spectral::PERTURBATION` = 10⁻⁶: 2.2e-10 relative) and its
/// truncation is `O(ε²)` (1e-12), so `λ_max` is known to about 2.2e-10 and `Δt = 2/√λ` to
/// half that. A step above the bound by less than this is at the bound as far as the
/// estimate can tell (the exact chain at Courant 1: `λ = 6400.0000000056` against the exact
/// 6400, 8.8e-13).
pub const CRITICAL_STEP_ACCURACY: f64 = f64::EPSILON / spectral::PERTURBATION;

/// Refuses a step above the critical step `bound` (with `lambda_max`), naming the bound; a
/// step within [`CRITICAL_STEP_ACCURACY`] of it (relative) passes.
pub(crate) fn check_critical(
    dt: f64,
    bound: &StableStep,
    which: &'static str,
) -> Result<(), StepError> {
    if dt > bound.dt * (1.0 + CRITICAL_STEP_ACCURACY) {
        return Err(StepError::Unstable {
            which,
            dt,
            bound: bound.dt,
            lambda_max: bound.lambda_max,
            advice: "reduce the time step (or the safety factor that chose it)",
        });
    }
    Ok(())
}
