//! Nonsmooth (velocity-level) time stepping with unilateral contact: Moreau–Jean and the
//! exact modal Moreau–Jean scheme of the Siconos notes (seed 002; theory in
//! `docs/theory/moreau_jean.md`).
//!
//! | item | what it is |
//! |---|---|
//! | [`MoreauJean`] | the theta scheme (MJ) on any [`crate::SecondOrderSystem`], `W = M + Δt²θ²K + ΔtθC` factored once (linear) or by Newton (nonlinear) |
//! | [`ModalMoreauJean`] | the exact modal scheme (MMJ) on a [`ModalSystem`] (diagonal `K`, `C`, `M`), on the physical state: exact free flow, impacts by a kick conjugate to the secant impact law |
//! | [`ModalCoefficients`] | per-mode flow and impulse coefficients (and the seed's `e_k`, `A_k`, `1/W_k`, `Δt σ*_k`) in forms accurate for every `ω_k Δt` |
//! | [`ModalBasis`] | modes of an assembled system, `K φ = ω² M φ`, `M`-orthonormal; [`ModalDamping`] rates |
//!
//! # Step contract (both steppers)
//! The state after step `i` is `(q^i, v^i)` at `t_i = t0 + i Δt`; `v^i` is the right velocity
//! `v⁺(t_i)` (for MMJ the physical `q̇(t_i⁺)`). A step ([`crate::Stepper::step`]) reads it,
//! forms the contact-free motion (MJ: `v_free`; MMJ: the exact free flow), solves the impact LCP
//! on the contacts whose *predicted gap* is `≤ 0` (MMJ adds a catching-up term for `e = 0` and
//! receding contacts, see `docs/theory/moreau_jean.md`), and writes `(q^{i+1}, v^{i+1})` and
//! the contact impulses `λ^{i+1}` (one per contact point, an impulse over the step, so a force
//! times `Δt`). The stepper owns `t`. Its [`crate::StepReport`] gives the LCP's iterations and
//! residual and the penetration `max(0, −min y)`; [`ContactReport`] has the rest.

pub mod modal;
mod modal_basis;
pub mod moreau_jean;

pub use modal::{ModalCoefficients, ModalEnergy, ModalMoreauJean, ModalSystem, free_response};
pub use modal_basis::{ModalBasis, ModalDamping};
pub use moreau_jean::MoreauJean;

use crate::StepError;

/// What the contact part of one nonsmooth step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactReport {
    /// Contacts with a non-positive predicted gap (the size of the LCP).
    pub n_active: usize,
    /// Pivots or sweeps of the LCP solver.
    pub lcp_iterations: usize,
    /// The LCP residual `‖min(λ, ẏ⁺ + e ẏ⁻)‖∞` on the active set.
    pub lcp_residual: f64,
    /// The smallest gap `min_i y_i` after the step (`+∞` without contacts).
    pub min_gap: f64,
}

/// The contact part shared by both steppers: the set, its solver, the Delassus matrix and the
/// per-contact work vectors.
#[derive(Debug)]
pub(crate) struct ContactWork {
    pub(crate) set: fem_constraints::UnilateralContacts,
    pub(crate) solver: Box<dyn fem_constraints::LcpSolver>,
    pub(crate) delassus: nalgebra::DMatrix<f64>,
    /// `λ^{i}` (impulses of the last step).
    pub(crate) lambda: Vec<f64>,
    /// `y^i = H q^i − h`.
    pub(crate) gap: Vec<f64>,
    /// `ẏ^i = H v^i`.
    pub(crate) rate: Vec<f64>,
    /// `H v_free`.
    pub(crate) free_rate: Vec<f64>,
    /// The predicted gap.
    pub(crate) predicted: Vec<f64>,
}

impl ContactWork {
    pub(crate) fn new(
        set: fem_constraints::UnilateralContacts,
        solver: Box<dyn fem_constraints::LcpSolver>,
        delassus: nalgebra::DMatrix<f64>,
        q: &[f64],
        v: &[f64],
    ) -> Self {
        let m = set.n_contacts();
        let mut work = Self {
            set,
            solver,
            delassus,
            lambda: vec![0.0; m],
            gap: vec![0.0; m],
            rate: vec![0.0; m],
            free_rate: vec![0.0; m],
            predicted: vec![0.0; m],
        };
        work.update_state(q, v);
        work
    }

    /// Recomputes `y = H q − h` and `ẏ = H v`.
    pub(crate) fn update_state(&mut self, q: &[f64], v: &[f64]) {
        self.set.gaps(q, &mut self.gap);
        self.set.rates(v, &mut self.rate);
    }

    /// Solves the impact LCP given `free_rate` and `predicted`; `lambda` gets the impulses.
    pub(crate) fn impact(
        &mut self,
        step: u64,
        t: f64,
        position_weight: f64,
    ) -> Result<fem_constraints::ImpactReport, StepError> {
        fem_constraints::solve_impact(
            &self.delassus,
            &self.free_rate,
            &self.rate,
            &self.predicted,
            self.set.restitution(),
            position_weight,
            self.solver.as_mut(),
            &mut self.lambda,
        )
        .map_err(|source| StepError::Lcp { step, t, source })
    }

    /// The contact state a restart needs: the impulses (the LCP's warm start), the gaps and
    /// the rates.
    pub(crate) fn state(&self) -> Vec<crate::StateField<'_>> {
        vec![
            crate::StateField::other("impulses", &self.lambda),
            crate::StateField::other("gaps", &self.gap),
            crate::StateField::other("rates", &self.rate),
        ]
    }

    /// Restores what [`ContactWork::state`] saved.
    pub(crate) fn restore(&mut self, fields: &[crate::StateField<'_>]) -> Result<(), StepError> {
        let m = self.lambda.len();
        self.lambda
            .copy_from_slice(crate::restored(fields, "impulses", m)?);
        self.gap
            .copy_from_slice(crate::restored(fields, "gaps", m)?);
        self.rate
            .copy_from_slice(crate::restored(fields, "rates", m)?);
        Ok(())
    }

    pub(crate) fn min_gap(&self) -> f64 {
        self.gap.iter().copied().fold(f64::INFINITY, f64::min)
    }
}
