//! The quadratic penalty method (Glowinski–Holmström (3), (35), (47)).
//!
//! `ψ(g) = g² / (2ε)` for an equality, `ψ(g) = (g⁺)² / (2ε)` for an inequality `g ≤ 0`,
//! with `(·)⁺` of (36). The force `ψ'(g) ∇g` is a spring of stiffness `1/ε` pulling the state
//! back onto the constraint; the violation at equilibrium is `O(ε)` and, in a collision
//! carrying kinetic energy `K`, the maximal penetration is `O(sqrt(2 ε K))`.

use crate::constraint::{
    ConstraintError, ConstraintKind, ConstraintSolver, DiscreteGradient, MultiplierUpdate,
    check_epsilon, constraint_residual, positive_part_square_gradient,
};

/// The quadratic penalty method over `m` constraints.
#[derive(Clone, Debug, PartialEq)]
pub struct Penalty {
    epsilon: f64,
    kinds: Vec<ConstraintKind>,
    /// `ψ'(g)` at the last update.
    equivalent_multipliers: Vec<f64>,
}

impl Penalty {
    /// Penalty parameter `epsilon > 0` on constraints of the given kinds.
    pub fn new(epsilon: f64, kinds: Vec<ConstraintKind>) -> Result<Self, ConstraintError> {
        check_epsilon(epsilon)?;
        let m = kinds.len();
        Ok(Self {
            epsilon,
            kinds,
            equivalent_multipliers: vec![0.0; m],
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
}

impl ConstraintSolver for Penalty {
    fn name(&self) -> &'static str {
        "penalty"
    }
    fn kinds(&self) -> &[ConstraintKind] {
        &self.kinds
    }
    fn epsilon(&self) -> f64 {
        self.epsilon
    }
    fn is_iterative(&self) -> bool {
        false
    }
    fn multipliers(&self) -> &[f64] {
        &self.equivalent_multipliers
    }
    fn set_multipliers(&mut self, _lambda: &[f64]) {}
    fn potential(&self, i: usize, g: f64) -> f64 {
        let s = match self.kinds[i] {
            ConstraintKind::Equality => g,
            ConstraintKind::Inequality => g.max(0.0),
        };
        0.5 * s * s / self.epsilon
    }
    fn force(&self, i: usize, g: f64) -> f64 {
        match self.kinds[i] {
            ConstraintKind::Equality => g / self.epsilon,
            ConstraintKind::Inequality => g.max(0.0) / self.epsilon,
        }
    }
    fn stiffness(&self, i: usize, g: f64) -> f64 {
        match self.kinds[i] {
            ConstraintKind::Inequality if g < 0.0 => 0.0,
            _ => 1.0 / self.epsilon,
        }
    }
    fn discrete_gradient(&self, i: usize, a: f64, b: f64) -> DiscreteGradient {
        let e = self.epsilon;
        match self.kinds[i] {
            ConstraintKind::Equality => DiscreteGradient {
                value: 0.5 * (a + b) / e,
                d_a: 0.5 / e,
                d_b: 0.5 / e,
            },
            ConstraintKind::Inequality => {
                let d = positive_part_square_gradient(a, b);
                DiscreteGradient {
                    value: d.value / e,
                    d_a: d.d_a / e,
                    d_b: d.d_b / e,
                }
            }
        }
    }
    fn update_multipliers(&mut self, g: &[f64]) -> MultiplierUpdate {
        for i in 0..self.kinds.len() {
            self.equivalent_multipliers[i] = self.force(i, g[i]);
        }
        MultiplierUpdate {
            change: 0.0,
            residual: constraint_residual(&self.kinds, g),
        }
    }
}
