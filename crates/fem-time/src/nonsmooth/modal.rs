//! The exact modal Moreau–Jean scheme (MMJ) for `m_k (q̈_k + 2σ_k q̇_k + ω_k² q_k) = p_k`.
//!
//! # The scheme (seed 002, "Modal-Moreau-Jean")
//! With `K = diag(m_k ω_k²)`, `C = diag(2 m_k σ_k)` and the modal mass `M = diag(m_k)`, the
//! seed's MMJ step is
//!
//! ```text
//! W (v^{i+1} − v^i) = −Δt K q^i − 2Δt Σ* v^i + p^{i+1},
//! W = M + Δt²/2 (I − Θ) K + Δt Σ*,           q^{i+1} = q^i + Δt v^{i+1},
//! ```
//!
//! with `θ_k = 2/(ω_k²Δt²) − A_k/(1 + e_k − A_k)`,
//! `Δt σ*_k = (1 + ω_k²Δt²(1 − θ_k)/2)(1 − e_k)/(1 + e_k)`,
//! `A_k = e^{−σ_kΔt}(e^{s_kΔt} + e^{−s_kΔt})`, `s_k = sqrt(σ_k² − ω_k²)`, `e_k = e^{−2σ_kΔt}`.
//! (Here `Σ*` multiplies the modal mass: `C` is `2 m σ`, so `Σ*` is `m σ*`.)
//!
//! # As implemented
//! Eliminating `θ_k` and `σ*_k` (derivation in `docs/theory/moreau_jean.md`), the step is, per
//! mode,
//!
//! ```text
//! v^{i+1} = e v^i − Δt ω² c q^i + (c/m) p,       c = 1/W (unit mass) = φ(λ₁Δt) φ(λ₂Δt),
//! ```
//!
//! where `λ₁, λ₂ = −σ ± s` are the roots of `λ² + 2σλ + ω² = 0` and `φ(z) = (e^z − 1)/z`,
//! because `1 − e = 2Δtσ*/W` and `ω²Δt²/W = 1 + e − A = (1 − e^{λ₁Δt})(1 − e^{λ₂Δt})`.
//! `c` is evaluated with `expm1` and, for complex roots, as
//! `(expm1(−σΔt)² + 4e^{−σΔt} sin²(ω_dΔt/2)) / (ω²Δt²)`, a sum of non-negative terms, so it
//! is accurate to a few ulps for every `ωΔt`, every damping ratio and `ω = 0`: no Taylor
//! switch is needed. With `p = 0` the positions obey `q^{i+1} = A q^i − e q^{i−1}`, the exact
//! two-step recurrence of the damped oscillator: the scheme is exact.
//!
//! # Initial velocity
//! Exactness needs `v^0 = (q(t0) − q(t0 − Δt))/Δt`, the backward difference of the exact
//! motion, not `q̇(t0)`: [`exact_start_velocity`](ModalCoefficients::exact_start_velocity)
//! computes it for a free mode. With `v^0 = q̇(t0)` the scheme is still second-order accurate.

use fem_constraints::{LcpSolver, UnilateralContacts};
use nalgebra::DMatrix;

use std::borrow::Cow;

use super::{ContactReport, ContactWork};
use crate::StepError;
use crate::error::{check_dt, check_t0, check_vector as check_vec};
use crate::stepper::{Energy, Invariant, NodalStepper, StateField, StepReport, Stepper, restored};

/// `φ(z) = (e^z − 1)/z`, `φ(0) = 1`.
fn phi(z: f64) -> f64 {
    if z == 0.0 { 1.0 } else { z.exp_m1() / z }
}

/// The step coefficients of one mode, in forms accurate for every `ωΔt` and damping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModalCoefficients {
    /// `e = e^{−2σΔt}` (the seed's `e_k`; the velocity's free decay over a step).
    pub decay: f64,
    /// `A = e^{−σΔt}(e^{sΔt} + e^{−sΔt})` (the seed's `A_k`; `2e^{−σΔt}cos(ω_dΔt)` when
    /// under-damped).
    pub trace: f64,
    /// `1/W` for a unit modal mass: `φ(λ₁Δt) φ(λ₂Δt)`.
    pub inv_w: f64,
    /// `Δt σ*` of the seed, `= (1 − e) / (2 · inv_w)`.
    pub dt_sigma_star: f64,
    /// `A − e = 1 − ω²Δt²/W`, the factor of `q^i` in the free position update
    /// `q^{i+1} = (A − e) q^i + e Δt v^i`, evaluated without cancellation.
    pub position_factor: f64,
}

