//! The exact modal Moreau–Jean scheme (MMJ) for `m_k (q̈_k + 2σ_k q̇_k + ω_k² q_k) = p_k`, with
//! unilateral contact.
//!
//! # The seed's scheme (seed 002, "Modal-Moreau-Jean")
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
//! Its free positions obey `q^{i+1} = A q^i − e q^{i−1}`, the exact two-step recurrence, so it
//! carries two *samples* of the motion: `v^i = (q^i − q^{i−1})/Δt` is a backward difference,
//! not `q̇`. [`ModalCoefficients`] keeps the seed's `e_k`, `A_k`, `1/W_k`, `Δt σ*_k` in forms
//! without cancellation (derivation in `docs/theory/moreau_jean.md`).
//!
//! # The stepper: the same scheme on the physical state
//! [`ModalMoreauJean`] carries the physical state `(q^i, u^i = q̇(t_i⁺))` and advances it by the
//! exact flow of each mode, `(q, u) ← Φ(Δt)(q, u)`, `Φ = [[C, S], [Ċ, Ṡ]]` (`C`, `S`: the
//! responses to a unit displacement and a unit velocity): free modes are exact at every `ωΔt`
//! from the physical data `(q(t0), q̇(t0))`, with no start-up velocity to choose, and the free
//! positions are the seed's samples (same recurrence). The contact impulse `P = Hᵀλ` is a kick
//! at `t_i` of strength `S/Δt` (per mode, `= sin(ωΔt)/(ωΔt)` without losses):
//!
//! ```text
//! q^{i+1} = q_free + (S²/(mΔt)) P,       u^{i+1} = u_free + (S Ṡ/(mΔt)) P,
//! ```
//!
//! and the impact law reads the *secant* rate of the gap `y = H q − h` over the step,
//! `ẏ^{i+1} = (y^{i+1} − y^i)/Δt = (ỹ − y^i)/Δt + D λ`, `D = H diag(S²/(mΔt²)) Hᵀ`, with
//! `ẏ^i` the secant of the step before (the backward difference of the exact motion at the
//! start). These two choices are conjugate: the physical energy `½ Σ m (u² + ω² q²)` of an
//! undamped system changes over a contact step by exactly `½ λᵀ(ẏ^{i+1} + ẏ^i)`, so Newton's
//! law `0 ≤ ẏ^{i+1} + e ẏ^i ⊥ λ` conserves it for `e = 1` and dissipates it for `e < 1`. (The
//! seed's `1/W_k = sinc²(ω_kΔt/2)` in place of `S²/Δt² = sinc²(ω_kΔt)` is the member of the same
//! family whose invariant is `Σ cos²(ω_kΔt/2) E_k`, which vanishes at `ω_kΔt = π, 3π, …`.)
//! With `e = 0` the law is Moreau's catching-up `0 ≤ y^{i+1} ⊥ λ` (`ẏ^{i+1} + y^i/Δt`): a
//! contact that crosses the obstacle during the step ends on it, not where the step began. A
//! receding contact (`ẏ^i > 0`) predicted to penetrate gets the catching-up term
//! `(1 − e) y^i/Δt` for every `e`, so that the energy falls (by `½(1 − e) λ y^{i−1}/Δt`)
//! instead of rising by `½(1 − e) λ ẏ^i`, which made the seed's form blow up at
//! `ω_maxΔt > π`. Every law keeps `y^{i+1} ≥ 0`; the order after impacts is one.

use fem_constraints::{LcpSolver, UnilateralContacts};
use nalgebra::DMatrix;

use std::borrow::Cow;

use super::{ContactReport, ContactWork};
use crate::Clock;
use crate::StepError;
use crate::error::check_vector as check_vec;
use crate::stepper::{Energy, Invariant, NodalStepper, StateField, StepReport, Stepper, restored};

/// The name of the exact modal Moreau–Jean scheme in input files (`time.scheme: modal_moreau_jean`).
pub const NAME: &str = "modal_moreau_jean";

/// `φ(z) = (e^z − 1)/z`, `φ(0) = 1`.
fn phi(z: f64) -> f64 {
    if z == 0.0 { 1.0 } else { z.exp_m1() / z }
}

