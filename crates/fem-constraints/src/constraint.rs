//! One interface for the constraint solvers that act through a potential: penalty and
//! augmented Lagrangian (Glowinski–Holmström §1.2–1.4, eq. (3), (8)–(10), (35), (47)).
//!
//! A set of `m` scalar constraints `g_i(x) = 0` ([`ConstraintKind::Equality`]) or
//! `g_i(x) ≤ 0` ([`ConstraintKind::Inequality`]) is enforced by adding to the potential energy
//! of the system a sum of scalar functions of the constraint values,
//!
//! ```text
//! W(x) = Σ_i ψ_i(g_i(x)),      force on x: Σ_i ψ_i'(g_i(x)) ∇g_i(x).
//! ```
//!
//! The solver ([`ConstraintSolver`]) owns the `ψ_i`; the caller owns `g` and its gradient (the
//! [`ConstraintFunction`] trait, or any other representation). `ψ_i'(g_i)` is the multiplier
//! estimate: the constraint force is `Σ_i ψ_i' ∇g_i`, exactly as `(∇g)ᵀ λ` in (2).
//!
//! | solver | equality `ψ(g)` | inequality `ψ(g)` | multiplier update |
//! |---|---|---|---|
//! | [`crate::Penalty`] (3), (35), (47) | `g² / (2ε)` | `(g⁺)² / (2ε)` | none (`λ` reported as `ψ'(g)`) |
//! | [`crate::AugmentedLagrangian`] (8) | `λ g + g² / (2ε)` | `ε/2 ((λ + g/ε)⁺)² − ε λ²/2` | (10): `λ ← λ + g/ε`, resp. `λ ← (λ + g/ε)⁺` |
//!
//! Both report the constraint residual ([`constraint_residual`]): `‖g‖∞` over equalities,
//! `max(g⁺)` over inequalities (and, for the augmented Lagrangian, the complementarity
//! `|min(λ, −g)|` of its inequality multipliers).
//!
//! # The time-discretized penalty (30), (62)
//! An energy-conserving time scheme replaces `ψ'(g)` by the *discrete gradient* between the
//! constraint values at the two half steps `a = g(x^{n−1/2})`, `b = g(x^{n+1/2})`:
//!
//! ```text
//! D ψ(a, b) = (ψ(b) − ψ(a)) / (b − a),          D ψ(a, a) = ψ'(a),
//! ```
//!
//! so that `D ψ(a, b) (b − a) = ψ(b) − ψ(a)` holds exactly and the discrete energy, penalty
//! energy included, is conserved ((32)). [`ConstraintSolver::discrete_gradient`] returns `D`
//! and its partial derivatives (for Newton's method). The penalty and augmented-Lagrangian
//! potentials are piecewise quadratic and have cancellation-free closed forms
//! ([`positive_part_square_gradient`]); the default method, for any other `ψ`, switches to the
//! midpoint value `ψ'((a + b)/2)` when `|b − a|` falls below `∛ε_mach (1 + |a| + |b|)`, where the
//! difference quotient would lose more digits than the midpoint rule's `O(|b − a|²)` error.

use std::fmt::Debug;

/// Whether a constraint is `g(x) = 0` or `g(x) ≤ 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConstraintKind {
    /// `g(x) = 0`.
    Equality,
    /// `g(x) ≤ 0`.
    Inequality,
}

/// Why a constraint solver or a constraint function was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConstraintError {
    /// A parameter out of its range (a non-positive penalty parameter, say).
    #[error("{name} = {value} is out of range: expected {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Given value.
        value: f64,
        /// What was expected.
        expected: &'static str,
    },
    /// Vectors of the wrong length.
    #[error("{what} has {found} entries, expected {expected}")]
    DimensionMismatch {
        /// Which vector.
        what: &'static str,
        /// Its length.
        found: usize,
        /// The expected length.
        expected: usize,
    },
}

