//! The three rotation schemes of the seed (Solfec-1.0 "Rigid integration"; NEW1, NEW2, NEW3
//! of Koziara & Bićanić, IJNME 81(9), 2010), as one per-body kernel.
//!
//! With `Λ` the rotation, `Ω` the referential (body-frame) angular velocity, `J` the
//! referential inertia about the centre of rotation and `t` the spatial torque about it, a
//! step of size `h` reads (the seed's equation labels):
//!
//! ```text
//! R(t+h/2)   Λ^{t+h/2} = Λ^t exp[h/2 Ω^t]
//! T(t+h/2)   T^{t+h/2} = (Λ^{t+h/2})ᵀ t^{t+h/2}
//! W(t+h/2)   Ω^{t+h/2} = J⁻¹ [exp[−h/2 Ω^t] J Ω^t + h/2 T^{t+h/2}]
//! W1(t+h)    Ω₁^{t+h}  = Ω^t + J⁻¹ h [T^{t+h/2} − Ω^{t+h/2} × J Ω^{t+h/2}]
//!
//! RIG_POS:   R1(t+h)  Λ^{t+h} = Λ^{t+h/2} exp[h/2 Ω₁^{t+h}],  Ω^{t+h} = Ω₁^{t+h}
//! RIG_NEG:   R1(t+h), then
//!            W2(t+h)  Ω^{t+h} = Ω₂ = J⁻¹ exp[−h/2 Ω₁^{t+h}] [exp[−h/2 Ω^t] J Ω^t + h T^{t+h/2}]
//! RIG_IMP:   W3(t+h)  solve exp[h/2 Ω₃] J Ω₃ = exp[−h/2 Ω^t] J Ω^t + h T^{t+h/2}
//!            R2(t+h)  Λ^{t+h} = Λ^{t+h/2} exp[h/2 Ω₃^{t+h}],  Ω^{t+h} = Ω₃^{t+h}
//! ```
//!
//! The spatial angular velocity is `ω = Λ Ω` and the spatial angular momentum (about the
//! centre of rotation) `Λ J Ω`. Write `a = exp[−h/2 Ω^t] J Ω^t + h T` (the right-hand side of
//! W2 and W3): since `Λ^{t+h/2} a = Λ^t J Ω^t + h Λ^{t+h/2} T`, RIG_NEG and RIG_IMP give
//! `Λ^{t+h} J Ω^{t+h} = Λ^t J Ω^t + h t^{t+h/2}` exactly — without torque, the spatial angular
//! momentum is conserved to round-off. RIG_POS does not have this property.
//!
//! Round-off: `exp[·]` is formed as an increment `exp[Ψ] − I` (see [`crate::rotation`]) and
//! `exp[−Ψ] v` as `v + (exp[Ψ] − I)ᵀ v`. The two half-step rotations `R(t+h/2)` and
//! `R1(t+h)`/`R2(t+h)` are composed before they are applied, `Λ^{t+h} = Λ^t + Λ^t D` with
//! `D = exp[h/2 Ω^t] exp[h/2 Ω_end] − I` (small), so `Λ` is rounded once per step — the least
//! any scheme storing `Λ` can do — and `Λ^{t+h/2}` is formed only where a torque needs it. In
//! `W2(t+h)`, `J⁻¹` is applied by division. These are the seed's formulas, rearranged only in
//! the order of the floating-point operations; what the rearrangements buy is measured in
//! `tests/round_off.rs` (orthonormality) and `tests/torque_free.rs` (angular momentum).
//!
//! The kernel works in the body's **principal frame**, where `J` is diagonal (see
//! [`crate::bodies`]): for a constant rotation `R` of the body frame, `exp[RᵀΨ] = Rᵀ exp[Ψ] R`,
//! so every equation above holds with `Λ R`, `Rᵀ Ω`, `Rᵀ J R` and `Rᵀ T` in place of `Λ`,
//! `Ω`, `J` and `T` — the same scheme, with three numbers for `J`.

use crate::error::RigidError;
use crate::mat3::{
    Mat3, Vec3, add, add_product, add_t_product, axpy, cross, diag_div, diag_mul, hat, mat_t_vec,
    norm, scale, solve, sub,
};
use crate::rotation::{ExpWithTangent, exp_increment};