/// The unit responses `(C, S, Ċ, Ṡ)` at `t ≥ 0` of `q̈ + 2σq̇ + ω²q = 0`: `C` from `q(0) = 1,
/// q̇(0) = 0`, `S` from `q(0) = 0, q̇(0) = 1`, so that `q(t) = C q0 + S v0`,
/// `q̇(t) = Ċ q0 + Ṡ v0`. Without overflow or cancellation for every `ωt`, damping ratio and
/// `ω = 0`: under-damped `S = e^{−σt} sin(ω_d t)/ω_d`, `C = e^{−σt}(cos ω_d t + σ sin(ω_d t)/ω_d)`;
/// real roots `λ₁ = −ω²/(σ + s)`, `λ₂ = −(σ + s)`, `S = e^{λ₂t} t φ(2st)` (or
/// `(e^{λ₁t} − e^{λ₂t})/(2s)`), `C = e^{λ₁t} − λ₁S`, `Ṡ = e^{λ₂t} + λ₁S`; always `Ċ = −ω²S`.
fn unit_responses(omega: f64, sigma: f64, t: f64) -> (f64, f64, f64, f64) {
    if omega > sigma {
        let wd = ((omega - sigma) * (omega + sigma)).sqrt();
        let env = (-sigma * t).exp();
        let y = wd * t;
        // sin(ω_d t)/ω_d
        let sn = if y.abs() < 1e-8 {
            t * (1.0 - y * y / 6.0)
        } else {
            y.sin() / wd
        };
        let cs = y.cos();
        let s = env * sn;
        (
            env * (cs + sigma * sn),
            s,
            -omega * omega * s,
            env * (cs - sigma * sn),
        )
    } else {
        let r = ((sigma - omega) * (sigma + omega)).sqrt();
        let l2 = -(sigma + r);
        let l1 = if sigma + r > 0.0 {
            -(omega * omega) / (sigma + r)
        } else {
            0.0
        };
        let (e1, e2) = ((l1 * t).exp(), (l2 * t).exp());
        let s = if 2.0 * r * t > 1.0 {
            (e1 - e2) / (2.0 * r)
        } else {
            e2 * t * phi(2.0 * r * t)
        };
        (e1 - l1 * s, s, -omega * omega * s, e2 + l1 * s)
    }
}

/// The step coefficients of one mode: the seed's MMJ coefficients and the exact flow with the
/// contact-impulse weights the stepper uses, in forms accurate for every `ωΔt` and damping.
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
    /// `A − e = 1 − ω²Δt²/W`, the factor of `q^i` in the seed's free position update
    /// `q^{i+1} = (A − e) q^i + e Δt v^i`, evaluated without cancellation.
    pub position_factor: f64,
    /// Exact flow `q(Δt) = C q(0) + S q̇(0)`: `C`, the response to a unit displacement.
    pub flow_c: f64,
    /// `S`, the displacement at `Δt` from a unit initial velocity (the impulse response).
    pub flow_s: f64,
    /// `Ċ = −ω² S`: `q̇(Δt) = Ċ q(0) + Ṡ q̇(0)`.
    pub flow_c_dot: f64,
    /// `Ṡ`, the velocity at `Δt` from a unit initial velocity.
    pub flow_s_dot: f64,
    /// Position change at `t_{i+1}` per unit modal impulse, unit mass: `S²/Δt` (`≥ 0`).
    pub impulse_position: f64,
    /// Velocity change at `t_{i+1}` per unit modal impulse, unit mass: `S Ṡ/Δt`.
    pub impulse_velocity: f64,
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
        let (c, s, c_dot, s_dot) = unit_responses(omega, sigma, dt);
        Self {
            decay,
            trace,
            inv_w,
            dt_sigma_star: 0.5 * one_minus_e / inv_w,
            position_factor,
            flow_c: c,
            flow_s: s,
            flow_c_dot: c_dot,
            flow_s_dot: s_dot,
            impulse_position: s * s / dt,
            impulse_velocity: s * s_dot / dt,
        }
    }

    /// The backward-difference velocity `(q(0) − q(−Δt))/Δt` of the free motion with
    /// `q(0) = q0`, `q̇(0) = v0`: the start that makes the seed's sample form exact, and the
    /// secant rate [`ModalMoreauJean`] gives the impact law on its first step. The stepper
    /// takes the physical `q̇(0)` and forms this itself: do not pass it to
    /// [`ModalMoreauJean::from_physical_state`].
    ///
    /// Overflows (returns a non-finite value) when `σΔt` exceeds about 700, where the motion
    /// one step back is not representable.
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

