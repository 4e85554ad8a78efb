//! DEF_LIM: Solfec's linearly implicit leap-frog (seed `004`, equations `q(t+h/2)`,
//! `u(t+h)`, `q(t+h)` with `A = M + (η h/2 + h²/4) K(q^{t+h/2})` (`Aimp`)), one linear solve
//! per step.
//!
//! The kick solves
//!
//! ```text
//! A (u^{t+h} − u^t) = h f(q^{t+h/2}, u^t),   f = f_ext(t+h/2) − f_int(q^{t+h/2}) − η K u^t
//! ```
//!
//! which is the implicit midpoint rule for `M u̇ = f_ext − f_int(q) − η K u` linearized about
//! `q^{t+h/2}`: with `q̄ = q^{t+h/2} + h/4 Δu` and `ū = u^t + Δu/2`,
//! `f_int(q̄) ≈ f_int(q^{t+h/2}) + h/4 K Δu` and `η K ū = η K u^t + η/2 K Δu`. It is second
//! order, and unconditionally stable for a linear body. `η` is stiffness-proportional damping
//! (a time: the damping ratio of a mode of frequency `ω` is `η ω / 2`). The tangent is
//! assembled and factored numerically every step; the symbolic analysis is done once.

use std::borrow::Cow;

use fem_time::{
    Energy, Invariant, NodalStepper, StateField, StepError, StepReport, StepSettings, Stepper,
};

use crate::leapfrog::{LeapFrog, LeapFrogSystem};
use crate::step_matrix::StepMatrix;

/// The DEF_LIM stepper.
#[derive(Debug)]
pub struct DefLim<S> {
    system: S,
    state: LeapFrog,
    /// Stiffness-proportional damping `η ≥ 0` (s).
    damping: f64,
    matrix: StepMatrix,
    /// `Δu = u^{t+h} − u^t` (all dofs).
    increment: Vec<f64>,
    /// Right-hand side on the free dofs.
    rhs: Vec<f64>,
    /// `K u` scratch.
    ku: Vec<f64>,
    reactions: Vec<f64>,
}

impl<S: LeapFrogSystem> DefLim<S> {
    /// The stepper from `x(t0) = x0`, `ẋ(t0) = v0`, with damping `η ≥ 0`.
    pub fn new(
        system: S,
        damping: f64,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        if !(damping >= 0.0 && damping.is_finite()) {
            return Err(StepError::InvalidParameter {
                name: "damping",
                value: damping,
                expected: "a non-negative finite stiffness-proportional damping eta",
            });
        }
        let n = system.n_dofs();
        let state = LeapFrog::new(n, settings, x0, v0)?;
        let k = system.tangent(&state.q).to_csr().into_owned();
        let matrix = StepMatrix::new(k, system.mass(), state.control.flags(), system.dof_points())
            .map_err(|message| StepError::Failed {
                step: 0,
                t: state.t0,
                message,
            })?;
        let n_free = matrix.free.len();
        let n_prescribed = state.control.dofs().len();
        Ok(Self {
            system,
            state,
            damping,
            matrix,
            increment: vec![0.0; n],
            rhs: vec![0.0; n_free],
            ku: vec![0.0; n],
            reactions: vec![0.0; n_prescribed],
        })
    }

    /// The system.
    pub fn system(&self) -> &S {
        &self.system
    }

    /// The damping `η`.
    pub fn damping(&self) -> f64 {
        self.damping
    }
}

/// `y = K x` for a CSR `K`.
fn mul(k: &fem_assembly::CsrMatrix<f64>, x: &[f64], y: &mut [f64]) {
    fem_assembly::sparse::mul_add(0.0, y, 1.0, k, x);
}

impl<S: LeapFrogSystem> Stepper for DefLim<S> {
    /// Half drift, one linear solve for the kick, half drift.
    fn step(&mut self) -> Result<StepReport, StepError> {
        let s = &mut self.state;
        let h = s.dt;
        let eta = self.damping;
        s.half_drift_and_force(&self.system)?;
        self.system.tangent_into(&s.q_half, &mut self.matrix.k);
        if self.matrix.k.values().iter().any(|v| !v.is_finite()) {
            return Err(s.failure(&self.system, "the tangent at t + h/2"));
        }
        if eta > 0.0 {
            mul(&self.matrix.k, &s.u, &mut self.ku);
            for (f, ku) in s.force.iter_mut().zip(&self.ku) {
                *f -= eta * ku;
            }
        }
        self.matrix.refactor(0.5 * eta * h + 0.25 * h * h)?;
        // Prescribed increments, then the free ones.
        self.increment.fill(0.0);
        let flags = s.control.flags();
        if !s.no_prescribed() {
            let t1 = s.time() + h;
            s.u_new.copy_from_slice(&s.u);
            s.control.end_velocity(t1, h, &s.q_half, &mut s.u_new);
            for &d in s.control.dofs() {
                self.increment[d] = s.u_new[d] - s.u[d];
            }
        }
        for (r, &i) in self.rhs.iter_mut().zip(&self.matrix.free) {
            *r = h * s.force[i];
            if !s.no_prescribed() {
                *r -= self.matrix.a_row_dot_prescribed(i, &self.increment, flags);
            }
        }
        self.matrix.solve_in_place(&mut self.rhs);
        for (du, &i) in self.rhs.iter().zip(&self.matrix.free) {
            self.increment[i] = *du;
        }
        for ((un, u), du) in s.u_new.iter_mut().zip(&s.u).zip(&self.increment) {
            *un = u + du;
        }
        if !s.no_prescribed() {
            // Restore the prescribed velocities exactly (u + Δu may round).
            let t1 = s.time() + h;
            s.control.end_velocity(t1, h, &s.q_half, &mut s.u_new);
            for (r, &d) in self.reactions.iter_mut().zip(s.control.dofs()) {
                *r = self.matrix.a_row_dot(d, &self.increment) / h - s.force[d];
            }
        }
        if eta > 0.0 {
            // Dissipation h η ūᵀ K ū, ū = (u^t + u^{t+h})/2.
            for ((m, u0), u1) in self.increment.iter_mut().zip(&s.u).zip(&s.u_new) {
                *m = 0.5 * (u0 + u1);
            }
            mul(&self.matrix.k, &self.increment, &mut self.ku);
            let power: f64 = self
                .ku
                .iter()
                .zip(&self.increment)
                .map(|(a, b)| a * b)
                .sum();
            s.dissipated += h * eta * power;
        }
        s.finish(&self.system, &self.reactions);
        if !s.q.iter().chain(&s.u).all(|v| v.is_finite()) {
            return Err(StepError::NonFinite {
                step: s.step,
                t: s.time(),
            });
        }
        Ok(StepReport {
            iterations: 1,
            ..StepReport::default()
        })
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
        if self.damping > 0.0 {
            Invariant::None
        } else {
            Invariant::Truncation
        }
    }

    fn state(&self) -> Vec<StateField<'_>> {
        self.state.state()
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        self.state.restore(step_index, fields)
    }
}

impl<S: LeapFrogSystem> NodalStepper for DefLim<S> {
    fn position(&self) -> &[f64] {
        &self.state.q
    }

    fn velocity(&self) -> Cow<'_, [f64]> {
        self.state.velocity()
    }
}
