//! The augmented Lagrangian of Hestenes and Powell (Glowinski–Holmström (8)–(10)).
//!
//! For an equality, `ψ(g) = λ g + g² / (2ε)` (the constraint terms of (8)), force
//! `ψ'(g) = λ + g/ε`, and the first-order update (10) `λ ← λ + g(x)/ε` after each solve with
//! `λ` held fixed (Algorithm 1). For an inequality `g ≤ 0` the same construction on the slack
//! form (Rockafellar) gives `ψ(g) = ε/2 ((λ + g/ε)⁺)² − ε λ²/2`, force `(λ + g/ε)⁺` and the
//! update `λ ← (λ + g/ε)⁺ ≥ 0`. At a fixed point the force equals `λ`, and `g = 0` (equality),
//! respectively `λ ≥ 0, g ≤ 0, λ g = 0` (inequality): the constraint is met exactly with a
//! finite `ε`, which is what lets the augmented Lagrangian use a step the penalty method
//! cannot (Table 4 of the paper).

use crate::constraint::{
    ConstraintError, ConstraintKind, ConstraintSolver, DiscreteGradient, MultiplierUpdate,
    check_epsilon, constraint_residual, positive_part_square_gradient,
};

/// The augmented Lagrangian with the Hestenes–Powell update over `m` constraints.
#[derive(Clone, Debug, PartialEq)]
pub struct AugmentedLagrangian {
    epsilon: f64,
    kinds: Vec<ConstraintKind>,
    lambda: Vec<f64>,
}

impl AugmentedLagrangian {
    /// Penalty parameter `epsilon > 0`, multipliers starting at 0.
    pub fn new(epsilon: f64, kinds: Vec<ConstraintKind>) -> Result<Self, ConstraintError> {
        check_epsilon(epsilon)?;
        let m = kinds.len();
        Ok(Self {
            epsilon,
            kinds,
            lambda: vec![0.0; m],
        })
    }

    /// `m` equality constraints.
    pub fn equalities(epsilon: f64, m: usize) -> Result<Self, ConstraintError> {
        Self::new(epsilon, vec![ConstraintKind::Equality; m])
    }

    /// `m` inequality constraints `g ≤ 0`.
    pub fn inequalities(epsilon: f64, m: usize) -> Result<Self, ConstraintError> {
        Self::new(epsilon, vec![ConstraintKind::Inequality; m])
    }

    fn shifted(&self, i: usize, g: f64) -> f64 {
        self.lambda[i] + g / self.epsilon
    }
}

impl ConstraintSolver for AugmentedLagrangian {
    fn name(&self) -> &'static str {
        "augmented_lagrangian"
    }
    fn kinds(&self) -> &[ConstraintKind] {
        &self.kinds
    }
    fn epsilon(&self) -> f64 {
        self.epsilon
    }
    fn is_iterative(&self) -> bool {
        true
    }
    fn multipliers(&self) -> &[f64] {
        &self.lambda
    }
    fn set_multipliers(&mut self, lambda: &[f64]) {
        self.lambda.copy_from_slice(lambda);
        for (l, k) in self.lambda.iter_mut().zip(&self.kinds) {
            if *k == ConstraintKind::Inequality {
                *l = l.max(0.0);
            }
        }
    }
    fn potential(&self, i: usize, g: f64) -> f64 {
        let (e, l) = (self.epsilon, self.lambda[i]);
        match self.kinds[i] {
            ConstraintKind::Equality => l * g + 0.5 * g * g / e,
            ConstraintKind::Inequality => {
                let s = self.shifted(i, g).max(0.0);
                0.5 * e * (s * s - l * l)
            }
        }
    }
    fn force(&self, i: usize, g: f64) -> f64 {
        match self.kinds[i] {
            ConstraintKind::Equality => self.shifted(i, g),
            ConstraintKind::Inequality => self.shifted(i, g).max(0.0),
        }
    }
    fn stiffness(&self, i: usize, g: f64) -> f64 {
        match self.kinds[i] {
            ConstraintKind::Inequality if self.shifted(i, g) < 0.0 => 0.0,
            _ => 1.0 / self.epsilon,
        }
    }
    fn discrete_gradient(&self, i: usize, a: f64, b: f64) -> DiscreteGradient {
        let e = self.epsilon;
        match self.kinds[i] {
            ConstraintKind::Equality => DiscreteGradient {
                value: self.lambda[i] + 0.5 * (a + b) / e,
                d_a: 0.5 / e,
                d_b: 0.5 / e,
            },
            ConstraintKind::Inequality => {
                // ψ = ε p(s), s = λ + g/ε, p = ½ (s⁺)²: D_g ψ = D_s p, ∂/∂g = (∂/∂s)/ε.
                let d = positive_part_square_gradient(self.shifted(i, a), self.shifted(i, b));
                DiscreteGradient {
                    value: d.value,
                    d_a: d.d_a / e,
                    d_b: d.d_b / e,
                }
            }
        }
    }
    fn update_multipliers(&mut self, g: &[f64]) -> MultiplierUpdate {
        let mut change = 0.0f64;
        let mut complementarity = 0.0f64;
        for i in 0..self.kinds.len() {
            let new = self.force(i, g[i]);
            change = change.max((new - self.lambda[i]).abs());
            self.lambda[i] = new;
            if self.kinds[i] == ConstraintKind::Inequality {
                complementarity = complementarity.max(new.min(-g[i]).abs());
            }
        }
        MultiplierUpdate {
            change,
            residual: constraint_residual(&self.kinds, g).max(complementarity),
        }
    }
}