/// The modal scheme's energies at `t_i`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModalEnergy {
    /// The scheme's invariant: the physical energy `½ Σ m_k (u_k² + ω_k² q_k²)`, conserved
    /// exactly (to round-off) by free undamped steps and by undamped steps with elastic
    /// impacts (`e = 1`); non-increasing through impacts with `e < 1`.
    pub discrete: f64,
    /// `½ Σ m_k (u_k² + ω_k² q_k²)` with the velocity `u = q̇(t_i⁺)` the stepper carries: the
    /// same number as `discrete` (kept as a separate field for the output's `energy_plain`
    /// column, which the seed's sample form computed with a backward difference).
    pub plain: f64,
}

/// The history columns of a modal model with contacts ([`ModalMoreauJean::contact_history`]).
pub const CONTACT_COLUMNS: [&str; 5] = [
    "n_active",
    "lcp_iterations",
    "lcp_residual",
    "min_gap",
    "contact_force_total",
];

/// The exact modal Moreau–Jean scheme with optional unilateral contacts, on the physical state
/// (see the module doc).
#[derive(Debug)]
pub struct ModalMoreauJean {
    system: ModalSystem,
    coefficients: Vec<ModalCoefficients>,
    /// `C` per mode (the free flow `q ← C q + S u`, `u ← Ċ q + Ṡ u`, as flat arrays).
    flow_c: Vec<f64>,
    /// `S` per mode.
    flow_s: Vec<f64>,
    /// `Ċ` per mode.
    flow_c_dot: Vec<f64>,
    /// `Ṡ` per mode.
    flow_s_dot: Vec<f64>,
    /// `S²/(mΔt)` per mode: position change per unit modal impulse.
    impulse_position: Vec<f64>,
    /// `S Ṡ/(mΔt)` per mode: velocity change per unit modal impulse.
    impulse_velocity: Vec<f64>,
    clock: Clock,
    q: Vec<f64>,
    u: Vec<f64>,
    impulse: Vec<f64>,
    contacts: Option<ContactWork>,
    last_contact: ContactReport,
}

impl ModalMoreauJean {
    /// The scheme on `system` with step `dt` from the physical initial state `q(t0) = q0`,
    /// `q̇(t0) = v0`, without contacts. Free modes are then exact at every step, for every
    /// `ωΔt`.
    ///
    /// (Named so since `new`'s `v0` once was the scheme's backward-difference velocity
    /// `(q(t0) − q(t0 − Δt))/Δt` and became the physical velocity under the same signature:
    /// CHANGELOG.md.)
    pub fn from_physical_state(
        system: ModalSystem,
        dt: f64,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        system.check()?;
        let clock = Clock::new(t0, dt)?;
        let n = system.n_modes();
        check_vec("initial modal displacement", q0, n)?;
        check_vec("initial modal velocity", v0, n)?;
        let coefficients: Vec<ModalCoefficients> = (0..n)
            .map(|k| ModalCoefficients::new(system.omega[k], system.sigma[k], dt))
            .collect();
        let per_mode = |f: &dyn Fn(usize) -> f64| (0..n).map(f).collect::<Vec<f64>>();
        Ok(Self {
            flow_c: per_mode(&|k| coefficients[k].flow_c),
            flow_s: per_mode(&|k| coefficients[k].flow_s),
            flow_c_dot: per_mode(&|k| coefficients[k].flow_c_dot),
            flow_s_dot: per_mode(&|k| coefficients[k].flow_s_dot),
            impulse_position: per_mode(&|k| coefficients[k].impulse_position / system.mass[k]),
            impulse_velocity: per_mode(&|k| coefficients[k].impulse_velocity / system.mass[k]),
            coefficients,
            clock,
            q: q0.to_vec(),
            u: v0.to_vec(),
            impulse: vec![0.0; n],
            contacts: None,
            last_contact: ContactReport::default(),
            system,
        })
    }