impl ModalCoefficients {
    /// Coefficients of the mode `(ω, σ)` for the step `dt` (`ω, σ ≥ 0`, `dt > 0`).
    pub fn new(omega: f64, sigma: f64, dt: f64) -> Self {
        let one_minus_e = -(-2.0 * sigma * dt).exp_m1();
        let decay = (-2.0 * sigma * dt).exp();
        let (inv_w, trace, position_factor) = if omega > sigma {
            // Complex roots −σ ± iω_d.
            let wd = ((omega - sigma) * (omega + sigma)).sqrt();
            let x = -sigma * dt;
            let y = wd * dt;
            let half = (0.5 * y).sin();
            let num = x.exp_m1().powi(2) + 4.0 * x.exp() * half * half;
            let den = (omega * dt) * (omega * dt);
            let rho = x.exp();
            (num / den, 2.0 * rho * y.cos(), rho * (2.0 * y.cos() - rho))
        } else {
            // Real roots λ₁ = −ω²/(σ + s) (the slow one, without cancellation), λ₂ = −(σ + s).
            let s = ((sigma - omega) * (sigma + omega)).sqrt();
            let l2 = -(sigma + s);
            let l1 = if sigma + s > 0.0 {
                -(omega * omega) / (sigma + s)
            } else {
                0.0
            };
            let (r1, r2) = ((l1 * dt).exp(), (l2 * dt).exp());
            // r1 + r2 − r1 r2 = r1 + r2 (1 − r1): non-negative terms.
            (
                phi(l1 * dt) * phi(l2 * dt),
                r1 + r2,
                r1 - r2 * (l1 * dt).exp_m1(),
            )
        };
        Self {
            decay,
            trace,
            inv_w,
            dt_sigma_star: 0.5 * one_minus_e / inv_w,
            position_factor,
        }
    }

    /// The backward-difference velocity `(q(0) − q(−Δt))/Δt` of the free motion with
    /// `q(0) = q0`, `q̇(0) = v0`: the initial velocity that makes MMJ exact.
    ///
    /// Overflows (returns a non-finite value) when `σΔt` exceeds about 700, where the motion
    /// one step back is not representable; start such a mode from two samples instead.
    pub fn exact_start_velocity(omega: f64, sigma: f64, dt: f64, q0: f64, v0: f64) -> f64 {
        let (q_back, _) = free_response(omega, sigma, q0, v0, -dt);
        (q0 - q_back) / dt
    }
}

/// The exact free motion `(q(t), q̇(t))` of `q̈ + 2σq̇ + ω²q = 0` from `q(0) = q0`, `q̇(0) = v0`:
/// `q = e^{−σt}[q0 C(t) + (v0 + σq0) S(t)]`, `q̇ = e^{−σt}[v0 C(t) − (σv0 + ω²q0) S(t)]`, with
/// `C, S = cos(ω_d t), sin(ω_d t)/ω_d` (under-damped) or `cosh(st), sinh(st)/s` (otherwise),
/// evaluated without overflow or cancellation for `t ≥ 0`.
pub fn free_response(omega: f64, sigma: f64, q0: f64, v0: f64, t: f64) -> (f64, f64) {
    // (e^{−σt} C, e^{−σt} S)
    let (ec, es) = if omega > sigma {
        let wd = ((omega - sigma) * (omega + sigma)).sqrt();
        let env = (-sigma * t).exp();
        let s = if wd * t.abs() < 1e-8 {
            t * (1.0 - (wd * t).powi(2) / 6.0)
        } else {
            (wd * t).sin() / wd
        };
        (env * (wd * t).cos(), env * s)
    } else {
        let s = ((sigma - omega) * (sigma + omega)).sqrt();
        let l2 = -(sigma + s);
        let l1 = if sigma + s > 0.0 {
            -(omega * omega) / (sigma + s)
        } else {
            0.0
        };
        let (e1, e2) = ((l1 * t).exp(), (l2 * t).exp());
        let es = if (2.0 * s * t).abs() > 1.0 {
            (e1 - e2) / (2.0 * s)
        } else {
            e2 * t * phi(2.0 * s * t)
        };
        (0.5 * (e1 + e2), es)
    };
    (
        q0 * ec + (v0 + sigma * q0) * es,
        v0 * ec - (sigma * v0 + omega * omega * q0) * es,
    )
}