/// Checks a penalty parameter: positive and finite.
pub(crate) fn check_epsilon(epsilon: f64) -> Result<(), ConstraintError> {
    if epsilon > 0.0 && epsilon.is_finite() {
        Ok(())
    } else {
        Err(ConstraintError::InvalidParameter {
            name: "epsilon",
            value: epsilon,
            expected: "a positive finite penalty parameter",
        })
    }
}

/// The discrete gradient `D ψ(a, b)` of a scalar potential and its partial derivatives.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiscreteGradient {
    /// `(ψ(b) − ψ(a)) / (b − a)`, or `ψ'(a)` when `b = a`.
    pub value: f64,
    /// `∂D/∂a`.
    pub d_a: f64,
    /// `∂D/∂b`.
    pub d_b: f64,
}

/// What one multiplier update did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MultiplierUpdate {
    /// `‖λ_new − λ_old‖∞` (always 0 for the penalty method).
    pub change: f64,
    /// The constraint residual at the `g` given to the update ([`constraint_residual`], plus
    /// the complementarity of inequality multipliers for the augmented Lagrangian).
    pub residual: f64,
}

/// The constraint-solver interface (STYLE.md, item 9): a potential `ψ_i` per constraint,
/// readable multipliers, a multiplier update and the constraint residual.
///
/// Contract: the caller evaluates `g` at its current state, asks for forces
/// ([`ConstraintSolver::force`]) or discrete gradients while it solves for the state with the
/// multipliers held fixed, then calls [`ConstraintSolver::update_multipliers`] with `g` at the
/// solution; an iterative method (the augmented Lagrangian, [`ConstraintSolver::is_iterative`])
/// repeats solve and update until the residual is small enough (Algorithm 1 of §1.4). The
/// penalty method needs one pass; its update only records `ψ'(g)` as the multipliers.
pub trait ConstraintSolver: Debug + Send + Sync {
    /// The method's name, snake_case, as selected in an input file.
    fn name(&self) -> &'static str;
    /// Kind of each constraint.
    fn kinds(&self) -> &[ConstraintKind];
    /// Number of constraints `m`.
    fn n_constraints(&self) -> usize {
        self.kinds().len()
    }
    /// The penalty parameter `ε`.
    fn epsilon(&self) -> f64;
    /// Whether the method iterates on its multipliers (Algorithm 1).
    fn is_iterative(&self) -> bool;
    /// The multipliers: the Lagrange multiplier estimates `λ` (augmented Lagrangian), or the
    /// equivalent multipliers `ψ'(g)` of the last update (penalty).
    fn multipliers(&self) -> &[f64];
    /// Overwrites the multipliers (a warm start; ignored by the penalty method).
    fn set_multipliers(&mut self, lambda: &[f64]);
    /// `ψ_i(g)`.
    fn potential(&self, i: usize, g: f64) -> f64;
    /// `ψ_i'(g)`: the force coefficient of constraint `i`, its multiplier at `g`.
    fn force(&self, i: usize, g: f64) -> f64;
    /// `ψ_i''(g)` (the right derivative at a kink).
    fn stiffness(&self, i: usize, g: f64) -> f64;
    /// The discrete gradient `(ψ_i(b) − ψ_i(a)) / (b − a)` with its safe limit `ψ_i'(a)`.
    ///
    /// The default is the generic formula of the module documentation; implementations
    /// with piecewise-quadratic `ψ` override it with closed forms.
    fn discrete_gradient(&self, i: usize, a: f64, b: f64) -> DiscreteGradient {
        generic_discrete_gradient(
            |g| self.potential(i, g),
            |g| self.force(i, g),
            |g| self.stiffness(i, g),
            a,
            b,
        )
    }
    /// One multiplier update at the constraint values `g` of the state just solved for
    /// (Hestenes–Powell (10) for the augmented Lagrangian).
    fn update_multipliers(&mut self, g: &[f64]) -> MultiplierUpdate;
    /// `Σ_i ψ_i(g_i)`: the energy of the enforcement (the penalty energy (35), (47)).
    fn energy(&self, g: &[f64]) -> f64 {
        g.iter()
            .enumerate()
            .map(|(i, &gi)| self.potential(i, gi))
            .sum()
    }
}