/// Settings of RIG_IMP's Newton iteration for `W3(t+h)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigImpSettings {
    /// Converged when `‖exp[h/2 Ω₃] J Ω₃ − a‖ ≤ tolerance · ‖a‖` (a relative tolerance on the
    /// angular momentum balance; the spatial angular momentum error of a step is at most this
    /// times its size). Default `1e-14`, a few ulps above the round-off floor of the residual.
    pub tolerance: f64,
    /// The iteration cap; default 20 (started from the explicit `Ω₁`, whose residual is
    /// `O(h³)`, the iteration needs 1 or 2).
    pub max_iterations: usize,
    /// Also converged when `‖exp[h/2 Ω₃] J Ω₃ − a‖ ≤ absolute_tolerance` (units of angular
    /// momentum); default 0 (the relative test alone).
    pub absolute_tolerance: f64,
}

impl Default for RigImpSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-14,
            max_iterations: 20,
            absolute_tolerance: 0.0,
        }
    }
}

impl RigImpSettings {
    /// Checks the ranges: `0 < tolerance < 1`, `max_iterations ≥ 1`, `absolute_tolerance`
    /// finite and `≥ 0`.
    pub fn validate(&self) -> Result<(), RigidError> {
        if self.tolerance > 0.0
            && self.tolerance < 1.0
            && self.max_iterations >= 1
            && self.absolute_tolerance >= 0.0
            && self.absolute_tolerance.is_finite()
        {
            Ok(())
        } else {
            Err(RigidError::InvalidNewtonSettings {
                tolerance: self.tolerance,
                max_iterations: self.max_iterations,
                absolute_tolerance: self.absolute_tolerance,
            })
        }
    }

    /// The residual `‖exp[h/2 Ω₃] J Ω₃ − a‖` below which the iteration stops, for `‖a‖`.
    fn threshold(&self, norm_a: f64) -> f64 {
        (self.tolerance * norm_a).max(self.absolute_tolerance)
    }
}

/// The name of RIG_POS in input files (`time.scheme: rig_pos`).
pub const RIG_POS: &str = "rig_pos";
/// The name of RIG_NEG in input files.
pub const RIG_NEG: &str = "rig_neg";
/// The name of RIG_IMP in input files.
pub const RIG_IMP: &str = "rig_imp";

/// The rotation scheme (Solfec's `scheme` parameter of a rigid `BODY`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scheme {
    /// RIG_POS (NEW1): semi-explicit, ends with `R1(t+h)` and `Ω₁`; energy drifts up.
    RigPos,
    /// RIG_NEG (NEW2): semi-explicit, ends with `R1(t+h)` and `W2(t+h)`; energy drifts down;
    /// spatial angular momentum balanced exactly.
    RigNeg,
    /// RIG_IMP (NEW3): semi-implicit, `W3(t+h)` by Newton, then `R2(t+h)`; energy oscillates
    /// without drift; spatial angular momentum balanced exactly (to the Newton tolerance).
    RigImp(RigImpSettings),
}

impl Scheme {
    /// RIG_IMP with the default Newton settings.
    pub fn rig_imp() -> Self {
        Self::RigImp(RigImpSettings::default())
    }

    /// The scheme's snake_case name (`rig_pos`, `rig_neg`, `rig_imp`), as an input file names it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::RigPos => "rig_pos",
            Self::RigNeg => "rig_neg",
            Self::RigImp(_) => "rig_imp",
        }
    }

    /// The scheme named `name` (`rig_pos`, `rig_neg`, `rig_imp`, case-insensitive), RIG_IMP
    /// with default Newton settings; `None` for any other name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "rig_pos" => Some(Self::RigPos),
            "rig_neg" => Some(Self::RigNeg),
            "rig_imp" => Some(Self::rig_imp()),
            _ => None,
        }
    }
}

/// The loads acting on a body's rotation during a step, evaluated at `t + h/2`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RotationalLoad {
    /// Applied spatial torque `t` about the centre of rotation.
    pub torque: Vec3,
    /// For a body turning about a fixed point: the body-frame offset `X_c` of the centre of
    /// mass from the fixed point and the total spatial force at the centre (`m g + F`); their
    /// moment `(Λ X_c) × f` joins the torque.
    pub offset_force: Option<(Vec3, Vec3)>,
}

impl RotationalLoad {
    /// The body torque `T = Λᵀ t` of `T(t+h/2)` at the rotation `lambda`.
    #[inline(always)]
    fn body_torque(&self, lambda: &Mat3) -> Vec3 {
        let mut t = mat_t_vec(lambda, self.torque);
        if let Some((offset, force)) = self.offset_force {
            t = add(t, cross(offset, mat_t_vec(lambda, force)));
        }
        t
    }
}

