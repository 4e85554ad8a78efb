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

use fem_assembly::CsrMatrix;

use super::{LeapFrog, LeapFrogSystem};
use crate::{
    Clock, Coefficients, Energy, Invariant, Mass, NodalStepper, StateField, StepError, StepMatrix,
    StepReport, StepSettings, Stepper, Terms,
};

/// The name of Solfec's DEF_LIM in input files (`time.scheme: def_lim`).
pub const NAME: &str = "def_lim";

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
    /// The free dofs (all when none is prescribed).
    free: Vec<usize>,
    /// `K u` scratch.
    ku: Vec<f64>,
    reactions: Vec<f64>,
    /// Dofs of zero lumped mass (a mass redistributed off a contact surface).
    massless: Vec<usize>,
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
        let symmetry = system
            .tangent_kind()
            .symmetry()
            .ok_or(StepError::NeedsTangent { scheme: "DEF_LIM" })?;
        let k = system
            .tangent(&state.q)
            .map_err(|e| state.clock.failed(e))?
            .to_csr()
            .into_owned();
        let h = state.clock.dt();
        let matrix = StepMatrix::new(
            Terms {
                mass: system.mass(),
                damping: None,
                stiffness: Some(&k),
            },
            Coefficients {
                mass: 1.0,
                damping: 0.0,
                stiffness: 0.5 * damping * h + 0.25 * h * h,
            },
            symmetry,
            (!state.control.is_empty()).then_some(&state.control),
            system.dof_points(),
        )?;
        let free = state.control.free().to_vec();
        let n_prescribed = state.control.dofs().len();
        let massless = match system.mass() {
            Mass::Lumped(m) => (0..m.len()).filter(|&d| m[d] == 0.0).collect(),
            Mass::Consistent(_) => Vec::new(),
        };
        Ok(Self {
            system,
            state,
            damping,
            matrix,
            increment: vec![0.0; n],
            rhs: vec![0.0; free.len()],
            free,
            ku: vec![0.0; n],
            reactions: vec![0.0; n_prescribed],
            massless,
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
fn mul(k: &CsrMatrix<f64>, x: &[f64], y: &mut [f64]) {
    fem_assembly::sparse::mul_add(0.0, y, 1.0, k, x);
}

impl<S: LeapFrogSystem> DefLim<S> {
    /// The first half of a step split around contact impulses (issue 24; Solfec's
    /// `TL_dynamic_step_begin`): the half drift, `A = M + (ηh/2 + h²/4) K(q^{t+h/2})`
    /// factorized, and the free velocity `u_free = u^t + A⁻¹ h f` (eq. `u(t+h)` without
    /// `Hᵀ R`). The factorization stays for [`solve_step_matrix`](Self::solve_step_matrix)
    /// and [`end_contact_step`](Self::end_contact_step).
    pub fn begin_contact_step(&mut self) -> Result<(), StepError> {
        let s = &mut self.state;
        let h = s.clock.dt();
        let eta = self.damping;
        s.half_drift_and_force(&self.system)?;
        let k = self
            .matrix
            .stiffness_mut()
            .expect("DEF_LIM's matrix has a stiffness term");
        let clock = s.clock;
        self.system
            .tangent_into(&s.q_half, k)
            .map_err(|e| clock.failed(e))?;
        crate::EvalError::check_finite("tangent at t + h/2", k.values())
            .map_err(|e| clock.failed(e))?;
        if eta > 0.0 {
            mul(k, &s.u, &mut self.ku);
            for (f, ku) in s.force.iter_mut().zip(&self.ku) {
                *f -= eta * ku;
            }
        }
        self.matrix.refactor()?;
        // Prescribed increments, then the free ones.
        self.increment.fill(0.0);
        if !s.no_prescribed() {
            s.u_new.copy_from_slice(&s.u);
            s.prescribe_end_velocity();
            for &d in s.control.dofs() {
                self.increment[d] = s.u_new[d] - s.u[d];
            }
        }
        let control = &s.control;
        for (r, &i) in self.rhs.iter_mut().zip(&self.free) {
            *r = h * s.force[i];
            if !control.is_empty() {
                *r -= self
                    .matrix
                    .row_dot_where(i, &self.increment, |j| control.is_prescribed(j))
                    .expect("DEF_LIM's matrix is sparse");
            }
        }
        self.matrix.solve_in_place(&mut self.rhs);
        for (du, &i) in self.rhs.iter().zip(&self.free) {
            self.increment[i] = *du;
        }
        for ((un, u), du) in s.u_new.iter_mut().zip(&s.u).zip(&self.increment) {
            *un = u + du;
        }
        if !s.no_prescribed() {
            // Restore the prescribed velocities exactly (u + Δu may round).
            s.prescribe_end_velocity();
        }
        Ok(())
    }

    /// The second half of a split step: `u^{t+h} = u_free + A⁻¹ p` for the generalized
    /// impulse `p` (one value per dof, or empty for none; prescribed dofs keep their velocity
    /// and their reaction takes the impulse), the dissipation, the drift `q^{t+h}`, the work
    /// of the loads and reactions, the clock.
    pub fn end_contact_step(&mut self, impulse: &[f64]) -> Result<StepReport, StepError> {
        let s = &mut self.state;
        let h = s.clock.dt();
        let eta = self.damping;
        if impulse.iter().any(|&p| p != 0.0) {
            for (r, &i) in self.rhs.iter_mut().zip(&self.free) {
                *r = impulse.get(i).copied().unwrap_or(0.0);
            }
            self.matrix.solve_in_place(&mut self.rhs);
            for (du, &i) in self.rhs.iter().zip(&self.free) {
                self.increment[i] += *du;
                s.u_new[i] += *du;
            }
        }
        if !s.no_prescribed() {
            for (r, &d) in self.reactions.iter_mut().zip(s.control.dofs()) {
                let a_du = self
                    .matrix
                    .row_dot(d, &self.increment)
                    .expect("DEF_LIM's matrix is sparse");
                let p = impulse.get(d).copied().unwrap_or(0.0);
                *r = a_du / h - s.force[d] - p / h;
            }
        }
        if eta > 0.0 {
            // Dissipation h η ūᵀ K ū, ū = (u^t + u^{t+h})/2.
            for ((m, u0), u1) in self.increment.iter_mut().zip(&s.u).zip(&s.u_new) {
                *m = 0.5 * (u0 + u1);
            }
            let k = self
                .matrix
                .stiffness()
                .expect("DEF_LIM's matrix has a stiffness term");
            mul(k, &self.increment, &mut self.ku);
            let power: f64 = self
                .ku
                .iter()
                .zip(&self.increment)
                .map(|(a, b)| a * b)
                .sum();
            s.dissipated += h * eta * power;
        }
        s.finish(&self.system, &self.reactions);
        // A massless dof has no velocity of its own: its rows of the step only ask the mean
        // of its positions, `K_c·(q^t + q^{t+h})/2 = …`, and the energy `½uᵀMu + ½qᵀKq` does
        // not see its `u`, so `u^{t+h}` alone alternates from step to step and grows without
        // bound while `q` stays put; the next half drift would then evaluate the tangent far
        // from the body. Its velocity is the step's mean rate `(q^{t+h} − q^t)/h =
        // (u^t + u^{t+h})/2` (docs/theory/contact.md §9.1), which changes neither the
        // positions nor the energy. (After `finish`, `u_new` holds `u^t`.)
        for &d in &self.massless {
            s.u[d] = 0.5 * (s.u[d] + s.u_new[d]);
        }
        s.check_state(&self.system)?;
        Ok(StepReport {
            iterations: 1,
            ..StepReport::default()
        })
    }

    /// Solves `A x = b` in place on the free (not prescribed) dofs with the factorization of
    /// the step begun: `n_rhs` right-hand sides of [`free_dofs`](Self::free_dofs)`.len()`
    /// values each, one after the other (a block of columns, for `A⁻¹Hᵀ`).
    pub fn solve_step_matrix(&self, b: &mut [f64], n_rhs: usize) {
        self.matrix.solve_many_in_place(b, n_rhs);
    }

    /// [`Self::solve_step_matrix`] with the given parallelism inside the solve: `Par::Seq`
    /// when the caller spreads blocks of columns over a thread pool itself (fem-scene's
    /// `SolidBody::inverse_inertia_maps`), so that a column's bits depend on its block only.
    pub fn solve_step_matrix_with(&self, b: &mut [f64], n_rhs: usize, par: fem_assembly::Par) {
        self.matrix.solve_many_in_place_with(b, n_rhs, par);
    }

    /// The dofs the step matrix is solved on (every dof but the prescribed ones), in order.
    pub fn free_dofs(&self) -> &[usize] {
        &self.free
    }

    /// `q^{t+h/2}` between the two halves of a split step.
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
}

impl<S: LeapFrogSystem> Stepper for DefLim<S> {
    /// The two halves of a split step without an impulse.
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

    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        self.state.velocity()
    }
}