/// A system in modal coordinates: `m_k (q̈_k + 2σ_k q̇_k + ω_k² q_k) = p_k`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModalSystem {
    /// Modal masses `m_k > 0` (1 for mass-normalised modes).
    pub mass: Vec<f64>,
    /// Angular frequencies `ω_k ≥ 0` (rad/s); 0 for a rigid mode.
    pub omega: Vec<f64>,
    /// Damping rates `σ_k ≥ 0` (1/s): the free motion decays as `e^{−σ_k t}`.
    pub sigma: Vec<f64>,
}

impl ModalSystem {
    /// Checks lengths and ranges.
    pub fn check(&self) -> Result<(), StepError> {
        let n = self.omega.len();
        check_vec("modal masses", &self.mass, n)?;
        check_vec("modal damping rates", &self.sigma, n)?;
        for (name, v, ok) in [
            (
                "modal mass",
                &self.mass,
                (|x: f64| x > 0.0) as fn(f64) -> bool,
            ),
            ("omega", &self.omega, |x| x >= 0.0 && x.is_finite()),
            ("sigma", &self.sigma, |x| x >= 0.0 && x.is_finite()),
        ] {
            if let Some(&bad) = v.iter().find(|&&x| !ok(x)) {
                return Err(StepError::InvalidParameter {
                    name,
                    value: bad,
                    expected: "a finite value, >= 0 (masses > 0)",
                });
            }
        }
        Ok(())
    }

    /// Number of modes.
    pub fn n_modes(&self) -> usize {
        self.omega.len()
    }
}

/// The modal scheme's energies.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModalEnergy {
    /// The scheme's invariant on `[t_{i−1}, t_i]`, `½ Σ m_k (v_k²/c_k + ω_k² q_k^{i−1} q_k^i)`,
    /// exactly conserved by free undamped steps (`c_k = inv_w`).
    pub discrete: f64,
    /// `½ Σ m_k (v_k² + ω_k² q_k²)` at `t_i` with the scheme's velocity.
    pub plain: f64,
}

/// The exact modal Moreau–Jean scheme with optional unilateral contacts.
#[derive(Debug)]
pub struct ModalMoreauJean {
    system: ModalSystem,
    coefficients: Vec<ModalCoefficients>,
    /// `Δt ω² c` per mode.
    a_q: Vec<f64>,
    /// `c/m` per mode.
    b: Vec<f64>,
    /// `e` per mode (the coefficients' `decay`, as a flat array for the update loop).
    decay: Vec<f64>,
    /// `e Δt` per mode.
    decay_dt: Vec<f64>,
    /// `A − e` per mode (the coefficients' `position_factor`).
    position_factor: Vec<f64>,
    dt: f64,
    t0: f64,
    step: u64,
    q: Vec<f64>,
    v: Vec<f64>,
    v_free: Vec<f64>,
    impulse: Vec<f64>,
    contacts: Option<ContactWork>,
    last_contact: ContactReport,
}