    /// Adds unilateral contacts `y = H q − h ≥ 0` (H on the modal coordinates) solved by
    /// `solver`; forms the Delassus matrix `D = H diag(S²/(mΔt²)) Hᵀ` once. The secant rate the
    /// first impact law reads is that of the exact free motion through the current state over
    /// the step before it (`H` times the backward difference
    /// [`ModalCoefficients::exact_start_velocity`] computes; a mode whose motion one step back
    /// overflows, `σΔt ≳ 350`, contributes its velocity instead).
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
        let dt = self.clock.dt();
        let mut w_inv_ht = contacts.transpose_dense();
        for col in w_inv_ht.chunks_exact_mut(n.max(1)) {
            col.iter_mut()
                .zip(&self.impulse_position)
                .for_each(|(x, a)| *x *= a / dt);
        }
        let delassus: DMatrix<f64> = if n == 0 {
            DMatrix::zeros(contacts.n_contacts(), contacts.n_contacts())
        } else {
            contacts.delassus(&w_inv_ht)
        };
        // The motion one step back, Φ(−Δt)(q, u): q(−Δt) = (Ṡ q − S u)/det Φ, det Φ = e^{−2σΔt}.
        let secant: Vec<f64> = (0..n)
            .map(|k| {
                let c = &self.coefficients[k];
                let (q, u) = (self.q[k], self.u[k]);
                let q_back = (c.flow_s_dot * q - c.flow_s * u) / c.decay;
                let v = (q - q_back) / dt;
                if v.is_finite() { v } else { u }
            })
            .collect();
        self.contacts = Some(ContactWork::new(
            contacts, solver, delassus, &self.q, &secant,
        ));
        Ok(self)
    }

    /// Advances from `t_i` to `t_{i+1}` (see the step contract in [`super`]).
    ///
    /// # The step
    /// 1. Free flight, exact: `q̃ = C q^i + S u^i`, `ũ = Ċ q^i + Ṡ u^i` (one fused pass).
    /// 2. With contacts: the predicted gap `ỹ = H q̃ − h` (one product with `H`); the secant
    ///    rate of the free step is `(ỹ − y^i)/Δt`, so no product with a velocity is needed.
    /// 3. The impact LCP on the contacts with `ỹ ≤ 0` (grown by re-prediction,
    ///    [`fem_constraints::solve_impact`]): for `e > 0` Newton's law on secant rates,
    ///    `0 ≤ (ỹ − y^i)/Δt + Dλ + e ẏ^i ⊥ λ`; for `e = 0` the catching-up law
    ///    `0 ≤ ỹ/Δt + Dλ ⊥ λ`, i.e. `y^{i+1} ≥ 0`.
    /// 4. `q^{i+1} = q̃ + (S²/(mΔt)) Hᵀλ`, `u^{i+1} = ũ + (SṠ/(mΔt)) Hᵀλ`.
    ///
    /// The end-of-step gap and secant rate are not recomputed from the new state but follow
    /// from the impulses, `y^{i+1} = ỹ + Δt D λ` (`O(m k)` for `k` non-zero impulses, a copy
    /// when none is active), `ẏ^{i+1} = (y^{i+1} − y^i)/Δt`.
    ///
    /// # Round-off
    /// The derived `y^{i+1}` differs from `H q^{i+1} − h` by round-off of the size of the terms
    /// summed, `ε(|H||q̃| + Δt|D||λ|)` (`D` is formed once and symmetrised). This does **not**
    /// accumulate: every step forms `ỹ` afresh from `q̃`, and a derived gap is used for one step
    /// only (as `y^i` in the next secant and law, and as the reported gap); no derived value is
    /// derived from again. The unit test `derived_gaps_match_exact_products` checks this over
    /// thousands of steps with many contacts in and out of contact.
    fn advance(&mut self) -> Result<ContactReport, StepError> {
        let dt = self.clock.dt();
        let n = self.q.len();
        // Free flight, in place.
        let (q, u) = (&mut self.q[..n], &mut self.u[..n]);
        let (fc, fs) = (&self.flow_c[..n], &self.flow_s[..n]);
        let (fcd, fsd) = (&self.flow_c_dot[..n], &self.flow_s_dot[..n]);
        // Testing `u^{i+1}` alone suffices: it multiplies `q^i` (`Ċ q^i`, and `0 · ∞` is NaN), so
        // a non-finite position shows in the velocity of the same step (a position that first
        // overflows in this step shows in the next). One test per mode keeps the loop as fast
        // as the seed's form (testing both costs 8 %, `is_finite` on both 25 %).
        let mut finite = true;
        for k in 0..n {
            let (qk, uk) = (q[k], u[k]);
            let (qn, un) = (fc[k] * qk + fs[k] * uk, fcd[k] * qk + fsd[k] * uk);
            q[k] = qn;
            u[k] = un;
            finite &= un.is_finite();
        }
        let mut report = ContactReport {
            min_gap: f64::INFINITY,
            ..ContactReport::default()
        };
        let t = self.time();
        if let Some(c) = &mut self.contacts {
            // self.q holds q̃: the predicted gap is its gap.
            c.set.gaps(&self.q, &mut c.predicted);
            let e = c.set.restitution();
            // The law's free term (`solve_impact` adds e ẏ^i): the free secant rate, plus the
            // catching-up term (1 − e) y^i/Δt when e = 0 or the contact is receding.
            for (((f, p), y), r) in c
                .free_rate
                .iter_mut()
                .zip(&c.predicted)
                .zip(&c.gap)
                .zip(&c.rate)
            {
                let catch_up = if e == 0.0 || *r > 0.0 {
                    (1.0 - e) * y
                } else {
                    0.0
                };
                *f = (p - y + catch_up) / dt;
            }
            let impact = c.impact(self.clock.step(), t, dt)?;
            // `free_rate` becomes D λ (zero without impulses), then the new gap and rate.
            c.free_rate.fill(0.0);
            if impact.n_active > 0 {
                self.impulse.fill(0.0);
                c.set.add_impulse(&c.lambda, &mut self.impulse);
                let (q, u) = (&mut self.q[..n], &mut self.u[..n]);
                let (ip, iv) = (&self.impulse_position[..n], &self.impulse_velocity[..n]);
                let impulse = &self.impulse[..n];
                finite = true;
                for k in 0..n {
                    q[k] += ip[k] * impulse[k];
                    u[k] += iv[k] * impulse[k];
                    finite &= q[k] * 0.0 + u[k] * 0.0 == 0.0;
                }
                for (j, &l) in c.lambda.iter().enumerate() {
                    if l != 0.0 {
                        c.free_rate
                            .iter_mut()
                            .zip(c.delassus.column(j).iter())
                            .for_each(|(r, d)| *r += d * l);
                    }
                }
            }
            for (((y, r), p), dl) in c
                .gap
                .iter_mut()
                .zip(c.rate.iter_mut())
                .zip(&c.predicted)
                .zip(&c.free_rate)
            {
                let y_new = p + dt * dl;
                *r = (y_new - *y) / dt;
                *y = y_new;
            }
            report.n_active = impact.n_active;
            report.lcp_iterations = impact.lcp.iterations;
            report.lcp_residual = impact.lcp.residual;
            report.min_gap = c.min_gap();
        }
        self.clock.advance();
        if !finite {
            return Err(StepError::NonFinite {
                step: self.clock.step(),
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

    /// The history values under [`CONTACT_COLUMNS`] after a step of size `dt`: the last
    /// contact solve's active count, iterations and residual, the smallest gap
    /// (`initial_min_gap` before the first step) and the total contact force `Σλ / dt`.
    pub fn contact_history(&self, initial_min_gap: f64, dt: f64) -> [f64; 5] {
        let r = self.last_contact;
        let min_gap = if self.clock.step() == 0 {
            initial_min_gap
        } else {
            r.min_gap
        };
        [
            r.n_active as f64,
            r.lcp_iterations as f64,
            r.lcp_residual,
            min_gap,
            self.impulses().iter().sum::<f64>() / dt,
        ]
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

    /// Secant gap rates `(y^i − y^{i−1})/Δt` of the last step, the `ẏ^i` of the next impact
    /// law (empty without contacts).
    pub fn gap_rates(&self) -> &[f64] {
        self.contacts.as_ref().map_or(&[], |c| &c.rate)
    }

    /// The scheme's energy at `t_i` (see [`ModalEnergy`]).
    pub fn modal_energy(&self) -> ModalEnergy {
        let mut e = 0.0;
        for k in 0..self.q.len() {
            let (m, w, q, u) = (
                self.system.mass[k],
                self.system.omega[k],
                self.q[k],
                self.u[k],
            );
            e += 0.5 * m * (u * u + w * w * q * q);
        }
        ModalEnergy {
            discrete: e,
            plain: e,
        }
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
    fn clock(&self) -> Clock {
        self.clock
    }
    /// The physical energy split into `½ Σ m u²` and `½ Σ m ω² q²`.
    fn energy(&self) -> Option<Energy> {
        let mut kinetic = 0.0;
        let mut potential = 0.0;
        for k in 0..self.q.len() {
            let (m, w, q, u) = (
                self.system.mass[k],
                self.system.omega[k],
                self.q[k],
                self.u[k],
            );
            kinetic += 0.5 * m * u * u;
            potential += 0.5 * m * w * w * q * q;
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
            StateField::dofs("modal_velocity", &self.u),
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
        self.u
            .copy_from_slice(restored(fields, "modal_velocity", n)?);
        if let Some(c) = &mut self.contacts {
            c.restore(fields)?;
        }
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl NodalStepper for ModalMoreauJean {
    /// Modal displacements `q^i`.
    fn position(&self) -> &[f64] {
        &self.q
    }
    /// Modal velocities `u^i = q̇(t_i⁺)` (physical; exact in free flight).
    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.u)
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

    /// The gap and secant rate that `step` derives through the Delassus matrix agree with
    /// `H q − h` formed from the state and its difference over the step, at every step of a
    /// long run with many impacts, to round-off that does not grow with the number of steps.
    #[test]
    fn derived_gaps_match_exact_products() {
        let modes = SineModes::new(1.002, 180.5, 1.17e-3, 1.78e-5, 200);
        let n = modes.n_modes();
        let points: Vec<f64> = (1..=40).map(|i| 1.002 * i as f64 / 41.0).collect();
        let rows = modes.point_rows(&points);
        let h_max = rows.iter().fold(0.0f64, |a, h| a.max(h.abs()));
        let dt = 1.0 / 20_000.0;
        for restitution in [0.0, 1.0] {
            let contacts =
                UnilateralContacts::from_dense(n, &rows, vec![0.0; 40], restitution).unwrap();
            let mut s = ModalMoreauJean::from_physical_state(
                modes.modal_system(),
                dt,
                0.0,
                &modes.triangular_pluck(0.3, 0.4e-3),
                &vec![0.0; n],
            )
            .unwrap()
            .with_contacts(contacts.clone(), Box::new(Lemke::default()))
            .unwrap();
            let (mut gap, mut gap_before) = (vec![0.0; 40], vec![0.0; 40]);
            contacts.gaps(s.position(), &mut gap_before);
            let (mut active_steps, mut worst_early, mut worst_late) = (0, 0.0f64, 0.0f64);
            let steps = 4000;
            for i in 0..steps {
                s.step().unwrap();
                active_steps += usize::from(s.last_contact().n_active > 0);
                contacts.gaps(s.position(), &mut gap);
                // Scale of the products, |H| ‖q‖₁ (the bound below is 45 ε of it); the rate is
                // a difference of two gaps over Δt.
                let sq = h_max * s.position().iter().map(|x| x.abs()).sum::<f64>();
                let err = s
                    .gaps()
                    .iter()
                    .zip(&gap)
                    .map(|(a, b)| (a - b).abs() / sq)
                    .chain(
                        s.gap_rates()
                            .iter()
                            .zip(gap.iter().zip(&gap_before))
                            .map(|(r, (y1, y0))| (r - (y1 - y0) / dt).abs() * dt / sq),
                    )
                    .fold(0.0f64, f64::max);
                gap_before.copy_from_slice(&gap);
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
                 {worst_early:.1e} (first half), {worst_late:.1e} (second half) of |H| ‖q‖₁"
            );
        }
    }

    /// The secant rate the first impact law reads is the backward difference of the exact
    /// motion through the initial state (the seed's exact start), for every `ωΔt` and damping.
    #[test]
    fn first_secant_rate_is_the_exact_backward_difference() {
        let dt = 1e-3;
        let mut worst = 0.0f64;
        for e in 0..=22 {
            let wdt = 10f64.powf(-8.0 + 0.5 * e as f64);
            for ratio in [0.0, 0.1, 1.0, 2.0] {
                let (omega, sigma) = (wdt / dt, ratio * wdt / dt);
                if sigma * dt > 300.0 {
                    continue;
                }
                let (q0, v0) = (0.7, -0.3 * (omega + sigma + 1.0));
                let system = ModalSystem {
                    mass: vec![1.0],
                    omega: vec![omega],
                    sigma: vec![sigma],
                };
                let contacts = UnilateralContacts::at_dofs(1, &[0], vec![-10.0], 0.0).unwrap();
                let s = ModalMoreauJean::from_physical_state(system, dt, 0.0, &[q0], &[v0])
                    .unwrap()
                    .with_contacts(contacts, Box::new(Lemke::default()))
                    .unwrap();
                let exact = ModalCoefficients::exact_start_velocity(omega, sigma, dt, q0, v0);
                let scale = exact.abs().max(q0.abs() / dt);
                worst = worst.max((s.gap_rates()[0] - exact).abs() / scale);
            }
        }
        assert!(worst < 1e-12, "{worst:e}");
    }
}