/// `‖g‖∞` over the equalities and `max g⁺` over the inequalities.
pub fn constraint_residual(kinds: &[ConstraintKind], g: &[f64]) -> f64 {
    kinds.iter().zip(g).fold(0.0f64, |r, (k, &gi)| match k {
        ConstraintKind::Equality => r.max(gi.abs()),
        ConstraintKind::Inequality => r.max(gi.max(0.0)),
    })
}

/// The discrete gradient of `p(s) = ½ (s⁺)²` between `a` and `b`, in closed form (no
/// cancellation for any `a`, `b`):
///
/// ```text
/// a, b ≥ 0:  (a + b)/2            a, b ≤ 0:  0
/// a < 0 < b: b² / (2 (b − a))      b < 0 < a: a² / (2 (a − b))
/// ```
pub fn positive_part_square_gradient(a: f64, b: f64) -> DiscreteGradient {
    if a >= 0.0 && b >= 0.0 {
        DiscreteGradient {
            value: 0.5 * (a + b),
            d_a: 0.5,
            d_b: 0.5,
        }
    } else if a <= 0.0 && b <= 0.0 {
        DiscreteGradient::default()
    } else if a < 0.0 {
        // a < 0 < b
        let w = b - a;
        DiscreteGradient {
            value: b * b / (2.0 * w),
            d_a: b * b / (2.0 * w * w),
            d_b: b * (b - 2.0 * a) / (2.0 * w * w),
        }
    } else {
        // b < 0 < a
        let w = a - b;
        DiscreteGradient {
            value: a * a / (2.0 * w),
            d_a: a * (a - 2.0 * b) / (2.0 * w * w),
            d_b: a * a / (2.0 * w * w),
        }
    }
}

/// The discrete gradient of any smooth scalar `ψ` from its value, first and second
/// derivative, with the midpoint limit for `|b − a| ≤ ∛ε_mach (1 + |a| + |b|)`.
pub fn generic_discrete_gradient(
    psi: impl Fn(f64) -> f64,
    dpsi: impl Fn(f64) -> f64,
    d2psi: impl Fn(f64) -> f64,
    a: f64,
    b: f64,
) -> DiscreteGradient {
    let w = b - a;
    if w.abs() <= f64::EPSILON.cbrt() * (1.0 + a.abs() + b.abs()) {
        let m = 0.5 * (a + b);
        let h = 0.5 * d2psi(m);
        return DiscreteGradient {
            value: dpsi(m),
            d_a: h,
            d_b: h,
        };
    }
    let value = (psi(b) - psi(a)) / w;
    DiscreteGradient {
        value,
        d_a: (value - dpsi(a)) / w,
        d_b: (dpsi(b) - value) / w,
    }
}

/// Constraint values `g(x)` with their gradients: the caller's side of the interface.
///
/// Gradients are dense rows (`m × n`, row-major): the constrained systems of the paper are
/// small (the double pendulum has two coordinates); large, sparse constraint sets (the
/// colliding strings) are linear and given as a sparse matrix instead (see
/// `fem_time::nonlinear_alpha::LinearConstraintPotential`).
pub trait ConstraintFunction: Debug + Send + Sync {
    /// Number of constraints `m`.
    fn n_constraints(&self) -> usize;
    /// Number of unknowns `n` of `x`.
    fn n_dofs(&self) -> usize;
    /// Kind of each constraint.
    fn kinds(&self) -> Vec<ConstraintKind>;
    /// Writes `g(x)` (length `m`) and, row-major, `∇g(x)` (length `m n`).
    fn evaluate(&self, x: &[f64], g: &mut [f64], gradient: &mut [f64]);
}