impl ModalMoreauJean {
    /// The scheme on `system` with step `dt` from `q(t0) = q0` and the *backward-difference*
    /// velocity `v0 = (q(t0) − q(t0 − Δt))/Δt` (see the module doc), without contacts.
    pub fn new(
        system: ModalSystem,
        dt: f64,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        system.check()?;
        check_dt(dt)?;
        check_t0(t0)?;
        let n = system.n_modes();
        check_vec("initial modal displacement", q0, n)?;
        check_vec("initial modal velocity", v0, n)?;
        let coefficients: Vec<ModalCoefficients> = (0..n)
            .map(|k| ModalCoefficients::new(system.omega[k], system.sigma[k], dt))
            .collect();
        let a_q = (0..n)
            .map(|k| dt * system.omega[k] * system.omega[k] * coefficients[k].inv_w)
            .collect();
        let b = (0..n)
            .map(|k| coefficients[k].inv_w / system.mass[k])
            .collect();
        Ok(Self {
            decay: coefficients.iter().map(|c| c.decay).collect(),
            decay_dt: coefficients.iter().map(|c| c.decay * dt).collect(),
            position_factor: coefficients.iter().map(|c| c.position_factor).collect(),
            coefficients,
            a_q,
            b,
            dt,
            t0,
            step: 0,
            q: q0.to_vec(),
            v: v0.to_vec(),
            v_free: vec![0.0; n],
            impulse: vec![0.0; n],
            contacts: None,
            last_contact: ContactReport::default(),
            system,
        })
    }

    /// Adds unilateral contacts `y = H q − h ≥ 0` (H on the modal coordinates) solved by
    /// `solver`; forms the Delassus matrix `H W⁻¹ Hᵀ` once.
    pub fn with_contacts(
        mut self,
        contacts: UnilateralContacts,
        solver: Box<dyn LcpSolver>,
    ) -> Result<Self, StepError> {
        let n = self.system.n_modes();
        if contacts.n_dofs() != n {
            return Err(fem_constraints::ContactError::Columns {
                found: contacts.n_dofs(),
                expected: n,
            }
            .into());
        }
        let mut w_inv_ht = contacts.transpose_dense();
        for col in w_inv_ht.chunks_exact_mut(n.max(1)) {
            col.iter_mut().zip(&self.b).for_each(|(x, b)| *x *= b);
        }
        let delassus: DMatrix<f64> = if n == 0 {
            DMatrix::zeros(contacts.n_contacts(), contacts.n_contacts())
        } else {
            contacts.delassus(&w_inv_ht)
        };
        self.contacts = Some(ContactWork::new(
            contacts, solver, delassus, &self.q, &self.v,
        ));
        Ok(self)
    }