/// Why a body's rotation step failed (the caller adds the step, time and body).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NewtonFailure {
    pub iterations: usize,
    pub residual: f64,
}

/// Advances one body's rotation `(Λ, Ω)` by one step of `scheme` (module docs), in place, in
/// the body's principal frame: `inertia` is the diagonal of `J` there and `inverse_inertia`
/// its reciprocals. `load` is `None` for a torque-free body. Returns the Newton iterations and
/// the final relative residual `‖exp[h/2 Ω₃] J Ω₃ − a‖ / ‖a‖` (0 and 0 for the explicit
/// schemes).
#[inline(always)]
pub(crate) fn rotate(
    scheme: &Scheme,
    h: f64,
    inertia: &Vec3,
    inverse_inertia: &Vec3,
    lambda: &mut Mat3,
    omega: &mut Vec3,
    load: Option<&RotationalLoad>,
) -> Result<(usize, f64), NewtonFailure> {
    let half = 0.5 * h;
    let w = *omega;
    // R(t+h/2): E₀ = exp[h/2 Ω^t] = I + d0; Λ^{t+h/2} is formed only where a torque needs it.
    let d0 = exp_increment(scale(half, w));
    // T(t+h/2).
    let body_torque = load.map(|l| l.body_torque(&add_product(lambda, &d0)));
    // exp[−h/2 Ω^t] J Ω^t = E₀ᵀ J Ω^t.
    let m0 = add_t_product(&d0, diag_mul(inertia, w));
    // W(t+h/2).
    let w_half = match body_torque {
        Some(t) => diag_mul(inverse_inertia, axpy(m0, half, t)),
        None => diag_mul(inverse_inertia, m0),
    };
    // W1(t+h).
    let gyroscopic = cross(w_half, diag_mul(inertia, w_half));
    let rate = match body_torque {
        Some(t) => sub(t, gyroscopic),
        None => scale(-1.0, gyroscopic),
    };
    let w1 = axpy(w, h, diag_mul(inverse_inertia, rate));
    // a = exp[−h/2 Ω^t] J Ω^t + h T, the right-hand side of W2 and W3.
    let a = match body_torque {
        Some(t) => axpy(m0, h, t),
        None => m0,
    };
    // R1(t+h) / R2(t+h): Λ^{t+h} = Λ^{t+h/2} exp[h/2 Ω_end] = Λ^t (I + d0)(I + d_end), formed
    // as Λ^t + Λ^t (d0 + d_end + d0 d_end): one rounding of Λ per step.
    let advance = |lambda: &mut Mat3, d_end: &Mat3| {
        *lambda = add_product(lambda, &compose_increments(&d0, d_end));
    };
    match scheme {
        Scheme::RigPos => {
            // R1(t+h).
            advance(lambda, &exp_increment(scale(half, w1)));
            *omega = w1;
            Ok((0, 0.0))
        }
        Scheme::RigNeg => {
            // R1(t+h), then W2(t+h). J⁻¹ by division, not by the stored reciprocals: the
            // round trip J (J⁻¹ y) then has an unbiased error, where multiplying by a rounded
            // 1/J_ii errs the same way at every step and the spatial angular momentum drifts
            // linearly (2.5e-17 per step for J = diag(1, 2, 3), 6e-13 after 10⁵ steps, against
            // 1.7e-14 by division; tests/torque_free.rs asserts 1e-13).
            let d1 = exp_increment(scale(half, w1));
            advance(lambda, &d1);
            *omega = diag_div(add_t_product(&d1, a), inertia);
            Ok((0, 0.0))
        }
        Scheme::RigImp(settings) => {
            // W3(t+h), then R2(t+h).
            let (w3, d3, iterations, residual) = solve_w3(half, inertia, a, w1, settings)?;
            advance(lambda, &d3);
            *omega = w3;
            Ok((iterations, residual))
        }
    }
}

/// What the first half of a split rotation step ([`rotate_begin`]) leaves for the second
/// ([`rotate_end`]): the scheme's equations `R(t+h/2)` … `W1(t+h)` done, the end not yet.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MidRotation {
    /// `exp[h/2 Ω^t] − I`: `Λ^{t+h/2} = Λ^t (I + d0)`.
    pub d0: Mat3,
    /// `Ω₁^{t+h}` of `W1(t+h)`: the free angular velocity (no contact impulse).
    pub w1: Vec3,
    /// `a = exp[−h/2 Ω^t] J Ω^t + h T^{t+h/2}`, the right-hand side of `W2`/`W3`.
    pub a: Vec3,
}