    /// Advances from `t_i` to `t_{i+1}` (see the step contract in [`super`]).
    ///
    /// # Cost
    /// Without contacts: one fused pass over the modes (free update and finiteness check).
    /// With contacts, `H` is read **once** per step: [`gaps_and_rates`] forms the predicted gap
    /// `ỹ = H q_free − h` and `H v_free` together. The end-of-step gap and rate are not
    /// recomputed from the new state but follow from the impulses through the Delassus matrix
    /// `D = H W⁻¹ Hᵀ`, because `v^{i+1} = v_free + W⁻¹ Hᵀ λ` and `q^{i+1} = q_free + Δt W⁻¹ Hᵀ λ`:
    ///
    /// ```text
    /// ẏ^{i+1} = H v_free + D λ,      y^{i+1} = ỹ + Δt D λ,
    /// ```
    ///
    /// `O(m k)` for `k` non-zero impulses instead of two more `O(m n)` products (just copies
    /// when no contact is active).
    ///
    /// # Round-off
    /// The derived `y^{i+1}, ẏ^{i+1}` differ from `H q^{i+1} − h`, `H v^{i+1}` by round-off of
    /// the size of the terms summed, `ε(|H||v_free| + |D||λ|)` (`D` is formed once and
    /// symmetrised). This error does **not** accumulate from step to step: every step forms `ỹ`
    /// and `H v_free` afresh from the state `(q^i, v^i)`, and the derived values are used only
    /// once, `ẏ^{i+1}` as the pre-impact rate `ẏ⁻` of the next step's impact law and `y^{i+1}`
    /// as the reported gap ([`gaps`](Self::gaps), `min_gap`); no derived value is ever derived
    /// from another, so no periodic exact recomputation is needed. The unit test
    /// `derived_gaps_match_exact_products` checks this over thousands of steps with many
    /// contacts in and out of contact.
    ///
    /// [`gaps_and_rates`]: fem_constraints::UnilateralContacts::gaps_and_rates
    fn advance(&mut self) -> Result<ContactReport, StepError> {
        let dt = self.dt;
        let n = self.q.len();
        // Free flight, in place: q ← q_free = (A − e) q^i + e Δt v^i (evaluated so that a mode
        // that decays by many orders in one step keeps its relative accuracy) and
        // v ← v_free = e v^i − Δt ω² c q^i; `v_free` keeps a copy when contacts need it.
        let (q, v) = (&mut self.q[..n], &mut self.v[..n]);
        let (decay, decay_dt) = (&self.decay[..n], &self.decay_dt[..n]);
        let (position_factor, a_q) = (&self.position_factor[..n], &self.a_q[..n]);
        let mut finite = true;
        if self.contacts.is_some() {
            let v_free = &mut self.v_free[..n];
            for k in 0..n {
                let (qk, vk) = (q[k], v[k]);
                let vf = decay[k] * vk - a_q[k] * qk;
                q[k] = position_factor[k] * qk + decay_dt[k] * vk;
                v[k] = vf;
                v_free[k] = vf;
                finite &= vf.is_finite();
            }
        } else {
            for k in 0..n {
                let (qk, vk) = (q[k], v[k]);
                let vf = decay[k] * vk - a_q[k] * qk;
                q[k] = position_factor[k] * qk + decay_dt[k] * vk;
                v[k] = vf;
                finite &= vf.is_finite();
            }
        }
        let mut report = ContactReport {
            min_gap: f64::INFINITY,
            ..ContactReport::default()
        };
        let t = self.time();
        if let Some(c) = &mut self.contacts {
            // self.q holds q_free: the predicted gap is its gap.
            c.set
                .gaps_and_rates(&self.q, &self.v_free, &mut c.predicted, &mut c.free_rate);
            let impact = c.impact(self.step, t, dt)?;
            if impact.n_active > 0 {
                self.impulse.fill(0.0);
                c.set.add_impulse(&c.lambda, &mut self.impulse);
                let (q, v) = (&mut self.q[..n], &mut self.v[..n]);
                let (b, impulse) = (&self.b[..n], &self.impulse[..n]);
                finite = true;
                for k in 0..n {
                    let dv = b[k] * impulse[k];
                    v[k] += dv;
                    q[k] += dt * dv;
                    finite &= v[k].is_finite();
                }
                // ẏ = H v_free + D λ and y = ỹ + Δt D λ (see the doc above); `rate` first
                // holds D λ.
                c.rate.fill(0.0);
                for (j, &l) in c.lambda.iter().enumerate() {
                    if l != 0.0 {
                        c.rate
                            .iter_mut()
                            .zip(c.delassus.column(j).iter())
                            .for_each(|(r, d)| *r += d * l);
                    }
                }
                for ((y, r), (p, f)) in c
                    .gap
                    .iter_mut()
                    .zip(c.rate.iter_mut())
                    .zip(c.predicted.iter().zip(&c.free_rate))
                {
                    *y = p + dt * *r;
                    *r += f;
                }
            } else {
                c.gap.copy_from_slice(&c.predicted);
                c.rate.copy_from_slice(&c.free_rate);
            }
            report.n_active = impact.n_active;
            report.lcp_iterations = impact.lcp.iterations;
            report.lcp_residual = impact.lcp.residual;
            report.min_gap = c.min_gap();
        }
        self.step += 1;
        if !finite {
            return Err(StepError::NonFinite {
                step: self.step,
                t: self.time(),
            });
        }
        self.last_contact = report;
        Ok(report)
    }

    /// What the contact solve of the last step did.
    pub fn last_contact(&self) -> ContactReport {
        self.last_contact
    }

    /// The modal system.
    pub fn system(&self) -> &ModalSystem {
        &self.system
    }

    /// The per-mode coefficients.
    pub fn coefficients(&self) -> &[ModalCoefficients] {
        &self.coefficients
    }