/// The first half of [`rotate`] for a step with contact impulses (Solfec's
/// `BODY_Dynamic_Step_Begin`): `R(t+h/2)`, `T(t+h/2)`, `W(t+h/2)`, `W1(t+h)` and `a`, with the
/// same floating-point operations as [`rotate`]. `lambda` (`Λ^t`) is not changed.
#[inline(always)]
pub(crate) fn rotate_begin(
    h: f64,
    inertia: &Vec3,
    inverse_inertia: &Vec3,
    lambda: &Mat3,
    omega: Vec3,
    load: Option<&RotationalLoad>,
) -> MidRotation {
    let half = 0.5 * h;
    let w = omega;
    let d0 = exp_increment(scale(half, w));
    let body_torque = load.map(|l| l.body_torque(&add_product(lambda, &d0)));
    let m0 = add_t_product(&d0, diag_mul(inertia, w));
    let w_half = match body_torque {
        Some(t) => diag_mul(inverse_inertia, axpy(m0, half, t)),
        None => diag_mul(inverse_inertia, m0),
    };
    let gyroscopic = cross(w_half, diag_mul(inertia, w_half));
    let rate = match body_torque {
        Some(t) => sub(t, gyroscopic),
        None => scale(-1.0, gyroscopic),
    };
    let w1 = axpy(w, h, diag_mul(inverse_inertia, rate));
    let a = match body_torque {
        Some(t) => axpy(m0, h, t),
        None => m0,
    };
    MidRotation { d0, w1, a }
}

/// The second half of a split rotation step (Solfec's `BODY_Dynamic_Step_End`), with the
/// body-frame contact impulse `p` (the angular part of `Hᵀ R`; `None` when the body has no
/// contact, which gives bitwise [`rotate`]'s result):
///
/// ```text
/// Ω⁺ = Ω₁ + J⁻¹ p                                    (the velocity the contact law sees)
/// RIG_POS   Λ^{t+h} = Λ^{t+h/2} exp[h/2 Ω⁺],  Ω^{t+h} = Ω⁺
/// RIG_NEG   Λ^{t+h} = Λ^{t+h/2} exp[h/2 Ω⁺],  Ω^{t+h} = J⁻¹ exp[−h/2 Ω⁺] (a + p)
/// RIG_IMP   solve exp[h/2 Ω₃] J Ω₃ = a + p (from Ω⁺);  Λ^{t+h} = Λ^{t+h/2} exp[h/2 Ω₃]
/// ```
///
/// so RIG_NEG and RIG_IMP keep `Λ^{t+h} J Ω^{t+h} = Λ^t J Ω^t + h t + Λ^{t+h/2} p`: the
/// contact's angular impulse enters the angular momentum balance at the mid-step rotation.
/// `J⁻¹ p` is the product by the stored reciprocals (the contact layer's `A⁻¹`).
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the per-body slices of the struct of arrays, hot loop
pub(crate) fn rotate_end(
    scheme: &Scheme,
    h: f64,
    inertia: &Vec3,
    inverse_inertia: &Vec3,
    mid: &MidRotation,
    p: Option<Vec3>,
    lambda: &mut Mat3,
    omega: &mut Vec3,
) -> Result<(usize, f64), NewtonFailure> {
    let half = 0.5 * h;
    let d0 = mid.d0;
    let (w_plus, a) = match p {
        Some(p) => (add(mid.w1, diag_mul(inverse_inertia, p)), add(mid.a, p)),
        None => (mid.w1, mid.a),
    };
    let advance = |lambda: &mut Mat3, d_end: &Mat3| {
        *lambda = add_product(lambda, &compose_increments(&d0, d_end));
    };
    match scheme {
        Scheme::RigPos => {
            advance(lambda, &exp_increment(scale(half, w_plus)));
            *omega = w_plus;
            Ok((0, 0.0))
        }
        Scheme::RigNeg => {
            let d1 = exp_increment(scale(half, w_plus));
            advance(lambda, &d1);
            *omega = diag_div(add_t_product(&d1, a), inertia);
            Ok((0, 0.0))
        }
        Scheme::RigImp(settings) => {
            let (w3, d3, iterations, residual) = solve_w3(half, inertia, a, w_plus, settings)?;
            advance(lambda, &d3);
            *omega = w3;
            Ok((iterations, residual))
        }
    }
}

/// `(I + d0)(I + d1) − I = d0 + d1 + d0 d1`: two rotation increments composed, still small.
#[inline(always)]
fn compose_increments(d0: &Mat3, d1: &Mat3) -> Mat3 {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let product = d0[i][0] * d1[0][j] + d0[i][1] * d1[1][j] + d0[i][2] * d1[2][j];
            c[i][j] = d0[i][j] + d1[i][j] + product;
        }
    }
    c
}