    /// Contact impulses of the last step (empty without contacts).
    pub fn impulses(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.lambda)
    }

    /// Gaps `y^i = H q^i − h` (empty without contacts).
    pub fn gaps(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.gap)
    }

    /// The scheme's discrete energy and the plain energy at `t_i`.
    pub fn modal_energy(&self) -> ModalEnergy {
        let mut e = ModalEnergy::default();
        for k in 0..self.q.len() {
            let (m, w, q, v) = (
                self.system.mass[k],
                self.system.omega[k],
                self.q[k],
                self.v[k],
            );
            let q_prev = q - self.dt * v;
            e.discrete += 0.5 * m * (v * v / self.coefficients[k].inv_w + w * w * q * q_prev);
            e.plain += 0.5 * m * (v * v + w * w * q * q);
        }
        e
    }
}

impl Stepper for ModalMoreauJean {
    fn step(&mut self) -> Result<StepReport, StepError> {
        let contact = self.advance()?;
        Ok(StepReport {
            iterations: contact.lcp_iterations,
            residual: contact.lcp_residual,
            constraint_violation: if contact.min_gap.is_finite() {
                (-contact.min_gap).max(0.0)
            } else {
                0.0
            },
        })
    }
    fn time(&self) -> f64 {
        self.t0 + self.dt * self.step as f64
    }
    fn step_index(&self) -> u64 {
        self.step
    }
    fn dt(&self) -> f64 {
        self.dt
    }
    /// The discrete energy ([`ModalEnergy::discrete`]) split into its kinetic part
    /// `½ Σ m v²/c` and its potential part `½ Σ m ω² q^i q^{i−1}`.
    fn energy(&self) -> Option<Energy> {
        let mut kinetic = 0.0;
        let mut potential = 0.0;
        for k in 0..self.q.len() {
            let (m, w, q, v) = (
                self.system.mass[k],
                self.system.omega[k],
                self.q[k],
                self.v[k],
            );
            let q_prev = q - self.dt * v;
            kinetic += 0.5 * m * v * v / self.coefficients[k].inv_w;
            potential += 0.5 * m * w * w * q * q_prev;
        }
        Some(Energy::new(kinetic, potential))
    }
    fn invariant(&self) -> Invariant {
        let undamped = self.system.sigma.iter().all(|&s| s == 0.0);
        let elastic = self
            .contacts
            .as_ref()
            .is_none_or(|c| c.set.restitution() == 1.0);
        if undamped && elastic {
            Invariant::RoundOff
        } else {
            Invariant::None
        }
    }
    fn state(&self) -> Vec<StateField<'_>> {
        let mut fields = vec![
            StateField::dofs("modal_position", &self.q),
            StateField::dofs("modal_velocity", &self.v),
        ];
        if let Some(c) = &self.contacts {
            fields.extend(c.state());
        }
        fields
    }
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.q.len();
        self.q
            .copy_from_slice(restored(fields, "modal_position", n)?);
        self.v
            .copy_from_slice(restored(fields, "modal_velocity", n)?);
        if let Some(c) = &mut self.contacts {
            c.restore(fields)?;
        }
        self.step = step_index;
        Ok(())
    }
}

impl NodalStepper for ModalMoreauJean {
    /// Modal displacements `q^i`.
    fn position(&self) -> &[f64] {
        &self.q
    }
    /// Modal velocities `v^i = (q^i − q^{i−1})/Δt`.
    fn velocity(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nonsmooth::ModalDamping;
    use crate::{NodalStepper, Stepper};
    use fem_constraints::Lemke;

    /// Sine modes of a stiff string (unit modal masses): `ω_j`, `φ_j(x)` and the modal
    /// coordinates of a triangular pluck (the model crate's `StringModes`, inlined).
    struct SineModes {
        length: f64,
        density: f64,
        omega: Vec<f64>,
    }

    impl SineModes {
        fn new(length: f64, tension: f64, density: f64, b: f64, n: usize) -> Self {
            let c = (tension / density).sqrt();
            let omega = (1..=n)
                .map(|j| {
                    let j = j as f64;
                    2.0 * std::f64::consts::PI * j * c / (2.0 * length) * (1.0 + b * j * j).sqrt()
                })
                .collect();
            Self {
                length,
                density,
                omega,
            }
        }
        fn n_modes(&self) -> usize {
            self.omega.len()
        }
        fn point_rows(&self, points: &[f64]) -> Vec<f64> {
            let norm = (2.0 / (self.density * self.length)).sqrt();
            points
                .iter()
                .flat_map(|&x| {
                    (1..=self.n_modes()).map(move |j| {
                        norm * (j as f64 * std::f64::consts::PI * x / self.length).sin()
                    })
                })
                .collect()
        }
        fn modal_system(&self) -> ModalSystem {
            ModalSystem {
                mass: vec![1.0; self.n_modes()],
                sigma: ModalDamping::None.rates(&self.omega).unwrap(),
                omega: self.omega.clone(),
            }
        }
        fn triangular_pluck(&self, x0: f64, a: f64) -> Vec<f64> {
            let l = self.length;
            let scale = (self.density * l / 2.0).sqrt();
            (1..=self.n_modes())
                .map(|j| {
                    let jp = j as f64 * std::f64::consts::PI;
                    scale * 2.0 * a * l * l * (jp * x0 / l).sin() / (jp * jp * x0 * (l - x0))
                })
                .collect()
        }
    }

    /// The gap and rate that `step` derives through the Delassus matrix agree with `H q − h`
    /// and `H v` formed from the state, at every step of a long run with many impacts, to
    /// round-off that does not grow with the number of steps.
    #[test]
    fn derived_gaps_match_exact_products() {
        let modes = SineModes::new(1.002, 180.5, 1.17e-3, 1.78e-5, 200);
        let n = modes.n_modes();
        let points: Vec<f64> = (1..=40).map(|i| 1.002 * i as f64 / 41.0).collect();
        let rows = modes.point_rows(&points);
        let h_max = rows.iter().fold(0.0f64, |a, h| a.max(h.abs()));
        for restitution in [0.0, 1.0] {
            let contacts =
                UnilateralContacts::from_dense(n, &rows, vec![-0.1e-3; 40], restitution).unwrap();
            let mut s = ModalMoreauJean::new(
                modes.modal_system(),
                1.0 / 20_000.0,
                0.0,
                &modes.triangular_pluck(0.3, 0.4e-3),
                &vec![0.0; n],
            )
            .unwrap()
            .with_contacts(contacts.clone(), Box::new(Lemke::default()))
            .unwrap();
            let (mut gap, mut rate) = (vec![0.0; 40], vec![0.0; 40]);
            let (mut active_steps, mut worst_early, mut worst_late) = (0, 0.0f64, 0.0f64);
            let steps = 4000;
            for i in 0..steps {
                s.step().unwrap();
                active_steps += usize::from(s.last_contact().n_active > 0);
                contacts.gaps(s.position(), &mut gap);
                contacts.rates(&s.velocity(), &mut rate);
                // Scale of the products, |H| ‖·‖₁ (the bound below is 45 ε of it).
                let l1 = |x: &[f64]| x.iter().map(|x| x.abs()).sum::<f64>();
                let (sq, sv) = (h_max * l1(s.position()), h_max * l1(&s.velocity()));
                let c = s.contacts.as_ref().unwrap();
                let err = c
                    .gap
                    .iter()
                    .zip(&gap)
                    .map(|(a, b)| (a - b).abs() / sq)
                    .chain(c.rate.iter().zip(&rate).map(|(a, b)| (a - b).abs() / sv))
                    .fold(0.0f64, f64::max);
                if i < steps / 2 {
                    worst_early = worst_early.max(err);
                } else {
                    worst_late = worst_late.max(err);
                }
            }
            assert!(active_steps > 100, "e = {restitution}: {active_steps}");
            let worst = worst_early.max(worst_late);
            assert!(worst < 1e-14, "e = {restitution}: {worst:e}");
            println!(
                "e = {restitution}: {active_steps} steps in contact, derived vs exact \
                 {worst_early:.1e} (first half), {worst_late:.1e} (second half) of |H| ‖·‖₁"
            );
        }
    }
}