/// Newton's method for `W3(t+h)`: find `Ω` with `exp[h/2 Ω] J Ω = a`, from `start`.
///
/// The residual is taken in the rotated form `r(Ω) = J Ω − exp[−h/2 Ω] a`
/// (`= exp[h/2 Ω]ᵀ (exp[h/2 Ω] J Ω − a)`, of the same norm). Since
/// `exp[−(Ψ + δ)] = exp[−T(Ψ) δ] exp[−Ψ] + O(δ²)` with `T` the tangent operator
/// ([`crate::rotation::tangent_operator`]), its Jacobian is
/// `J − h/2 (exp[−h/2 Ω] a)^ T(h/2 Ω)`. Returns `Ω₃`, the increment `exp[h/2 Ω₃] − I` (for
/// `R2(t+h)`), the iterations done and the final relative residual (0 when `a = 0`).
fn solve_w3(
    half: f64,
    inertia: &Vec3,
    a: Vec3,
    start: Vec3,
    settings: &RigImpSettings,
) -> Result<(Vec3, Mat3, usize, f64), NewtonFailure> {
    let scale_a = norm(a);
    let threshold = settings.threshold(scale_a);
    let relative = |r: f64| if scale_a > 0.0 { r / scale_a } else { r };
    let mut w = start;
    let mut iterations = 0;
    loop {
        let psi = scale(half, w);
        let e = ExpWithTangent::new(psi);
        let d = e.increment;
        let rotated = add_t_product(&d, a); // exp[−h/2 Ω] a
        let r = sub(diag_mul(inertia, w), rotated);
        let residual = norm(r);
        if residual <= threshold {
            return Ok((w, d, iterations, relative(residual)));
        }
        if iterations == settings.max_iterations || !residual.is_finite() {
            return Err(NewtonFailure {
                iterations,
                residual: relative(residual),
            });
        }
        // Jacobian J − h/2 (exp[−h/2 Ω] a)^ T(h/2 Ω).
        let t = e.tangent();
        let jh = hat(rotated);
        let mut jac = [[0.0; 3]; 3];
        for i in 0..3 {
            jac[i][i] = inertia[i];
            for k in 0..3 {
                jac[i][k] -= half * (jh[i][0] * t[0][k] + jh[i][1] * t[1][k] + jh[i][2] * t[2][k]);
            }
        }
        let Some(delta) = solve(&jac, r) else {
            return Err(NewtonFailure {
                iterations,
                residual: relative(residual),
            });
        };
        w = sub(w, delta);
        iterations += 1;
    }
}

/// `exp[h/2 Ω] J Ω` for a check of `W3(t+h)` from outside (tests).
#[cfg(test)]
pub(crate) fn w3_left_side(half: f64, inertia: &Vec3, w: Vec3) -> Vec3 {
    let jw = diag_mul(inertia, w);
    add(jw, crate::mat3::mat_vec(&exp_increment(scale(half, w)), jw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_solves_w3() {
        let j = [2.0, 3.0, 4.0];
        let a = [1.0, -2.0, 5.0];
        let half = 0.05;
        let (w, _, its, residual) =
            solve_w3(half, &j, a, diag_div(a, &j), &RigImpSettings::default()).expect("converges");
        assert!(residual <= 1e-14, "{residual:e}");
        let r = sub(w3_left_side(half, &j, w), a);
        assert!(norm(r) <= 1e-14 * norm(a), "{r:?}");
        assert!((1..=6).contains(&its), "{its}");
    }

    #[test]
    fn newton_reports_its_cap() {
        let j = [1.0, 2.0, 3.0];
        let settings = RigImpSettings {
            tolerance: 1e-15,
            max_iterations: 1,
            ..RigImpSettings::default()
        };
        // A far start and a large step: one iteration cannot reach 1e-15.
        let err = solve_w3(0.5, &j, [10.0, 20.0, 5.0], [0.0; 3], &settings).unwrap_err();
        assert_eq!(err.iterations, 1);
        assert!(err.residual > 1e-15);
    }

    #[test]
    fn names_round_trip() {
        for s in [Scheme::RigPos, Scheme::RigNeg, Scheme::rig_imp()] {
            assert_eq!(Scheme::from_name(s.name()), Some(s));
        }
        assert_eq!(Scheme::from_name("def_exp"), None);
    }
}
